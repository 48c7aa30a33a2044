"""The kinds of report a protocol declares (``LocalProtocol._report_format``).

Each kind owns its dtype, row shape, the checks of its rows (:meth:`read`) and
its parameters in :meth:`describe`; the protocol adds small extra checks of its
own over what ``read`` returns (its ``check_reports``), e.g. that a dBitFlipPM
row's buckets increase.

* :class:`ItemReports` -- one integer in ``[0, size)`` per report (GRR, HR, SW, ...);
* :class:`PackedBitReports` -- ``numpy.packbits`` rows of ``bits`` bits, with
  exactly ``weight`` of them set when given (OUE, SUE: no weight; SS: ``k``);
* :class:`IntegerRowReports` -- rows of integers, each column below its limit
  (OLH's seed and value, PEM's group, function and value, CMS's words); rows of
  bytes (the wavelet's level and bitmaps) are integer rows of ``uint8``;
* :class:`RecordReports` -- structured records whose fields have bounds
  (hierarchies, HaarHRR); a field may hold an inner protocol's report as bytes;
* :class:`EmbeddedReports` -- the reports of an inner protocol, as they are (binning).

A batch of a kind is read whole (a wrong type, number of dimensions, width or
dtype raises :class:`~dpdist.errors.MalformedReportError`) and its rows are
checked one by one (a mask per reason, counted and dropped by ``validate``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import MalformedReportError
from ._report_format import ReportFormat, fit_values, smallest_unsigned_dtype

__all__ = ["ItemReports", "PackedBitReports", "Column", "IntegerRowReports", "Field", "RecordReports", "EmbeddedReports"]


@functools.lru_cache(maxsize=64)
def _integer_kind(dtype: np.dtype) -> tuple[bool, bool, int]:
    """Whether ``dtype`` holds integers (not booleans), whether signed ones, and its largest value (per dtype, once)."""
    if not (np.issubdtype(dtype, np.integer) and dtype != np.bool_):
        return False, False, 0
    return True, bool(np.issubdtype(dtype, np.signedinteger)), int(np.iinfo(dtype).max)


def _integer_array(reports) -> np.ndarray | None:
    """``reports`` as an array if it holds integers (not booleans), else None."""
    array = np.asarray(reports)
    if _integer_kind(array.dtype)[0]:
        return array
    return None


def _cast(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The rows as ``dtype``, entries it cannot hold set to 0 (their rows are flagged: nothing wraps around)."""
    return array if array.dtype == dtype else fit_values(array, dtype)[0]


def _out_of_range(values: np.ndarray, low: int, high: int | None) -> np.ndarray:
    """Entries outside ``[low, high)`` (``high=None``: no upper limit), compared without overflow."""
    integer, signed, largest = _integer_kind(values.dtype)
    if not integer:
        largest = np.iinfo(values.dtype).max  # raises as it always did: no integers
    below = low > 0 or signed
    above = high is not None and high - 1 < largest
    if below and above:
        return (values < low) | (values >= high)
    if below or above:
        return values < low if below else values >= high
    return np.zeros(values.shape, dtype=bool)


