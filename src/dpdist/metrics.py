r"""Accuracy metrics of the five source papers, for numerical and categorical estimates.

Numerical metrics compare two distributions on the real line.  Each side is either a
:class:`~dpdist.Distribution` (its CDF is piecewise linear through ``(edges, cumulative)``,
so central-DP CDFs returned as Distributions work too) or raw samples (a 1-D array, read as
the right-continuous empirical CDF :math:`F_n(x) = \#\{X_i \le x\} / n`, a step function).

* :func:`wasserstein`, :func:`ks`, :func:`energy` -- distances between CDFs, exact by
  default, or on an evaluation grid as in the papers' experiments (``grid=256``).
* :func:`circular_wasserstein` -- W1 on a circle (times of day, angles), exact.
* :func:`range_query_mae` -- random range queries of a fixed width.
* :func:`mean_error`, :func:`variance_error`, :func:`quantile_error` -- statistics.

Categorical metrics compare frequency vectors (a :class:`~dpdist.FrequencyEstimate` or an
array against the true frequencies, or raw items with ``domain_size``):
:func:`mse`, :func:`mse_top_k`, :func:`l1`, :func:`l2`, :func:`true_false_positives`.

Exactness
---------
Between two consecutive breakpoints (the union of the Distribution's edges and the sorted
sample points) both CDFs are linear, hence so is their difference :math:`D = F - G`.  With
:math:`a` the right limit of :math:`D` at the left breakpoint, :math:`b` its left limit at
the right one and :math:`w` the interval's width,

.. math::

    \int |D| = w \frac{|a| + |b|}{2} \;(ab \ge 0), \qquad
    \int |D| = w \frac{a^2 + b^2}{2(|a| + |b|)} \;(ab < 0), \qquad
    \int D^2 = w \frac{a^2 + ab + b^2}{3},

(the second: two triangles meeting at the root :math:`t = a/(a-b)`), and
:math:`\sup |D|` is attained at a left or right limit at a breakpoint.  Outside the
breakpoints both CDFs are 0 (left) or 1 (right).  The cost is one sort, :math:`O((n + k)
\log(n + k))` for :math:`n` samples and :math:`k` bins.

References
----------
.. [000] Zhao et al., "Consistent Estimation of Numerical Distributions under LDP by
   Wavelet Expansion", paper 000: eqs. (18)-(19) (W1, KS), the
   256-point grid of sec. 6.1, range-query MAE eq. (93) with alpha = 0.2, 0.4.
.. [001] Fang et al., "LDP Frequency Estimation Based on Convolution Framework",
   paper 001, sec. VI: MSE, top-k MSE, true/false positives.
.. [002] Tao & Sarwate, "Functional Approximation Methods for DP Distribution
   Estimation", paper 002: KS, EMD and energy distance.
.. [003] Li et al., "Estimating Numerical Distributions under LDP" (SIGMOD 2020),
   paper 003, sec. 3: W1, KS, range queries (alpha = 0.1, 0.4,
   sec. 7), mean, variance and decile errors (Fig. 4).
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple, Union

import numpy as np
from numpy.typing import ArrayLike

from ._rng import check_rng
from ._validation import Bounds, Integer, Interval, check_integer_values, check_param
from .errors import DPDistError, InvalidParameterError, InvalidValueTypeError, OutOfDomainError
from .estimates import Distribution, Estimate, FrequencyEstimate

#: A numerical estimate or raw samples: what the distribution metrics compare.
DistributionLike = Union[Distribution, ArrayLike]
#: A frequency estimate or a frequency / count vector: what the frequency metrics compare.
FrequencyLike = Union[FrequencyEstimate, ArrayLike]
#: ``None`` (exact), an int ``m`` (m equal cells) or the grid's points.
Grid = Union[None, int, ArrayLike]

__all__ = [
    "wasserstein",
    "circular_wasserstein",
    "ks",
    "energy",
    "range_query_mae",
    "mean_error",
    "variance_error",
    "quantile_error",
    "mse",
    "mse_top_k",
    "l1",
    "l2",
    "true_false_positives",
    "DetectionCounts",
    "DECILES",
]

DECILES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


# ====================================================================== CDF representations
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
        self.sorted = np.sort(samples)
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


# ====================================================================== distances
def _exact_pieces(first, second):
    """Widths and end values of D = F - G on each interval between consecutive breakpoints.

    Returns ``(left_limits, right_values, widths, start, end)``: ``left_limits`` and
    ``right_values`` of D at every breakpoint, and for every interval its width and the
    values of the (linear) difference at its two ends.
    """
    points = np.union1d(first.breakpoints, second.breakpoints)
    first_left, first_right = first.limits(points)
    second_left, second_right = second.limits(points)
    left = first_left - second_left
    right = first_right - second_right
    return left, right, np.diff(points), right[:-1], left[1:]


def _grid_values(first, second, grid, owner: str):
    """Widths and D at the right ends of the grid's cells (see :func:`wasserstein`)."""
    if isinstance(grid, numbers.Integral) and not isinstance(grid, bool):
        cells = check_param(owner, "grid", grid, Integer(low=1))
        lo, hi = _default_bounds(first, second, owner)
        points = np.linspace(lo, hi, cells + 1)
    else:
        try:
            given = np.asarray(grid, dtype=np.float64) if not isinstance(grid, (str, bool)) else None
        except (TypeError, ValueError):
            given = None
        if (
            given is None
            or given.ndim != 1
            or given.size < 2
            or not np.all(np.isfinite(given))
            or np.any(np.diff(given) <= 0)
        ):
            raise InvalidParameterError(
                f"The 'grid' parameter of {owner} must be None, an int >= 1 or a 1-D array of at "
                f"least 2 finite, strictly increasing floats. Got {grid!r} instead."
            )
        points = given
    difference = first.value(points[1:]) - second.value(points[1:])
    return difference, np.diff(points)


