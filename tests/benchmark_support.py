"""The smallest case of every script in benchmarks/ and how to read its result (tests/package/test_benchmarks.py).

``CASES[script]``: ``argv`` (the script's own size options at their smallest: tiny n, one run, one seed), ``set``
(module constants of a script whose sizes are constants, replaced before its ``main`` runs: its own code computes its
rows, only fewer), ``without`` (the options that leave out a peer library that is not installed, by :data:`PEERS`),
``json`` (the file of results it writes, relative to the scratch copy's root; else its standard output is read),
``rows`` (the least number of result rows that must come out: the smoke case's count), ``ignore`` (keys of its JSON
rows that hold inputs, not results), ``expect`` and ``expect_rows`` (values its result, or each of its JSON rows,
must hold), ``needs`` (the programs it runs: without one, its case is skipped) and
``nan_ok`` (why a NaN among its numbers is a result, not a fault).
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import tempfile
from pathlib import Path

import java_support

#: peers of the benchmarks that a smoke run may lack: name -> why it is always left out (None: left out when absent)
PEERS: dict[str, str | None] = {
    "diffprivlib": None,  # the `bench` extra, not the dev group: bench_central*.py and bench_quantiles.py run --without it
    "side-environments": "bench_audit_field.py (trasgoDP, ldp-toolbox, diffprivlib), bench_audit_peers.py (past releases), "
    "bench_persons_peers.py (pipeline_dp, OpenDP), bench_sum_peers.py (pipeline_dp), bench_query.py and bench_first_answer.py (OpenDP's Polars plugin), bench_python_dp_quantiles.py and bench_decile_peers.py "
    "(python-dp) make "
    "their peers' environments with uv from the package index: minutes of CPU, over the smoke "
    "runs' budget; their dpdist rows (and the peers installed here) still run",
    "fang-authors-code": "bench_fang_oracles.py's side by side needs the authors' RUE/RLH/RWS files (on no package "
    "registry); its comparison against OUE, OLH and SS still runs",
}

CASES: dict[str, dict] = {
    "bench_access_log.py": {
        "rows": 3,
        "argv": ["--requests", "200", "--repeats", "1", "--out", "access.json"],
        "json": "work/bench_access_log/access.json",
        "ignore": frozenset({"requests"}),
    },
    "bench_adaptive_quantiles.py": {
        "rows": 1,
        "argv": ["--runs", "1", "--n", "2000", "--epsilon", "2", "--data", "normal", "--out", "adaptive.json"],
        "json": "work/bench_adaptive_quantiles/adaptive.json",
    },
    "bench_numerical_baselines.py": {
        "rows": 5,
        "argv": ["--n", "2000", "--seeds", "2"],
        "json": "benchmarks/results/numerical_baselines.json",
    },
    "bench_audit.py": {
        "rows": 10,
        "argv": ["--samples", "500", "--markdown"],
        "json": "benchmarks/results/audit_tightness.json",
    },
    "bench_audit_false_alarms.py": {
        "rows": 10,
        "argv": ["--audits-per-case", "1"],
        "set": {"SAMPLES": 300, "PEER_SAMPLES": 300},
        "json": "benchmarks/results/audit_false_alarms.json",
    },
    "bench_audit_field.py": {
        "rows": 19,
        # the audit's least sample count: its cost grows with it (multi-freq-ldpy's GRR and dpdist's jointexp lead)
        "argv": ["--samples", "200", "--only", "dpdist,OpenDP,pure-LDP,multi-freq-ldpy", "--no-docs"],
        "ignore": ["witness"],  # the audit's witness inputs: key-value absences are NaN
        "json": "benchmarks/results/audit_field.json",
    },
    "bench_audit_peers.py": {
        "rows": 2,
        "argv": ["--samples", "500", "--installed-only", "--packages", "opendp", "--markdown"],
        "json": "benchmarks/results/audit_peers.json",
        # the witness's plug-in loss is infinite when its event was never drawn under the other input, which OpenDP's
        # own CSPRNG (no seed) makes happen in some runs at 500 samples (CI of bbb3fa7d): a result, not an error
        "inf_ok": True,
    },
    "bench_central.py": {
        "rows": 13,
        "argv": ["--runs", "1", "--n", "500"],
        "without": {"diffprivlib": ["--without", "diffprivlib"]},
    },
    "bench_central_quantiles.py": {
        "rows": 1,
        "argv": ["--runs", "1", "--sizes", "1000", "--datasets", "normal", "--epsilons", "1", "--output", "cq.json"],
        "without": {"diffprivlib": ["--without", "diffprivlib"]},
        "json": "work/bench_central_quantiles/cq.json",
    },
    "bench_decile_peers.py": {
        "rows": 2,
        "argv": ["--runs", "2", "--sizes", "1000", "--datasets", "ages", "--without", "python-dp",
                 "--output", "decile_peers.json"],
        "without": {"diffprivlib": ["--without", "python-dp,diffprivlib"]},
        "json": "work/bench_decile_peers/decile_peers.json",
        "ignore": ["bounds"],
    },
    "bench_circular.py": {
        "rows": 9,
        "argv": ["--repeats", "1", "--datasets", "demo", "--epsilons", "2", "--factors", "1", "--out", "circular.json"],
        "json": "work/bench_circular/circular.json",
    },
    "bench_batch_path.py": {
        "rows": 1,
        "argv": ["--batches", "20", "--concurrency", "4", "--size", "100", "--repeats", "1"],
        "json": "benchmarks/results/batch_path.json",
    },
    "bench_commit_group.py": {
        "rows": 6,
        "argv": ["--groups", "20", "--prefill", "1000", "--repeats", "1"],
        "json": "benchmarks/results/commit_group.json",
    },
    "bench_core.py": {"rows": 13, "argv": ["--repeats", "1", "--smoke"]},
    "bench_coverage.py": {
        "rows": 4,
        "argv": ["--smoke", "--out", "coverage.json"],
        "json": "work/bench_coverage/coverage.json",
    },
    "bench_cp_heavy_tail.py": {
        "rows": 2,
        "argv": ["--runs", "2", "--out", "heavy.json"],
        "set": {"K": 200, "M": 40, "CELLS": [[1.0, 2000]]},
        "json": "work/bench_cp_heavy_tail/heavy.json",
    },
    "bench_cp_real_sparse.py": {
        "rows": 6,
        "argv": ["--runs", "1", "--out", "sparse.json"],
        "set": {"K": 1000, "M": 100, "USERS": [5000], "GRID": [1, 4, 16]},
        "json": "work/bench_cp_real_sparse/sparse.json",
    },
    "bench_cp_sparsity.py": {
        "rows": 5,
        "argv": ["--runs", "2", "--out", "sparsity.json"],
        "set": {"K": 200, "M": 40, "USERS": 2000},
        "json": "work/bench_cp_sparsity/sparsity.json",
    },
    "bench_deconvolution.py": {
        "rows": 11,
        "argv": ["--repeats", "1"],
        "set": {"KOSARAK_DOMAIN": 200, "KOSARAK_USERS": 5000},
    },
    "bench_deploy.py": {"rows": 6, "argv": ["--smoke"], "json": "benchmarks/results/deploy-smoke.json"},
    "bench_em_acceleration.py": {
        "rows": 6,
        "argv": ["--repeats", "1", "--users", "2000"],
        "set": {"EPSILONS": [1.0]},
        "json": "benchmarks/results/em_acceleration.json",
    },
    "bench_estimators.py": {
        "rows": 30,
        "argv": ["--dims", "16", "--repeats", "1"],
        "set": {"EPSILONS": [1.0], "N_USERS": 2000},
        "json": "benchmarks/results/estimators.json",
    },
    "bench_explain.py": {"rows": 9, "set": {"RUNS": 3, "N": 2000}},
    "bench_fast_loop.py": {  # one run of one small file in one fresh clone of this checkout (its committed HEAD)
        "rows": 1,
        "argv": ["--source", str(Path(__file__).resolve().parents[1]), "--into", tempfile.gettempdir(), "--runs", "1",
                 "--out", "fast_loop.json", "--", "tests/package/test_bytecode_cache.py"],
        "json": "work/bench_fast_loop/fast_loop.json",
        "ignore": frozenset({"run", "tests", "passed"}),
    },
    "bench_fang_oracles.py": {
        "rows": 12,
    },
    "bench_frequency_optimum.py": {
        "rows": 24,
        "argv": ["--domains", "16,1024", "--epsilons", "0.5", "--out", "optimum.json"],
        "json": "work/bench_frequency_optimum/optimum.json",
        "ignore": frozenset({"domain_size", "epsilon", "chosen"}),
    },
    "bench_flh.py": {
        "rows": 2,
        "argv": [
            "--users",
            "2000",
            "--olh-users",
            "2000",
            "--accuracy-users",
            "2000",
            "--families",
            "2",
            "--draws",
            "1",
            "--hash-counts",
            "16,64",
        ],
        "json": "benchmarks/results/flh.json",
    },
    "bench_flh_peers.py": {
        "rows": 1,
        "argv": ["--quick", "--d", "64", "--hash-count", "16", "--epsilons", "1"],
        "json": "benchmarks/results/flh_peers-quick.json",
    },
    "bench_frequency.py": {
        "rows": 2,
        "argv": ["--n", "2000", "--d", "16", "--protocols", "grr", "--implementations", "dpdist,multi-freq-ldpy"],
        "json": "benchmarks/results/frequency_n2000.json",
    },
    "bench_heavy_hitters.py": {
        "rows": 1,
        "argv": ["--quick", "--sizes", "5000"],
        "set": {"EPSILONS": [4.0], "KS": [10]},
    },
    "bench_ibu_peers.py": {
        "rows": 4,
        "argv": ["--dims", "16", "--users", "2000", "--epsilons", "1", "--protocols", "grr,oue"],
        "json": "benchmarks/results/ibu_peers.json",
    },
    "bench_ingest_files.py": {
        "rows": 1,
        "argv": ["--max-files", "100", "--repeats", "1"],
        "json": "benchmarks/results/ingest_files.json",
    },
    "bench_java_client.py": {
        "needs": ["node", "java", "javac"],
        "java_client": True,
        "rows": 2,
        "argv": ["--seconds", "0.1", "--runs", "1", "--warmup", "0.1", "--rounds", "1", "--out", "java.json"],
        "set": {
            "CASES": [
                {"protocol": "grr", "epsilon": 1.0, "domain_size": 1024},
                {"protocol": "sw", "epsilon": 1.0, "bins": 1024},
            ]
        },
        "json": "work/bench_java_client/java.json",
    },
    "bench_joint.py": {"rows": 6, "argv": ["--repetitions", "2", "--users", "2000", "--domains", "16"]},
    "bench_keyvalue.py": {
        "rows": 3,
        "argv": ["--n", "2000", "--runs", "1", "--out", "kv.json"],
        "set": {"EPSILONS": [1.0]},
        "json": "work/bench_keyvalue/kv.json",
    },
    "bench_kill_restarts.py": {
        "rows": 1,
        "argv": [
            "--submitters",
            "1",
            "--values",
            "500",
            "--batch-size",
            "100",
            "--kills",
            "1",
            "--up",
            "1",
            "--down",
            "0.2",
            "--timeout",
            "120",
        ],
        "expect": {"exit_codes": [0], "n": 500, "values_sent": 500},  # every value counted once across the kill
    },
    "bench_longitudinal_peers.py": {
        "rows": 12,
        "argv": ["--quick"],
        "json": "benchmarks/results/longitudinal_peers_quick.json",
    },
    "bench_many_keys.py": {  # two runs: the standard errors need two; the peer's rows are its saved ones (none here)
        "rows": 5,
        "argv": ["--tables", "zipf", "--runs", "2", "--no-peers", "--no-docs"],
        "set": {"GROUPS": [1, 10]},
        "json": "benchmarks/results/many_keys.json",
        "expect": {"runs": 2},
    },
    "bench_multi_peers.py": {"rows": 6, "set": {"EPSILONS": [1.0], "N": 2000, "RUNS": 1}},
    "bench_multi_ranges.py": {"rows": 9, "set": {"EPSILONS": [1.0], "QUERIES": 10, "REPEATS": 1}},
    "bench_multi_ranges_1d.py": {"rows": 15, "set": {"EPSILONS": [1.0], "QUERIES": 10, "REPEATS": 1}},
    "bench_multi_scale.py": {"rows": 5, "set": {"N": 4000, "BLOCK": 2000}},
    "bench_ocms.py": {
        "rows": 6,
        "argv": ["--runs", "2", "--epsilon", "2", "--out", "ocms.json"],
        "json": "work/bench_ocms/ocms.json",
    },
    "bench_ohttp_gateway.py": {
        "rows": 4,
        "argv": ["--requests", "20", "--batch-sizes", "1", "--rounds", "1", "--clients", "2", "--out", "ohttp.json"],
    },
    "bench_persons_peers.py": {
        "rows": 5,
        "argv": ["--sizes", "1000", "--peers", "", "--no-docs"],
        "json": "benchmarks/results/persons_peers.json",
    },
    "bench_first_answer.py": {
        "rows": 4,
        "argv": ["--runs", "1", "--modes", "cached", "--peers", ""],
        "json": "benchmarks/results/first_answer.json",
    },
    "bench_query.py": {
        "rows": 9,
        "argv": ["--sizes", "400", "--runs", "2"],
        "json": "benchmarks/results/query.json",
        "ignore": ("split",),
    },
    "bench_sum_peers.py": {
        "rows": 3,
        "argv": ["--runs", "2", "--peers", ""],
        "json": "benchmarks/results/sum_peers.json",
    },
    "bench_persons_scale.py": {
        "rows": 9,
        "argv": ["--rows", "20000", "--persons", "1000", "--block", "10000", "--engines", "one,dask"],
        "json": "benchmarks/results/persons_scale.json",
        "expect": {"equal_states": True},
    },
    "bench_poisoning_detection.py": {
        "rows": 4,
        "argv": ["--trials", "1", "--clean", "2", "--shares", "0.01", "--attacks", "masked", "--out", "poison.json"],
        "json": "work/bench_poisoning_detection/poison.json",
    },
    "bench_poisoning_recovery.py": {
        "rows": 6,
        "argv": ["--domains", "16", "--users", "2000", "--trials", "1", "--out", "rec.json"],
        "json": "work/bench_poisoning_recovery/rec.json",
    },
    "bench_pripl.py": {
        "rows": 3,
        "argv": [
            "--n",
            "2000",
            "--epsilons",
            "1.6",
            "--queries",
            "10",
            "--repeats",
            "1",
            "--data",
            "gauss",
            "--json",
            "pripl.json",
        ],
    },
    "bench_privacy_accounting.py": {
        "rows": 1,
        "set": {"PROTOCOLS": [["grr", 2]], "EPSILONS": [1.0], "SIZES": [100000]},
        "json": "benchmarks/results/amplification.json",
    },
    "bench_python_dp_quantiles.py": {
        "rows": 1,
        "argv": ["--runs", "1", "--sizes", "2000", "--epsilons", "1", "--data", "normal", "--without", "python-dp"],
        "json": "benchmarks/results/python_dp_quantiles.json",
    },
    "bench_quantile_intervals.py": {
        "rows": 7,
        "argv": ["--runs", "1", "--n", "2000", "--data", "normal", "--out", "qi.json"],
        "json": "work/bench_quantile_intervals/qi.json",
        "nan_ok": "aq and jointexp without a share release no interval: coverage and width NaN",
    },
    "bench_telemetry.py": {
        "rows": 3,
        "argv": ["--requests", "50", "--repeats", "1", "--out", "telemetry.json"],
        "json": "work/bench_telemetry/telemetry.json",
    },
    "bench_request_path.py": {
        "rows": 3,
        "argv": ["--requests", "50", "--repeats", "1"],
        "json": "benchmarks/results/request_path.json",
    },
    "bench_quantiles.py": {
        "rows": 2,
        "argv": ["--runs", "1", "--quick", "--out", "quantiles.json"],
        "set": {"EPSILONS": [1.0], "MS": [9]},
        "without": {"diffprivlib": ["--without", "diffprivlib"]},
        "json": "work/bench_quantiles/quantiles.json",
    },
    "bench_sequences.py": {
        "rows": 3,
        "argv": ["--only", "grr,pm,binning", "--out", "seq.json"],
        "set": {
            "CASES": {
                "grr": [{"domain_size": 8}, "frequency", 2, 100, 3],
                "pm": [{}, "mean", 2, 100, 3],
                "binning": [{"bins": 16, "oracle": "grr"}, "cdf", 2, 100, 3],
            }
        },
        "json": "work/bench_sequences/seq.json",
    },
    "bench_shuffled_rounds.py": {
        "rows": 2,
        "set": {
            "SIZES": [1000],
            "EPSILONS": [1.0],
            "ROUNDS": [1, 10],
            "TIMED": [["grr", {"domain_size": 3}, "numerical"]],
            "TIMED_ROUNDS": [30],
            "TIMED_REPEATS": 1,
        },
        "json": "benchmarks/results/shuffled_rounds.json",
    },
    "bench_slice_quantiles.py": {
        "rows": 5,
        "argv": ["--quick", "--dataset", "normal", "--sample", "2000"],
        "set": {"MS": [9], "EPSILONS": [1.0]},
        "json": "benchmarks/results/slice_quantiles.json",
    },
    "bench_spark.py": {
        "needs": ["java"],
        "rows": 4,
        "argv": ["--quick", "--users", "100000"],  # checked against one process as --quick is, on 10^5 users
        "json": "benchmarks/results/spark-quick.json",
        "expect_rows": {"equals_one_process": True},
    },
    "bench_square_wave.py": {"rows": 16, "argv": ["--repeats", "1", "--quick"]},
    "bench_ss_sampler.py": {
        "rows": 2,
        "argv": ["--users", "2000", "--repeats", "1"],
        "set": {"EPSILONS": [1.0], "DOMAINS": [64]},
    },
    "bench_tree_ks.py": {
        "rows": 1,
        "argv": ["--runs", "2", "--sizes", "1000", "--datasets", "normal", "--epsilons", "1", "--output", "tree.json"],
        "json": "work/bench_tree_ks/tree.json",
    },
    "bench_trust_ladder.py": {"rows": 9},
    "bench_wavelet.py": {"rows": 6, "argv": ["2000"], "argv_to_main": True},
}


def case_arguments(script: str) -> dict:
    """What the runner gets for ``script``: its ``argv`` (with the options that leave out a peer not installed here, and
    the Java client as the Java tests compiled it, when they can: tests/java_support.py)."""
    case = CASES[script]
    argv = list(case.get("argv", []))
    for peer, options in case.get("without", {}).items():
        if importlib.util.find_spec(peer) is None:
            argv += options
    if case.get("java_client") and shutil.which("javac") and java_support.JUNIT.is_file():
        argv += ["--client-classes", str(java_support.build() / "classes")]
    return {"argv": argv, "set": case.get("set", {}), "argv_to_main": case.get("argv_to_main", False)}


def scratch_copy(repo: Path, folder: Path) -> Path:
    """A copy of ``repo``'s benchmarks/ (an empty results/) and docs/ under ``folder``, its tests/, clients/ and src/
    linked; the copy of benchmarks/."""
    shutil.copytree(repo / "benchmarks", folder / "benchmarks", ignore=shutil.ignore_patterns("results", "__pycache__"))
    (folder / "benchmarks" / "results").mkdir()
    shutil.copytree(repo / "docs", folder / "docs")
    for name in ("tests", "clients", "src"):
        (folder / name).symlink_to(repo / name)
    return folder / "benchmarks"


_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d[\d,]*(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+|nan|inf)(?![\w.])", re.IGNORECASE)


def _numbers(value, ignore: frozenset = frozenset()) -> list[float]:
    """Every number in a JSON value (booleans are not numbers), but under the keys ``ignore``."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    children = [child for key, child in value.items() if key not in ignore] if isinstance(value, dict) else value
    return [number for child in children for number in _numbers(child, ignore)]


