"""Spark beside Dask: ``distributed.spark.simulate`` of 10^8 users on ``local[1]`` and ``local[2]``.

The population of ``bench_deploy.py``'s Dask measurement (values drawn per block of 10^7 from a
Zipf(1.1) law over d = 1024 items, on the executors), for GRR and OUE (epsilon 1): wall time, the
CPU seconds of Spark's Python workers and the JVM, and the load average before each run.  Each
core count runs in a fresh process (a JVM's master is fixed at start); the JVM start and the first
job's worker start are outside the timing (a warm-up job runs first).  With ``--dask`` the same
population also runs on Dask (``bench_deploy.dask_scaling``) in the same sitting, so that both see
the same load.  The results equal one process's exactly (checked here on every run against
``distributed.simulate_blocks`` for the quick size; the tests check it on small populations).

Usage::

    uv run python benchmarks/bench_spark.py [--quick] [--dask] [--users N]

Writes the table to stdout and the raw records to ``benchmarks/results/spark.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DOMAIN = 1024


def _block(index: int, size: int) -> np.ndarray:
    generator = np.random.default_rng([2026, index])  # the same blocks as bench_deploy.py's Dask population
    return (generator.zipf(1.1, size).clip(1, DOMAIN) - 1).astype(np.int64)


def _tree_cpu(pid: int) -> dict[int, tuple[str, float]]:
    """``{pid: (kind, CPU seconds so far)}`` of the processes below ``pid``: the JVM (``"jvm"``) and Spark's Python
    daemon and workers (``"python"``)."""
    import psutil

    found = {}
    for process in psutil.Process(pid).children(recursive=True):
        try:
            times = process.cpu_times()
            kind = "jvm" if "java" in process.name() else "python"
            found[process.pid] = (kind, times.user + times.system)
        except psutil.Error:
            pass
    return found


def _cpu_used(before: dict, after: dict) -> tuple[float, float, list[float]]:
    """JVM CPU seconds, Python workers' total, and each Python process's share above 0.5 s (sorted)."""
    used = {pid: (kind, seconds - before.get(pid, (kind, 0.0))[1]) for pid, (kind, seconds) in after.items()}
    jvm = sum(seconds for kind, seconds in used.values() if kind == "jvm")
    python = [seconds for kind, seconds in used.values() if kind == "python"]
    return jvm, sum(python), sorted(round(seconds, 1) for seconds in python if seconds > 0.5)


def run_on_spark(cores: int, n_users: int, chunk: int, check: bool) -> list[dict]:
    """One fresh SparkSession on ``local[cores]``; GRR then OUE."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from dpdist import distributed, local
    from dpdist.distributed import spark as on_spark

    session = (SparkSession.builder.master(f"local[{cores}]").appName("bench-spark")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    context = session.sparkContext
    n_blocks = n_users // chunk
    rows = []
    try:
        warm = local.make("grr", epsilon=1.0, domain_size=DOMAIN)  # workers started and dpdist imported
        on_spark.simulate(warm, context.range(cores, numSlices=cores).map(lambda b: (b, _block(b, 1000))), seed=1)
        for name in ("grr", "oue"):
            protocol = local.make(name, epsilon=1.0, domain_size=DOMAIN)
            blocks = context.range(n_blocks, numSlices=n_blocks).map(lambda b: (b, _block(b, chunk)))
            load = os.getloadavg()[0]
            cpu_before = _tree_cpu(os.getpid())
            start = time.perf_counter()
            result = on_spark.simulate(protocol, blocks, seed=7)
            seconds = time.perf_counter() - start
            jvm, python, workers = _cpu_used(cpu_before, _tree_cpu(os.getpid()))
            assert result.n == n_users
            equal = None
            if check:
                equal = result == distributed.simulate_blocks(protocol, (_block(b, chunk) for b in range(n_blocks)), 7)
            rows.append({"engine": "spark", "protocol": name, "cores": cores, "n_users": n_users, "chunk": chunk,
                         "seconds": seconds, "users_per_s": n_users / seconds, "cpu_seconds_jvm": jvm,
                         "cpu_seconds_python": python, "cpu_seconds_per_python_process": workers,
                         "load_average_before": load, "equals_one_process": equal})
    finally:
        session.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^7 users, checked against one process")
    parser.add_argument("--dask", action="store_true", help="also run bench_deploy.py's Dask measurement")
    parser.add_argument("--users", type=int, help="this many users instead (a multiple of 10; a smoke run's size)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    n_users = args.users or (10**7 if args.quick else 10**8)
    chunk = n_users // 10
    if args.child:
        print(json.dumps(run_on_spark(args.child, n_users, chunk, check=args.quick)))
        return
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    results: dict = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "quick": args.quick, "runs": []}
    for cores in (1, 2):
        command = [sys.executable, __file__, "--child", str(cores), "--users", str(n_users),
                   *(["--quick"] if args.quick else [])]
        out = subprocess.run(command, capture_output=True, text=True, check=True, timeout=3600)
        rows = json.loads(out.stdout.strip().splitlines()[-1])
        results["runs"] += rows
        for row in rows:
            print(f"spark {row['protocol']:4} local[{cores}] n={n_users:.0e}: {row['seconds']:6.1f} s wall "
                  f"({row['users_per_s'] / 1e6:5.1f} M users/s), CPU s: JVM {row['cpu_seconds_jvm']:4.1f}, Python "
                  f"{row['cpu_seconds_python']:5.1f} {row['cpu_seconds_per_python_process']}, "
                  f"load avg {row['load_average_before']:.1f}"
                  + ("" if row["equals_one_process"] is None else f", equals one process: {row['equals_one_process']}"),
                  flush=True)
    if args.dask:
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_deploy import dask_scaling

        results["dask"] = dask_scaling(n_users, chunk)
    out_path = Path(__file__).parent / "results" / ("spark-quick.json" if args.quick else "spark.json")
    out_path.parent.mkdir(exist_ok=True)
    out_path.write_text(json.dumps(results, indent=2))
    print(f"raw records: {out_path}")


if __name__ == "__main__":
    main()
