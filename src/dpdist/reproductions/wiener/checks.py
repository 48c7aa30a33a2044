r"""Claim checks of the ``wiener`` reproduction (paper 001), on the summary table.

:class:`SpectrumMatches` (Fig. 3: the analytic noise power of Theorem 3 against the
empirical one), :class:`Stuck` (Fig. 5: an iteration that does not move) and
:class:`DwHelpsLittle` (DW gains less on permuted data); ratios and rankings use the
claims library of :mod:`dpdist.experiments` (:class:`~dpdist.experiments.RatioWithin`,
:func:`~dpdist.experiments.lowest_of`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from scipy import stats

from ...experiments import (
    z_value,
    ALPHA,
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    decide,
    describe_setting,
    holm_rejections,
    rows_by,
    sign_test,
    standard_error,
)
from ...experiments import ResultsTable

__all__ = ["SpectrumMatches", "Stuck", "DwHelpsLittle", "Converged", "GainGrows"]


def _one(table, metric, method, where):
    """The summary row of ``method`` on ``metric`` in the setting ``where``; None when the run
    has no such row (e.g. a partial run), which makes the claim inconclusive."""
    rows = table.select(metric=metric, **{**where, "method": method}).rows
    if len(rows) > 1:
        raise ValueError(f"expected one row for {method!r} {metric!r} {where}, found {len(rows)}")
    return rows[0] if rows else None


def _no_row(metric, method, where) -> tuple[str, str]:
    return INCONCLUSIVE, f"no rows for {method!r} on {metric!r} with {where}"



@dataclass(frozen=True)
class SpectrumMatches:
    r"""Fig. 3: the empirical/analytic noise power ratio is 1 within ``margin`` standard errors
    in every band, except KRR's band 0 (:math:`P_0 = 0`), which must be 0 to rounding.

    The standard error is the known one, not the spread of a few repeats: the noise is a
    sum of many independent reports, so :math:`N_k` is nearly Gaussian and
    :math:`|N_k|^2 / P_k` is Exp(1) (sd 1) for :math:`0 < k < d/2` and
    :math:`\chi^2_1` (sd :math:`\sqrt 2`) at 0 and :math:`d/2`.  The mean over the
    :math:`m_b` frequencies of band ``b`` and :math:`R` repeats has sd at most
    :math:`\sqrt{2 / (m_b R)}`; ``margin = 4`` keeps a false alarm among ~70 cells rare.
    ``domain_size`` maps a dataset key of the table to its number of items d.

    This is the one check that does not decide with :func:`~dpdist.experiments.decide`
    (docs/experiments.md, "Verdicts"), because it does not fit it.  The claim is a point
    hypothesis (the ratio *is* 1: a calibration of Theorem 3), and ``decide`` needs a
    one-sided p-value *for* the claim in every setting; a point hypothesis has none, and an
    equivalence band that could be shown instead is out of reach in the bands of few
    frequencies (band 0 at 4 repeats has sd :math:`\sqrt{2/4} = 0.71`).  Holm over the
    cells' two-sided normal p-values would control the "does not hold" side, but the normal
    tail understates that of a mean of few :math:`\chi^2` terms by orders of magnitude
    (band 0 at 4 repeats: :math:`P(\chi^2_4/4 > 1 + 3.4 \cdot 0.71) = 0.0086` against the
    normal 0.00034), so it would raise false alarms; the 4-SE margin (:math:`\chi^2_4` tail
    0.004 there) is kept, and "holds" means no cell deviates by more than it.
    """

    domain_size: Callable[[str], int]
    metric: str = "noise_ratio"
    zero_dc_methods: tuple = ()
    margin: float = 4.0

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = table.select(metric=self.metric).rows
        if not rows:
            return INCONCLUSIVE, "no noise-spectrum rows"
        worst: tuple[float, dict | None, float] = (-1.0, None, math.nan)
        misses, zeros, checked = 0, [], 0
        for row in rows:
            if row["method"] in self.zero_dc_methods and row["metric_band"] == 0:
                zeros.append(abs(row["mean"]))
                misses += abs(row["mean"]) > 1e-9
                continue
            d = self.domain_size(row["dataset"])
            band = int(row["metric_band"])
            frequencies = 1 if band == 0 else min(2 ** (band - 1), d // 2 + 1 - 2 ** (band - 1))
            se = math.sqrt(2.0 / (frequencies * row["count"]))
            z = abs(row["mean"] - 1) / se
            checked += 1
            misses += z > self.margin
            if z > worst[0]:
                worst = (z, row, se)
        z, largest, se = worst
        if largest is None:
            return INCONCLUSIVE, "no noise-spectrum row outside the zero bands"
        row = largest
        text = (
            f"{len(rows) - misses} of {len(rows)} (dataset, protocol, band) cells match; largest deviation "
            f"{row['method']} on {row['dataset']} band {row['metric_band']}: ratio {row['mean']:.4f} "
            f"(known SE {se:.4f}, |z| = {z:.2f}); KRR band-0 power / P_k: max {max(zeros, default=math.nan):.2e}"
        )
        return (HOLDS if misses == 0 else DOES_NOT_HOLD), text



@dataclass(frozen=True)
class Stuck:
    r"""Fig. 5: ``method``'s MSE after ``last`` iterations is within ``tolerance`` (relative) of
    its initial value (iteration 0) -- "KRR-IIW-G is stuck at the initial value".

    One setting: the ratio :math:`r = \bar e_{last} / \bar e_0` with its delta-method
    standard error (the two means taken as independent; they come from the same runs, so
    it is conservative) and its distance inside the band :math:`[1 - tol, 1 + tol]`,
    :math:`z = \min(r - 1 + tol, 1 + tol - r)/se_r`, give one-sided normal p-values ("not
    inside", "not outside", as :class:`~dpdist.experiments.RatioWithin`), and
    :func:`~dpdist.experiments.decide` the verdict at level ``alpha``: holds when ``r`` is
    significantly inside the band, does not hold when significantly outside.
    """

    method: str
    where: dict
    last: int = 200
    tolerance: float = 0.1
    alpha: float = ALPHA

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        first = _one(table, "mse_iter", self.method, {**self.where, "metric_iteration": 0})
        final = _one(table, "mse_iter", self.method, {**self.where, "metric_iteration": self.last})
        if first is None or final is None:
            return _no_row("mse_iter", self.method, {**self.where, "metric_iteration": [0, self.last]})
        if not (first["mean"] > 0 and final["mean"] > 0):
            return INCONCLUSIVE, f"{self.method}: MSE not positive ({first['mean']:.4g}, {final['mean']:.4g})"
        ratio = final["mean"] / first["mean"]
        se = ratio * math.hypot(standard_error(final) / final["mean"], standard_error(first) / first["mean"])
        slack = min(ratio - (1 - self.tolerance), 1 + self.tolerance - ratio)
        z = z_value(slack, se)
        p_inside, p_outside = _normal_p_values(z)
        text = (f"{self.method}: MSE {first['mean']:.4g} at iteration 0, {final['mean']:.4g} at {self.last} "
                f"({ratio - 1:+.1%} +- {se:.1%}; 'stuck' means within {self.tolerance:.0%}): z = {z:.2f} inside the "
                f"band, one-sided p inside {p_inside:.2g}, outside {p_outside:.2g} (alpha {self.alpha:g})")
        return decide([p_inside], [p_outside], self.alpha), text


@dataclass(frozen=True)
class DwHelpsLittle:
    r"""DW's gain (MSE of the plain estimate / MSE after DW) is smaller on ``permuted`` than on
    ``smooth`` at every epsilon of ``epsilons``: the permutation destroys the smoothness DW
    exploits.  ``where`` picks the rows (the sweep of the epsilon figure).

    Per epsilon, the difference of the log gains
    :math:`\Delta = \log g_{smooth} - \log g_{permuted}` with its delta-method standard
    error (four independent means) gives one-sided normal p-values, and
    :func:`~dpdist.experiments.decide` the verdict at family-wise level ``alpha``: holds
    when :math:`\Delta > 0` is significant at every epsilon, does not hold when Holm finds
    an epsilon where it is significantly negative.
    """

    protocol: str
    smooth: str
    permuted: str
    epsilons: tuple
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        lines, p_for, p_against, agree = [], [], [], 0
        for epsilon in self.epsilons:
            where = {**self.where, "epsilon": epsilon}
            gains = {}
            for dataset in (self.smooth, self.permuted):
                plain = _one(table, "mse", self.protocol, {**where, "dataset": dataset})
                filtered = _one(table, "mse", f"{self.protocol}-DW", {**where, "dataset": dataset})
                if plain is None or filtered is None:
                    return _no_row("mse", [self.protocol, f"{self.protocol}-DW"], {**where, "dataset": dataset})
                if not (plain["mean"] > 0 and filtered["mean"] > 0):
                    return INCONCLUSIVE, f"MSE not positive on {dataset} at eps={epsilon:g}"
                gains[dataset] = _log_ratio(plain, filtered)
            (smooth, var_smooth), (permuted, var_permuted) = gains[self.smooth], gains[self.permuted]
            z = z_value(smooth - permuted, math.sqrt(var_smooth + var_permuted))
            up, down = _normal_p_values(z)
            p_for.append(up)
            p_against.append(down)
            agree += permuted < smooth
            lines.append(f"eps={epsilon:g}: {math.exp(permuted):.2f}x vs {math.exp(smooth):.2f}x (z = {z:.1f})")
        total = len(p_for)
        text = (f"MSE {self.protocol} / {self.protocol}-DW on {self.permuted} vs {self.smooth}: smaller significantly "
                f"(one-sided alpha {self.alpha:g}) at {sum(p < self.alpha for p in p_for)} of {total} epsilons, "
                f"larger (Holm) at {holm_rejections(p_against, self.alpha)}; smaller at {agree} of {total} (sign test "
                f"p = {sign_test(agree, total):.2g}); " + "; ".join(lines))
        return decide(p_for, p_against, self.alpha), text



def _log_ratio(numerator: dict, denominator: dict) -> tuple[float, float]:
    """``log(mean_n / mean_d)`` and its delta-method variance (the two means taken as independent;
    ``inf`` when a standard error is unknown, see :func:`~dpdist.experiments.standard_error`)."""
    value = math.log(numerator["mean"] / denominator["mean"])
    variance = (standard_error(numerator) / numerator["mean"]) ** 2
    variance += (standard_error(denominator) / denominator["mean"]) ** 2
    return value, variance


def _normal_p_values(z: float) -> tuple[float, float]:
    return float(stats.norm.sf(z)), float(stats.norm.cdf(z))


@dataclass(frozen=True)
class Converged:
    r"""The iterates have converged by iteration ``at``: MSE(at) <= (1 + tolerance) MSE(final), every setting.

    Per setting (dataset, epsilon, method) the log ratio of the two means and its
    delta-method standard error give one-sided normal p-values for
    :math:`\log r < \log(1 + tolerance)`, and :func:`~dpdist.experiments.decide` the verdict
    at family-wise level ``alpha``.  Both iterates come from the same runs, so their errors are
    positively correlated and the independent-means standard error is conservative.
    """

    method: tuple
    at: int
    final: int
    tolerance: float = 0.1
    metric: str = "mse_iter"
    column: str = "metric_iteration"
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = table.select(metric=self.metric, **self.where).select(method=list(self.method))
        rows = rows.select(**{self.column: [self.at, self.final]})
        p_for, p_against, ratios = [], [], []
        for setting, pair in rows_by(rows, self.column).items():
            if self.at not in pair or self.final not in pair or not pair[self.final]["mean"] > 0:
                continue
            value, variance = _log_ratio(pair[self.at], pair[self.final])
            z = (math.log1p(self.tolerance) - value) / math.sqrt(variance) if variance > 0 else math.inf
            up, down = _normal_p_values(z)
            p_for.append(up)
            p_against.append(down)
            ratios.append((math.exp(value), describe_setting(setting)))
        if not ratios:
            return INCONCLUSIVE, f"no setting has iterations {self.at} and {self.final} of {list(self.method)}"
        worst = max(ratios)
        text = (
            f"MSE at iteration {self.at} / at {self.final} <= {1 + self.tolerance:g} significantly (one-sided alpha "
            f"{self.alpha:g}) in {sum(p < self.alpha for p in p_for)} of {len(ratios)} settings, above (Holm) in "
            f"{holm_rejections(p_against, self.alpha)}; largest ratio {worst[0]:.3g} ({worst[1]})"
        )
        return decide(p_for, p_against, self.alpha), text


@dataclass(frozen=True)
class GainGrows:
    r"""A filter's gain MSE(plain) / MSE(filtered) is larger at ``x = high`` than at ``x = low``, every setting.

    For each (plain, filtered) pair and setting (dataset, epsilon), the difference of the log
    gains at the two values of ``x`` with its delta-method standard error (four independent
    means) gives one-sided normal p-values; :func:`~dpdist.experiments.decide` the verdict.
    """

    pairs: tuple
    x: str
    low: float
    high: float
    metric: str = "mse"
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        p_for, p_against, changes = [], [], []
        for plain, filtered in self.pairs:
            rows = table.select(metric=self.metric, **self.where).select(method=[plain, filtered])
            rows = rows.select(**{self.x: [self.low, self.high]})
            cells: dict = {}
            for row in rows:
                key = tuple((c, row[c]) for c in ("dataset", "epsilon") if c in row)
                cells.setdefault(key, {})[(row["method"], row[self.x])] = row
            for key, found in cells.items():
                four = [found.get((m, x)) for x in (self.high, self.low) for m in (plain, filtered)]
                if any(r is None or not r["mean"] > 0 for r in four):
                    continue
                gain_high, var_high = _log_ratio(four[0], four[1])
                gain_low, var_low = _log_ratio(four[2], four[3])
                se = math.sqrt(var_high + var_low)
                z = (gain_high - gain_low) / se if se > 0 else math.copysign(math.inf, gain_high - gain_low)
                up, down = _normal_p_values(z)
                p_for.append(up)
                p_against.append(down)
                changes.append((z, math.exp(gain_low), math.exp(gain_high), f"{filtered}, {describe_setting(key)}"))
        if not changes:
            return INCONCLUSIVE, f"no setting has the pairs {list(self.pairs)} at {self.x} = {self.low:g} and {self.high:g}"
        z, low, high, where = min(changes)
        text = (
            f"gain at {self.x} = {self.high:g} above the gain at {self.low:g} significantly (one-sided alpha "
            f"{self.alpha:g}) in {sum(p < self.alpha for p in p_for)} of {len(changes)} settings, below (Holm) in "
            f"{holm_rejections(p_against, self.alpha)}; weakest ({where}): {low:.3g}x -> {high:.3g}x (z = {z:.1f})"
        )
        return decide(p_for, p_against, self.alpha), text
