"""Lists of plain numbers checked, read and compared at once: the fast path of :mod:`dpdist._documents`.

A result's document is mostly lists of numbers (frequencies, a CDF, standard errors).  Each function here
answers for a whole list of plain Python numbers (``float``, ``int``, ``None``: what ``json.loads`` gives) with
numpy, or returns "not here" (``False`` / ``None``), and the caller then goes through the list one entry at a
time as before: a list that is refused is always refused by the per-entry code, which names the first entry at
fault, so the errors are the same; a list this module accepts is one the per-entry code accepts, with the same
values.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable, Mapping

import numpy as np

__all__ = ["follow_number_schema", "plain_list", "plain_numbers", "same_numbers"]

#: A list shorter than this goes entry by entry (numpy's fixed cost is larger than the loop's)
_SHORTEST = 4

#: The keys of an ``items`` schema this module checks (others: ``enum``, ``const``, ... go entry by entry)
_NUMBER_KEYS = frozenset({"type", "description", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})

#: What each limit refuses (the per-entry code's comparisons, on float64 values)
_FAILS: dict[str, Callable[[Any, Any], Any]] = {
    "minimum": operator.lt, "maximum": operator.gt, "exclusiveMinimum": operator.le, "exclusiveMaximum": operator.ge}

_NONE = type(None)


def _floats(values: list) -> np.ndarray | None:
    """``values`` (plain ints and floats) as float64, or ``None`` where one is too large for a float."""
    try:
        return np.array(values, dtype=np.float64)
    except OverflowError:
        return None


def follow_number_schema(items: Any, schema: Mapping[str, Any]) -> bool:
    """True when every entry of ``items`` follows ``schema``, a schema of numbers (``type`` ``"number"`` or
    ``"integer"``, maybe ``"null"``, and limits); False when one may not, or the schema is another kind."""
    allowed = schema.get("type")
    if len(items) < _SHORTEST or allowed is None or not _NUMBER_KEYS.issuperset(schema):
        return False
    names = {allowed} if isinstance(allowed, str) else set(allowed)
    accepted: set[type] = {float, int} if "number" in names else {int} if "integer" in names else set()
    if "null" in names:
        accepted.add(_NONE)
    kinds = set(map(type, items))
    if not accepted or not kinds <= accepted:
        return False
    values = _floats([item for item in items if item is not None] if _NONE in kinds else list(items))
    if values is None or not np.isfinite(values).all():
        return False
    for key, fails in _FAILS.items():
        if key in schema:
            bound = schema[key]
            if type(bound) not in (int, float) or abs(bound) > 2**53 or fails(values, bound).any():
                return False
    return True


def plain_numbers(value: Any) -> np.ndarray | None:
    """A list of plain numbers (``None``: NaN) as a float array, or ``None`` when it holds anything else (a NaN or
    infinity, a boolean, a string, a number too large for a float)."""
    if not isinstance(value, (list, tuple)) or len(value) < _SHORTEST:
        return None
    kinds = set(map(type, value))
    if not kinds <= {float, int, _NONE}:
        return None
    if _NONE not in kinds:
        values = _floats(list(value))
        return values if values is not None and np.isfinite(values).all() else None
    present = [item for item in value if item is not None]
    values = _floats(present)
    if values is None or not np.isfinite(values).all():
        return None
    return np.array([math.nan if item is None else item for item in value], dtype=np.float64)


def plain_list(kind: Any, value: Any, null: Any) -> list | None:
    """``value`` read as a list of ``kind`` (``float``, ``int`` or ``str``; ``null``: what a ``None`` reads as,
    where ``kind`` is ``float``; ``None`` is refused otherwise), or ``None`` when the list needs the reader's
    per-entry code."""
    if not isinstance(value, (list, tuple)) or len(value) < _SHORTEST:
        return None
    kinds = set(map(type, value))
    if kind is str:
        return list(value) if kinds == {str} else None
    if kind is int:  # (an int too large for a float is refused entry by entry, as the per-entry code does)
        return list(value) if kinds == {int} and plain_numbers(value) is not None else None
    if kind is not float or plain_numbers(value) is None:
        return None
    return [null if item is None else float(item) for item in value]


def same_numbers(written: Any, document: Any, relative: float, absolute: float) -> bool:
    """True when ``document`` (a list) states each of ``written``'s numbers (a list or a 1-d numeric array) within
    the reader's tolerance (``math.isclose`` with ``relative`` and ``absolute``): the same ``None``s, the same NaNs,
    the rest equal or close; False when one may differ, or the lists hold anything else."""
    if len(document) < _SHORTEST or len(document) != len(written):
        return False
    if not set(map(type, document)) <= {float, int, _NONE}:
        return False
    if isinstance(written, np.ndarray):
        if written.ndim != 1 or written.dtype.kind not in "fiu":
            return False
        mine: np.ndarray | None = written.astype(np.float64)
        given_none = [item is None for item in document]
        if any(given_none):
            return False
        theirs = _floats(list(document))
    else:
        if not set(map(type, written)) <= {float, int, _NONE}:
            return False
        if [item is None for item in written] != [item is None for item in document]:
            return False
        mine = _floats([item for item in written if item is not None])
        theirs = _floats([item for item in document if item is not None])
    if mine is None or theirs is None:
        return False
    return bool(_close(mine, theirs, relative, absolute).all())


def _close(a: np.ndarray, b: np.ndarray, relative: float, absolute: float) -> np.ndarray:
    """The per-entry comparison, elementwise: NaN only as NaN; equal; or both finite and within ``math.isclose``'s
    tolerance (``|a - b| <= max(relative |a|, relative |b|, absolute)``)."""
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    with np.errstate(over="ignore", invalid="ignore"):
        difference = np.abs(a - b)
        near = (difference <= relative * np.abs(a)) | (difference <= relative * np.abs(b)) | (difference <= absolute)
    near &= np.isfinite(a) & np.isfinite(b)
    return np.where(nan_a | nan_b, nan_a & nan_b, (a == b) | near)