def _text_rows(stdout: str) -> list[list[float]]:
    """The result rows of a script's output: its JSON lines, markdown table rows and lines of two numbers or more."""
    rows = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(_numbers(json.loads(line)))
                continue
            except json.JSONDecodeError:
                pass
        if set(line) <= set("|-: "):
            continue  # a table's separator (or nothing)
        found = [float(token.replace(",", "")) for token in _NUMBER.findall(line)]
        if (line.startswith("|") and found) or len(found) >= 2:
            rows.append(found)
    return rows


def result_record(root: Path, script: str, stdout: str):
    """The JSON result of ``script``: the file it wrote, else the last JSON line of its output (None: neither)."""
    name = CASES[script].get("json")
    if name is not None:
        return json.loads((root.parent / name).read_text())
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else None


def result_rows(root: Path, script: str, stdout: str) -> list[list[float]]:
    """The numbers of each result row ``script`` made: of the JSON file it wrote (its list of rows), else of its output."""
    name = CASES[script].get("json")
    if name is None:
        return _text_rows(stdout)
    return [_numbers(row, frozenset(CASES[script].get("ignore", ()))) for row in row_list(result_record(root, script, ""))]


def row_list(record) -> list:
    """The rows of a JSON result: the list itself, or its ``rows`` (``results``, ``records``, ``runs``), else its values."""
    if isinstance(record, dict):
        lists = [record[key] for key in ("rows", "results", "records", "runs") if isinstance(record.get(key), list)]
        return lists[0] if lists else list(record.values())
    return record
