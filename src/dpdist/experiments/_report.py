"""``report.md``: the paper's claims with their measured outcome, the figures, the exact
command, versions and seeds, and the summary table."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import numpy as np

from .. import __version__
from ._claims import power_summary
from ._files import write_text_atomically

__all__ = ["write_report"]

_MARK = {"holds": "holds", "does not hold": "**does not hold**", "inconclusive": "inconclusive",
         "underpowered": "underpowered"}


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
        lines += ["| # | claim | figure | outcome | numbers |", "|---|---|---|---|---|"]
        for index, claim in enumerate(claims, 1):
            lines.append(
                f"| {index} | {_escape(claim['text'])} | {claim['figure'] or ''} | {_MARK[claim['outcome']]}"
                f"{' (quick run)' if quick else ''} "
                f"| {_escape(claim['explanation'])} |"
            )
        counts = {outcome: sum(c["outcome"] == outcome for c in claims) for outcome in _MARK}
        power = power_summary([{"repeats_for_power": None, **c} for c in claims], spec.repeats)
        lines += ["", f"{counts['holds']} hold, {counts['does not hold']} do not hold, "
                      f"{counts['inconclusive']} inconclusive, {counts['underpowered']} underpowered "
                      "(docs/experiments.md, \"Verdicts\").", "", f"Power: {power}", ""]
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
        "(see docs/experiments.md)",
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
        + " (pinned so the numbers do not depend on the CPU: docs/experiments.md, \"Determinism\")",
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


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
