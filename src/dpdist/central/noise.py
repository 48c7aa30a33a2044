r"""Noise for the central-DP CDF estimators: Laplace, analytic Gaussian, exact discrete Laplace.

Two modes, chosen by the ``secure`` flag of every public estimator:

* **default** (``secure=False``): the query value is released as a float plus
  ``numpy`` Laplace / Gaussian noise drawn from a seedable generator.  This is
  what the paper does and what research reproductions need (same seed, same
  numbers), but it is *not* safe against the floating-point attack of Mironov
  (2012): the set of floats reachable from ``f(D) + noise`` depends on ``f(D)``,
  so the low-order bits can leak the input.
* **secure** (``secure=True``): the query value is rounded to a grid of
  power-of-two step :math:`\gamma` and integer noise from the *exact* discrete
  Laplace sampler of Canonne, Kamath and Steinke (2020, Alg. 1-2) is added;
  randomness comes from the CSPRNG of :func:`dpdist._rng.check_rng`
  (``secure=True``).  Rounding can move a query by half a grid step, so the
  integer sensitivity is taken as :math:`\lceil\Delta/\gamma\rceil` plus one
  step per coordinate; the released values are integers times :math:`\gamma`,
  which floats represent exactly, so nothing leaks beyond the stated
  :math:`\varepsilon`.  :math:`\varepsilon` itself is rounded *down* to a
  dyadic rational with a :math:`2^{-20}` step so that the sampler works on
  exact integers.  Secure mode is pure :math:`\varepsilon`-DP even where the
  default mode uses the Gaussian mechanism (see :func:`discrete_laplace`).

References
----------
.. [1] B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential
   Privacy: Analytical Calibration and Optimal Denoising", ICML 2018 (Thm. 8,
   Alg. 1).
.. [2] C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for
   Differential Privacy", NeurIPS 2020 (Alg. 1 Bernoulli(exp(-gamma)), Alg. 2
   discrete Laplace).
.. [3] I. Mironov, "On Significance of the Least Significant Bits for
   Differential Privacy", CCS 2012.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import special

from ..errors import InvalidPrivacyParameterError

__all__ = [
    "analytic_gaussian_sigma",
    "gaussian_delta",
    "laplace_mechanism",
    "gaussian_mechanism",
    "discrete_laplace",
    "report_noisy_max",
    "secure_grid_step",
]

# epsilon is rounded down to a multiple of 2**-EPSILON_BITS in secure mode
EPSILON_BITS = 20
# the secure grid step is the largest power of two <= sensitivity / 2**GRID_BITS
GRID_BITS = 16


# ---------------------------------------------------------------- analytic Gaussian
def _log_gaussian_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    r"""``log`` of the smallest delta of the Gaussian mechanism (Balle & Wang 2018, Thm. 8).

    .. math::
        \delta(\sigma) = \Phi\Big(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)
        - e^{\varepsilon}\,\Phi\Big(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)

    Evaluated in log space (``log_ndtr``) so that deltas down to 1e-300 keep
    full relative precision: :math:`\log\delta = \log\Phi(a) + \log(1 - e^{\varepsilon +
    \log\Phi(-b) - \log\Phi(a)})`.
    """
    ratio = sensitivity / sigma
    a = ratio / 2 - epsilon / ratio
    b = ratio / 2 + epsilon / ratio
    log_first = special.log_ndtr(a)
    log_ratio = epsilon + special.log_ndtr(-b) - log_first  # < 0 since delta(sigma) > 0
    return float(log_first + np.log(-np.expm1(min(log_ratio, -1e-300))))


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
    upper end, which always satisfies :math:`\delta(\sigma) \le \delta` — an
    absolute tolerance would under-noise once :math:`\sigma` itself is tiny or
    the target delta is far below the tolerance.

    Parameters
    ----------
    epsilon, delta : float
        Privacy budget, ``epsilon > 0`` and ``0 < delta < 1``.
    sensitivity : float
        l2 sensitivity of the released vector (> 0).

    Returns
    -------
    float
        ``sigma`` with ``gaussian_delta(sigma, epsilon, sensitivity) <= delta``.
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
    return high


# ---------------------------------------------------------------- exact discrete samplers
def _bernoulli_rational(probability: Fraction, rng: np.random.Generator) -> bool:
    """Exact Bernoulli(p) for rational p in [0, 1] from a uniform integer draw."""
    return int(rng.integers(0, probability.denominator)) < probability.numerator


def _bernoulli_exp_minus(gamma: Fraction, rng: np.random.Generator) -> bool:
    r"""Exact Bernoulli(:math:`e^{-\gamma}`) for rational :math:`\gamma \ge 0` (Canonne et al. 2020, Alg. 1)."""
    while gamma > 1:
        if not _bernoulli_exp_minus(Fraction(1), rng):
            return False
        gamma -= 1
    k = 1
    while _bernoulli_rational(gamma / k, rng):
        k += 1
    return k % 2 == 1


def _discrete_laplace_one(scale_numerator: int, scale_denominator: int, rng: np.random.Generator) -> int:
    r"""One exact draw of :math:`P(x) \propto e^{-|x| s/t}` on the integers, scale ``t/s`` (Alg. 2 of [2])."""
    t, s = scale_numerator, scale_denominator
    while True:
        u = int(rng.integers(0, t))
        if not _bernoulli_exp_minus(Fraction(u, t), rng):
            continue
        v = 0
        while _bernoulli_exp_minus(Fraction(1), rng):
            v += 1
        y = (u + t * v) // s
        negative = bool(rng.integers(0, 2))
        if negative and y == 0:
            continue
        return -y if negative else y


def _dyadic_epsilon(epsilon: float) -> Fraction:
    """``epsilon`` rounded down to a multiple of ``2**-EPSILON_BITS`` (never rounds up: never under-noises)."""
    numerator = math.floor(epsilon * 2**EPSILON_BITS)
    if numerator < 1:
        raise InvalidPrivacyParameterError(
            f"The 'epsilon' parameter must be at least 2**-{EPSILON_BITS} in secure mode "
            f"(its dyadic resolution). Got {epsilon!r} instead."
        )
    return Fraction(numerator, 2**EPSILON_BITS)


def discrete_laplace(size: int, integer_sensitivity: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    r"""``size`` exact draws of the discrete Laplace noise for an integer query with l1 sensitivity ``integer_sensitivity``.

    :math:`P(z) \propto \exp(-\varepsilon' |z| / \Delta)` with :math:`\varepsilon' \le \varepsilon`
    the dyadic rounding of ``epsilon``; adding it to an integer vector whose l1
    distance between neighbours is at most :math:`\Delta` is
    :math:`\varepsilon`-DP (geometric mechanism).  One Python loop per draw:
    meant for the tens to thousands of released coefficients, not per user.
    """
    epsilon_exact = _dyadic_epsilon(epsilon)
    scale = Fraction(int(integer_sensitivity)) / epsilon_exact
    return np.array(
        [_discrete_laplace_one(scale.numerator, scale.denominator, rng) for _ in range(size)], dtype=np.int64
    )


def secure_grid_step(sensitivity: float) -> float:
    """Power-of-two grid step ``gamma`` with ``sensitivity / gamma`` in ``[2**GRID_BITS, 2**(GRID_BITS+1))``."""
    return 2.0 ** math.floor(math.log2(sensitivity) - GRID_BITS)


# ---------------------------------------------------------------- mechanisms
def laplace_mechanism(
    values,
    l1_sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    *,
    secure: bool = False,
    integer_valued: bool = False,
) -> np.ndarray:
    r"""``values`` plus Laplace noise calibrated to ``l1_sensitivity / epsilon`` (pure :math:`\varepsilon`-DP).

    In secure mode the values are snapped to the grid :func:`secure_grid_step`
    and exact discrete Laplace noise is added (integer l1 sensitivity
    :math:`\lceil\Delta_1/\gamma\rceil + d`, one rounding step per coordinate).
    Queries declared ``integer_valued`` (counts, with an integer sensitivity)
    use step 1 and no rounding slack.  The declaration is a property of the
    query, never inferred from the data: a data-dependent choice of grid would
    itself leak.
    """
    values = np.asarray(values, dtype=np.float64)
    if not secure:
        return values + rng.laplace(0.0, l1_sensitivity / epsilon, size=values.shape)
    if integer_valued:
        step, integer_sensitivity = 1.0, int(l1_sensitivity)
    else:
        step = secure_grid_step(l1_sensitivity)
        integer_sensitivity = math.ceil(l1_sensitivity / step) + values.size
    grid = np.round(values / step).astype(np.int64)
    noisy = grid + discrete_laplace(values.size, integer_sensitivity, epsilon, rng).reshape(values.shape)
    return noisy.astype(np.float64) * step


def gaussian_mechanism(
    values, l2_sensitivity: float, epsilon: float, delta: float, rng: np.random.Generator
) -> tuple[np.ndarray, float]:
    """``values`` plus i.i.d. Gaussian noise of the analytic-Gaussian ``sigma``; returns ``(noisy, sigma)``."""
    values = np.asarray(values, dtype=np.float64)
    sigma = analytic_gaussian_sigma(epsilon, delta, l2_sensitivity)
    return values + rng.normal(0.0, sigma, size=values.shape), sigma


def report_noisy_max(
    scores, sensitivity: float, epsilon: float, rng: np.random.Generator, *, secure: bool = False
) -> int:
    r"""Index of the largest noisy score, :math:`\varepsilon`-DP for scores of sensitivity ``sensitivity``.

    The scores of matching pursuit, :math:`|\langle r, \phi_j\rangle|`, are not
    monotone in the data (one change can raise some and lower others), so the
    noise scale is :math:`2\Delta/\varepsilon` (Dwork & Roth 2014, Claim 3.9
    covers only monotone counting queries with :math:`\Delta/\varepsilon`).

    Secure mode: scores snapped to the grid, exact discrete Laplace noise of
    scale :math:`2\Delta_\mathbb{Z}/\varepsilon`, ties broken by a uniformly random
    order (equivalent to adding an independent Uniform[0, 1) to every noisy
    integer score, a continuous noise whose density ratio under integer shifts
    obeys the same bound, so the usual proof goes through).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if not secure:
        return int(np.argmax(scores + rng.laplace(0.0, 2.0 * sensitivity / epsilon, size=scores.shape)))
    step = secure_grid_step(sensitivity)
    integer_sensitivity = math.ceil(sensitivity / step) + 1
    noisy = np.round(scores / step).astype(np.int64) + discrete_laplace(
        scores.size, 2 * integer_sensitivity, epsilon, rng
    )
    tie_break = rng.random(scores.size)
    return int(np.lexsort((tie_break, noisy))[-1])
