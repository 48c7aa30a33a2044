"""Run a spec end to end: cells, tables (CSV + Parquet), figures, claims and ``report.md``.

Layout of the output folder::

    OUT/cells/<key>.json          one finished cell each (the resume cache)
    OUT/results/raw.csv|parquet   one row per cell and metric
    OUT/results/summary.csv|parquet  mean, std, se, count per setting
    OUT/results/claims.csv        outcome of each claim
    OUT/figures/<figure>.png|svg
    OUT/report.md
    OUT/runs.jsonl                one line per invocation: wall time, cells, load, commit (:mod:`._runlog`)

Cells, tables and ``report.md`` are replaced whole (written to a temporary file, then
renamed), so a killed run leaves the previous version or the new one, never a truncated file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ._claims import evaluate_claims
from .._io._atomic import remove_stale_temporaries
from ._plots import draw_figure
from ._report import write_report
from ._runlog import LoadSampler, append_run, source_commit, timer, utc_now
from ._runner import RunResult, run_spec
from ._spec import ExperimentSpec
from ._table import ResultsTable

__all__ = ["reproduce"]


def reproduce(
    spec: ExperimentSpec, out: str | Path, *, jobs: int = 1, progress: bool = True, command: str = "", scheduler: Any = None,
    pin_numerics: bool = True,
) -> RunResult:
    """Run ``spec`` into ``out`` (resuming from its cache) and write tables, figures and report.

    ``jobs`` local worker processes, or ``scheduler`` a Dask cluster; ``pin_numerics`` (see
    :func:`run_spec`).
    """
    out = Path(out)
    started, clock = utc_now(), timer()
    with LoadSampler() as load:
        result = run_spec(spec, out, jobs=jobs, progress=progress, scheduler=scheduler, pin_numerics=pin_numerics)
    append_run(out, {
        "started": started, "finished": utc_now(), "seconds": round(timer() - clock, 1),
        "computed": result.computed, "reused": result.reused, "failed": len(result.failures),
        "load": load.summary(), "cpus": os.cpu_count(), "commit": source_commit(), "jobs": jobs,
        "command": command or f"dpdist reproduce {spec.name}", "repeats": spec.repeats, "run": spec.run,
        "spec": spec.name,
    })
    results = out / "results"
    if results.is_dir():
        remove_stale_temporaries(results)
    files: dict[str, Any] = {
        "raw_csv": result.raw.to_csv(results / "raw.csv"),
        "summary_csv": result.summary.to_csv(results / "summary.csv"),
        "raw_parquet": result.raw.to_parquet(results / "raw.parquet"),
        "summary_parquet": result.summary.to_parquet(results / "summary.parquet"),
    }
    figures = {figure.name: draw_figure(figure, result.summary, out / "figures") for figure in spec.figures}
    claims = evaluate_claims(spec.claims, result.summary)
    files["claims_csv"] = ResultsTable(claims, ["text", "figure", "outcome", "explanation", "data", "artefact", "group",
                                                "repeats_for_power"]).to_csv(
        results / "claims.csv"
    )
    command = command or f"dpdist reproduce {spec.name}"
    files["report"] = write_report(out / "report.md", result, claims, figures, command)
    files["figures"] = [path for paths in figures.values() for path in paths]
    result.files = files
    result.claims = claims
    return result
