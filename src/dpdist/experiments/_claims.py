"""Claims of a paper as data: checks ``table -> (outcome, explanation)`` on the summary table.

The claims library every reproduction builds its checks on:

* outcomes :data:`HOLDS`, :data:`DOES_NOT_HOLD`, :data:`INCONCLUSIVE` and
  :func:`combine_outcomes` (all hold: holds; one does not: does not hold);
* the statistics of a summary row (:data:`STAT_COLUMNS`, :func:`standard_error`) and the
  one z-score, :func:`z_score` ``(better, worse)``;
* settings: :func:`group_settings` (rows by every column but the statistics and the
  ones named), :func:`rows_by` (``{setting: {label: row}}``) and
  :func:`describe_setting` (``"dataset=beta-5-2, epsilon=1"``);
* the common checks: :func:`better_than` ("method A has a lower error than method B"
  over every matching setting, judged with the standard errors over repeats),
  :func:`lowest_of`, :class:`AllOf` and :class:`RatioWithin`;
* the one decision rule they share, :func:`decide` (docs/experiments.md, "Verdicts"): a
  claim over S settings **holds** when it is significant at level ``alpha`` in every
  setting (an intersection-union test: the chance of "holds" when the claim fails in some
  setting is at most ``alpha``), **does not hold** when Holm's step-down procedure finds at
  least one setting significantly against it (family-wise error at most ``alpha`` over the
  S settings), and is inconclusive otherwise; the explanation adds a sign test of the
  direction across settings.  Its helpers: :func:`welch_p_values`, :func:`normal_p_values`,
  :func:`holm_rejections` / :func:`holm_rejected` (how many, which) and
  :func:`minimum_in_p_values` ("the lowest point of a curve is among these").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
from scipy import stats

from ._table import STAT_COLUMNS as _SUMMARY_COLUMNS
from ._table import ResultsTable

__all__ = [
    "HOLDS", "DOES_NOT_HOLD", "INCONCLUSIVE", "CHECK_CRASHED", "STAT_COLUMNS",
    "better_than", "BetterThan", "lowest_of", "AllOf", "RatioWithin", "evaluate_claims",
    "combine_outcomes", "standard_error", "z_score", "z_value", "group_settings", "rows_by", "describe_setting",
    "ALPHA", "decide", "holm_rejections", "holm_rejected", "normal_p_values", "sign_test", "welch_p_values",
    "minimum_in_p_values",
]

HOLDS, DOES_NOT_HOLD, INCONCLUSIVE = "holds", "does not hold", "inconclusive"
#: The statistics columns of a summary table (:func:`~dpdist.experiments.summarize`); every
#: other column but ``metric`` and the compared label is part of a setting.
STAT_COLUMNS = frozenset(_SUMMARY_COLUMNS)
#: Family-wise error rate of every verdict (see :func:`decide`).
ALPHA = 0.05


# ---------------------------------------------------------------------- statistics of a row
def standard_error(row: Mapping[str, Any]) -> float:
    """The ``se`` of a summary row, or ``inf`` when it is unknown (fewer than 2 repeats, not finite).

    An unknown standard error is infinite uncertainty: comparisons built on it come out
    inconclusive instead of being decided by a single repeat.
    """
    se, count = row.get("se"), row.get("count", 2)
    if se is None or count is None or count < 2 or not math.isfinite(float(se)):
        return math.inf
    return float(se)


def z_value(difference: float, se: float) -> float:
    """``difference / se``: +-inf (0 for no difference) without spread, 0 when ``se`` is unknown (inf)."""
    if not math.isfinite(se):
        return 0.0
    if se > 0:
        return difference / se
    return math.copysign(math.inf, difference) if difference else 0.0


def z_score(better: Mapping[str, Any], worse: Mapping[str, Any]) -> float:
    r"""How many standard errors ``better``'s mean lies below ``worse``'s.

    :math:`z = (\bar m_{worse} - \bar m_{better}) / \sqrt{se_{better}^2 + se_{worse}^2}`,
    positive when ``better`` is lower; ``0`` when a standard error is unknown
    (:func:`standard_error` is ``inf``), and :math:`\pm\infty` when neither row has any
    spread but the means differ (any difference is then decisive).
    """
    se = math.hypot(standard_error(better), standard_error(worse))
    difference = worse["mean"] - better["mean"]
    if se > 0:
        return difference / se
    return math.copysign(math.inf, difference) if difference else 0.0


def combine_outcomes(outcomes: Iterable[str]) -> str:
    """:data:`HOLDS` if every outcome holds, :data:`DOES_NOT_HOLD` if one does not, else inconclusive."""
    outcomes = list(outcomes)
    if outcomes and all(outcome == HOLDS for outcome in outcomes):
        return HOLDS
    if any(outcome == DOES_NOT_HOLD for outcome in outcomes):
        return DOES_NOT_HOLD
    return INCONCLUSIVE


# ---------------------------------------------------------------------- the decision rule
def welch_p_values(better: Mapping[str, Any], worse: Mapping[str, Any]) -> tuple[float, float, float]:
    r"""``(t, p_for, p_against)``: Welch's t of ``better`` below ``worse`` and its one-sided p-values.

    :math:`t` is :func:`z_score`; its degrees of freedom are Welch–Satterthwaite's from the
    rows' ``count`` (so 3 repeats weigh as 3 repeats, not as a normal approximation).
    ``p_for`` tests "better is not lower", ``p_against`` "better is not higher".
    """
    t = z_score(better, worse)
    if math.isinf(t):
        return t, (0.0 if t > 0 else 1.0), (1.0 if t > 0 else 0.0)
    se_b, se_w = standard_error(better), standard_error(worse)
    n_b, n_w = better.get("count") or 2, worse.get("count") or 2
    denominator = se_b**4 / max(n_b - 1, 1) + se_w**4 / max(n_w - 1, 1)
    df = (se_b**2 + se_w**2) ** 2 / denominator if denominator > 0 and math.isfinite(denominator) else math.inf
    df = max(df, 1.0)
    return t, float(stats.t.sf(t, df)), float(stats.t.cdf(t, df))


def holm_rejections(p_values: Iterable[float], alpha: float = ALPHA) -> int:
    """Number of hypotheses Holm's step-down procedure rejects at family-wise level ``alpha``."""
    ordered = sorted(p_values)
    for index, p in enumerate(ordered):
        if p > alpha / (len(ordered) - index):
            return index
    return len(ordered)


