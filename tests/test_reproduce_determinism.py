"""Every method of every paper spec gives the same numbers twice from one seed.

A cell's randomness must all come from its seeds (``cell_seeds``): a method that
falls back on the CSPRNG somewhere (as DW-AMRP's permutations once did) makes
verdicts move between runs of the same commit.  One cell per method (its smallest
``n``, leaving out the 3,000,000-flight datasets for time) is run twice.
"""

from __future__ import annotations

import importlib
import math

import pytest

from dpdist.experiments._runner import execute_cell

PAPERS = ["wiener", "central", "sw_ems", "wavelet", "cp"]


def one_cell_per_method(spec):
    chosen = {}
    for cell in spec.cells():
        if cell.repeat != 0 or cell.dataset.key.startswith("flights3m"):
            continue
        n = cell.param_dict.get("n") or 0
        if cell.method.label not in chosen or n < chosen[cell.method.label][0]:
            chosen[cell.method.label] = (n, cell)
    return [cell for _, cell in chosen.values()]


def same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.slow
@pytest.mark.parametrize("paper", PAPERS)
def test_each_method_repeats_its_numbers_from_the_seed(paper):
    spec = importlib.import_module(f"dpdist.reproductions.{paper}").SPEC.with_options(quick=True)
    cells = one_cell_per_method(spec)
    assert len(cells) == len({method.label for method in spec.methods})
    moved = []
    for cell in cells:
        first = execute_cell(cell, spec.seed, spec.metrics)["metrics"]
        second = execute_cell(cell, spec.seed, spec.metrics)["metrics"]
        assert first, f"{cell.method.label} on {cell.dataset.key} computed no metric"
        if first.keys() != second.keys() or not all(same(first[key], second[key]) for key in first):
            moved.append((cell.method.label, cell.dataset.key, first, second))
    assert not moved, f"numbers moved between two runs of one seed: {moved}"


# ---------------------------------------------------------------------- the BLAS kernel (issue 32 item 5)
_ONE_CELL = """
import json, sys, tempfile
from dpdist.experiments import get_spec, run_spec
from dpdist.experiments._blas import loaded_core
from dpdist.experiments._runner import execute_cell
spec = get_spec("sw-ems").with_options(quick=True)
cell = next(c for c in spec.cells() if c.dataset.key == "income-weekly" and c.method.label == "SW-EMS"
            and c.param_dict.get("epsilon") == 0.5 and c.repeat == 1)
if sys.argv[1] == "direct":
    value = execute_cell(cell, spec.seed, spec.metrics)["metrics"]["deciles"]
else:
    with tempfile.TemporaryDirectory() as out:
        value = run_spec(spec, out, jobs=int(sys.argv[1]), progress=False, cells=[cell]).raw.select(metric="deciles").rows[0]["value"]
print(json.dumps({"value": value, "core": loaded_core()}))
"""


def _one_cell(mode: str, **env_changes) -> dict:
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    env.update(env_changes)
    done = subprocess.run([sys.executable, "-c", _ONE_CELL, mode], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_run_computes_its_cells_with_the_pinned_blas_kernel_whatever_the_cpu_picks():
    # SW-EMS's EM amplifies the rounding of the BLAS kernel that OpenBLAS picks for the CPU: this
    # cell's decile error is 22.384 with the Haswell kernel (also what a Zen CPU loads), 22.630 with
    # SkylakeX (an AVX-512 CPU) and 22.625 with Sandybridge (AVX without AVX2), which is how the
    # sw-ems page (computed on a Zen CPU) differed from a re-run on an AVX-512 one.
    from dpdist.experiments._blas import PINNED_CORETYPE, target_core

    if target_core() is None:
        pytest.skip("no pinned kernel on this platform (not Linux x86-64 with AVX2)")
    pinned = _one_cell("direct", OPENBLAS_CORETYPE=PINNED_CORETYPE)
    assert pinned["core"] == PINNED_CORETYPE
    # the kernel matters for this cell (Sandybridge's runs on every CPU that runs Haswell's; the
    # kernel this CPU picks by itself may compute the same numbers as the pinned one, as Zen's do)
    other = _one_cell("direct", OPENBLAS_CORETYPE="Sandybridge")
    assert other["core"] == "Sandybridge" and other["value"] != pinned["value"]
    # a run, serial or parallel, started without any BLAS variable, gives the pinned kernel's number
    assert _one_cell("1")["value"] == pinned["value"]
    assert _one_cell("2")["value"] == pinned["value"]


def test_the_test_process_loads_the_pinned_kernel_and_cell_files_record_it(tmp_path):
    # conftest pins it before numpy loads, so jobs=1 runs in this process (tests register methods here)
    import json

    from dpdist.experiments import ExperimentSpec, run_spec
    from dpdist.experiments._blas import loaded_core, target_core

    if target_core() is None:
        pytest.skip("no pinned kernel on this platform")
    assert loaded_core() == target_core()
    spec = ExperimentSpec(name="t", datasets=["geo-0.8"], methods=["grr"], metrics=["mse"], grid={"epsilon": [1.0]},
                          repeats=2)
    result = run_spec(spec, tmp_path, progress=False)
    assert result.blas == {target_core(): 2}
    assert {json.loads(p.read_text())["blas"] for p in (tmp_path / "cells").glob("*.json")} == {target_core()}
