"""The generated part of a reproduction's page (``docs/reproductions/NAME.md``): pages are products of the code.

``dpdist reproduce NAME --quick --out OUT --page docs/reproductions/NAME.md`` judges the claims of the
run in ``OUT`` (computing any missing cell, reusing the cache), records every metric value of every cell
beside the page (``NAME.cells.jsonl``, :mod:`._pagerecord`) and replaces the part of the page between
:data:`BEGIN` and :data:`END` (inserted after the title on a page without it) with
:func:`render_block`, a function of that record and the code alone:

* the run: command, every commit that computed its cells (with its count of cells, from the commit each
  cell records) and the one that judged its claims, the verdict
  rule's version (:data:`~dpdist.experiments.RULE_VERSION`), wall time, cells and the machine's load, from
  ``OUT/runs.jsonl`` (:mod:`._runlog`);
* what changed against the previous version of the page (claim by claim, old -> new);
* the verdict counts, the claims table (:func:`._report.claims_table`: the data each claim is about,
  whether the run decides it and which run can) and the claims that are one paper claim on several
  stand-ins side by side;
* the values the prose quotes (:func:`._specpage.quote_lines`, the spec's :class:`~dpdist.experiments.Quote`)
  and what is run (:func:`._specpage.spec_lines`: the spec's datasets, methods, sweeps and metrics);
* what the page check (:mod:`._pagecheck`, run by ``tests/experiments/test_pagecheck.py``)
  re-derives, and its recomputation sample (:func:`choose_sample`: for every method label, one cell on every
  dataset it runs on and one at every number of users it runs at).

The prose outside the markers is written by hand; every number it quotes is one of the generated block,
and each of its figures, verdicts and claim numbers is bound to the place of the block it states and is what
that place gives, or is a setting of the run's configuration (:mod:`._prosebind`; the page check says which are not).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

from ._claims import RULE_VERSION, decidability, power_summary
from .._io._atomic import write_text_atomically
from ._pagerecord import record_digest, record_path, write_record
from ._report import claims_table, side_by_side
from ._runlog import read_runs, source_commit, utc_now
from ._spec import Cell, ExperimentSpec
from ._specpage import quote_lines, spec_lines

__all__ = ["BEGIN", "END", "write_page", "render_block", "split_page", "SAMPLE_TOLERANCE", "choose_sample",
           "sample_scope"]

BEGIN = "<!-- dpdist:generated begin (dpdist reproduce NAME --page; do not edit by hand) -->"
END = "<!-- dpdist:generated end -->"
#: Relative tolerance of the recomputed sample: the numerics are pinned (docs/explanation/verdicts.md, "Determinism"),
#: so a recomputed cell gives the same number to the last bits on any x86-64 machine with AVX2; 1e-6 leaves
#: room for a libm's last-bit differences, never for a changed random draw or method.
SAMPLE_TOLERANCE = 1e-6
_OUTCOME_ROW = re.compile(r"^\| (\d+) \| (.*?) \|.*?\| (\*\*does not hold\*\*|holds and understated|holds|"
                          r"inconclusive|underpowered)(?: \(quick run\))? \|")


def split_page(text: str) -> tuple[str, str, str] | None:
    """``(head, block, tail)`` of a page's text: the generated block between :data:`BEGIN` and :data:`END`
    (both included) and the hand-written text around it; None when the page has no generated block."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        return None
    return text[:start], text[start:end + len(END)], text[end + len(END):]


def choose_sample(spec: ExperimentSpec) -> list[Cell]:
    """The cells the page check recomputes: for every method label of ``spec``, one cell on every dataset it
    runs on (there its fewest users) and one at every number of users it runs at (its ``n``, else its
    dataset's size: :func:`_cost_rank`; the largest included), so a label is recomputed on every dataset and in
    every size regime, not every pair of them.  Within a stratum the smallest domain, ties broken by the
    SHA-256 of the cell's stable description (dataset, label, parameters, repeat): the other parameters
    (the dataset of a size, ε, repeat, ...) rotate over the strata by a stable id, never by timing, so every
    run of the same spec picks the same cells.  In the spec's order of methods, then datasets, then users."""
    sizes: dict[Any, float] = {}
    best: dict[tuple, list] = {}  # stratum: [rank, cell, its hash (taken when a tie needs it)]
    for cell in spec.cells():
        users, domain = _cost_rank(cell, sizes)
        label = cell.method.label
        for stratum, rank in (((label, "dataset", cell.dataset.key), (users, domain)),
                              ((label, "users", users), (domain,))):
            current = best.get(stratum)
            if current is None or rank < current[0]:
                best[stratum] = [rank, cell, None]
            elif rank == current[0]:  # a tie: the smaller hash wins (hashing only ties)
                if current[2] is None:
                    current[2] = _cell_hash(current[1])
                challenger = _cell_hash(cell)
                if challenger < current[2]:
                    best[stratum] = [rank, cell, challenger]
    methods = {method.label: index for index, method in enumerate(spec.methods)}
    datasets = {dataset.key: index for index, dataset in enumerate(spec.datasets)}
    cells = {id(entry[1]): entry[1] for entry in best.values()}.values()
    return sorted(cells, key=lambda cell: (methods.get(cell.method.label, len(methods)),
                                           datasets.get(cell.dataset.key, len(datasets)),
                                           _cost_rank(cell, sizes), _cell_hash(cell)))


