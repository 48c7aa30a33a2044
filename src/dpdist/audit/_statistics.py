r"""Exact binomial bounds, and the epsilon lower bound they certify from one output event.

For an output event :math:`E` and two inputs :math:`x, x'`, :math:`\varepsilon`-LDP
says :math:`\Pr[M(x) \in E] \le e^{\varepsilon} \Pr[M(x') \in E]`, so any mechanism
has :math:`\varepsilon \ge \ln(\Pr[M(x) \in E] / \Pr[M(x') \in E])`.  With
:math:`k` of :math:`n` samples of :math:`M(x)` in :math:`E` and :math:`k'` of
:math:`n'` samples of :math:`M(x')`, the one-sided Clopper-Pearson bounds
:math:`p_- \le \Pr[M(x) \in E]` and :math:`q_+ \ge \Pr[M(x') \in E]`, each at level
:math:`a`, give :math:`\varepsilon \ge \ln(p_- / q_+)` with probability at least
:math:`1 - 2a` (a union bound over the two).  This is the event-based certificate of
Arcolezi & Gambs (2023, Sec. 4: their event is a protocol-specific distinguishing
attack's "guess x"; here it is chosen from data) and of the central auditors they follow (Jagielski,
Ullman & Oprea 2020), with exact (not asymptotic) binomial bounds.

References
----------
C. J. Clopper, E. S. Pearson (1934). The use of confidence or fiducial limits illustrated in the
case of the binomial. Biometrika 26(4), 404-413 (the "exact" interval: eq. of Sec. 2, here the
beta-quantile form :math:`p_- = B^{-1}(a; k, n-k+1)`, :math:`p_+ = B^{-1}(1-a; k+1, n-k)`).

H. H. Arcolezi, S. Gambs (2023). Revealing the True Cost of Local Privacy: An Auditing Perspective.
arXiv:2309.01597 (v3, 2024: *Revealing the True Cost of Locally Differentially Private Protocols: An
Auditing Perspective*; LDP-Auditor).

E. B. Wilson (1927). Probable inference, the law of succession, and statistical inference. Journal of the
American Statistical Association 22(158), 209-212 (the score interval: only to choose events).

M. Jagielski, J. Ullman, A. Oprea (2020). Auditing Differentially Private Machine Learning: How
Private is Private SGD? NeurIPS 2020 (the Clopper-Pearson certificate of a lower bound).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from .._validation import Described, Interval, validate_params
from ..errors import InvalidParameterError

#: the level of a one-sided bound
LEVEL = Described(Interval(0.0, 1.0), "a probability in (0, 1)")

__all__ = [
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "score_events",
    "wilson_bound",
    "detectable_epsilon",
    "smallest_examined_probability",
]


@validate_params({"a": LEVEL})
def clopper_pearson_lower(k: ArrayLike, n: ArrayLike, a: float) -> np.ndarray:
    """One-sided lower Clopper-Pearson bound on a binomial probability: ``Pr[p >= bound] >= 1 - a``.

    ``B^{-1}(a; k, n - k + 1)``, and 0 where ``k = 0`` (Clopper & Pearson 1934).
    """
    k, n = _counts_and_level(k, n, a)
    with np.errstate(invalid="ignore"):
        bound = special.betaincinv(np.maximum(k, 1), np.maximum(n - k + 1, 1), a)
    return np.where(k > 0, bound, 0.0)


def _counts_and_level(k: ArrayLike, n: ArrayLike, a: float) -> tuple[np.ndarray, np.ndarray]:
    """``k`` and ``n`` as float arrays, refused unless ``0 <= k <= n`` are whole counts (``a``: the callers' table)."""
    k_array, n_array = np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64)
    if not (np.all(np.isfinite(k_array)) and np.all(k_array >= 0) and np.all(k_array <= n_array)
            and np.all(k_array == np.round(k_array)) and np.all(n_array == np.round(n_array))):
        raise InvalidParameterError(f"k must be whole counts with 0 <= k <= n; got k={k!r}, n={n!r}.")
    return k_array, n_array


@validate_params({"a": LEVEL})
def clopper_pearson_upper(k: ArrayLike, n: ArrayLike, a: float) -> np.ndarray:
    """One-sided upper Clopper-Pearson bound: ``Pr[p <= bound] >= 1 - a``; 1 where ``k = n``."""
    k, n = _counts_and_level(k, n, a)
    with np.errstate(invalid="ignore"):
        bound = special.betaincinv(k + 1, np.maximum(n - k, 1), 1 - a)
    return np.where(k < n, bound, 1.0)