def wasserstein(estimate: DistributionLike, truth: DistributionLike, *, grid: Grid = None) -> float:
    r"""1-Wasserstein (earth mover's) distance :math:`\int |F - G|\,dx` between two CDFs.

    Parameters
    ----------
    estimate, truth : Distribution or array_like of shape (n,)
        A Distribution (piecewise-linear CDF through its edges) or raw samples (empirical
        CDF).
    grid : None, int or array_like, optional
        ``None`` (default): the exact integral, in closed form between breakpoints (see the
        module docstring).  An int ``m``: the grid of the papers' experiments,
        ``x = numpy.linspace(lo, hi, m + 1)`` over the estimate's bounds (the truth's if the
        estimate is samples; the pooled sample range if both are).  An array: that grid
        ``x_0 < ... < x_m``.  On a grid, both CDFs are evaluated at the right ends
        ``x_1 .. x_m`` of the ``m`` cells and
        :math:`W_1 = \sum_{i=1}^{m} |F(x_i) - G(x_i)|\,(x_i - x_{i-1})`, a right Riemann
        sum; with equal cells it is ``(hi - lo)`` times the mean absolute CDF difference
        over the ``m`` points, the convention of [000] sec. 6.1 (M = 256 on [0, 1]) and of
        [003] sec. 3.1 on a discretized domain.

    Returns
    -------
    float

    Notes
    -----
    Eq. (18) of [000]; sec. 3.1 of [003].  For two sample sets the exact value equals
    ``scipy.stats.wasserstein_distance``.
    """
    first, second = _pair(estimate, truth, "metrics.wasserstein")
    if grid is not None:
        difference, widths = _grid_values(first, second, grid, "metrics.wasserstein")
        return float(np.dot(np.abs(difference), widths))
    _, _, widths, a, b = _exact_pieces(first, second)
    return _integral_of_absolute(a, b, widths)


