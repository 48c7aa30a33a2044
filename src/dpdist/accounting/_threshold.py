r"""Sample-and-threshold, accounted exactly: each device reports with probability :math:`p`; only counts of at least :math:`K` reports are released.

The mechanism (Bharadwaj & Cormode, "Sample and Threshold Differential Privacy: Histograms and Applications",
AISTATS 2022, sec. 3; deployed by Brave's Nebula, Shamsabadi, Snyder, Giles, Bellet & Haddadi, arXiv:2409.09676,
in P3A with :math:`K = 20`, :math:`p = 0.105` for a stated central :math:`(1, 10^{-8})`): every device flips its own
coin and reports its item with probability :math:`p`; the server releases, for every item, the number :math:`S` of
reports of it when :math:`S \ge K` and nothing (:math:`\bot`) otherwise.  Nebula's own statement of its theorem was
not at hand here (it is not among the project's papers), so dpdist does not restate it: it computes the mechanism's
*exact* privacy curve, which any valid statement of the same mechanism must lie above.

**Add/remove neighbours** (a device present or absent, the relation of a device that decides whether to take part).
Let :math:`n` devices other than the target hold the target's item (chosen by the adversary, any :math:`n \ge 0`).
Without the target the item's count is :math:`S \sim \mathrm{Bin}(n, p)`, law :math:`A_0`; with it,
:math:`S \sim \mathrm{Bin}(n + 1, p)`, law :math:`A_1`; both seen through the threshold (counts below :math:`K`
merged into :math:`\bot`), and no other item's count moves.  So, exactly,

.. math::

    \delta(\varepsilon) = \sup_{n \ge 0} \max\big(H_{e^\varepsilon}(A_1 \| A_0), H_{e^\varepsilon}(A_0 \| A_1)\big),
    \qquad H_\gamma(P \| Q) = \sum_y (P(y) - \gamma Q(y))_+ ,

summed over the released counts :math:`y \ge K` and :math:`\bot`, with :math:`A_1(s)/A_0(s) = (1-p)(n+1)/(n+1-s)`
for a released :math:`s`.  Removal is bounded by :math:`A_0 \le A_1/(1-p)` (pointwise, :math:`\bot` included), so
its part vanishes for :math:`\varepsilon \ge \log\frac{1}{1-p}`.  The supremum is a maximum over
:math:`n \le N`: beyond, each part is at most a binomial tail that Chernoff's bound
:math:`e^{-(n+1)\,\mathrm{KL}(\beta \| p)}` makes negligible (:func:`_enough`; the scan stops where that bound is
below :math:`10^{-6}` of the largest value found, or :math:`10^{-300}`, and states the larger of the two).

**Replace neighbours** (the target's item changed from :math:`v` to :math:`w`, the relation of the shuffled and
local rows of the trust ladder): the two counts are independent, :math:`P = A_1^{(v)} \otimes A_0^{(w)}` against
:math:`Q = A_0^{(v)} \otimes A_1^{(w)}`.  Since :math:`A_0 \le A_1/(1-p)`, :math:`H_{e^\varepsilon}(P \| Q) \le
H_{e^{\varepsilon - \varepsilon_r}}(A_1 \| A_0)/(1-p)` with :math:`\varepsilon_r = \log\frac{1}{1-p}`, and the same
for :math:`(Q, P)`; dpdist states :math:`\delta_{\mathrm{replace}}(\varepsilon) = \min(1,
\delta_{\mathrm{add}}(\varepsilon - \varepsilon_r)/(1-p))`, an upper bound (checked against every pair of counts
enumerated in ``tests/accounting/test_threshold.py``).

**Devices the adversary runs** (``colluding``): a device that always reports (it does not sample itself), or a
report the server forges, counts towards :math:`K` with certainty, so :math:`k` of them holding the target's item
leave an effective threshold :math:`K - k`; at :math:`K - k \le 1` a lone sampled target is released and
:math:`\delta \ge p`.  What this covers is the released histogram only: whatever else the aggregation server sees
(in STAR, on which Nebula builds, how many reports share each unrevealed item) is outside it.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._validation import Integer, Interval, Options, validate_params
from ..errors import InvalidPrivacyParameterError

__all__ = ["threshold_delta", "threshold_epsilon", "threshold_sampling", "NEIGHBOURING"]

NEIGHBOURING = ("add-remove", "replace")
#: the scan over the other holders' count stops where the tail bound is below this share of the largest value
_TAIL_SHARE = 1e-6
#: and at the latest here (a p so small that the tails decay this slowly is refused, not approximated)
_MAX_HOLDERS = 5_000


#: the rules of the public functions' arguments (their tables generate the bad-input tests)
_P = Interval(0.0, 1.0, closed="neither", privacy=True)
_COUNTS = {"threshold": Integer(low=1), "colluding": Integer(low=0), "neighbouring": Options(NEIGHBOURING)}


def _effective(threshold: int, colluding: int) -> int:
    """The sampled reports of other users the target's item still needs to be released."""
    return max(int(threshold) - int(colluding), 0)