def epsilon_lower_bound(k_in: ArrayLike, n_in: ArrayLike, k_out: ArrayLike, n_out: ArrayLike, a: float,
                        delta: float = 0.0) -> np.ndarray:
    r"""``max(0, ln((p_- - delta) / q_+))``: a lower bound on epsilon holding with probability ``>= 1 - 2a``.

    With ``delta > 0`` it bounds the epsilon of an (epsilon, delta) guarantee: such a mechanism has
    :math:`\Pr[M(x) \in E] \le e^{\varepsilon} \Pr[M(x') \in E] + \delta` for every event.

    Parameters
    ----------
    k_in, n_in : array_like
        Samples of :math:`M(x)` in the event, and samples of :math:`M(x)`.
    k_out, n_out : array_like
        The same for :math:`M(x')`.
    a : float
        The level of each one-sided Clopper-Pearson bound.
    """
    low = clopper_pearson_lower(k_in, n_in, a) - delta
    high = clopper_pearson_upper(k_out, n_out, a)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.maximum(0.0, np.nan_to_num(np.log(np.maximum(low, 0.0)) - np.log(high), nan=0.0))


def score_events(p_in: np.ndarray, p_out: np.ndarray, n_certify: float, a: float) -> np.ndarray:
    """What an event of pilot proportions ``p_in`` (under x) and ``p_out`` (under x') is expected to certify
    on ``n_certify`` fresh samples of each at level ``a``: the lower bound with those proportions, from Wilson
    score bounds (a fast stand-in for Clopper-Pearson, used only to choose events: the certificate itself is
    exact and computed on samples the choice never saw).
    """
    low = wilson_bound(np.asarray(p_in, dtype=np.float64), n_certify, a, -1.0)
    high = wilson_bound(np.asarray(p_out, dtype=np.float64), n_certify, a, 1.0)
    with np.errstate(divide="ignore"):
        return np.log(low) - np.log(high)


def wilson_bound(p: np.ndarray, n: float, a: float, sign: float) -> np.ndarray:
    """The one-sided Wilson score bound at level ``a`` (lower: ``sign = -1``, upper: ``+1``) of a proportion ``p``
    of ``n`` samples (Wilson 1927), clipped to [0, 1]: :func:`score_events`'s stand-in for Clopper-Pearson."""
    z = -special.ndtri(a)  # stats.norm.isf(a), without its argument checks (called per pair and direction)
    centre = p + z * z / (2 * n)
    spread = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return np.clip((centre + sign * spread) / (1 + z * z / n), 0.0, 1.0)


def detectable_epsilon(p_in: float, n: int, a: float, claim: float, power: float = 0.8, grid: int = 512) -> float:
    r"""The smallest loss :math:`D` this certificate detects with probability ``power``.

    The event has probability ``p_in`` under :math:`x` and :math:`p_{in} e^{-D}` under
    :math:`x'`, ``n`` samples of each, bounds at level ``a``: the smallest :math:`D` for which
    the certified lower bound exceeds ``claim`` with probability at least ``power`` (``inf``
    when even :math:`\Pr[M(x') \in E] = p_{in} e^{-60}` would not be enough).

    For a count :math:`k` under :math:`x`, the bound exceeds the claim exactly when the count
    :math:`k'` under :math:`x'` is at most :math:`K(k)`, the largest count whose upper
    Clopper-Pearson bound is below :math:`p_-(k) e^{-\text{claim}}` (the upper bound grows with
    :math:`k'`); so the power at loss :math:`D` is :math:`E_k[F(K(k); n, p_{in} e^{-D})]` with
    :math:`F` the binomial CDF, the expectation taken over ``grid`` equally likely quantiles of
    :math:`k` (a property of the design, not of the data), and :math:`D` is found by bisection.
    """
    if not 0 < p_in <= 1 or n < 1:
        return math.inf
    # the grid's quantiles repeat counts (a few hundred distinct of 512): each distinct count is searched and
    # each distinct K(k) evaluated once, then spread back over the grid (the same numbers, averaged in grid order)
    k_in, spread = np.unique(stats.binom.ppf((np.arange(grid) + 0.5) / grid, n, p_in), return_inverse=True)
    threshold = clopper_pearson_lower(k_in, n, a) * math.exp(-claim)
    below, above = np.full(k_in.size, -1.0), np.full(k_in.size, float(n))  # upper(-1) := 0 < threshold; upper(n) = 1
    while np.any(active := above - below > 1):  # only the unsettled counts (a settled one may have below = -1)
        middle = np.floor((below[active] + above[active]) / 2)
        inside = clopper_pearson_upper(middle, n, a) < threshold[active]
        below[active], above[active] = np.where(inside, middle, below[active]), np.where(inside, above[active], middle)
    largest, back = np.unique(below[spread], return_inverse=True)  # K(k): -1 where no count of x' would do

    def caught(loss: float) -> float:
        return float(np.mean(stats.binom.cdf(largest, n, p_in * math.exp(-loss))[back]))

    if caught(60.0) < power:
        return math.inf
    lo, hi = claim, 60.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if caught(mid) >= power else (mid, hi)
        if hi - lo < 1e-3:
            break
    return hi


