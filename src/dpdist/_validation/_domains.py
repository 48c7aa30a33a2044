"""Rules of a domain: the bounds of a numerical domain, a query's span, labels, item ids and alphabets."""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._rule import Constraint

__all__ = ["BOUNDS_CELLS", "Bounds", "Labels", "label_list", "ItemIds", "Alphabet", "Span"]


#: Bounds must hold this many cells of distinct floats (the finest grid dpdist builds by default is 2^20
#: leaves of a central tree; 4 floats per leaf keep every edge distinct after rounding).
BOUNDS_CELLS = 2**22


@dataclass(frozen=True)
class Bounds(Constraint):
    """A pair ``(lo, hi)`` of finite floats with ``lo < hi``; stored as a tuple.

    The width must be finite and hold :data:`BOUNDS_CELLS` cells of distinct floats: at least that many times
    the spacing of floats at the bounds (``math.ulp``) and that many smallest normal floats.  Narrower bounds
    (``(0, 1e-320)``, ``(1e15, 1e15 + 1)``) have grids whose edges coincide or underflow, and every method on
    them would divide by a width of a few representable steps.
    """

    def check(self, value: Any) -> Any:
        try:
            lo, hi = value
            lo, hi = float(lo), float(hi)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond the floats (10**309)
            raise ValueError from None
        # the width must be finite too: (-1e308, 1e308) would overflow every rescaling to inf
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi and math.isfinite(hi - lo)):
            raise ValueError
        if hi - lo < BOUNDS_CELLS * max(math.ulp(max(abs(lo), abs(hi))), sys.float_info.min):
            raise ValueError
        return (lo, hi)

    def describe(self) -> str:
        return (f"a pair (lo, hi) of finite floats with lo < hi, a finite width hi - lo, and room for 2**{BOUNDS_CELLS.bit_length() - 1} "
                "distinct grid steps (hi - lo at least that many times the float spacing math.ulp at the bounds, "
                "and that many times 2.2e-308)")

    def invalid_examples(self) -> list:
        return [(1.0, 0.0), (0.0, math.inf), (0.0,), "ab", (-1e308, 1e308), (0.0, 1e-320), (1e15, 1e15 + 1), (0, 10**309)]


def label_list(value: Any) -> tuple | None:
    """``value`` as a tuple of labels when it is a list of them: a list, a tuple, a 1-D array or a pandas/polars
    Series or Index (its ``tolist()``, so ``np.str_`` become ``str``); None for anything else (a str, a dict, ...)."""
    if isinstance(value, (list, tuple)):
        return tuple(value)
    if isinstance(value, (str, bytes)) or isinstance(value, Mapping) or not hasattr(value, "tolist"):
        return None
    if getattr(value, "ndim", 1) != 1:
        return None
    listed = value.tolist()
    return tuple(listed) if isinstance(listed, list) else None


@dataclass(frozen=True)
class Labels(Constraint):
    """A public label domain: a list of at least 2 distinct non-empty strings; stored as a tuple.

    Item ``i`` of a categorical protocol is ``labels[i]``.
    """

    max_size: int = 2**31 - 1

    def check(self, value: Any) -> Any:
        labels = label_list(value)
        if labels is None:
            raise ValueError
        if not 2 <= len(labels) <= self.max_size:
            raise ValueError
        if not all(isinstance(label, str) and label for label in labels) or len(set(labels)) != len(labels):
            raise ValueError
        return labels

    def describe(self) -> str:
        return "a list of at least 2 distinct non-empty strings"

    def invalid_examples(self) -> list:
        return [["only"], ["a", "a"], [1, 2], ["a", ""], "ab"]


@dataclass(frozen=True)
class ItemIds(Constraint):
    """A non-empty set of distinct item ids (ints >= 0): a list, one int, or the ids as text separated by commas
    (``"3,7"``: a query string, a command line); stored as a tuple.  The domain is checked by the option's user."""

    def check(self, value: Any) -> Any:
        if isinstance(value, str):
            parts = [part.strip() for part in value.split(",")]
            if not all(part.isdigit() and part.isascii() for part in parts):
                raise ValueError
            value = [int(part) for part in parts]
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, (list, tuple, np.ndarray)) or np.ndim(value) != 1:
            raise ValueError
        items = tuple(value)
        if not items or not all(isinstance(item, (int, np.integer)) and not isinstance(item, bool) and item >= 0
                                for item in items):
            raise ValueError
        if len(set(int(item) for item in items)) != len(items):
            raise ValueError
        return tuple(int(item) for item in items)

    def describe(self) -> str:
        return "a non-empty list of distinct item ids (ints >= 0), e.g. [3, 7] or '3,7'"

    def invalid_examples(self) -> list:
        return [[], [1, 1], [-1], ["a"], "x", [1.5], "3,,7", True]


@dataclass(frozen=True)
class Alphabet(Constraint):
    """A public alphabet: a string of 1 .. ``max_size`` distinct characters (symbols of encoded words)."""

    max_size: int = 255

    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or not 1 <= len(value) <= self.max_size or len(set(value)) != len(value):
            raise ValueError
        return value

    def describe(self) -> str:
        return f"a string of 1 to {self.max_size} distinct characters"

    def invalid_examples(self) -> list:
        return ["", "aa", ["a", "b"], 3]


@dataclass(frozen=True)
class Span(Constraint):
    """A range ``(low, high)`` of a query: two finite numbers with ``low <= high`` (a point when equal; unlike
    :class:`Bounds`, no width is needed); returned as a tuple of floats."""

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes, Mapping)):
            raise ValueError
        try:
            low, high = (float(one) for one in value)  # not a pair of numbers: ValueError or TypeError
        except OverflowError:  # an int beyond the floats (10**309)
            raise ValueError from None
        if not (math.isfinite(low) and math.isfinite(high) and low <= high):
            raise ValueError
        return (low, high)

    def describe(self) -> str:
        return "a pair (low, high) of finite numbers with low <= high"

    def invalid_examples(self) -> list:
        return [(1.0, 0.0), (0.0, math.inf), (0.0,), (0.0, 1.0, 2.0), "ab", 3, None, (0, 10**309)]