def holm_rejected(p_values: Iterable[float], alpha: float = ALPHA) -> list[int]:
    """Indices of the hypotheses Holm's step-down procedure rejects at family-wise level ``alpha``.

    The :func:`holm_rejections` smallest p-values (ties broken by position), in increasing
    order of p: what an explanation may name as significant after the correction.
    """
    p_values = list(p_values)
    order = sorted(range(len(p_values)), key=lambda index: (p_values[index], index))
    return order[: holm_rejections(p_values, alpha)]


def minimum_in_p_values(inside: list[Mapping[str, Any]], outside: list[Mapping[str, Any]]) -> tuple[float, float]:
    r"""``(p_for, p_against)`` of "the lowest mean of a curve lies at a point of ``inside``".

    ``inside`` and ``outside`` are summary rows of one curve (e.g. the grid points in a
    range of x and the others).  "For": some inside point is lower than every outside point:
    per inside point the largest one-sided Welch p of "lower than" over the outside points
    (it must beat them all: intersection-union), the smallest over the inside points times
    their number (Bonferroni: the point is chosen by the data).  "Against": the same with the
    roles swapped (some outside point lower than every inside point).  No outside point:
    the claim holds by construction, ``(0, 1)``; no inside point: it cannot, ``(1, 0)``.
    """
    if not inside:
        return 1.0, 0.0
    if not outside:
        return 0.0, 1.0

    def lowest(candidates, rivals):
        best = min(max(welch_p_values(c, r)[1] for r in rivals) for c in candidates)
        return min(1.0, len(candidates) * best)

    return lowest(inside, outside), lowest(outside, inside)


def sign_test(agree: int, total: int) -> float:
    """Two-sided exact binomial p-value of ``agree`` of ``total`` settings going the claimed way."""
    return float(stats.binomtest(agree, total, 0.5).pvalue) if total else 1.0


