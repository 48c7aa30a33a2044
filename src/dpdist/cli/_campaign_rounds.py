"""``dpdist campaign rounds CAMPAIGN``: a campaign of adaptive quantile rounds, round by round, and its release.

Reads ``GET /api/campaigns/{campaign}/rounds`` (admin; docs/explanation/adaptive-quantiles.md): every round's
campaign with its reports and size, then the quantiles released from the rounds so far with their
intervals.  ``--advance`` first closes the current round now (``POST .../rounds/advance``): the next
round's cuts come from the rounds before, and after the last round the campaign closes.
"""

from __future__ import annotations

import json

from .._shown import shown
from ._printed import printed_lines

__all__ = ["show_rounds"]


def show_rounds(client, campaign: str, *, advance: bool, as_json: bool) -> int:
    """Print the rounds of ``campaign`` (a :class:`dpdist.client.AdminClient`); exit status 0.  An
    answer whose rows cannot be printed is refused in one line (:func:`._printed.printed_lines`)."""
    if advance:
        client.advance_round(campaign)
    report = client.rounds(campaign)
    if as_json:
        print(json.dumps(report, indent=2, sort_keys=True))
        return 0
    state = client.campaign(campaign)["state"]
    request = f"GET {client.server}/api/campaigns/{campaign}/rounds"
    print("\n".join(printed_lines(lambda document: _lines(document, campaign, state), report, request,
                                  "a campaign's rounds")))
    return 0


def _lines(report: dict, campaign: str, state: str) -> list[str]:
    """The rounds document ``report`` as text: the plan, each round's row, the quantiles released so far."""
    plan = report["plan"]
    lines = [shown(f"campaign {campaign} ({state}): adaptive quantile rounds, round {report['round']} of {report['of']} "
                   f"(q={plan['q']}, epsilon={plan['epsilon']:g}, bounds={plan['bounds']})", (), None),  # escaped
             f"  {'round':<6} {'campaign':<24} {'state':<8} {'reports':>15}  refused"]
    for row in report["rounds"]:
        refused = ", ".join(f"{reason} {count}" for reason, count in sorted(row["refused_batches"].items())) or "-"
        lines.append(shown(f"  {row['round']:<6} {row['campaign']:<24} {row['state']:<8} {row['n']:>7} / "
                           f"{row['size']:<6} {refused}", (), None))
    released = report["estimate"]
    if released is None:
        return [*lines, "no report yet: nothing released"]
    n = sum(row["n"] for row in report["rounds"])
    lines.append(f"quantiles released from {n} report(s), each with its {round(100 * released['level'], 6):g}% interval:")
    missing = [None] * len(released["q"])  # a release without intervals
    for q, value, low, high in zip(released["q"], released["values"], released.get("low") or missing,
                                   released.get("high") or missing, strict=True):
        limits = "-" if low is None or high is None else f"[{low:.6g}, {high:.6g}]"
        lines.append(f"  q={q:<6g} {value:>12.6g}   {limits}")
    return lines
