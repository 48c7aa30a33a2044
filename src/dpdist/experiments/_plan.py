"""How long a run will take, before it runs: ``dpdist reproduce NAME --plan``.

A uniform random sample of the pending cells is run (and cached: nothing is wasted,
the real run reuses them); the mean seconds per cell times the number of pending cells
estimates the CPU time, with the standard error of that mean (cells differ a lot in
cost, e.g. by n or by method, and the sample says how much).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validation import Integer, check_param
from ._runner import cell_key, run_spec
from ._spec import ExperimentSpec

__all__ = ["RunPlan", "plan_run"]


@dataclass(frozen=True)
class RunPlan:
    """Cell counts and the estimated CPU time of the pending cells."""

    cells: int
    cached: int
    sampled: int
    seconds_per_cell: float
    seconds_per_cell_se: float

    @property
    def pending(self) -> int:
        return self.cells - self.cached

    @property
    def cpu_seconds(self) -> float:
        """Estimated CPU seconds of the cells still to run (the sampled ones are now cached)."""
        return self.seconds_per_cell * (self.pending - self.sampled)

    def wall_seconds(self, workers: int) -> float:
        """Estimated wall time on ``workers`` worker processes (the cells are independent)."""
        return self.cpu_seconds / workers

    def describe(self, workers: int) -> str:
        low = max(0.0, self.seconds_per_cell - 2 * self.seconds_per_cell_se) * (self.pending - self.sampled) / workers
        high = (self.seconds_per_cell + 2 * self.seconds_per_cell_se) * (self.pending - self.sampled) / workers
        return (
            f"{self.cells} cells, {self.cached} already cached, {self.sampled} sampled now: "
            f"{self.seconds_per_cell:.3g} s per cell (+- {self.seconds_per_cell_se:.2g}); the other "
            f"{self.pending - self.sampled} take about {_duration(self.wall_seconds(workers))} on {workers} "
            f"worker(s) (2 SE: {_duration(low)} .. {_duration(high)})"
        )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def plan_run(spec: ExperimentSpec, out: str | Path, *, sample: int = 40, jobs: int = 1, seed: int = 0) -> RunPlan:
    """Run ``sample`` random pending cells of ``spec`` into ``out`` and estimate the rest (module docstring)."""
    sample = check_param("plan_run", "sample", sample, Integer(low=2, high=100_000))
    out = Path(out)
    cells = spec.cells()
    keys = [cell_key(cell, spec) for cell in cells]
    cache = out / "cells"
    pending = [cell for cell, key in zip(cells, keys) if not (cache / f"{key}.json").exists()]
    if not pending:
        return RunPlan(len(cells), len(cells), 0, 0.0, 0.0)
    chosen_index = np.random.default_rng(seed).choice(len(pending), size=min(sample, len(pending)), replace=False)
    chosen = [pending[i] for i in sorted(chosen_index)]
    run_spec(spec, out, jobs=jobs, progress=False, cells=chosen)
    seconds = []
    for cell in chosen:
        path = cache / f"{cell_key(cell, spec)}.json"
        if path.exists():
            seconds.append(float(json.loads(path.read_text())["seconds"]))
    mean = float(np.mean(seconds)) if seconds else math.nan
    se = float(np.std(seconds, ddof=1) / math.sqrt(len(seconds))) if len(seconds) > 1 else math.nan
    return RunPlan(len(cells), len(cells) - len(pending), len(chosen), mean, se)