def normal_p_values(z: float) -> tuple[float, float]:
    """``(p_for, p_against)``: one-sided standard-normal p-values of a z-score for the claim.

    ``p_for`` tests "the claim's quantity is not positive" (small when ``z`` is large),
    ``p_against`` "it is not negative"; ``z = +-inf`` gives exact 0 / 1.
    """
    return float(stats.norm.sf(z)), float(stats.norm.cdf(z))


def decide(
    p_for: list[float],
    p_against: list[float],
    alpha: float = ALPHA,
    min_losses: int = 1,
    min_wins: int | None = None,
) -> str:
    """The verdict of a claim from one-sided p-values per setting (module docstring).

    :data:`HOLDS` when every ``p_for < alpha`` (intersection–union test), :data:`DOES_NOT_HOLD`
    when Holm rejects at least ``min_losses`` of the ``p_against`` at level ``alpha``, else
    :data:`INCONCLUSIVE`.  A claim about *most* settings ("in at least k of S") passes
    ``min_wins = k``: it then holds when Holm rejects at least ``k`` of the ``p_for`` (if the
    claim is true in fewer than ``k`` settings, one of those rejections is false, which
    happens with probability at most ``alpha``), and is given ``min_losses = S - k + 1``.
    """
    if min_wins is None:
        if p_for and all(p < alpha for p in p_for):
            return HOLDS
    elif p_for and holm_rejections(p_for, alpha) >= min_wins:
        return HOLDS
    if holm_rejections(p_against, alpha) >= min_losses:
        return DOES_NOT_HOLD
    return INCONCLUSIVE


# ---------------------------------------------------------------------- settings
def group_settings(rows: ResultsTable, exclude: Iterable[str] = ()) -> dict[tuple, list[dict]]:
    """Rows grouped by setting: ``{((column, value), ...): [rows]}``.

    A setting is the values of every column but the statistics (:data:`STAT_COLUMNS`) and
    those in ``exclude``, in the table's column order.
    """
    excluded = set(exclude)
    keys = [c for c in rows.columns if c not in STAT_COLUMNS and c not in excluded]
    groups: dict[tuple, list] = {}
    for row in rows:
        groups.setdefault(tuple((k, row[k]) for k in keys), []).append(row)
    return groups


def rows_by(rows: ResultsTable, column: str = "method", exclude: Iterable[str] = ("metric",)) -> dict[tuple, dict]:
    """``{setting: {row[column]: row}}``: the rows of each setting by their ``column`` value.

    The setting leaves out ``column`` and ``exclude`` (the metric, by default); with two
    rows of one label in one setting the last wins, so select one metric first.
    """
    return {
        setting: {row[column]: row for row in group}
        for setting, group in group_settings(rows, (column, *exclude)).items()
    }


def describe_setting(setting: Iterable[tuple[str, Any]] | Mapping[str, Any], drop: Iterable[str] = ()) -> str:
    """``"column=value, ..."`` of a setting (pairs or a dict), leaving out unset values and ``drop``."""
    pairs = setting.items() if isinstance(setting, Mapping) else setting
    return ", ".join(f"{k}={v}" for k, v in pairs if v is not None and k not in drop)


