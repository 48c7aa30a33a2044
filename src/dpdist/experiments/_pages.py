"""The generated part of a reproduction's page (``docs/reproductions/NAME.md``): pages are products of the code.

``dpdist reproduce NAME --quick --out OUT --page docs/reproductions/NAME.md`` judges the claims of the
run in ``OUT`` (computing any missing cell, reusing the cache) and replaces the part of the page between
:data:`BEGIN` and :data:`END` (inserted after the title on a page without it) with:

* the run: command, every commit that computed its cells (with its count of cells, from the commit each
  cell records) and the one that judged its claims, the verdict
  rule's version (:data:`~dpdist.experiments.RULE_VERSION`), wall time, cells and the machine's load, from
  ``OUT/runs.jsonl`` (:mod:`._runlog`);
* what changed against the previous version of the page (claim by claim, old -> new);
* the claims table (:func:`._report.claims_table`: the data each claim is about, whether the run decides
  it and which run can) and the claims that are one paper claim on several stand-ins side by side;
* the **staleness sample**: a few cells of the run with every metric value, which
  ``tests/experiments/test_reproduction_pages.py`` recomputes at the current commit; a value that moved beyond the
  stated relative tolerance fails it with "page stale: regenerate NAME".

The prose outside the markers is written by hand; it quotes numbers of this run or says where they come from.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from ._claims import RULE_VERSION, decidability, power_summary
from .._io._atomic import write_text_atomically
from ._report import claims_table, side_by_side
from ._runlog import read_runs, source_commit, utc_now

__all__ = ["BEGIN", "END", "write_page", "read_sample", "SAMPLE_TOLERANCE", "choose_sample"]

BEGIN = "<!-- dpdist:generated begin (dpdist reproduce NAME --page; do not edit by hand) -->"
END = "<!-- dpdist:generated end -->"
#: Relative tolerance of the staleness sample: the numerics are pinned (docs/experiments.md, "Determinism"),
#: so a recomputed cell gives the same number to the last bits on any x86-64 machine with AVX2; 1e-6 leaves
#: room for a libm's last-bit differences, never for a changed random draw or method.
SAMPLE_TOLERANCE = 1e-6
#: At most this many cells in a page's sample, and at most this many seconds of them together (as timed in the run).
SAMPLE_CELLS, SAMPLE_SECONDS = 8, 20.0
_SAMPLE_START = "```json dpdist-staleness-sample"
_OUTCOME_ROW = re.compile(r"^\| (\d+) \| (.*?) \|.*?\| (\*\*does not hold\*\*|holds and understated|holds|"
                          r"inconclusive|underpowered)(?: \(quick run\))? \|")


def choose_sample(out: str | Path, cells: int = SAMPLE_CELLS, seconds: float = SAMPLE_SECONDS,
                  avoid_datasets: tuple = ()) -> list[dict[str, Any]]:
    """A fixed, small sample of the run's cells: per method label the fastest cell (by its recorded seconds;
    ties broken by a hash of the cell), methods taken in the order of a hash of their label, until ``cells``
    cells or ``seconds`` of recorded time; cells of ``avoid_datasets`` (e.g. those needing an optional
    download) are left out.  Each is ``{"dataset", "method", "params", "repeat", "metrics", "seconds"}``."""
    best: dict[str, dict] = {}
    for path in sorted(Path(out, "cells").glob("*.json")):
        payload = json.loads(path.read_text())
        cell = payload["cell"]
        if cell["dataset"] in avoid_datasets or not payload.get("metrics"):
            continue
        rank = (payload.get("seconds", 0.0), _hash(path.stem))
        current = best.get(cell["method"])
        if current is None or rank < current["_rank"]:
            best[cell["method"]] = {**cell, "metrics": payload["metrics"], "seconds": payload.get("seconds", 0.0),
                                    "_rank": rank}
    chosen: list[dict] = []
    total = 0.0
    for method in sorted(best, key=_hash):
        entry = best[method]
        if len(chosen) >= cells or total + entry["seconds"] > seconds:
            continue
        total += entry["seconds"]
        chosen.append({key: value for key, value in entry.items() if key != "_rank"})
    return chosen


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def read_sample(page: str | Path) -> dict[str, Any] | None:
    """The staleness sample of a page (its JSON block), or None when it has none."""
    text = Path(page).read_text()
    start = text.find(_SAMPLE_START)
    if start < 0:
        return None
    body = text[start + len(_SAMPLE_START):]
    return json.loads(body[: body.index("```")])


def _previous_outcomes(block: str) -> dict[str, str]:
    """``{claim text: outcome}`` of the claims table of the page's previous generated block."""
    outcomes = {}
    for line in block.splitlines():
        match = _OUTCOME_ROW.match(line)
        if match:
            outcomes[match.group(2).replace("\\|", "|")] = match.group(3).strip("*")
    return outcomes


