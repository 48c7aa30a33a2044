"""The protocol that randomizes each attribute, and how its reports sit in a record.

Each attribute of a multi-attribute protocol is randomized by a registered
protocol (its *inner* protocol): a categorical frequency oracle for a
categorical attribute, a numerical protocol for a numerical one, built through
the registry with the budget the multi-attribute protocol gives it.

:class:`InnerCodec` places the inner reports in a field of the outer record:
as they are (a field of the inner dtype and row shape: items, packed bits,
integer rows) or, for inner reports that are themselves records (hierarchies,
HaarHRR), as little-endian bytes (:class:`~dpdist.local.numerical._composite.ReportCodec`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import DPDistError, InvalidParameterError
from .._protocol import make
from .._report_kinds import Field
from ..numerical._composite import ReportCodec
from ._schema import Attribute

__all__ = ["build_inner", "InnerCodec"]


def _kind_error(owner: str, attribute: Attribute, name: str, allowed) -> InvalidParameterError:
    what = "a categorical frequency oracle" if attribute.categorical else "a numerical protocol"
    return InvalidParameterError(
        f"The 'attributes' parameter of {owner}: attribute {attribute.name!r} is {attribute.kind}; its 'protocol' must "
        f"be {what} of {sorted(allowed)}. Got {name!r} instead."
    )


def build_inner(owner: str, attribute: Attribute, name: str, epsilon: float, allowed) -> Any:
    """The inner protocol ``name`` of ``attribute`` at budget ``epsilon`` (``allowed``: the registry names it may be).

    Errors of the inner protocol's constructor are re-raised with the attribute named.
    """

    key = name.strip().lower().replace("_", "-") if isinstance(name, str) else name
    if key != "auto" and key not in allowed:
        raise _kind_error(owner, attribute, name, allowed)
    domain = (
        {"domain_size": attribute.domain_size, **({"labels": list(attribute.labels)} if attribute.labels else {})}
        if attribute.categorical
        else {"bounds": attribute.bounds}
    )
    try:
        inner = make(key, epsilon=epsilon, **domain, **attribute.options)
    except DPDistError as error:
        raise type(error)(f"The 'attributes' parameter of {owner}: attribute {attribute.name!r}: {error}") from None
    if inner.name not in allowed:
        raise _kind_error(owner, attribute, inner.name, allowed)
    return inner


class InnerCodec:
    """One attribute's inner reports as a field of the outer record, and back."""

    def __init__(self, inner: Any, field_name: str):
        report_format = inner.report_format
        self.inner = inner
        self.name = field_name
        self.structured = report_format.dtype.names is not None
        self._bytes: ReportCodec | None = ReportCodec(inner) if self.structured else None
        if self._bytes is not None:
            self.dtype, self.row_shape = np.dtype(np.uint8), (self._bytes.width,)
        else:
            self.dtype, self.row_shape = report_format.dtype, tuple(report_format.row_shape)

    @property
    def width(self) -> int:
        """Bytes of one inner report on the wire."""
        return self.dtype.itemsize * int(np.prod(self.row_shape, dtype=np.int64))

    def field(self) -> Field:
        """The record field that holds these reports (checked by the inner format, so unbounded here)."""
        return Field(self.name, self.dtype, self.row_shape)

    def encode(self, reports) -> np.ndarray:
        """Inner reports as field values."""
        return self._bytes.encode(reports, self._bytes.width) if self._bytes is not None else np.asarray(reports)

    def decode(self, values) -> np.ndarray:
        """Field values as inner reports."""
        return self._bytes.decode(np.asarray(values)) if self._bytes is not None else np.asarray(values)
