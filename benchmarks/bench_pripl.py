"""2-D range queries on non-uniform data: PriPL-Tree with adaptive grids against HDG.

The setting of Wang et al., "PriPL-Tree" (PVLDB 17(11), 2024), sec. 5.1 and 5.3: m = 5 numerical
attributes, each bucketized into d = 256 bins, N = 10^6 users, 2-D range queries on a random pair of
attributes whose sides are vol(Q) = 0.5 of each attribute's domain (the paper's default; at a random
position, bin-aligned), mean squared error over 1,000 queries (the paper's metric), averaged over
collections (the paper uses 20; ``--repeats``).  Data (the paper's exact generators are not published; these follow its
description):

* ``mixgauss``: each record draws one component for all its attributes, N(0, 0.5^2) or N(3, 0.8^2) with
  probability 1/2 each (the paper's MixGaussian marginal), the attributes correlated 0.6 within the
  component (a Gaussian copula), bounds [-2, 6];
* ``gauss``: N(0, 1) marginals with covariance 0.6 between every two attributes (the paper's Gaussian
  with Cov = 0.6), bounds [-4, 4].

Methods: ``pripl`` (dpdist ``local.multi.pripl``, OUE oracles as in the paper), ``pripl-auto`` (the same with
``oracle="auto"``: GRR for partitions of fewer than 3e^eps + 2 intervals), ``hdg`` (dpdist ``hdg`` at
resolution 256, its granularity guideline at the true N, Norm-Sub), and ``authors`` (the authors'
code, github.com/LeixiaWang/PriPLT, unmodified, run in its own environment by
``--authors-python PY --authors-runner run_authors.py``: a separate checkout, never part of dpdist;
it simulates each oracle's aggregate by binomials rather than per user).  Every cell
(method, data, epsilon, repeat) has its own random stream, ``default_rng([method, data, epsilon index,
repeat, root seed])``; the data and queries of (data, repeat) are shared by all methods.

    uv run python benchmarks/bench_pripl.py                    # the table of docs/reference/benchmarks/multi-attribute.md
    uv run python benchmarks/bench_pripl.py --quick            # n = 10^5, 2 epsilons, 1 repeat
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np

from dpdist import local
from dpdist.local.multi.pripl import PriPLTrees

ROOT_SEED = 50
METHODS = {"pripl": 1, "hdg": 2, "authors": 3, "pripl-auto": 4}
DATA = {"mixgauss": 1, "gauss": 2}
DOMAIN = 256
ATTRIBUTES = 5


def records(name: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, tuple[float, float]]:
    """``n`` records of ``ATTRIBUTES`` attributes and their (shared) bounds."""
    correlation = np.full((ATTRIBUTES, ATTRIBUTES), 0.6) + 0.4 * np.eye(ATTRIBUTES)
    z = rng.multivariate_normal(np.zeros(ATTRIBUTES), correlation, size=n)
    if name == "gauss":
        return np.clip(z, -4.0, 4.0), (-4.0, 4.0)
    second = rng.random(n) < 0.5
    x = np.where(second[:, None], 3.0 + 0.8 * z, 0.5 * z)
    return np.clip(x, -2.0, 6.0), (-2.0, 6.0)


def queries(count: int, volume: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``pairs`` (q, 2) of attribute indices and ``ranges`` (q, 2, 2) of inclusive bins, each side ``volume`` of d."""
    pairs = np.array([np.sort(rng.choice(ATTRIBUTES, 2, replace=False)) for _ in range(count)])
    side = int(round(volume * DOMAIN))
    lows = rng.integers(0, DOMAIN - side + 1, size=(count, 2))
    return pairs, np.stack([lows, lows + side - 1], axis=-1)


def to_bins(data: np.ndarray, bounds) -> np.ndarray:
    lo, hi = bounds
    return np.minimum(((data - lo) / (hi - lo) * DOMAIN).astype(np.int64), DOMAIN - 1)


