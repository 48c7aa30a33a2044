"""Which inputs the auditor compares: every pair of a small domain, a designed set of a large one."""

from __future__ import annotations

import itertools
import numbers
from typing import Any

import numpy as np

from .._validation import AllOf, Bounds, InstanceOf, Integer, NumericRows, OneOf, ShownBy, validate_params

__all__ = ["audit_inputs", "input_pairs", "ALL_PAIRS_UP_TO"]

#: Domains of at most this many items are audited on every pair of items.
ALL_PAIRS_UP_TO = 16
#: The most explicit inputs an audit compares (every pair of them).
MAX_INPUTS = 64


#: what an audit compares: d items, bounds, or the inputs themselves
_INPUTS = NumericRows(2, MAX_INPUTS, "inputs", not_pairs=True)
DOMAIN = ShownBy(OneOf((Integer(low=2), AllOf((InstanceOf(tuple, "a tuple"), Bounds()), "bounds"), _INPUTS),
                       f"d items (an int >= 2), bounds (low, high) with low < high, both finite, or 2 to {MAX_INPUTS} "
                       "inputs (numbers, or rows of numbers)"), _INPUTS)  # a long value: its type and shape


@validate_params({"domain": DOMAIN}, owner_argument="owner")
def audit_inputs(domain: Any, owner: str = "audit") -> tuple[np.ndarray, str]:
    """The inputs to compare, and how they were chosen (for the report).

    ``d`` (an int >= 2): every item when ``d <= 16``; otherwise a designed set of 16 items:
    the first three and last three (off-by-one and last-bit bugs: OpenDP's bit vector,
    opendp/opendp#2708), the byte and word boundaries 7, 8, 15, 16, 31, 32, 63, 64, ... below
    ``d`` (bit-packing bugs), the middle, then evenly spaced items.  ``(low, high)`` (two reals):
    seven points, both bounds, the quartiles and the eighths next to the bounds.  An array:
    those inputs (rows of a 2-D array are inputs too: a device's history of reports).
    """
    if isinstance(domain, numbers.Integral) and not isinstance(domain, bool):  # >= 2: the table (DOMAIN)
        d = int(domain)
        if d <= ALL_PAIRS_UP_TO:
            return np.arange(d), f"all {d} items"
        return _designed_items(d), f"16 of {d} items (designed: ends, byte and word boundaries, middle, spread)"
    if isinstance(domain, tuple) and len(domain) == 2 and all(isinstance(v, numbers.Real) for v in domain):
        low, high = float(domain[0]), float(domain[1])  # finite, low < high: the table
        points = low + (high - low) * np.array([0.0, 0.125, 0.25, 0.5, 0.75, 0.875, 1.0])
        return points, f"7 points of [{low:g}, {high:g}] (bounds, quartiles, eighths)"
    inputs = np.asarray(domain)  # 2 to MAX_INPUTS numbers or rows of numbers: the table
    return inputs, f"{len(inputs)} given inputs"


def _designed_items(d: int) -> np.ndarray:
    chosen = [0, 1, 2, d - 3, d - 2, d - 1, d // 2]
    power = 8
    while power < d and len(set(chosen)) < 12:
        chosen += [power - 1, power]
        power *= 2
    chosen = sorted(set(v for v in chosen if 0 <= v < d))
    fill = np.linspace(0, d - 1, 2 * ALL_PAIRS_UP_TO).round().astype(int)
    for value in fill:
        if len(chosen) >= ALL_PAIRS_UP_TO:
            break
        if value not in chosen:
            chosen.append(int(value))
    return np.array(sorted(chosen[:ALL_PAIRS_UP_TO]))


def input_pairs(count: int) -> np.ndarray:
    """Every unordered pair of ``count`` inputs, as rows of indices (both directions are audited)."""
    return np.array(list(itertools.combinations(range(count), 2)), dtype=np.int64)
