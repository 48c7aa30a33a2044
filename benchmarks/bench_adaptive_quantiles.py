"""Adaptive multi-round LDP quantiles against dpdist's one-round LDP methods, side by side.

Mean absolute rank error ``mean_j |F_n(released_j) - q_j|`` against the data's empirical CDF, for the
median and for the 9 deciles, median over runs.  Every method is epsilon-LDP per user:

* ``adaptive``: ``local.adaptive_quantiles`` (4 rounds on disjoint groups, one RR bit per user, a
  1024-cell grid over the bounds);
* the one-round protocols, each on all n users, quantiles read off their estimated distribution
  (``estimate(...).quantile(q)``): ``sw`` (EMS), ``wavelet``, ``hh-admm``, ``haar-hrr``, ``binning``
  (64 bins), all with their defaults.

Data: normal and lognormal (continuous), and two real columns with atoms sampled with replacement
(``income-weekly``, ``earnings-hourly``; the ``data`` extra).

Usage::

    uv run --extra data python benchmarks/bench_adaptive_quantiles.py [--runs 8] [--n 100000 1000000] [--epsilon 1 2]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

from bench_central_quantiles import data, rank_error  # normal, lognormal and the real columns, as the central benchmark's tables use them
from dpdist import local

ONE_ROUND = {"sw": {}, "wavelet": {"n_users": None}, "hh-admm": {}, "haar-hrr": {}, "binning": {"bins": 64}}
QUANTILES = {"median": np.array([0.5]), "deciles": np.arange(1, 10) / 10}


def one_cell(name: str, n: int, epsilon: float, runs: int) -> dict:
    """Median rank error over ``runs`` of every method, for the median and the deciles."""
    errors: dict = {method: {k: [] for k in QUANTILES} for method in ["adaptive", *ONE_ROUND]}
    seconds: dict = {method: 0.0 for method in errors}
    for run in range(runs):
        rng = np.random.default_rng([run, n, int(epsilon * 100)])
        x, bounds = data(name, n, rng)
        sorted_x = np.sort(x)
        for label, q in QUANTILES.items():
            start = time.perf_counter()
            release = local.adaptive_quantiles(x, q, epsilon=epsilon, bounds=bounds, rng=rng)
            seconds["adaptive"] += time.perf_counter() - start
            errors["adaptive"][label].append(rank_error(sorted_x, release.values, q))
        for method, params in ONE_ROUND.items():
            start = time.perf_counter()
            extra = {key: (n if value is None else value) for key, value in params.items()}
            protocol = local.make(method, epsilon=epsilon, bounds=bounds, **extra)
            distribution = protocol.estimate(protocol.simulate(x, rng=rng))
            seconds[method] += time.perf_counter() - start
            for label, q in QUANTILES.items():
                errors[method][label].append(rank_error(sorted_x, distribution.quantile(q), q))
    return {"errors": {m: {k: float(np.median(v)) for k, v in by.items()} for m, by in errors.items()},
            "seconds_per_run": {m: s / runs for m, s in seconds.items()}}


def table(results: list[dict]) -> str:
    lines = []
    for label in QUANTILES:
        lines += [f"\n**rank error, {label}** (median over runs; best one-round / adaptive > 1: adaptive better)\n",
                  "| data | n | ε | adaptive | " + " | ".join(ONE_ROUND) + " | best one-round / adaptive |",
                  "|---|---|---|---|" + "---|" * len(ONE_ROUND) + "---|"]
        for cell in results:
            errors = cell["errors"]
            best = min(errors[m][label] for m in ONE_ROUND)
            lines.append(f"| {cell['data']} | {cell['n']:.0e} | {cell['epsilon']:g} | {errors['adaptive'][label]:.2e} | "
                         + " | ".join(f"{errors[m][label]:.2e}" for m in ONE_ROUND)
                         + f" | {best / errors['adaptive'][label]:.2f}x |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--n", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--epsilon", type=float, nargs="+", default=[1.0, 2.0])
    parser.add_argument("--data", nargs="+", default=["normal", "lognormal", "income-weekly", "earnings-hourly"])
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "adaptive_quantiles.json"))
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # clipping warnings of the real columns' outliers
    results = []
    for name in args.data:
        for n in args.n:
            for epsilon in args.epsilon:
                cell = {"data": name, "n": n, "epsilon": epsilon, **one_cell(name, n, epsilon, args.runs)}
                results.append(cell)
                print(json.dumps(cell), flush=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(table(results))


if __name__ == "__main__":
    main()
