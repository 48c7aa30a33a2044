"""Claims of a paper as data: checks ``table -> (outcome, explanation)`` on the summary table.

:func:`better_than` builds the most common one, "method A has a lower error than method
B" over every matching setting, judged with the standard errors over repeats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ._table import ResultsTable

__all__ = [
    "HOLDS", "DOES_NOT_HOLD", "INCONCLUSIVE", "CHECK_CRASHED", "better_than", "BetterThan", "evaluate_claims",
]

HOLDS, DOES_NOT_HOLD, INCONCLUSIVE = "holds", "does not hold", "inconclusive"
_STAT_COLUMNS = {"mean", "std", "se", "count", "failed"}


@dataclass(frozen=True)
class BetterThan:
    """``better`` has a lower mean ``metric`` than ``worse`` in every setting matched by ``where``.

    In each setting (all columns but ``column`` and the statistics), with
    :math:`z = (\\bar m_{worse} - \\bar m_{better}) / \\sqrt{se_{better}^2 + se_{worse}^2}`:
    the claim *holds* when :math:`z > margin` in every setting, *does not hold* when
    :math:`z < -margin` in at least ``min_losses`` settings (a significant reversal), and is
    *inconclusive* otherwise.  ``margin = 2`` standard errors by default.  The claim is also
    inconclusive when a compared setting has failed cells, fewer than 2 repeats on either
    side or no finite standard error (one repeat gives no spread to judge a difference by).
    """

    metric: str
    better: str
    worse: str
    where: dict = field(default_factory=dict)
    margin: float = 2.0
    column: str = "method"
    min_losses: int = 1

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        rows = table.select(metric=self.metric, **self.where).select(**{self.column: [self.better, self.worse]})
        settings: dict[tuple, dict] = {}
        keys = [c for c in rows.columns if c not in _STAT_COLUMNS and c not in (self.column, "metric")]
        for row in rows:
            setting = tuple((k, row[k]) for k in keys)
            settings.setdefault(setting, {})[row[self.column]] = row
        pairs = [(s, v[self.better], v[self.worse]) for s, v in settings.items() if len(v) == 2]
        if not pairs:
            return INCONCLUSIVE, f"no setting has both {self.better!r} and {self.worse!r} for {self.metric!r}"
        for setting, b, w in pairs:
            reason = _undecidable(b, self.better) or _undecidable(w, self.worse)
            if reason:
                return INCONCLUSIVE, (
                    f"cannot compare {self.better} with {self.worse} on {self.metric} at ({_where(setting)}): {reason}"
                )
        wins, losses, scores = 0, 0, []
        for setting, b, w in pairs:
            se = math.sqrt(b["se"] ** 2 + w["se"] ** 2)
            difference = w["mean"] - b["mean"]
            if se > 0:
                z = difference / se
            else:  # no spread over repeats: any difference is decisive
                z = math.copysign(math.inf, difference) if difference else 0.0
            scores.append((z, setting, b["mean"], w["mean"]))
            wins += z > self.margin
            losses += z < -self.margin
        z, setting, b_mean, w_mean = min(scores, key=lambda item: item[0])
        summary = (
            f"{self.better} < {self.worse} on {self.metric} by > {self.margin:g} SE in {wins} of {len(pairs)} "
            f"settings, significantly worse in {losses}; weakest setting ({_where(setting)}): "
            f"{b_mean:.4g} vs {w_mean:.4g} (z = {z:.2f})"
        )
        if wins == len(pairs):
            return HOLDS, summary
        if losses >= self.min_losses:
            return DOES_NOT_HOLD, summary
        return INCONCLUSIVE, summary


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


def _where(setting) -> str:
    return ", ".join(f"{k}={v}" for k, v in setting if v is not None)


def better_than(metric: str, better: str, worse: str, **options) -> BetterThan:
    """Claim check: ``better`` beats ``worse`` on ``metric`` (see :class:`BetterThan`)."""
    return BetterThan(metric=metric, better=better, worse=worse, **options)


#: Start of the explanation of a claim whose check raised (see :func:`evaluate_claims`).
CHECK_CRASHED = "the check failed:"


def evaluate_claims(claims, table: ResultsTable) -> list[dict]:
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


def standard_error(row) -> float:
    """The ``se`` of a summary row, or ``inf`` when it is unknown (fewer than 2 repeats, not finite).

    An unknown standard error is infinite uncertainty: comparisons built on it come out
    inconclusive instead of being decided by a single repeat.
    """
    se, count = row.get("se"), row.get("count", 2)
    if se is None or count is None or count < 2 or not math.isfinite(float(se)):
        return math.inf
    return float(se)
