r"""The beta-binomial mixture confidence sequence of a bounded mean, from the count and the sum only.

Observations :math:`Y_1, Y_2, \dots \in [0, 1]`, independent with mean :math:`\theta`
(a privatized report's statistic rescaled from its known range).  For any
:math:`p \in (0, 1)`, convexity of :math:`y \mapsto e^{\lambda y}` on :math:`[0, 1]`
(Hoeffding 1963, the argument behind the "sub-Bernoulli" condition of Howard,
Ramdas, McAuliffe & Sekhon, *Ann. Statist.* 49(2), 2021, Fact 1(a) / sec. 2)
gives

.. math::

    \mathbb E\Big[\big(\tfrac{p}{\theta}\big)^{Y} \big(\tfrac{1-p}{1-\theta}\big)^{1-Y}\Big]
    \le \tfrac{1-p}{1-\theta}\Big[(1-\theta) + \theta\,\tfrac{p(1-\theta)}{\theta(1-p)}\Big] = 1,

with equality when :math:`Y` is binary.  The product over :math:`i \le n` is a
nonnegative supermartingale under :math:`\theta`, and so is its mixture over
:math:`p \sim \mathrm{Beta}(\kappa\theta, \kappa(1-\theta))` (Fubini); with
:math:`S_n = \sum_{i \le n} Y_i`,

.. math::

    M_n(\theta) = \frac{B(\kappa\theta + S_n,\ \kappa(1-\theta) + n - S_n)}{B(\kappa\theta,\ \kappa(1-\theta))}
                  \,\theta^{-S_n} (1-\theta)^{-(n - S_n)}.

Ville's inequality gives :math:`\Pr[\exists n: M_n(\theta) \ge 1/\alpha] \le \alpha`,
so :math:`C_n = \{\theta: M_n(\theta) < 1/\alpha\}` contains :math:`\theta` at
every :math:`n` at once with probability at least :math:`1 - \alpha`: a
confidence sequence, valid under continuous monitoring and at any data-dependent
stopping time.  It depends on :math:`(n, S_n)` only, which is all a campaign keeps
(its aggregate is a sum of reports).  This is the beta-binomial conjugate mixture
of Howard et al. (2021, sec. 3, the mixture for sub-Bernoulli processes with range
parameters :math:`g = \theta`, :math:`h = 1 - \theta`, intrinsic time
:math:`V_n = \theta(1-\theta)n`), written as in the authors' reference
implementation ``confseq`` (``BetaBinomialMixture``, ``bernoulli_confidence_interval``).

Tuning (the same reference): the mixture's precision is chosen so that the
boundary is tightest at a planned sample size :math:`n^*` (``target_n``),
:math:`\kappa = \max\big(n^*/(2L + \log(1 + 2L)) - 1,\ 10^{-3}\big)` with
:math:`L = \log(1/\alpha)`: the two-sided normal mixture's optimal
:math:`\rho` (Howard et al. 2021, sec. 3.5) minus the prior's own unit.  It is a
constant fixed before any report (never tuned on the data, which would void
the guarantee); the width is within a few per cent of its best over a wide range
of :math:`n` around :math:`n^*`.

For binary :math:`Y` (a report supports an item or not) the supermartingale is a
martingale and the sequence loses nothing to the bound; for :math:`Y` with more
values in :math:`[0, 1]` it is the worst case of its range (as Hoeffding's bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln, logsumexp

__all__ = [
    "DEFAULT_TARGET_N", "BoundedMeans", "bisect_end", "mixture_interval", "mixture_precision", "normal_grid", "projected_n",
]

#: Planned sample size the boundary is tuned for when a caller gives none.
DEFAULT_TARGET_N = 10_000

_SECANT_STEPS = 16  # regula falsi steps (Illinois) from the bracket: ends within 1e-12 on a grid of (S, n, alpha)
#: bracketing tries: log-distances to the bound below the centre's (a factor e^-1/2 ... e^-128 of it)
_DROPS = (0.5, 2.0, 8.0, 32.0, 128.0)
_BISECTION_STEPS = 2  # then halve the bracket, whatever regula falsi left
_TINY = 1e-300


def mixture_precision(alpha, target_n: float) -> np.ndarray:
    """The prior's precision :math:`\\kappa` tuned for ``target_n`` at level ``1 - alpha`` (module docstring)."""
    log_inverse = np.log(1.0 / np.asarray(alpha, dtype=np.float64))
    return np.maximum(target_n / (2.0 * log_inverse + np.log1p(2.0 * log_inverse)) - 1.0, 1e-3)


