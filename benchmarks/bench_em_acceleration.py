"""EM/EMS and IBU iterations and time, plain against SQUAREM-accelerated (same map, same stopping rule).

SW-EMS and SW-EM at 1024 input bins x 1024 output buckets (``output_bins=1024``), n = 10^6
users from Beta(5, 2) and uniform data, eps in {0.5, 1, 2, 4}, ``simulate`` with seed 1;
the paper's tolerances (1e-3 for EMS, 1e-3 e^eps for EM).  IBU on GRR and HR at d = 1024
with Zipf(1.1) data, n = 10^6, tolerance 1e-3.  Each estimate is timed once (median of
``--repeats``) after one untimed warm-up.

Usage::

    uv run python benchmarks/bench_em_acceleration.py
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # one BLAS thread, as bench_square_wave.py (the machine is shared)

import numpy as np  # noqa: E402

from dpdist import local  # noqa: E402

EPSILONS = [0.5, 1.0, 2.0, 4.0]


def timed(protocol, aggregator, repeats, **options):
    protocol.estimate(aggregator, **options)
    times, estimate = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        estimate = protocol.estimate(aggregator, **options)
        times.append(time.perf_counter() - started)
    return float(np.median(times)), estimate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--users", type=int, default=1_000_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    data = {"beta(5,2)": rng.beta(5, 2, size=args.users), "uniform": rng.random(args.users)}
    print("| job | data | eps | plain iterations | plain s | SQUAREM iterations | SQUAREM s | max abs diff |")
    print("|---|---|---|---|---|---|---|---|")
    for method in ("ems", "em"):
        for name, values in data.items():
            for epsilon in EPSILONS:
                protocol = local.make("sw", epsilon=epsilon, bounds=(0.0, 1.0), bins=1024, output_bins=1024)
                aggregator = protocol.simulate(values, rng=1)
                plain_s, plain = timed(protocol, aggregator, args.repeats, method=method, accelerate=False)
                fast_s, fast = timed(protocol, aggregator, args.repeats, method=method, accelerate=True)
                row = {"job": f"SW-{method.upper()} 1024x1024", "data": name, "epsilon": epsilon,
                       "plain_iterations": plain.details["iterations"], "plain_seconds": plain_s,
                       "fast_iterations": fast.details["iterations"], "fast_seconds": fast_s,
                       "max_abs_diff": float(np.abs(plain.probabilities - fast.probabilities).max())}
                rows.append(row)
                print(f"| {row['job']} | {name} | {epsilon} | {row['plain_iterations']} | {plain_s:.3f} | "
                      f"{row['fast_iterations']} | {fast_s:.3f} | {row['max_abs_diff']:.1e} |", flush=True)
    weights = 1.0 / np.arange(1, 1025) ** 1.1
    items = rng.choice(1024, size=args.users, p=weights / weights.sum())
    for name in ("grr", "hr"):
        for epsilon in EPSILONS:
            protocol = local.make(name, epsilon=epsilon, domain_size=1024)
            aggregator = protocol.simulate(items, rng=1)
            plain_s, plain = timed(protocol, aggregator, args.repeats, estimator="ibu", accelerate=False)
            fast_s, fast = timed(protocol, aggregator, args.repeats, estimator="ibu", accelerate=True)
            row = {"job": f"IBU {name} d=1024", "data": "zipf(1.1)", "epsilon": epsilon,
                   "plain_iterations": plain.details["iterations"], "plain_seconds": plain_s,
                   "fast_iterations": fast.details["iterations"], "fast_seconds": fast_s,
                   "max_abs_diff": float(np.abs(plain.frequencies - fast.frequencies).max())}
            rows.append(row)
            print(f"| {row['job']} | zipf(1.1) | {epsilon} | {row['plain_iterations']} | {plain_s:.3f} | "
                  f"{row['fast_iterations']} | {fast_s:.3f} | {row['max_abs_diff']:.1e} |", flush=True)
    (Path(__file__).parent / "results" / "em_acceleration.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
