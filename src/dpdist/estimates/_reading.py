"""Reading an estimate back from its JSON: ``from_dict`` of every result of this package, through its schema.

A document is checked against :data:`~._schema.JSON_SCHEMA` (every kind's fields, the envelope, the
guarantee, the intervals; NaN refused where JSON has none), its envelope read into a :class:`Header`,
the estimate built by its class's ``_from_document`` from the fields it is made of, then written again
at the document's level and compared field by field with the document (:func:`dpdist._documents.same_document`):
a derived number (a summary, an interval, a CDF, a quantile) that the other fields contradict, a field
dropped, is refused by name with :class:`~dpdist.errors.MalformedDocumentError`.  The anytime intervals a
service adds around an estimate (``anytime_valid``: a confidence sequence, not part of the estimate) and
fields this dpdist does not know are checked by the schema only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .._documents import (check_document, constructing, describe_value, read_numbers, read_part, refused,
                          same_document)
from .._guarantee import PrivacyGuarantee
from ..errors import IncompatibleStateError
from ._schema import JSON_SCHEMA

__all__ = ["Header", "read_estimate", "numbers"]


@dataclass(frozen=True)
class Header:
    """The envelope every estimate's document has, read: what a class's ``_from_document`` builds on."""

    method: str | None
    n: int | None
    epsilon: float | None
    guarantee: PrivacyGuarantee | None
    notes: list[str]
    level: float
    owner: str
    intervals: list[dict] = field(default_factory=list)

    def details(self, **extra: Any) -> dict[str, Any]:
        """A ``details`` dict holding the document's notes (when it has any) and ``extra``."""
        return {**({"notes": list(self.notes)} if self.notes else {}), **extra}


def read_estimate(cls: Any, document: Any) -> Any:
    """The estimate of class ``cls`` (a :class:`~._presented.Presented`) whose ``to_dict`` is ``document``."""
    owner = f"{cls.__name__}.from_dict"
    if not isinstance(document, Mapping):
        raise refused(owner, "", f"must be a JSON object (a dict). Got {type(document).__name__}")
    if document.get("kind") != cls.kind:
        raise IncompatibleStateError(f"{owner}: the document's 'kind' must be {cls.kind!r} (a document of another "
                                     f"kind, or none). Got kind={describe_value(document.get('kind'))}.")
    check_document(document, JSON_SCHEMA, owner)
    header = _header(document, owner)
    with constructing(owner):
        estimate = cls._from_document(document, header)
        written = estimate.to_dict(header.level)
    same_document(written, {**document, "intervals": header.intervals}, owner)
    return estimate


def _header(document: Mapping[str, Any], owner: str) -> Header:
    guarantee = document["guarantee"]
    if guarantee is None and document["epsilon"] is not None:
        raise refused(owner, "guarantee", f"is null where the document states epsilon {document['epsilon']!r}: a "
                                          "release states its guarantee with its budget (null only where no privacy "
                                          "is claimed, epsilon null too)")
    fixed = [interval for interval in document["intervals"] if not interval["anytime_valid"]]
    levels = [interval["level"] for interval in fixed]
    band = document.get("band")
    if not levels and isinstance(band, Mapping) and isinstance(band.get("level"), float):
        levels = [band["level"]]
    return Header(
        method=document["method"], n=document["n"],
        epsilon=None if document["epsilon"] is None else float(document["epsilon"]),
        guarantee=None if guarantee is None else read_part(PrivacyGuarantee.from_dict, guarantee, owner, "guarantee"),
        notes=list(document["notes"]), level=min(levels, default=0.95), owner=owner, intervals=fixed,
    )


def numbers(document: Mapping[str, Any], name: str, header: Header) -> Any:
    """The document's list ``name`` as a float array (``null``: NaN), or ``None`` where the field is ``null``."""
    value = document[name]
    return None if value is None else read_numbers(value, header.owner, name)
