"""Users sampled into groups: the count each group gets, and the mean of its inverse.

SMP, RS+FD and the grid and marginal protocols give each user one of ``g``
groups uniformly at random (an attribute, a marginal, a grid).  A group's
estimate averages its ``N ~ Binomial(n, 1/g)`` reports, so its variance is the
per-report variance times :math:`E[1/N \\mid N \\ge 1]`, computed here from the
binomial law (not the usual :math:`g/n` approximation, which is low by a
relative :math:`(g-1)/n` and more for small ``n``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["inverse_count_mean", "sample_groups"]


def inverse_count_mean(n: int, groups: int) -> float:
    r""":math:`E[1/N \mid N \ge 1]` for :math:`N \sim \mathrm{Binomial}(n, 1/g)` (``inf`` when ``n = 0``).

    Summed over the binomial law within 40 standard deviations of the mean
    (the mass outside is below 1e-300).
    """
    n = int(n)
    if n <= 0:
        return math.inf
    p = 1.0 / groups
    if p >= 1.0:
        return 1.0 / n
    mean, spread = n * p, math.sqrt(n * p * (1 - p))
    low, high = max(1, int(mean - 40 * spread)), min(n, int(math.ceil(mean + 40 * spread)))
    counts = np.arange(low, high + 1)
    from scipy import (
        stats,  # here, not at import: scipy.stats costs ~1.8 s of every `import dpdist`  # lazy: loads scipy (0.4-2 s)
    )

    mass = stats.binom.pmf(counts, n, p)
    return float(np.sum(mass / counts) / np.sum(mass))


def sample_groups(n: int, groups: int, rng: np.random.Generator) -> np.ndarray:
    """Each of ``n`` users' group, uniform over ``0 .. groups - 1`` (exact integers, the narrowest dtype)."""
    dtype = np.uint8 if groups <= 256 else np.uint16 if groups <= 65536 else np.uint32
    return rng.integers(0, groups, size=n, dtype=dtype)
