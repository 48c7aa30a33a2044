"""What the distribution metrics compare, as CDFs: a result's distribution or raw samples (the empirical CDF).

The exact metrics (:mod:`._distances`) walk the union of both CDFs' breakpoints, where each is
linear (the exactness argument is in :mod:`dpdist.metrics`).
"""

from __future__ import annotations

from typing import Union

import numpy as np
from numpy.typing import ArrayLike

from ..errors import DPDistError, InvalidParameterError, InvalidValueTypeError, OutOfDomainError
from ..estimates import Distribution, Estimate

#: A numerical estimate or raw samples: what the distribution metrics compare.
DistributionLike = Union[Distribution, ArrayLike]
#: ``None`` (exact), an int ``m`` (m equal cells) or the grid's points.
Grid = Union[None, int, ArrayLike]

__all__ = ["DistributionLike", "Grid"]


class _DistributionCDF:
    """CDF of a :class:`Distribution`: continuous, linear between edges."""

    def __init__(self, distribution: Distribution):
        self.distribution = distribution
        self.breakpoints = distribution.edges
        self.bounds = distribution.bounds

    def limits(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        value = self.distribution.cdf(x)
        return value, value

    def value(self, x: np.ndarray) -> np.ndarray:
        return self.distribution.cdf(x)

    def mass(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        return self.distribution.cdf(high) - self.distribution.cdf(low)

    def mean(self) -> float:
        return self.distribution.mean()

    def var(self) -> float:
        return self.distribution.var()

    def quantile(self, q: np.ndarray) -> np.ndarray:
        return self.distribution.quantile(q)


class _EmpiricalCDF:
    """Right-continuous empirical CDF of samples: a step of ``1/n`` at each sample."""

    def __init__(self, samples: np.ndarray):
        # samples sorted already (the experiment runner sorts a cell's true users once for all its metrics) are
        # np.sort's output as they are: one pass to see it instead of a sort per metric
        self.sorted = samples if bool(np.all(samples[1:] >= samples[:-1])) else np.sort(samples)
        self.n = self.sorted.size
        self.breakpoints = self.sorted
        self.bounds = (float(self.sorted[0]), float(self.sorted[-1]))

    def limits(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Left limits ``#{X < x}/n`` and values ``#{X <= x}/n``."""
        left = np.searchsorted(self.sorted, x, side="left") / self.n
        right = np.searchsorted(self.sorted, x, side="right") / self.n
        return left, right

    def value(self, x: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.sorted, x, side="right") / self.n

    def mass(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """Fraction of samples in the closed range ``[low, high]`` (eq. 93 of [000])."""
        inside = np.searchsorted(self.sorted, high, side="right") - np.searchsorted(self.sorted, low, side="left")
        return inside / self.n

    def mean(self) -> float:
        return float(self.sorted.mean())

    def var(self) -> float:
        """Variance of the empirical distribution (divisor n)."""
        return float(self.sorted.var())

    def quantile(self, q: np.ndarray) -> np.ndarray:
        """Smallest sample ``x`` with ``F_n(x) >= q`` (the generalized inverse)."""
        n = self.n
        # index k (1-based) = smallest k with k/n >= q; ceil(q*n) can be off by one in
        # floating point, so correct it against the exact comparison k/n >= q.
        k = np.ceil(q * n).astype(np.int64)
        k = np.where((k - 1) / n >= q, k - 1, k)
        k = np.where(k / n < q, k + 1, k)
        return self.sorted[np.clip(k, 1, n) - 1]


def _as_cdf(value, name: str, owner: str):
    """Read a result (its distribution: :meth:`Estimate.as_distribution`) or 1-D finite real samples as a CDF."""
    if isinstance(value, Estimate):
        try:
            distribution, reason = value.as_distribution(), f"a {type(value).__name__}, which estimates no distribution"
        except DPDistError as error:
            distribution, reason = None, str(error)
        if distribution is None:
            raise InvalidValueTypeError(
                f"The {name!r} argument of {owner} must be a Distribution or a 1-D array of samples. Got {reason}"
            )
        return _DistributionCDF(distribution)
    array = np.asarray(value)
    if array.ndim != 1 or array.size == 0:
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must be a Distribution or a non-empty 1-D array of "
            f"samples. Got an array of shape {array.shape} instead."
        )
    if not _holds_numbers(array):
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must be a Distribution or an array of real numbers. "
            f"Got dtype {array.dtype} instead."
        )
    array = array.astype(np.float64, copy=False)
    finite = np.isfinite(array)
    if not finite.all():
        raise OutOfDomainError(
            f"The {name!r} argument of {owner} must hold finite samples. Got "
            f"{np.count_nonzero(~finite)} non-finite value(s), e.g. {array[~finite][0]!r}."
        )
    return _EmpiricalCDF(array)


def _pair(estimate, truth, owner: str):
    return _as_cdf(estimate, "estimate", owner), _as_cdf(truth, "truth", owner)


def _default_bounds(first, second, owner: str) -> tuple[float, float]:
    """Bounds of the first Distribution among (estimate, truth), else the pooled sample range."""
    for cdf in (first, second):
        if isinstance(cdf, _DistributionCDF):
            return cdf.bounds
    lo = min(first.bounds[0], second.bounds[0])
    hi = max(first.bounds[1], second.bounds[1])
    if not lo < hi:
        raise InvalidParameterError(
            f"{owner} needs a range of positive width, but all samples equal {lo!r}; "
            "pass a Distribution or an explicit grid."
        )
    return lo, hi

def _holds_numbers(array: np.ndarray) -> bool:
    """Whether ``array`` holds real numbers (floats or integers, not booleans)."""
    return array.dtype != np.bool_ and (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer))
