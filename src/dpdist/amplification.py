r"""Privacy amplification by shuffling: the central :math:`(\varepsilon, \delta)` of n shuffled local reports.

When a shuffler (a relay that strips senders and permutes reports) stands between
the devices and the collector, the collector sees the *multiset* of n reports, and
an :math:`\varepsilon_0`-LDP report is hidden among the others.  Feldman, McMillan
& Talwar ("Hiding among the clones", FOCS 2021) bound the central loss of the
shuffled output under ``"replace"`` neighbours (one user's value changed, the
other n-1 fixed and arbitrary):

* :func:`closed_form_epsilon` -- their Theorem 3.1: for
  :math:`\varepsilon_0 \le \ln(n / (16 \ln(2/\delta)))`,

  .. math::

      \varepsilon \le \ln\Bigl(1 + \frac{e^{\varepsilon_0}-1}{e^{\varepsilon_0}+1}
      \Bigl(\frac{8\sqrt{e^{\varepsilon_0}\ln(4/\delta)}}{\sqrt n} + \frac{8e^{\varepsilon_0}}{n}\Bigr)\Bigr).

* :func:`numerical_epsilon` -- their numerical bound (sec. 4): the shuffled output is a
  post-processing of the pair of count distributions

  .. math::

      P = (A + \Delta,\ C - A + 1 - \Delta), \quad Q = (A + \Delta',\ C - A + 1 - \Delta'),

  with :math:`C \sim \mathrm{Bin}(n-1, w)` "clones", :math:`A \sim \mathrm{Bin}(C, 1/2)`,
  :math:`\Delta \sim \mathrm{Bern}(e^{\varepsilon_0}/(e^{\varepsilon_0}+1))`,
  :math:`\Delta' \sim \mathrm{Bern}(1/(e^{\varepsilon_0}+1))`, and :math:`\delta(\varepsilon)` is
  their hockey-stick divergence, computed here exactly (per :math:`c` the optimal set is a
  tail in :math:`A`, since the likelihood ratio is monotone) over a window of :math:`c`
  whose outside mass is added to :math:`\delta`; :math:`\varepsilon` by bisection.

The clone probability :math:`w` is where the exact channel helps.  The reduction needs
every row to decompose as :math:`R(x) = \tfrac w2 (R(x_0) + R(x_1)) + (1-w)\,\mathrm{LO}(x)`
for the neighbouring pair :math:`x_0, x_1`; FMT21 use :math:`w = e^{-\varepsilon_0}`,
valid for any :math:`\varepsilon_0`-LDP randomizer.  From a finite channel the largest
valid :math:`w` is :math:`\min_{x, x_0, x_1, y} 2R(x)[y] / (R(x_0)[y] + R(x_1)[y])`
(:func:`clone_probability`): :math:`2/(e^{\varepsilon_0}+1)` for GRR, larger than
:math:`e^{-\varepsilon_0}`, the improvement of Feldman, McMillan & Talwar (2023,
"Stronger privacy amplification by shuffling for Rényi and approximate DP") for
randomized response.  The pair itself is a post-processing of binary randomized
response with the channel's realized :math:`\varepsilon_0` (Kairouz, Oh & Viswanath
2015), which gives :math:`\Delta, \Delta'`.

:func:`shuffled_guarantee` states the result as a central
:class:`~dpdist.privacy.PrivacyGuarantee`; rounds of a memoryless protocol (fresh
randomness per report) compose with :func:`dpdist.privacy.sequential`. Memoized
protocols are refused: their rounds share the memo, and two shuffled rounds of l-grr
lose far more than twice one round (exact delta 0.3 at the sum of the epsilons, n = 2).  ``tests/test_amplification.py`` checks the
bound against the exact loss of the shuffled multiset on tiny n and d.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ._validation import Integer, check_param
from .errors import InvalidParameterError, InvalidPrivacyParameterError
from .privacy import PrivacyGuarantee

if TYPE_CHECKING:
    from .local import LocalProtocol

__all__ = [
    "clone_probability",
    "closed_form_epsilon",
    "numerical_delta",
    "numerical_epsilon",
    "shuffled_guarantee",
    "METHODS",
]

METHODS = ("numerical", "closed-form")
#: standard deviations of Bin(n-1, w) kept around its mean; the mass outside is added to delta
_WINDOW_SD = 12.0
#: at most this many blocks of clone counts per evaluation of delta
_BLOCKS = 2048


def _check_epsilon0(epsilon0) -> float:
    if isinstance(epsilon0, bool) or not isinstance(epsilon0, (int, float)) or not 0 < epsilon0 < 60:
        raise InvalidPrivacyParameterError(f"The 'epsilon0' parameter must be a float in (0, 60). Got {epsilon0!r} instead.")
    return float(epsilon0)


def _check_delta(delta) -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise InvalidPrivacyParameterError(f"The 'delta' parameter must be a float in (0, 1). Got {delta!r} instead.")
    return float(delta)


def _check_n(n) -> int:
    return check_param("amplification", "n", n, Integer(low=2, high=10**12))


def clone_probability(channel: np.ndarray) -> float:
    """The largest ``w`` with ``R(x) >= w/2 (R(x0) + R(x1))`` for every row ``x`` and pair ``x0 != x1`` (module docstring)."""
    channel = np.asarray(channel, dtype=np.float64)
    if channel.ndim != 2 or channel.shape[0] < 2 or np.any(channel < 0):
        raise InvalidParameterError(f"A channel is a non-negative matrix of at least two rows. Got shape {channel.shape}.")
    best = math.inf
    rows = channel.shape[0]
    for first in range(rows):
        pair = channel[first] + channel[first + 1 :]  # (pairs, outputs)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.where(pair[None, :, :] > 0, 2 * channel[:, None, :] / pair[None, :, :], np.inf)
        if ratios.size:
            best = min(best, float(ratios.min()))
    return min(1.0, best)


def closed_form_epsilon(epsilon0: float, n: int, delta: float) -> float:
    """FMT21 Theorem 3.1 (module docstring); ``inf`` outside its condition on :math:`\\varepsilon_0`."""
    epsilon0, n, delta = _check_epsilon0(epsilon0), _check_n(n), _check_delta(delta)
    if epsilon0 > math.log(n / (16 * math.log(2 / delta))):
        return math.inf
    a = math.exp(epsilon0)
    return math.log1p((a - 1) / (a + 1) * (8 * math.sqrt(a * math.log(4 / delta)) / math.sqrt(n) + 8 * a / n))


def numerical_delta(epsilon: float, epsilon0: float, n: int, clone: float | None = None) -> float:
    """:math:`\\delta(\\varepsilon)`: the hockey-stick divergence of the clone reduction (module docstring).

    Conditional on :math:`C = c` the divergence :math:`\\delta_c` is non-increasing in :math:`c` (one more
    clone adds an independent fair coin to the counts: a post-processing), so summing the mass of
    :math:`C` over blocks :math:`[c_j, c_{j+1})` times :math:`\\delta_{c_j}` bounds the exact sum from above;
    the blocks are at most :data:`_BLOCKS` over a window of :data:`_WINDOW_SD` standard deviations, and the
    mass below the window counts with :math:`\\delta_c \\le 1`.
    """
    return _CloneReduction(_check_epsilon0(epsilon0), _check_n(n), clone).delta(epsilon)


class _CloneReduction:
    """The blocks of clone counts and their masses for one (epsilon0, n, w): computed once per bisection."""

    def __init__(self, epsilon0: float, n: int, clone: float | None):
        from scipy import stats

        w = math.exp(-epsilon0) if clone is None else float(clone)
        if not 0 < w <= 1:
            raise InvalidParameterError(f"The 'clone' probability must be in (0, 1]. Got {clone!r} instead.")
        self.epsilon0 = epsilon0
        self.s = math.exp(epsilon0) / (math.exp(epsilon0) + 1)
        trials = n - 1
        mean, sd = trials * w, math.sqrt(trials * w * (1 - w))
        low, high = max(0, int(mean - _WINDOW_SD * sd) - 1), min(trials, int(mean + _WINDOW_SD * sd) + 1)
        step = max(1, -(-(high - low + 1) // _BLOCKS))
        self.starts = np.arange(low, high + 1, step, dtype=np.float64)
        ends = np.minimum(self.starts + step - 1, trials)
        ends[-1] = trials  # the last block takes the upper tail
        self.below = float(stats.binom.cdf(low - 1, trials, w)) if low > 0 else 0.0
        self.mass = np.maximum(stats.binom.cdf(ends, trials, w) - stats.binom.cdf(self.starts - 1, trials, w), 0.0)

    def delta(self, epsilon: float) -> float:
        from scipy import special

        if epsilon >= self.epsilon0:
            return 0.0  # P/Q never exceeds e^eps0
        s, e, c = self.s, math.exp(epsilon), self.starts
        threshold = (e * s - (1 - s)) / (s - e * (1 - s))  # P > e^eps Q  <=>  u / (c + 1 - u) > threshold
        u_star = np.floor(threshold * (c + 1) / (1 + threshold)) + 1  # smallest u with P > e^eps Q
        tail_minus = _tail(special, u_star - 1, c)  # P[A >= u* - 1], A ~ Bin(c, 1/2)
        tail = _tail(special, u_star, c)
        above = s * tail_minus + (1 - s) * tail - e * ((1 - s) * tail_minus + s * tail)
        return float(min(1.0, np.sum(self.mass * np.maximum(above, 0.0)) + self.below))


def _tail(special, k: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``P[Bin(c, 1/2) >= k]``, elementwise."""
    out = np.where(k <= 0, 1.0, 0.0)
    inside = (k > 0) & (k <= c)
    out[inside] = special.bdtrc((k[inside] - 1).astype(np.int64), c[inside].astype(np.int64), 0.5)
    return out


