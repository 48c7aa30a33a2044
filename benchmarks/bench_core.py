"""Speed and memory of the foundation: GRR and OUE client and server paths, and simulate.

Run: ``uv run python benchmarks/bench_core.py``.  Each figure is the median of
``--repeats`` runs (wall clock, ``time.perf_counter``); peak memory is the peak
resident set size of a fresh subprocess doing only that job (its own
``ru_maxrss``), minus the same figure for a subprocess that only imports dpdist
and builds the input.  Linux carries ``ru_maxrss`` across ``fork``/``exec``, so
the subprocesses are started before this process allocates its large inputs.
Results are recorded by hand in ``docs/reference/benchmarks/frequency.md``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np

from dpdist import local


def median_seconds(job, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


MEMORY_JOBS = {
    "baseline": "pass",
    "oue-1e6-at-once": "p.estimate(p.aggregator().add(p.privatize(v, rng=1)))",
    "oue-1e6-batches": (
        "a = p.aggregator()\n"
        "for s in range(0, v.size, 100_000):\n"
        "    a.add(p.privatize(v[s:s + 100_000], rng=s))\n"
        "p.estimate(a)"
    ),
}


def peak_memory_mib(job: str, n: int = 1_000_000) -> float:
    code = (
        "import numpy as np, resource\n"
        "from dpdist import local\n"
        "p = local.make('oue', epsilon=1.0, domain_size=1024)\n"
        f"v = np.random.default_rng(0).integers(0, 1024, {n})\n"
        f"{job}\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return int(out.strip()) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="every n divided by 1000 (a check that it runs, not a figure)")
    args = parser.parse_args()
    scale = 1000 if args.smoke else 1
    if args.smoke:
        print("(--smoke: every n below is divided by 1000)\n")
    baseline = peak_memory_mib(MEMORY_JOBS["baseline"], 10**6 // scale)
    print("| memory job (OUE, d = 1024, n = 10^6) | peak RSS above baseline (MiB) |")
    print("|---|---|")
    for name in ("oue-1e6-at-once", "oue-1e6-batches"):
        print(f"| {name} | {peak_memory_mib(MEMORY_JOBS[name], 10**6 // scale) - baseline:.0f} |")
    print(f"\n(baseline: interpreter + numpy + dpdist + 10^6 input items = {baseline:.0f} MiB)\n")
    rng = np.random.default_rng(0)
    oue = local.make("oue", epsilon=1.0, domain_size=1024)
    grr = local.make("grr", epsilon=1.0, domain_size=1024)
    items_1e5 = rng.integers(0, 1024, 100_000 // scale)
    items_1e6 = rng.integers(0, 1024, 1_000_000 // scale)
    items_1e7 = rng.integers(0, 1024, 10_000_000 // scale)

    rows = []

    def record(label, seconds, users):
        users //= scale
        rows.append((label, seconds, users / seconds))
        print(f"| {label} | {seconds:.4f} | {users / seconds:,.0f} |", flush=True)

    print("| job (d = 1024, eps = 1) | median seconds | users per second |")
    print("|---|---|---|")
    record("OUE simulate, n = 10^7", median_seconds(lambda: oue.simulate(items_1e7, rng=1), args.repeats), 1e7)
    record(
        "OUE privatize + aggregate + estimate, n = 10^5",
        median_seconds(lambda: oue.estimate(oue.aggregator().add(oue.privatize(items_1e5, rng=1))), args.repeats),
        1e5,
    )
    record(
        "OUE privatize + aggregate + estimate, n = 10^6",
        median_seconds(lambda: oue.estimate(oue.aggregator().add(oue.privatize(items_1e6, rng=1))), 3),
        1e6,
    )
    record(
        "OUE privatize, secure (AES-CTR), n = 10^6",
        median_seconds(lambda: oue.privatize(items_1e6, secure=True), 3),
        1e6,
    )
    record("GRR simulate, n = 10^7", median_seconds(lambda: grr.simulate(items_1e7, rng=1), args.repeats), 1e7)
    record(
        "GRR privatize + aggregate + estimate, n = 10^5",
        median_seconds(lambda: grr.estimate(grr.aggregator().add(grr.privatize(items_1e5, rng=1))), args.repeats),
        1e5,
    )
    record(
        "GRR privatize, seeded PCG64, n = 10^7",
        median_seconds(lambda: grr.privatize(items_1e7, rng=1), args.repeats),
        1e7,
    )
    record(
        "GRR privatize, secure (AES-CTR), n = 10^7",
        median_seconds(lambda: grr.privatize(items_1e7, secure=True), args.repeats),
        1e7,
    )


if __name__ == "__main__":
    main()
