"""The values a protocol is given: integers of a domain, reals within bounds (checked, clipped or wrapped)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sized
from typing import Any, Sequence

import numpy as np

from .._types import ArrayLike
from ..errors import InvalidValueTypeError, OutOfDomainError

__all__ = ["check_values_given", "check_integer_values", "check_real_values", "wrap_real_values", "clip_real_values"]


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


def _object_floats(array: np.ndarray) -> tuple[np.ndarray, Any]:
    """An object array of Python numbers (``None`` as NaN) as float64, and its first int too large for a float
    (``10**309``: ``float()`` overflows) or None; such an int is taken as the infinity of its sign, beyond any
    bounds.  Raises TypeError or ValueError when a value is not a number."""
    floats, huge = [], None
    for value in array.tolist():
        if value is None:
            floats.append(math.nan)
            continue
        try:
            floats.append(float(value))
        except OverflowError:
            huge = value if huge is None else huge
            floats.append(math.inf if value > 0 else -math.inf)
    return np.array(floats, dtype=np.float64), huge


def _too_large(value: Any) -> str:
    """A value too large for a float, as a refusal shows it (its digits can be thousands)."""
    text = str(value)
    return text if len(text) <= 40 else f"an int of {len(text.lstrip('-'))} digits ({text[:12]}...)"


def check_integer_values(values: ArrayLike, domain_size: int, *, owner: str, name: str = "values") -> np.ndarray:
    """Coerce user values to a 1-D int64 array in ``[0, domain_size)``."""
    array = _one_dimensional(values, owner, name, "ints")
    if array.size == 0:
        return array.astype(np.int64)
    if np.issubdtype(array.dtype, np.floating):
        # integral floats are items: a pandas integer column with missing values dropped is float64
        whole = np.isfinite(array) & (array == np.floor(array))
        if not whole.all():
            bad = array[~whole]
            raise InvalidValueTypeError(
                f"The {name!r} argument of {owner} must hold integers in [0, {domain_size}) (whole floats such "
                f"as 3.0 are accepted). Got {bad.size} value(s) that are not whole numbers, e.g. {float(bad[0])!r}"
                + (" (missing values: drop them first)." if np.isnan(bad).any() else ".")
            )
        if array.min() >= 0 and array.max() < domain_size:
            return array.astype(np.int64)
    elif not np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_:
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must hold integers in [0, {domain_size}). "
            f"Got dtype {array.dtype} instead."
        )
    low, high = array.min(), array.max()
    if low < 0 or high >= domain_size:
        bad = array[(array < 0) | (array >= domain_size)]
        raise OutOfDomainError(
            f"The {name!r} argument of {owner} must hold integers in [0, {domain_size}). "
            f"Got {bad.size} value(s) outside it, e.g. {bad[0].item()!r}."
        )
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
                raise OutOfDomainError(
                    f"The {name!r} argument of {owner} must lie in bounds [{bounds[0]}, {bounds[1]}]. Got a value too "
                    f"large for a float, {_too_large(huge)}.")
    if array.size and not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must hold real numbers in [{bounds[0]}, {bounds[1]}]. "
            f"Got dtype {array.dtype} instead."
        )
    array = array.astype(np.float64, copy=False)
    if array.size:
        finite = np.isfinite(array)
        if not finite.all():
            raise OutOfDomainError(
                f"The {name!r} argument of {owner} must hold finite values. "
                f"Got {np.count_nonzero(~finite)} non-finite value(s), e.g. {array[~finite][0].item()!r}."
            )
        outside = (array < bounds[0]) | (array > bounds[1])
        if outside.any():
            raise OutOfDomainError(
                f"The {name!r} argument of {owner} must lie in bounds [{bounds[0]}, {bounds[1]}]. "
                f"Got {np.count_nonzero(outside)} value(s) outside, e.g. {array[outside][0].item()!r}."
            )
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
