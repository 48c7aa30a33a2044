r"""Gaussian noise for many coordinates at once: exact discrete Gaussian draws, vectorized, and their zCDP calibration.

The grouped releases over many keys (a count per key, a key's weight in a selection) add Gaussian noise to vectors of
thousands of integers; :func:`~dpdist.central.noise.discrete_gaussian` draws one coordinate per Python loop.  This
module draws them all with NumPy, exactly.

**The law.**  :math:`\mathcal N_\mathbb{Z}(0, \sigma^2)`, :math:`P(z) \propto e^{-z^2/(2\sigma^2)}` on the integers,
for a variance of the form :math:`\sigma^2 = t s` with integers :math:`t, s \ge 1` (:func:`lattice_variance` finds the
smallest such product at or above the variance asked for; the excess is at most a few units in :math:`10^5` of it once
:math:`\sigma \ge 100`, and 0 when a divisor of :math:`\lceil\sigma^2\rceil` lies within a factor 2 of :math:`\sigma`).

**The sampler** (:func:`discrete_gaussian_lattice`) is Alg. 3 of Canonne, Kamath & Steinke (NeurIPS 2020), vectorized.
Proposal :math:`Y` discrete Laplace of scale :math:`t`, :math:`P(y) \propto e^{-|y|/t}`
(:func:`~dpdist.central.noise._discrete_laplace_scaled`, exact); accept with probability
:math:`\exp(-(|Y| - \sigma^2/t)^2 / (2\sigma^2)) = \exp(-N/D)` with the integers :math:`N = (|Y| - s)^2`,
:math:`D = 2ts`.  Correctness holds for any scale :math:`t > 0`: :math:`-y^2/(2ts) + |y|/t = -(|y| - s)^2/(2ts) +
s/(2t)`, so proposal times acceptance is proportional to the target (their Alg. 3 takes :math:`t = \lfloor\sigma\rfloor
+ 1` for speed; any :math:`t` within a factor 2 of :math:`\sigma` keeps the acceptance rate above one half).  The
Bernoulli(:math:`e^{-N/D}`) is exact: :math:`N = qD + r`, accept when :math:`q` independent Bernoulli(:math:`e^{-1}`)
succeed (Alg. 1 with :math:`\gamma = 1`) and a Bernoulli(:math:`e^{-r/D}`) does
(:func:`~dpdist.central.noise._bernoulli_exp_minus_fractions`); rejected coordinates are drawn again.  A proposal
whose :math:`N` would leave int64 (:math:`|Y - s| > 3\cdot 10^9`, probability below :math:`e^{-1400}` at any
:math:`t \le 2^{21}`) is decided by the exact rational sampler :func:`~dpdist.central.noise._bernoulli_exp_minus`.
Fewer than :data:`~dpdist.central.noise.FEW_ENTRIES` coordinates (a selection's few keys, a group-by's few groups) run
the same rounds on Python lists (:func:`_lattice_few`): the same draws from the generator in the same calls.

**zCDP.**  Adding independent :math:`\mathcal N_\mathbb{Z}(0, \sigma^2)` to each coordinate of an integer vector whose
neighbours are at most :math:`\Delta` apart in l2 is :math:`\Delta^2/(2\sigma^2)`-zCDP (Canonne, Kamath & Steinke 2020,
Thm. 14), the same as the continuous Gaussian (:func:`lattice_rho`).

**(ε, δ), tightly** (:func:`gaussian_mu`).  The continuous Gaussian mechanism of l2 sensitivity :math:`\Delta` and
noise :math:`\sigma` is :math:`\mu`-GDP, :math:`\mu = \Delta/\sigma`, exactly: :math:`(\varepsilon, \delta(\varepsilon;
\mu))`-DP with :math:`\delta(\varepsilon; \mu) = \Phi(-\varepsilon/\mu + \mu/2) - e^\varepsilon\Phi(-\varepsilon/\mu -
\mu/2)` (Balle & Wang 2018, Thm. 8; Dong, Roth & Su 2022, Cor. 2.13), and adaptive compositions of such mechanisms
are :math:`\sqrt{\sum \mu_i^2}`-GDP (their Cor. 3.3).  Rounding its output to the integers is post-processing, and
for integer inputs :math:`\operatorname{round}(x + G) = x + \operatorname{round}(G)`.  The discrete Gaussian is within
total variation :math:`\tau(\sigma)` of :math:`\operatorname{round}(G)` per coordinate (:func:`rounding_distance`).
Between two neighbours only the coordinates that differ, :math:`c` of them, matter (the others have one law under
both and are integrated out of the hockey-stick divergence), so the discrete mechanism is :math:`(\varepsilon,
\delta(\varepsilon; \mu) + (1 + e^\varepsilon)\, c\,\tau(\sigma))`-DP; over adaptive rounds the slacks add up.  With
:math:`\sigma \ge 2^{18}` steps (:data:`MIN_SIGMA`), :math:`\tau < 6.1\cdot 10^{-13}`.

:math:`\tau(\sigma)`: with :math:`f` the :math:`\mathcal N(0, \sigma^2)` density, :math:`r_k = \int_{k-1/2}^{k+1/2} f`
and :math:`|r_k - f(k)| \le \frac{1}{24}\max_{|\xi - k| \le 1/2}|f''(\xi)|` (Taylor; the first-order term integrates
to 0), :math:`|f''| = f\,|\xi^2/\sigma^2 - 1|/\sigma^2 \le h/\sigma^2` with :math:`h = f\,(1 + \xi^2/\sigma^2)`, which
has four monotone pieces, integral 2 and maximum :math:`2e^{-1/2}/(\sigma\sqrt{2\pi})`: :math:`\sum_k |r_k - f(k)| \le
(2 + 8\max h)/(24\sigma^2)`.  By Poisson summation :math:`\sum_k f(k) = 1 + \eta`, :math:`0 \le \eta \le
3e^{-2\pi^2\sigma^2}`, and the discrete Gaussian is :math:`f(k)/(1 + \eta)`.  So :math:`\tau(\sigma) \le
(2 + 3.88/\sigma)/(48\sigma^2) + 1.5\,e^{-2\pi^2\sigma^2}`.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from ..errors import InvalidPrivacyParameterError
from .noise import (FEW_ENTRIES, _bernoulli_exp_minus, _bernoulli_exp_minus_fractions, _discrete_laplace_few,
                    _discrete_laplace_scaled, _fractions_few, _inverse_e, _inverse_e_few, analytic_gaussian_sigma)

__all__ = ["lattice_variance", "discrete_gaussian_lattice", "lattice_rho", "rounding_distance", "gaussian_mu",
           "lattice_for_mu", "MAX_SIGMA", "MIN_SIGMA"]

#: the largest noise standard deviation (in lattice steps) drawn: 2ts stays below 2**41, so the exact Bernoulli draws
#: below 2ts k stay within int64 for every k the sampler reaches
MAX_SIGMA = 2.0**20
#: the smallest noise (in lattice steps) of a release stated in (epsilon, delta): its rounding distance is below 6.1e-13
MIN_SIGMA = 2.0**18
#: |Y - s| beyond which N = (|Y| - s)^2 is computed with Python integers
_SQUARE_LIMIT = 3_000_000_000
#: the scales tried around sigma when looking for t*s close to sigma^2
_CANDIDATES = 4096


def lattice_variance(sigma: float) -> tuple[int, int]:
    r"""``(t, s)``: integers with :math:`ts \ge \sigma^2`, :math:`t` within a factor 2 of :math:`\sigma` (or 1 when
    :math:`\sigma < 1`), the product as small as such pairs allow (module docstring)."""
    if not (math.isfinite(sigma) and 0 < sigma <= MAX_SIGMA):
        raise InvalidPrivacyParameterError(
            f"The Gaussian noise of a grouped release must have a standard deviation in (0, 2**20] lattice steps. "
            f"Got {sigma!r}: raise epsilon or delta, or lower the contribution bounds.")
    target = math.ceil(Fraction(sigma) ** 2)  # exact: the smallest integer at or above sigma^2
    if sigma < 1:
        return 1, target
    low = max(1, math.ceil(sigma / 2))
    high = max(low, min(math.floor(2 * sigma), low + _CANDIDATES))
    scales = np.arange(low, high + 1, dtype=np.int64)
    products = scales * -(-target // scales)  # t * ceil(target / t), exact in int64 (sigma <= 2**20)
    t = int(scales[np.argmin(products)])
    return t, -(-target // t)


def discrete_gaussian_lattice(size: int, t: int, s: int, rng: np.random.Generator) -> np.ndarray:
    r"""``size`` exact draws of :math:`\mathcal N_\mathbb{Z}(0, ts)` (int64), all coordinates at once (module
    docstring); fewer than :data:`~dpdist.central.noise.FEW_ENTRIES` on lists (:func:`_lattice_few`), the same draws."""
    if size < FEW_ENTRIES:
        return np.array(_lattice_few(int(size), t, s, rng), dtype=np.int64)
    out = np.empty(int(size), dtype=np.int64)
    pending = np.arange(out.size)
    denominator = 2 * t * s
    while pending.size:
        proposal = _discrete_laplace_scaled(pending.size, t, 1, rng)
        accepted = _accepted(np.abs(proposal) - s, denominator, rng)
        out[pending[accepted]] = proposal[accepted]
        pending = pending[~accepted]
    return out


def _accepted(distance: np.ndarray, denominator: int, rng: np.random.Generator) -> np.ndarray:
    r"""Bernoulli(:math:`\exp(-d^2/D)`) for each of ``distance`` (exact)."""
    accepted = np.zeros(distance.size, dtype=bool)
    near = np.abs(distance) <= _SQUARE_LIMIT
    squares = distance[near] ** 2
    whole, rest = squares // denominator, squares % denominator
    accepted[near] = _exp_minus_integers(whole, rng) & _bernoulli_exp_minus_fractions(rest, denominator, rng)
    for index in np.flatnonzero(~near):  # beyond int64 squares: never drawn in practice, exact all the same
        accepted[index] = _bernoulli_exp_minus(Fraction(int(distance[index]) ** 2, denominator), rng)
    return accepted


def _lattice_few(size: int, t: int, s: int, rng: np.random.Generator) -> list[int]:
    """:func:`discrete_gaussian_lattice` on lists (a few coordinates): the same rounds, the same draws from ``rng`` in
    the same calls, so the same numbers and the same generator state."""
    out, pending, denominator = [0] * size, list(range(size)), 2 * t * s
    while pending:
        proposal = _discrete_laplace_few(len(pending), t, 1, rng)
        distances = [abs(value) - s for value in proposal]
        near = [i for i, distance in enumerate(distances) if abs(distance) <= _SQUARE_LIMIT]
        squares = [distances[i] ** 2 for i in near]
        whole = _exp_minus_integers_few([square // denominator for square in squares], rng)
        fraction = _fractions_few([square % denominator for square in squares], denominator, rng)
        accepted = [False] * len(distances)
        for i, kept_whole, kept_fraction in zip(near, whole, fraction):
            accepted[i] = kept_whole and kept_fraction
        for i, distance in enumerate(distances):
            if abs(distance) > _SQUARE_LIMIT:  # as _accepted: exact rationals beyond int64 squares
                accepted[i] = _bernoulli_exp_minus(Fraction(distance * distance, denominator), rng)
        rest = []
        for entry, value, kept in zip(pending, proposal, accepted):
            if kept:
                out[entry] = value
            else:
                rest.append(entry)
        pending = rest
    return out


def _exp_minus_integers_few(counts: list[int], rng: np.random.Generator) -> list[bool]:
    """:func:`_exp_minus_integers` on lists: the same steps, the same draws in the same calls."""
    alive, step = [True] * len(counts), 0
    while True:
        trying = [i for i, count in enumerate(counts) if alive[i] and count > step]
        if not trying:
            return alive
        for i, success in zip(trying, _inverse_e_few(len(trying), rng)):
            alive[i] = success
        step += 1


def _exp_minus_integers(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    r"""Bernoulli(:math:`e^{-q}`) for each integer :math:`q \ge 0` of ``counts``: :math:`q` Bernoulli(:math:`e^{-1}`)
    successes in a row (Alg. 1 of Canonne, Kamath & Steinke with :math:`\gamma = 1`, each exact)."""
    alive = np.ones(counts.size, dtype=bool)
    step = 0
    while True:
        trying = np.flatnonzero(alive & (counts > step))
        if not trying.size:
            return alive
        alive[trying] = _inverse_e(trying.size, rng)
        step += 1


def lattice_rho(t: int, s: int, sensitivity: float) -> float:
    r""":math:`\Delta^2/(2ts)`: the zCDP of discrete Gaussian noise of variance :math:`ts` at l2 sensitivity
    :math:`\Delta` (Canonne, Kamath & Steinke 2020, Thm. 14)."""
    return sensitivity**2 / (2.0 * t * s)


def rounding_distance(sigma: float) -> float:
    r""":math:`\tau(\sigma)`, at least the total variation between :math:`\mathcal N_\mathbb{Z}(0, \sigma^2)` and the
    continuous :math:`\mathcal N(0, \sigma^2)` rounded to the integers (module docstring); 1 below :math:`\sigma = 1`."""
    if sigma < 1:
        return 1.0
    return (2 + 3.88 / sigma) / (48 * sigma * sigma) + 1.5 * math.exp(-2 * math.pi**2 * sigma * sigma)


@functools.lru_cache(maxsize=256)
def gaussian_mu(epsilon: float, delta: float, changed: int) -> float:
    r"""The largest :math:`\mu = \Delta/\sigma` whose discrete Gaussian noise (at least :data:`MIN_SIGMA` steps) on
    ``changed`` coordinates is :math:`(\varepsilon, \delta)`-DP: Balle & Wang's :math:`\delta(\varepsilon; \mu)` at
    :math:`\delta` less the rounding slack :math:`(1 + e^\varepsilon)\,c\,\tau` (module docstring)."""
    slack = (1 + math.exp(epsilon)) * changed * rounding_distance(MIN_SIGMA)
    if not slack < delta / 2:
        raise InvalidPrivacyParameterError(
            f"A Gaussian release at epsilon={epsilon!r}, delta={delta!r} touching {changed} values per person leaves "
            "no delta for its noise: raise delta or lower the contribution bounds.")
    return 1.0 / analytic_gaussian_sigma(float(epsilon), float(delta - slack), 1.0)


def lattice_for_mu(mu: float, sensitivity: float, *, rounding: float = 0.0,
                   integer: bool = False) -> tuple[float, float, int, int]:
    r"""``(step, steps, t, s)`` of a release of l2 sensitivity ``sensitivity`` (values' units) at :math:`\mu`-GDP: a
    power-of-two lattice step :math:`\gamma` with :math:`\Delta/(\gamma\mu) \ge 2^{18}` (:data:`MIN_SIGMA`, below
    twice that; at most 1 for ``integer`` values, which then lie on the lattice exactly), the sensitivity in steps
    :math:`\Delta/\gamma` plus ``rounding`` (the slack of rounding real values to the lattice: :math:`\sqrt c` for
    :math:`c` moved coordinates, none for integers on it), and the lattice variance of at least that over :math:`\mu`
    steps of noise."""
    step = 2.0 ** math.floor(math.log2(sensitivity / (mu * MIN_SIGMA)))
    if integer:
        step, rounding = min(step, 1.0), 0.0
    steps = sensitivity / step + rounding
    t, s = lattice_variance(steps / mu)
    return step, steps, t, s
