"""A query's plan: how its one budget is split across its statistics, and each one's expected error at a stated n.

**The rule.**  The budget :math:`\\varepsilon` (per person with ``privacy_id``, else per record) first pays the private
choice of the groups (``selection_epsilon``, only when the keys are not given) and the noisy count of persons of a
minimum per group (``min_persons_epsilon``, only with ``min_persons``); the rest is split across the
statistics in proportion to their ``weight`` (default 1 each: **equal shares**; ``weight=2`` doubles one's share).
Statistic :math:`j` gets :math:`\\varepsilon_j`; with ``max_groups`` :math:`m` each group's release runs at
:math:`\\varepsilon_j / m` (a person touches at most :math:`m` groups), and the statistics compose sequentially:
:math:`\\varepsilon_{\\text{sel}} + \\varepsilon_{\\text{min}} + \\sum_j \\varepsilon_j = \\varepsilon`.

**Laplace or Gaussian.**  With a ``delta`` (the query's, besides the selection's), the statistics that may be released
as one Gaussian vector over the groups (counts, persons, distinct counts, sums, means, histograms:
:mod:`dpdist.central._grouped_gaussian`) share it by weight; each is released so when the standard deviation of one
group's noise is smaller than its Laplace release's per group at :math:`\\varepsilon_j / m`
(:meth:`~dpdist.queries._statistics.Statistic.noise_sds`: Gaussian noise grows as :math:`\\sqrt m`, Laplace as
:math:`m`), and spends its :math:`(\\varepsilon_j, \\delta_j)` over all the groups; otherwise it keeps Laplace noise and
its :math:`\\delta_j` is not spent.  The plan says which and why.

**Expected errors** come from public parameters only (the bounds, the budget, ``n`` as stated, the contribution
bounds), never from the data: each aggregate states its own (:meth:`~dpdist.queries._statistics.Statistic.expected`):
the standard deviation of the noise of a count (a distinct count's too), a sum and a mean (exact for the count and the
sum; the mean's at its worst, a mean at a bound), and for quantiles, histograms and CDFs the seeded simulation of
:func:`dpdist.explain` at that ``n`` (the quantiles' mean absolute error in the column's units; the histogram's and the
CDF's KS distance).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .._validation import Integer, check_param
from ._statistics import Statistic

__all__ = ["QueryPlan", "PlannedStatistic", "plan_of"]


@dataclass(frozen=True)
class PlannedStatistic:
    """One statistic's place in the plan: its share of the budget and the epsilon of each group's release."""

    statistic: Statistic
    share: float
    epsilon: float  # its part of the query's budget
    group_epsilon: float  # what each group's release runs at (epsilon / max_groups)
    noise: str = "laplace"  # or "gaussian": one vector over the groups at (epsilon, delta)
    delta: float = 0.0  # what it spends (a Gaussian vector's)
    sds: tuple[float, float] | None = None  # (Laplace, Gaussian) noise of one group's value, when it had the choice

    @property
    def why(self) -> str:
        """Which noise and why, in words."""
        if self.sds is None:
            return "Laplace per group"
        laplace, gaussian = self.sds
        chosen = "Gaussian over the groups" if self.noise == "gaussian" else "Laplace per group"
        return f"{chosen} (noise sd {gaussian:.4g} Gaussian, {laplace:.4g} Laplace)"


@dataclass(frozen=True)
class QueryPlan:
    """The split of a query's budget and, after :meth:`expected`, each statistic's expected error.

    Attributes
    ----------
    epsilon : float
        The query's budget (per person with a privacy unit, else per record).
    selection : (float, float) or None
        ``(epsilon, delta)`` of choosing the groups privately (``None``: the keys are public).
    statistics : tuple of PlannedStatistic
    unit : {"person", "record"}
    max_groups, max_contributions : int
        The contribution bounds (1 and 1 per record).
    threshold : (int, float) or None
        ``(min_persons, epsilon)`` of the minimum of persons per group (``None``: every group is released).
    method : (str, str) or None
        How private keys are chosen and why (:func:`dpdist.central._partitions.selection_reason`).
    """

    epsilon: float
    selection: tuple[float, float] | None
    statistics: tuple[PlannedStatistic, ...]
    unit: str
    max_groups: int
    max_contributions: int
    delta: float = 0.0  # the statistics' delta (the selection's is its own)
    threshold: tuple[int, float] | None = None
    method: tuple[str, str] | None = None

    @property
    def spent_delta(self) -> float:
        """The delta the statistics spend (their Gaussian vectors'), the selection's aside."""
        return math.fsum(planned.delta for planned in self.statistics)

    @property
    def rule(self) -> str:
        weights = [planned.statistic.weight for planned in self.statistics]
        kind = "equal shares" if len(set(weights)) == 1 else "shares by weight"
        selection = (f"selection of the groups {self.selection[0]:g} first, then " if self.selection else "")
        if self.threshold:
            selection += (f"a noisy count of each group's persons {self.threshold[1]:g} (groups below "
                          f"{self.threshold[0]:,} withheld), then ")
        return f"{selection}{kind} of the rest (each statistic's weight over the sum of the weights {math.fsum(weights):g})"

    def expected(self, n: int, *, repeats: int = 10) -> list[dict[str, Any]]:
        """One row per statistic: its share, epsilon, and expected error(s) at ``n`` rows per group (public
        parameters only)."""
        n = check_param("Query.explain", "n", n, Integer(low=1, high=10**9))
        return [{"statistic": planned.statistic.label, "share": planned.share, "epsilon": planned.epsilon,
                 "group_epsilon": planned.group_epsilon, "noise": planned.why, **self._expected(planned, n, repeats)}
                for planned in self.statistics]

    def _expected(self, planned: PlannedStatistic, n: int, repeats: int) -> dict[str, Any]:
        k = planned.statistic.contributions(self.max_contributions)
        if planned.noise == "gaussian":
            return planned.statistic.gaussian_expected(planned.epsilon, planned.delta, n, self.max_groups, k)
        return planned.statistic.expected(planned.group_epsilon, n, k, repeats)

    def describe(self, n: int | None = None) -> str:
        """The plan as text: the budget, the rule, and per statistic its share (and its expected error at ``n``)."""
        selection = "public keys" if self.selection is None else (
            f"groups chosen privately at epsilon {self.selection[0]:g}, delta {self.selection[1]:g}"
            + ("" if self.method is None else f" by {self.method[0]} selection, {self.method[1]}"))
        lines = [f"query plan: epsilon {self.epsilon:g} per {self.unit} ({selection}; at most {self.max_groups} "
                 f"group(s) and {self.max_contributions} row(s) per group each); split: {self.rule}"]
        rows = self.expected(n) if n is not None else [
            {"statistic": p.statistic.label, "share": p.share, "epsilon": p.epsilon, "group_epsilon": p.group_epsilon,
             "noise": p.why} for p in self.statistics]
        for row, planned in zip(rows, self.statistics):
            error = "" if "error" not in row else f"; expected {row['metric']} at n = {n:,} per group: {row['error']:.4g}"
            budget = (f"delta {planned.delta:.3g}, all groups" if planned.noise == "gaussian"
                      else f"each group {row['group_epsilon']:.4g}")
            lines.append(f"  {row['statistic']:<24} share {row['share']:.3f}  epsilon {row['epsilon']:.4g} "
                         f"({budget}); {row['noise']}{error}")
        return "\n".join(lines)


def plan_of(statistics: tuple[Statistic, ...], epsilon: float, selection: tuple[float, float] | None, unit: str,
            max_groups: int, max_contributions: int, delta: float = 0.0,
            threshold: tuple[int, float] | None = None, method: tuple[str, str] | None = None) -> QueryPlan:
    """The plan of the module docstring's rule."""
    rest = epsilon - (selection[0] if selection else 0.0) - (threshold[1] if threshold else 0.0)
    total = math.fsum(statistic.weight for statistic in statistics)
    capable = math.fsum(statistic.weight for statistic in statistics if statistic.gaussian is not None)
    planned = []
    for statistic in statistics:
        share = rest * statistic.weight / total
        plain = PlannedStatistic(statistic, statistic.weight / total, share, share / max_groups)
        if not delta or statistic.gaussian is None:
            planned.append(plain)
            continue
        their_delta = delta * statistic.weight / capable
        sds = statistic.noise_sds(share, their_delta, max_groups, statistic.contributions(max_contributions))
        gaussian = sds[1] < sds[0]
        planned.append(PlannedStatistic(statistic, plain.share, share, plain.group_epsilon,
                                        "gaussian" if gaussian else "laplace", their_delta if gaussian else 0.0, sds))
    return QueryPlan(epsilon, selection, tuple(planned), unit, max_groups, max_contributions, delta, threshold, method)
