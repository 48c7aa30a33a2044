"""The table of docs/reference/benchmarks/numerical.md, "Measured": W1 and KS of the numerical baselines on Beta(5, 2) data.

For each method (binning with 16 and 64 bins, hh, hh-admm and haar-hrr with their default 256 leaves) at
epsilon 1 and 2: ``--seeds`` data sets of ``--n`` Beta(5, 2) values (data seed 100 + s), each collected once
(``simulate``, noise seed 200 + s) and estimated; the median over the seeds of the Wasserstein-1 and
Kolmogorov-Smirnov distances to the data's own distribution (``dpdist.metrics``).  Usage::

    uv run python benchmarks/bench_numerical_baselines.py [--n 100000] [--seeds 20]

Prints the markdown table and writes benchmarks/results/numerical_baselines.json.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import warnings

import numpy as np

from dpdist import local, metrics

METHODS = [("binning-16", "binning", {"bins": 16}), ("binning-64", "binning", {"bins": 64}),
           ("hh (256 leaves, Norm-Sub)", "hh", {}), ("hh-admm (256 leaves)", "hh-admm", {}),
           ("haar-hrr (256 leaves, Norm-Sub)", "haar-hrr", {})]
EPSILONS = (1.0, 2.0)


def distances(name: str, params: dict, epsilon: float, n: int, seeds: int) -> tuple[list[float], list[float]]:
    """W1 and KS of each seed's estimate."""
    w1, ks = [], []
    for seed in range(seeds):
        values = np.random.default_rng(100 + seed).beta(5, 2, n)
        protocol = local.make(name, epsilon=epsilon, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # estimators' convergence notes: the distances are the result
            estimate = protocol.estimate(protocol.simulate(values, rng=200 + seed))
        w1.append(float(metrics.wasserstein(estimate, values)))
        ks.append(float(metrics.ks(estimate, values)))
    return w1, ks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    rows = []
    print("| method | ε = 1 | ε = 2 |\n|---|---|---|")
    for label, name, params in METHODS:
        cells = []
        for epsilon in EPSILONS:
            w1, ks = distances(name, params, epsilon, args.n, args.seeds)
            rows.append({"method": label, "epsilon": epsilon, "n": args.n, "seeds": args.seeds, "w1": w1, "ks": ks,
                         "w1_median": float(np.median(w1)), "ks_median": float(np.median(ks))})
            cells.append(f"{np.median(w1):.4f} / {np.median(ks):.3f}")
        print(f"| {label} | {cells[0]} | {cells[1]} |", flush=True)
    out = pathlib.Path(__file__).parent / "results" / "numerical_baselines.json"
    out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
