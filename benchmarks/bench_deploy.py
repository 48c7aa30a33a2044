"""Deployment path: ingest throughput, file sizes, Dask scaling and peak memory.

Three measurements (results in ``docs/reference/benchmarks/deployment.md``):

1. **Ingest throughput, one core** for GRR (d=64), OUE (d=1024), OLH (d=1024)
   and SW (1024 bins): reports per second for ``Aggregator.add`` on reports in
   memory, and for the full ingest path ``read file -> validate -> add`` from
   Parquet and from the dpdist binary format (what ``dpdist aggregate`` does),
   plus the bytes per report of each file.  Median of 3 runs.
2. **Dask scaling**: ``distributed.simulate`` of 10^8 users (values generated
   lazily per block of 10^7) on a ``LocalCluster`` of 1 then 2 worker
   processes (one thread each), for GRR and OUE (d=1024); wall time and the
   peak RSS of each worker.
3. **Peak memory of ``dpdist aggregate``** (a subprocess, ``ru_maxrss``) on
   report files of 10^6 and 4x10^6 OUE (d=1024) reports: it must not grow with
   the file (batches of 2^18 rows).

Usage::

    uv run --extra dask --extra deploy python benchmarks/bench_deploy.py [--quick] [--skip-dask]

Writes the tables to stdout and the raw records to ``benchmarks/results/deploy.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dpdist import io, local

PROTOCOLS = {
    "grr": {"epsilon": 1.0, "domain_size": 64},
    "oue": {"epsilon": 1.0, "domain_size": 1024},
    "olh": {"epsilon": 1.0, "domain_size": 1024},
    "sw": {"epsilon": 1.0, "bins": 1024},
}


def _values(protocol, n, rng):
    if protocol.tags.kind == "frequency":
        return rng.zipf(1.1, n * 2)[: n * 2].clip(1, protocol.domain_size)[:n] - 1
    return rng.beta(2, 5, n)


def _median_rate(function, n, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return n / float(np.median(times))


def ingest(n: int, workdir: Path) -> list[dict]:
    rows = []
    for name, params in PROTOCOLS.items():
        protocol = local.make(name, **params)
        count = n if name != "oue" else n // 4
        reports = protocol.privatize(_values(protocol, count, np.random.default_rng(0)), rng=0)
        record = {"protocol": name, **params, "n": count}
        record["add_per_s"] = _median_rate(lambda: protocol.aggregator().add(reports), count)
        for suffix in ("parquet", "bin"):
            path = workdir / f"{name}.{suffix}"
            io.write_reports(path, protocol, reports)

            def read_and_add():
                aggregator = protocol.aggregator()
                for batch in io.iter_report_batches(path, protocol):
                    batch.add_to(aggregator)
                assert aggregator.n == count

            record[f"{suffix}_ingest_per_s"] = _median_rate(read_and_add, count)
            record[f"{suffix}_bytes_per_report"] = path.stat().st_size / count
        rows.append(record)
        print(
            f"{name:4} n={count:>8}  add {record['add_per_s'] / 1e6:7.2f} M/s   parquet {record['parquet_ingest_per_s'] / 1e6:6.2f} M/s "
            f"({record['parquet_bytes_per_report']:6.2f} B/report)   binary {record['bin_ingest_per_s'] / 1e6:6.2f} M/s "
            f"({record['bin_bytes_per_report']:6.2f} B/report)",
            flush=True,
        )
    return rows


def _block_values(block, block_info=None, domain_size=1024):
    index = block_info[None]["chunk-location"][0]
    generator = np.random.default_rng([2026, index])
    return (generator.zipf(1.1, block.shape[0]).clip(1, domain_size) - 1).astype(np.int64)


def _worker_peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def dask_scaling(n_users: int, chunk: int) -> list[dict]:
    import dask.array as da
    import distributed

    from dpdist import distributed as dpdist_distributed

    rows = []
    for workers in (1, 2):
        with distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, memory_limit="2GiB", dashboard_address=None,
            silence_logs=50,
        ) as cluster, distributed.Client(cluster) as client:
            client.run(lambda: __import__("dpdist.local"))  # imports are not part of the timing
            for name in ("grr", "oue"):
                protocol = local.make(name, epsilon=1.0, domain_size=1024)
                values = da.zeros(n_users, chunks=chunk, dtype=np.int64).map_blocks(_block_values, dtype=np.int64)
                cpu_before = client.run(time.process_time)
                load = os.getloadavg()[0]
                start = time.perf_counter()
                result = dpdist_distributed.simulate(protocol, values, seed=7)
                seconds = time.perf_counter() - start
                assert result.n == n_users
                cpu = {w: t - cpu_before[w] for w, t in client.run(time.process_time).items()}
                peaks = client.run(_worker_peak_rss_mib)
                rows.append({"protocol": name, "workers": workers, "n_users": n_users, "chunk": chunk,
                             "seconds": seconds, "users_per_s": n_users / seconds,
                             "worker_cpu_seconds": sorted(cpu.values()), "load_average_before": load,
                             "worker_peak_rss_mib": sorted(peaks.values())})
                print(f"dask {name:4} workers={workers} n={n_users:.0e}: {seconds:6.1f} s wall "
                      f"({n_users / seconds / 1e6:6.1f} M users/s), worker CPU s {sorted(round(v, 1) for v in cpu.values())}, "
                      f"load avg {load:.1f}, worker peak RSS {sorted(round(v) for v in peaks.values())} MiB",
                      flush=True)
    return rows


def aggregate_memory(sizes, workdir: Path) -> list[dict]:
    rows = []
    protocol = local.make("oue", epsilon=1.0, domain_size=1024)
    config = json.dumps(protocol.config())
    for n in sizes:
        path = workdir / f"oue-{n}.parquet"
        with io.ReportWriter(path, protocol) as writer:
            for start in range(0, n, 1 << 18):
                size = min(1 << 18, n - start)
                writer.write(protocol.privatize(np.random.default_rng(start).integers(0, 1024, size), rng=start))
        state = workdir / f"state-{n}.bin"
        code = (
            "import resource, sys; from dpdist.cli import main; code = main(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); sys.exit(code)"
        )
        start = time.perf_counter()
        completed = subprocess.run(
            [sys.executable, "-c", code, "aggregate", "--config", config, str(path), "--state", str(state), "--no-progress"],
            capture_output=True, text=True, check=True,
        )
        seconds = time.perf_counter() - start
        peak = int(completed.stdout.strip().splitlines()[-1]) / 1024
        rows.append({"protocol": "oue", "domain_size": 1024, "n": n, "file_mib": path.stat().st_size / 2**20,
                     "peak_rss_mib": peak, "seconds": seconds})
        print(f"dpdist aggregate oue d=1024 n={n:>8}: file {path.stat().st_size / 2**20:6.1f} MiB, "
              f"peak RSS {peak:6.1f} MiB, {seconds:5.1f} s (with start-up)", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (10^5 ingest, 10^7 Dask users)")
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (10^3 ingest, 10^4 Dask users): a check that it runs")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    results = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "quick": args.quick}
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        results["ingest"] = ingest(1000 if args.smoke else 100_000 if args.quick else 1_000_000, workdir)
        results["aggregate_memory"] = aggregate_memory([2000] if args.smoke else [250_000, 1_000_000] if args.quick
                                                       else [1_000_000, 4_000_000], workdir)
    if not args.skip_dask:
        n_users = 10**4 if args.smoke else 10**7 if args.quick else 10**8
        results["dask"] = dask_scaling(n_users, n_users // 10)
    out = Path(__file__).parent / "results" / ("deploy-smoke.json" if args.smoke else "deploy-quick.json" if args.quick
                                               else "deploy.json")
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print(f"raw records: {out}")


if __name__ == "__main__":
    main()
