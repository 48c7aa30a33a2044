"""10^7 users x 5 attributes: aggregate and estimate, in blocks of 10^6 reports.

Five categorical attributes of 8, 16, 16, 32 and 64 items (Zipf-like), epsilon = 2. Reports are
privatized block by block (not timed as aggregation), then every block is added to one
aggregator (``Aggregator.add``: validation and the statistic) and the estimate computed once.
Memory stays at one block. Results: docs/reference/benchmarks/multi-attribute.md.

    uv run python benchmarks/bench_multi_scale.py
"""

from __future__ import annotations

import time

import numpy as np

from dpdist import local

N, BLOCK = 10**7, 10**6
SIZES = [8, 16, 16, 32, 64]


def block_of_records(rng, n):
    columns = []
    for d in SIZES:
        weights = 1.0 / np.arange(1, d + 1) ** 1.1
        columns.append(rng.choice(d, n, p=weights / weights.sum()))
    return np.column_stack(columns)


def main():
    rng = np.random.default_rng(7)
    attributes = [{"name": f"a{j}", "domain_size": d} for j, d in enumerate(SIZES)]
    print("| protocol | report bytes | privatize s | aggregate s | estimate s | aggregate + estimate, s per 10^7 |")
    print("|---|---|---|---|---|---|")
    for name in ("smp", "spl", "rsfd", "calm"):
        protocol = local.make(name, epsilon=2.0, attributes=attributes)
        aggregator = protocol.aggregator()
        privatize = aggregate = 0.0
        for _ in range(N // BLOCK):
            records = block_of_records(rng, BLOCK)
            start = time.perf_counter()
            reports = protocol.privatize(records, rng=rng)
            privatize += time.perf_counter() - start
            start = time.perf_counter()
            aggregator.add(reports)
            aggregate += time.perf_counter() - start
        start = time.perf_counter()
        protocol.estimate(aggregator)
        estimate = time.perf_counter() - start
        assert aggregator.n == N
        print(f"| {name} | {protocol.report_format.row_bytes} | {privatize:.1f} | {aggregate:.1f} | {estimate:.2f} | "
              f"{aggregate + estimate:.1f} |", flush=True)


if __name__ == "__main__":
    main()
