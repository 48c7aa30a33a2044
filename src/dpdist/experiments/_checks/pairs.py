"""Checks of pairs of methods: :class:`BetterThan` (one method below another in every setting) and
:class:`GroupBeats` (every method of one group below every method of another)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .._claims import (
    ALPHA, EFFECT, INCONCLUSIVE, Evidence, comparison_power, conclude, describe_setting, group_settings,
    holm_rejected, holm_rejections, repeats_of, rows_by, welch_p_values,
)
from .._table import ResultsTable
from ._rows import select_metrics

__all__ = ["BetterThan", "better_than", "GroupBeats"]


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
    better: str
    worse: str
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA
    column: str = "method"
    min_losses: int = 1
    min_wins: int | None = None
    effect: float = EFFECT

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
        powers = [comparison_power(b, w, self.effect) for _, b, w in pairs]
        min_wins = self.min_wins
        min_losses = self.min_losses if min_wins is None else len(pairs) - min_wins + 1
        agree = sum(score[0] > 0 for score in scores)
        evidence = Evidence(tuple(p_for), tuple(p_against), self.alpha, min_wins, min_losses, agree, len(pairs),
                            tuple(p[0] for p in powers), tuple(p[1] for p in powers),
                            repeats=repeats_of(*(r for _, b, w in pairs for r in (b, w))), effect=self.effect)
        wins = sum(p < self.alpha for p in p_for) if self.min_wins is None else holm_rejections(p_for, self.alpha)
        losses = holm_rejections(p_against, self.alpha)
        t, _, _, setting, b_mean, w_mean = min(scores, key=lambda item: item[0])
        needed = "" if self.min_wins is None else f" (Holm; at least {self.min_wins} needed)"
        summary = (
            f"{self.better} < {self.worse} on {self.metric} significant (Welch t, one-sided alpha {self.alpha:g}) "
            f"in {wins} of {len(pairs)} settings{needed}, significantly worse (Holm) in {losses}; "
            f"{'better' if agree * 2 >= len(pairs) else 'worse'} in {max(agree, len(pairs) - agree)}/{len(pairs)} "
            f"settings; weakest setting "
            f"({describe_setting(setting)}): {b_mean:.4g} vs {w_mean:.4g} (t = {t:.2f})"
        )
        return conclude(evidence, summary)


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
class GroupBeats:
    """Every method of ``better`` has a lower mean than every method of ``worse`` in every setting.

    Each (setting, pair) is one comparison with Welch's one-sided p-values; :func:`decide` over all
    comparisons gives the verdict at family-wise level ``alpha``: holds when every comparison is
    significant in the claimed direction, does not hold when Holm finds some pair significantly
    reversed.  ``metric`` is one metric or several (each then part of a setting).
    """

    better: tuple
    worse: tuple
    metric: str | tuple
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA
    effect: float = EFFECT

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = select_metrics(table, self.metric, self.where)
        p_for, p_against, weakest, powers, counts, agree, reversals = [], [], None, [], [], 0, []
        for setting, group in group_settings(rows, ("method",)).items():
            by_method = {r["method"]: r for r in group}
            for b in (b for b in self.better if b in by_method):
                for w in (w for w in self.worse if w in by_method):
                    t, up, down = welch_p_values(by_method[b], by_method[w])
                    powers.append(comparison_power(by_method[b], by_method[w], self.effect))
                    counts.append(repeats_of(by_method[b], by_method[w]))
                    agree += t > 0
                    p_for.append(up)
                    p_against.append(down)
                    item = (t, f"{describe_setting(setting)}: {b} {by_method[b]['mean']:.4g} vs {w} "
                               f"{by_method[w]['mean']:.4g}")
                    weakest = item if weakest is None or t < weakest[0] else weakest
                    reversals.append(item[1])
        if not p_for or weakest is None:
            return INCONCLUSIVE, "no setting has methods of both groups"
        pairs = len(p_for)
        rejected = holm_rejected(p_against, self.alpha)
        text = (f"{'/'.join(self.better)} beat {'/'.join(self.worse)} significantly (Welch t, one-sided alpha "
                f"{self.alpha:g}) in {sum(p < self.alpha for p in p_for)} of {pairs} comparisons, significantly "
                f"worse (Holm) in {len(rejected)}; weakest: {weakest[1]} (t = {weakest[0]:.1f})")
        if rejected:
            text += "; e.g. reversed: " + "; ".join(reversals[i] for i in rejected[:2])
        return conclude(Evidence(tuple(p_for), tuple(p_against), self.alpha, None, 1, agree, pairs,
                                 tuple(p[0] for p in powers), tuple(p[1] for p in powers), 1,
                                 min((c for c in counts if c), default=None), self.effect), text)
