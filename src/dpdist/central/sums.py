r"""Sums, means and variances of a bounded column, per record or per person, with their intervals.

**Sum** (:func:`sum`).  Each value is clipped to :math:`[l, u]`; adding or removing one record moves the sum of the
clipped values by at most :math:`\Delta = \max(|l|, |u|)`.  The sum rounded to the public grid of step
:math:`\gamma` (:func:`~dpdist.central.noise.secure_grid_step` of :math:`\Delta`), plus exact discrete Laplace noise of
integer sensitivity :math:`\Delta_Z = \lceil\Delta/\gamma\rceil + 1` (one step for the rounding) is
:math:`\varepsilon`-DP (the Laplace mechanism of Dwork, McSherry, Nissim & Smith 2006 on a grid, the discrete sampler of
Canonne, Kamath & Steinke 2020: :func:`~dpdist.central.noise.laplace_mechanism`).  Per person (``privacy_id``) each
person's rows are bounded to :math:`k` and the mechanism runs at :math:`\varepsilon/k` (sensitivity :math:`k\Delta`:
:mod:`dpdist.central._contributions`), as every central release does.

**Mean** (:func:`mean`).  The noisy sum of the values *centred at the bounds' midpoint* :math:`m = (l+u)/2` over a
noisy count: :math:`\tilde\mu = m + \tilde S_c / \max(\tilde N, 1)`, clipped to :math:`[l, u]`, where
:math:`S_c = \sum_i (x_i - m)` has sensitivity :math:`(u - l)/2` (half that of the plain sum when :math:`l = 0`, and
never more than :math:`\max(|l|, |u|)`), and :math:`\tilde N` is :func:`~dpdist.central.count`'s.  This is the
"normalized sum" mean of Li, Lyu, Su & Yang (*Differential Privacy: From Theory to Practice*, 2016, the noisy
average), which Google's ``BoundedMean`` and PipelineDP's ``MEAN`` run.  The budget is split equally between the two
(sequential composition): with :math:`|\mu - m| \le (u-l)/2`, the mean's variance
:math:`\approx (\operatorname{Var}\tilde S_c + (\mu - m)^2 \operatorname{Var}\tilde N)/N^2` has two terms of the same
worst-case constant, which an equal split minimises.

**Variance** (:func:`variance`).  A noisy count :math:`\tilde N`, a noisy sum :math:`\tilde S` of the values centred at
:math:`m` (sensitivity :math:`r = (u - l)/2`) and a noisy sum :math:`\tilde Q` of their squares (sensitivity :math:`r^2`),
each at a third of the budget (sequential composition); the variance is
:math:`\tilde Q/\tilde N - (\tilde S/\tilde N)^2`, each ratio clipped to what values in the bounds allow, and the
result to :math:`[0, r^2]`: the "noisy average of squares" of Li, Lyu, Su & Yang (2016) that Google's
``BoundedVariance``, PipelineDP's ``VARIANCE`` and Tumult Analytics' ``variance`` run.  ``ddof=1`` (the sample
variance, SQL's ``VARIANCE``) multiplies it by :math:`\tilde N/(\tilde N - 1)` (post-processing).  Its interval is the
range of :math:`Q/N - (S/N)^2` over the box of the three intervals, each at level :math:`1 - \alpha/3` (a union bound),
within :math:`[0, r^2]`: it covers the variance of the clipped rows released with probability at least ``level``.

**Intervals.**  The sum's interval is exact: the discrete Laplace law's tails (:func:`~dpdist.central.count._half_width`)
in grid steps, widened by the half step of the rounding; it covers the sum of the clipped rows released with
probability at least ``level``.  The mean's comes from the sum's and the count's intervals each at level
:math:`1 - \alpha/2` (a union bound): the range of :math:`m + S_c/N` over that box (``[l, u]`` where the count's
interval reaches 0).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .._guarantee import PrivacyGuarantee, sequential
from .._types import ArrayLike, FloatBounds, Seed
from .._validation import Interval, Options, validate_params
from ..estimates import ScalarRelease
from ._common import CentralInput, check_central_input
from .count import _half_width, _rho
from .noise import _dyadic_epsilon, _sampler_scale, discrete_laplace, secure_grid_step

__all__ = ["sum", "mean", "variance"]


@validate_params({"level": Interval(0.0, 1.0, closed="neither")})
def sum(x: ArrayLike, epsilon: float, bounds: FloatBounds, *, level: float = 0.95, rng: Seed = None,
        secure: bool = False, missing: str | float = "refuse", privacy_id: ArrayLike | None = None,
        max_contributions: int | str | None = None) -> ScalarRelease:
    """The sum of ``x`` clipped to ``bounds`` under ``epsilon``-DP (add/remove neighbours), with its exact interval.

    Parameters
    ----------
    x : array_like
        The values (clipped to ``bounds``).
    epsilon : float
    bounds : (float, float)
        ``(lower, upper)``: each value is clipped into them; the sensitivity is ``max(|lower|, |upper|)`` per row.
    level : float
        Confidence level of the interval, in (0, 1).
    rng, secure, missing
        As in :func:`dpdist.central.histogram_queries` (``"drop"`` leaves the records without a value out).
    privacy_id, max_contributions : optional
        Whose row each value is, and the rows kept per person: the guarantee is then per person
        (:mod:`dpdist.central._contributions`).
    """
    data = _checked("sum", x, epsilon, bounds, rng, secure, missing, privacy_id, max_contributions)
    sensitivity = max(abs(data.bounds[0]), abs(data.bounds[1]))
    total, scale, spread, half = _noisy_sum(data.x, sensitivity, data.epsilon, 1 - float(level), data.rng)
    details = {"mechanism": "Laplace on a public grid, exact discrete noise", "sensitivity": sensitivity,
               "noise_scale": scale, "bounds": list(data.bounds), "secure": data.secure}
    guarantee = data.stated(data.guarantee("add-remove"))
    return ScalarRelease("sum", total, spread, total - half, total + half, float(level), "sum",
                         guarantee.epsilon, data.details(**details), guarantee)


@validate_params({"level": Interval(0.0, 1.0, closed="neither")})
def mean(x: ArrayLike, epsilon: float, bounds: FloatBounds, *, level: float = 0.95, rng: Seed = None,
         secure: bool = False, missing: str | float = "refuse", privacy_id: ArrayLike | None = None,
         max_contributions: int | str | None = None) -> ScalarRelease:
    """The mean of ``x`` clipped to ``bounds`` under ``epsilon``-DP (add/remove neighbours): a noisy sum centred at the
    bounds' midpoint over a noisy count, each at half the budget (the module docstring), with its interval.

    Parameters are those of :func:`sum`.  The mean of no record released is the midpoint (or a value the noise moved):
    its interval is then ``bounds``.
    """
    data = _checked("mean", x, epsilon, bounds, rng, secure, missing, privacy_id, max_contributions)
    low, high = data.bounds
    middle, radius = (low + high) / 2, (high - low) / 2
    half_epsilon, alpha = data.epsilon / 2, (1 - float(level)) / 2
    centred, sum_scale, sum_spread, sum_half = _noisy_sum(data.x - middle, radius, half_epsilon, alpha, data.rng)
    count = float(data.x.size + int(discrete_laplace(1, 1, half_epsilon, data.rng)[0]))
    count_half = _half_width(_rho(half_epsilon), alpha)
    value = float(np.clip(middle + centred / builtins.max(count, 1.0), low, high))
    lower, upper = _mean_interval(centred, sum_half, count, count_half, middle, (low, high))
    rho = _rho(half_epsilon)
    count_sd = math.sqrt(2 * rho) / (1 - rho)
    spread = math.sqrt(sum_spread**2 + (value - middle) ** 2 * count_sd**2) / builtins.max(count, 1.0)
    details = {"mechanism": "noisy centred sum over a noisy count (equal halves of the budget), exact discrete noise",
               "sensitivity": {"centred_sum": radius, "count": 1}, "noise_scale": {"centred_sum": sum_scale,
                                                                                   "count": 1 / half_epsilon},
               "bounds": [low, high], "secure": data.secure}
    guarantee = data.stated(sequential([PrivacyGuarantee(half_epsilon, 0.0, "add-remove", "central")] * 2))
    return ScalarRelease("mean", value, spread, lower, upper, float(level), "mean", guarantee.epsilon,
                         data.details(**details), guarantee)


@validate_params({"level": Interval(0.0, 1.0, closed="neither"), "ddof": Options((0, 1))})
def variance(x: ArrayLike, epsilon: float, bounds: FloatBounds, *, ddof: int = 0, level: float = 0.95, rng: Seed = None,
             secure: bool = False, missing: str | float = "refuse", privacy_id: ArrayLike | None = None,
             max_contributions: int | str | None = None) -> ScalarRelease:
    """The variance of ``x`` clipped to ``bounds`` under ``epsilon``-DP (add/remove neighbours): a noisy count, a noisy
    centred sum and a noisy centred sum of squares, each at a third of the budget (the module docstring), with its
    interval.

    Parameters are those of :func:`sum`, and ``ddof``: 0 for the population variance (SQL's ``VAR_POP``), 1 for the
    sample variance (``VARIANCE``, ``VAR_SAMP``).  Its square root is the standard deviation (post-processing).
    """
    data = _checked("variance", x, epsilon, bounds, rng, secure, missing, privacy_id, max_contributions)
    low, high = data.bounds
    middle, radius = (low + high) / 2, (high - low) / 2
    third, alpha = data.epsilon / 3, (1 - float(level)) / 3
    centred = data.x - middle
    total, _, total_sd, total_half = _noisy_sum(centred, radius, third, alpha, data.rng)
    squares, _, squares_sd, squares_half = _noisy_sum(centred**2, radius**2, third, alpha, data.rng)
    count = float(data.x.size + int(discrete_laplace(1, 1, third, data.rng)[0]))
    rho = _rho(third)
    count_half, count_sd = _half_width(rho, alpha), math.sqrt(2 * rho) / (1 - rho)
    size = builtins.max(count, 1.0)
    mean = float(np.clip(total / size, -radius, radius))
    second = float(np.clip(squares / size, 0.0, radius**2))
    value = float(np.clip(second - mean**2, 0.0, radius**2))
    spread = math.sqrt(squares_sd**2 + (2 * mean * total_sd) ** 2 + ((second - 2 * mean**2) * count_sd) ** 2) / size
    lower, upper = _variance_interval((total, total_half), (squares, squares_half), (count, count_half), radius)
    if ddof == 1:  # N/(N - 1) at the noisy count; the sample variance of values in the bounds is at most 2 r^2
        most, factor = 2 * radius**2, _sample_factor(count)
        value, spread = builtins.min(value * factor, most), builtins.min(spread * factor, most)
        lower = builtins.min(lower * _sample_factor(count + count_half), most)
        upper = builtins.min(upper * _sample_factor(count - count_half), most)
    details = {"mechanism": "noisy centred sum of squares, centred sum and count (thirds of the budget), exact "
               "discrete noise", "sensitivity": {"centred_squares": radius**2, "centred_sum": radius, "count": 1},
               "ddof": ddof, "bounds": [low, high], "secure": data.secure,
               "intervals": "the range of Q/N - (S/N)^2 over the box of the three intervals (a union bound)"}
    guarantee = data.stated(sequential([PrivacyGuarantee(third, 0.0, "add-remove", "central")] * 3))
    return ScalarRelease("variance", value, spread, lower, upper, float(level), "variance", guarantee.epsilon,
                         data.details(**details), guarantee)


def _sample_factor(count: float) -> float:
    """:math:`N/(N - 1)`, the sample variance's factor (unbounded where :math:`N \\le 1`)."""
    return count / (count - 1) if count > 1 else math.inf


def _variance_interval(total: tuple[float, float], squares: tuple[float, float], count: tuple[float, float],
                       radius: float) -> tuple[float, float]:
    """The range of :math:`Q/N - (S/N)^2` over :math:`S, Q, N` within their ``(value, half width)`` intervals, within
    :math:`[0, r^2]` (all of it where :math:`N` may be below 1).  For fixed :math:`N` it falls with :math:`|S|` and
    rises with :math:`Q`; in :math:`N` it is extreme at the interval's ends or at :math:`N = 2S^2/Q`."""
    least, most = count[0] - count[1], count[0] + count[1]
    if least < 1:
        return 0.0, radius**2
    sums = (total[0] - total[1], total[0] + total[1])
    far = builtins.max(abs(sums[0]), abs(sums[1]))
    near = 0.0 if sums[0] <= 0 <= sums[1] else builtins.min(abs(sums[0]), abs(sums[1]))

    def extreme(q: float, s: float, pick) -> float:
        sizes = [least, most] + ([2 * s * s / q] if q > 0 and least < 2 * s * s / q < most else [])
        return pick(q / n - (s / n) ** 2 for n in sizes)

    lower = extreme(builtins.max(squares[0] - squares[1], 0.0), far, builtins.min)
    upper = extreme(squares[0] + squares[1], near, builtins.max)
    return float(np.clip(lower, 0.0, radius**2)), float(np.clip(upper, 0.0, radius**2))


def _checked(owner, x, epsilon, bounds, rng, secure, missing, privacy_id, max_contributions) -> CentralInput:
    return check_central_input(f"central.{owner}", x, epsilon=epsilon, bounds=bounds, rng=rng, secure=secure,
                               missing=missing, neighbouring="add-remove", privacy_id=privacy_id,
                               max_contributions=max_contributions)


def _noisy_sum(values: np.ndarray, sensitivity: float, epsilon: float, alpha: float,
               rng: np.random.Generator) -> tuple[float, float, float, float]:
    """``(noisy sum, Laplace scale, standard deviation, half width)``: the sum of ``values`` on the grid of ``sensitivity`` plus exact
    discrete Laplace noise at ``epsilon``; the half width covers the unrounded sum with probability ``1 - alpha``."""
    if sensitivity == 0.0:  # bounds (0, 0): every clipped value is 0, the sum is public
        return 0.0, 0.0, 0.0, 0.0
    step = secure_grid_step(sensitivity)
    integer_sensitivity = math.ceil(sensitivity / step) + 1  # one grid step of rounding
    noise = int(discrete_laplace(1, integer_sensitivity, epsilon, rng)[0])
    total = (float(np.round(np.sum(values) / step)) + noise) * step
    t, s = _sampler_scale(_dyadic_epsilon(epsilon) ** -1 * integer_sensitivity)
    rho = math.exp(-s / t)
    spread = math.sqrt(2 * rho) / (1 - rho) * step  # the discrete Laplace law's standard deviation
    return total, (t / s) * step, spread, (_half_width(rho, alpha) + 0.5) * step


def _mean_interval(centred: float, sum_half: float, count: float, count_half: float, middle: float,
                   bounds: tuple[float, float]) -> tuple[float, float]:
    """The range of ``middle + S/N`` over ``S`` in ``centred +- sum_half`` and ``N`` in ``count +- count_half``,
    within ``bounds`` (all of them where ``N`` may be 0 or less)."""
    least = count - count_half
    if least < 1:
        return bounds
    corners = [(centred + sign * sum_half) / n for sign in (-1, 1) for n in (least, count + count_half)]
    return (builtins.max(bounds[0], middle + builtins.min(corners)), builtins.min(bounds[1], middle + builtins.max(corners)))