# ---------------------------------------------------------------------- common checks
@dataclass(frozen=True)
class BetterThan:
    r"""``better`` has a lower mean ``metric`` than ``worse`` in every setting matched by ``where``.

    In each setting (all columns but ``column`` and the statistics), Welch's
    :math:`t = (\bar m_{worse} - \bar m_{better}) / \sqrt{se_{better}^2 + se_{worse}^2}`
    gives one-sided p-values (:func:`welch_p_values`), and :func:`decide` gives the verdict
    at family-wise level ``alpha`` (0.05): holds when ``better`` is significantly lower in
    every setting, does not hold when Holm finds ``better`` significantly higher in at least
    ``min_losses`` settings.  A claim about *some* or *most* settings gives ``min_wins = k``
    ("in at least k of the S settings"): it holds when Holm rejects at least ``k`` of the
    "for" p-values and does not hold when Holm rejects more than ``S - k`` "against" ones
    (:func:`decide`).  The claim is also inconclusive when a compared setting has
    failed cells, fewer than 2 repeats on either side or no finite standard error (one
    repeat gives no spread to judge a difference by).
    """

    metric: str
    better: Any  # a value of ``column``: a method label by default
    worse: Any
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA
    column: str = "method"
    min_losses: int = 1
    min_wins: int | None = None

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = table.select(metric=self.metric, **self.where).select(**{self.column: [self.better, self.worse]})
        settings = rows_by(rows, self.column)
        pairs = [(s, v[self.better], v[self.worse]) for s, v in settings.items() if len(v) == 2]
        if not pairs:
            return INCONCLUSIVE, f"no setting has both {self.better!r} and {self.worse!r} for {self.metric!r}"
        for setting, b, w in pairs:
            reason = _undecidable(b, self.better) or _undecidable(w, self.worse)
            if reason:
                return INCONCLUSIVE, (
                    f"cannot compare {self.better} with {self.worse} on {self.metric} at "
                    f"({describe_setting(setting)}): {reason}"
                )
        scores = [(*welch_p_values(b, w), setting, b["mean"], w["mean"]) for setting, b, w in pairs]
        p_for, p_against = [score[1] for score in scores], [score[2] for score in scores]
        if self.min_wins is None:
            outcome = decide(p_for, p_against, self.alpha, self.min_losses)
        else:
            outcome = decide(p_for, p_against, self.alpha, len(pairs) - self.min_wins + 1, self.min_wins)
        wins = sum(p < self.alpha for p in p_for) if self.min_wins is None else holm_rejections(p_for, self.alpha)
        losses = holm_rejections(p_against, self.alpha)
        agree = sum(score[0] > 0 for score in scores)
        t, _, _, setting, b_mean, w_mean = min(scores, key=lambda item: item[0])
        needed = "" if self.min_wins is None else f" (Holm; at least {self.min_wins} needed)"
        summary = (
            f"{self.better} < {self.worse} on {self.metric} significant (Welch t, one-sided alpha {self.alpha:g}) "
            f"in {wins} of {len(pairs)} settings{needed}, significantly worse (Holm) in {losses}; direction agrees in "
            f"{agree} of {len(pairs)} (sign test p = {sign_test(agree, len(pairs)):.2g}); weakest setting "
            f"({describe_setting(setting)}): {b_mean:.4g} vs {w_mean:.4g} (t = {t:.2f})"
        )
        return outcome, summary


def _undecidable(row: dict, label: str) -> str:
    """Why a summary row cannot be compared with a standard error ("" when it can)."""
    failed = row.get("failed") or 0
    if failed > 0:
        return f"{failed} failed cell(s) of {label}"
    count = row.get("count")
    if count is not None and count < 2:
        return f"{count} repeat(s) of {label}; a standard error needs at least 2"
    se = row.get("se")
    if se is None or not math.isfinite(se):
        return f"no finite standard error for {label} (se = {se})"
    return ""


def better_than(metric: str, better: Any, worse: Any, **options: Any) -> BetterThan:
    """Claim check: ``better`` beats ``worse`` on ``metric`` (see :class:`BetterThan`)."""
    return BetterThan(metric=metric, better=better, worse=worse, **options)


@dataclass(frozen=True)
class AllOf:
    """Holds when every check holds; does not hold when one does not; else inconclusive.

    The explanation lists each check's outcome and explanation.
    """

    checks: tuple

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        results = [check(table) for check in self.checks]
        lines = [f"[{outcome}] {explanation}" for outcome, explanation in results]
        return combine_outcomes(outcome for outcome, _ in results), "; ".join(lines)


def lowest_of(
    metric: str, best: str, others: Iterable[str], where: Mapping[str, Any] | None = None, alpha: float = ALPHA
) -> AllOf:
    """``best`` beats each of ``others`` on ``metric`` (a :func:`better_than` per pair)."""
    return AllOf(tuple(better_than(metric, best, other, where=dict(where or {}), alpha=alpha) for other in others))