def _log_mixture(theta, successes, n, kappa, shared=None) -> np.ndarray:
    """:math:`\\log M_n(\\theta)` (module docstring), elementwise.

    With :math:`a = \\kappa\\theta`, :math:`b = \\kappa(1-\\theta)`, :math:`a + b = \\kappa`, so the
    two beta functions share :math:`\\Gamma(\\kappa + n)` and :math:`\\Gamma(\\kappa)`: ``shared``, their logs
    (:func:`_shared_terms`) if computed already (a search evaluates many :math:`\\theta` at one
    :math:`\\kappa, n`).
    """
    theta = np.clip(theta, _TINY, 1.0 - 1e-16)
    a, b = kappa * theta, kappa * (1.0 - theta)
    failures = n - successes
    log_gamma_kappa, log_gamma_kappa_n = _shared_terms(n, kappa) if shared is None else shared
    return (
        gammaln(a + successes) - gammaln(a) + gammaln(b + failures) - gammaln(b)
        + log_gamma_kappa - log_gamma_kappa_n
        - successes * np.log(theta)
        - failures * np.log1p(-theta)
    )


def _shared_terms(n, kappa) -> tuple[np.ndarray, np.ndarray]:
    """:math:`\\log\\Gamma(\\kappa)` and :math:`\\log\\Gamma(\\kappa + n)`: the terms of :func:`_log_mixture` free of
    :math:`\\theta`."""
    return gammaln(kappa), gammaln(kappa + n)


def mixture_interval(successes: ArrayLike, n: ArrayLike, alpha: ArrayLike, *, target_n: float = DEFAULT_TARGET_N) -> tuple[np.ndarray, np.ndarray]:
    """The confidence sequence's interval for :math:`\\theta` after ``n`` observations summing to ``successes``.

    Parameters
    ----------
    successes : array_like of float
        :math:`S_n = \\sum Y_i` with every :math:`Y_i \\in [0, 1]` (need not be an integer).
    n : int or array_like
        Observations so far (broadcast against ``successes``).
    alpha : float or array_like
        Error level: the true :math:`\\theta` leaves the interval at some ``n``
        with probability at most ``alpha``.
    target_n : float
        Sample size the boundary is tuned for (fixed in advance).

    Returns
    -------
    (low, high) : arrays
        :math:`\\{\\theta: M_n(\\theta) < 1/\\alpha\\}`; ``[0, 1]`` where ``n == 0``.
        The estimate :math:`S_n/n` always lies inside (it maximizes the likelihood,
        so :math:`M_n \\le 1` there); each end is found by bisection between it and
        the bound of :math:`[0, 1]`.
    """
    sums, counts, alphas = np.broadcast_arrays(
        np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64), np.asarray(alpha, dtype=np.float64)
    )
    kappa = mixture_precision(alphas, target_n)
    threshold = np.log(1.0 / alphas)
    empty = counts <= 0
    safe_n = np.where(empty, 1.0, counts)
    sums = np.clip(sums, 0.0, safe_n)
    center = sums / safe_n
    # both ends in one bisection: the lower between 0 and the centre, the upper between it and 1
    twice = [np.concatenate([values.ravel(), values.ravel()]) for values in (sums, safe_n, kappa, threshold, center)]
    toward = np.concatenate([np.zeros(center.size), np.ones(center.size)])
    ends = _crossing(twice[0], twice[1], twice[2], twice[3], twice[4], toward).reshape((2,) + center.shape)
    return np.where(empty, 0.0, ends[0]), np.where(empty, 1.0, ends[1])


def _crossing(successes, n, kappa, threshold, center, toward) -> np.ndarray:
    """The end of :math:`C_n` between ``center`` (inside) and ``toward`` (0 or 1).

    The search runs on :math:`x = \\log|\\theta - \\text{toward}|`, in which
    :math:`\\log M_n` is nearly linear close to the bound (it behaves like
    :math:`-S_n\\log\\theta` there): the end is bracketed between the centre and
    points :math:`e^{-1/2}, e^{-2}, e^{-8}, \\dots` of the way to the bound, then found
    by the Illinois variant of regula falsi (vectorized, superlinear) and a few
    bisections.  Where :math:`\\log M_n` stays below the threshold all the way, the
    bound itself is the end; otherwise the returned end is the outer point of the
    last bracket, so the interval is never cut short by the search.
    """
    shared = _shared_terms(n, kappa)  # once for the ~25 evaluations below

    upward = toward > 0

    def excess(x):
        power = np.exp(x)
        theta = np.where(upward, 1.0 - power, power)
        return _log_mixture(theta, successes, n, kappa, shared) - threshold

    distance = np.abs(center - toward)
    floor = math.log(_TINY)
    start = np.log(np.maximum(distance, _TINY))
    inner = start
    g_inner = excess(inner)
    outer = np.full_like(inner, floor)
    g_outer = excess(outer)
    outside = (g_outer >= 0) & (distance > _TINY)
    found = ~outside
    for drop in _DROPS:  # bracket: the first of these points outside the set
        guess = np.maximum(start - drop, floor)
        g_guess = excess(guess)
        beyond = ~found & (g_guess >= 0)
        still = ~found & (g_guess < 0)
        outer, g_outer = np.where(beyond, guess, outer), np.where(beyond, g_guess, g_outer)
        inner, g_inner = np.where(still, guess, inner), np.where(still, g_guess, g_inner)
        found |= beyond
    side = np.zeros(inner.shape, dtype=np.int8)  # which end moved last (Illinois: halve the one kept twice)
    for _ in range(_SECANT_STEPS):
        gap = g_outer - g_inner  # > 0 on a bracket
        secant = outside & (gap > 0)  # elsewhere there is no crossing to find (the result is the bound)
        middle = np.where(secant, outer - g_outer * (outer - inner) / np.where(secant, gap, 1.0), 0.5 * (inner + outer))
        value = excess(middle)
        above = value >= 0
        g_inner = np.where(above & (side == 1), 0.5 * g_inner, g_inner)
        g_outer = np.where(~above & (side == -1), 0.5 * g_outer, g_outer)
        outer, g_outer = np.where(above, middle, outer), np.where(above, value, g_outer)
        inner, g_inner = np.where(above, inner, middle), np.where(above, g_inner, value)
        side = np.where(above, 1, -1).astype(np.int8)
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (inner + outer)
        above = excess(middle) >= 0
        outer = np.where(above, middle, outer)
        inner = np.where(above, inner, middle)
    end = np.where(upward, 1.0 - np.exp(outer), np.exp(outer))
    return np.where(outside, end, toward)