def _integral_of_absolute(a: np.ndarray, b: np.ndarray, widths: np.ndarray) -> float:
    r""":math:`\int |D|` for D linear on each interval from ``a`` to ``b`` (the module docstring's formulas)."""
    absolute_a, absolute_b = np.abs(a), np.abs(b)
    total = absolute_a + absolute_b
    same_sign = a * b >= 0
    # Sign change inside the interval: two triangles of heights |a|, |b| meeting at the root.
    crossing = np.divide(a * a + b * b, 2 * total, out=np.zeros_like(total), where=~same_sign)
    per_interval = np.where(same_sign, total / 2, crossing)
    return float(np.dot(per_interval, widths))


def circular_wasserstein(estimate: DistributionLike, truth: DistributionLike, *, period: float | None = None) -> float:
    r"""1-Wasserstein distance on a circle: :math:`\min_c \int_{lo}^{lo + P} |F - G - c|\,dx` (exact).

    On a circle of length :math:`P` the transport cost between two distributions is the
    :math:`L^1` distance of their CDFs (from any origin) after the best constant shift
    (Rabin, Delon and Gousseau, "Transportation distances on the circle", J. Math. Imaging
    Vis. 41, 2011, Thm. 3.7; Werman et al. 1985).  The shift minimising it is a median of
    :math:`D = F - G` over the circle: :math:`D` is linear between breakpoints, so the measure
    of :math:`\{D < c\}` is a sum of ramps in :math:`c`, located exactly from the sorted ramp
    ends, and the integral of :math:`|D - c|` is the closed form of :func:`wasserstein`.

    Parameters
    ----------
    estimate, truth : Distribution or array_like of shape (n,)
        As in :func:`wasserstein`; samples are taken modulo the period (``lo + P`` is ``lo``).
    period : float, optional
        :math:`P`.  Default: the ``details["period"]`` of a Distribution that has one (the
        estimate of a circular protocol such as ``opm-circular``), else the width of the
        first Distribution's bounds; the circle starts at that Distribution's ``lo``.  With
        two sample sets, ``period`` is needed and the circle starts at 0.

    Returns
    -------
    float
        At most :func:`wasserstein` (the shift 0) for inputs inside one period.
    """
    owner = "metrics.circular_wasserstein"
    first, second = _pair(estimate, truth, owner)
    lo, length = _circle(first, second, period, owner)
    first, second = _wrapped(first, lo, length), _wrapped(second, lo, length)
    points = np.union1d(np.union1d(first.breakpoints, second.breakpoints), [lo, lo + length])
    first_left, first_right = first.limits(points)
    second_left, second_right = second.limits(points)
    a, b, widths = (first_right - second_right)[:-1], (first_left - second_left)[1:], np.diff(points)
    shift = _median_of_linear_pieces(a, b, widths)
    return _integral_of_absolute(a - shift, b - shift, widths)


def _circle(first, second, period, owner: str) -> tuple[float, float]:
    """``(lo, P)`` of the circle: from ``period`` or the first Distribution (see :func:`circular_wasserstein`)."""
    distributions = [cdf.distribution for cdf in (first, second) if isinstance(cdf, _DistributionCDF)]
    lo = distributions[0].bounds[0] if distributions else 0.0
    if period is None:
        stated = [d.details["period"] for d in distributions if d.details.get("period") is not None]
        if stated:
            period = stated[0]
        elif distributions:
            period = distributions[0].bounds[1] - distributions[0].bounds[0]
        else:
            raise InvalidParameterError(
                f"{owner} needs the 'period' argument when both sides are samples (a positive float). Got None."
            )
    length = check_param(owner, "period", period, Interval(0.0, math.inf, closed="neither"))
    for distribution in distributions:
        low, high = distribution.bounds
        if low < lo - 1e-9 * length or high > lo + length * (1 + 1e-9):
            raise InvalidParameterError(
                f"The 'period' argument of {owner} must cover the bounds {distribution.bounds} of each Distribution "
                f"from lo = {lo!r}. Got period={period!r}."
            )
    return float(lo), float(length)