@dataclass(frozen=True)
class RatioWithin:
    r"""Ratios :math:`r = \bar e_{other} / \bar e_{reference}` lie in ``[low, high]`` in every setting.

    For each setting matched by ``where`` and each method of ``others`` (scored by
    ``metric``) against ``reference`` (scored by ``reference_metric``), with the
    delta-method standard error
    :math:`se_r = r\sqrt{(se_o/\bar e_o)^2 + (se_{ref}/\bar e_{ref})^2}`, the distance
    :math:`z = \min(r - low, high - r)/se_r` inside the band gives one-sided normal
    p-values ("not inside", "not outside"), and :func:`decide` gives the verdict at
    family-wise level ``alpha``: holds when every comparison is significantly inside, does
    not hold when Holm finds one significantly outside, else inconclusive; settings where
    a mean is not positive are skipped.  The explanation gives the number of comparisons
    inside the band with its sign test (:func:`sign_test`), the range of :math:`r`, each
    method's median ratio and the weakest comparison.
    """

    reference: str
    reference_metric: str
    others: tuple
    metric: str
    low: float = 0.0
    high: float = math.inf
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA

    def _rows(self, table, method, metric) -> dict[tuple, dict]:
        rows = table.select(method=method, metric=metric, **self.where)
        return {setting: labelled[method] for setting, labelled in rows_by(rows).items()}

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        references = self._rows(table, self.reference, self.reference_metric)
        comparisons = []  # (distance inside the band in SE, ratio, se, other, setting, other mean, ref mean)
        for other in self.others:
            for setting, row in self._rows(table, other, self.metric).items():
                ref = references.get(setting)
                if ref is None or not (ref["mean"] > 0 and row["mean"] > 0):
                    continue
                ratio = row["mean"] / ref["mean"]
                se = ratio * math.hypot(standard_error(row) / row["mean"], standard_error(ref) / ref["mean"])
                slack = min(ratio - self.low, self.high - ratio)  # negative: outside the band
                z = slack / se if se > 0 else math.copysign(math.inf, slack) if slack else 0.0
                comparisons.append((z, ratio, se, other, setting, row["mean"], ref["mean"]))
        if not comparisons:
            return INCONCLUSIVE, f"no setting has both {self.reference!r} and any of {list(self.others)}"
        p_inside = [float(stats.norm.sf(c[0])) for c in comparisons]
        p_outside = [float(stats.norm.cdf(c[0])) for c in comparisons]
        inside = sum(p < self.alpha for p in p_inside)
        outside = holm_rejections(p_outside, self.alpha)
        agree = sum(c[0] > 0 for c in comparisons)
        ratios = np.array([c[1] for c in comparisons])
        medians = ", ".join(
            f"{other} {np.median([c[1] for c in comparisons if c[3] == other]):.3g}"
            for other in self.others
            if any(c[3] == other for c in comparisons)
        )
        z, ratio, se, other, setting, other_mean, ref_mean = min(comparisons, key=lambda c: c[0])
        band = f"[{self.low:g}, {self.high:g}]" if math.isfinite(self.high) else f">= {self.low:g}"
        summary = (
            f"ratio {self.metric} of {'/'.join(self.others)} to {self.reference_metric} of {self.reference} "
            f"{band} significantly (one-sided alpha {self.alpha:g}) in {inside} of {len(comparisons)} comparisons, "
            f"significantly outside (Holm) in {outside}; inside the band in {agree} of {len(comparisons)} (sign test "
            f"p = {sign_test(agree, len(comparisons)):.2g}); ratios range {ratios.min():.3g}..{ratios.max():.3g} "
            f"(median per method: {medians}); "
            f"weakest: {other} ({describe_setting(setting)}) {other_mean:.4g} vs {ref_mean:.4g}, "
            f"ratio {ratio:.3g} +- {se:.2g}"
        )
        return decide(p_inside, p_outside, self.alpha), summary


# ---------------------------------------------------------------------- evaluation
#: Start of the explanation of a claim whose check raised (see :func:`evaluate_claims`).
CHECK_CRASHED = "the check failed:"


def evaluate_claims(claims: Iterable[Any], table: ResultsTable) -> list[dict]:
    """``[{"text", "figure", "outcome", "explanation"}]``; a check that raises is inconclusive,
    its explanation starting with :data:`CHECK_CRASHED`."""
    results = []
    for claim in claims:
        try:
            outcome, explanation = claim.check(table)
        except Exception as error:  # a broken check must not hide the other claims
            outcome, explanation = INCONCLUSIVE, f"{CHECK_CRASHED} {type(error).__name__}: {error}"
        if outcome not in (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE):
            outcome, explanation = INCONCLUSIVE, f"the check returned an unknown outcome {outcome!r}: {explanation}"
        results.append({"text": claim.text, "figure": claim.figure, "outcome": outcome, "explanation": explanation})
    return results
