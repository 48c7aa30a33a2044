"""Equal-width bucketization of real values over known bounds."""

from __future__ import annotations

import numpy as np
from .._types import ArrayLike, FloatBounds

__all__ = ["bucketize", "bin_edges"]


def bin_edges(bounds: FloatBounds, bins: int) -> np.ndarray:
    """The ``bins + 1`` edges of equal bins over ``bounds``."""
    return np.linspace(float(bounds[0]), float(bounds[1]), int(bins) + 1)


def bucketize(values: ArrayLike, bounds: FloatBounds, bins: int) -> np.ndarray:
    """Index in ``[0, bins)`` of the equal bin of ``bounds`` holding each value.

    Bin ``i`` is ``[lo + i w, lo + (i + 1) w)`` with ``w = (hi - lo) / bins``; the upper
    bound ``hi`` itself goes to the last bin (the map :math:`c(x) = \\lfloor x/h \\rfloor`
    of paper 000, sec. 2, made total on the closed interval).
    """
    lo, hi = float(bounds[0]), float(bounds[1])
    scaled = (np.asarray(values, dtype=np.float64) - lo) * (bins / (hi - lo))
    return np.clip(np.floor(scaled), 0, bins - 1).astype(np.int64)
