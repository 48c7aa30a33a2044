"""Which inputs the auditor compares: every pair of a small domain, a designed set of a large one."""

from __future__ import annotations

import itertools
import numbers
from typing import Any

import numpy as np

from ..errors import InvalidParameterError

__all__ = ["audit_inputs", "input_pairs", "ALL_PAIRS_UP_TO"]

#: Domains of at most this many items are audited on every pair of items.
ALL_PAIRS_UP_TO = 16
#: The most explicit inputs an audit compares (every pair of them).
MAX_INPUTS = 64


def audit_inputs(domain: Any, owner: str = "audit") -> tuple[np.ndarray, str]:
    """The inputs to compare, and how they were chosen (for the report).

    ``d`` (an int >= 2): every item when ``d <= 16``; otherwise a designed set of 16 items:
    the first three and last three (off-by-one and last-bit bugs: OpenDP's bit vector,
    opendp/opendp#2708), the byte and word boundaries 7, 8, 15, 16, 31, 32, 63, 64, ... below
    ``d`` (bit-packing bugs), the middle, then evenly spaced items.  ``(low, high)`` (two reals):
    seven points, both bounds, the quartiles and the eighths next to the bounds.  An array:
    those inputs (rows of a 2-D array are inputs too: a device's history of reports).
    """
    if isinstance(domain, numbers.Integral) and not isinstance(domain, bool):
        d = int(domain)
        if d < 2:
            raise InvalidParameterError(f"The 'domain' argument of {owner} must be an int >= 2. Got {domain!r} instead.")
        if d <= ALL_PAIRS_UP_TO:
            return np.arange(d), f"all {d} items"
        return _designed_items(d), f"16 of {d} items (designed: ends, byte and word boundaries, middle, spread)"
    if isinstance(domain, tuple) and len(domain) == 2 and all(isinstance(v, numbers.Real) for v in domain):
        low, high = float(domain[0]), float(domain[1])
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise InvalidParameterError(
                f"The 'domain' argument of {owner} must be bounds (low, high) with low < high, both finite. "
                f"Got {domain!r} instead."
            )
        points = low + (high - low) * np.array([0.0, 0.125, 0.25, 0.5, 0.75, 0.875, 1.0])
        return points, f"7 points of [{low:g}, {high:g}] (bounds, quartiles, eighths)"
    if domain is None:
        raise InvalidParameterError(
            f"The 'domain' argument of {owner} is needed: d items (an int), bounds (low, high) or the inputs (an array)."
        )
    try:
        inputs = np.asarray(domain)
    except (TypeError, ValueError):
        inputs = np.asarray([], dtype=object)
    if inputs.dtype.kind not in "biuf" or inputs.ndim not in (1, 2) or not 2 <= len(inputs) <= MAX_INPUTS:
        raise InvalidParameterError(
            f"The 'domain' argument of {owner} must be d items (an int >= 2), bounds (low, high) or 2 to "
            f"{MAX_INPUTS} inputs (numbers, or rows of numbers). Got {_shown(domain, inputs)} instead."
        )
    return inputs, f"{len(inputs)} given inputs"


def _shown(domain: Any, inputs: np.ndarray) -> str:
    """The refused domain in a line: itself when short, else its type and shape."""
    text = repr(domain)
    return text if len(text) <= 80 and "\n" not in text else f"{type(domain).__name__} of shape {inputs.shape} ({inputs.dtype})"


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
