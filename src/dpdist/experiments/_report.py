"""``report.md``: the paper's claims with their measured outcome, the figures, the exact
command, versions and seeds, and the summary table."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import numpy as np

from .. import __version__
from ._claims import RULE_VERSION, decidability, power_summary
from .._io._atomic import write_text_atomically

__all__ = ["write_report"]

_MARK = {"holds": "holds", "holds and understated": "holds and understated", "does not hold": "**does not hold**",
         "inconclusive": "inconclusive", "underpowered": "underpowered"}


def write_report(path, result, claims: list[dict], figures: dict, command: str) -> Path:
    """Write the Markdown report of a run (``result`` from :func:`run_spec`)."""

    spec = result.spec
    lines = [f"# {spec.title or spec.name}", ""]
    if spec.paper:
        lines += [f"Paper: `{spec.paper}`", ""]
    if spec.description:
        lines += [spec.description, ""]
    quick = spec.run == "quick"
    if quick:
        lines += [
            f"> **Quick run** (`--quick`: the spec's smaller grid, {spec.repeats} repeats). Its verdicts rest on "
            "fewer settings and repeats than the paper's; a claim that does not hold here may hold on the full "
            "run. Run without `--quick` before citing an outcome.",
            "",
        ]
    lines += ["## Claims" + (" (quick run)" if quick else ""), ""]
    if claims:
        lines += claims_table(claims, spec.repeats, spec.full_repeats if quick else None, quick)
        counts = {outcome: sum(c["outcome"] == outcome for c in claims) for outcome in _MARK}
        power = power_summary([{"repeats_for_power": None, **c} for c in claims], spec.repeats)
        lines += side_by_side(claims)
        lines += ["", f"{counts['holds']} hold, {counts['holds and understated']} hold and are understated, "
                      f"{counts['does not hold']} do not hold, "
                      f"{counts['inconclusive']} inconclusive, {counts['underpowered']} underpowered "
                      f"(verdict rule version {RULE_VERSION}: docs/explanation/verdicts.md, \"Verdicts\").", "", f"Power: {power}", ""]
    else:
        lines += ["(this spec states no claim)", ""]
    lines += ["## Figures", ""]
    for name, paths in figures.items():
        png = [p for p in paths if p.suffix == ".png"]
        if png:
            lines += [f"### {name}", "", f"![{name}](figures/{png[0].name})", ""]
        else:
            lines += [f"### {name}", "", "(no rows for this figure)", ""]
    lines += [
        "## Reproduction",
        "",
        "```",
        command,
        "```",
        "",
        f"- dpdist {__version__}, numpy {np.__version__}, Python {sys.version.split()[0]} on {platform.platform()}",
        f"- root seed {spec.seed}; {spec.repeats} repeats; each cell seeds "
        "`numpy.random.default_rng([stream, stable ids of dataset / method / parameters, repeat, root seed])` "
        "(see docs/how-to/run-experiments.md)",
        f"- grid: {spec.grid}",
        f"- datasets: {', '.join(d.key for d in spec.datasets)}",
        f"- methods: {', '.join(m.label for m in spec.methods)}",
        f"- metrics: {', '.join(m.key for m in spec.metrics)}",
        f"- cells: {result.computed + result.reused + len(result.failures)} "
        f"({result.computed} computed now, {result.reused} from the cache, {len(result.failures)} failed), "
        f"{result.seconds:.1f} s",
        "- numerics of the cells (OpenBLAS kernel + numpy SIMD target): "
        + (", ".join(f"{used} ({count} cells)" for used, count in sorted(getattr(result, "numerics", {}).items()))
           or "none")
        + " (pinned so the numbers do not depend on the CPU: docs/explanation/verdicts.md, \"Determinism\")",
        "",
    ]
    if result.failures:
        lines += ["## Failed cells", ""]
        for failure in result.failures[:20]:
            lines.append(f"- {failure['cell']}: {failure['error']}")
        lines.append("")
    lines += ["## Summary table", "", "Mean, standard deviation and standard error over repeats "
              "(full table: `results/summary.csv`).", "", result.summary.to_markdown(), ""]
    return write_text_atomically(path, "\n".join(lines))


def claims_table(claims: list[dict], repeats: int, full_repeats: int | None = None, quick: bool = False) -> list[str]:
    """The claims table of a report or page: the claim, the data it is about (and a known artefact of its
    stand-in), its figure, outcome, whether this run decides it (and which run can) and the numbers."""
    decides = "quick run decides?" if quick else "this run decides?"
    lines = [f"| # | claim | data (stand-in artefact) | figure | outcome | {decides} | numbers |",
             "|---|---|---|---|---|---|---|"]
    for index, claim in enumerate(claims, 1):
        data = claim.get("data") or ""
        if claim.get("artefact"):
            data += f" (artefact: {claim['artefact']})"
        lines.append(
            f"| {index} | {_escape(claim['text'])} | {_escape(data)} | {claim['figure'] or ''} | "
            f"{_MARK[claim['outcome']]}{' (quick run)' if quick else ''} | "
            f"{_escape(decidability(claim, repeats, full_repeats))} | {_escape(claim['explanation'])} |"
        )
    return lines


def side_by_side(claims: list[dict]) -> list[str]:
    """One line per group of claims that check one paper claim on several stand-ins (``Claim.group``):
    each verdict with its data, and the reason of a stand-in's artefact."""
    groups: dict[str, list[tuple[int, dict]]] = {}
    for index, claim in enumerate(claims, 1):
        if claim.get("group"):
            groups.setdefault(claim["group"], []).append((index, claim))
    groups = {key: members for key, members in groups.items() if len(members) > 1}
    if not groups:
        return []
    lines = ["", "### One claim on several stand-ins", "",
             "A verdict on a stand-in with a known artefact that bears on the claim, beside the same claim on "
             "stand-ins without it (docs/explanation/verdicts.md, \"Scope of a claim\"):", ""]
    for key, members in groups.items():
        parts = []
        for index, claim in members:
            where = claim.get("data") or f"claim {index}"
            mark = _MARK[claim["outcome"]]
            parts.append(f"#{index} {where}: {mark}" + (f" (artefact: {claim['artefact']})" if claim.get("artefact")
                                                         else " (no known artefact)"))
        lines.append(f"* **{_escape(key)}**: " + "; ".join(_escape(part) for part in parts))
    return lines


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
