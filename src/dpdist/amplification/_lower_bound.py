r"""A lower bound on the central epsilon of shuffled GRR rounds: one concrete neighbouring pair, composed exactly.

For comparison only (benchmarks and tests), like :mod:`._reference`.  GRR on d = 3 values,
:math:`p = e^{\varepsilon_0}/(e^{\varepsilon_0}+2)`, :math:`q = 1/(e^{\varepsilon_0}+2)`: the victim holds 0 or 1,
the other n - 1 users hold 2, in every round (a fixed data set, so the rounds' pairs are identical and
independent).  With :math:`c = N_0 + N_1` the reports at 0 or 1 among all n and :math:`N_0` those at 0,

.. math::

    P_x(c, N_0) = \mathrm{Bin}(c; n, 2q)\, \mathrm{Bin}(N_0; c, \tfrac12)\,
        \frac{\mu_x(0) N_0 / q + \mu_x(1) (c - N_0) / q + \mu_x(2) (n - c) / p}{n}

(:math:`\mu_0 = (p, q, q)`, :math:`\mu_1 = (q, p, q)`; the identity of :mod:`._reduction` with the others'
law :math:`(q, q, p)`).  The privacy loss :math:`L = \log(P_0/P_1)` of every :math:`(c, N_0)` within 8 (c, plus 10)
and 8.5 (:math:`N_0`) standard deviations is rounded *down* to a lattice and the rest of the mass dropped; ``rounds``
copies are convolved (FFT, its error bound subtracted, the masses' rounding allowed for), so
:math:`\underline\delta(\varepsilon) = \mathbb E[(1 - e^{\varepsilon - \sum L})_+]` lies below the pair's exact
:math:`\delta(\varepsilon)` (the function is increasing in each loss).  Any valid :math:`(\varepsilon, \delta)`
statement for the rounds has :math:`\varepsilon` at least the largest :math:`\varepsilon` with
:math:`\underline\delta(\varepsilon) > \delta`, which :func:`grr_pair_epsilon` returns.
"""

from __future__ import annotations

import math

import numpy as np

from ..accounting._lattice import fft_error

__all__ = ["grr_pair_distribution", "grr_pair_epsilon"]

_WINDOW_C = 8.0
_WINDOW_ZEROS = 8.5
_CHUNK = 4_000_000  # atoms per block of c values
#: the masses' relative error (differences of log-factorials up to 1.6e8 at n = 10^7, each to 1e-16 relative)
_RELATIVE_SLACK = 1e-6


def grr_pair_distribution(epsilon0: float, n: int, points: int = 4000) -> tuple[np.ndarray, int, float]:
    """The pair's privacy loss (module docstring) under the victim's value 0, rounded down to the lattice
    ``step * k``: ``(mass, offset, step)``, ``mass[j]`` at ``(offset + j) * step``, ``points`` steps over the
    losses' range.  Vectorized over blocks of c (at most ``_CHUNK`` atoms at a time)."""
    from scipy import special  # lazy: loads scipy (0.4-2 s)

    e = math.exp(epsilon0)
    p, q = e / (e + 2), 1 / (e + 2)
    mean, sd = n * 2 * q, math.sqrt(n * 2 * q * (1 - 2 * q))
    # c counts the victim's report too (at most one more than the others' Bin(n - 1, 2q)); 10 more for tiny means
    cs = np.arange(max(0, math.floor(mean - _WINDOW_C * sd)), min(n, math.ceil(mean + _WINDOW_C * sd) + 10) + 1)
    half = np.ceil(_WINDOW_ZEROS * np.sqrt(cs / 4.0) + 2).astype(np.int64)
    lowest, highest = np.maximum(cs // 2 - half, 0), np.minimum(cs // 2 + half, cs)

    def loss(c: np.ndarray, zeros: np.ndarray) -> np.ndarray:
        return np.log(p * zeros / q + (c - zeros) + q * (n - c) / p) - np.log(zeros + p * (c - zeros) / q + q * (n - c) / p)

    # the loss increases with N0 at fixed c: its range is that of the windows' ends
    step = float(loss(cs, highest).max() - loss(cs, lowest).min()) / points
    bottom = math.floor(float(loss(cs, lowest).min()) / step)
    mass = np.zeros(points + 2)
    log_factorial = special.gammaln(np.arange(n + 2, dtype=np.float64))  # log k! = log_factorial[k + 1]
    log_weight = (log_factorial[n + 1] - log_factorial[cs + 1] - log_factorial[n - cs + 1]
                  + cs * math.log(2 * q) + (n - cs) * math.log1p(-2 * q))
    start = 0
    while start < cs.size:  # blocks of c values, each with its window of N0
        stop = start + max(1, int(np.searchsorted(np.cumsum(highest[start:] - lowest[start:] + 1), _CHUNK)))
        counts = highest[start:stop] - lowest[start:stop] + 1
        c = np.repeat(cs[start:stop], counts)
        zeros = np.repeat(lowest[start:stop] - np.cumsum(counts) + counts, counts) + np.arange(c.size)
        log_mass = (np.repeat(log_weight[start:stop], counts) + log_factorial[c + 1] - log_factorial[zeros + 1]
                    - log_factorial[c - zeros + 1] - c * math.log(2))
        first = p * zeros / q + (c - zeros) + q * (n - c) / p
        index = np.floor(loss(c, zeros) / step).astype(np.int64) - bottom
        mass += np.bincount(np.clip(index, 0, points + 1), weights=np.exp(log_mass) * first / n, minlength=points + 2)
        start = stop
    return mass, bottom, step


def grr_pair_epsilon(epsilon0: float, n: int, rounds: int, delta: float, distribution=None) -> float:
    """A lower bound on the central epsilon at ``delta`` of ``rounds`` shuffled rounds of GRR (d = 3, ``n`` users).

    ``distribution``: :func:`grr_pair_distribution`'s result, to reuse it over several ``rounds``.
    """
    one, offset_one, step = grr_pair_distribution(epsilon0, n) if distribution is None else distribution
    result, offset, error = np.ones(1), 0, 0.0
    power, power_offset, power_error, remaining = one, offset_one, 0.0, rounds
    while remaining:
        if remaining & 1:
            result, error = _convolve(result, error, power, power_error)
            offset += power_offset
        remaining >>= 1
        if remaining:
            power, power_error = _convolve(power, power_error, power, power_error)
            power_offset *= 2
    values = (offset + np.arange(result.size)) * step

    def lower_delta(epsilon: float) -> float:
        above = values > epsilon
        return float(np.dot(result[above], -np.expm1(epsilon - values[above]))) * (1 - _RELATIVE_SLACK) - error

    if lower_delta(0.0) <= delta:
        return 0.0
    low, high = 0.0, float(values[-1])  # lower_delta(high) <= 0 < delta
    while high - low > 1e-6 * high:
        middle = 0.5 * (low + high)
        if lower_delta(middle) > delta:
            low = middle
        else:
            high = middle
    return low


def _convolve(first: np.ndarray, first_error: float, second: np.ndarray, second_error: float) -> tuple[np.ndarray, float]:
    """The convolution by FFT and a bound on its l1 error: the inputs' (masses at most 1) carried, the FFT's added."""
    size = first.size + second.size - 1
    length = 1 << (size - 1).bit_length()
    out = np.fft.irfft(np.fft.rfft(first, length) * np.fft.rfft(second, length), length)[:size]
    carried = first_error + second_error + first_error * second_error
    return np.maximum(out, 0.0), carried + fft_error(first, second, length)