def truths(bins: np.ndarray, pairs: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    out = np.empty(len(pairs))
    for q, ((a, b), ((la, ha), (lb, hb))) in enumerate(zip(pairs, ranges)):
        out[q] = np.mean((bins[:, a] >= la) & (bins[:, a] <= ha) & (bins[:, b] >= lb) & (bins[:, b] <= hb))
    return out


def coverage_rows(ranges_1d: np.ndarray) -> np.ndarray:
    """(q, d) indicator of each inclusive bin range."""
    v = np.arange(DOMAIN)
    return ((v >= ranges_1d[:, :1]) & (v <= ranges_1d[:, 1:])).astype(np.float64)


def answer_with(matrix_of, pairs: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    out = np.empty(len(pairs))
    rows, cols = coverage_rows(ranges[:, 0]), coverage_rows(ranges[:, 1])
    for (a, b) in {tuple(p) for p in pairs.tolist()}:
        chosen = np.flatnonzero((pairs[:, 0] == a) & (pairs[:, 1] == b))
        out[chosen] = np.einsum("qi,ij,qj->q", rows[chosen], matrix_of(a, b), cols[chosen])
    return out


def run_pripl(data, bounds, epsilon, rng, oracle="oue"):
    attributes = [{"name": f"a{j}", "bounds": list(bounds)} for j in range(ATTRIBUTES)]
    plan = PriPLTrees(epsilon=epsilon, attributes=attributes, resolution=DOMAIN, oracle=oracle)
    estimate = plan.run(data, rng)
    return lambda a, b: estimate.response_matrix(f"a{a}", f"a{b}")


def run_hdg(data, bounds, epsilon, rng):
    attributes = [{"name": f"a{j}", "bounds": list(bounds)} for j in range(ATTRIBUTES)]
    protocol = local.make("hdg", epsilon=epsilon, attributes=attributes, resolution=DOMAIN, expected_reports=len(data))
    estimate = protocol.estimate(protocol.simulate(data, rng=rng), postprocess="norm-sub")
    return estimate.response_matrix


def run_authors(bins, epsilon, seed, pairs, ranges, python, runner):
    with tempfile.TemporaryDirectory() as folder:
        source, target = os.path.join(folder, "in.npz"), os.path.join(folder, "out.npz")
        np.savez(source, data=bins, domain=DOMAIN, epsilon=epsilon, seed=seed, pairs=pairs, ranges=ranges)
        subprocess.run([python, runner, source, target], check=True, capture_output=True)
        return np.load(target)["answers"]


def combine(paths: list[str]) -> None:
    """Print one table from the JSON files of several runs: each cell's MSE averaged over all their collections."""
    cells: dict[tuple, dict[str, list]] = {}
    for path in paths:
        with open(path) as handle:
            for row in json.load(handle):
                cell = cells.setdefault((row["data"], row["epsilon"]), {}).setdefault(row["method"], [0.0, 0.0, 0.0, 0])
                for k, key in enumerate(("mse", "mae", "cpu_seconds")):
                    cell[k] += row[key] * row["repeats"]
                cell[3] += row["repeats"]
    print("| data | eps | pripl | pripl-auto | hdg | authors' code | pripl / hdg | s per collection (pripl, hdg, authors) |")
    print("|---|---|---|---|---|---|---|---|")
    for (data, epsilon), methods in sorted(cells.items(), key=lambda item: (list(DATA).index(item[0][0]), item[0][1])):
        mean = {m: (v[0] / v[3], v[2] / v[3], v[3]) for m, v in methods.items()}
        text = [f"{mean[m][0]:.2e} ({mean[m][2]})" if m in mean else "-" for m in ("pripl", "pripl-auto", "hdg", "authors")]
        ratio = f"{mean['pripl'][0] / mean['hdg'][0]:.2f}" if "pripl" in mean and "hdg" in mean else "-"
        seconds = ", ".join(f"{mean[m][1]:.0f}" if m in mean else "-" for m in ("pripl", "hdg", "authors"))
        print(f"| {data} | {epsilon:g} | {' | '.join(text)} | {ratio} | {seconds} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**6)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.4, 0.8, 1.6])
    parser.add_argument("--volume", type=float, default=0.5)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--first-repeat", type=int, default=0, help="index of the first collection (to add more later)")
    parser.add_argument("--data", nargs="+", default=list(DATA))
    parser.add_argument("--methods", nargs="+", default=["pripl", "pripl-auto", "hdg"])
    parser.add_argument("--authors-python", default=None)
    parser.add_argument("--authors-runner", default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default=None, help="write every cell's numbers here")
    parser.add_argument("--combine", nargs="+", default=None, help="print one table from these --json files")
    args = parser.parse_args()
    if args.combine:
        combine(args.combine)
        return
    if args.quick:
        args.n, args.epsilons, args.repeats = 10**5, [0.8, 1.6], 1
    methods = list(args.methods) + (["authors"] if args.authors_python and "authors" not in args.methods else [])
    rows = []
    print("| data | eps | method | MSE | MAE | s/run |")
    print("|---|---|---|---|---|---|")
    for data_name in args.data:
        for e_index, epsilon in enumerate(args.epsilons):
            cells: dict[str, list] = {m: [] for m in methods}
            for repeat in range(args.first_repeat, args.first_repeat + args.repeats):
                shared = np.random.default_rng([0, DATA[data_name], repeat, ROOT_SEED])
                data, bounds = records(data_name, args.n, shared)
                bins = to_bins(data, bounds)
                # the records as the bins' centres: every method sees the same bucketized data (sec. 5.1)
                centred = bounds[0] + (bins + 0.5) * (bounds[1] - bounds[0]) / DOMAIN
                pairs, ranges = queries(args.queries, args.volume, shared)
                truth = truths(bins, pairs, ranges)
                for method in methods:
                    rng = np.random.default_rng([METHODS[method], DATA[data_name], e_index, repeat, ROOT_SEED])
                    start = time.perf_counter()
                    if method == "authors":
                        answers = run_authors(bins, epsilon, int(rng.integers(2**31)), pairs, ranges,
                                              args.authors_python, args.authors_runner)
                    else:
                        matrices = (run_hdg(centred, bounds, epsilon, rng) if method == "hdg" else
                                    run_pripl(centred, bounds, epsilon, rng, "auto" if method == "pripl-auto" else "oue"))
                        answers = answer_with(matrices, pairs, ranges)
                    seconds = time.perf_counter() - start
                    cells[method].append((float(np.mean((answers - truth) ** 2)), float(np.mean(np.abs(answers - truth))),
                                          seconds))
            for method in methods:
                mse, mae, seconds = (float(np.mean(v)) for v in zip(*cells[method]))
                rows.append({"data": data_name, "epsilon": epsilon, "method": method, "mse": mse, "mae": mae,
                             "cpu_seconds": seconds, "n": args.n, "repeats": args.repeats, "volume": args.volume,
                             "queries": args.queries, "root_seed": ROOT_SEED})
                print(f"| {data_name} | {epsilon:g} | {method} | {mse:.2e} | {mae:.4f} | {seconds:.1f} |", flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=1)


if __name__ == "__main__":
    main()
