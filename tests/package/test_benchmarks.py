"""The benchmarks run: a benchmark that crashes cannot regenerate its figures in docs/benchmarks.md.

Every script in ``benchmarks/`` loads (its imports and module-level code run, as ``python benchmarks/x.py`` would before
its main); the collection service's scripts run end to end at their smallest case and their output is checked: the
relay against the collector (``bench_relay.py``, which crashed creating a campaign with the old ``"relay": true``) and
``bench_serve.py --cases ratio`` (dpdist, the durable floor app and the bare app in turn).  ``bench_burst.py`` runs in
tests/serve/test_serve_abuse.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

pytestmark = pytest.mark.slow

LOAD_ALL = """
import importlib.util, json, sys
from pathlib import Path
root = Path(sys.argv[1])
sys.path.insert(0, str(root))
failed = {}
for path in sorted(root.glob("*.py")):
    name = "_benchmark_" + path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as a script's own module is (dataclasses look it up)
    try:
        spec.loader.exec_module(module)
    except BaseException as error:
        failed[path.name] = f"{type(error).__name__}: {error}"
print(json.dumps(failed))
"""


def test_every_benchmark_script_loads(tmp_path):
    # in a folder of its own: an app's module opens its database where it runs (floor_app.py: floor.sqlite)
    run = subprocess.run([sys.executable, "-c", LOAD_ALL, str(BENCHMARKS)], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.splitlines()[-1]) == {}


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (.ci/run installs it)")
def test_bench_relay_runs_and_states_the_ratio(tmp_path):
    out = tmp_path / "relay.json"
    run = subprocess.run([sys.executable, str(BENCHMARKS / "bench_relay.py"), "--seconds", "1", "--out", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(out.read_text())
    assert [row["case"] for row in result["results"]] == ["collector", "relay"], result
    assert all(row["acknowledged"] > 0 for row in result["results"]) and result["ratio"]["per_cpu_s"] > 0
    assert "relay / collector:" in run.stdout


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (.ci/run installs it)")
def test_bench_serve_ratio_measures_dpdist_the_floor_and_the_bare_app(tmp_path):
    out = tmp_path / "ratio.jsonl"
    run = subprocess.run([sys.executable, str(BENCHMARKS / "bench_serve.py"), "--cases", "ratio", "--databases", "sqlite",
                          "--bodies", "one", "--connections", "16", "--repeats", "1", "--seconds", "1", "--out", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(row[party]["acknowledged"] > 0 for party in ("dpdist", "floor", "bare")), row
    assert row["floor"]["requests_per_group"] > 1 and row["dpdist"]["requests_per_group"] > 1  # group commits, both
    assert 0 < row["of_floor"] and 0 < row["floor_ratio"] < 1.5, row
