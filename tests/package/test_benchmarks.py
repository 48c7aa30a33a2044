"""The benchmarks run: a benchmark that crashes cannot regenerate its figures on the pages of docs/reference/benchmarks/.

Every script in ``benchmarks/`` loads (its imports and module-level code run, as ``python benchmarks/x.py`` would before
its main), and every one runs end to end at its smallest case (tests/benchmark_support.py: its own size options at
their smallest, or its size constants made small), all in one process (tests/benchmark_runner.py) on a scratch copy of
benchmarks/ and docs/ (the scripts write their results beside themselves; a smoke case is not a result).  Each script
is a case of its own: its output must be its real result - the rows of its table or of the JSON it writes, every number
in them finite.  Peers that cannot be here are left out by the script's own option (``--without``,
``--installed-only``, ``--peers``), named by :func:`test_benchmark_peer_is_present`'s skips, and dpdist's side still
runs.  The collection service's scripts run apart: ``bench_relay.py`` (which crashed creating a campaign with the old
``"relay": true``) and ``bench_serve.py --cases ratio`` (dpdist, the durable floor app and the bare app in turn) here,
``bench_burst.py`` in tests/serve/test_serve_abuse.py.
"""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark_support import CASES, PEERS, case_arguments, result_record, result_rows, row_list, scratch_copy
from run_once_support import once_per_run

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
RUNNER = ROOT / "tests" / "benchmark_runner.py"

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
    # in a folder of its own: should an app's module open its database where it runs, it opens it there
    run = subprocess.run([sys.executable, "-c", LOAD_ALL, str(BENCHMARKS)], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.splitlines()[-1]) == {}


def test_every_benchmark_script_has_a_smoke_case():
    scripts = {path.name for path in BENCHMARKS.glob("bench_*.py")}
    apart = {"bench_relay.py", "bench_serve.py", "bench_burst.py"}  # run by the tests below and test_serve_abuse.py
    assert scripts - apart == set(CASES), "a new benchmark script needs its smallest case in tests/benchmark_support.py"


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory):
    """Every script's outcome at its smallest case: one process runs them all, in turn, once per session (the
    pytest-xdist workers that get some of the cases share the temporary folder's parent: the first one runs them)."""
    def run_all(folder: Path) -> dict:
        root = scratch_copy(ROOT, folder)
        spec, out = folder / "spec.json", folder / "outcomes.json"
        spec.write_text(json.dumps({"root": str(root), "cases": {script: case_arguments(script) for script in CASES}}))
        run = subprocess.run([sys.executable, str(RUNNER), str(spec), str(out)], capture_output=True, text=True,
                             timeout=900)
        outcomes = json.loads(out.read_text()) if out.exists() else {}
        return {"root": str(root), "outcomes": outcomes, "log": run.stderr[-5000:]}

    _, found = once_per_run(tmp_path_factory, "benchmark-smoke", run_all)
    return Path(found["root"]), found["outcomes"], found["log"]


@pytest.mark.parametrize("script", sorted(CASES))
def test_benchmark_runs_at_its_smallest_case(smoke_runs, script):
    root, outcomes, log = smoke_runs
    assert script in outcomes, f"the runner died before {script}: {log[-3000:]}"
    outcome = outcomes[script]
    missing = [program for program in CASES[script].get("needs", ()) if shutil.which(program) is None]
    if missing:
        pytest.skip(f"{script} runs {', '.join(missing)}, not installed here (.ci/run installs them)")
    assert outcome["error"] is None, f"{script} failed:\n{outcome['error']}\n{outcome['stdout'][-1500:]}"
    rows = result_rows(root, script, outcome["stdout"])
    assert len(rows) >= CASES[script].get("rows", 1), (script, len(rows), outcome["stdout"][-1500:])
    numbers = [value for row in rows for value in row]
    assert numbers, f"{script}'s rows hold no number: {outcome['stdout'][-1500:]}"
    record = result_record(root, script, outcome["stdout"])
    for key, value in CASES[script].get("expect", {}).items():
        assert record[key] == value, (script, key, record[key])
    for key, value in CASES[script].get("expect_rows", {}).items():
        assert all(row[key] == value for row in row_list(record)), (script, key, row_list(record))
    if "inf_ok" in CASES[script]:  # an infinite number is a result there (the case says why); NaN never is
        assert not any(math.isnan(value) for value in numbers), script
    elif "nan_ok" not in CASES[script]:
        assert all(math.isfinite(value) for value in numbers), (script, [row for row in rows if not all(map(math.isfinite, row))])
    else:
        assert not any(math.isinf(value) for value in numbers), script


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_benchmark_peer_is_present(peer):
    """A peer left out of the smoke runs is named here (the scripts' dpdist side ran without it)."""
    reason = PEERS[peer]
    if reason is not None or importlib.util.find_spec(peer) is None:
        pytest.skip(reason or f"{peer} is not installed (`uv sync --extra bench`): the benchmarks ran without it")


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


