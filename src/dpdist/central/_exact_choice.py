r"""Exact sampling of a discrete choice with transcendental weights: the Gumbel-max trick, certified.

An exponential mechanism on a finite output set draws :math:`i` with probability
:math:`w_i / \sum_k w_k`, :math:`\log w_i = s_i` (for a quantile, :math:`s_i = \ln c_i - \gamma
|r_i - t|`: :math:`c_i` public grid points share the rank :math:`r_i`).  The weights are
transcendental, so no finite-precision computation of them is exact; sampling with floats
(``argmax(s + Gumbel)`` in doubles, or an inverse CDF of float weights) draws from a law that
differs from the mechanism's by the rounding, which is what a privacy proof cannot allow
(Mironov 2012; Ilvento 2020 for the exponential mechanism).  This module draws *exactly*:

* **Gumbel-max.**  With :math:`U_i` independent uniform on (0, 1) and :math:`G_i = -\ln(-\ln
  U_i)`, :math:`\arg\max_i (s_i + G_i)` has law :math:`w_i / \sum_k w_k` (Gumbel 1954; the "racing"
  sampler of the JointExp and AQ code).  The uniforms are real numbers drawn lazily, as in
  OpenDP's partially sampled random numbers: the first 53 bits (an integer :math:`k_i`, exact)
  give :math:`U_i \in [k_i 2^{-53}, (k_i+1) 2^{-53})` and, :math:`G` being increasing, an interval
  for :math:`G_i`.
* **Certified comparisons.**  Each score :math:`s_i + G_i` is known as an interval: the doubles'
  value widened by a margin far above any rounding error (:data:`FLOAT_MARGIN` relative,
  :math:`2^9` units in the last place; every quantity is a few correctly rounded or faithful
  libm operations away from exact inputs).  When the lower end of the best interval lies above
  the upper end of every other, the argmax of the *exact* scores is known, and it is returned.
* **Refinement.**  Otherwise the contenders (the intervals that reach the best lower end) are
  refined: 64 more random bits for each of their uniforms, and their scores at
  :data:`DIGITS` more decimal digits (``decimal``, whose ``ln`` and ``exp`` are correctly rounded)
  from the exact rational inputs, until one interval clears the others.  Refinement only
  narrows intervals, so the decision is that of the exact scores; it is needed with probability
  about the contenders' margin (below :math:`10^{-10}` for the releases here), and ends with
  probability one.

The returned index therefore has exactly the mechanism's law; ``tests/central/test_exact_choice.py``
enumerates small instances (exact probabilities from the rationals, at 40 digits) against
seeded draws (chi-square), and forces the refinement path.
"""

from __future__ import annotations

import decimal
import functools
from typing import Callable

import numpy as np

__all__ = ["FLOAT_MARGIN", "DIGITS", "certified_gumbel_max"]

#: Relative margin put around every double-precision score and Gumbel value (2^9 units in the last place).
FLOAT_MARGIN = 2.0**-44
#: Decimal digits added at each refinement step (and the first step's precision).
DIGITS = 40
#: Candidates this far below the best score race as one pooled candidate.
FAR = 40.0
_BITS = 53


