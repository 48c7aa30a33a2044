""":class:`Presented`: the part of the result contract (:class:`~dpdist.estimates.Estimate`) every result shares.

Its JSON envelope (``to_dict`` / ``to_json``, the schema of ``docs/reference/results.md``), no intervals
and no distribution unless the result says otherwise; and :func:`document_lines`, any estimate's
JSON document as the text table its kind writes (what ``dpdist campaign estimate`` prints).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, TypeVar

from .._documents import describe_value
from ..errors import IncompatibleStateError, MalformedDocumentError
from ._intervals import Interval, check_level, json_value
from ._reading import Header, read_estimate
from ._schema import SCHEMA
from ._text import text_table

__all__ = ["Presented", "SCHEMA", "document_lines"]

#: the class whose ``from_dict`` is called (a subclass reads its own kind)
_Read = TypeVar("_Read", bound="Presented")


class Presented:
    """The JSON every result shares: the envelope of ``docs/reference/results.md`` around its own fields.

    A result class sets ``kind``, implements ``intervals(level)`` (default: none) and
    ``_json_fields(level)`` (its point estimate and whatever else its JSON holds), and
    inherits :meth:`to_dict`, :meth:`to_json` and :meth:`as_distribution` (``None``).
    """

    kind: ClassVar[str]
    #: why a class's JSON cannot be read back (``None``: :meth:`from_dict` reads it)
    not_read_back: ClassVar[str | None] = None

    @classmethod
    def from_dict(cls: type[_Read], document: dict[str, Any]) -> _Read:
        """The estimate whose :meth:`to_dict` is ``document`` (its guarantee, intervals and parts as values again;
        ``details`` other than the notes are not in the JSON).

        ``Presented.from_dict`` reads a document of any kind (the class of its ``kind``, whose package must be
        imported: ``import dpdist`` does).  A document missing a field, holding one of another type or NaN, or
        one its other fields contradict (a summary, an interval or a CDF that is not what its numbers give) is
        refused by the field's name (:class:`~dpdist.errors.MalformedDocumentError`; a document of another kind:
        :class:`~dpdist.errors.IncompatibleStateError`), never loaded as another estimate.  Fields this dpdist does
        not know, and the anytime intervals a service adds, are checked against the schema only.
        """
        target: Any = cls
        if "kind" not in cls.__dict__:
            kind = document.get("kind") if isinstance(document, dict) else None
            if not isinstance(kind, str):
                raise MalformedDocumentError(f"{cls.__name__}.from_dict: the document's 'kind' must be the kind of an "
                                             f"estimate (a string). Got {describe_value(kind)}.")
            target = cls.for_kind(kind)
        if target.not_read_back is not None:
            raise IncompatibleStateError(f"{target.__name__}.from_dict: a {target.kind!r} estimate is not read back "
                                         f"from its JSON: {target.not_read_back}.")
        return read_estimate(target, document)

    @classmethod
    def _from_document(cls, document: dict[str, Any], header: Header) -> Presented:
        """The estimate built from the fields of its checked ``document`` (:meth:`from_dict`)."""
        raise NotImplementedError(f"{cls.__name__} reads no document")  # pragma: no cover - every kind has one

    @classmethod
    def for_kind(cls, kind: str) -> type[Presented]:
        """The result class whose JSON has ``kind`` (the first defined, searching the subclasses breadth first)."""
        found = list(cls.__subclasses__())
        for subclass in found:
            if subclass.__dict__.get("kind") == kind:
                return subclass
            found.extend(subclass.__subclasses__())
        raise MalformedDocumentError(f"No result has the kind {kind!r} (the document's 'kind': an estimate document of "
                                     "another dpdist?).")

    @classmethod
    def _document_lines(cls, document: dict[str, Any], intervals: list[dict], level: str) -> list[str]:
        """This kind's JSON ``document`` as the rows of :func:`~dpdist.estimates._text.document_lines`: by
        default the ``summary``, without intervals."""
        rows = [(f"{name}", value, "-", "-") for name, value in document["summary"].items()]
        return text_table(rows, level, "none")

    def needs_band(self) -> bool:
        """Whether this estimate is a CDF that carries no confidence band yet (a bootstrap,
        :func:`dpdist.uncertainty.cdf_band`, can add one); a result that is no CDF needs none."""
        return False

    def display_density(self) -> dict[str, Any] | None:
        """The density its figure draws, as JSON (``{"edges", "density", "bins"}``), for a page that draws it
        too (the dashboard); ``None``: the result draws no density."""
        return None

    def item_frequencies(self) -> tuple[Any, Any] | None:
        """The estimated frequencies of a categorical attribute's items and their analytic variance (two arrays), as a
        multi-attribute estimate joins them; ``None``: the result estimates no item frequencies."""
        return None

    def summary_row(self) -> dict[str, float]:
        """The headline numbers as one row of a table of estimates (a group-by's ``summary``): :meth:`summary`,
        under names that every estimate of the same shape shares."""
        return self.summary()  # type: ignore[attr-defined]

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        """Its confidence intervals and bands (``()``: the estimator has none)."""
        check_level(level, f"{type(self).__name__}.intervals")
        return ()

    def _json_fields(self, level: float) -> dict[str, Any]:
        return {}

    def to_dict(self, level: float = 0.95) -> dict[str, Any]:
        """The JSON form (``docs/reference/results.md``): ``schema``, ``kind``, what produced it, its guarantee,
        ``summary``, ``intervals`` (at ``level`` where they are computed on request), ``notes`` (:meth:`notes`) and
        the fields of its kind.

        JSON-safe: plain numbers and lists, ``null`` for a missing or non-finite value.
        """
        level = check_level(level, f"{type(self).__name__}.to_dict")
        guarantee = self.guarantee  # type: ignore[attr-defined]
        document = {
            "schema": SCHEMA,
            "kind": self.kind,
            "method": self.method,  # type: ignore[attr-defined]
            "n": json_value(self.n),  # type: ignore[attr-defined]
            "epsilon": json_value(self.epsilon),  # type: ignore[attr-defined]
            "guarantee": None if guarantee is None else guarantee.to_dict(),
            "summary": {name: json_value(value) for name, value in self.summary().items()},  # type: ignore[attr-defined]
            "intervals": [interval.to_dict() for interval in self.intervals(level)],
            "notes": self.notes(),
        }
        document.update(self._json_fields(level))
        return document

    def notes(self) -> list[str]:
        """What a reader must know to read the estimate, in sentences (``details["notes"]``; ``[]`` mostly): e.g.
        that CP found no item above the noise and its estimate is the uniform distribution (docs/explanation/frequency-oracles.md)."""
        details = getattr(self, "details", None) or {}
        return [str(note) for note in details.get("notes", ())]

    def to_json(self, level: float = 0.95, **kwargs: Any) -> str:
        """:meth:`to_dict` as JSON text (``kwargs`` go to :func:`json.dumps`, e.g. ``indent=2``)."""
        return json.dumps(self.to_dict(level), **kwargs)

    def as_distribution(self, bounds: tuple[float, float] | None = None) -> Presented | None:
        """``None``: this estimate is no distribution on numbers (a :class:`~dpdist.Distribution`, itself a
        ``Presented``, where it is one)."""
        return None


def document_lines(document: dict[str, Any]) -> list[str]:
    """The text table of an estimate's JSON ``document`` (``to_dict``, with the intervals a service adds),
    written by the result class of its ``kind``: each value with its estimate, fixed-n and anytime interval."""
    intervals = document.get("intervals") or []
    levels = {interval["level"] for interval in intervals}
    level = f"{round(100 * min(levels), 6):g}%" if levels else "95%"
    return Presented.for_kind(document["kind"])._document_lines(document, intervals, level)