class ItemReports(ReportFormat):
    """One item in ``[0, size)`` per report: a 1-D array of the narrowest unsigned dtype holding it.

    Rows outside the range are ``out_of_range``.
    """

    kind = "items"

    def __init__(self, size: int) -> None:
        self.size = int(size)
        super().__init__(smallest_unsigned_dtype(self.size), ())

    def _parameters(self) -> dict[str, Any]:
        return {"size": self.size}

    def read(self, reports: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        array = _integer_array(reports)
        if array is None or array.ndim != 1:
            shown = np.asarray(reports)
            raise MalformedReportError(
                f"{self._owner} reports must be a 1-D array of integers in [0, {self.size}). "
                f"Got shape {shown.shape} and dtype {shown.dtype} instead."
            )
        out_of_range = _out_of_range(array, 0, self.size)
        return _cast(array, self.dtype), {"out_of_range": out_of_range}


class PackedBitReports(ReportFormat):
    """Rows of ``bits`` bits packed by ``numpy.packbits`` (``uint8``, ``ceil(bits / 8)`` bytes a row).

    Rows with a padding bit set are ``padding_bits_set``; with ``weight``, rows
    that do not set exactly ``weight`` bits are ``not_k_items``.
    """

    kind = "packed_bits"

    def __init__(self, bits: int, weight: int | None = None) -> None:
        self.bits = int(bits)
        self.weight = None if weight is None else int(weight)
        super().__init__(np.uint8, (-(-self.bits // 8),))

    def _parameters(self) -> dict[str, Any]:
        return {"bits": self.bits, "weight": self.weight}

    def read(self, reports: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        n_bytes = self.row_shape[0]
        array = np.asarray(reports)
        if array.ndim != 2 or array.dtype != np.uint8 or array.shape[1] != n_bytes:
            weight = "" if self.weight is None else f", exactly k={self.weight} set"
            raise MalformedReportError(
                f"{self._owner} reports must be a uint8 array of shape (n, {n_bytes}) "
                f"(d={self.bits} bits packed by numpy.packbits{weight}). "
                f"Got shape {array.shape} and dtype {array.dtype} instead."
            )
        padding_mask = np.uint8((1 << (n_bytes * 8 - self.bits)) - 1)
        padding = (array[:, -1] & padding_mask) != 0 if array.shape[0] else np.zeros(0, bool)
        invalid = {"padding_bits_set": padding}
        if self.weight is not None:
            wrong_weight = np.bitwise_count(array).sum(axis=1, dtype=np.int64) != self.weight
            invalid["not_k_items"] = wrong_weight & ~padding
        return array, invalid


@dataclass(frozen=True)
class Column:
    """``count`` consecutive columns of integer rows, each in ``[low, limit)`` (``limit=None``: no limit).

    Rows with an entry outside are counted under ``reason`` (default
    ``"<name>_out_of_range"``); ``label`` names the column in error messages.
    """

    name: str
    limit: int | None
    count: int = 1
    reason: str | None = None
    label: str | None = None
    low: int = 0

    @property
    def why(self) -> str:
        return self.reason or f"{self.name}_out_of_range"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "count": self.count, "low": self.low, "limit": self.limit, "reason": self.why}

    def shown(self) -> str:
        label = self.label or self.name
        if self.limit is None:
            return f"{self.count} x {label}" if self.count > 1 else label
        return f"{f'{self.count} x ' if self.count > 1 else ''}{label} in [{self.low}, {self.limit})"


class IntegerRowReports(ReportFormat):
    """Rows of integers, one run of :class:`Column` after another.

    The dtype is the narrowest unsigned one holding every limit unless given.
    A batch of any integer dtype is read (``exact_dtype``: only of ``dtype``)
    and returned as ``dtype``; a row is counted under the reason of its first
    column out of range.
    """

    kind = "integer_rows"

    def __init__(self, columns: Sequence[Column], dtype: Any = None, *, exact_dtype: bool = False) -> None:
        self.columns = tuple(columns)
        if dtype is None:
            dtype = smallest_unsigned_dtype(max(column.limit or 0 for column in self.columns))
        self.exact_dtype = bool(exact_dtype)
        super().__init__(dtype, (sum(column.count for column in self.columns),))

    def _parameters(self) -> dict[str, Any]:
        return {"columns": [column.describe() for column in self.columns], "exact_dtype": self.exact_dtype}

    def read(self, reports: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        width = self.row_shape[0]
        array = _integer_array(reports)
        if array is None or array.ndim != 2 or array.shape[1] != width or (self.exact_dtype and array.dtype != self.dtype):
            shown = np.asarray(reports)
            what = f"a {self.dtype} array" if self.exact_dtype else "an integer array"
            columns = ", ".join(column.shown() for column in self.columns)
            raise MalformedReportError(
                f"{self._owner} reports must be {what} of shape (n, {width}) ({columns}). "
                f"Got shape {shown.shape} and dtype {shown.dtype} instead."
            )
        invalid: dict[str, np.ndarray] = {}
        flagged = np.zeros(array.shape[0], dtype=bool)
        start = 0
        for column in self.columns:
            if column.count == 1:
                rows = _out_of_range(array[:, start], column.low, column.limit)
            else:
                rows = np.asarray(_out_of_range(array[:, start : start + column.count], column.low, column.limit).any(axis=1))
            start += column.count
            rows &= ~flagged
            if column.why in invalid:
                invalid[column.why] |= rows
            elif column.limit is not None or column.low or rows.any():
                invalid[column.why] = rows
            flagged |= rows
        return _cast(array, self.dtype), invalid


@dataclass(frozen=True)
class Field:
    """A field of structured records: ``dtype`` values of per-row ``shape``, each in ``[low, high)``
    (``high=None``: no upper limit); rows with one outside are counted under ``reason``."""

    name: str
    dtype: Any
    shape: tuple[int, ...] = ()
    low: int = 0
    high: int | None = None
    reason: str | None = None

    @property
    def why(self) -> str:
        return self.reason or f"{self.name}_out_of_range"

    @property
    def bounded(self) -> bool:
        return self.low > 0 or self.high is not None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "low": self.low, "high": self.high, "reason": self.why if self.bounded else None}


class RecordReports(ReportFormat):
    """A 1-D structured array of :class:`Field` records (a batch must have exactly this dtype).

    Each bounded field flags its rows outside the bounds under its reason, on its own.
    """

    kind = "records"

    def __init__(self, fields: Sequence[Field]) -> None:
        self.fields = tuple(fields)
        super().__init__(np.dtype([(f.name, f.dtype, f.shape) if f.shape else (f.name, f.dtype) for f in self.fields]), ())

    def _parameters(self) -> dict[str, Any]:
        return {"fields": [f.describe() for f in self.fields]}

    def read(self, reports: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        array = np.asarray(reports)
        if array.ndim != 1 or array.dtype != self.dtype:
            raise MalformedReportError(
                f"{self._owner} reports must be a 1-D structured array of dtype {self.dtype}. "
                f"Got shape {array.shape} and dtype {array.dtype} instead."
            )
        invalid: dict[str, np.ndarray] = {}
        for f in self.fields:
            if f.bounded:
                entries = _out_of_range(array[f.name], f.low, f.high)
                invalid[f.why] = np.asarray(entries.reshape(array.shape[0], -1).any(axis=1)) if f.shape else entries
        return array, invalid


class EmbeddedReports(ReportFormat):
    """The reports of an inner protocol (named ``protocol``), read by the inner protocol's own format.

    The inner protocol's own rules are its ``check_reports``: the protocol that embeds it checks its reports there.
    """

    kind = "embedded"

    def __init__(self, inner: ReportFormat, protocol: str | None = None) -> None:
        self.inner = inner
        self.protocol = protocol
        super().__init__(inner.dtype, inner.row_shape)

    def _parameters(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "inner": self.inner.describe()}

    def read(self, reports: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        return self.inner.read(reports)
