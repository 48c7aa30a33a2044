"""Reports as JSON rows, in and out (:meth:`ReportFormat.to_json_rows`, :meth:`ReportFormat.from_json_rows`).

A row is what ``ndarray.tolist()`` gives for one report of the format: an
integer, a (nested) list of integers, or for structured formats an object
``{field: value}``.  Reading classifies the rows that cannot be read: nulls are
``missing``, rows of another shape ``wrong_shape``, non-integers and integers the
dtype cannot hold ``out_of_range``; their places hold zeros.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ..errors import MalformedReportError

__all__ = ["json_rows", "rows_from_json", "TooManyRowsToCheck", "ROW_PROBLEMS"]

#: the reasons a JSON row cannot be read, in the order a row with several is counted under
ROW_PROBLEMS = ("missing", "wrong_shape", "out_of_range")


class TooManyRowsToCheck(MalformedReportError):
    """More rows than allowed would have to be classified one by one (``limit`` rows; ``what`` they are)."""

    def __init__(self, limit: int, what: str) -> None:
        super().__init__(f"A JSON batch holds at most {limit} {what}.")
        self.limit, self.what = limit, what


class RowLayout(Protocol):
    """What reading JSON rows needs of a format (:class:`~dpdist.local.ReportFormat` is one)."""

    @property
    def dtype(self) -> np.dtype: ...

    @property
    def row_shape(self) -> tuple[int, ...]: ...

    @property
    def _owner(self) -> str: ...

    def value_columns(self) -> list[tuple[str | None, np.dtype, tuple[int, ...]]]: ...

    def empty(self, n: int = 0) -> np.ndarray: ...

    def fit(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


def json_rows(reports: Any) -> list:
    """Reports as the rows of a JSON batch: ``ndarray.tolist()``, structured rows as ``{field: value}`` objects."""
    array = np.asarray(reports)
    if array.dtype.names is None:
        return array.tolist()
    columns = {name: array[name].tolist() for name in array.dtype.names}
    return [{name: columns[name][i] for name in array.dtype.names} for i in range(len(array))]


def rows_from_json(
    layout: RowLayout, rows: list, *, booleans: bool = True, max_checked_rows: int | None = None
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The rows as an array of ``layout`` and the masks of the unreadable ones (see the module docstring)."""
    if layout.dtype.names is not None:
        if max_checked_rows is not None and len(rows) > max_checked_rows:
            raise TooManyRowsToCheck(max_checked_rows, f"rows of {layout._owner}'s structured reports (each checked on its own)")
        return _record_rows(rows, layout)
    return _plain_rows(rows, layout, fast=not booleans, max_checked_rows=max_checked_rows)


def _plain_rows(rows: list, layout: RowLayout, fast: bool, max_checked_rows: int | None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Rows of integers (scalars or nested lists): one vectorized conversion when every row is well formed.

    ``fast=False`` skips the vectorized conversion (the rows may hold booleans,
    which NumPy would silently count as 0 and 1): every row is classified.
    """
    n = len(rows)
    try:
        wide = np.array(rows, dtype=object if n == 0 else None) if fast else None
    except (ValueError, TypeError):
        wide = None
    if wide is not None and n and wide.dtype.kind in "iu" and wide.shape[1:] == layout.row_shape:
        array, out_of_range = layout.fit(wide)
        return array, {"out_of_range": out_of_range}
    if max_checked_rows is not None and n > max_checked_rows:
        raise TooManyRowsToCheck(
            max_checked_rows,
            "rows that need checking one by one (rows with booleans, nulls, non-integers or another shape)",
        )
    array = layout.empty(n)
    masks = {reason: np.zeros(n, dtype=bool) for reason in ROW_PROBLEMS}
    info = np.iinfo(layout.dtype)
    for index, row in enumerate(rows):
        reason = _row_problem(row, layout.row_shape, info)
        if reason is None:
            array[index] = row
        else:
            masks[reason][index] = True
    return array, masks


def _record_rows(rows: list, layout: RowLayout) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Rows of objects ``{field: value}`` for structured formats, each checked on its own."""
    n = len(rows)
    array = layout.empty(n)
    masks = {reason: np.zeros(n, dtype=bool) for reason in ROW_PROBLEMS}
    fields = [(name, shape, np.iinfo(base)) for name, base, shape in layout.value_columns()]
    names = set(layout.dtype.names or ())
    for index, row in enumerate(rows):
        problem: str | None
        if row is None:
            problem = "missing"
        elif not isinstance(row, dict) or set(row) != names:
            problem = "wrong_shape"
        else:
            problem = next(filter(None, (_row_problem(row[name], shape, info) for name, shape, info in fields)), None)
            if problem is None:
                array[index] = tuple(row[name] for name, _, _ in fields)
                continue
        masks[problem][index] = True
    return array, masks


def _row_problem(row, row_shape: tuple, info) -> str | None:
    """Why one JSON value cannot be a row of ``row_shape`` integers of range ``info`` (None if it can)."""
    if row is None:
        return "missing"
    if not row_shape:
        if isinstance(row, list):
            return "wrong_shape"
        if isinstance(row, bool) or not isinstance(row, int):
            return "out_of_range"
        return None if info.min <= row <= info.max else "out_of_range"
    if not isinstance(row, list) or len(row) != row_shape[0]:
        return "wrong_shape"
    problems = [_row_problem(item, row_shape[1:], info) for item in row]
    return next((reason for reason in ROW_PROBLEMS if reason in problems), None)