def _wrapped(cdf, lo: float, length: float):
    """Samples taken modulo the period into ``[lo, lo + P)``; a Distribution as it is."""
    if isinstance(cdf, _EmpiricalCDF):
        return _EmpiricalCDF(lo + np.mod(cdf.sorted - lo, length))
    return cdf


def _median_of_linear_pieces(a: np.ndarray, b: np.ndarray, widths: np.ndarray) -> float:
    r"""A median :math:`c` of :math:`D` (linear from ``a`` to ``b`` on intervals of ``widths``).

    It minimises :math:`\int|D - c|`.

    The measure of :math:`\{D < c\}` is :math:`\sum_k w_k\,\mathrm{clip}((c - l_k)/(u_k - l_k), 0, 1)`
    (:math:`l_k, u_k` the ends' min and max; a flat piece is a step at :math:`l_k`): piecewise linear
    in :math:`c`, evaluated at the sorted ends by cumulative sums, and the half-mass point is found
    by linear interpolation on the segment that crosses it.
    """
    low, high = np.minimum(a, b), np.maximum(a, b)
    flat = high - low <= 0
    slope = np.where(flat, 0.0, widths / np.where(flat, 1.0, high - low))
    positions = np.concatenate([low, high])
    slope_change = np.concatenate([slope, -slope])
    jump = np.concatenate([np.where(flat, widths, 0.0), np.zeros_like(widths)])
    order = np.argsort(positions, kind="stable")
    positions, slope_change, jump = positions[order], slope_change[order], jump[order]
    slope_after = np.cumsum(slope_change)
    # mass below c just after each position: the jumps up to it plus the ramps' growth before it
    growth = np.concatenate([[0.0], np.cumsum(slope_after[:-1] * np.diff(positions))])
    after = growth + np.cumsum(jump)
    half = widths.sum() / 2.0
    index = int(np.searchsorted(after, half, side="left"))
    if index >= positions.size:
        return float(positions[-1])
    before = after[index] - jump[index]  # the mass just before positions[index]
    if before >= half and index > 0:
        rate = slope_after[index - 1]
        return float(positions[index - 1] + (half - after[index - 1]) / rate) if rate > 0 else float(positions[index])
    return float(positions[index])


def ks(estimate: DistributionLike, truth: DistributionLike, *, grid: Grid = None) -> float:
    r"""Kolmogorov-Smirnov distance :math:`\sup_x |F(x) - G(x)|` between two CDFs.

    Parameters
    ----------
    estimate, truth : Distribution or array_like of shape (n,)
        As in :func:`wasserstein`.
    grid : None, int or array_like, optional
        ``None``: the exact supremum, the largest of the left and right limits of
        :math:`|F - G|` over all breakpoints (the empirical CDF jumps at samples).
        Otherwise the maximum of :math:`|F(x_i) - G(x_i)|` over the right ends
        ``x_1 .. x_m`` of the grid's cells, with the grid of :func:`wasserstein`.

    Returns
    -------
    float

    Notes
    -----
    Eq. (19) of [000]; sec. 3.1 of [003].
    """
    first, second = _pair(estimate, truth, "metrics.ks")
    if grid is not None:
        difference, _ = _grid_values(first, second, grid, "metrics.ks")
        return float(np.abs(difference).max())
    left, right, _, _, _ = _exact_pieces(first, second)
    return float(max(np.abs(left).max(), np.abs(right).max()))


