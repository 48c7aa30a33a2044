"""1-D range queries: HDG's 1-D answers against dpdist's hierarchical histograms and Haar-HRR.

HDG collects two numerical attributes (u, v) at once and answers a range over one of them from
its 1-D grid; ``hh`` (hierarchical histogram, Kulkarni et al.) and ``haar-hrr`` (the Haar wavelet
with HRR) answer 1-D ranges of *one* attribute.  The same data as
``bench_multi_ranges.py`` (``normal``: correlated bivariate normal on [0, 1]^2, n = 10^5, 10^6;
``diamonds``: carat x price, n = 10^5), every method at ``bins = 64`` fine bins (HDG's resolution):

* ``hdg``       -- one collection of (u, v), the paper's guideline granularities at n, Norm-Sub;
  each user is in one of three grids (u, v, or u x v);
* ``hh`` / ``haar-hrr`` (all n) -- every user reports u alone: the best a 1-D method does for u,
  which collects nothing about v;
* ``hh`` / ``haar-hrr`` (n/2) -- half the users report u, the other half v: what the 1-D methods
  spend to answer both attributes, as HDG does (the error shown is u's).

Queries: 200 random intervals of u per width (0.1, 0.316, 0.707 of its range: the sides of the
2-D benchmark's rectangles).  The error of one collection is the mean |answer - truth| over the
queries; the table shows the mean over 3 collections (``simulate``, exactly distributed as
privatize + aggregate).  Results: docs/reference/benchmarks/multi-attribute.md.

    uv run --extra bench python benchmarks/bench_multi_ranges_1d.py
"""

from __future__ import annotations

import numpy as np

from bench_multi_ranges import diamonds, normal
from dpdist import local

EPSILONS = (0.5, 1.0, 2.0, 4.0)
WIDTHS = {"small": 0.1, "medium": float(np.sqrt(0.1)), "large": float(np.sqrt(0.5))}
QUERIES, REPEATS, BINS = 200, 3, 64


def intervals(bounds, rng):
    lo, hi = bounds
    out = {}
    for size, width in WIDTHS.items():
        starts = rng.uniform(0.0, 1.0 - width, QUERIES)
        out[size] = [(lo + (hi - lo) * s, lo + (hi - lo) * (s + width)) for s in starts]
    return out


def hdg_errors(data, bounds, epsilon, asked, truth, rng):
    attributes = [{"name": name, "bounds": list(b)} for name, b in zip("uv", bounds)]
    proto = local.make("hdg", epsilon=epsilon, attributes=attributes, expected_reports=data.shape[0], resolution=BINS)
    errors = {size: [] for size in WIDTHS}
    for _ in range(REPEATS):
        estimate = proto.estimate(proto.simulate(data, rng=rng), postprocess="norm-sub")
        for size, ranges in asked.items():
            answers = np.array([estimate.range({"u": q}).estimate for q in ranges])
            errors[size].append(float(np.mean(np.abs(answers - truth[size]))))
    return errors, f"{proto.geometry.g1} x {proto.geometry.g2}"


def one_d_errors(method, values, bounds, epsilon, asked, truth, rng):
    proto = local.make(method, epsilon=epsilon, bounds=list(bounds), bins=BINS)
    errors = {size: [] for size in WIDTHS}
    for _ in range(REPEATS):
        estimate = proto.estimate(proto.simulate(values, rng=rng))
        for size, ranges in asked.items():
            answers = np.array([float(estimate.range_query(low, high)) for low, high in ranges])
            errors[size].append(float(np.mean(np.abs(answers - truth[size]))))
    return errors


def main():
    rng = np.random.default_rng(2027)
    print("| data | n | eps | method | users of u | small | medium | large |")
    print("|---|---|---|---|---|---|---|---|")
    for data_name, draw, sizes in (("normal", normal, (10**5, 10**6)), ("diamonds", diamonds, (10**5,))):
        for n in sizes:
            data, bounds = draw(n, rng)
            u = data[:, 0]
            asked = intervals(bounds[0], rng)
            truth = {size: np.array([np.mean((u >= low) & (u <= high)) for low, high in ranges]) for size, ranges in asked.items()}
            half = u[rng.permutation(n)[: n // 2]]  # the users who report u when half report v
            for epsilon in EPSILONS:
                errors, cells = hdg_errors(data, bounds, epsilon, asked, truth, rng)
                rows = [("hdg " + cells, "~n/3 (1-D grid) + 2-D grid", errors)]
                for method in ("hh", "haar-hrr"):
                    rows.append((method, "n", one_d_errors(method, u, bounds[0], epsilon, asked, truth, rng)))
                    rows.append((method, "n/2", one_d_errors(method, half, bounds[0], epsilon, asked, truth, rng)))
                for method, users, found in rows:
                    cells_text = " | ".join(f"{np.mean(found[size]):.4f}" for size in WIDTHS)
                    print(f"| {data_name} | {n:,} | {epsilon:g} | {method} | {users} | {cells_text} |", flush=True)


if __name__ == "__main__":
    main()