def _run_lines(runs: list[dict]) -> list[str]:
    lines = ["| started (UTC) | wall time | cells computed / reused / failed | jobs | load (1 min: min / median / max, "
             "samples) | cores | commit |", "|---|---|---|---|---|---|---|"]
    for run in runs:
        load = run.get("load") or {}
        lines.append(f"| {run.get('started')} | {_duration(run.get('seconds', 0))} | {run.get('computed')} / "
                     f"{run.get('reused')} / {run.get('failed')} | {run.get('jobs', '')} | {load.get('min')} / "
                     f"{load.get('median')} / {load.get('max')} ({load.get('samples')}) | {run.get('cpus')} | "
                     f"`{run.get('commit')}` |")
    return lines


def _commit_text(commits: dict, computing: list[dict]) -> str:
    """The text "Cells computed at commit `a` (n cells), `b` (m cells)": every commit that computed the run's cells,
    from the commit each cell records; cells written before cells recorded it are counted apart, with the
    commits of the invocations in ``runs.jsonl`` that computed cells."""
    known = sorted(((commit, cells) for commit, cells in commits.items() if commit is not None),
                   key=lambda item: (-item[1], item[0]))
    parts = [f"`{commit}` ({cells} cells)" for commit, cells in known]
    unrecorded = commits.get(None, 0)
    if unrecorded:
        invocations = sorted({str(run.get("commit")) for run in computing})
        parts.append(f"{unrecorded} cells without a recorded commit (written before cells recorded it; the "
                     "invocations of runs.jsonl that computed cells ran at "
                     + (", ".join(f"`{c}`" for c in invocations) or "no recorded commit") + ")")
    if not parts:
        return "Cells computed at: (none recorded)"
    return f"Cells computed at commit{'s' if len(parts) > 1 else ''} " + ", ".join(parts)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return (f"{hours} h " if hours else "") + f"{minutes} min {secs:02d} s"


