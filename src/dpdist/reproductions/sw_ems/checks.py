r"""Claim checks of the ``sw-ems`` reproduction (paper 003, sec. 6), on the summary table.

:class:`WithinFactor` (at most a factor times the best of a reference group, e.g. the MI
choice of b against the best b of a grid) and :class:`ArgminIs` (which value of a swept
parameter is best); pairwise comparisons use the claims library of
:mod:`dpdist.experiments` (:func:`~dpdist.experiments.lowest_of`,
:class:`~dpdist.experiments.AllOf`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from scipy import stats

from ...experiments import (
    ALPHA,
    INCONCLUSIVE,
    decide,
    describe_setting,
    holm_rejections,
    normal_p_values,
    rows_by,
    standard_error,
    welch_p_values,
)
from ...experiments import ResultsTable

__all__ = ["WithinFactor", "ArgminIs", "MoreVariable"]


def _by_match(rows, match) -> dict:
    """``{values of the match columns: row}``."""
    return {tuple(row.get(column) for column in match): row for row in rows}


@dataclass(frozen=True)
class WithinFactor:
    r"""``method``'s mean ``metric`` is at most ``factor`` times the best of ``reference``.

    For each setting (the values of the ``match`` columns), ``best`` is the lowest mean
    among the reference rows (e.g. SW-EMS over a grid of b) and the claim needs
    :math:`m \le f \cdot best`.  With
    :math:`z = (f \cdot best - m) / \sqrt{se_m^2 + f^2 se_{best}^2}` and its one-sided normal
    p-values, :func:`~dpdist.experiments.decide` gives the verdict at family-wise level
    ``alpha`` (docs/experiments.md, "Verdicts"): holds when :math:`m < f \cdot best` is
    significant in every setting, does not hold when Holm finds :math:`m > f \cdot best`
    in some setting.  (``best`` is the minimum of the reference means, biased low, so a
    "does not hold" errs on the side of the reference.)
    """

    metric: str
    method: str
    reference: tuple
    factor: float
    match: tuple = ("dataset", "epsilon")
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = table.select(metric=self.metric, **self.where)
        mine = _by_match(rows.select(method=self.method), self.match)
        reference: dict = {}
        for row in rows.select(method=list(self.reference)):
            key = tuple(row.get(column) for column in self.match)
            if key not in reference or row["mean"] < reference[key]["mean"]:
                reference[key] = row
        keys = [key for key in mine if key in reference]
        if not keys:
            return INCONCLUSIVE, f"no setting has both {self.method!r} and {list(self.reference)} for {self.metric!r}"
        within, p_for, p_against = 0, [], []
        worst: tuple | None = None
        for key in keys:
            m, best = mine[key], reference[key]
            se = math.sqrt(standard_error(m) ** 2 + (self.factor * standard_error(best)) ** 2)
            excess = m["mean"] - self.factor * best["mean"]
            within += excess <= 0
            z = -excess / se if se > 0 else (math.copysign(math.inf, -excess) if excess else 0.0)
            p_for.append(normal_p_values(z)[0])
            p_against.append(normal_p_values(z)[1])
            ratio = m["mean"] / best["mean"] if best["mean"] > 0 else math.inf
            if worst is None or ratio > worst[0]:
                worst = (ratio, key, m["mean"], best)
        assert worst is not None, "keys is not empty"
        ratio, key, value, best = worst
        setting = ", ".join(f"{c}={v}" for c, v in zip(self.match, key))
        described = ", ".join(f"{c}={best.get(c)}" for c in ("method", "b", "bins") if best.get(c) is not None)
        summary = (
            f"{self.method} <= {self.factor:g} x best of {list(self.reference)} on {self.metric} in {within} of "
            f"{len(keys)} settings (significantly, one-sided alpha {self.alpha:g}, in "
            f"{sum(p < self.alpha for p in p_for)}), significantly above (Holm) in "
            f"{holm_rejections(p_against, self.alpha)}; worst ({setting}): {value:.4g} vs best "
            f"{best['mean']:.4g} ({described}), ratio {ratio:.3f}"
        )
        return decide(p_for, p_against, self.alpha), summary


@dataclass(frozen=True)
class ArgminIs:
    """The value ``expected`` of ``column`` gives the lowest mean ``metric`` of ``method``.

    Per setting (the other ``match`` columns), the value with the lowest mean is the
    argmin.  Per setting, Welch's one-sided tests of ``expected`` against each other value
    (:func:`~dpdist.experiments.welch_p_values`) give ``p_for`` = the largest p of
    "``expected`` is lower" (it must beat every value: intersection–union) and
    ``p_against`` = the smallest p of "``expected`` is higher" times the number of other
    values (Bonferroni within the setting).  With ``k = ceil(quorum * S)`` of the S settings
    required, :func:`~dpdist.experiments.decide` gives the verdict at family-wise level
    ``alpha``: holds when ``expected`` is significantly the argmin in every setting
    (``quorum = 1``) or Holm finds it so in at least ``k``; does not hold when Holm finds
    it significantly beaten in more than ``S - k`` settings.
    """

    metric: str
    method: str
    column: str
    expected: object
    match: tuple = ("dataset", "epsilon")
    where: dict = field(default_factory=dict)
    quorum: float = 1.0
    alpha: float = ALPHA

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = table.select(metric=self.metric, method=self.method, **self.where)
        groups: dict[tuple, list] = {}
        for row in rows:
            groups.setdefault(tuple(row.get(c) for c in self.match), []).append(row)
        if not groups:
            return INCONCLUSIVE, f"no rows of {self.method!r} for {self.metric!r}"
        argmin_hits, p_for, p_against, details = 0, [], [], []
        for key, group in groups.items():
            chosen = [row for row in group if row.get(self.column) == self.expected]
            if not chosen:
                continue
            (chosen,) = chosen
            winner = min(group, key=lambda row: row["mean"])
            argmin_hits += winner is chosen
            others = [row for row in group if row is not chosen]
            if not others:
                continue
            scores = [welch_p_values(chosen, other) for other in others]
            p_for.append(max(score[1] for score in scores))
            p_against.append(min(1.0, len(others) * min(score[2] for score in scores)))
            setting = ",".join(f"{v}" for v in key)
            details.append(f"({setting}): best {self.column}={winner.get(self.column)} {winner['mean']:.4g}")
        total = len(details)
        needed = math.ceil(self.quorum * total)
        beaten = holm_rejections(p_against, self.alpha)
        summary = (
            f"{self.column}={self.expected} has the lowest {self.metric} of {self.method} in {argmin_hits} of {total} "
            f"settings (needed {needed}), significantly the lowest (one-sided alpha {self.alpha:g}) in "
            f"{sum(p < self.alpha for p in p_for)}, significantly beaten (Holm) in {beaten}; "
            + "; ".join(details)
        )
        if not total:
            return INCONCLUSIVE, summary
        min_wins = None if needed >= total else needed
        return decide(p_for, p_against, self.alpha, min_losses=total - needed + 1, min_wins=min_wins), summary


@dataclass(frozen=True)
class MoreVariable:
    r"""``method``'s ``metric`` varies more over repeats than ``reference``'s, in at least a ``quorum`` of settings.

    "Not stable" read as spread over repeats: per setting the variance ratio
    :math:`F = s_{method}^2 / s_{reference}^2` with :math:`(n_m - 1, n_r - 1)` degrees of
    freedom gives one-sided p-values (the F test; exact for normal errors, a reading for
    others), and :func:`~dpdist.experiments.decide` with ``min_wins = ceil(quorum S)`` the
    verdict at family-wise level ``alpha``.
    """

    metric: str
    method: str
    reference: str
    where: dict = field(default_factory=dict)
    quorum: float = 0.5
    alpha: float = ALPHA

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = table.select(metric=self.metric, **self.where).select(method=[self.method, self.reference])
        pairs = [(s, v[self.method], v[self.reference]) for s, v in rows_by(rows).items() if len(v) == 2]
        pairs = [(s, a, b) for s, a, b in pairs if a["count"] > 1 and b["count"] > 1 and b["std"] > 0]
        if not pairs:
            return INCONCLUSIVE, f"no setting has repeats of both {self.method!r} and {self.reference!r} for {self.metric!r}"
        ratios = [(a["std"] / b["std"]) ** 2 for _, a, b in pairs]
        p_for = [float(stats.f.sf(r, a["count"] - 1, b["count"] - 1)) for r, (_, a, b) in zip(ratios, pairs)]
        p_against = [float(stats.f.cdf(r, a["count"] - 1, b["count"] - 1)) for r, (_, a, b) in zip(ratios, pairs)]
        needed = math.ceil(self.quorum * len(pairs))
        low = min(range(len(pairs)), key=lambda i: ratios[i])
        summary = (
            f"variance of {self.metric} over repeats, {self.method} / {self.reference}: significantly above 1 "
            f"(F test, Holm, alpha {self.alpha:g}) in {holm_rejections(p_for, self.alpha)} of {len(pairs)} settings "
            f"(needed {needed}), significantly below in {holm_rejections(p_against, self.alpha)}; ratios "
            f"{min(ratios):.3g}..{max(ratios):.3g}, lowest at ({describe_setting(pairs[low][0])})"
        )
        return decide(p_for, p_against, self.alpha, min_losses=len(pairs) - needed + 1, min_wins=needed), summary
