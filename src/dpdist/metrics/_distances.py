"""Distances between two CDFs: W1 (also on a circle), KS and the energy distance, exact or on a grid."""

from __future__ import annotations

import math

import numpy as np

from .._validation import Constraint, Described, Integer, Interval, Items, OneOf, Optional, check_param, validate_params
from ..errors import InvalidParameterError
from ._cdfs import DistributionLike, Grid, _default_bounds, _DistributionCDF, _EmpiricalCDF, _pair

__all__ = ["wasserstein", "circular_wasserstein", "ks", "energy"]


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


#: a distance's grid: None (exact), a number of equal cells, or the cells' edges
_GRID: dict[str, Constraint] = {"grid": Described(
    Optional(OneOf((Integer(low=1), Items(Interval(), "", min_length=2, increasing=True)), "")),
    "None, an int >= 1 (cells) or a 1-D array of at least 2 finite, strictly increasing floats (the cells' edges)")}


def _grid_values(first, second, grid, owner: str):
    """Widths and D at the right ends of the grid's cells (see :func:`wasserstein`); ``grid`` passed ``_GRID``."""
    if isinstance(grid, int):
        lo, hi = _default_bounds(first, second, owner)
        points = np.linspace(lo, hi, grid + 1)
    else:
        points = np.asarray(grid, dtype=np.float64)
    difference = first.value(points[1:]) - second.value(points[1:])
    return difference, np.diff(points)


@validate_params(_GRID, owner="metrics.wasserstein")
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


@validate_params(_GRID, owner="metrics.ks")
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


@validate_params(_GRID, owner="metrics.energy")
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