def energy(estimate: DistributionLike, truth: DistributionLike, *, grid: Grid = None) -> float:
    r"""Energy distance :math:`\sqrt{2 \int (F - G)^2\,dx}` between two CDFs.

    In one dimension the energy distance :math:`\sqrt{2E|X-Y| - E|X-X'| - E|Y-Y'|}` equals
    :math:`\sqrt{2}` times the :math:`L^2` distance of the CDFs (Székely's identity), the
    convention of ``scipy.stats.energy_distance``.

    Parameters
    ----------
    estimate, truth : Distribution or array_like of shape (n,)
        As in :func:`wasserstein`.
    grid : None, int or array_like, optional
        ``None``: exact, :math:`\int D^2` in closed form between breakpoints.  Otherwise
        :math:`\sqrt{2 \sum_i (F(x_i) - G(x_i))^2 (x_i - x_{i-1})}` on the grid of
        :func:`wasserstein`.

    Returns
    -------
    float

    Notes
    -----
    The energy distance is one of the metrics of [002] (experiments section).
    """
    first, second = _pair(estimate, truth, "metrics.energy")
    if grid is not None:
        difference, widths = _grid_values(first, second, grid, "metrics.energy")
        return float(math.sqrt(2.0 * np.dot(difference * difference, widths)))
    _, _, widths, a, b = _exact_pieces(first, second)
    squared = np.dot((a * a + a * b + b * b) / 3.0, widths)
    return float(math.sqrt(max(2.0 * squared, 0.0)))


# ====================================================================== range queries and statistics
def range_query_mae(
    estimate: DistributionLike,
    truth: DistributionLike,
    *,
    alpha: float = 0.1,
    n_queries: int = 200,
    rng: Union[None, int, np.random.SeedSequence, np.random.Generator] = None,
    bounds: Union[tuple[float, float], None] = None,
) -> float:
    r"""Mean absolute error of random range queries of relative width ``alpha``.

    Draws ``n_queries`` ranges :math:`[a, a + \alpha (hi - lo)]` with
    :math:`a \sim U[lo, hi - \alpha (hi - lo)]` (so every range fits in the bounds) and
    returns the mean over queries of :math:`|\hat{F}(b) - \hat{F}(a) - \text{mass}(a, b)|`.
    For samples the mass of a range is the fraction of samples in the closed range
    :math:`[a, b]` (eq. 93 of [000]); for a Distribution it is ``cdf(b) - cdf(a)``.

    Parameters
    ----------
    estimate, truth : Distribution or array_like of shape (n,)
        As in :func:`wasserstein`.
    alpha : float in (0, 1], default 0.1
        Width of a range as a fraction of the bounds' width ([003] sec. 7 uses 0.1 and
        0.4; [000] sec. 6.5 uses 0.2 and 0.4).
    n_queries : int >= 1, default 200
    rng : None, int, SeedSequence or Generator
        Draws the range starts.
    bounds : (lo, hi), optional
        Defaults to the estimate's bounds (the truth's if the estimate is samples; the
        pooled sample range if both are).

    Returns
    -------
    float
    """
    owner = "metrics.range_query_mae"
    first, second = _pair(estimate, truth, owner)
    alpha = check_param(owner, "alpha", alpha, Interval(0.0, 1.0, closed="right"))
    n_queries = check_param(owner, "n_queries", n_queries, Integer(low=1))
    generator = check_rng(rng, owner=owner)
    if bounds is None:
        lo, hi = _default_bounds(first, second, owner)
    else:
        lo, hi = check_param(owner, "bounds", bounds, Bounds())
    width = alpha * (hi - lo)
    low = lo + generator.random(n_queries) * (hi - lo - width)
    high = low + width
    return float(np.mean(np.abs(first.mass(low, high) - second.mass(low, high))))


def mean_error(estimate: DistributionLike, truth: DistributionLike) -> float:
    r"""Absolute error of the mean, :math:`|\hat\mu - \mu|` ([003] sec. 3.2).

    The mean of a Distribution is that of its piecewise-uniform density; of samples, their
    average.
    """
    first, second = _pair(estimate, truth, "metrics.mean_error")
    return abs(first.mean() - second.mean())


