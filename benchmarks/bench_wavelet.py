"""Speed and accuracy of the wavelet protocol (paper 000): privatize + aggregate + estimate.

Run: ``uv run python benchmarks/bench_wavelet.py [n_users]`` (default 10**6).  Prints, per
epsilon, the CPU seconds (time.process_time, robust to a shared machine) of each phase on one core, the report size, and the W1
distance to the true Beta(5, 2) sample next to the Theorem 1 bound.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from dpdist import local, metrics


def run(n: int, epsilon: float, seed: int = 0) -> dict:
    values = np.random.default_rng(seed).beta(5, 2, size=n)
    protocol = local.make("wavelet", epsilon=epsilon, n_users=n)
    start = time.process_time()
    reports = protocol.privatize(values, rng=seed + 1)
    privatized = time.process_time()
    aggregator = protocol.aggregator().add(reports)
    aggregated = time.process_time()
    estimate = protocol.estimate(aggregator)
    estimated = time.process_time()
    return {
        "epsilon": epsilon,
        "J": protocol.levels,
        "m_J": int(protocol.subset_sizes[-1]),
        "privatize_s": privatized - start,
        "aggregate_s": aggregated - privatized,
        "estimate_s": estimated - aggregated,
        "total_s": estimated - start,
        "report_MB": reports.nbytes / 2**20,
        "W1": metrics.wasserstein(estimate, values),
        "bound": protocol.wasserstein_bound(n),
    }


def main(argv: list[str]) -> None:
    n = int(argv[1]) if len(argv) > 1 else 10**6
    print(f"wavelet, Beta(5,2), n = {n}")
    header = f"{'eps':>5} {'J':>3} {'m_J':>5} {'privatize':>10} {'aggregate':>10} {'estimate':>9} {'total s':>8} {'MB':>7} {'W1':>9} {'bound':>8}"
    print(header)
    run(n, 1.0)  # warm-up: first-touch page faults of the report buffer, caches of m* and V_j
    for epsilon in (0.5, 1.0, 2.0, 4.0, 8.0):
        r = run(n, epsilon)
        print(
            f"{r['epsilon']:>5} {r['J']:>3} {r['m_J']:>5} {r['privatize_s']:>10.3f} {r['aggregate_s']:>10.3f} "
            f"{r['estimate_s']:>9.3f} {r['total_s']:>8.3f} {r['report_MB']:>7.1f} {r['W1']:>9.5f} {r['bound']:>8.4f}"
        )


if __name__ == "__main__":
    main(sys.argv)
