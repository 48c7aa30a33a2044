"""Contrasts of four means: :class:`RatioContrast` (a ratio of errors larger in one group of settings
than in another: "AQ does relatively worse on smooth data", "DW gains less on permuted data", "the
error falls less with eps on spiky data") and :class:`GapShrinks` (a gap to a reference shrinks
along x)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ...errors import InvalidParameterError
from .._claims import (
    ALPHA, EFFECT, INCONCLUSIVE, STAT_COLUMNS, Evidence, conclude, describe_setting, holm_rejections,
    linear_p_values, log_ratio_p_values, noncentrality, repeats_of, standard_error,
)
from .._table import ResultsTable
from ._rows import count, curves, metric_name, select_metrics

__all__ = ["RatioContrast", "GapShrinks"]


@dataclass(frozen=True)
class RatioContrast:
    r"""The ratio of mean errors ``numerator / denominator`` is larger on ``larger`` than on ``smaller``.

    ``numerator`` and ``denominator`` are values of ``column`` (two methods: "AQ's error relative to
    MP's"; a method and its filtered version: "DW's gain"; or two epsilons: "how much the error
    falls from eps = 1 to 4"); ``larger`` and ``smaller`` are values of ``across`` (datasets, or
    another column: "the gain grows with d").  For each setting (every other column but
    ``unmatched``) and each pair (a of ``larger``, b of ``smaller``), the log ratio of ratios
    :math:`\Delta = \log(\bar e_{a,num}/\bar e_{a,den}) - \log(\bar e_{b,num}/\bar e_{b,den})` with the
    delta-method standard error :math:`\sqrt{\sum (se/\bar e)^2}` of its four independent means gives
    one-sided p-values of Student's t on Welch-Satterthwaite's degrees of freedom
    (:func:`~dpdist.experiments.log_ratio_p_values`), and :func:`decide` the verdict at family-wise
    level ``alpha``: holds when :math:`\Delta > 0` is significant in every comparison, does not hold
    when Holm finds :math:`\Delta < 0` in one.  The effect is a factor ``1 + effect`` between the ratios.

    ``unmatched`` names columns left out of the setting, so groups run at different values of them
    are paired (e.g. ``("n",)``: real datasets at their own sample size against synthetic ones at
    n = 10^4); within a paired setting each (``across``, ``column``) value must have one row, else
    :class:`~dpdist.errors.InvalidParameterError`.
    """

    metric: str | tuple
    numerator: Any
    denominator: Any
    larger: tuple
    smaller: tuple
    column: str = "method"
    across: str = "dataset"
    where: dict = field(default_factory=dict)
    unmatched: tuple = ()
    alpha: float = ALPHA
    effect: float = EFFECT

    def _cells(self, table: ResultsTable) -> dict:
        """``{setting: {(across value, column value): row}}``."""
        rows = select_metrics(table, self.metric, self.where).select(
            **{self.column: [self.numerator, self.denominator], self.across: [*self.larger, *self.smaller]})
        left_out = {self.column, self.across, *STAT_COLUMNS, *self.unmatched}
        cells: dict[tuple, dict] = {}
        for row in rows:
            key = tuple((c, row[c]) for c in row if c not in left_out)
            found = cells.setdefault(key, {})
            if (row[self.across], row[self.column]) in found:
                raise InvalidParameterError(
                    f"unmatched={self.unmatched!r}: {self.column}={row[self.column]!r} at {self.across}="
                    f"{row[self.across]!r} has two rows at ({describe_setting(key)}) (e.g. "
                    f"{describe_setting((c, row[c]) for c in self.unmatched)}); allowed: at most one value of the "
                    "unmatched columns per group (narrow it with where=)")
            found[(row[self.across], row[self.column])] = row
        return cells

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        comparisons = []  # (t, factor, description, p_for, p_against, noncentrality, df, repeats)
        for key, found in self._cells(table).items():
            for a in self.larger:
                for b in self.smaller:
                    four = [found.get((g, v)) for g in (a, b) for v in (self.numerator, self.denominator)]
                    if any(r is None or not r["mean"] > 0 for r in four):
                        continue
                    an, ad, bn, bd = four
                    t, df, up, down = log_ratio_p_values((an, bd), (ad, bn))
                    se = math.sqrt(sum((standard_error(r) / r["mean"]) ** 2 for r in four))
                    factor = (an["mean"] / ad["mean"]) / (bn["mean"] / bd["mean"])
                    pair = f"{a} vs {b}"
                    if self.unmatched:
                        pair = (f"{a} ({describe_setting((c, an.get(c)) for c in self.unmatched)}) vs {b} "
                                f"({describe_setting((c, bn.get(c)) for c in self.unmatched)})")
                    ratios = f"{an['mean'] / ad['mean']:.3g} vs {bn['mean'] / bd['mean']:.3g}"
                    shown = describe_setting(key, () if isinstance(self.metric, (list, tuple)) else ("metric",))
                    comparisons.append((t, factor, f"{shown}, {pair}: {ratios}", up, down,
                                        noncentrality(math.log1p(self.effect), se), df, repeats_of(*four)))
        if not comparisons:
            return INCONCLUSIVE, (f"no setting has {self.numerator!r} and {self.denominator!r} on both groups of "
                                  f"{self.across}")
        p_for, p_against = [c[3] for c in comparisons], [c[4] for c in comparisons]
        agree = sum(c[1] > 1 for c in comparisons)
        t, factor, where = min(comparisons, key=lambda c: c[0])[:3]
        text = (
            f"{metric_name(self.metric)}: {self.numerator}/{self.denominator} on {'/'.join(map(str, self.larger))} "
            f"over the same on {'/'.join(map(str, self.smaller))}: above 1 significantly (one-sided alpha "
            f"{self.alpha:g}) in "
            f"{sum(p < self.alpha for p in p_for)} of {len(comparisons)} comparisons, below (Holm) in "
            f"{holm_rejections(p_against, self.alpha)}; factors "
            f"{min(c[1] for c in comparisons):.3g}..{max(c[1] for c in comparisons):.3g}, weakest ({where}): "
            f"{factor:.3g} (t = {t:.1f})"
        )
        evidence = Evidence(tuple(p_for), tuple(p_against), self.alpha, None, 1, agree, len(comparisons),
                            tuple(c[5] for c in comparisons), tuple(c[6] for c in comparisons), 1,
                            min((c[7] for c in comparisons if c[7]), default=None), self.effect)
        return conclude(evidence, text)


@dataclass(frozen=True)
class GapShrinks:
    r"""The gap ``private - reference`` at the largest ``x`` is below ``fraction`` of the gap at the smallest ``x``.

    Per curve, :math:`D = f\,(\bar p_0 - \bar r_0) - (\bar p_1 - \bar r_1)` (``f`` the
    ``fraction``, 0 and 1 the smallest and largest ``x``) with Welch's t of four independent means
    on Welch-Satterthwaite's degrees of freedom gives one-sided p-values; "for" also needs the first
    gap :math:`\bar p_0 - \bar r_0` significantly positive (the larger of the two p-values:
    intersection-union).  :func:`decide` gives the verdict at family-wise level ``alpha``: holds
    when every curve is significant, does not hold when Holm finds a curve with :math:`D`
    significantly negative (the gap did not shrink so).
    """

    private: str
    reference: str
    metric: str | tuple
    x: str
    fraction: float = 0.5
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA
    effect: float = EFFECT

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        theirs = curves(table, self.reference, self.metric, self.x, self.where)
        p_for, p_against, agree, notes, powers, counts = [], [], 0, [], [], []
        f = self.fraction
        for setting, points in curves(table, self.private, self.metric, self.x, self.where).items():
            reference = dict(theirs.get(setting, []))
            (x0, first), (x1, last) = points[0], points[-1]
            if x0 not in reference or x1 not in reference:
                continue
            gap0, gap1 = first["mean"] - reference[x0]["mean"], last["mean"] - reference[x1]["mean"]
            terms0 = [(standard_error(first), count(first)), (standard_error(reference[x0]), count(reference[x0]))]
            terms1 = [(standard_error(last), count(last)), (standard_error(reference[x1]), count(reference[x1]))]
            terms = [(f * se, n) for se, n in terms0] + terms1
            shrink, df, shrink_for, shrink_against = linear_p_values(f * gap0 - gap1, terms)
            p_for.append(max(shrink_for, linear_p_values(gap0, terms0)[2]))
            p_against.append(shrink_against)
            scale = math.sqrt(sum(se**2 for se, _ in terms))
            powers.append((noncentrality(self.effect * gap0 * f, scale), df))
            counts.append(repeats_of(first, last, reference[x0], reference[x1]))
            agree += gap0 > 0 and gap1 < f * gap0
            notes.append(f"{describe_setting(setting)}: gap {gap0:.3g} at {self.x}={x0:g} -> {gap1:.3g} at {x1:g} "
                         f"(t = {shrink:.1f})")
        if not p_for:
            return INCONCLUSIVE, f"no curve has both {self.private!r} and {self.reference!r}"
        total = len(p_for)
        text = (f"gap shrank below {f:g}x significantly (one-sided alpha {self.alpha:g}) on "
                f"{sum(p < self.alpha for p in p_for)} of {total} curves, significantly not (Holm) on "
                f"{holm_rejections(p_against, self.alpha)}; " + "; ".join(notes[:4]))
        return conclude(Evidence(tuple(p_for), tuple(p_against), self.alpha, None, 1, agree, total,
                                 tuple(p[0] for p in powers), tuple(p[1] for p in powers), 1,
                                 min((c for c in counts if c), default=None), self.effect), text)
