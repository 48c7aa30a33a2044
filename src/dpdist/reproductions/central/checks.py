r"""Claim checks of the ``central`` reproduction (paper 002, sec. VI), on the summary table.

Rankings (:class:`RankedCheck`, :class:`BestOrCloseCheck`, :class:`GroupBeatsCheck`) and
curve shapes over a swept parameter (:class:`TrendCheck`, :class:`MinimumWithinCheck`,
:class:`GapShrinksCheck`); each returns the numbers behind its outcome.  Built on the
claims library of :mod:`dpdist.experiments` (one z-score, one settings grouper).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from scipy import stats

from ...experiments import (
    ALPHA,
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    decide,
    describe_setting,
    group_settings,
    holm_rejections,
    welch_p_values,
    z_score,
)

__all__ = [
    "RankedCheck",
    "BestOrCloseCheck",
    "GroupBeatsCheck",
    "TrendCheck",
    "MinimumWithinCheck",
    "GapShrinksCheck",
    "RelativeErrorCheck",
]


def _select(table, metric, where):
    metrics = list(metric) if isinstance(metric, (list, tuple)) else [metric]
    return table.select(metric=metrics, **where)


@dataclass(frozen=True)
class RankedCheck:
    """``method`` is the best (lowest mean) or the worst of the methods in every setting.

    Per setting (dataset, grid point, metric), Welch's one-sided tests of ``method``
    against each other method (:func:`~dpdist.experiments.welch_p_values`) give
    ``p_for`` = the largest p of "on the claimed side" (it must be so against all:
    intersection–union) and ``p_against`` = the smallest p of "on the wrong side" times the
    number of other methods (Bonferroni within the setting); :func:`~dpdist.experiments.decide`
    gives the verdict at family-wise level ``alpha`` (docs/experiments.md, "Verdicts"):
    holds when significant in every setting, does not hold when Holm finds some setting
    where another method is significantly on the wrong side.
    """

    method: str
    metric: tuple
    position: str = "worst"
    where: dict = field(default_factory=dict)
    methods: tuple = ()
    alpha: float = ALPHA

    def __call__(self, table):
        rows = _select(table, self.metric, self.where)
        if self.methods:
            rows = rows.select(method=list(self.methods))
        sign = 1.0 if self.position == "worst" else -1.0
        p_for, p_against, total, failures = [], [], 0, []
        for setting, group in group_settings(rows, ("method",)).items():
            mine = [r for r in group if r["method"] == self.method]
            others = [r for r in group if r["method"] != self.method]
            if not mine or not others:
                continue
            total += 1
            # z > 0: the method is on the claimed side of the other method
            scores = [(sign * z_score(other, mine[0]), other) for other in others]
            tests = [welch_p_values(*((other, mine[0]) if sign > 0 else (mine[0], other))) for other in others]
            p_for.append(max(test[1] for test in tests))
            p_against.append(min(1.0, len(others) * min(test[2] for test in tests)))
            z, other = min(scores, key=lambda item: item[0])
            if p_against[-1] < self.alpha:
                failures.append(f"{describe_setting(setting)}: {self.method} {mine[0]['mean']:.4g} vs "
                                f"{other['method']} {other['mean']:.4g} (z = {-z:.1f})")
        if total == 0:
            return INCONCLUSIVE, f"no setting has {self.method!r} and another method"
        wins, losses = sum(p < self.alpha for p in p_for), holm_rejections(p_against, self.alpha)
        text = (f"{self.method} is significantly the {self.position} (Welch t, one-sided alpha {self.alpha:g}) in "
                f"{wins} of {total} settings; another method is significantly "
                f"{'worse' if self.position == 'worst' else 'better'} (Holm) in {losses}")
        if failures:
            text += "; e.g. " + "; ".join(failures[:3])
        return decide(p_for, p_against, self.alpha), text


@dataclass(frozen=True)
class BestOrCloseCheck:
    """``method`` is the best or close to the best in every setting.

    Close: its mean is at most ``(1 + tolerance)`` times the best other method's mean,
    or not larger by more than ``margin`` standard errors.  Does not hold if in some
    setting it is both more than ``1 + tolerance`` times the best and significantly worse.
    """

    method: str
    metric: tuple
    where: dict = field(default_factory=dict)
    methods: tuple = ()
    tolerance: float = 0.25
    margin: float = 2.0

    def __call__(self, table):
        rows = _select(table, self.metric, self.where)
        if self.methods:
            rows = rows.select(method=list(self.methods))
        good, total, failures, worst_ratio = 0, 0, [], (0.0, "")
        for setting, group in group_settings(rows, ("method",)).items():
            mine = [r for r in group if r["method"] == self.method]
            others = [r for r in group if r["method"] != self.method]
            if not mine or not others:
                continue
            total += 1
            best = min(others, key=lambda r: r["mean"])
            ratio = mine[0]["mean"] / best["mean"] if best["mean"] > 0 else math.inf
            if ratio > worst_ratio[0]:
                worst_ratio = (ratio, f"{describe_setting(setting)}: {mine[0]['mean']:.4g} vs {best['method']} {best['mean']:.4g}")
            if ratio <= 1 + self.tolerance or z_score(best, mine[0]) <= self.margin:
                good += 1
            else:
                failures.append(f"{describe_setting(setting)}: {mine[0]['mean']:.4g} vs {best['method']} {best['mean']:.4g}")
        if total == 0:
            return INCONCLUSIVE, f"no setting has {self.method!r} and another method"
        text = (f"{self.method} within {100 * self.tolerance:.0f}% (or {self.margin:g} SE) of the best in {good} of "
                f"{total} settings; largest ratio to the best other method {worst_ratio[0]:.2f} ({worst_ratio[1]})")
        if failures:
            text += f"; {len(failures)} failing, e.g. " + "; ".join(failures[:2])
        return (HOLDS, text) if good == total else (DOES_NOT_HOLD, text)


@dataclass(frozen=True)
class GroupBeatsCheck:
    """Every method of ``better`` has a lower mean than every method of ``worse`` in every setting.

    Each (setting, pair) is one comparison with Welch's one-sided p-values;
    :func:`~dpdist.experiments.decide` over all comparisons gives the verdict at
    family-wise level ``alpha``: holds when every comparison is significant in the claimed
    direction, does not hold when Holm finds some pair significantly reversed.
    """

    better: tuple
    worse: tuple
    metric: tuple
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA

    def __call__(self, table):
        rows = _select(table, self.metric, self.where)
        p_for, p_against, pairs, reversals, weakest = [], [], 0, [], None
        for setting, group in group_settings(rows, ("method",)).items():
            by_method = {r["method"]: r for r in group}
            for b in self.better:
                for w in self.worse:
                    if b not in by_method or w not in by_method:
                        continue
                    pairs += 1
                    z, up, down = welch_p_values(by_method[b], by_method[w])
                    p_for.append(up)
                    p_against.append(down)
                    item = (z, f"{describe_setting(setting)}: {b} {by_method[b]['mean']:.4g} vs {w} {by_method[w]['mean']:.4g}")
                    weakest = item if weakest is None or z < weakest[0] else weakest
                    if down < self.alpha:
                        reversals.append(item[1])
        if pairs == 0:
            return INCONCLUSIVE, "no setting has methods of both groups"
        wins, losses = sum(p < self.alpha for p in p_for), holm_rejections(p_against, self.alpha)
        text = (f"{'/'.join(self.better)} beat {'/'.join(self.worse)} significantly (Welch t, one-sided alpha "
                f"{self.alpha:g}) in {wins} of {pairs} comparisons, significantly worse (Holm) in {losses}; "
                f"weakest: {weakest[1]} (t = {weakest[0]:.1f})")
        if reversals:
            text += "; e.g. reversed: " + "; ".join(reversals[:2])
        return decide(p_for, p_against, self.alpha), text


def _curves(table, method, metric, x, where):
    """{setting without x: [(x, row)] sorted by x} for one method."""
    rows = _select(table, metric, where).select(method=method)
    out = {}
    for setting, group in group_settings(rows, ("method", x)).items():
        points = sorted(((float(r[x]), r) for r in group if r.get(x) is not None), key=lambda item: item[0])
        if len(points) >= 2:
            out[setting] = points
    return out


@dataclass(frozen=True)
class TrendCheck:
    """The mean of ``method`` decreases as ``x`` grows, on every curve.

    On the one verdict rule (:func:`~dpdist.experiments.decide`, level ``alpha``): does not
    hold when Holm, over every step between neighbouring points and every curve's
    last-above-first comparison (one-sided Welch t), finds a significant rise; holds when,
    on every curve, the last point is significantly below the first (an intersection-union
    test); inconclusive otherwise.  A false "does not hold" on curves that never rise has
    probability at most ``alpha``; so has a false "holds" on a curve that does not fall.
    """

    method: str
    metric: tuple
    x: str
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA

    def __call__(self, table):
        curves = _curves(table, self.method, self.metric, self.x, self.where)
        if not curves:
            return INCONCLUSIVE, f"no curve of {self.method!r} over {self.x!r}"
        falls, rises, notes = [], [], []
        for setting, points in curves.items():
            (x0, first), (x1, last) = points[0], points[-1]
            falls.append(welch_p_values(last, first)[1])  # last below first
            steps = [(a, b, welch_p_values(ra, rb)[1]) for (a, ra), (b, rb) in zip(points, points[1:])]
            rises += [p for _, _, p in steps] + [welch_p_values(first, last)[1]]  # b above a; last above first
            steepest = min(steps, key=lambda step: step[2]) if steps else None
            notes.append(f"{describe_setting(setting)}: {first['mean']:.3g} at {self.x}={x0:g} -> {last['mean']:.3g} "
                         f"at {x1:g}" + (f" (most significant rise {steepest[0]:g}->{steepest[1]:g}, p = "
                                         f"{steepest[2]:.2g})" if steepest else ""))
        significant_rises = holm_rejections(rises, self.alpha)
        decreasing = sum(p < self.alpha for p in falls)
        text = (f"significantly decreasing (one-sided alpha {self.alpha:g}) on {decreasing} of {len(curves)} "
                f"curves, {significant_rises} significant rise(s) (Holm over {len(rises)} comparisons); "
                + "; ".join(notes[:4]))
        if significant_rises:
            return DOES_NOT_HOLD, text
        return (HOLDS, text) if decreasing == len(curves) else (INCONCLUSIVE, text)


@dataclass(frozen=True)
class MinimumWithinCheck:
    """The mean of ``method`` over ``x`` is smallest at an ``x`` in ``[low, high]``, on every curve.

    Holds if on every curve the minimizing ``x`` is in the range and the curve's
    largest-x point is significantly (``margin`` SE) above the minimum (error rises
    again); does not hold if the minimum is outside the range and significantly
    below every point in the range.
    """

    method: str
    metric: tuple
    x: str
    low: float
    high: float
    where: dict = field(default_factory=dict)
    margin: float = 2.0

    def __call__(self, table):
        curves = _curves(table, self.method, self.metric, self.x, self.where)
        if not curves:
            return INCONCLUSIVE, f"no curve of {self.method!r} over {self.x!r}"
        good, bad, notes = 0, 0, []
        for setting, points in curves.items():
            best_x, best = min(points, key=lambda item: item[1]["mean"])
            inside = [r for xv, r in points if self.low <= xv <= self.high]
            rises = z_score(best, points[-1][1]) > self.margin
            notes.append(f"{describe_setting(setting)}: min {best['mean']:.3g} at {self.x}={best_x:g}, "
                         f"{points[-1][1]['mean']:.3g} at {points[-1][0]:g}")
            if self.low <= best_x <= self.high and rises:
                good += 1
            elif inside and all(z_score(best, r) > self.margin for r in inside):
                bad += 1
        text = (f"minimum in {self.x} in [{self.low:g}, {self.high:g}] with a significant rise after it on {good} of "
                f"{len(curves)} curves, significantly outside on {bad}; " + "; ".join(notes[:6]))
        if good == len(curves):
            return HOLDS, text
        return (DOES_NOT_HOLD, text) if bad else (INCONCLUSIVE, text)


@dataclass(frozen=True)
class GapShrinksCheck:
    """The gap ``private - reference`` at the largest ``x`` is below ``fraction`` of the gap at the smallest ``x``."""

    private: str
    reference: str
    metric: tuple
    x: str
    fraction: float = 0.5
    where: dict = field(default_factory=dict)

    def __call__(self, table):
        mine = _curves(table, self.private, self.metric, self.x, self.where)
        theirs = _curves(table, self.reference, self.metric, self.x, self.where)
        good, total, notes = 0, 0, []
        for setting, points in mine.items():
            reference = dict((xv, r) for xv, r in theirs.get(setting, []))
            (x0, first), (x1, last) = points[0], points[-1]
            if x0 not in reference or x1 not in reference:
                continue
            total += 1
            gap0 = first["mean"] - reference[x0]["mean"]
            gap1 = last["mean"] - reference[x1]["mean"]
            good += gap0 > 0 and gap1 < self.fraction * gap0
            notes.append(f"{describe_setting(setting)}: gap {gap0:.3g} at {self.x}={x0:g} -> {gap1:.3g} at {x1:g}")
        if total == 0:
            return INCONCLUSIVE, f"no curve has both {self.private!r} and {self.reference!r}"
        text = f"gap shrank below {self.fraction:g}x on {good} of {total} curves; " + "; ".join(notes[:4])
        return (HOLDS, text) if good == total else (DOES_NOT_HOLD, text)


@dataclass(frozen=True)
class RelativeErrorCheck:
    r"""``method`` does relatively worse on the ``harder`` datasets than on the ``easier`` ones.

    "Relatively": against ``reference`` (e.g. AQ against MP).  For each setting but the
    dataset (eps, n, metric) and each pair (hard dataset, easy dataset), the log ratio of
    ratios :math:`\Delta = \log(\bar e_{m,h}/\bar e_{r,h}) - \log(\bar e_{m,e}/\bar e_{r,e})`
    with the delta-method standard error :math:`\sqrt{\sum (se/\bar e)^2}` over its four means
    gives one-sided normal p-values, and :func:`~dpdist.experiments.decide` the verdict at
    family-wise level ``alpha``: holds when :math:`\Delta > 0` is significant in every
    comparison, does not hold when Holm finds :math:`\Delta < 0` in one.
    """

    method: str
    reference: str
    metric: tuple
    harder: tuple
    easier: tuple
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA

    def __call__(self, table):
        rows = _select(table, self.metric, self.where).select(method=[self.method, self.reference])
        cells = {}
        for row in rows:
            key = tuple((c, row[c]) for c in row if c not in ("dataset", "method", "mean", "std", "se", "count", "failed"))
            cells.setdefault(key, {})[(row["dataset"], row["method"])] = row
        p_for, p_against, deltas = [], [], []
        for key, found in cells.items():
            for hard in self.harder:
                for easy in self.easier:
                    four = [found.get((d, m)) for d in (hard, easy) for m in (self.method, self.reference)]
                    if any(r is None or not r["mean"] > 0 or not r.get("se", 0) >= 0 for r in four):
                        continue
                    mh, rh, me, re_ = four
                    delta = math.log(mh["mean"] / rh["mean"]) - math.log(me["mean"] / re_["mean"])
                    se = math.sqrt(sum((r["se"] / r["mean"]) ** 2 for r in four))
                    z = delta / se if se > 0 else math.copysign(math.inf, delta) if delta else 0.0
                    p_for.append(float(stats.norm.sf(z)))
                    p_against.append(float(stats.norm.cdf(z)))
                    deltas.append((z, math.exp(delta), f"{describe_setting(key)}, {hard} vs {easy}"))
        if not deltas:
            return INCONCLUSIVE, f"no setting has {self.method!r} and {self.reference!r} on both dataset groups"
        z, factor, where = min(deltas)
        text = (
            f"{self.method}/{self.reference} error ratio on {'/'.join(self.harder)} over the same on "
            f"{'/'.join(self.easier)}: above 1 significantly (one-sided alpha {self.alpha:g}) in "
            f"{sum(p < self.alpha for p in p_for)} of {len(deltas)} comparisons, below (Holm) in "
            f"{holm_rejections(p_against, self.alpha)}; factors {min(d[1] for d in deltas):.3g}.."
            f"{max(d[1] for d in deltas):.3g}, weakest ({where}): {factor:.3g} (z = {z:.1f})"
        )
        return decide(p_for, p_against, self.alpha), text