def write_page(page: str | Path, result, claims: list[dict], out: str | Path, command: str,
               avoid_datasets: tuple = ()) -> Path:
    """Replace the generated part of ``page`` with this run's (module docstring); returns the page's path."""
    page = Path(page)
    spec = result.spec
    text = page.read_text() if page.exists() else f"# Reproduction: {spec.title or spec.name}\n"
    previous = ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        previous, tail = rest.split(END, 1)
    else:  # the first generated version: inserted after the title
        first, _, after = text.partition("\n")
        head, tail = first + "\n\n", "\n" + after
    runs = [run for run in read_runs(out) if run.get("spec") == spec.name and run.get("repeats") == spec.repeats]
    computing = [run for run in runs if run.get("computed")]
    quick = spec.run == "quick"
    full = spec.full_repeats if quick else None
    counts = {outcome: sum(c["outcome"] == outcome for c in claims)
              for outcome in ("holds", "holds and understated", "does not hold", "inconclusive", "underpowered")}
    cells = result.computed + result.reused + len(result.failures)
    wall = sum(run.get("seconds", 0.0) for run in computing)
    lines = [
        BEGIN, "", "## This run", "",
        "```", command, "```", "",
        f"**Generated** by `dpdist reproduce ... --page` on {utc_now()} from the run in `{out}`: "
        f"{'quick run' if quick else 'full run'}, {spec.repeats} repeats, root seed {spec.seed}, {cells} cells "
        f"({len(result.failures)} failed); numerics "
        + (", ".join(f"{k} ({v} cells)" for k, v in sorted(getattr(result, "numerics", {}).items())) or "not recorded")
        + f". {_commit_text(getattr(result, 'commits', {}), computing)}; claims judged at commit "
        f"`{source_commit()}` under **verdict rule version {RULE_VERSION}** (docs/experiments.md, \"Verdicts\"). "
        f"Wall time of the invocations that computed cells: **{_duration(wall)}** (`--jobs` and load below; the "
        "machine is shared, so these are upper figures).",
        "",
        *_run_lines(runs),
        "",
        f"Verdicts{' (quick run, indicative)' if quick else ''}: **holds {counts['holds']}, holds and understated "
        f"{counts['holds and understated']}, does not hold {counts['does not hold']}, inconclusive "
        f"{counts['inconclusive']}, underpowered {counts['underpowered']}** of {len(claims)} claims. "
        f"Power: {power_summary([{'repeats_for_power': None, **c} for c in claims], spec.repeats)}",
        "",
    ]
    lines += _changes(previous, claims)
    cannot = [(i, c) for i, c in enumerate(claims, 1) if decidability(c, spec.repeats, full).startswith("no")]
    if cannot:
        lines += ["", f"**What this {'quick ' if quick else ''}run cannot decide** (the power calculation of "
                  "docs/experiments.md, \"Power\", at this run's standard errors and settings): "
                  + "; ".join(f"#{i} {decidability(c, spec.repeats, full)}" for i, c in cannot) + ".", ""]
    lines += ["", "### Claims", "", *claims_table(claims, spec.repeats, full, quick), *side_by_side(claims), ""]
    sample = {"spec": spec.name, "run": spec.run, "repeats": spec.repeats, "seed": spec.seed,
              "rule_version": RULE_VERSION, "relative_tolerance": SAMPLE_TOLERANCE,
              "cells": choose_sample(out, avoid_datasets=avoid_datasets)}
    lines += ["### Staleness sample", "",
              f"{len(sample['cells'])} cells of this run, every metric; `tests/experiments/test_reproduction_pages.py` (slow) "
              f"recomputes them at the current commit and fails with \"page stale: regenerate {spec.name}\" when a "
              f"value moved by more than a relative {SAMPLE_TOLERANCE:g}, or when the verdict rule's version is not "
              f"{RULE_VERSION}.", "",
              _SAMPLE_START, json.dumps(sample, indent=1, sort_keys=True), "```", "", END]
    return write_text_atomically(page, head + "\n".join(lines) + tail)


def _changes(previous: str, claims: list[dict]) -> list[str]:
    """What changed against the previous generated block: claim by claim, old -> new."""
    before = _previous_outcomes(previous)
    if not before:
        return []
    changed, new = [], []
    for index, claim in enumerate(claims, 1):
        old = before.get(claim["text"])
        if old is None:
            new.append(f"#{index}")
        elif old != claim["outcome"]:
            changed.append(f"* #{index} \"{claim['text'][:110]}\": {old} -> **{claim['outcome']}**")
    removed = [text for text in before if text not in {c["text"] for c in claims}]
    lines = ["**Against the previous version of this page**: "
             + (f"{len(changed)} verdicts changed" if changed else "no verdict changed")
             + (f"; new claims {', '.join(new)}" if new else "")
             + (f"; {len(removed)} claims of the previous version are gone or reworded" if removed else "") + "."]
    return lines + ([""] + changed if changed else [])
