"""Composite claims: :class:`AllOf` (every part holds, one family-wise level over all of them) and
:func:`lowest_of` (one method beats each of several)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._claims import (
    ALPHA, DOES_NOT_HOLD, HOLDING, HOLDS, INCONCLUSIVE, POWER, UNDERSTATED, Verdict, repeats_needed, split_undecided,
)
from .._table import ResultsTable
from .pairs import better_than

__all__ = ["AllOf", "lowest_of"]


def _leaves(verdicts) -> list:
    """The checks' verdicts with every composite replaced by its parts (recursively)."""
    out = []
    for verdict in verdicts:
        parts = getattr(verdict, "parts", ())
        out += _leaves(parts) if parts else [verdict]
    return out


@dataclass(frozen=True)
class AllOf:
    r"""Holds when every check holds; does not hold when one does, at one family-wise level.

    A composite claim ("A beats B, C and D"; "X and Y") is an intersection: it **holds**
    when every part holds, each at level ``alpha`` (intersection-union: if one part is false,
    "holds" has probability at most ``alpha``), and **holds and understated** when one of them
    is (a range measured beyond its favourable end).  It **does not hold** when some part does
    not hold at its share of ``alpha``: a part with :math:`N_i` "against" p-values of the
    composite's :math:`N = \sum N_i` decides at :math:`\alpha N_i / N` (weighted Bonferroni
    across parts, Holm within each; with one loss needed per part this is Bonferroni over
    all :math:`N` comparisons), so if every part is true or tied a false "does not hold" has
    probability at most ``alpha`` whatever the numbers of parts, rivals and settings.
    (Combining the parts' verdicts, each at ``alpha``, as this class did before, gave
    false "does not hold" about once per part: 8.5 % for 4 tied rivals over 6 settings at 3
    repeats.)  Nested composites are flattened.  An undecided composite is
    :data:`UNDERPOWERED` when the power to make all parts hold (product) or one fail
    falls below :data:`POWER`.  The explanation gives each part's outcome at the
    composite's levels, its explanation, and the direction count over all parts.
    """

    checks: tuple

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        leaves = _leaves([check(table) for check in self.checks])
        evidences = [getattr(leaf, "evidence", None) for leaf in leaves]
        sizes = [max(len(e.p_against), 1) if e is not None else 1 for e in evidences]
        total = sum(sizes)
        outcomes, labels, holds_power, miss_power, known, levels = [], [], 1.0, 1.0, True, []
        for leaf, evidence, size in zip(leaves, evidences, sizes):
            if evidence is None:  # no p-values (an early "no rows" answer): its own outcome
                outcomes.append(leaf[0])
                labels.append(leaf[0])
                known = known and leaf[0] in (*HOLDING, DOES_NOT_HOLD)
                levels.append((None, None))
                continue
            level = evidence.alpha * size / total
            levels.append((evidence, level))
            power = evidence.power(level)
            outcome = split_undecided(evidence.outcome(level), power)
            label = outcome
            if outcome != leaf[0] and leaf[0] == DOES_NOT_HOLD:
                label = f"{outcome}: does not hold at alpha {evidence.alpha:g} alone, not at its share {level:.2g}"
            outcomes.append(outcome)
            labels.append(label)
            if power is None:
                known = False
            else:
                holds_power *= power[0]
                miss_power *= 1 - power[1]
        if outcomes and all(outcome in HOLDING for outcome in outcomes):
            outcome = UNDERSTATED if UNDERSTATED in outcomes else HOLDS
        elif any(outcome == DOES_NOT_HOLD for outcome in outcomes):
            outcome = DOES_NOT_HOLD
        else:
            outcome = split_undecided(INCONCLUSIVE, (holds_power, 1 - miss_power) if known else None)
        lines = [f"[{label}] {leaf[1]}" for label, leaf in zip(labels, leaves)]
        text = "; ".join(lines)
        counted = [e for e in evidences if e is not None and e.total]
        if len(leaves) > 1:
            agree, count = sum(e.agree for e in counted), sum(e.total for e in counted)
            head = f"all of {len(leaves)} parts ({total} comparisons; 'does not hold' at alpha shared by their sizes)"
            if count:
                head += f"; direction: for the claim in {agree} of {count} comparisons"
            if known:
                head += f"; power for the parts' effects: all hold {holds_power:.2f}, one fails {1 - miss_power:.2f}"
                if min(holds_power, 1 - miss_power) < POWER:
                    needed = repeats_needed(Verdict(outcome, "", None, tuple(leaves), tuple(levels)))
                    head += (f" (< {POWER:g}; {needed} repeats would reach it)" if needed
                             else f" (< {POWER:g}; over 200 repeats needed)")
            text = f"{head}: {text}"
        return Verdict(outcome, text, None, tuple(leaves), tuple(levels))


def lowest_of(
    metric: str, best: str, others: Iterable[str], where: Mapping[str, Any] | None = None, alpha: float = ALPHA
) -> AllOf:
    """``best`` beats each of ``others`` on ``metric`` (a :func:`better_than` per pair)."""
    return AllOf(tuple(better_than(metric, best, other, where=dict(where or {}), alpha=alpha) for other in others))

