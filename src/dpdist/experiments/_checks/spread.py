"""Checks of spread and calibration: :class:`MoreVariable` (one method's error varies more over repeats
than another's) and :class:`MatchesKnown` (means equal a known value within a margin of known
standard errors)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scipy import stats

from .._claims import (
    ALPHA, DOES_NOT_HOLD, EFFECT, HOLDS, INCONCLUSIVE, STAT_COLUMNS, Evidence, Verdict, conclude,
    describe_setting, holm_rejections, repeats_of, rows_by, sign_test,
)
from .._table import ResultsTable

__all__ = ["MoreVariable", "MatchesKnown"]


@dataclass(frozen=True)
class MoreVariable:
    r"""``method``'s ``metric`` varies more over repeats than ``reference``'s, in at least a ``quorum`` of settings.

    "Not stable" read as spread over repeats: per setting the variance ratio
    :math:`F = s_{method}^2 / s_{reference}^2` with :math:`(n_m - 1, n_r - 1)` degrees of
    freedom gives one-sided p-values (the F test; exact for normal errors, a reading for
    others), and :func:`~dpdist.experiments.decide` with ``min_wins = ceil(quorum S)`` the
    verdict at family-wise level ``alpha``.  Its power reads log F as normal (sd
    :math:`\sqrt{2/(n_m - 1) + 2/(n_r - 1)}`) at a spread ``1 + effect`` times the other's.
    """

    metric: str
    method: str
    reference: str
    where: dict = field(default_factory=dict)
    quorum: float = 0.5
    alpha: float = ALPHA
    effect: float = EFFECT

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = table.select(metric=self.metric, **self.where).select(method=[self.method, self.reference])
        pairs = [(s, v[self.method], v[self.reference]) for s, v in rows_by(rows).items() if len(v) == 2]
        pairs = [(s, a, b) for s, a, b in pairs if a["count"] > 1 and b["count"] > 1 and b["std"] > 0]
        if not pairs:
            return INCONCLUSIVE, (f"no setting has repeats of both {self.method!r} and {self.reference!r} for "
                                  f"{self.metric!r}")
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
        # power: log F is about normal with sd sqrt(2/(n_m - 1) + 2/(n_r - 1)); the effect is a standard
        # deviation 1 + effect times the other's (a 50 % effect: variance ratio 2.25)
        spreads = [math.sqrt(2 / (a["count"] - 1) + 2 / (b["count"] - 1)) for _, a, b in pairs]
        evidence = Evidence(tuple(p_for), tuple(p_against), self.alpha, needed, len(pairs) - needed + 1,
                            sum(r > 1 for r in ratios), len(pairs),
                            noncentrality=tuple(2 * math.log1p(self.effect) / sd for sd in spreads),
                            df=tuple(math.inf for _ in pairs), effect=self.effect,
                            repeats=repeats_of(*(r for _, a, b in pairs for r in (a, b))))
        return conclude(evidence, summary)


@dataclass(frozen=True)
class MatchesKnown:
    r"""Every row of ``metric`` has a mean equal to ``target(row)`` within ``margin`` known standard errors.

    For a calibration (e.g. Theorem 3's noise power against the empirical one, paper 001 Fig. 3):
    ``known_se(row)`` is the standard error the theory gives for the row's mean (not the spread of
    a few repeats), and a row with ``known_se(row) == 0`` must equal its target to rounding
    (``1e-9``).  The one check that does not decide with :func:`~dpdist.experiments.decide`
    (docs/explanation/verdicts.md, "Verdicts"): its claim is a point hypothesis (the ratio *is* 1), which
    has no one-sided p-value *for* it; an equivalence band is out of reach where a row's known
    standard error is large; and Holm over normal p-values would raise false alarms where the
    mean of a few :math:`\chi^2` terms has a heavier tail than the normal.  So: **holds** when no
    row deviates by more than ``margin`` known standard errors (``margin = 4``: for the mean of a
    few :math:`\chi^2` terms, a false alarm among ~70 rows is rare), **does not hold** otherwise.
    The direction count is the rows above their target.
    """

    metric: str
    known_se: Callable[[Mapping[str, Any]], float]
    target: float | Callable[[Mapping[str, Any]], float] = 1.0
    margin: float = 4.0

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = table.select(metric=self.metric).rows
        if not rows:
            return INCONCLUSIVE, f"no rows of {self.metric!r}"
        deviations = []  # (|z|, row, target, se); a row known exactly has |z| = inf or 0
        for row in rows:
            target = self.target(row) if callable(self.target) else self.target
            se = self.known_se(row)
            gap = abs(row["mean"] - target)
            z = gap / se if se > 0 else (math.inf if gap > 1e-9 else 0.0)
            deviations.append((z, row, target, se))
        misses = sum(z > self.margin for z, *_ in deviations)
        above = sum(row["mean"] > target for _, row, target, _ in deviations)
        z, row, target, se = max((d for d in deviations if d[3] > 0), key=lambda d: d[0], default=deviations[0])
        exact = [abs(row["mean"] - target) for _, row, target, se in deviations if se == 0]
        text = (f"{len(rows) - misses} of {len(rows)} rows within {self.margin:g} known standard errors of their "
                f"target; largest deviation: {describe_setting(row, (*STAT_COLUMNS, 'metric'))}: {row['mean']:.4g} vs "
                f"{target:g} (known SE {se:.3g}, |z| = {z:.2f})"
                + (f"; rows known exactly ({len(exact)}): largest deviation {max(exact):.2e}" if exact else "")
                + f"; direction: above the target in {above} of {len(rows)} (sign test p = "
                f"{sign_test(above, len(rows)):.2g})")
        return Verdict(HOLDS if misses == 0 else DOES_NOT_HOLD, text)