def sample_scope(sample: list[Cell]) -> str:
    """What a :func:`choose_sample` ``sample`` covers and what it does not, in words for the page."""
    labels = len({cell.method.label for cell in sample})
    datasets = len({cell.dataset.key for cell in sample})
    return (f"for each of its {labels} method labels, one cell on every dataset it runs on ({datasets} datasets in "
            "all) and one at every number of users it runs at, the largest included; within each the smallest "
            "domain, the other parameters (the dataset of a size, ε, repeat, ...) rotating by the SHA-256 of the "
            "cell's stable description. A change to a method's code fails it when it moves that method's numbers "
            "at the sampled parameters of any one dataset or any one size (a change confined to one dataset, or "
            "to sizes above a threshold, is caught); a change confined to one pair of a dataset and a size the "
            "sample does not take, or to parameter values it does not take (an ε, a larger domain, a repeat), "
            "may pass it.")


def _cost_rank(cell: Cell, sizes: dict) -> tuple:
    """What a cell's cost grows with, by its parameters alone: its users (``n``, else every user of its dataset:
    the dataset's size, ``sizes`` caching it per dataset) and its domain (``d``, ``bins``, ``dataset_bins``,
    ``k``)."""
    params = cell.param_dict
    users = params.get("n")
    if users is None:
        if cell.dataset not in sizes:
            sizes[cell.dataset] = _dataset_size(cell.dataset)
        users = sizes[cell.dataset]
    domain = max((value for key in ("d", "bins", "dataset_bins", "k", "domain_size")
                  if isinstance(value := params.get(key), (int, float))), default=0)
    return (users, domain)


def _dataset_size(reference) -> float:
    """The users of a dataset (infinite when it cannot be described here: ranked last)."""
    try:
        size = reference.resolve().size
    except Exception:  # a dataset that cannot be read here is ranked last, not an error of the page
        return math.inf
    return float(size) if isinstance(size, (int, float)) and size > 0 else math.inf