def projected_n(width_at, target_width: float, n_now: float, *, limit: float = 1e10) -> float | None:
    """Smallest ``n`` at which ``width_at(n)`` falls to ``target_width`` (``None`` if beyond ``limit``).

    ``width_at(n)`` is the width the sequence would have after ``n`` reports whose
    mean stays where it is now (a projection for planning, not a guarantee); it is
    non-increasing in ``n`` for the mixture above, so a bisection on
    :math:`\\log n` finds the first ``n`` below the target.
    """
    if width_at(n_now) <= target_width:
        return float(n_now)
    if width_at(limit) > target_width:
        return None
    low, high = math.log(max(n_now, 1.0)), math.log(limit)
    for _ in range(60):
        middle = 0.5 * (low + high)
        if width_at(math.exp(middle)) <= target_width:
            high = middle
        else:
            low = middle
    return float(math.ceil(math.exp(high)))


@dataclass(frozen=True)
class BoundedMeans:
    r"""Quantities :math:`v_j = \text{offset}_j + \text{scale}_j\,\theta_j`, each :math:`\theta_j` the mean of a [0, 1] statistic.

    ``successes[j]`` is :math:`S_n` of coordinate :math:`j` after ``n`` reports, ``alpha[j]``
    its share of the error level (``alpha / k`` for a Bonferroni union over ``k``
    coordinates: all hold at every ``n`` at once with probability ``1 - alpha``).
    """

    successes: np.ndarray
    n: float
    alpha: np.ndarray
    offset: np.ndarray
    scale: np.ndarray
    target_n: float

    def interval(self, n: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` of every :math:`v_j` now, or projected to ``n`` reports with the same means."""
        successes = self.successes if n is None else self.successes * (n / max(self.n, 1.0))
        low, high = mixture_interval(successes, self.n if n is None else n, self.alpha, target_n=self.target_n)
        return self.offset + self.scale * low, self.offset + self.scale * high

    def widths(self, n: float | None = None) -> np.ndarray:
        low, high = self.interval(n)
        return high - low


def bisect_end(excess, center: np.ndarray, toward: np.ndarray, steps: int = 42) -> np.ndarray:
    """The end of ``{x: excess(x) < 0}`` between ``center`` (inside) and ``toward``, by bisection.

    ``excess(x)`` is a log-mixture minus its threshold, elementwise.  Where it stays
    below zero all the way, ``toward`` itself is the end; otherwise the outer point
    of the last bracket, so the interval is never cut short by the search.
    """
    outside = excess(toward) >= 0
    inner, outer = center.copy(), toward.copy()
    for _ in range(steps):
        middle = 0.5 * (inner + outer)
        above = excess(middle) >= 0
        outer = np.where(above, middle, outer)
        inner = np.where(above, inner, middle)
    return np.where(outside, outer, toward)


_Z = np.linspace(-6.0, 6.0, 97)
_LOG_WEIGHTS = -0.5 * _Z**2 - logsumexp(-0.5 * _Z**2)


def normal_grid(variance, alpha, target_n: float) -> tuple[np.ndarray, np.ndarray]:
    r"""A discrete normal mixture over :math:`\lambda`: points ``(k, 97)`` and their log-weights ``(97,)``.

    :math:`\lambda_i = \sigma z_i`, :math:`z_i` 97 points of :math:`[-6, 6]`, weights proportional
    to the standard normal density and summing to one, so a mixture of martingales
    over them is a martingale exactly; :math:`\sigma^2 = (2L + \log(1 + 2L))/(V n^*)`,
    the two-sided normal mixture's precision tuned for ``target_n`` (Howard et al. 2021,
    sec. 3.5; :func:`mixture_precision`), with ``variance`` :math:`V` of one increment.
    """
    log_inverse = np.log(1.0 / np.asarray(alpha, dtype=np.float64))
    variance = np.atleast_1d(np.asarray(variance, dtype=np.float64))
    scale = np.sqrt((2 * log_inverse + np.log1p(2 * log_inverse)) / (variance * target_n))
    return np.atleast_1d(scale)[:, None] * _Z[None, :], _LOG_WEIGHTS