def variance_error(estimate: DistributionLike, truth: DistributionLike) -> float:
    r"""Absolute error of the variance, :math:`|\hat\sigma^2 - \sigma^2|` ([003] sec. 3.2).

    The variance of a Distribution includes the within-bin :math:`w^2/12`; that of samples
    is the variance of their empirical distribution (divisor ``n``).
    """
    first, second = _pair(estimate, truth, "metrics.variance_error")
    return abs(first.var() - second.var())


def quantile_error(estimate: DistributionLike, truth: DistributionLike, quantiles: ArrayLike = DECILES) -> float:
    r"""Mean absolute error of quantiles, :math:`\frac{1}{|B|}\sum_{\beta \in B} |\hat Q(\beta) - Q(\beta)|`.

    [003] sec. 3.2 and Fig. 4, with :math:`B` the deciles 0.1 .. 0.9 by default.  The
    quantile is the generalized inverse :math:`Q(\beta) = \min\{x : F(x) \ge \beta\}` on
    both sides (for samples, the order statistic :math:`X_{(\lceil \beta n \rceil)}`).

    Parameters
    ----------
    estimate, truth : Distribution or array_like of shape (n,)
    quantiles : array_like of floats in [0, 1], default deciles 0.1 .. 0.9
    """
    owner = "metrics.quantile_error"
    first, second = _pair(estimate, truth, owner)
    levels = np.asarray(quantiles)
    if (
        levels.ndim > 1
        or levels.size == 0
        or not (np.issubdtype(levels.dtype, np.floating) or np.issubdtype(levels.dtype, np.integer))
        or levels.dtype == np.bool_
        or not np.all((levels >= 0) & (levels <= 1))
    ):
        raise InvalidParameterError(
            f"The 'quantiles' parameter of {owner} must be a non-empty 1-D array of floats in [0, 1]. "
            f"Got {quantiles!r} instead."
        )
    levels = np.atleast_1d(levels.astype(np.float64))
    return float(np.mean(np.abs(first.quantile(levels) - second.quantile(levels))))


# ====================================================================== frequency metrics
class DetectionCounts(NamedTuple):
    """Counts of :func:`true_false_positives`."""

    true_positives: int
    false_positives: int


def _holds_numbers(array: np.ndarray) -> bool:
    """Whether ``array`` holds real numbers (floats or integers, not booleans)."""
    return array.dtype != np.bool_ and (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer))


def _finite_frequencies(array: np.ndarray, well_formed: bool, owner: str, argument: str, expected: str) -> np.ndarray:
    """``array`` as float64 frequencies; refused unless ``well_formed`` (``expected`` says what it must be) and finite."""
    if not well_formed:
        raise InvalidValueTypeError(
            f"The {argument!r} argument of {owner} must be {expected}. "
            f"Got an array of shape {array.shape} and dtype {array.dtype}."
        )
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise OutOfDomainError(f"The {argument!r} argument of {owner} must hold finite frequencies.")
    return array


