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
local rows of the trust ladder; the adversary sees the whole released histogram and chooses every other device's
item, not its coin).  With :math:`a` other holders of :math:`v` and :math:`b` of :math:`w`, the two counts are
independent and every other count has the same law under both, so the pair is
:math:`P = A_1^{(a)} \otimes A_0^{(b)}` against :math:`Q = A_0^{(a)} \otimes A_1^{(b)}` (:math:`A_1^{(a)}`: the
target's item counted among :math:`a` others; :math:`(Q, P)` is the pair at :math:`(b, a)`), and exactly

.. math::

    \delta(\varepsilon) = \sup_{a, b \ge 0} H(a, b), \qquad H(a, b) = \sum_y \sum_{z \in Z(y)}
    A_1^{(a)}(y) A_0^{(b)}(z) - e^\varepsilon A_0^{(a)}(y) A_1^{(b)}(z),

where :math:`Z(y)` is where the summand is positive: the released values :math:`z` with likelihood ratio
:math:`r_2(z) = A_0^{(b)}(z)/A_1^{(b)}(z) > e^\varepsilon / r_1(y)`, :math:`r_1 = A_1^{(a)}/A_0^{(a)}`.  The
ratio :math:`r_2(z) = (b + 1 - z)/((b + 1)(1 - p))` falls with :math:`z` and :math:`r_2(\bot)` lies above
:math:`r_2(K)` (a mean of :math:`r_2` below :math:`K`), so :math:`Z(y)` is empty or a prefix
:math:`\{\bot, K, \dots, m - 1\}`, :math:`m = \max(K, \lceil (b + 1)(1 - (1 - p) e^\varepsilon / r_1(y))
\rceil)`, whose sums are two binomial lower tails, :math:`P(\mathrm{Bin}(b, p) < m)` and
:math:`P(\mathrm{Bin}(b + 1, p) < m)`: :math:`H(a, b)` costs one term per released :math:`y`
(:func:`_divergences`), and a :math:`y` with :math:`r_1(y) \le e^\varepsilon (1 - p)` has an empty prefix.

The supremum over the unbounded quarter plane is closed by data processing.  Without the threshold the pair
:math:`(\mathrm{Bin}(b, p), \mathrm{Bin}(b + 1, p))` is mapped to the pair at :math:`b + 1` by adding one more
coin to both, and thresholding maps it to :math:`(A_0^{(b)}, A_1^{(b)})`; the same holds in :math:`a`.  So with
:math:`\bar H` the divergence with the coordinate at the edge left unthresholded, every :math:`H(a, b \ge B)` is
at most :math:`\bar H(a, B)`, every :math:`H(a \ge A, b)` at most :math:`\bar H(A, b)`, and

.. math::

    \delta(\varepsilon) \le \max\big(\max_{a < A, b < B} H(a, b), \max_{a < A} \bar H(a, B),
    \max_{b < B} \bar H(A, b), \bar H(A, B)\big),

with equality when the three edge terms are at most the inner maximum.  A count below :math:`K - 2` releases
nothing, as :math:`K - 2` does, so :func:`_replace_delta` sets :math:`A = B = \max(K - 2, 0) + R` and doubles
:math:`R` from 64 until they are (the exact value) or :data:`_GRID_MAX` is reached (then the smaller of this
bound and :math:`\delta_{\mathrm{add}}(\varepsilon - \log\frac{1}{1-p})`: :math:`A_0^{(b)} \le A_1^{(b)}/(1-p)`
gives :math:`H(a, b) \le H_{(1-p)e^\varepsilon}(A_1^{(a)} \| A_0^{(a)})`).  Rounding never lowers the stated
value: every term adds :data:`_ROUNDING` of its magnitude, values of :math:`y` lighter than :math:`10^{-16}` of
the add/remove lower bound count as their whole mass, and :math:`10^{-300}` is added for underflow.  Checked
against an enumeration of every device's coin in exact arithmetic (small :math:`K`) and of every pair of counts'
product law at :math:`K = 20` (``tests/accounting/test_threshold.py``).  At the ladder's :math:`(1, 10^{-8})`,
:math:`K = 20`: :math:`p = 0.2497`, where the bound through :math:`A_0 \le A_1/(1-p)` on both counts allows
0.207.

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
_EPSILON = Interval(0.0, math.inf, closed="left", privacy=True)
_DELTA = Interval(0.0, 1.0, closed="neither", privacy=True)
#: epsilons above this are read at it: delta falls with epsilon, so delta there is an upper bound (e^700 still fits
#: a float)
_LARGEST_EPSILON = 700.0


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


#: the counts of other holders the replace grid starts from and at most reaches (:func:`_replace_delta`)
_GRID_START, _GRID_MAX = 64, 512
#: the share of each term's magnitude added for floating-point rounding (relative errors are below 1e-12)
_ROUNDING = 2.0**-32


def _below(first: int, last: int, start: int, p: float) -> tuple[np.ndarray, int, int]:
    """``(S, first, start)``: ``S[n - first, m - start] = P(Bin(n, p) < m)`` for ``first <= n <= last``,
    ``start <= m <= last + 2`` (the first column from SciPy's binomial CDF, then sums of positive terms)."""
    from scipy import stats  # lazy: loads scipy (0.4-2 s)

    counts = np.arange(first, last + 1)[:, None]
    head = stats.binom.cdf(start - 1, counts, p) if start > 0 else np.zeros(counts.shape)
    pmf = stats.binom.pmf(np.arange(start, last + 2)[None, :], counts, p)
    return np.concatenate([head, head + np.cumsum(pmf, axis=1)], axis=1), first, start


def _tail(below: tuple[np.ndarray, int, int], n: np.ndarray, m: np.ndarray | int) -> np.ndarray:
    """``P(Bin(n, p) < m)`` from :func:`_below`'s table: 0 at ``m = 0`` (an empty prefix), 1 past its last column."""
    table, first, start = below
    m = np.asarray(m)
    return np.where(m == 0, 0.0, table[n - first, np.clip(m - start, 0, table.shape[1] - 1)])


def _ratio(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``first / second``, infinite where ``second`` underflowed to 0 (both masses are then 0: nothing is lost)."""
    return np.divide(first, second, out=np.full(np.broadcast(first, second).shape, np.inf), where=second > 0)


def _first_atoms(counts: np.ndarray, p: float, threshold: int, gamma: float, below):
    """The released values ``y`` of the target's old item with ``a`` other holders for each ``a`` in ``counts``
    (``threshold`` 0: unthresholded) that can lose more than ``gamma`` with some ``z``: ``(row, A1, A0, r1)``.
    Only ``s > (a + 1)(1 - 1/gamma)`` can (``r1(s) > gamma (1 - p)``), so the others are not computed."""
    from scipy import stats  # lazy: loads scipy (0.4-2 s)

    lowest = np.maximum(threshold, np.floor((counts + 1) * max(0.0, 1 - 1 / gamma)).astype(np.int64) - 1)
    sizes = np.maximum(counts + 2 - lowest, 0)
    rows = np.repeat(np.arange(counts.size), sizes)
    a = counts[rows]
    s = np.repeat(lowest, sizes) + np.arange(rows.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    with_target, without = np.asarray(stats.binom.pmf(s, a + 1, p)), np.asarray(stats.binom.pmf(s, a, p))
    with np.errstate(divide="ignore"):
        ratio = np.where(s <= a, (1 - p) * (a + 1) / np.maximum(a + 1 - s, 1), np.inf)
    if threshold > 0:  # the bottom: no count released
        bottom_with, bottom_without = _tail(below, counts + 1, threshold), _tail(below, counts, threshold)
        rows = np.concatenate([np.arange(counts.size), rows])
        with_target, without = np.concatenate([bottom_with, with_target]), np.concatenate([bottom_without, without])
        ratio = np.concatenate([_ratio(bottom_with, bottom_without), ratio])
    keep = ratio > gamma * (1 - p)
    return rows[keep], with_target[keep], without[keep], ratio[keep]


def _divergences(atoms, size: int, counts: np.ndarray, p: float, threshold: int, gamma: float,
                 below) -> np.ndarray:
    """``H(a, b)`` (module docstring) for the ``size`` rows of ``atoms`` and each ``b`` in ``counts`` (the new
    item's count thresholded at ``threshold``, 0: not), rounding and pruned mass added: ``(size, len(counts))``."""
    rows, with_target, without, ratio, pruned = atoms
    with np.errstate(divide="ignore"):
        needed = gamma / ratio  # r2(z) must exceed this
    out = np.empty((size, counts.size))
    step = max(1, 2**18 // max(rows.size, 1))
    for start in range(0, counts.size, step):
        b = counts[start:start + step, None]
        prefix = np.clip(np.ceil((b + 1) * (1 - (1 - p) * needed)), 0, b + 1).astype(np.int64)
        if threshold > 0:  # the bottom first: released counts only after it
            bottom = _ratio(_tail(below, b, threshold), _tail(below, b + 1, threshold))
            prefix = np.where(bottom > needed, np.maximum(prefix, threshold), 0)
        gain, loss = with_target * _tail(below, b, prefix), gamma * without * _tail(below, b + 1, prefix)
        terms = np.maximum(gain - loss, 0.0) + _ROUNDING * (gain + loss)
        flat = (np.arange(b.shape[0])[:, None] * size + rows).ravel()
        out[:, start:start + step] = np.bincount(flat, terms.ravel(), b.shape[0] * size).reshape(-1, size).T
    return out + pruned[:, None] + 1e-300


def _lower(atoms, size: int, gamma: float) -> float:
    """The add/remove part of the worst row, ``max_a sum_y (A1 - gamma A0)_+``: a lower bound on the replace delta
    (the limit of ``H(a, b)`` as ``b`` grows)."""
    rows, with_target, without, _ = atoms
    return float(np.max(np.bincount(rows, np.maximum(with_target - gamma * without, 0.0), size), initial=0.0))


def _pruned(atoms, size: int, floor: float):
    """``atoms`` without the values lighter than ``floor``, each counted as its whole mass in its row's
    ``pruned``: ``(rows, A1, A0, r1, pruned)``."""
    rows, with_target, without, ratio = atoms
    light = with_target < floor
    pruned = np.bincount(rows[light], with_target[light], size)
    return rows[~light], with_target[~light], without[~light], ratio[~light], pruned


def _replace_bound(epsilon: float, p: float, threshold: int, reach: int) -> tuple[float, bool]:
    """The right side of the module docstring's bound with ``A = B = base + reach``, and whether it is exact: a
    count below ``base = K - 2`` releases nothing, as ``base`` does, so the grid starts there."""
    gamma, base = math.exp(epsilon), max(threshold - 2, 0)
    top, grid = base + reach, base + np.arange(reach)
    below, past = _below(base, top, threshold, p), _below(top, top + 1, 0, p)
    inner = _first_atoms(grid, p, threshold, gamma, below)
    floor = 1e-16 * _lower(inner, reach, gamma)
    inner, edge = _pruned(inner, reach, floor), _pruned(_first_atoms(np.array([top]), p, 0, gamma, None), 1, floor)
    best = float(_divergences(inner, reach, grid, p, threshold, gamma, below).max())
    edges = max(float(_divergences(inner, reach, np.array([top]), p, 0, gamma, past).max()),
                float(_divergences(edge, 1, grid, p, threshold, gamma, below).max()),
                float(_divergences(edge, 1, np.array([top]), p, 0, gamma, past).max()))
    return max(best, edges), edges <= best * (1 + 1e-9)


def _replace_delta(epsilon: float, p: float, threshold: int) -> float:
    """The exact replace-neighbour delta (module docstring): the grid of counts doubled until its edges are below
    its maximum; past :data:`_GRID_MAX` the edges' bound, or the one through ``A0 <= A1/(1-p)`` if smaller."""
    if threshold > _MAX_HOLDERS:
        raise InvalidPrivacyParameterError(
            f"sample-and-threshold with a threshold of {threshold:,} under replace neighbours: its worst counts of "
            f"other holders lie beyond {_MAX_HOLDERS:,}, too many to scan; choose a threshold of at most that.")
    reach = _GRID_START
    while True:
        value, exact = _replace_bound(epsilon, p, threshold, reach)
        if exact:
            return min(1.0, value)
        if reach >= _GRID_MAX:
            break
        reach *= 2
    try:
        return min(1.0, value, _direction_delta(epsilon + math.log1p(-p), p, threshold, "add"))
    except InvalidPrivacyParameterError:  # its scan too slow: the edges' bound stands
        return min(1.0, value)


@validate_params({"epsilon": _EPSILON, "p": _P, **_COUNTS})
def threshold_delta(epsilon: float, p: float, threshold: int, *, colluding: int = 0,
                    neighbouring: str = "add-remove") -> float:
    r"""The exact :math:`\delta(\varepsilon)` of sample-and-threshold with sampling probability ``p`` and threshold
    ``threshold`` (:math:`K`) when ``colluding`` reports of the target's item are the adversary's (module docstring),
    under either relation (replace: exact unless its worst pair lies past :data:`_GRID_MAX` other holders, then an
    upper bound)."""
    effective = _effective(threshold, colluding)
    epsilon = min(float(epsilon), _LARGEST_EPSILON)
    if neighbouring == "add-remove":
        return max(_direction_delta(epsilon, p, effective, "add"), _direction_delta(epsilon, p, effective, "remove"))
    return _replace_delta(epsilon, p, effective)


def _fits(epsilon: float, p: float, threshold: int, colluding: int, neighbouring: str, delta: float) -> bool:
    """Whether :func:`threshold_delta` is at most ``delta`` (a curve too slow to scan does not fit: never assumed)."""
    effective = _effective(threshold, colluding)
    epsilon = min(epsilon, _LARGEST_EPSILON)
    try:
        if neighbouring == "add-remove":
            return bool(_direction_delta(epsilon, p, effective, "add", delta)
                        and _direction_delta(epsilon, p, effective, "remove", delta))
        return _replace_delta(epsilon, p, effective) <= delta
    except InvalidPrivacyParameterError:
        return False


@validate_params({"p": _P, "delta": _DELTA, **_COUNTS})
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


@validate_params({"epsilon": _EPSILON, "delta": _DELTA, **_COUNTS})
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
