"""SS's subset sampler: ``privatize`` time across epsilon and domain size, to pair two versions.

The sampler (``dpdist.local.frequency.ss``) first sets each of a row's ``d - 1`` cells by a
Bernoulli draw at a threshold, then adds or removes uniform cells until the row holds its
subset size ``k``.  Its cost depends on ``k / d``, so it is timed over the epsilons that
move ``k`` from ``d / 2.6`` (eps = 0.5) to ``d / 150`` (eps = 5), at the paper-004 domain
(d = 10,000) and at the per-user benchmark's (d = 1024).  Each cell is the median of
``--repeats`` runs in this process, after a warm-up.

Pair two versions on one machine state by running this file under each, e.g.::

    uv run python benchmarks/bench_ss_sampler.py                        # this checkout
    PYTHONPATH=/path/to/other/src uv run python benchmarks/bench_ss_sampler.py   # another
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import dpdist
from dpdist import local

EPSILONS = (0.5, 1.0, 2.0, 4.0, 5.0)
DOMAINS = (1024, 10_000)


def median_seconds(protocol, values: np.ndarray, repeats: int) -> float:
    """Median wall time of ``protocol.privatize(values)`` over ``repeats`` runs (after one warm-up)."""
    protocol.privatize(values[:1000], rng=0)
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        protocol.privatize(values, rng=seed)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"dpdist from {dpdist.__file__}; {args.users:,} users, median of {args.repeats}")
    print("| d | eps | k | privatize (s) | users per s |")
    print("|---|---|---|---|---|")
    for d in DOMAINS:
        values = np.random.default_rng(0).integers(0, d, args.users)
        for epsilon in EPSILONS:
            protocol = local.make("ss", epsilon=epsilon, domain_size=d)
            seconds = median_seconds(protocol, values, args.repeats)
            print(f"| {d:,} | {epsilon:g} | {protocol.subset_size} | {seconds:.3f} | {args.users / seconds:,.0f} |")


if __name__ == "__main__":
    main()