def _float_gumbel_bounds(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper ends of :math:`-\\ln(-\\ln U)` for :math:`U \\in [k 2^{-53}, (k+1) 2^{-53})`, widened."""

    def gumbel(numerator: np.ndarray) -> np.ndarray:
        u = numerator * 2.0**-_BITS
        with np.errstate(divide="ignore"):  # u = 0 gives -inf, u = 1 gives +inf: both bounds are right
            minus_log = np.where(u > 0.5, -np.log1p(-(2.0**_BITS - numerator) * 2.0**-_BITS), -np.log(u))
            return -np.log(minus_log)

    low, high = gumbel(k.astype(np.float64)), gumbel(k.astype(np.float64) + 1.0)
    return low - FLOAT_MARGIN * (np.abs(low) + 1.0), high + FLOAT_MARGIN * (np.abs(high) + 1.0)


@functools.lru_cache(maxsize=16)
def _log_two(precision: int, rounding: str) -> decimal.Decimal:
    """:math:`\\ln 2` correctly rounded at ``precision`` digits (the same number for every context of them)."""
    return decimal.Context(prec=precision, rounding=rounding).ln(decimal.Decimal(2))


def _decimal_gumbel_bounds(k: int, bits: int, context: decimal.Context) -> tuple[decimal.Decimal, decimal.Decimal]:
    """The same interval for :math:`U \\in [k 2^{-b}, (k+1) 2^{-b})` at the context's precision, widened."""
    log_two = _log_two(context.prec, context.rounding)
    margin = decimal.Decimal(10) ** (-context.prec + 6)

    def gumbel(numerator: int) -> decimal.Decimal:
        if numerator <= 0:
            return decimal.Decimal("-Infinity")
        if numerator >= 2**bits:
            return decimal.Decimal("Infinity")
        minus_log = context.subtract(context.multiply(bits, log_two), context.ln(decimal.Decimal(numerator)))
        return -context.ln(minus_log)

    with decimal.localcontext(context):
        low, high = gumbel(k), gumbel(k + 1)
        low_slack = margin * (abs(low) + 1) if low.is_finite() else 0
        high_slack = margin * (abs(high) + 1) if high.is_finite() else 0
        return low - low_slack, high + high_slack


def certified_gumbel_max(
    scores: np.ndarray,
    score_error: np.ndarray | float,
    exact_score: Callable[[int, decimal.Context], decimal.Decimal],
    rng: np.random.Generator,
    better: Callable[[], tuple[np.ndarray, np.ndarray | float]] | None = None,
) -> int:
    r"""Index :math:`\arg\max_i (s_i + G_i)` of exact scores with exact Gumbels (see the module docstring).

    Candidates more than :data:`FAR` below the best score are raced as one: the largest of
    :math:`s_i + G_i` over a set :math:`O` is :math:`\log\sum_{i \in O} e^{s_i} + G` with one Gumbel
    :math:`G`, independent of which :math:`i` attains it (max-stability of the Gumbel law), so the
    set takes part with one uniform and, if it wins, the choice within it is a second race.  Only
    the candidates near the top get uniforms of their own.

    Parameters
    ----------
    scores : ndarray
        The scores :math:`s_i` in doubles (``-inf`` for a weight of zero, never chosen).
    score_error : ndarray or float
        A bound on ``|scores - s|`` (the exact scores), before :data:`FLOAT_MARGIN` is added.
    exact_score : callable
        ``exact_score(i, context)``: :math:`s_i` at the context's precision, within
        ``10 ** (-context.prec + 6) * (|s_i| + 1)`` of the exact value.
    rng : numpy.random.Generator
        The source of the uniforms' bits.
    better : callable, optional
        ``better()``: the same scores and error bound from a more precise computation (e.g. long
        double tables), tried on the contenders before any decimal refinement.
    """
    scores = np.asarray(scores, dtype=np.float64)
    error = np.broadcast_to(np.asarray(score_error, dtype=np.float64), scores.shape)
    top = float(np.max(scores))
    far = scores < top - FAR
    sharper = None if better is None else _full(better, scores.shape)
    if not far.any():
        return _race(scores, error, exact_score, rng, sharper)
    near = np.flatnonzero(~far)
    rest = np.flatnonzero(far & np.isfinite(scores))
    if rest.size == 0:
        return int(near[_race(scores[near], error[near], lambda i, c: exact_score(int(near[i]), c), rng,
                              _subset(sharper, near))])
    pooled, pooled_error = _pool(scores[rest], error[rest])

    def exact(position: int, context):
        if position < near.size:
            return exact_score(int(near[position]), context)
        return context.ln(sum(context.exp(exact_score(int(i), context)) for i in rest))

    def sharper_pooled() -> tuple[np.ndarray, np.ndarray]:
        assert sharper is not None
        values, errors = sharper()
        pooled_values = _pool(values[rest], errors[rest])
        return np.append(values[near], pooled_values[0]), np.append(errors[near], pooled_values[1])

    winner = _race(np.append(scores[near], pooled), np.append(error[near], pooled_error), exact, rng,
                   None if sharper is None else sharper_pooled)
    if winner < near.size:
        return int(near[winner])
    chosen = certified_gumbel_max(scores[rest], error[rest], lambda i, c: exact_score(int(rest[i]), c), rng,
                                  _subset(sharper, rest))
    return int(rest[chosen])


#: A more precise computation of the scores: ``() -> (scores, error bounds)``
Sharper = Callable[[], tuple[np.ndarray, np.ndarray]]


def _full(better: Callable[[], tuple[np.ndarray, np.ndarray | float]], shape: tuple[int, ...]) -> Sharper:
    """``better`` with its error bound broadcast to the scores' shape."""
    def call() -> tuple[np.ndarray, np.ndarray]:
        values, errors = better()
        return np.asarray(values, dtype=np.float64), np.broadcast_to(np.asarray(errors, dtype=np.float64), shape)
    return call


def _subset(sharper: Sharper | None, indices: np.ndarray) -> Sharper | None:
    """``sharper`` restricted to the candidates ``indices``."""
    if sharper is None:
        return None
    return lambda: _take(sharper(), indices)


def _take(pair: tuple[np.ndarray, np.ndarray], indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return pair[0][indices], pair[1][indices]


def _pool(scores: np.ndarray, error: np.ndarray) -> tuple[float, float]:
    """Score and error bound of a pooled candidate: a sum of positive terms, each term's error carried over."""
    pooled = float(np.logaddexp.reduce(scores))
    return pooled, float(np.max(error)) + 4.0 * scores.size * 2.0**-52 * (abs(pooled) + 1.0)


def _intervals(
    scores: np.ndarray, error: np.ndarray, gumbel_low: np.ndarray, gumbel_high: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper ends of every ``score + Gumbel`` (``-inf`` for a zero weight)."""
    finite = np.isfinite(scores)
    slack = error + FLOAT_MARGIN * (np.abs(scores) + 1.0)
    with np.errstate(invalid="ignore"):
        return (np.where(finite, scores - slack + gumbel_low, -np.inf),
                np.where(finite, scores + slack + gumbel_high, -np.inf))


def _race(
    scores: np.ndarray, error: np.ndarray, exact_score: Callable[[int, decimal.Context], decimal.Decimal],
    rng: np.random.Generator, better: Sharper | None = None,
) -> int:
    """The certified Gumbel-max over every candidate, each with its own uniform."""
    k = rng.integers(0, 2**_BITS, size=scores.size, dtype=np.int64)
    gumbel_low, gumbel_high = _float_gumbel_bounds(k)
    low, high = _intervals(scores, error, gumbel_low, gumbel_high)
    best = int(np.argmax(low))
    contenders = np.flatnonzero(high >= low[best])
    if contenders.size > 1 and better is not None:  # both enclose the exact score: keep their intersection
        sharp, sharp_error = better()
        sharp_low, sharp_high = _intervals(sharp[contenders], sharp_error[contenders],
                                           gumbel_low[contenders], gumbel_high[contenders])
        low[contenders] = np.maximum(low[contenders], sharp_low)
        high[contenders] = np.minimum(high[contenders], sharp_high)
        best = int(contenders[np.argmax(low[contenders])])
        contenders = contenders[high[contenders] >= low[best]]
    if contenders.size == 1:
        return int(contenders[0])
    return _refine([int(i) for i in contenders], [int(k[i]) for i in contenders], exact_score, rng)


def _refine(candidates: list[int], numerators: list[int], exact_score, rng: np.random.Generator) -> int:
    """Decide among ``candidates`` with more bits of their uniforms and more digits of their scores."""
    bits, digits = _BITS, 0
    while True:
        bits += 64
        digits += DIGITS
        numerators = [(k << 64) | int(rng.integers(0, 2**64, dtype=np.uint64)) for k in numerators]
        context = decimal.Context(prec=digits, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
        lows, highs = [], []
        with decimal.localcontext(context):
            margin = decimal.Decimal(10) ** (-digits + 6)
            for index, numerator in zip(candidates, numerators):
                score = exact_score(index, context)
                slack = margin * (abs(score) + 1)
                gumbel_low, gumbel_high = _decimal_gumbel_bounds(numerator, bits, context)
                # rounding of these sums moves them by an ulp, far inside the margins' 10^6 ulps
                lows.append(score - 2 * slack + gumbel_low)
                highs.append(score + 2 * slack + gumbel_high)
        best = max(range(len(candidates)), key=lambda position: lows[position])
        keep = [position for position in range(len(candidates)) if highs[position] >= lows[best]]
        if len(keep) == 1:
            return candidates[best]
        candidates = [candidates[position] for position in keep]
        numerators = [numerators[position] for position in keep]
