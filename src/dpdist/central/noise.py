r"""Noise for the central-DP releases: exact discrete Laplace and Gaussian on a public grid.

**Every release is safe against the floating-point attack of Mironov (2012).**
Adding floating-point Laplace or Gaussian noise to a float query value leaks
the data: the set of doubles ``f(D) + noise`` can take depends on ``f(D)``, so
an attacker who replays the sampler can tell neighbouring data sets apart from
the low-order bits.  dpdist therefore never releases a sampled float.  In every
mode a query value is first rounded to a public grid of power-of-two step
:math:`\gamma` (:func:`secure_grid_step`, :math:`\gamma \le \Delta\,2^{-16}`,
a function of the public sensitivity only, never of the data), and *integer*
noise drawn exactly from its distribution is added to the grid index:

* **Laplace** (pure :math:`\varepsilon`-DP): the exact discrete Laplace
  sampler of Canonne, Kamath and Steinke (2020, Alg. 1-2), vectorized, using
  integer arithmetic only.  Rounding can move a query by half a grid step, so
  the integer l1 sensitivity is :math:`\lceil\Delta_1/\gamma\rceil` plus one
  step per coordinate; :math:`\varepsilon` is rounded *down* to a dyadic
  rational (a :math:`2^{-20}` step above :math:`2^{-10}`, 10 significant bits
  below, :func:`_dyadic_epsilon`) so that the sampler works on exact integers.
* **Gaussian** (:math:`(\varepsilon, \delta)`-DP): the exact discrete Gaussian
  sampler of Canonne et al. (2020, Alg. 3) with a rational variance.  The
  multivariate discrete Gaussian with l2 integer sensitivity :math:`\Delta_Z`
  is :math:`\rho`-zCDP with :math:`\rho = \Delta_Z^2/(2\sigma_Z^2)` (their
  Thm. 14, the same as the continuous Gaussian) and :math:`\rho`-zCDP implies
  :math:`(\varepsilon, \delta)`-DP for the :math:`\delta` of their Cor. 13, so
  :math:`\sigma` is calibrated by :func:`zcdp_gaussian_sigma`; rounding slack:
  :math:`\Delta_Z = \Delta_2/\gamma + \sqrt d`.

The released numbers are integers times :math:`\gamma`, which doubles
represent exactly; everything computed from them afterwards (CDFs, quantiles,
``details``) is post-processing and carries no bit of the sampler.

Randomness comes from the generator resolved by :func:`dpdist._rng.check_rng`:
the CSPRNG (AES-CTR keyed from the OS) when ``rng`` is ``None``, the default;
a seed gives a reproducible stream that is **not secret** and so not for
publishing data about people (``secure=True`` refuses a seed outright).  The
noise law is the same in both cases.

References
----------
.. [1] B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential
   Privacy: Analytical Calibration and Optimal Denoising", ICML 2018 (Thm. 8,
   Alg. 1).
.. [2] C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for
   Differential Privacy", NeurIPS 2020 (Alg. 1 Bernoulli(exp(-gamma)), Alg. 2
   discrete Laplace, Alg. 3 discrete Gaussian, Thm. 14, Cor. 13).
.. [3] I. Mironov, "On Significance of the Least Significant Bits for
   Differential Privacy", CCS 2012.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Iterable

import numpy as np

from .._types import ArrayLike
from ..errors import InvalidPrivacyParameterError

__all__ = [
    "analytic_gaussian_sigma",
    "gaussian_delta",
    "zcdp_delta",
    "zcdp_gaussian_sigma",
    "laplace_mechanism",
    "gaussian_mechanism",
    "discrete_laplace",
    "discrete_gaussian",
    "report_noisy_max",
    "above_threshold",
    "secure_grid_step",
]

# epsilon is rounded down to a multiple of 2**-EPSILON_BITS for the exact samplers, or, below
# 2**-(EPSILON_BITS - EPSILON_SIGNIFICANT_BITS), to EPSILON_SIGNIFICANT_BITS significant bits
EPSILON_BITS = 20
EPSILON_SIGNIFICANT_BITS = 10
# the discrete Laplace sampler's scale t/s is rounded up to keep t below 2**SCALE_BITS (int64 arithmetic)
SCALE_BITS = 52
# the grid step is the largest power of two <= sensitivity / 2**GRID_BITS
GRID_BITS = 16
# the discrete Gaussian's variance (in grid units) is rounded up to a multiple of 2**-VARIANCE_BITS
VARIANCE_BITS = 20
#: the exact samplers draw the integers of a step one scalar call each for fewer entries than this (NumPy draws an
#: array's entries one after the other, as scalar calls do; an array call costs about four scalar ones)
_FEW = 4
#: below this many entries the exact samplers run on Python lists (:func:`_discrete_laplace_few`): the same draws in
#: the same order, without a NumPy call per step on a handful of entries
FEW_ENTRIES = 64


# ---------------------------------------------------------------- analytic Gaussian
def _log_gaussian_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    r"""``log`` of the smallest delta of the Gaussian mechanism (Balle & Wang 2018, Thm. 8), in double precision.

    .. math::
        \delta(\sigma) = \Phi\Big(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)
        - e^{\varepsilon}\,\Phi\Big(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)

    Evaluated in log space (``log_ndtr``).  The difference cancels when
    :math:`\varepsilon` is tiny and the target delta far below the two terms
    (both near 1/2): :func:`analytic_gaussian_sigma` therefore re-checks its
    answer at a precision chosen from the target (:func:`_log_gaussian_delta_exact`).
    """
    from scipy import special  # lazy: loads scipy.special (0.6-0.9 CPU-s), which only the Gaussian's calibration needs

    ratio = sensitivity / sigma
    a = ratio / 2 - epsilon / ratio
    b = ratio / 2 + epsilon / ratio
    log_first = special.log_ndtr(a)
    log_ratio = epsilon + special.log_ndtr(-b) - log_first  # < 0 since delta(sigma) > 0
    return float(log_first + np.log(-np.expm1(min(log_ratio, -1e-300))))


def _log_gaussian_delta_exact(sigma: float, epsilon: float, sensitivity: float, log_delta: float):
    """The same ``log delta(sigma)`` with mpmath, at enough digits that the cancellation costs nothing.

    The two terms are at most ~1 and their difference is compared with ``delta``:
    ``25 + log10(1/delta)`` significant digits leave 25 digits of ``delta`` after cancellation.
    Returns an ``mpmath.mpf`` (``-inf`` when the difference is not positive).
    """
    import mpmath  # lazy: mpmath loads only for the exact high-precision checks

    digits = 25 + math.ceil(max(0.0, -log_delta / math.log(10)))
    with mpmath.workdps(digits):
        sigma_, epsilon_, delta_ = mpmath.mpf(sigma), mpmath.mpf(epsilon), mpmath.mpf(sensitivity)
        a = delta_ / (2 * sigma_) - epsilon_ * sigma_ / delta_
        b = delta_ / (2 * sigma_) + epsilon_ * sigma_ / delta_
        difference = mpmath.ncdf(a) - mpmath.exp(epsilon_) * mpmath.ncdf(-b)
        return mpmath.log(difference) if difference > 0 else mpmath.mpf("-inf")


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    """The exact delta of the Gaussian mechanism with noise ``sigma`` (Balle & Wang 2018, Thm. 8)."""
    return math.exp(_log_gaussian_delta(sigma, epsilon, sensitivity))


def analytic_gaussian_sigma(
    epsilon: float, delta: float, sensitivity: float, *, relative_tolerance: float = 1e-12
) -> float:
    r"""Smallest Gaussian noise scale that gives ``(epsilon, delta)``-DP (analytic Gaussian mechanism).

    Bisection on :math:`\log\sigma` for the root of the exact condition
    :math:`\delta(\sigma) = \delta` of Balle & Wang (2018, Thm. 8; their Alg. 1
    solves the same equation in a reparametrization).  :math:`\delta(\sigma)`
    decreases in :math:`\sigma`; the bisection stops when the bracket is
    narrower than ``relative_tolerance`` *relative to sigma* and returns its
    upper end.  Double precision cannot resolve :math:`\delta(\sigma)` when
    :math:`\varepsilon` is tiny and the target far below 1e-16 (the two terms
    of Thm. 8 are then both near 1/2), so the answer is re-checked with
    mpmath at ``25 + log10(1/delta)`` digits and raised (by the same relative
    step, doubling) until the exact condition holds: the result never
    under-noises, whatever the inputs.

    Parameters
    ----------
    epsilon, delta : float
        Privacy budget, ``epsilon > 0`` and ``0 < delta < 1``.
    sensitivity : float
        l2 sensitivity of the released vector (> 0).

    Returns
    -------
    float
        ``sigma`` with ``delta(sigma) <= delta`` for the exact ``delta(sigma)`` of Thm. 8.
    """
    log_delta = math.log(delta)
    low = high = sensitivity
    while _log_gaussian_delta(high, epsilon, sensitivity) > log_delta:
        high *= 2.0
    while _log_gaussian_delta(low, epsilon, sensitivity) <= log_delta:
        low /= 2.0
    # invariant: delta(low) > delta >= delta(high)
    while high - low > relative_tolerance * high:
        middle = math.sqrt(low * high)
        if _log_gaussian_delta(middle, epsilon, sensitivity) > log_delta:
            low = middle
        else:
            high = middle
    step = relative_tolerance
    while _log_gaussian_delta_exact(high, epsilon, sensitivity, log_delta) > log_delta:
        high *= 1.0 + step
        step *= 2.0
    return high


# ---------------------------------------------------------------- zCDP calibration of the discrete Gaussian
def zcdp_delta(rho: float, epsilon: float) -> float:
    r"""``delta`` such that :math:`\rho`-zCDP implies :math:`(\varepsilon,\delta)`-DP (Canonne et al. 2020, Cor. 13).

    .. math::
        \delta = \inf_{\alpha > 1} \frac{e^{(\alpha-1)(\alpha\rho-\varepsilon)}}{\alpha-1}
        \Big(1-\frac1\alpha\Big)^{\alpha}

    Every :math:`\alpha` gives a valid bound, so a numerical minimizer that
    misses the exact infimum only overstates ``delta``.  Evaluated in log space.
    """
    return math.exp(_log_zcdp_delta(rho, epsilon))


def _log_zcdp_delta(rho: float, epsilon: float) -> float:
    def log_bound(log_alpha_minus_one: float) -> float:
        alpha = 1.0 + math.exp(log_alpha_minus_one)
        return (alpha - 1) * (alpha * rho - epsilon) - math.log(alpha - 1) + alpha * math.log1p(-1.0 / alpha)

    from scipy import optimize  # lazy: loads scipy.optimize (1.2-2.9 CPU-s), which only the Gaussian's calibration needs

    # the unconstrained optimum of the leading terms is alpha = (epsilon + rho) / (2 rho)
    guess = math.log(max((epsilon + rho) / (2 * rho) - 1.0, 1e-12))
    result = optimize.minimize_scalar(log_bound, bracket=(guess - 1.0, guess + 1.0))
    return min(0.0, float(result.fun), log_bound(guess))


@functools.lru_cache(maxsize=256)
def _zcdp_rho(epsilon: float, delta: float, relative_tolerance: float) -> float:
    """The largest :math:`\\rho` (the bisection's lower end) whose zCDP bound meets ``delta`` at ``epsilon``: the same
    for every sensitivity, and kept (a release's repeated noise calibrates it again: 36 minimizations each)."""
    log_delta = math.log(delta)
    low, high = 0.0, max(epsilon, 1.0)
    while _log_zcdp_delta(high, epsilon) <= log_delta:
        high *= 2.0
    # invariant: delta(low) <= delta < delta(high)  (delta(0) = 0)
    while high - low > relative_tolerance * high:
        middle = 0.5 * (low + high)
        if _log_zcdp_delta(middle, epsilon) <= log_delta:
            low = middle
        else:
            high = middle
    return low


def zcdp_gaussian_sigma(epsilon: float, delta: float, sensitivity: float, *, relative_tolerance: float = 1e-9) -> float:
    r"""Smallest :math:`\sigma` whose (discrete or continuous) Gaussian noise is :math:`(\varepsilon,\delta)`-DP via zCDP.

    Adding :math:`\mathcal N_\mathbb{Z}(0,\sigma^2)` per coordinate to an integer
    vector of l2 sensitivity :math:`\Delta` is :math:`\Delta^2/(2\sigma^2)`-zCDP
    (Canonne et al. 2020, Thm. 14); :func:`zcdp_delta` converts.  Bisection on
    :math:`\rho` returning the lower end (smaller :math:`\rho`, more noise).
    """
    low = _zcdp_rho(float(epsilon), float(delta), float(relative_tolerance))  # floats: the same numbers, hashable
    if low <= 0.0:
        raise InvalidPrivacyParameterError(
            f"No Gaussian noise reaches epsilon={epsilon!r}, delta={delta!r} through zCDP; raise epsilon or delta."
        )
    return sensitivity / math.sqrt(2.0 * low)


# ---------------------------------------------------------------- exact discrete samplers
def _uniform_below(bound: int, rng: np.random.Generator) -> int:
    """A uniform integer in ``[0, bound)`` for any positive Python int (rejection on 64-bit words)."""
    if bound <= 2**62:
        return int(rng.integers(0, bound))
    words = -(-bound.bit_length() // 64)
    excess = 64 * words - bound.bit_length()
    while True:
        value = 0
        for word in rng.integers(0, 2**64, size=words, dtype=np.uint64):
            value = (value << 64) | int(word)
        value >>= excess
        if value < bound:
            return value


def _bernoulli_exp_minus(gamma: Fraction, rng: np.random.Generator) -> bool:
    r"""Exact Bernoulli(:math:`e^{-\gamma}`) for rational :math:`\gamma \ge 0` (Canonne et al. 2020, Alg. 1)."""
    while gamma > 1:
        if not _bernoulli_exp_minus(Fraction(1), rng):
            return False
        gamma -= 1
    numerator, denominator = gamma.numerator, gamma.denominator
    k = 1
    while True:  # Bernoulli(gamma / k) in lowest terms, as a Fraction would reduce it (the same bound to draw below)
        common = math.gcd(numerator, denominator * k)
        if _uniform_below(denominator * k // common, rng) >= numerator // common:
            return k % 2 == 1
        k += 1


def _bernoulli_exp_minus_fractions(numerators: np.ndarray, denominator: int, rng: np.random.Generator) -> np.ndarray:
    r"""Vectorized exact Bernoulli(:math:`e^{-u/t}`) for integers :math:`0 \le u \le t` (Alg. 1 of [2], :math:`\gamma \le 1`).

    Alg. 1 draws Bernoulli(:math:`\gamma/k`) for k = 1, 2, ... until one fails and
    returns whether the number of draws is odd; here every entry runs the same
    loop on integer thresholds (``integers(0, t k) < u``).  The entries still drawing all share one ``k``
    (each step advances every success together), so each step is one draw of ``active.size`` integers below
    the scalar ``t k``: the same numbers as per-entry bounds, from the faster scalar path.  Once fewer than
    :data:`_FEW` entries draw, each step draws theirs one scalar call each, in the same order: the same numbers.
    """
    odd = np.ones(numerators.size, dtype=bool)  # k = 1 for all
    active = np.arange(numerators.size)
    k = 1
    while active.size >= _FEW:
        if denominator * k == 1:  # integers(0, 1) is 0 and draws no bits (Bernoulli(1/e)'s first step)
            success = numerators[active] > 0
        else:
            success = rng.integers(0, denominator * k, size=active.size) < numerators[active]
        active = active[success]
        k += 1
        odd[active] = k % 2 == 1
    few = list(zip(active.tolist(), numerators[active].tolist()))
    while few:
        bound, drawing, few = denominator * k, few, []
        for entry, numerator in drawing:
            if (numerator > 0) if bound == 1 else rng.integers(0, bound) < numerator:
                few.append((entry, numerator))
            else:
                odd[entry] = k % 2 == 1
        k += 1
    return odd


def _below(bound: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``rng.integers(0, bound, size=count)``, the same numbers; under :data:`_FEW` of them one scalar call each."""
    if count >= _FEW:
        return rng.integers(0, bound, size=count)
    return np.array([rng.integers(0, bound) for _ in range(count)], dtype=np.int64)


def _inverse_e(count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` exact Bernoulli(1/e): :func:`_bernoulli_exp_minus_fractions` of numerators 1 over 1, the same draws
    (its first step succeeds without one; step ``k`` then succeeds when ``integers(0, k)`` is 0)."""
    odd = np.zeros(count, dtype=bool)  # the failures at k = 2
    active, k = np.arange(count), 2
    while active.size >= _FEW:
        active = active[rng.integers(0, k, size=active.size) == 0]
        k += 1
        odd[active] = k % 2 == 1
    few = active.tolist()
    while few:
        drawing, few = few, []
        for entry in drawing:
            if rng.integers(0, k) == 0:
                few.append(entry)
            else:
                odd[entry] = k % 2 == 1
        k += 1
    return odd


def _count_exp_minus_one_successes(size: int, rng: np.random.Generator) -> np.ndarray:
    """Per entry, how many Bernoulli(1/e) draws succeed before the first failure (geometric, exact)."""
    count = np.zeros(size, dtype=np.int64)
    active = np.arange(size)
    while active.size:
        active = active[_inverse_e(active.size, rng)]
        count[active] += 1
    return count


def _discrete_laplace_scaled(size: int, t: int, s: int, rng: np.random.Generator) -> np.ndarray:
    r"""``size`` exact draws of :math:`P(x) \propto e^{-|x| s/t}` on the integers (Alg. 2 of [2], vectorized).

    Each round draws, for every pending entry, :math:`U` uniform on ``[0, t)``,
    accepts it with probability :math:`e^{-U/t}`, adds ``t`` times a geometric
    count of Bernoulli(1/e) successes, divides by ``s`` and attaches a random
    sign, rejecting "-0"; rejected entries are redrawn.  Integer arithmetic
    only (``t <= 2**SCALE_BITS`` by :func:`_sampler_scale`, so ``t * k`` stays below 2**63).  Fewer than
    :data:`FEW_ENTRIES` go through :func:`_discrete_laplace_few`: the same draws from ``rng`` in the same order.
    """
    if size < FEW_ENTRIES:
        return np.array(_discrete_laplace_few(size, t, s, rng), dtype=np.int64)
    return _discrete_laplace_arrays(size, t, s, rng)


def _discrete_laplace_arrays(size: int, t: int, s: int, rng: np.random.Generator) -> np.ndarray:
    """The rounds of :func:`_discrete_laplace_scaled` on arrays, every pending entry at once."""
    out = np.empty(size, dtype=np.int64)
    pending = np.arange(size)
    while pending.size:
        m = pending.size
        u = _below(t, m, rng)
        keep = _bernoulli_exp_minus_fractions(u, t, rng)
        magnitude = (u + t * _count_exp_minus_one_successes(m, rng)) // s
        negative = _below(2, m, rng).astype(bool)
        accept = keep & ~(negative & (magnitude == 0))
        out[pending[accept]] = np.where(negative, -magnitude, magnitude)[accept]
        pending = pending[~accept]
    return out


def _draws(bound: int, count: int, rng: np.random.Generator) -> list[int]:
    """:func:`_below` as a list."""
    if count >= _FEW:
        return rng.integers(0, bound, size=count).tolist()
    return [int(rng.integers(0, bound)) for _ in range(count)]


def _fractions_few(numerators: list[int], denominator: int, rng: np.random.Generator) -> list[bool]:
    """:func:`_bernoulli_exp_minus_fractions` on lists: the same steps, the same draws in the same calls."""
    odd = [True] * len(numerators)
    active, k = list(range(len(numerators))), 1
    while active:
        bound, failing, survivors = denominator * k, k % 2 == 1, []
        draws = [0] * len(active) if bound == 1 else _draws(bound, len(active), rng)  # integers(0, 1) draws no bits
        for entry, draw in zip(active, draws):
            if (numerators[entry] > 0) if bound == 1 else draw < numerators[entry]:
                survivors.append(entry)
            else:
                odd[entry] = failing
        active, k = survivors, k + 1
    return odd


def _inverse_e_few(count: int, rng: np.random.Generator) -> list[bool]:
    """:func:`_inverse_e` on lists: the same steps, the same draws in the same calls."""
    odd = [False] * count
    active, k = list(range(count)), 2
    while active:
        failing, survivors = k % 2 == 1, []
        for entry, draw in zip(active, _draws(k, len(active), rng)):
            if draw == 0:
                survivors.append(entry)
            else:
                odd[entry] = failing
        active, k = survivors, k + 1
    return odd


def _discrete_laplace_few(size: int, t: int, s: int, rng: np.random.Generator) -> list[int]:
    """:func:`_discrete_laplace_scaled` on lists (a few entries: NumPy's cost is per call, a list's per entry): the
    same rounds, the same draws from ``rng`` in the same calls, so the same numbers and the same generator state."""
    out, pending = [0] * size, list(range(size))
    while pending:
        u = _draws(t, len(pending), rng)
        keep = _fractions_few(u, t, rng)
        counts, active = [0] * len(pending), list(range(len(pending)))  # Bernoulli(1/e) successes before a failure
        while active:
            active = [entry for entry, success in zip(active, _inverse_e_few(len(active), rng)) if success]
            for entry in active:
                counts[entry] += 1
        negative = _draws(2, len(pending), rng)
        rest = []
        for i, entry in enumerate(pending):
            magnitude = (u[i] + t * counts[i]) // s
            if keep[i] and not (negative[i] and magnitude == 0):
                out[entry] = -magnitude if negative[i] else magnitude
            else:
                rest.append(entry)
        pending = rest
    return out


def _dyadic_epsilon(epsilon: float) -> Fraction:
    """``epsilon`` rounded down to a dyadic rational (never rounds up: never under-noises).

    A multiple of ``2**-EPSILON_BITS`` (as it always was) for ``epsilon >= 2**-10``; below, the
    resolution follows ``epsilon`` down and keeps ``EPSILON_SIGNIFICANT_BITS`` significant bits
    (a relative loss below ``2**-10``, the loss at ``epsilon = 2**-10``).  Any finite positive
    step works, so a split budget (the tree's 5% profile, adaptive quantiles' rounds) never
    falls below the sampler's resolution.
    """
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InvalidPrivacyParameterError(
            f"The 'epsilon' of each noisy step must be a finite float > 0 for the exact noise samplers. "
            f"Got {epsilon!r} for one step instead."
        )
    exponent = max(EPSILON_BITS, EPSILON_BITS - EPSILON_SIGNIFICANT_BITS - (math.frexp(epsilon)[1] - 1))
    numerator = math.floor(math.ldexp(float(epsilon), exponent))  # exact: a power-of-two scaling
    return Fraction(numerator, 2**exponent)


def _sampler_scale(scale: Fraction) -> tuple[int, int]:
    """``(t, s)`` with ``t / s >= scale``: the integers of :func:`_discrete_laplace_scaled`.

    ``scale`` itself when its numerator is at most ``2**SCALE_BITS`` (always for a step of
    ``epsilon >= 2**-10``: the law is unchanged there); otherwise, for the large scales of tiny
    steps, it is rounded *up* (more noise, never less) to a multiple of ``2**-b`` with
    ``t = ceil(scale 2**b) <= 2**SCALE_BITS`` (``b >= 0`` while ``scale < 2**SCALE_BITS``), a
    relative change below ``2**-51``.  Keeps ``t * k`` and ``u + t * count`` within int64.
    """
    if scale.numerator <= 2**SCALE_BITS and scale.denominator <= 2**62:
        return scale.numerator, scale.denominator
    bits = max(0, SCALE_BITS - math.ceil(scale).bit_length())
    t = math.ceil(scale * 2**bits)
    if t > 2**56:  # public: sensitivity and epsilon only (a step of 1e-11 with a 2**18 sensitivity is 2**55)
        raise InvalidPrivacyParameterError(
            f"A noise scale of {float(scale):.3g} grid steps is beyond the exact sampler's int64 arithmetic "
            "(at most 2**56): a step's 'epsilon' is too small for its sensitivity; raise 'epsilon'."
        )
    return t, 2**bits


def discrete_laplace(size: int, integer_sensitivity: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    r"""``size`` exact draws of the discrete Laplace noise for an integer query with l1 sensitivity ``integer_sensitivity``.

    :math:`P(z) \propto \exp(-\varepsilon' |z| / \Delta)` with :math:`\varepsilon' \le \varepsilon`
    the dyadic rounding of ``epsilon`` (and the scale :math:`\Delta/\varepsilon'` rounded up,
    :func:`_sampler_scale`, when it is too large for int64 arithmetic); adding it to an integer
    vector whose l1 distance between neighbours is at most :math:`\Delta` is
    :math:`\varepsilon`-DP (geometric mechanism).
    """
    epsilon_exact = _dyadic_epsilon(epsilon)
    t, s = _sampler_scale(Fraction(int(integer_sensitivity)) / epsilon_exact)
    return _discrete_laplace_scaled(int(size), t, s, rng)


def discrete_gaussian(size: int, variance: Fraction, rng: np.random.Generator) -> np.ndarray:
    r"""``size`` exact draws of :math:`\mathcal N_\mathbb{Z}(0, \sigma^2)`, :math:`P(z)\propto e^{-z^2/(2\sigma^2)}`, for rational :math:`\sigma^2` (Alg. 3 of [2]).

    Proposal: discrete Laplace of scale :math:`t = \lfloor\sigma\rfloor + 1`;
    accept with probability :math:`\exp(-(|Y| - \sigma^2/t)^2/(2\sigma^2))`,
    evaluated exactly on rationals.  One Python loop per draw: meant for the
    few hundred coordinates of a moment vector.
    """
    variance = Fraction(variance)
    t = math.isqrt(variance.numerator // variance.denominator) + 1
    out = np.empty(int(size), dtype=np.int64)
    for index in range(out.size):
        while True:
            y = _discrete_laplace_few(1, t, 1, rng)[0]
            gamma = (abs(y) - variance / t) ** 2 / (2 * variance)
            if _bernoulli_exp_minus(gamma, rng):
                out[index] = y
                break
    return out


def secure_grid_step(sensitivity: float) -> float:
    """Power-of-two grid step ``gamma`` with ``sensitivity / gamma`` in ``[2**GRID_BITS, 2**(GRID_BITS+1))``."""
    return 2.0 ** math.floor(math.log2(sensitivity) - GRID_BITS)


def _on_grid(values: np.ndarray, step: float) -> np.ndarray:
    return np.round(values / step).astype(np.int64)


# ---------------------------------------------------------------- mechanisms
def laplace_mechanism(
    values: ArrayLike,
    l1_sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    *,
    integer_valued: bool = False,
    each_coordinate: bool = False,
) -> np.ndarray:
    r"""``values`` rounded to a public grid plus exact discrete Laplace noise (pure :math:`\varepsilon`-DP).

    The grid step is :func:`secure_grid_step` of the sensitivity and the
    integer l1 sensitivity :math:`\lceil\Delta_1/\gamma\rceil + d` (one rounding
    step per coordinate); the noise scale is :math:`\Delta_1/\varepsilon` up to
    that slack (:math:`\le 2^{-16}` relative plus :math:`d\gamma`).
    Queries declared ``integer_valued`` (counts, with an integer sensitivity)
    use step 1 and no rounding slack.  The declaration is a property of the
    query, never inferred from the data: a data-dependent choice of grid would
    itself leak.  The result is a multiple of the step, exactly representable.

    ``each_coordinate=True`` declares that ``l1_sensitivity`` bounds every coordinate on its
    own and each noisy coordinate is used as a separate query: the rounding slack is then one
    step, not one per coordinate.  (Not for AboveThreshold: there the threshold and the queries
    must share one grid and the query noise must cover twice the *rounded* sensitivity; see
    :func:`above_threshold`.)
    """
    values = np.asarray(values, dtype=np.float64)
    if integer_valued:
        step, integer_sensitivity = 1.0, int(l1_sensitivity)
    else:
        step = secure_grid_step(l1_sensitivity)
        integer_sensitivity = math.ceil(l1_sensitivity / step) + (1 if each_coordinate else values.size)
    noisy = _on_grid(values, step) + discrete_laplace(values.size, integer_sensitivity, epsilon, rng).reshape(values.shape)
    return noisy.astype(np.float64) * step


def gaussian_mechanism(
    values: ArrayLike, l2_sensitivity: float, epsilon: float, delta: float, rng: np.random.Generator
) -> tuple[np.ndarray, float]:
    r"""``values`` rounded to a public grid plus exact discrete Gaussian noise, :math:`(\varepsilon,\delta)`-DP.

    Grid step :math:`\gamma` = :func:`secure_grid_step` of the l2 sensitivity;
    rounding moves each coordinate by at most half a step, so the grid vectors
    of neighbours are :math:`\Delta_Z = \Delta_2/\gamma + \sqrt d` apart in l2.
    :math:`\sigma_Z` = :func:`zcdp_gaussian_sigma` for :math:`\Delta_Z`, its
    square rounded *up* to a multiple of :math:`2^{-20}`.  Returns ``(noisy,
    sigma)`` with ``sigma`` the noise standard deviation in the values' units.
    """
    values = np.asarray(values, dtype=np.float64)
    step = secure_grid_step(l2_sensitivity)
    integer_sensitivity = l2_sensitivity / step + math.sqrt(values.size)
    sigma_grid = zcdp_gaussian_sigma(epsilon, delta, integer_sensitivity)
    variance = Fraction(math.ceil(sigma_grid**2 * 2**VARIANCE_BITS), 2**VARIANCE_BITS)
    noisy = _on_grid(values, step) + discrete_gaussian(values.size, variance, rng).reshape(values.shape)
    return noisy.astype(np.float64) * step, math.sqrt(float(variance)) * step


def report_noisy_max(
    scores: ArrayLike, sensitivity: float, epsilon: float, rng: np.random.Generator, *, paper_scale: bool = False
) -> int:
    r"""Index of the largest noisy score, :math:`\varepsilon`-DP for scores of sensitivity ``sensitivity``.

    The scores of matching pursuit, :math:`|\langle r, \phi_j\rangle|`, are not
    monotone in the data (one change can raise some and lower others), so the
    noise scale is :math:`2\Delta/\varepsilon` (Dwork & Roth 2014, Claim 3.9
    covers only monotone counting queries with :math:`\Delta/\varepsilon`).

    Scores are snapped to the grid, exact discrete Laplace noise of scale
    :math:`2\Delta_\mathbb{Z}/\varepsilon` is added, and ties are broken by a
    uniformly random order (equivalent to adding an independent Uniform[0, 1)
    to every noisy integer score, a continuous noise whose density ratio under
    integer shifts obeys the same bound, so the usual proof goes through).
    Only the index is released.

    ``paper_scale=True`` uses the scale :math:`\Delta/\varepsilon` of Alg. 2 of Tao &
    Sarwate as printed: **not** :math:`\varepsilon`-DP for non-monotone scores
    (``tests/central/test_noise.py`` exhibits a violation); for reproducing the paper's
    comparison only.
    """
    scores = np.asarray(scores, dtype=np.float64)
    step = secure_grid_step(sensitivity)
    integer_sensitivity = math.ceil(sensitivity / step) + 1
    scale = integer_sensitivity if paper_scale else 2 * integer_sensitivity
    noisy = _on_grid(scores, step) + discrete_laplace(scores.size, scale, epsilon, rng)
    tie_break = rng.random(scores.size)
    return int(np.lexsort((tie_break, noisy))[-1])


def above_threshold(
    query_blocks: Iterable[np.ndarray], sensitivity: float, epsilon_threshold: float, epsilon_queries: float,
    rng: np.random.Generator,
) -> int | None:
    r"""Index of the first query whose noisy value reaches a noisy threshold of 0 (AboveThreshold), or ``None``.

    Dwork & Roth (2014), Alg. 1 and Thm. 3.23, on a public grid.  Every query value is rounded
    to the grid :math:`\gamma` = :func:`secure_grid_step` of ``sensitivity``; the rounded
    queries of neighbouring data sets then differ by at most
    :math:`\Delta_Z = \lceil\Delta/\gamma\rceil + 1` grid steps (one step of rounding slack per
    query).  The threshold 0 gets exact discrete Laplace noise of scale :math:`\Delta_Z/\varepsilon_1`
    and each query :math:`2\Delta_Z/\varepsilon_2`, all in grid units, and the comparison is on
    integers.  The proof of Thm. 3.23 shifts the threshold by :math:`\Delta_Z` (density ratio
    :math:`e^{\varepsilon_1}`) and the stopping query by at most :math:`2\Delta_Z`
    (:math:`e^{\varepsilon_2}`), so the release is :math:`(\varepsilon_1 + \varepsilon_2)`-DP exactly.
    (Grids of :math:`2^{-16}` and :math:`2^{-15}` with :math:`2^{16} + 1` steps of sensitivity
    each would be one step short of the shifts the proof needs: a realized loss of
    :math:`\varepsilon (2^{16} + 2)/(2^{16} + 1)`.)

    Parameters
    ----------
    query_blocks : iterable of array_like
        The query values, block by block (consumed lazily: blocks after the first hit are never read).
    sensitivity : float
        The largest change of any one query between neighbouring data sets.
    epsilon_threshold, epsilon_queries : float
        :math:`\varepsilon_1` and :math:`\varepsilon_2`.
    rng : numpy.random.Generator
    """
    step = secure_grid_step(sensitivity)
    integer_sensitivity = math.ceil(sensitivity / step) + 1
    threshold = _on_grid(np.zeros(1), step) + discrete_laplace(1, integer_sensitivity, epsilon_threshold, rng)
    offset = 0
    for block in query_blocks:
        block = np.asarray(block, dtype=np.float64)
        noisy = _on_grid(block, step) + discrete_laplace(block.size, 2 * integer_sensitivity, epsilon_queries, rng)
        hits = np.flatnonzero(noisy >= threshold[0])
        if hits.size:
            return offset + int(hits[0])
        offset += block.size
    return None