def test_bench_relay_token_checks_state_the_bindings_cost_beside_the_token_check(tmp_path):
    out = tmp_path / "checks.json"
    run = subprocess.run([sys.executable, str(BENCHMARKS / "bench_relay.py"), "--token-checks", "4", "--out", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = json.loads(out.read_text())["token_checks"]
    assert [row["case"].split(" ")[0] for row in rows] == ["token", "binding", "both"]
    assert all(math.isfinite(row["median_us"]) and row["median_us"] > 0 for row in rows) and "binding / token check:" in run.stdout


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (.ci/run installs it)")
def test_bench_serve_workers_floor_measures_one_and_two_workers_of_dpdist_and_the_floor(tmp_path):
    """Eight connections: fewer requests at once than dpdist's backpressure refuses at (``_service.MIN_SHED``, 16
    waiting), so every answer must be a 2xx however loaded the machine (at 64 a CI run beside the suite saw a non-2xx
    answer: dpdist may answer 503 busy there, its backpressure, which wrk counts without telling it apart)."""
    out = tmp_path / "workers.jsonl"
    run = subprocess.run([sys.executable, str(BENCHMARKS / "bench_serve.py"), "--cases", "workers_floor", "--databases",
                          "sqlite", "--repeats", "1", "--seconds", "1", "--connections", "8", "--out", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(row["server"], row["workers"]) for row in rows] == [("dpdist", 1), ("floor", 1), ("dpdist", 2), ("floor", 2)]
    assert all(row["acknowledged"] > 0 and row["non_2xx"] == 0 and row["per_cpu_s"] > 0 for row in rows), rows
    floors = [row for row in rows if row["server"] == "floor"]
    assert all(row["requests_per_group"] > 1 for row in floors), floors  # group commits, counted over both processes


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (.ci/run installs it)")
def test_bench_serve_ratio_measures_dpdist_the_floor_and_the_bare_app(tmp_path):
    out = tmp_path / "ratio.jsonl"
    run = subprocess.run([sys.executable, str(BENCHMARKS / "bench_serve.py"), "--cases", "ratio", "--databases", "sqlite",
                          "--bodies", "one", "--connections", "16", "--repeats", "1", "--seconds", "1", "--obligations",
                          "--out", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(row[party]["acknowledged"] > 0 for party in ("dpdist", "floor", "obligations", "bare")), row
    assert all(row[party]["requests_per_group"] > 1 for party in ("dpdist", "floor", "obligations")), row  # group commits
    assert 0 < row["of_floor"] and 0 < row["floor_ratio"] < 1.5 and 0 < row["of_obligations"], row
    assert all(row[party]["non_2xx"] == 0 for party in ("dpdist", "floor", "obligations")), row
    # a request's CPU by thread: the event loop's always; a committer's (another thread) where there is one
    threads = {party: row[party]["thread_us_per_request"] for party in ("dpdist", "floor", "obligations", "bare")}
    assert all(spent["loop_user"] > 0 for spent in threads.values()), threads
    assert all(spent["others_user"] + spent["others_sys"] > 0 for party, spent in threads.items() if party != "bare"), threads


@pytest.fixture
def obliged(tmp_path, monkeypatch):
    """``benchmarks/floor_obligations.py``'s committer without its thread (``commit`` called by the test), and its
    connection; the module imported afresh."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    for name in ("floor_app", "floor_obligations"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import floor_obligations

    committer = floor_obligations.ObligedCommitter.__new__(floor_obligations.ObligedCommitter)
    committer.path = str(tmp_path / "o.sqlite")
    connection = committer.connect()
    yield committer, connection
    connection.close()


def _group(*items) -> list:
    """The committer's queue items of ``(campaign, batch id, body)``: no future or loop, the body and its digest."""
    import hashlib

    return [((campaign, batch_id), None, None, (body, hashlib.sha256(body).hexdigest())) for campaign, batch_id, body in items]


def _rewritten(record: bytes, payload: bytes | None = None, **header) -> bytes:
    """``record`` with ``header``'s fields replaced in its JSON header (and its payload, if given)."""
    import struct

    prefix = struct.Struct("<8sHI")
    magic, version, length = prefix.unpack_from(record)
    fields = {**json.loads(record[prefix.size:prefix.size + length]), **header}
    raw = json.dumps(fields).encode()
    return prefix.pack(magic, version, len(raw)) + raw + (record[prefix.size + length:] if payload is None else payload)


def _read_one(path: str, query: str, parameters: tuple = ()) -> tuple:
    import contextlib
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as connection:
        return connection.execute(query, parameters).fetchone()


def test_the_obligations_floor_counts_a_batch_once_and_refuses_what_dpdist_refuses(obliged):
    """``benchmarks/floor_obligations.py`` does the work it stands for: a valid record counted once (its statistic in
    the group's log row), a retry a duplicate, a corrupt record, another protocol's record, an out-of-range report and
    an id another campaign counted refused."""
    import zlib

    import numpy as np

    from dpdist import io, local

    committer, connection = obliged
    protocol = local.from_config({"protocol": "grr", "epsilon": 1.0, "domain_size": 64})
    record = io.encode_record(protocol, protocol.privatize(np.array([3, 5]), rng=1))
    other = io.encode_record(local.from_config({"protocol": "grr", "epsilon": 1.0, "domain_size": 8}), np.array([1]))
    wide = _rewritten(record, b"\x03\x40", crc32=zlib.crc32(b"\x03\x40"))  # a report out of the domain, its CRC right
    ids = [f"{index:032x}" for index in range(5)]
    outcomes = committer.commit(connection, _group(("a", ids[0], record), ("a", ids[1], record[:-1] + b"\x00"),
                                                   ("a", ids[2], other), ("a", ids[3], wide)))
    assert outcomes == [(False, 2, 2), None, None, None]
    assert committer.commit(connection, _group(("a", ids[0], record), ("b", ids[0], record))) == [(True, 2, 2), None]
    (statistic,) = _read_one(committer.path, "SELECT statistic FROM ingest_log")
    reports = np.asarray(io.decode_record(record, protocol).reports)
    assert np.array_equal(np.frombuffer(statistic, np.int64), np.bincount(reports, minlength=64))


def test_the_obligations_floor_refuses_a_wrong_file_id_a_bad_magic_a_closed_campaign_and_a_shared_id(obliged):
    """The checks of ``benchmarks/floor_obligations.py`` the test above does not reach: a record whose ``file_id`` is
    another batch's, a bad magic, another dtype, a campaign closed in the database (by another process), a batch id two
    campaigns name in one group, a batch id reused for other bytes; and the batch row keeps the request's digest."""
    import hashlib

    import numpy as np

    from dpdist import io, local

    committer, connection = obliged
    protocol = local.from_config({"protocol": "grr", "epsilon": 1.0, "domain_size": 64})
    ids = [f"{index:032x}" for index in range(8)]
    mine, theirs = io.encode_record(protocol, np.array([3]), ids[0]), io.encode_record(protocol, np.array([3]), ids[7])
    plain = io.encode_record(protocol, np.array([3]))  # no file id: refused below for one fault only
    wide_dtype = _rewritten(plain, dtype="<u2")
    assert committer.commit(connection, _group(("a", ids[0], mine), ("a", ids[1], theirs), ("a", ids[2], b"X" + plain[1:]),
                                               ("a", ids[3], wide_dtype), ("a", ids[4], io.encode_record(protocol, [3])),
                                               ("b", ids[4], io.encode_record(protocol, [3])))) == [
        (False, 1, 1), None, None, None, (False, 1, 1), None]
    (digest,) = _read_one(committer.path, "SELECT body_sha256 FROM batches WHERE batch_id = ?", (ids[0],))
    assert digest == hashlib.sha256(mine).hexdigest()
    assert committer.commit(connection, _group(("a", ids[0], mine), ("a", ids[4], io.encode_record(protocol, [5])))) == [
        (True, 1, 1), None]  # a retry answered as first; the id reused for other bytes refused
    connection.execute("UPDATE campaigns SET state = 'closed' WHERE id = 'a'")
    assert committer.commit(connection, _group(("a", ids[5], io.encode_record(protocol, [4])))) == [None]