def _pair(n: int, p: float, threshold: int) -> tuple[np.ndarray, np.ndarray]:
    """``(A1, A0)``: the released laws with and without the target, on ``[bottom, threshold, ..., n + 1]``.

    Those of up to :data:`_KEPT_HOLDERS` other holders are kept (read-only, about 16 MB at most): :func:`threshold_epsilon`
    and :func:`threshold_sampling` search over epsilon or p, and every step scans the same counts again.  They are
    computed :data:`_BLOCK` counts of other holders at a time (a scan asks for n, n + 1, ...: two SciPy calls a block
    instead of four a count, the same numbers)."""
    if n > _KEPT_HOLDERS:
        return _laws(np.array([n]), p, threshold)[0]
    return _kept_block(n - n % _BLOCK, p, threshold)[n % _BLOCK]


#: the counts of other holders whose laws :func:`_pair` keeps
_KEPT_HOLDERS = 1_000

#: the counts of other holders whose laws :func:`_kept_block` computes together
_BLOCK = 16


@functools.lru_cache(maxsize=1024 // _BLOCK)
def _kept_block(start: int, p: float, threshold: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`_laws` of ``start, ..., start + _BLOCK - 1`` other holders, kept and made read-only."""
    laws = _laws(np.arange(start, start + _BLOCK), p, threshold)
    for pair in laws:
        for law in pair:
            law.setflags(write=False)
    return laws


def _laws(ns: np.ndarray, p: float, threshold: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The laws of :func:`_pair` for each count ``n`` of other holders in ``ns``, computed (SciPy's binomial is
    elementwise: one call for every count of every ``n``, the values beyond ``n + 1`` dropped)."""
    from scipy import stats  # lazy: loads scipy (0.4-2 s)

    low = max(threshold, 0)
    counts = np.arange(low, int(ns.max()) + 2)[None, None, :]
    holders = np.stack([ns + 1, ns], axis=1)  # (len(ns), 2): with the target, without it
    laws = np.asarray(stats.binom.pmf(counts, holders[:, :, None], p))
    bottoms = np.asarray(stats.binom.cdf(threshold - 1, holders, p)) if threshold > 0 else np.zeros(holders.shape)
    pairs = []
    for row, n in enumerate(ns.tolist()):
        size = max(n + 2 - low, 0)  # no count at or above the threshold: the bottom alone
        pairs.append((np.concatenate(([float(bottoms[row, 0])], laws[row, 0, :size])),
                      np.concatenate(([float(bottoms[row, 1])], laws[row, 1, :size]))))
    return pairs


def _hockey(first: np.ndarray, second: np.ndarray, epsilon: float) -> float:
    return float(np.sum(np.maximum(first - math.exp(epsilon) * second, 0.0)))


def _kl(a: float, b: float) -> float:
    """KL(Bernoulli(a) || Bernoulli(b))."""
    terms = 0.0 if a <= 0 else a * math.log(a / b)
    return terms + (0.0 if a >= 1 else (1 - a) * math.log((1 - a) / (1 - b)))


def _tail_bound(n: int, p: float, epsilon: float, direction: str) -> float:
    """A bound, decreasing in ``n``, on ``direction``'s part at every count of other holders beyond ``n`` (``epsilon``
    > 0; module docstring): adding the target loses more than epsilon iff S > upper (n + 1), removing it iff S <
    lower (n + 1), a binomial tail either way."""
    if direction == "add":
        upper = 1.0 - (1.0 - p) * math.exp(-epsilon)
        return math.exp(-(n + 1) * _kl(upper, p))
    lower = 1.0 - (1.0 - p) * math.exp(epsilon)
    return 0.0 if lower <= 0 else math.exp(-(n + 1) * _kl(lower, p))


def _scan(epsilon: float, p: float, threshold: int, direction: str):
    """``(largest divergence so far, tail bound beyond)`` after each count of other holders, ``epsilon >= 0``."""
    best, n = 0.0, 0
    while n <= _MAX_HOLDERS:
        with_target, without = _pair(n, p, threshold)
        pair = (with_target, without) if direction == "add" else (without, with_target)
        best = max(best, _hockey(*pair, epsilon))
        yield best, (_tail_bound(n, p, epsilon, direction) if n + 1 >= threshold else 1.0)
        n += 1
    raise InvalidPrivacyParameterError(
        f"sample-and-threshold with p = {p!r} at epsilon {epsilon!r}: the worst count of other holders lies beyond "
        f"{_MAX_HOLDERS:,} (its tails decay too slowly to scan); choose a larger epsilon or p.")


def _direction_delta(epsilon: float, p: float, threshold: int, direction: str, within: float | None = None):
    """``sup_n H_{e^epsilon}`` of adding (``"add"``: A1 against A0) or removing the target (``"remove"``); with
    ``within``, whether it is at most ``within`` (the scan stops as soon as that is decided)."""
    if epsilon < 0:  # H_g(P||Q) = 1 - g + g H_{1/g}(Q||P) for g < 1
        other = "remove" if direction == "add" else "add"
        value = min(1.0, -math.expm1(epsilon) + math.exp(epsilon) * _direction_delta(-epsilon, p, threshold, other))
        return value if within is None else value <= within
    if direction == "remove" and epsilon >= -math.log1p(-p):
        return 0.0 if within is None else True  # A0 <= A1 / (1 - p) pointwise
    for best, tail in _scan(epsilon, p, threshold, direction):
        if within is not None and best > within:
            return False
        if tail <= _TAIL_SHARE * best or tail < 1e-300 or (within is not None and tail <= within):
            return min(1.0, max(best, tail)) if within is None else True
    raise AssertionError("unreachable: the scan ends or raises")


@validate_params({"p": _P, **_COUNTS})
def threshold_delta(epsilon: float, p: float, threshold: int, *, colluding: int = 0,
                    neighbouring: str = "add-remove") -> float:
    r"""The exact :math:`\delta(\varepsilon)` of sample-and-threshold with sampling probability ``p`` and threshold
    ``threshold`` (:math:`K`) when ``colluding`` reports of the target's item are the adversary's (module docstring);
    under ``"replace"`` neighbours an upper bound from the add/remove curve."""
    effective = _effective(threshold, colluding)
    epsilon = float(epsilon)
    if neighbouring == "add-remove":
        return max(_direction_delta(epsilon, p, effective, "add"), _direction_delta(epsilon, p, effective, "remove"))
    shift = -math.log1p(-p)
    return min(1.0, _direction_delta(epsilon - shift, p, effective, "add") / (1.0 - p))


def _fits(epsilon: float, p: float, threshold: int, colluding: int, neighbouring: str, delta: float) -> bool:
    """Whether :func:`threshold_delta` is at most ``delta`` (a curve too slow to scan does not fit: never assumed)."""
    effective = _effective(threshold, colluding)
    try:
        if neighbouring == "add-remove":
            return bool(_direction_delta(epsilon, p, effective, "add", delta)
                        and _direction_delta(epsilon, p, effective, "remove", delta))
        return bool(_direction_delta(epsilon + math.log1p(-p), p, effective, "add", delta * (1.0 - p)))
    except InvalidPrivacyParameterError:
        return False


@validate_params({"p": _P, "delta": Interval(0.0, 1.0, closed="neither", privacy=True), **_COUNTS})
def threshold_epsilon(p: float, threshold: int, delta: float, *, colluding: int = 0,
                      neighbouring: str = "add-remove") -> float:
    """The smallest epsilon (to 1e-4 relative) with :func:`threshold_delta` at most ``delta``; ``inf`` if none (a
    lone sampled report released: ``p > delta``)."""

    def within(epsilon: float) -> bool:
        return _fits(epsilon, p, threshold, colluding, neighbouring, delta)

    high = 1.0
    while not within(high):
        high *= 2
        if high > 64:
            return math.inf
    low = 0.0
    while high - low > 1e-4 * high:
        middle = 0.5 * (low + high)
        low, high = (low, middle) if within(middle) else (middle, high)
    return high


@validate_params(_COUNTS)
def threshold_sampling(epsilon: float, delta: float, threshold: int, *, colluding: int = 0,
                       neighbouring: str = "add-remove") -> float:
    """The largest sampling probability (to 1e-4 relative) whose :func:`threshold_delta` at ``epsilon`` is at most
    ``delta``; 0.0 when none is (the colluding reports reach the threshold with a lone target's help, which a
    sampling probability at or below ``delta`` still allows only if ``delta`` covers it)."""

    def within(p: float) -> bool:
        return _fits(epsilon, p, threshold, colluding, neighbouring, delta)

    low, high = 0.0, 1.0 - 1e-9
    if within(high):
        return high
    probe = min(0.5, high)
    while not within(probe):  # find a p that fits, by halving (the delta grows with p)
        high, probe = probe, probe / 2
        if probe < 1e-12:
            return 0.0
    low = probe
    while high - low > 1e-4 * low:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if within(middle) else (low, middle)
    return low
