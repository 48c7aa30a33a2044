"""Rules of arrays: vectors, probabilities, dtypes, real arrays, numeric rows, weights and channels."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._objects import _Absent
from ._rule import Constraint, refuses

__all__ = ["Vector", "Probabilities", "DType", "RealArray", "Weights", "NumericRows", "Channel"]


@dataclass(frozen=True)
class Vector(Constraint):
    """A non-empty sequence (a list, a tuple, a 1-D array or another iterable but a string or a dict) whose every item
    satisfies ``item``; returned as a list of the checked items."""

    item: Constraint

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes, dict)):
            raise ValueError
        items = [self.item.check(entry) for entry in value]  # not iterable: TypeError
        if not items:
            raise ValueError
        return items

    def describe(self) -> str:
        return f"a non-empty list, each item {self.item.describe()}"

    def invalid_examples(self) -> list:
        return [[], "ab", 3, *[[bad] for bad in self.item.invalid_examples()]]


@dataclass(frozen=True)
class Probabilities(Constraint):
    """One or more probabilities (an array or a float) in ``[0, 1]`` (``closed``) or ``(0, 1)``; returned as a 1-D
    float64 array."""

    closed: bool = True

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes)):
            raise ValueError
        array = np.atleast_1d(np.asarray(value, dtype=np.float64))
        if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
            raise ValueError
        inside = (array >= 0) & (array <= 1) if self.closed else (array > 0) & (array < 1)
        if not inside.all():
            raise ValueError
        return array

    def describe(self) -> str:
        return "one or more probabilities in " + ("[0, 1]" if self.closed else "(0, 1)")

    def invalid_examples(self) -> list:
        out: list = ["0.5", [], [[0.5]], [math.nan], [-0.5], [1.5], None]
        return out + ([] if self.closed else [0.0, [0.5, 1.0]])


@dataclass(frozen=True)
class DType(Constraint):
    """A NumPy dtype, or what ``numpy.dtype`` reads as one (``"<u4"``, ``np.uint8``); returned as a ``numpy.dtype``."""

    def check(self, value: Any) -> Any:
        if value is None:  # numpy.dtype(None) is float64: no dtype is given
            raise ValueError
        return np.dtype(value)  # anything else: TypeError

    def describe(self) -> str:
        return "a NumPy dtype"

    def invalid_examples(self) -> list:
        return ["not-a-dtype", 3.5, _Absent()]


@dataclass(frozen=True)
class RealArray(Constraint):
    """Finite real numbers (a number, a sequence or a numpy array), returned as a float64 array, described as ``what``:
    of one of ``ndims`` dimensions when given (a number has 0), ``width`` long along the last axis when given, at least
    ``min_size`` of them, each in ``[low, high]`` (``closed`` as for :class:`Interval`), and along a 1-D array
    non-decreasing (``increasing="weakly"``, by at most ``tolerance`` down: rounding) or strictly increasing
    (``"strictly"``).  A ``private`` array (the true data) is shown by its shape only."""

    what: str
    ndims: tuple[int, ...] | None = None
    min_size: int = 0
    low: float = -math.inf
    high: float = math.inf
    closed: str = "both"
    increasing: str | None = None
    tolerance: float = 0.0
    private: bool = False
    width: int | None = None

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes)) or value is None:
            raise ValueError
        try:
            array = np.asarray(value, dtype=np.float64)  # ValueError, TypeError: not numbers
        except OverflowError:  # an int beyond the floats (10**309)
            raise ValueError from None
        if (self.ndims is not None and array.ndim not in self.ndims) or array.size < self.min_size:
            raise ValueError
        if self.width is not None and (array.ndim == 0 or array.shape[-1] != self.width):
            raise ValueError
        if not np.all(np.isfinite(array)):
            raise ValueError
        low_ok = array >= self.low if self.closed in ("both", "left") else array > self.low
        high_ok = array <= self.high if self.closed in ("both", "right") else array < self.high
        if not (np.all(low_ok) and np.all(high_ok)):
            raise ValueError
        if self.increasing is not None:
            steps = np.diff(array.reshape(-1)) if array.ndim <= 1 else np.array([-math.inf])
            if np.any(steps <= 0 if self.increasing == "strictly" else steps < -self.tolerance):
                raise ValueError
        return array

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        out: list = ["text", None, [math.nan] * max(1, self.min_size), [[[0.0]]] if self.ndims is not None else "x"]
        if self.min_size > 0:
            out.append([self.low if math.isfinite(self.low) else 0.0] * (self.min_size - 1))
        if math.isfinite(self.low):
            out.append([self.low - 1.0] * max(1, self.min_size))
        if math.isfinite(self.high):
            out.append([self.high + 1.0] * max(1, self.min_size))
        if self.increasing is not None:
            out.append([1.0, 0.0] if self.increasing == "weakly" else [0.0, 0.0])
        if self.width is not None:
            out.append([[0.0] * (self.width + 1)])
        return [example for example in out if refuses(self, example)]

    def shown(self, value: Any) -> str:
        try:
            shape = np.shape(value)
        except ValueError:  # ragged
            return type(value).__name__
        return f"an array of shape {shape}" if self.private else f"{value!r:.200}"


@dataclass(frozen=True)
class Weights(Constraint):
    """Finite non-negative numbers with a positive sum (a 1-D sequence or array: group sizes, a law's weights),
    described as ``what``; returned as a float64 array."""

    what: str = "non-negative numbers with a positive sum"

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes)) or value is None:
            raise ValueError
        try:
            array = np.asarray(value, dtype=np.float64)  # ValueError, TypeError: not numbers
        except OverflowError:  # an int beyond the floats (10**309)
            raise ValueError from None
        if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)) or np.any(array < 0):
            raise ValueError
        if not array.sum() > 0:
            raise ValueError
        return array

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return ["text", None, [], [[1.0]], [math.nan, 1.0], [-1.0, 2.0], [0.0, 0.0]]


@dataclass(frozen=True)
class NumericRows(Constraint):
    """``min_rows`` to ``max_rows`` numbers, or rows of numbers: what ``numpy.asarray`` reads as a 1-D or 2-D array of
    booleans, ints or floats; returned as given (its dtype is the caller's).  With ``not_pairs``, a tuple of two numbers
    is refused (another rule reads it: bounds ``(low, high)``).  Described as ``what``; a long value is shown by its
    type and shape."""

    min_rows: int
    max_rows: int
    what: str
    not_pairs: bool = False

    def check(self, value: Any) -> Any:
        if value is None or isinstance(value, (str, bytes)):
            raise ValueError
        if self.not_pairs and isinstance(value, tuple) and len(value) == 2 and all(
                isinstance(one, numbers.Real) for one in value):
            raise ValueError
        array = np.asarray(value)  # ValueError, TypeError: ragged, not numbers
        if array.dtype.kind not in "biuf" or array.ndim not in (1, 2) or not self.min_rows <= len(array) <= self.max_rows:
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def shown(self, value: Any) -> str:
        text = repr(value)
        if len(text) <= 80 and "\n" not in text:
            return text
        return f"{type(value).__name__} of shape {np.shape(value)}" if _shaped(value) else type(value).__name__

    def invalid_examples(self) -> list:
        return [None, "abc", [0.0] * (self.min_rows - 1), [[[0.0]] * self.min_rows], [0.0] * (self.max_rows + 1),
                *([(0.0, 1.0)] if self.not_pairs else [])]


def _shaped(value: Any) -> bool:
    try:
        np.shape(value)
    except ValueError:  # ragged
        return False
    return True


@dataclass(frozen=True)
class Channel(Constraint):
    """A local randomizer's channel: a matrix of two or more rows (one law per input) of finite probabilities >= 0,
    each row summing to 1 (to 1e-9), and (``one_support``) every output of probability 0 under all inputs or none
    (else no finite epsilon bounds it); returned as a float64 array.  A refusal says what is wrong, not the entries."""

    one_support: bool = True

    def _problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` as a channel (None: nothing)."""
        if isinstance(value, (str, bytes)) or value is None:
            return "no matrix"
        try:
            matrix = np.asarray(value, dtype=np.float64)
        except (ValueError, TypeError, OverflowError):
            return "no matrix of numbers"
        if matrix.ndim != 2 or matrix.shape[0] < 2 or matrix.shape[1] < 1:
            return f"an array of shape {matrix.shape}"
        if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
            return "a matrix with an entry that is no finite probability >= 0"
        sums = matrix.sum(axis=1)
        if np.any(np.abs(sums - 1.0) > 1e-9):
            return f"a matrix whose row sums run from {float(sums.min())!r} to {float(sums.max())!r}"
        support = matrix > 0
        mixed = np.flatnonzero(support.any(axis=0) & ~support.all(axis=0))
        if self.one_support and mixed.size:
            return f"a matrix whose output {int(mixed[0])} has probability 0 under some inputs and not under others"
        return None

    def check(self, value: Any) -> Any:
        if self._problem(value) is not None:
            raise ValueError
        return np.asarray(value, dtype=np.float64)

    def describe(self) -> str:
        support = ", every output of probability 0 under all inputs or none" if self.one_support else ""
        return f"a matrix of two or more rows (one law per input) of finite probabilities >= 0, each row summing to 1{support}"

    def invalid_examples(self) -> list:
        out: list = ["text", [0.5, 0.5], [[0.5, 0.5]], [[0.5, math.nan], [0.5, 0.5]], [[0.5, 0.6], [0.5, 0.5]]]
        return out + ([[[1.0, 0.0], [0.5, 0.5]]] if self.one_support else [])

    def shown(self, value: Any) -> str:
        return self._problem(value) or "a channel"