def _cell_hash(cell: Cell) -> str:
    text = json.dumps([cell.dataset.key, cell.method.label, cell.param_dict, cell.repeat], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


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


def run_facts(result, out: str | Path, command: str, previous_outcomes: dict[str, str]) -> dict[str, Any]:
    """What the generated block says about the run besides its cells (the record's first line,
    :mod:`._pagerecord`): read once, when the page is written."""
    spec = result.spec
    runs = [run for run in read_runs(out) if run.get("spec") == spec.name and run.get("repeats") == spec.repeats]
    return {
        "spec": spec.name, "run": spec.run, "repeats": spec.repeats, "seed": spec.seed, "rule_version": RULE_VERSION,
        "command": command, "out": str(out), "generated": utc_now(), "judged_commit": source_commit(),
        "cells": result.computed + result.reused + len(result.failures), "failed": len(result.failures),
        "numerics": dict(sorted(getattr(result, "numerics", {}).items())),
        "commits": [[commit, cells] for commit, cells in getattr(result, "commits", {}).items()],
        "runs": runs, "previous_outcomes": previous_outcomes,
    }


def write_page(page: str | Path, result, claims: list[dict], out: str | Path, command: str) -> Path:
    """Write the record of the run beside ``page`` and replace the generated part of ``page`` with
    :func:`render_block` (module docstring); returns the page's path.  ``claims`` are the run's verdicts
    (``result.claims``)."""
    page = Path(page)
    spec = result.spec
    text = page.read_text() if page.exists() else f"# Reproduction: {spec.title or spec.name}\n"
    parts = split_page(text)
    if parts is not None:
        head, previous, tail = parts
    else:  # the first generated version: inserted after the title
        first, _, after = text.partition("\n")
        head, previous, tail = first + "\n\n", "", "\n" + after
    facts = run_facts(result, out, command, _previous_outcomes(previous))
    record = write_record(record_path(page), facts, result.raw, spec.parameter_names())
    block = render_block(spec, facts, claims, result.summary, record.name, record_digest(record))
    return write_text_atomically(page, head + block + tail)


def render_block(spec: ExperimentSpec, facts: dict[str, Any], claims: list[dict], summary, record_name: str,
                 digest: str) -> str:
    """The generated block of a page (:data:`BEGIN` ... :data:`END`) from the run's ``facts`` (the record's
    first line), its ``summary`` table and judged ``claims``, ``spec``, and the record's name and
    :func:`~._pagerecord.record_digest`: nothing else, so the page check can render it again from the
    recorded cells."""
    quick = facts["run"] == "quick"
    full = spec.full_repeats if quick else None
    repeats = facts["repeats"]
    counts = {outcome: sum(c["outcome"] == outcome for c in claims)
              for outcome in ("holds", "holds and understated", "does not hold", "inconclusive", "underpowered")}
    runs = facts["runs"]
    computing = [run for run in runs if run.get("computed")]
    commits = {commit: cells for commit, cells in facts["commits"]}
    wall = sum(run.get("seconds", 0.0) for run in computing)
    lines = [
        BEGIN, "", "## This run", "",
        "```", facts["command"], "```", "",
        f"**Generated** by `dpdist reproduce ... --page` on {facts['generated']} from the run in `{facts['out']}`: "
        f"{'quick run' if quick else 'full run'}, {repeats} repeats, root seed {facts['seed']}, {facts['cells']} cells "
        f"({facts['failed']} failed); numerics "
        + (", ".join(f"{k} ({v} cells)" for k, v in facts["numerics"].items()) or "not recorded")
        + f". {_commit_text(commits, computing)}; claims judged at commit "
        f"`{facts['judged_commit']}` under **verdict rule version {facts['rule_version']}** (docs/explanation/verdicts.md, "
        f"\"Verdicts\"). Wall time of the invocations that computed cells: **{_duration(wall)}** (`--jobs` and load "
        "below; the machine is shared, so these are upper figures).",
        "",
        *_run_lines(runs),
        "",
        f"Verdicts{' (quick run, indicative)' if quick else ''}: **holds {counts['holds']}, holds and understated "
        f"{counts['holds and understated']}, does not hold {counts['does not hold']}, inconclusive "
        f"{counts['inconclusive']}, underpowered {counts['underpowered']}** of {len(claims)} claims. "
        f"Power: {power_summary([{'repeats_for_power': None, **c} for c in claims], repeats)}",
        "",
    ]
    lines += _changes(facts["previous_outcomes"], claims)
    cannot = [(i, c) for i, c in enumerate(claims, 1) if decidability(c, repeats, full).startswith("no")]
    if cannot:
        lines += ["", f"**What this {'quick ' if quick else ''}run cannot decide** (the power calculation of "
                  "docs/explanation/verdicts.md, \"Power\", at this run's standard errors and settings): "
                  + "; ".join(f"#{i} {decidability(c, repeats, full)}" for i, c in cannot) + ".", ""]
    lines += ["", "### Claims", "", *claims_table(claims, repeats, full, quick), *side_by_side(claims), ""]
    lines += quote_lines(spec, summary) + spec_lines(spec)
    sample = choose_sample(spec)
    lines += ["### What the page check re-derives", "",
              f"Every metric value of every cell of this run is recorded beside this page (`{record_name}`, "
              f"cells' SHA-256 `{digest}`). "
              "`tests/experiments/test_pagecheck.py` re-judges every claim from those cells with the code "
              "of the current commit and renders this block again: a verdict, count, number or header that differs "
              f"fails it with \"page stale: regenerate {spec.name}\", as does a verdict rule other than version "
              f"{facts['rule_version']}. It checks that every number the hand-written text below quotes is one of "
              "this block's, and that every figure, verdict and claim number it binds to a place of this block "
              "(an HTML comment after it; every verdict word and claim reference is bound) is what that place "
              f"gives. And (slow) it recomputes {len(sample)} cells and compares every metric with the "
              f"recorded value within a relative {SAMPLE_TOLERANCE:g}: {sample_scope(sample)}", "", END]
    return "\n".join(lines)


def _changes(before: dict[str, str], claims: list[dict]) -> list[str]:
    """What changed against the previous generated block (``before``: its ``{claim text: outcome}``): claim by
    claim, old -> new."""
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
