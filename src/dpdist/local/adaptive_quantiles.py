r"""Adaptive multi-round LDP quantiles: a noisy k-ary search over a public grid, one user group per round.

Aamand, Boninsegna, Gentle, Imola and Pagh ("Lightweight Protocols for Distributed Private
Quantile Estimation", ICML 2025, arXiv:2502.02990) show that an *adaptive* protocol, whose later
questions depend on the earlier answers, estimates a quantile of values on a grid of :math:`B`
points within rank error :math:`\alpha` from :math:`O(\log B/(\varepsilon^2\alpha^2))` users,
where every non-adaptive (one-round) protocol needs more by logarithmic factors in :math:`B`.  The
paper's text is not in the project's paper folder; this module builds the standard batched design
of its noisy binary search (the paper's batched variant, one batch of users per step), stated here:

* The users are split at random into ``rounds`` disjoint groups, round :math:`r` getting a share
  proportional to :math:`r` (:meth:`AdaptiveQuantiles.group_sizes`).
* In round :math:`r` every user of group :math:`r` answers one question "is my value below
  :math:`t_c`?" through binary randomized response at the full :math:`\varepsilon`
  (:class:`~dpdist.local.numerical.threshold.ThresholdRR`, the round's public cuts).  A user
  answers once, in one round, so the whole protocol is :math:`\varepsilon`-LDP per user
  (parallel composition over disjoint groups; :attr:`AdaptiveQuantiles.guarantee`).
* After round :math:`r` the collector pools the answers of every round by cut, debiases them
  (:func:`~dpdist.local.numerical.threshold.cut_fractions`) and fits a non-decreasing CDF to the
  pooled fractions (weighted isotonic regression, weights the inverse plug-in variances).  Each
  quantile :math:`q` gets a search bracket (:meth:`AdaptiveQuantiles.brackets`): from the last asked
  cut whose pooled fraction is below :math:`q` by more than ``SEARCH_Z`` = 2 standard errors to the
  first above it by as much (and at least the two consecutive cuts where the fit crosses :math:`q`).
* Round :math:`r + 1` asks, for every quantile, the bracket's two ends again and ``splits`` cuts
  evenly inside it: a k-ary search step where the answers allow one, and a new measurement of the
  same region (by new users) where the cuts are already closer in rank than the noise, so the search
  never zooms into noise, and a bracket noise misplaced is corrected by the pooled answers (the
  search backtracks).  The first round splits the whole grid evenly, into enough pieces that the
  later rounds can reach single cells.  Quantiles whose brackets share cuts share their questions.
* The release (:meth:`AdaptiveQuantiles.estimate`) puts each quantile where a weighted straight line
  through the pooled fractions inside the last round's search bracket crosses :math:`q` (every answer
  near the quantile counts), or interpolates the isotonic fit between the two cuts around it where
  that window is stale; the interval of each quantile is read off simultaneous Clopper-Pearson bounds
  of the pooled per-cut fractions (Bonferroni over the asked cuts): the largest cut whose upper bound
  is below :math:`q` and the smallest whose lower bound reaches it.

``adaptive_quantiles(x, q, epsilon=..., bounds=...)`` simulates a whole run on a population;
the collection service runs the same plan round by round (docs/explanation/adaptive-quantiles.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._missing import missing_policy, with_policy_note
from .._guarantee import PrivacyGuarantee
from .._rng import check_rng
from .._types import ArrayLike, FloatBounds, Seed
from .._validation import (
    EPSILON,
    Admits,
    Bounds,
    Dict,
    Integer,
    Items,
    Interval,
    Optional,
    check_param,
    check_real_values,
    validate_params,
)
from ..errors import InvalidParameterError
from ..estimates import QuantileRelease
from ..estimates._quantiles import check_q
from ._aggregator import Aggregator
from .numerical.threshold import MAX_CUTS, ThresholdRR, cut_fractions

__all__ = ["AdaptiveQuantiles", "adaptive_quantiles"]

_OWNER = "local.adaptive_quantiles"
#: a search bracket reaches from the last cut confidently below q to the first confidently above it, at this many
#: standard errors of the pooled fraction (pointwise: it steers the search; the released intervals are simultaneous)
SEARCH_Z = 2.0


class AdaptiveQuantiles:
    """The public plan of an adaptive quantile search: what each round asks and what the answers release.

    Parameters
    ----------
    q : array_like of float
        The probabilities, each in (0, 1).
    epsilon : float
        Each user's budget (one answer at the full epsilon).
    bounds : (float, float)
        Range of the values; the grid cuts it into ``grid_size`` equal cells.
    rounds : int, optional
        Number of rounds (user groups). Default 5 (with the default grid and splits: a first round of 15
        cuts, then four 4-fold refinements down to single cells; benchmarks/bench_adaptive_quantiles.py).
    grid_size : int
        :math:`B`, cells of the public grid (default 4096).
    splits : int, optional
        Cuts asked inside each quantile's bracket per round (besides its two ends); default 3 (a bracket
        shrinks 4-fold per round; the final straight-line fit reads between the cuts).
    level : float
        Confidence of the released intervals (simultaneous over the asked cuts).
    """

    @validate_params({"epsilon": EPSILON, "bounds": Bounds(), "rounds": Optional(Integer(low=1, high=64)),
                      "grid_size": Integer(low=2, high=2**30), "splits": Optional(Integer(low=1, high=MAX_CUTS)),
                      "level": Interval(0, 1, closed="neither")}, owner=_OWNER)
    def __init__(self, q: ArrayLike, *, epsilon: float, bounds: FloatBounds, rounds: int | None = None,
                 grid_size: int = 4096, splits: int | None = None, level: float = 0.95):
        self.q = check_q(_OWNER, q)  # one or more probabilities in (0, 1), strictly increasing
        self.epsilon, self.bounds, self.grid_size, self.level = epsilon, tuple(bounds), grid_size, level
        self.rounds = 5 if rounds is None else rounds
        self.splits = 3 if splits is None else splits
        if self.q.size * (self.splits + 2) > MAX_CUTS:
            raise InvalidParameterError(
                f"{_OWNER}: {self.q.size} quantiles x {self.splits + 2} cuts per round exceed {MAX_CUTS} cuts; "
                "ask fewer quantiles or pass a smaller 'splits'.")

    @property
    def first_splits(self) -> int:
        r"""Cuts of the first round's even split of the grid: enough that ``splits`` cuts per later round reach single
        cells, :math:`\lceil B / (splits + 1)^{rounds - 1}\rceil - 1` (and at least ``splits`` per quantile)."""
        return max(int(math.ceil(self.grid_size / (self.splits + 1) ** (self.rounds - 1))) - 1, self.splits)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """epsilon-LDP per user: one report at epsilon, users of different rounds disjoint (parallel composition)."""
        return self.protocol(0, []).guarantee

    def config(self) -> dict[str, Any]:
        """The plan as JSON (``AdaptiveQuantiles.from_config`` rebuilds it)."""
        return {"q": self.q.tolist(), "epsilon": self.epsilon, "bounds": list(self.bounds), "rounds": self.rounds,
                "grid_size": self.grid_size, "splits": self.splits, "level": self.level}

    @classmethod
    @validate_params({"config": Dict("an adaptive quantile plan (a JSON object)", required=("q", "epsilon", "bounds"),
                                     allowed=("q", "epsilon", "bounds", "rounds", "grid_size", "splits", "level"))},
                     owner="AdaptiveQuantiles.from_config")
    def from_config(cls, config: dict[str, Any]) -> "AdaptiveQuantiles":
        return cls(**config)

    # ------------------------------------------------------------------ groups
    def group_sizes(self, n: int) -> np.ndarray:
        """Users of each round's group for ``n`` users in all: round ``r`` (1-based) gets a share proportional to
        ``r`` (later rounds decide finer questions near the quantiles; measured in benchmarks/bench_adaptive_quantiles.py)."""
        n = check_param(_OWNER, "n", n, Integer(low=self.rounds * (self.rounds + 1) // 2))
        weights = np.arange(1, self.rounds + 1, dtype=np.float64)
        sizes = np.floor(n * weights / weights.sum()).astype(np.int64)
        sizes[-1] += n - int(sizes.sum())
        return sizes

    # ------------------------------------------------------------------ rounds
    def protocol(self, round_index: int, history: Sequence[Aggregator]) -> ThresholdRR:
        """The randomizer of round ``round_index`` (0-based), given the aggregates of the rounds before it."""
        index = check_param(_OWNER, "round_index", round_index, Integer(low=0, high=self.rounds - 1))
        history = _check_history(history)
        if len(history) != index:
            raise InvalidParameterError(f"{_OWNER}: round {index} needs the aggregates of the {index} round(s) "
                                        f"before it. Got {len(history)}.")
        return ThresholdRR(epsilon=self.epsilon, bounds=self.bounds, grid_size=self.grid_size,
                           cuts=self.next_cuts(history), round=index + 1)

    def next_cuts(self, history: Sequence[Aggregator]) -> list[int]:
        """The cuts the next round asks: each bracket's ends and ``splits`` cuts evenly inside it."""
        history = _check_history(history)
        if not history:  # first round: one bracket over the whole grid, split for every quantile at once
            brackets = [(0, self.grid_size)]
            inside = min(max(self.q.size * self.splits, self.first_splits), MAX_CUTS - 2)
        else:
            brackets, inside = self.brackets(history), self.splits
        cuts: set[int] = set()
        for a, b in brackets:
            cuts.update((a, b))
            cuts.update(int(c) for c in np.round(a + (b - a) * np.arange(1, inside + 1) / (inside + 1)))
        return sorted(c for c in cuts if 1 <= c <= self.grid_size - 1) or [self.grid_size // 2]

    def pooled(self, history: Sequence[Aggregator]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(cuts, fraction, variance)``: every asked cut with its answers pooled over the rounds."""
        cuts, statistic = self._pooled_counts(history)
        fraction, variance, _ = cut_fractions(statistic.reshape(-1), self.protocol(0, []).keep_probability)
        return cuts, fraction, variance

    def _pooled_counts(self, history: Sequence[Aggregator]) -> tuple[np.ndarray, np.ndarray]:
        """``(cuts, counts)``: every asked cut that has answers, with its answers pooled over the rounds (a row of
        ``(zeros, ones)`` per cut).  Refuses a history that is not one aggregate per round in order."""
        history = _check_history(history)
        protocols = [self._round_protocol(aggregator) for aggregator in history]
        rounds = [protocol.round for protocol in protocols]
        if rounds != list(range(1, len(history) + 1)):  # a round given twice counted its answers twice
            raise InvalidParameterError(f"{_OWNER}: the 'history' must hold one aggregate per round, in order (the "
                                        f"rounds {list(range(1, len(history) + 1))}). Got the rounds {rounds}.")
        index: dict[int, int] = {}
        counts: list[np.ndarray] = []
        for aggregator, protocol in zip(history, protocols):
            for cut, pair in zip(protocol.cuts, np.asarray(aggregator.statistic).reshape(-1, 2)):
                if cut not in index:
                    index[cut] = len(counts)
                    counts.append(np.zeros(2, dtype=np.int64))
                counts[index[cut]] += pair
        order = sorted(index)
        statistic = np.stack([counts[index[c]] for c in order]) if order else np.zeros((0, 2), dtype=np.int64)
        answered = statistic.sum(axis=1) > 0
        return np.asarray(order, dtype=np.int64)[answered], statistic[answered]

    def _round_protocol(self, aggregator: Aggregator) -> ThresholdRR:
        protocol = aggregator.protocol
        if (not isinstance(protocol, ThresholdRR) or protocol.epsilon != self.epsilon or protocol.bounds != self.bounds
                or protocol.grid_size != self.grid_size):
            raise InvalidParameterError(f"{_OWNER}: a round's aggregate must come from a 'threshold' protocol with this "
                                        f"plan's epsilon, bounds and grid_size. Got {protocol!r}.")
        return protocol

    def fitted_cdf(self, history: Sequence[Aggregator]) -> tuple[np.ndarray, np.ndarray]:
        """``(cuts, cdf)``: the grid ends 0 and B with every asked cut, and the weighted isotonic fit there."""
        history = _check_history(history)
        from scipy.optimize import (
            isotonic_regression,  # lazy: scipy.optimize is heavy at import
        )

        cuts, fraction, variance = self.pooled(history)
        fitted = np.clip(isotonic_regression(fraction, weights=1.0 / variance).x, 0.0, 1.0) if cuts.size else fraction
        return np.concatenate([[0], cuts, [self.grid_size]]), np.concatenate([[0.0], fitted, [1.0]])

    def brackets(self, history: Sequence[Aggregator]) -> list[tuple[int, int]]:
        """Each quantile's search bracket ``(a, b)``: from the last asked cut whose pooled fraction is below q by
        more than ``SEARCH_Z`` standard errors to the first above it by as much, widened to hold the consecutive
        asked cuts where the isotonic fit crosses q.  The search narrows as fast as the answers allow and no
        faster: once the cuts are closer in rank than the noise, the next round asks the same region again
        (with its new users) instead of zooming into noise."""
        history = _check_history(history)
        asked, fraction, variance = self.pooled(history)
        spread = SEARCH_Z * np.sqrt(variance)
        out = []
        for (a, b), p in zip(self._point_brackets(history), self.q):
            low = max([0, *asked[fraction + spread < p]])
            high = min([self.grid_size, *asked[fraction - spread > p]])
            out.append((int(min(low, a)), int(max(high, b))))
        return out

    def _point_brackets(self, history: Sequence[Aggregator]) -> list[tuple[int, int]]:
        """The consecutive asked cuts ``(a, b)`` with fit(a) < q <= fit(b), per quantile."""
        cuts, cdf = self.fitted_cdf(history)
        upper = np.clip(np.searchsorted(cdf, self.q, side="left"), 1, cuts.size - 1)
        return [(int(cuts[u - 1]), int(cuts[u])) for u in upper]

    # ------------------------------------------------------------------ release
    def estimate(self, history: Sequence[Aggregator]) -> QuantileRelease:
        """The quantiles from the aggregates of the rounds so far, with their intervals (a ``QuantileRelease``)."""
        history = _check_history(history)
        if not history or sum(a.n for a in history) == 0:
            raise InvalidParameterError(f"{_OWNER}: no round has reports yet; nothing to estimate.")
        cuts, cdf = self.fitted_cdf(history)
        upper = np.clip(np.searchsorted(cdf, self.q, side="left"), 1, cuts.size - 1)
        a, b = cuts[upper - 1], cuts[upper]
        share = np.clip((self.q - cdf[upper - 1]) / np.maximum(cdf[upper] - cdf[upper - 1], 1e-300), 0.0, 1.0)
        asked, counts = self._pooled_counts(history)  # once: the fit's fractions and the intervals' counts
        fraction, variance, _ = cut_fractions(counts.reshape(-1), self.protocol(0, []).keep_probability)
        grid_values = self._local_fit(history, asked, fraction, variance, a + share * (b - a), list(zip(a, b)))
        below, above = self._cut_bounds(counts)
        low = np.array([max([0, *asked[above < p]]) for p in self.q], dtype=np.float64)
        high = np.array([min([self.grid_size, *asked[below >= p]]) for p in self.q], dtype=np.float64)
        to_value = self._grid_to_value
        return QuantileRelease(
            q=self.q, values=to_value(grid_values), low=to_value(np.minimum(low, grid_values)),
            high=to_value(np.maximum(high, grid_values)), level=self.level, method="adaptive", epsilon=self.epsilon,
            details={"rounds": len(history), "planned_rounds": self.rounds, "grid_size": self.grid_size,
                     "bounds": list(self.bounds),
                     "reports": [int(agg.n) for agg in history], "brackets": [[int(x), int(y)] for x, y in zip(a, b)],
                     "intervals": "simultaneous Clopper-Pearson bounds of the pooled per-cut fractions (Bonferroni "
                                  f"over {asked.size} cuts)"},
            guarantee=self.guarantee,
        )

    def _cut_bounds(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r"""Lower and upper bounds of the fraction below each asked cut, from its pooled ``counts`` (a row of
        ``(zeros, ones)`` per cut, :meth:`_pooled_counts`), simultaneous at
        :attr:`level` over the asked cuts: Clopper-Pearson bounds at level :math:`1 - (1 - \text{level})/K` of the
        share :math:`\pi = (1 - p) + (2p - 1) F` of ones among a cut's :math:`m` pooled answers (each a user's
        randomized response, one user each), mapped to :math:`F` and clipped to [0, 1].

        Exact, not normal: the share of ones among a few dozen answers is far from normal, and normal bounds with
        a plug-in variance held all nine deciles in 84-89 % of runs at n = 1,000.  The answers of a
        random group drawn without replacement vary less than a binomial's, so the bounds are conservative."""
        from scipy.stats import beta  # lazy: loads scipy (0.4-2 s)

        ones, reports = counts[:, 1].astype(np.float64), counts.sum(axis=1).astype(np.float64)
        tail = (1.0 - self.level) / (2.0 * max(counts.shape[0], 1))
        with np.errstate(invalid="ignore"):
            lower = np.where(ones > 0, beta.ppf(tail, ones, reports - ones + 1.0), 0.0)
            upper = np.where(ones < reports, beta.ppf(1.0 - tail, ones + 1.0, reports - ones), 1.0)
        p = self.protocol(0, []).keep_probability
        return (np.clip((lower - (1.0 - p)) / (2.0 * p - 1.0), 0.0, 1.0),
                np.clip((upper - (1.0 - p)) / (2.0 * p - 1.0), 0.0, 1.0))

    def _local_fit(self, history, asked, fraction, variance, interpolated: np.ndarray, final: list) -> np.ndarray:
        """Each quantile where a weighted straight line through the pooled fractions inside the search bracket
        of the last round crosses q (every answer near the quantile counts, not only the two cuts around it);
        the isotonic interpolation where that window does not hold the final crossing (the search moved
        since), holds fewer than 2 cuts, or the line does not rise."""
        if len(history) < 2:
            return interpolated
        out = interpolated.copy()
        for i, ((a, b), p, (low, high)) in enumerate(zip(self.brackets(history[:-1]), self.q, final)):
            inside = (asked >= a) & (asked <= b)
            if inside.sum() < 2 or not a <= low < high <= b:
                continue
            t, y, w = asked[inside].astype(np.float64), fraction[inside], 1.0 / variance[inside]
            center, level = float(np.average(t, weights=w)), float(np.average(y, weights=w))
            slope_num = float(np.sum(w * (t - center) * (y - level)))
            slope_den = float(np.sum(w * (t - center) ** 2))
            if slope_num > 0 and slope_den > 0:
                out[i] = min(max(center + (p - level) * slope_den / slope_num, a), b)
        return out

    def _grid_to_value(self, grid: np.ndarray) -> np.ndarray:
        lo, hi = self.bounds
        return lo + np.asarray(grid, dtype=np.float64) * (hi - lo) / self.grid_size

    # ------------------------------------------------------------------ simulation
    def run(self, values: ArrayLike, rng: Seed = None, *, clip: bool = True,
            missing: str | float = "refuse") -> QuantileRelease:
        """Simulate every round on ``values`` (one user each, split at random into the groups); the release.
        ``missing``: a missing value refused (the default), its user sending no report (``"drop"``) or randomized as
        the number given (:mod:`dpdist._missing`), the policy in the release's notes."""
        generator = check_rng(rng, owner=_OWNER)
        x = check_real_values(self.protocol(0, [])._clip_for(values, clip, "simulate", missing), self.bounds,
                              owner=_OWNER)
        order = generator.permutation(x.size)
        ends = np.concatenate([[0], np.cumsum(self.group_sizes(x.size))])
        history: list[Aggregator] = []
        for index in range(self.rounds):
            protocol = self.protocol(index, history)
            history.append(protocol.simulate(x[order[ends[index]: ends[index + 1]]], rng=generator, clip=False))
        return with_policy_note(self.estimate(history), missing_policy(_OWNER, missing), "local")


def adaptive_quantiles(x: ArrayLike, q: ArrayLike, *, epsilon: float, bounds: FloatBounds, rounds: int | None = None,
                       grid_size: int = 4096, splits: int | None = None, level: float = 0.95, rng: Seed = None,
                       clip: bool = True, missing: str | float = "refuse") -> QuantileRelease:
    """Quantiles of ``x`` under epsilon-LDP by an adaptive multi-round search, simulated end to end.

    Each value is one user; the users are split at random into ``rounds`` groups, group ``r``
    answers round ``r``'s threshold questions (:class:`AdaptiveQuantiles`, module docstring).

    Returns
    -------
    QuantileRelease
        ``values`` (non-decreasing in ``q``), ``low``/``high`` at ``level``; ``guarantee``
        epsilon-LDP per user.
    """
    plan = AdaptiveQuantiles(q, epsilon=epsilon, bounds=bounds, rounds=rounds, grid_size=grid_size, splits=splits,
                             level=level)
    return plan.run(x, rng, clip=clip, missing=missing)



def _not_a_round(aggregator: Aggregator) -> str | None:
    """Why ``aggregator`` is not a round's (None: it is one, a ``threshold`` protocol's)."""
    name = getattr(aggregator.protocol, "name", None)
    return None if name == "threshold" else f"an aggregator of {name!r}, not of a threshold protocol"


#: The aggregates of the earlier rounds, in order.
_HISTORY = Items(Admits(Aggregator, _not_a_round, "a round's aggregator (a threshold protocol's aggregator())"),
                 "a list of the earlier rounds' aggregators (ThresholdRR.aggregator())")


def _check_history(history: Any) -> tuple[Aggregator, ...]:
    """``history`` as a tuple of the rounds' ``threshold`` aggregators; else refused, naming what it holds."""
    return check_param(_OWNER, "history", history, _HISTORY)
