"""The values a protocol is given: integers of a domain, reals within bounds (checked, clipped or wrapped).

A value given to a protocol is a person's, and the text of an error travels (a phone's crash reporter, a log, a
support ticket): a refusal says how many values break the rule and where the first is, never a value
(:func:`refused_values`, which takes none).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sized
from typing import Any, Sequence

import numpy as np

from .._types import ArrayLike
from ..errors import InvalidValueTypeError, OutOfDomainError

__all__ = ["check_values_given", "check_integer_values", "check_real_values", "wrap_real_values", "clip_real_values",
           "refused_values", "NOT_SHOWN"]

#: what a refusal says in place of the values it refuses
NOT_SHOWN = "not shown: a user's value is private"


def refused_values(error: type[Exception], rule: str, count: int, what: str, first: int | None = None) -> Exception:
    """The refusal of ``count`` values ``what`` they are (``"outside it"``) by ``rule`` (``"The 'values' argument of
    GRR.privatize must hold integers in [0, 4)"``), the first at position ``first`` (None: not said): it takes no value,
    so none can be shown."""
    where = "" if first is None else f", the first at position {first}"
    return error(f"{rule}. Got {count} value(s) {what}{where} ({NOT_SHOWN}).")


def _first(mask: np.ndarray) -> int:
    """The position of the first True of a 1-D ``mask`` (of a 2-D one: the first row holding one)."""
    return int(np.flatnonzero(mask if mask.ndim == 1 else mask.any(axis=tuple(range(1, mask.ndim))))[0])


def check_values_given(values: Any, owner: str, name: str = "values", elements: str = "values") -> None:
    """Refuse ``values`` that hold no values to read: ``None``, or a generator or iterator (read once, without a
    length: ``np.asarray`` makes it one opaque object), naming ``name`` (:class:`~dpdist.errors.InvalidValueTypeError`)."""
    if values is None:
        raise InvalidValueTypeError(f"The {name!r} argument of {owner} must be a 1-D array of {elements}. Got None instead.")
    if isinstance(values, Iterator) or (isinstance(values, Iterable) and not isinstance(values, (Sized, str, bytes))):
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must be a 1-D array of {elements} (a list, a tuple, an array or a "
            f"Series). Got a {type(values).__name__}, read once and without a length, instead: pass list(values).")


def _one_dimensional(values: ArrayLike, owner: str, name: str, elements: str) -> np.ndarray:
    """``values`` as a 1-D array (a scalar is one value); ``elements`` names what it must hold in the error."""
    check_values_given(values, owner, name, elements)
    array = np.asarray(values)
    if array.ndim == 0:
        array = array.reshape(1)
    if array.ndim != 1:
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must be a 1-D array of {elements}. "
            f"Got an array of shape {array.shape} instead."
        )
    return array


def _object_floats(array: np.ndarray) -> tuple[np.ndarray, int | None]:
    """An object array of Python numbers (``None`` as NaN) as float64, and the position of its first int too large for
    a float (``10**309``: ``float()`` overflows) or None; such an int is taken as the infinity of its sign, beyond any
    bounds.  Raises TypeError or ValueError when a value is not a number."""
    floats, huge = [], None
    for position, value in enumerate(array.tolist()):
        if value is None:
            floats.append(math.nan)
            continue
        try:
            floats.append(float(value))
        except OverflowError:
            huge = position if huge is None else huge
            floats.append(math.inf if value > 0 else -math.inf)
    return np.array(floats, dtype=np.float64), huge


def check_integer_values(values: ArrayLike, domain_size: int, *, owner: str, name: str = "values") -> np.ndarray:
    """Coerce user values to a 1-D int64 array in ``[0, domain_size)``."""
    array = _one_dimensional(values, owner, name, "ints")
    if array.size == 0:
        return array.astype(np.int64)
    if np.issubdtype(array.dtype, np.floating):
        # integral floats are items: a pandas integer column with missing values dropped is float64
        whole = np.isfinite(array) & (array == np.floor(array))
        if not whole.all():
            missing = " (missing values among them: drop them first)" if np.isnan(array).any() else ""
            raise refused_values(InvalidValueTypeError, f"The {name!r} argument of {owner} must hold integers in [0, "
                                 f"{domain_size}) (whole floats such as 3.0 are accepted)", int(np.count_nonzero(~whole)),
                                 "that are not whole numbers" + missing, _first(~whole))
        if array.min() >= 0 and array.max() < domain_size:
            return array.astype(np.int64)
    elif not np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_:
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must hold integers in [0, {domain_size}). "
            f"Got dtype {array.dtype} instead."
        )
    low, high = array.min(), array.max()
    if low < 0 or high >= domain_size:
        bad = (array < 0) | (array >= domain_size)
        raise refused_values(OutOfDomainError, f"The {name!r} argument of {owner} must hold integers in [0, {domain_size})",
                             int(np.count_nonzero(bad)), "outside it", _first(bad))
    return array.astype(np.int64, copy=False)


def check_real_values(values: ArrayLike, bounds: Sequence[float], *, owner: str, name: str = "values") -> np.ndarray:
    """Coerce user values to a 1-D float64 array of finite values in ``[lo, hi]``."""
    array = _one_dimensional(values, owner, name, "floats")
    if array.dtype == object and array.size:  # Python numbers, one too large for an int64 (2**70, 10**309) among them
        try:
            array, huge = _object_floats(array)
        except (TypeError, ValueError):
            pass
        else:
            if huge is not None:
                raise refused_values(OutOfDomainError, f"The {name!r} argument of {owner} must lie in bounds [{bounds[0]}, "
                                     f"{bounds[1]}]", 1, "too large for a float", huge)
    if array.size and not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must hold real numbers in [{bounds[0]}, {bounds[1]}]. "
            f"Got dtype {array.dtype} instead."
        )
    array = array.astype(np.float64, copy=False)
    if array.size:
        finite = np.isfinite(array)
        if not finite.all():
            raise refused_values(OutOfDomainError, f"The {name!r} argument of {owner} must hold finite values",
                                 int(np.count_nonzero(~finite)), "that are not finite (NaN or infinite)", _first(~finite))
        outside = (array < bounds[0]) | (array > bounds[1])
        if outside.any():
            raise refused_values(OutOfDomainError, f"The {name!r} argument of {owner} must lie in bounds [{bounds[0]}, "
                                 f"{bounds[1]}]", int(np.count_nonzero(outside)), "outside them", _first(outside))
    return array


def wrap_real_values(values, bounds: Sequence[float], *, owner: str, name: str = "values") -> tuple[np.ndarray, int]:
    """``(wrapped, moved)``: user values on a circle of one period ``[lo, hi]`` (``hi`` the same point as ``lo``), a
    finite value outside it wrapped around (``lo + (x - lo) mod (hi - lo)``: 1500 minutes of a day is 60), and how many
    moved; NaN and infinities as :func:`clip_real_values` (NaN to ``lo``), since they have no place on the circle."""
    array, moved = clip_real_values(values, bounds, owner=owner, name=name)
    if not moved:
        return array, 0
    raw = _one_dimensional(values, owner, name, "floats")
    raw = _object_floats(raw)[0] if raw.dtype == object else raw.astype(np.float64)  # past a float: +-inf, not wrapped
    low, high = float(bounds[0]), float(bounds[1])
    outside = np.isfinite(raw) & ((raw < low) | (raw > high))
    wrapped = array.copy()
    wrapped[outside] = low + np.mod(raw[outside] - low, high - low)
    return wrapped, moved


def clip_real_values(values, bounds: Sequence[float], *, owner: str, name: str = "values") -> tuple[np.ndarray, int]:
    """``(clipped, moved)``: user values as a 1-D float64 array clipped into ``[lo, hi]``, and how many moved.

    The rule of every clipping in dpdist (central releases, ``clip=True`` of the local
    numerical protocols): values below ``lo`` (``-inf`` included) become ``lo``, values
    above ``hi`` (``+inf`` included) become ``hi``.  A missing value (NaN) is its callers'
    to handle first, by their ``missing=`` policy (:mod:`dpdist._missing`: refused unless
    asked); one that reaches this function becomes ``lo`` and is counted as moved.  Only the
    schema is refused: a 2-D or non-numeric ``values`` raises
    :class:`~dpdist.errors.InvalidValueTypeError` naming ``name``.
    """
    array = _one_dimensional(values, owner, name, "floats")
    if array.dtype == object and array.size:  # a Python list with None (missing) among the numbers
        try:  # an int too large for a float (10**309) is above any bound: clipped, as +inf is
            array, _ = _object_floats(array)
        except (TypeError, ValueError):
            pass
    if array.size and not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must hold real numbers. Got dtype {array.dtype} instead."
        )
    array = array.astype(np.float64, copy=False)
    low, high = float(bounds[0]), float(bounds[1])
    inside = (array >= low) & (array <= high)  # False for NaN
    if inside.all():
        return array, 0
    clipped = np.clip(np.where(np.isnan(array), low, array), low, high)
    return clipped, int(array.size - np.count_nonzero(inside))
