"""Many quantiles at once: dpdist's tree and AQ against diffprivlib and OpenDP, side by side.

Mean absolute rank error of m = 9 (deciles) and m = 99 (percentiles) released quantiles,
``mean_j |F_n(released_j) - q_j|`` against the data's empirical CDF, median over runs, on normal
data, lognormal data and a real skewed column (``income-weekly``, the weekly-earnings stand-in
of the reproductions; needs the ``data`` extra). Every release is epsilon-DP under add/remove
neighbours; the peers split epsilon evenly over the m quantiles (sequential composition), as
their APIs do:

* diffprivlib ``tools.quantile(x, q, epsilon, bounds)`` (exponential mechanism per quantile);
* OpenDP ``then_quantile_score_candidates`` + ``then_report_noisy_max_gumbel`` per quantile over
  1,025 equally spaced candidates, the scale found by ``binary_search_chain`` for epsilon / m;
* dpdist ``central.quantiles(method="tree")`` (one release for all m) and ``method="aq"``.

Usage::

    uv run --extra bench --extra data python benchmarks/bench_quantiles.py [--runs 10] [--quick]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from dpdist import central


def _data(name: str, n: int, rng: np.random.Generator):
    if name == "normal":
        return np.clip(rng.normal(size=n), -4, 4), (-4.0, 4.0)
    if name == "lognormal":
        return np.clip(rng.lognormal(0, 1, n), 0, 50), (0.0, 50.0)
    from dpdist import datasets

    source = datasets.load(name)
    return rng.choice(np.asarray(source.values, dtype=float), n, replace=True), tuple(map(float, source.bounds))


def diffprivlib_quantiles(x, q, epsilon, bounds, seed):
    from diffprivlib.tools import quantile

    return np.asarray(quantile(x, q, epsilon=epsilon, bounds=bounds, random_state=seed), dtype=float)


_OPENDP_CACHE: dict = {}


def opendp_quantiles(x, q, epsilon, bounds, seed):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    candidates = list(np.linspace(bounds[0], bounds[1], 1025))
    data = list(map(float, np.clip(x, *bounds)))
    out = []
    for probability in q:
        key = (float(probability), epsilon / len(q), bounds, len(data))
        if key not in _OPENDP_CACHE:
            space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
            scorer = space >> dp.t.then_quantile_score_candidates(candidates, float(probability))
            _OPENDP_CACHE[key] = dp.binary_search_chain(
                lambda scale: scorer >> dp.m.then_report_noisy_max_gumbel(scale=scale, optimize="min"),
                d_in=1,
                d_out=epsilon / len(q),
            )
        out.append(candidates[_OPENDP_CACHE[key](data)])
    return np.array(out)


def dpdist_tree(x, q, epsilon, bounds, seed):
    return central.quantiles(x, q, epsilon=epsilon, bounds=bounds, method="tree", rng=seed, clip=True).values


def dpdist_aq(x, q, epsilon, bounds, seed):
    return central.quantiles(x, q, epsilon=epsilon, bounds=bounds, method="aq", rng=seed, clip=True).values


EPSILONS, MS = (0.1, 0.5, 1.0), (9, 99)  # the table's epsilons and numbers of quantiles m
METHODS = {
    "dpdist tree": dpdist_tree,
    "dpdist aq": dpdist_aq,
    "diffprivlib": diffprivlib_quantiles,
    "OpenDP": opendp_quantiles,
}


def rank_error(x: np.ndarray, released: np.ndarray, q: np.ndarray) -> float:
    ordered = np.sort(x)
    return float(np.mean(np.abs(np.searchsorted(ordered, released, side="right") / ordered.size - q)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="n = 1e4 only, normal and lognormal")
    parser.add_argument("--without", default="", help="comma-separated peer libraries to leave out (not installed)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "quantiles.json"))
    args = parser.parse_args()
    methods = {name: method for name, method in METHODS.items() if name not in args.without.split(",")}
    sizes = [10**4] if args.quick else [10**3, 10**4, 10**5]
    datasets = ["normal", "lognormal"] if args.quick else ["normal", "lognormal", "income-weekly"]
    rows = []
    for dataset in datasets:
        for n in sizes:
            for epsilon in EPSILONS:
                for m in MS:
                    q = np.linspace(0, 1, m + 2)[1:-1]
                    errors = {name: [] for name in methods}
                    seconds = {name: [] for name in methods}
                    for run in range(args.runs):
                        x, bounds = _data(dataset, n, np.random.default_rng([run, n, 7]))
                        for index, (name, method) in enumerate(METHODS.items()):
                            if name not in methods:
                                continue
                            start = time.perf_counter()
                            released = method(x, q, epsilon, bounds, int(np.random.default_rng([run, index]).integers(2**31)))
                            seconds[name].append(time.perf_counter() - start)
                            errors[name].append(rank_error(x, released, q))
                    row = {"dataset": dataset, "n": n, "epsilon": epsilon, "m": m}
                    row.update({name: float(np.median(values)) for name, values in errors.items()})
                    row.update({f"{name} s": float(np.median(values)) for name, values in seconds.items()})
                    peers = min(row[name] for name in ("diffprivlib", "OpenDP") if name in methods)
                    row["best peer / dpdist tree"] = peers / max(row["dpdist tree"], 1e-12)
                    rows.append(row)
                    print(
                        f"{dataset:>14} n={n:>7} eps={epsilon:<4} m={m:<3} "
                        + " ".join(f"{name}={row[name]:.4f}" for name in methods)
                        + f"  peer/tree={row['best peer / dpdist tree']:.1f}x",
                        flush=True,
                    )
    Path(args.out).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