def smallest_examined_probability(stages: Sequence[int], a: float, claim: float, confidence: float,
                                  delta: float = 0.0) -> float:
    r"""The rarest output event that stages of ``stages`` fresh outputs per input could certify, at ``confidence``.

    An event of probability :math:`p` under one input and :math:`0` under the other (an infinite loss: the
    easiest kind to certify at a given :math:`p`) is certified above ``claim`` in a stage of :math:`n` fresh
    outputs only when its count under the first input reaches :math:`k^*(n)`, the smallest count whose lower
    Clopper-Pearson bound exceeds :math:`e^{\text{claim}}` times the upper bound of a count of 0 (each at level
    ``a``).  The stages' counts are independent, so the event is certified in some stage with probability at
    most :math:`1 - \prod_s \Pr[\mathrm{Bin}(n_s, p) < k^*(n_s)]`.  This returns the smallest :math:`p` at which
    that reaches ``confidence``: an event rarer than that under every input, whatever loss it hides (an
    infinite one included), goes unseen with probability above ``1 - confidence``; that is what the budget did
    not examine.  At the audit's levels (``a`` about 1e-5, ``confidence`` 0.999) it is about 60, 80 and 150
    over the largest stage's size at claims 0.5, 1 and 2, growing as :math:`e^{\text{claim}}`; ``1.0`` when no
    stage can certify the claim.  A function of the audit's settings alone, so it is computed once per settings
    (the seeded audits of one protocol share it).
    """
    return _smallest_examined(tuple(int(n) for n in stages), float(a), float(claim), float(confidence), float(delta))


@functools.lru_cache(maxsize=64)
def _smallest_examined(stages: tuple[int, ...], a: float, claim: float, confidence: float, delta: float) -> float:
    sizes = np.asarray([n for n in stages if n >= 1], dtype=np.int64)
    needed = np.array([_count_that_certifies(int(n), a, claim, delta) for n in sizes], dtype=np.int64)
    sizes, needed = sizes[needed <= sizes], needed[needed <= sizes]
    if sizes.size == 0:
        return 1.0

    def seen(p: float) -> float:
        return 1.0 - float(np.prod(stats.binom.cdf(needed - 1, sizes, p)))

    low, high = float(np.min(needed / sizes)) * 1e-3, 1.0  # seen(p) grows with p
    for _ in range(100):
        middle = math.sqrt(low * high)
        low, high = (low, middle) if seen(middle) >= confidence else (middle, high)
        if high / low < 1 + 1e-6:
            break
    return high


def _count_that_certifies(n: int, a: float, claim: float, delta: float = 0.0) -> int:
    """The smallest count of ``n`` whose lower bound beats ``e^claim`` times a zero count's upper bound, plus
    ``delta`` (``n + 1``: none does)."""
    ceiling = float(clopper_pearson_upper(0, n, a)) * math.exp(claim) + delta
    if float(clopper_pearson_lower(n, n, a)) <= ceiling:
        return n + 1
    below, above = 0, n  # lower(below) <= ceiling < lower(above): the lower bound grows with the count
    while above - below > 1:
        middle = (below + above) // 2
        below, above = (below, middle) if float(clopper_pearson_lower(middle, n, a)) > ceiling else (middle, above)
    return above
