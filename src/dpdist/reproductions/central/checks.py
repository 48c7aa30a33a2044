r"""Claim checks of the ``central`` reproduction (paper 002, sec. VI), on the summary table.

Rankings (:class:`RankedCheck`, :class:`BestOrCloseCheck`, :class:`GroupBeatsCheck`) and
curve shapes over a swept parameter (:class:`TrendCheck`, :class:`MinimumWithinCheck`,
:class:`GapShrinksCheck`); each returns the numbers behind its outcome.  Built on the
claims library of :mod:`dpdist.experiments` (one z-score, one settings grouper); every check
decides with its one rule, :func:`~dpdist.experiments.decide` (one-sided p-values per
setting, Holm's correction across settings; docs/experiments.md, "Verdicts").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ...errors import InvalidParameterError
from ...experiments import (
    z_value,
    ALPHA,
    STAT_COLUMNS,
    INCONCLUSIVE,
    decide,
    describe_setting,
    group_settings,
    holm_rejected,
    holm_rejections,
    minimum_in_p_values,
    normal_p_values,
    sign_test,
    standard_error,
    welch_p_values,
    z_score,
)
from ...experiments import ResultsTable

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

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = _select(table, self.metric, self.where)
        if self.methods:
            rows = rows.select(method=list(self.methods))
        sign = 1.0 if self.position == "worst" else -1.0
        p_for, p_against, total, notes = [], [], 0, []
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
            notes.append(f"{describe_setting(setting)}: {self.method} {mine[0]['mean']:.4g} vs "
                         f"{other['method']} {other['mean']:.4g} (z = {-z:.1f})")
        if total == 0:
            return INCONCLUSIVE, f"no setting has {self.method!r} and another method"
        rejected = holm_rejected(p_against, self.alpha)  # only these settings are significant after Holm
        wins, losses = sum(p < self.alpha for p in p_for), len(rejected)
        text = (f"{self.method} is significantly the {self.position} (Welch t, one-sided alpha {self.alpha:g}) in "
                f"{wins} of {total} settings; another method is significantly "
                f"{'worse' if self.position == 'worst' else 'better'} (Holm) in {losses}")
        if rejected:
            text += "; e.g. " + "; ".join(notes[i] for i in rejected[:3])
        return decide(p_for, p_against, self.alpha), text


@dataclass(frozen=True)
class BestOrCloseCheck:
    r"""``method`` is the best or close to the best in every setting.

    Close: its mean :math:`\bar m` is at most ``(1 + tolerance)`` times every other
    method's mean :math:`\bar o` (so at most that times the best's).  Per setting, Welch's
    one-sided tests of :math:`\bar m` against :math:`(1 + tolerance)\,\bar o` (the other
    row's mean and standard error scaled; :func:`~dpdist.experiments.welch_p_values`) give
    ``p_for`` = the largest p of "below" over the other methods (it must be so against all:
    intersection-union) and ``p_against`` = the smallest p of "above" times the number of
    other methods (Bonferroni within the setting), and :func:`~dpdist.experiments.decide`
    gives the verdict at family-wise level ``alpha`` (docs/experiments.md, "Verdicts"):
    holds when significantly within the tolerance in every setting, does not hold when
    Holm finds a setting where it is significantly more than ``1 + tolerance`` times
    another method's error.
    """

    method: str
    metric: tuple
    where: dict = field(default_factory=dict)
    methods: tuple = ()
    tolerance: float = 0.25
    alpha: float = ALPHA

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = _select(table, self.metric, self.where)
        if self.methods:
            rows = rows.select(method=list(self.methods))
        factor = 1 + self.tolerance
        p_for, p_against, ratios, notes, worst_ratio = [], [], [], [], (0.0, "")
        for setting, group in group_settings(rows, ("method",)).items():
            mine = [r for r in group if r["method"] == self.method]
            others = [r for r in group if r["method"] != self.method]
            if not mine or not others:
                continue
            scaled = [{**o, "mean": factor * o["mean"], "se": factor * standard_error(o)} for o in others]
            tests = [welch_p_values(mine[0], s) for s in scaled]
            p_for.append(max(test[1] for test in tests))
            p_against.append(min(1.0, len(others) * min(test[2] for test in tests)))
            best = min(others, key=lambda r: r["mean"])
            ratio = mine[0]["mean"] / best["mean"] if best["mean"] > 0 else math.inf
            ratios.append(ratio)
            note = f"{describe_setting(setting)}: {mine[0]['mean']:.4g} vs {best['method']} {best['mean']:.4g}"
            notes.append(note)
            if ratio > worst_ratio[0]:
                worst_ratio = (ratio, note)
        if not p_for:
            return INCONCLUSIVE, f"no setting has {self.method!r} and another method"
        total = len(p_for)
        wins, rejected = sum(p < self.alpha for p in p_for), holm_rejected(p_against, self.alpha)
        agree = sum(ratio <= factor for ratio in ratios)
        text = (f"{self.method} within {100 * self.tolerance:.0f}% of the best significantly (Welch t, one-sided "
                f"alpha {self.alpha:g}) in {wins} of {total} settings, significantly beyond it (Holm) in "
                f"{len(rejected)}; on the claimed side in {agree} of {total} (sign test p = "
                f"{sign_test(agree, total):.2g}); largest ratio to the best other method {worst_ratio[0]:.2f} "
                f"({worst_ratio[1]})")
        if rejected:
            text += "; failing, e.g. " + "; ".join(notes[i] for i in rejected[:2])
        return decide(p_for, p_against, self.alpha), text


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

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = _select(table, self.metric, self.where)
        p_for, p_against, pairs, reversals = [], [], 0, []
        weakest: tuple[float, str] = (math.inf, "")
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
                    weakest = item if z < weakest[0] else weakest
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

    On the one verdict rule (:func:`~dpdist.experiments.decide`, level ``alpha``): its
    ``p_against`` are every step between neighbouring points and every curve's
    last-above-first comparison (one-sided Welch t), so it does not hold when Holm finds a
    significant rise; its ``p_for`` are, per curve, the p of "last below first", set to 1 on a
    curve with a rise Holm rejects, so it holds when on every curve the last point is
    significantly below the first and no rise is significant (an intersection-union
    test); inconclusive otherwise.  A false "does not hold" on curves that never rise has
    probability at most ``alpha``; so has a false "holds" on a curve that does not fall.
    """

    method: str
    metric: tuple
    x: str
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        curves = _curves(table, self.method, self.metric, self.x, self.where)
        if not curves:
            return INCONCLUSIVE, f"no curve of {self.method!r} over {self.x!r}"
        falls, rises, owner, notes = [], [], [], []
        for curve, (setting, points) in enumerate(curves.items()):
            (x0, first), (x1, last) = points[0], points[-1]
            falls.append(welch_p_values(last, first)[1])  # last below first
            steps = [(a, b, welch_p_values(ra, rb)[1]) for (a, ra), (b, rb) in zip(points, points[1:])]
            rises += [p for _, _, p in steps] + [welch_p_values(first, last)[1]]  # b above a; last above first
            owner += [curve] * (len(steps) + 1)
            steepest = min(steps, key=lambda step: step[2]) if steps else None
            notes.append(f"{describe_setting(setting)}: {first['mean']:.3g} at {self.x}={x0:g} -> {last['mean']:.3g} "
                         f"at {x1:g}" + (f" (most significant rise {steepest[0]:g}->{steepest[1]:g}, p = "
                                         f"{steepest[2]:.2g})" if steepest else ""))
        rejected = holm_rejected(rises, self.alpha)
        significant_rises = len(rejected)
        for index in rejected:  # a curve that rises significantly somewhere does not decrease
            falls[owner[index]] = 1.0
        decreasing = sum(p < self.alpha for p in falls)
        agree = sum(points[-1][1]["mean"] < points[0][1]["mean"] for points in curves.values())
        text = (f"significantly decreasing with no significant rise (one-sided alpha {self.alpha:g}) on "
                f"{decreasing} of {len(curves)} "
                f"curves, {significant_rises} significant rise(s) (Holm over {len(rises)} comparisons); last below "
                f"first on {agree} of {len(curves)} (sign test p = {sign_test(agree, len(curves)):.2g}); "
                + "; ".join(notes[:4]))
        return decide(falls, rises, self.alpha), text


@dataclass(frozen=True)
class MinimumWithinCheck:
    """The mean of ``method`` over ``x`` is smallest at an ``x`` in ``[low, high]``, on every curve.

    Per curve, :func:`~dpdist.experiments.minimum_in_p_values` with the points in the range
    as ``inside`` and the others as ``outside`` gives ``p_for`` (some point in the range is
    significantly below every point outside it, by Welch's one-sided t; so the error falls
    before the range and rises after it where the grid has points there) and ``p_against``
    (some point outside is significantly below every point in the range); when the curve's
    last point is in the range it is also an "outside" rival of the others (the error must
    rise again).  :func:`~dpdist.experiments.decide` gives the verdict at family-wise level
    ``alpha``: holds when every curve is significant, does not hold when Holm finds a curve
    whose minimum is significantly outside the range.
    """

    method: str
    metric: tuple
    x: str
    low: float
    high: float
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        curves = _curves(table, self.method, self.metric, self.x, self.where)
        if not curves:
            return INCONCLUSIVE, f"no curve of {self.method!r} over {self.x!r}"
        p_for, p_against, agree, notes = [], [], 0, []
        for setting, points in curves.items():
            best_x, best = min(points, key=lambda item: item[1]["mean"])
            inside = [r for xv, r in points if self.low <= xv <= self.high]
            outside = [r for xv, r in points if not self.low <= xv <= self.high]
            up, down = minimum_in_p_values(inside, outside)
            last_x, last = points[-1]
            if self.low <= last_x <= self.high:  # the error must rise again after the minimum
                rise = minimum_in_p_values([r for r in inside if r is not last], [last, *outside])[0]
                up = max(up, rise)
            p_for.append(up)
            p_against.append(down)
            agree += self.low <= best_x <= self.high
            notes.append(f"{describe_setting(setting)}: min {best['mean']:.3g} at {self.x}={best_x:g}, "
                         f"{last['mean']:.3g} at {last_x:g} (p for {up:.2g}, against {down:.2g})")
        rejected = holm_rejected(p_against, self.alpha)
        text = (f"minimum in {self.x} in [{self.low:g}, {self.high:g}] significantly (Welch t, one-sided alpha "
                f"{self.alpha:g}) on {sum(p < self.alpha for p in p_for)} of {len(curves)} curves, significantly "
                f"outside (Holm) on {len(rejected)}; lowest point in the range on {agree} of {len(curves)} (sign test "
                f"p = {sign_test(agree, len(curves)):.2g}); " + "; ".join(notes[:6]))
        return decide(p_for, p_against, self.alpha), text


@dataclass(frozen=True)
class GapShrinksCheck:
    r"""The gap ``private - reference`` at the largest ``x`` is below ``fraction`` of the gap at the smallest ``x``.

    Per curve, :math:`D = f\,(\bar p_0 - \bar r_0) - (\bar p_1 - \bar r_1)` (``f`` the
    ``fraction``, 0 and 1 the smallest and largest ``x``) with the standard error of four
    independent means gives one-sided normal p-values; "for" also needs the first gap
    :math:`\bar p_0 - \bar r_0` significantly positive (the larger of the two p-values:
    intersection-union).  :func:`~dpdist.experiments.decide` gives the verdict at
    family-wise level ``alpha``: holds when every curve is significant, does not hold when
    Holm finds a curve with :math:`D` significantly negative (the gap did not shrink so).
    """

    private: str
    reference: str
    metric: tuple
    x: str
    fraction: float = 0.5
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        mine = _curves(table, self.private, self.metric, self.x, self.where)
        theirs = _curves(table, self.reference, self.metric, self.x, self.where)
        p_for, p_against, agree, notes = [], [], 0, []
        for setting, points in mine.items():
            reference = dict((xv, r) for xv, r in theirs.get(setting, []))
            (x0, first), (x1, last) = points[0], points[-1]
            if x0 not in reference or x1 not in reference:
                continue
            gap0 = first["mean"] - reference[x0]["mean"]
            gap1 = last["mean"] - reference[x1]["mean"]
            var0 = standard_error(first) ** 2 + standard_error(reference[x0]) ** 2
            var1 = standard_error(last) ** 2 + standard_error(reference[x1]) ** 2
            shrink = z_value(self.fraction * gap0 - gap1, math.sqrt(self.fraction**2 * var0 + var1))
            positive = z_value(gap0, math.sqrt(var0))
            p_for.append(max(normal_p_values(shrink)[0], normal_p_values(positive)[0]))
            p_against.append(normal_p_values(shrink)[1])
            agree += gap0 > 0 and gap1 < self.fraction * gap0
            notes.append(f"{describe_setting(setting)}: gap {gap0:.3g} at {self.x}={x0:g} -> {gap1:.3g} at {x1:g} "
                         f"(z = {shrink:.1f})")
        if not p_for:
            return INCONCLUSIVE, f"no curve has both {self.private!r} and {self.reference!r}"
        total = len(p_for)
        text = (f"gap shrank below {self.fraction:g}x significantly (one-sided alpha {self.alpha:g}) on "
                f"{sum(p < self.alpha for p in p_for)} of {total} curves, significantly not (Holm) on "
                f"{holm_rejections(p_against, self.alpha)}; shrank so on {agree} of {total} (sign test p = "
                f"{sign_test(agree, total):.2g}); " + "; ".join(notes[:4]))
        return decide(p_for, p_against, self.alpha), text



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

    ``unmatched`` names columns left out of the setting, so datasets run at different values
    of them are paired (e.g. ``("n",)``: real datasets at their own sample size against
    synthetic ones at n = 10^4; each ratio compares two methods at one n, so the
    comparison is of the ratios).  Within a paired setting each (dataset, method) must have
    one row: two values of an unmatched column for one dataset raise
    :class:`~dpdist.errors.InvalidParameterError`.
    """

    method: str
    reference: str
    metric: tuple
    harder: tuple
    easier: tuple
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA
    unmatched: tuple = ()

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = _select(table, self.metric, self.where).select(method=[self.method, self.reference])
        left_out = {"dataset", "method", *STAT_COLUMNS, *self.unmatched}
        cells: dict = {}
        for row in rows:
            key = tuple((c, row[c]) for c in row if c not in left_out)
            found = cells.setdefault(key, {})
            if (row["dataset"], row["method"]) in found:
                raise InvalidParameterError(
                    f"unmatched={self.unmatched!r}: {row['method']!r} on {row['dataset']!r} has two rows at "
                    f"({describe_setting(key)}) (e.g. {describe_setting((c, row[c]) for c in self.unmatched)}); "
                    f"allowed: at most one value of the unmatched columns per dataset (narrow it with where=)"
                )
            found[(row["dataset"], row["method"])] = row
        p_for, p_against, deltas = [], [], []
        for key, found in cells.items():
            for hard in self.harder:
                for easy in self.easier:
                    four = [found.get((d, m)) for d in (hard, easy) for m in (self.method, self.reference)]
                    if any(r is None or not r["mean"] > 0 for r in four):
                        continue
                    mh, rh, me, re_ = four
                    delta = math.log(mh["mean"] / rh["mean"]) - math.log(me["mean"] / re_["mean"])
                    se = math.sqrt(sum((standard_error(r) / r["mean"]) ** 2 for r in four))
                    z = z_value(delta, se)
                    up, down = normal_p_values(z)
                    p_for.append(up)
                    p_against.append(down)
                    pair = f"{hard} vs {easy}"
                    if self.unmatched:
                        pair = (f"{hard} ({describe_setting((c, mh.get(c)) for c in self.unmatched)}) vs {easy} "
                                f"({describe_setting((c, me.get(c)) for c in self.unmatched)})")
                    deltas.append((z, math.exp(delta), f"{describe_setting(key)}, {pair}"))
        if not deltas:
            return INCONCLUSIVE, f"no setting has {self.method!r} and {self.reference!r} on both dataset groups"
        z, factor, where = min(deltas)
        agree = sum(d[1] > 1 for d in deltas)
        text = (
            f"{self.method}/{self.reference} error ratio on {'/'.join(self.harder)} over the same on "
            f"{'/'.join(self.easier)}: above 1 significantly (one-sided alpha {self.alpha:g}) in "
            f"{sum(p < self.alpha for p in p_for)} of {len(deltas)} comparisons, below (Holm) in "
            f"{holm_rejections(p_against, self.alpha)}; above 1 in {agree} of {len(deltas)} (sign test p = "
            f"{sign_test(agree, len(deltas)):.2g}); factors {min(d[1] for d in deltas):.3g}.."
            f"{max(d[1] for d in deltas):.3g}, weakest ({where}): {factor:.3g} (z = {z:.1f})"
        )
        return decide(p_for, p_against, self.alpha), text