def _frequency_pair(estimate, truth, domain_size, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """Estimated and true frequency vectors of equal length, float64."""
    estimated = np.asarray(estimate)  # a FrequencyEstimate is its frequency vector
    well_formed = estimated.ndim == 1 and estimated.size > 0 and _holds_numbers(estimated)
    expected = "a FrequencyEstimate or a non-empty 1-D array of floats"
    estimated = _finite_frequencies(estimated, well_formed, owner, "estimate", expected)
    d = estimated.size
    if domain_size is not None:
        domain_size = check_param(owner, "domain_size", domain_size, Integer(low=1))
        if domain_size != d:
            raise InvalidParameterError(
                f"The 'domain_size' parameter of {owner} must equal the estimate's length {d}. "
                f"Got {domain_size!r} instead."
            )
        items = check_integer_values(truth, domain_size, owner=owner, name="truth")
        if items.size == 0:
            raise InvalidValueTypeError(f"The 'truth' argument of {owner} must hold at least one item.")
        return estimated, np.bincount(items, minlength=d) / items.size
    true = np.asarray(truth)
    expected = f"a 1-D array of {d} true frequencies (or raw items with 'domain_size')"
    return estimated, _finite_frequencies(true, true.shape == (d,) and _holds_numbers(true), owner, "truth", expected)


def mse(estimate: FrequencyLike, truth: FrequencyLike, *, domain_size: Union[int, None] = None) -> float:
    r"""Mean squared error over the domain, :math:`\frac{1}{d}\sum_v (\tilde f_v - f_v)^2` ([001] sec. VI).

    Parameters
    ----------
    estimate : FrequencyEstimate or array_like of shape (d,)
    truth : array_like
        True frequencies, shape (d,); or, with ``domain_size``, raw items in ``[0, d)``.
    domain_size : int, optional
        Set it to pass raw items as ``truth``; must equal ``d``.
    """
    estimated, true = _frequency_pair(estimate, truth, domain_size, "metrics.mse")
    return float(np.mean((estimated - true) ** 2))


def mse_top_k(estimate: FrequencyLike, truth: FrequencyLike, k: int, *, domain_size: Union[int, None] = None) -> float:
    r"""MSE over the ``k`` items of largest TRUE frequency ([001] sec. VI, "frequent values").

    Ties in the true frequency are broken by the smaller item index.  Arguments as in
    :func:`mse`; ``k`` is an int in ``[1, d]``.
    """
    owner = "metrics.mse_top_k"
    estimated, true = _frequency_pair(estimate, truth, domain_size, owner)
    k = check_param(owner, "k", k, Integer(low=1, high=true.size))
    top = np.argsort(-true, kind="stable")[:k]
    return float(np.mean((estimated[top] - true[top]) ** 2))


def l1(estimate: FrequencyLike, truth: FrequencyLike, *, domain_size: Union[int, None] = None) -> float:
    r""":math:`L^1` distance :math:`\sum_v |\tilde f_v - f_v|` of frequency vectors (arguments as in :func:`mse`)."""
    estimated, true = _frequency_pair(estimate, truth, domain_size, "metrics.l1")
    return float(np.abs(estimated - true).sum())


def l2(estimate: FrequencyLike, truth: FrequencyLike, *, domain_size: Union[int, None] = None) -> float:
    r""":math:`L^2` distance :math:`\sqrt{\sum_v (\tilde f_v - f_v)^2}` of frequency vectors (arguments as in :func:`mse`)."""
    estimated, true = _frequency_pair(estimate, truth, domain_size, "metrics.l2")
    return float(np.sqrt(np.sum((estimated - true) ** 2)))


def true_false_positives(
    estimate: FrequencyLike, truth: FrequencyLike, threshold: float, *, domain_size: Union[int, None] = None
) -> DetectionCounts:
    r"""Heavy-hitter detection counts at ``threshold`` ([001] sec. VI, after Wang et al. [9]).

    A *true positive* is an item whose true frequency is above the threshold
    (:math:`f_v > \tau`) and whose estimate is above it (:math:`\tilde f_v > \tau`); a
    *false positive* is an item with :math:`f_v \le \tau` and :math:`\tilde f_v > \tau`.

    Parameters
    ----------
    estimate, truth, domain_size
        As in :func:`mse`.
    threshold : float
        The frequency threshold :math:`\tau` (finite).

    Returns
    -------
    DetectionCounts
        ``(true_positives, false_positives)``.
    """
    owner = "metrics.true_false_positives"
    estimated, true = _frequency_pair(estimate, truth, domain_size, owner)
    threshold = check_param(owner, "threshold", threshold, Interval())
    detected = estimated > threshold
    frequent = true > threshold
    return DetectionCounts(int(np.count_nonzero(detected & frequent)), int(np.count_nonzero(detected & ~frequent)))
