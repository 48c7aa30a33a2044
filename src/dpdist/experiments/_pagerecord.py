"""The recorded cells of a reproduction page: every metric value of every cell of the run the page reports.

``dpdist reproduce NAME --page docs/reproductions/NAME.md`` writes, beside the page, ``NAME.cells.jsonl``
(:func:`record_path`): JSON lines, the first the run's facts (:func:`run_facts`: spec, run, repeats,
seed, command, the commits and numerics that computed the cells, the invocations of ``runs.jsonl``, the
time the page was generated and the commit that judged its claims, the previous page's verdicts), then
one line per setting (dataset, method label, grid parameters) with the value of each metric at each
repeat, in the order of the spec's cells.

The page's generated block is a function of this record and the code (:func:`._pages.render_block`), so
:mod:`._pagecheck` can re-derive every number, count and verdict of the block from it, and recompute a
sample of its cells at the current commit.  The record is text with one setting per line, so a
regenerated page whose cells did not move changes few lines of it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .._io._atomic import write_text_atomically
from ._spec import Cell, ExperimentSpec
from ._table import ResultsTable

__all__ = ["RECORD_FORMAT", "record_path", "write_record", "read_record", "raw_from_record", "cell_values",
           "setting_key", "record_digest"]

#: Version of the record's layout (this module's docstring).
RECORD_FORMAT = 1


def record_path(page: str | Path) -> Path:
    """Where the recorded cells of ``page`` live: ``NAME.cells.jsonl`` beside ``NAME.md``."""
    page = Path(page)
    return page.with_name(f"{page.stem}.cells.jsonl")


def setting_key(dataset: str, method: str, params: dict[str, Any]) -> str:
    """The text that names one setting of a record (the same for a spec's cell and a recorded line)."""
    return json.dumps([dataset, method, {k: v for k, v in params.items() if v is not None}], sort_keys=True)


def _cell_key(cell: Cell, parameters: list[str]) -> str:
    params = cell.param_dict
    return setting_key(cell.dataset.key, cell.method.label, {name: params.get(name) for name in parameters})


def write_record(path: str | Path, facts: dict[str, Any], raw: ResultsTable, parameters: list[str]) -> Path:
    """Write the record of a run: ``facts`` (the first line) and ``raw`` (the run's raw table: one row per
    cell and metric) grouped into one line per setting, each metric a list over repeats (None where a
    repeat did not give that metric)."""
    settings: dict[str, dict[str, Any]] = {}
    for row in raw.rows:
        key = setting_key(row["dataset"], row["method"], {name: row.get(name) for name in parameters})
        entry = settings.get(key)
        if entry is None:
            entry = settings[key] = {"dataset": row["dataset"], "method": row["method"],
                                     "params": {name: row[name] for name in parameters if row.get(name) is not None},
                                     "metrics": {}}
        values = entry["metrics"].setdefault(row["metric"], [])
        values.extend([None] * (row["repeat"] + 1 - len(values)))
        values[row["repeat"]] = row["value"]
    lines = [json.dumps({"format": RECORD_FORMAT, **facts}, sort_keys=True)]
    lines += [json.dumps(entry) for entry in settings.values()]
    return write_text_atomically(path, "\n".join(lines) + "\n")


def read_record(path: str | Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``(facts, {setting key: setting})`` of a record written by :func:`write_record`."""
    lines = Path(path).read_text().splitlines()
    facts = json.loads(lines[0])
    settings = {}
    for line in lines[1:]:
        entry = json.loads(line)
        settings[setting_key(entry["dataset"], entry["method"], entry["params"])] = entry
    return facts, settings


def record_digest(path: str | Path) -> str:
    """The SHA-256 (first 16 hex digits) of a record's cells (every line after the facts): the page's block
    states it, so a recorded value changed by hand fails the page check even where no verdict moves."""
    text = Path(path).read_text()
    return hashlib.sha256(text[text.index("\n") + 1:].encode()).hexdigest()[:16]


def cell_values(cell: Cell, settings: dict[str, dict[str, Any]], parameters: list[str]) -> dict[str, float] | None:
    """The recorded metric values of one cell (None when the record has no such cell)."""
    entry = settings.get(_cell_key(cell, parameters))
    if entry is None:
        return None
    values = {metric: values[cell.repeat] for metric, values in entry["metrics"].items()
              if cell.repeat < len(values) and values[cell.repeat] is not None}
    return values or None


def raw_from_record(spec: ExperimentSpec, settings: dict[str, dict[str, Any]]) -> tuple[ResultsTable, list[str]]:
    """The run's raw table rebuilt from a record in the order of ``spec``'s cells (the order the runner
    writes it in, so :func:`~dpdist.experiments.summarize` gives the run's summary to the last bit), and
    what does not match: the spec's cells the record lacks, the record's settings the spec lacks."""
    parameters = spec.parameter_names()
    rows, problems, used = [], [], set()
    for cell in spec.cells():
        key = _cell_key(cell, parameters)
        values = cell_values(cell, settings, parameters)
        if values is None:
            problems.append(f"the record has no cell {cell.dataset.key} / {cell.method.label} / {cell.param_dict} / "
                            f"repeat {cell.repeat} of the spec")
            continue
        used.add(key)
        params = cell.param_dict
        base = {"dataset": cell.dataset.key, "method": cell.method.label,
                **{name: params.get(name) for name in parameters}, "repeat": cell.repeat}
        rows += [{**base, "metric": metric, "value": float(value)} for metric, value in values.items()]
    problems += [f"the spec has no setting {key} of the record" for key in settings if key not in used]
    return ResultsTable(rows, ["dataset", "method", *parameters, "repeat", "metric", "value"]), problems