def numerical_epsilon(epsilon0: float, n: int, delta: float, clone: float | None = None) -> float:
    """The smallest :math:`\\varepsilon` (to 1e-6 relative) with :func:`numerical_delta` at most ``delta``."""
    epsilon0, n, delta = _check_epsilon0(epsilon0), _check_n(n), _check_delta(delta)
    reduction = _CloneReduction(epsilon0, n, clone)
    if reduction.delta(0.0) <= delta:
        return 0.0
    low, high = 0.0, epsilon0
    while high - low > 1e-6 * max(high, 1e-9):
        middle = 0.5 * (low + high)
        if reduction.delta(middle) <= delta:
            high = middle
        else:
            low = middle
    return high


def shuffled_guarantee(protocol: LocalProtocol, n: int, delta: float, method: str = "numerical") -> PrivacyGuarantee:
    """The central guarantee of ``n`` shuffled reports of ``protocol`` (one per user), as a value.

    Parameters
    ----------
    protocol : LocalProtocol
        With a finite channel; its realized one-report loss and clone probability are read
        from :meth:`~dpdist.local.LocalProtocol.channel` (small instances: the channel has
        one row per input).
    n : int
        Reports shuffled together (public).
    delta : float
    method : {"numerical", "closed-form"}

    Returns
    -------
    PrivacyGuarantee
        ``(epsilon, delta)`` under ``"replace"`` neighbours, ``model="central"`` (the collector
        sees the shuffled multiset; it assumes the shuffler does not collude with it). Never
        weaker than the local guarantee: the result is the smaller of the two.
    """
    if method not in METHODS:
        raise InvalidParameterError(f"The 'method' parameter must be one of {METHODS}. Got {method!r} instead.")
    if protocol.tags.memoized:
        raise InvalidParameterError(
            f"{protocol.display_name} memoizes a permanent response per device: its rounds share the memo, so a "
            "round's shuffled guarantee does not compose over rounds, and one round's channel is not what a device "
            "reveals over time. shuffled_guarantee takes memoryless protocols."
        )
    channel = np.asarray(protocol.channel(), dtype=np.float64)
    with np.errstate(divide="ignore"):
        logs = np.log(channel)
    epsilon0 = float(np.max(logs.max(axis=0) - logs.min(axis=0)))
    if method == "closed-form":
        epsilon = closed_form_epsilon(epsilon0, n, delta)
    else:
        epsilon = numerical_epsilon(epsilon0, n, delta, clone_probability(channel))
    return PrivacyGuarantee(max(min(epsilon, epsilon0), 1e-12), delta, "replace", "central")
