r"""Claim checks of the ``wavelet`` reproduction (paper 000, sec. 6), on the summary table.

:class:`BeatsBest` (lower than the best of the baselines), :class:`BelowBound` (an
empirical error under its theoretical bound), :class:`BestLevelNearBound` (the best J
near the bound's J) and :class:`StaysAbove` (a bias no budget removes); built on the
claims library of :mod:`dpdist.experiments`, every one deciding with its one rule,
:func:`~dpdist.experiments.decide` (docs/experiments.md, "Verdicts").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import math

from ...experiments import (
    ALPHA,
    EFFECT,
    INCONCLUSIVE,
    Evidence,
    comparison_power,
    conclude,
    linear_p_values,
    log_ratio_p_values,
    repeats_of,
    versus_all,
    holm_rejections,
    minimum_in_p_values,
    sign_test,
    welch_p_values,
    describe_setting,
    rows_by,
    standard_error,
)

__all__ = ["BeatsBest", "BelowBound", "BestLevelNearBound", "StaysAbove", "FallsLess"]


def _settings(table, metric, where, methods) -> dict:
    """``{setting: {method: row}}`` for the rows of ``metric`` and ``methods`` matching ``where``."""
    return rows_by(table.select(metric=metric, **where).select(method=list(methods)))


@dataclass(frozen=True)
class BeatsBest:
    """``method`` has a lower mean ``metric`` than every one of ``rivals`` (so than the best) in each setting.

    Per setting, Welch's one-sided tests against *every* rival
    (:func:`~dpdist.experiments.welch_p_values`) give ``p_for`` = the largest p of "lower"
    (intersection-union: it must beat them all) and ``p_against`` = the smallest p of
    "higher" times the number of rivals (Bonferroni within the setting;
    :func:`~dpdist.experiments.versus_all`).  With ``k = ceil(share * S)`` of the S settings
    required, :func:`~dpdist.experiments.decide` gives the verdict at family-wise level
    ``alpha`` (docs/experiments.md, "Verdicts"): holds when ``method`` is significantly
    lower than every rival in every setting (``share = 1``) or Holm finds it so in at least
    ``k``; does not hold when Holm finds it significantly worse than some rival in more than
    ``S - k`` settings.  (It used to test only against the rival with the lowest mean: a
    rival chosen by the data, biased low, which with 4 tied rivals over 6 settings at 3
    repeats gave 8 % false "does not hold".)  The explanation counts the settings where
    ``method`` is below / above the best rival's mean.
    """

    metric: str
    method: str
    rivals: tuple
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA
    share: float = 1.0
    effect: float = EFFECT

    def __call__(self, table):
        settings = _settings(table, self.metric, self.where, (self.method, *self.rivals))
        scores = []
        for setting, rows in settings.items():
            if self.method not in rows or len(rows) < 2:
                continue
            mine = rows[self.method]
            others = [r for r in rows if r != self.method]
            rival = min(others, key=lambda r: rows[r]["mean"])
            theirs = rows[rival]
            t = welch_p_values(mine, theirs)[0]
            p_for, p_against, count = versus_all([welch_p_values(mine, rows[r]) for r in others])
            power = min((comparison_power(mine, rows[r], self.effect) for r in others), key=lambda p: p[0])
            scores.append((t, setting, rival, mine["mean"], theirs["mean"], p_for, p_against, count, power,
                           repeats_of(mine, *(rows[r] for r in others))))
        if not scores:
            return INCONCLUSIVE, f"no setting has {self.method!r} and a rival for {self.metric!r}"
        p_for, p_against = [s[5] for s in scores], [s[6] for s in scores]
        total = len(scores)
        needed = math.ceil(self.share * total)
        wins = sum(p < self.alpha for p in p_for)
        n_losses = holm_rejections(p_against, self.alpha)
        losses = sorted(scores, key=lambda s: s[6])[:n_losses]
        below = sum(s[3] < s[4] for s in scores)
        z, setting, rival, mine, theirs = min(scores, key=lambda s: s[0])[:5]
        text = (
            f"{self.method} beats every rival on {self.metric} significantly (Welch t, one-sided alpha "
            f"{self.alpha:g}, against each) in {wins} of {total} settings (needed {needed}), significantly worse than "
            f"some rival (Bonferroni over rivals, Holm over settings) in {n_losses}; below the best rival's mean in "
            f"{below}/{total} settings, above it in {total - below}/{total}; weakest ({describe_setting(setting)}): "
            f"{mine:.4g} vs {rival} {theirs:.4g} (t = {z:.2f})"
        )
        if losses:
            text += "; losses to: " + ", ".join(sorted({f"{s[2]}" for s in losses}))
        min_wins = None if needed >= total else needed
        evidence = Evidence(tuple(p_for), tuple(p_against), self.alpha, min_wins, total - needed + 1, below, total,
                            tuple(s[8][0] for s in scores), tuple(s[8][1] for s in scores),
                            against_factor=max(s[7] for s in scores),
                            repeats=min((s[9] for s in scores if s[9] is not None), default=None), effect=self.effect)
        return conclude(evidence, text)


@dataclass(frozen=True)
class BelowBound:
    """The mean ``empirical`` metric of ``method`` is below its ``bound`` metric in every setting.

    The bound is computed, not sampled: per setting :math:`t = (bound - mean)/se` on
    ``count - 1`` degrees of freedom (:func:`~dpdist.experiments.linear_p_values`; the normal
    p-values used before gave 40 % false "does not hold" at 3 repeats over 8 settings) gives
    one-sided p-values and :func:`~dpdist.experiments.decide` the verdict at
    family-wise level ``alpha``: holds when the mean is significantly below the bound
    everywhere, does not hold when Holm finds it significantly above somewhere.
    """

    empirical: str
    bound: str
    method: str
    alpha: float = ALPHA
    effect: float = EFFECT

    def __call__(self, table):
        empirical = _settings(table, self.empirical, {}, (self.method,))
        bounds = _settings(table, self.bound, {}, (self.method,))
        pairs = [(s, empirical[s][self.method], bounds[s][self.method]) for s in empirical if s in bounds]
        if not pairs:
            return INCONCLUSIVE, f"no setting has both {self.empirical!r} and {self.bound!r} for {self.method!r}"
        tests = [linear_p_values(bnd["mean"] - emp["mean"], [(standard_error(emp), emp.get("count") or 2)])
                 for _, emp, bnd in pairs]
        p_below, p_above = [t[2] for t in tests], [t[3] for t in tests]
        below, above = sum(p < self.alpha for p in p_below), holm_rejections(p_above, self.alpha)
        agree = sum(emp["mean"] < bnd["mean"] for _, emp, bnd in pairs)
        evidence = Evidence(tuple(p_below), tuple(p_above), self.alpha, agree=agree, total=len(pairs),
                            noncentrality=tuple(_noncentrality(self.effect * bnd["mean"], standard_error(emp))
                                                for _, emp, bnd in pairs),
                            df=tuple(t[1] for t in tests), repeats=repeats_of(*(emp for _, emp, _ in pairs)),
                            effect=self.effect)
        ratio, setting, emp, bnd = max((p[1]["mean"] / p[2]["mean"], p[0], p[1], p[2]) for p in pairs)
        text = (
            f"{self.empirical} significantly below the bound (one-sided alpha {self.alpha:g}) in {below} of "
            f"{len(pairs)} settings, significantly above (Holm) in {above}; "
            f"closest ({describe_setting(setting)}): {emp['mean']:.4g} vs bound {bnd['mean']:.4g} (ratio {ratio:.2f})"
        )
        return conclude(evidence, text)


def _noncentrality(effect: float, se: float) -> float:
    return abs(effect) / se if se > 0 and math.isfinite(se) else (math.inf if se == 0 else 0.0)


def _slack(empirical: dict, bound: dict) -> float:
    """Standard errors the empirical mean lies below the (computed) bound; +-inf without spread."""
    slack = bound["mean"] - empirical["mean"]
    se = standard_error(empirical)
    if se > 0:
        return slack / se
    return math.copysign(math.inf, slack) if slack else 0.0


@dataclass(frozen=True)
class BestLevelNearBound:
    """The J with the lowest mean ``empirical`` metric is within ``tolerance`` of the J
    minimizing the mean ``bound`` metric, for every epsilon of ``datasets`` (sec. 6.3).

    The bound is computed, so its minimizer :math:`J_b` is known; per (dataset, epsilon),
    :func:`~dpdist.experiments.minimum_in_p_values` with the levels within ``tolerance`` of
    :math:`J_b` as ``inside`` gives ``p_for`` (one of them has a significantly lower error
    than every other level, by Welch's one-sided t) and ``p_against`` (a level farther away
    is significantly below every near one), and :func:`~dpdist.experiments.decide` the
    verdict at family-wise level ``alpha``: holds when significant for every epsilon, does
    not hold when Holm finds an epsilon whose best level is significantly far from the bound's.
    """

    empirical: str
    bound: str
    method: str
    datasets: tuple
    tolerance: int = 1
    level_column: str = "levels"
    alpha: float = ALPHA
    effect: float = EFFECT

    def __call__(self, table):
        parts, p_for, p_against, agree, powers, counts = [], [], [], 0, [], []
        for dataset in self.datasets:
            rows = table.select(dataset=dataset, method=self.method)
            for epsilon in sorted({r["epsilon"] for r in rows}):
                at = rows.select(epsilon=epsilon)
                empirical = {r[self.level_column]: r for r in at.select(metric=self.empirical)}
                bound = {r[self.level_column]: r["mean"] for r in at.select(metric=self.bound)}
                if not empirical or not bound:
                    continue
                best = min(empirical, key=lambda j: empirical[j]["mean"])
                theory = min(bound, key=bound.get)
                near = [r for j, r in empirical.items() if abs(j - theory) <= self.tolerance]
                far = [r for j, r in empirical.items() if abs(j - theory) > self.tolerance]
                up, down = minimum_in_p_values(near, far)
                near_best = min(near, key=lambda r: r["mean"]) if near else None
                far_best = min(far, key=lambda r: r["mean"]) if far else None
                if near_best is not None and far_best is not None:
                    powers.append(comparison_power(near_best, far_best, self.effect))
                counts += [r.get("count") for r in empirical.values()]
                p_for.append(up)
                p_against.append(down)
                agree += abs(best - theory) <= self.tolerance
                parts.append(
                    (f"{dataset} eps={epsilon:g}: empirical J={best} ({empirical[best]['mean']:.4g}), "
                     f"bound J={theory} (W1 there {empirical[theory]['mean']:.4g})"
                     if theory in empirical
                     else f"{dataset} eps={epsilon:g}: empirical J={best}, bound J={theory}")
                    + f" (p for {up:.2g}, against {down:.2g})"
                )
        if not p_for:
            return INCONCLUSIVE, f"no J sweep of {self.method!r} on {list(self.datasets)}"
        count = len(p_for)
        text = (
            f"|J_emp - J_bound| <= {self.tolerance} significantly (Welch t, one-sided alpha {self.alpha:g}) in "
            f"{sum(p < self.alpha for p in p_for)} of {count}, significantly not (Holm) in "
            f"{holm_rejections(p_against, self.alpha)}; by the means in {agree} of {count} (sign test p = "
            f"{sign_test(agree, count):.2g}): " + "; ".join(parts)
        )
        evidence = Evidence(tuple(p_for), tuple(p_against), self.alpha, agree=agree, total=count,
                            noncentrality=tuple(p[0] for p in powers) if len(powers) == count else None,
                            df=tuple(p[1] for p in powers) if len(powers) == count else None,
                            repeats=int(min(c for c in counts if c)) if any(counts) else None, effect=self.effect)
        return conclude(evidence, text)


@dataclass(frozen=True)
class StaysAbove:
    r"""The mean ``metric`` of ``method`` stays above ``share * floor`` (a bias that no
    budget removes) at the largest epsilon in ``where``.

    One setting: Welch's one-sided t of the row against the computed constant
    ``share * floor`` (:func:`~dpdist.experiments.welch_p_values` with a zero-spread row, so
    :math:`t = (\bar m - share \cdot floor)/se` on ``count - 1`` degrees of freedom) gives the
    p-values and :func:`~dpdist.experiments.decide` the verdict at level ``alpha``: holds
    when the mean is significantly above, does not hold when significantly below.
    """

    metric: str
    method: str
    floor: float
    where: dict = field(default_factory=dict)
    share: float = 0.9
    alpha: float = ALPHA
    effect: float = EFFECT

    def __call__(self, table):
        rows = table.select(metric=self.metric, method=self.method, **self.where)
        if len(rows) == 0:
            return INCONCLUSIVE, f"no row of {self.method!r} for {self.metric!r}"
        row = max(rows, key=lambda r: r["epsilon"])
        target = self.share * self.floor
        constant = {"mean": target, "se": 0.0, "count": math.inf}
        t, p_above, p_below = welch_p_values(constant, row)  # t > 0: the row lies above the constant
        mean, se = row["mean"], standard_error(row)
        text = (
            f"{self.method} at eps={row['epsilon']:g}: {self.metric} {mean:.4g} (se {se:.2g}) vs "
            f"{self.share:g} x floor {self.floor:.4g} = {target:.4g} (t = {t:.2f}, one-sided p above "
            f"{p_above:.2g}, below {p_below:.2g}; alpha {self.alpha:g})"
        )
        evidence = Evidence((p_above,), (p_below,), self.alpha, agree=int(mean > target), total=1,
                            noncentrality=(_noncentrality(self.effect * target, se),),
                            df=(max((row.get("count") or 2) - 1, 1),), repeats=repeats_of(row), effect=self.effect)
        return conclude(evidence, text)


@dataclass(frozen=True)
class FallsLess:
    r"""``metric`` of each of ``methods`` falls less from ``x = low`` to ``x = high`` on ``flat`` than on ``falling`` datasets.

    "Does not converge on the spiky data (while it does on the smooth data)": for each
    method, epsilon pair and (flat, falling) dataset pair,
    :math:`\Delta = \log\frac{e(flat, high)}{e(flat, low)} - \log\frac{e(falling, high)}{e(falling, low)}`
    with its delta-method standard error (four independent means) gives one-sided p-values of
    Student's t on Welch-Satterthwaite's degrees of freedom
    (:func:`~dpdist.experiments.log_ratio_p_values`); :func:`~dpdist.experiments.decide` the
    verdict at family-wise level ``alpha``.
    """

    metric: str
    methods: tuple
    flat: tuple
    falling: tuple
    low: float
    high: float
    x: str = "epsilon"
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA
    effect: float = EFFECT

    def __call__(self, table):
        rows = table.select(metric=self.metric, **self.where).select(**{self.x: [self.low, self.high]})
        means = {(r["method"], r["dataset"], r[self.x]): r for r in rows.select(method=list(self.methods))}
        p_for, p_against, comparisons = [], [], []
        for method in self.methods:
            for flat in self.flat:
                for falling in self.falling:
                    four = [means.get((method, d, x)) for d in (flat, falling) for x in (self.high, self.low)]
                    if any(r is None or not r["mean"] > 0 for r in four):
                        continue
                    drop_flat = math.log(four[0]["mean"] / four[1]["mean"])
                    drop_falling = math.log(four[2]["mean"] / four[3]["mean"])
                    se = math.sqrt(sum((standard_error(r) / r["mean"]) ** 2 for r in four))
                    z, df, up, down = log_ratio_p_values((four[0], four[3]), (four[1], four[2]))
                    p_for.append(up)
                    p_against.append(down)
                    comparisons.append((z, math.exp(drop_flat), math.exp(drop_falling), f"{method}, {flat} vs {falling}",
                                        _noncentrality(math.log1p(self.effect), se), df, repeats_of(*four)))
        if not comparisons:
            return INCONCLUSIVE, f"no rows of {list(self.methods)} on both dataset groups at {self.x} = {self.low:g} and {self.high:g}"
        z, flat_ratio, falling_ratio, where = min(comparisons)[:4]
        text = (
            f"{self.metric} at {self.x} = {self.high:g} / at {self.low:g}: higher on {'/'.join(self.flat)} than on "
            f"{'/'.join(self.falling)} significantly (one-sided alpha {self.alpha:g}) in "
            f"{sum(p < self.alpha for p in p_for)} of {len(comparisons)} comparisons, lower (Holm) in "
            f"{holm_rejections(p_against, self.alpha)}; weakest ({where}): {flat_ratio:.3g} vs {falling_ratio:.3g} "
            f"(t = {z:.1f})"
        )
        evidence = Evidence(tuple(p_for), tuple(p_against), self.alpha, agree=sum(c[1] > c[2] for c in comparisons),
                            total=len(comparisons), noncentrality=tuple(c[4] for c in comparisons),
                            df=tuple(c[5] for c in comparisons),
                            repeats=min((c[6] for c in comparisons if c[6]), default=None), effect=self.effect)
        return conclude(evidence, text)
