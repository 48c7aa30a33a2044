"""The tree CDF's KS against the flat histogram's (the aim: "never worse than the flat histogram on KS").

The KS part of ``bench_central_quantiles.py`` with more runs and standard errors: the same data
(normal on [-4, 4], lognormal(0, 1) on [0, 50], ``income-weekly`` resampled; the same data seeds),
the same exact KS to the empirical CDF, the same flat histogram (``histogram_queries``, add/remove,
isotonic, epsilon * sqrt(1.6 n) bins), and two tree shape rules:

* ``tree`` -- ``central.tree_cdf`` as shipped: ``rule="adaptive"`` (a 16-bin noisy profile of the
  data picks the shape among the level-uniform trees of Rameshwar, Tandon & Sharma,
  ``dpdist.central._shape``) and the atom-aware reading inside the leaves (``dpdist.central._atoms``);
* ``tree (linear leaves)`` -- the same release read linearly inside every leaf
  (``TreeHistogram.leaf_cdf``; beyond a zoomed tree the same tails): what the atom-aware reading changes;
* ``tree (size rule)`` -- ``rule="size"``, the earlier rule (16-ary, height from the noisy n).

Data: the central benchmark's grid (normal, lognormal, ``income-weekly``) and a second real
data set with atoms, ``earnings-hourly`` (61,395 hourly earnings of the CPS 2008, 3.9% at one value).

Every release is epsilon-DP under add/remove neighbours.  Reported per cell: mean KS over runs,
and the ratio of mean KS tree / flat with its standard error (delta method on the paired runs:
``R * sd(a_i / mean a - b_i / mean b) / sqrt(runs)``).  The trees' rank errors of 9 and 99
quantiles (median over runs, as in ``bench_central_quantiles.py``) are recorded too, to check
the quantile target against the peers' stored rows.  Results go to
``benchmarks/results/tree_ks.json``.

Usage::

    uv run --extra bench --extra data python benchmarks/bench_tree_ks.py [--runs 40] [--runs-large 10]
        [--sizes 1000,10000,100000,1000000] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_central_quantiles import Q, data, ks_w1, rank_error  # noqa: E402

from dpdist import central  # noqa: E402
from dpdist.estimates import Distribution  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "tree_ks.json"
METHODS = ("tree", "tree (linear leaves)", "tree (size rule)", "flat histogram")
SEED_NAMES = {"tree": "dpdist tree", "tree (size rule)": "dpdist tree size rule", "flat histogram": "flat histogram"}


def linear_leaves(tree) -> Distribution:
    """The tree's CDF read linearly inside every leaf; beyond a zoomed tree, the tails of ``to_distribution``."""
    edges, cdf = tree.leaf_cdf()
    inside = (edges >= tree.bounds[0]) & (edges <= tree.bounds[1])
    return Distribution.from_cdf(*tree._beyond(edges[inside], cdf[inside]))


def releases(x, epsilon: float, bounds, seeds) -> dict:
    """The distribution of every method (the tree's release read two ways: one seed, one release)."""
    flat = central.histogram_queries(x, epsilon, bounds, rng=seeds["flat histogram"], clip=True,
                                     neighbouring="add-remove", postprocess="isotonic")
    tree = central.TreeHistogram.release(x, epsilon, bounds, rng=seeds["tree"], clip=True)
    return {
        "tree": tree.to_distribution(),
        "tree (linear leaves)": linear_leaves(tree),
        "tree (size rule)": central.tree_cdf(x, epsilon, bounds, rng=seeds["tree (size rule)"], clip=True, rule="size"),
        "flat histogram": flat,
    }


def cell(dataset: str, n: int, epsilon: float, runs: int) -> dict:
    values = {name: {"ks": [], "rank9": [], "rank99": []} for name in METHODS}
    shapes: Counter = Counter()
    start = time.perf_counter()
    for run in range(runs):
        x, bounds = data(dataset, n, np.random.default_rng([zlib.crc32(dataset.encode()), n, run]))
        ordered = np.sort(x)
        seeds = {name: np.random.default_rng([zlib.crc32(seed_name.encode()), n, int(epsilon * 1000), run])
                 for name, seed_name in SEED_NAMES.items()}
        for name, distribution in releases(x, epsilon, bounds, seeds).items():
            if name == "tree":
                shapes[f"{distribution.details['branching']}^{distribution.details['height']}"] += 1
            ks, _ = ks_w1(np.asarray(distribution.edges, float), np.asarray(distribution.cumulative, float), ordered)
            values[name]["ks"].append(ks)
            for m, q in Q.items():
                values[name][f"rank{m}"].append(rank_error(ordered, distribution.quantile(q), q))
    return {"dataset": dataset, "n": n, "epsilon": epsilon, "runs": runs, "values": values, "shapes": dict(shapes),
            "seconds": time.perf_counter() - start}


def ratio(row: dict, name: str, reference: str = "flat histogram") -> tuple[float, float]:
    """Mean KS of ``name`` over that of ``reference`` and its delta-method standard error."""
    a, b = np.asarray(row["values"][name]["ks"]), np.asarray(row["values"][reference]["ks"])
    value = a.mean() / b.mean()
    se = value * np.std(a / a.mean() - b / b.mean(), ddof=1) / np.sqrt(a.size) if a.size > 1 else float("nan")
    return float(value), float(se)


def _fmt(value: float) -> str:
    return f"{value:.4f}" if value >= 0.001 else f"{value:.1e}"


def markdown(rows: list[dict]) -> str:
    out = []
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        chosen = sorted((r for r in rows if r["dataset"] == dataset), key=lambda r: (r["n"], r["epsilon"]))
        out.append(f"\n**{dataset}, KS** (mean over runs; ratio of means ± standard error)\n")
        out.append("| n | ε | runs | " + " | ".join(METHODS)
                   + " | tree / flat | linear leaves / flat | size rule / flat | target | tree shapes |")
        out.append("|---" * (len(METHODS) + 8) + "|")
        for r in chosen:
            means = [_fmt(float(np.mean(r["values"][name]["ks"]))) for name in METHODS]
            ratios = [ratio(r, name) for name in ("tree", "tree (linear leaves)", "tree (size rule)")]
            met = "met" if ratios[0][0] - 2 * ratios[0][1] <= 1 else "**not met**"
            shapes = ", ".join(f"{k} ×{v}" for k, v in sorted(r["shapes"].items(), key=lambda kv: -kv[1]))
            out.append(
                f"| 10^{int(round(np.log10(r['n'])))} | {r['epsilon']:g} | {r['runs']} | " + " | ".join(means)
                + "".join(f" | {value:.2f} ± {se:.2f}" for value, se in ratios) + f" | {met} | {shapes} |"
            )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--runs-large", type=int, default=10, help="runs at n >= 10^6")
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--datasets", default="normal,lognormal,income-weekly,earnings-hourly")
    parser.add_argument("--epsilons", default="0.1,0.5,1")
    parser.add_argument("--output", default=str(RESULTS))
    parser.add_argument("--markdown", action="store_true", help="print the tables of the saved results and stop")
    args = parser.parse_args()
    output = Path(args.output)
    if args.markdown:
        print(markdown(json.loads(output.read_text())))
        return
    rows = json.loads(output.read_text()) if output.exists() else []
    done = {(r["dataset"], r["n"], r["epsilon"]) for r in rows}
    for n in (int(float(v)) for v in args.sizes.split(",")):
        for dataset in args.datasets.split(","):
            for epsilon in (float(v) for v in args.epsilons.split(",")):
                if (dataset, n, epsilon) in done:
                    continue
                row = cell(dataset, n, epsilon, args.runs_large if n >= 10**6 else args.runs)
                new, linear = ratio(row, "tree"), ratio(row, "tree (linear leaves)")
                print(f"{dataset:>15} n={n:>7} eps={epsilon:<4} tree/flat {new[0]:.2f}±{new[1]:.2f} "
                      f"linear/flat {linear[0]:.2f}±{linear[1]:.2f} {row['shapes']} {row['seconds']:.0f}s", flush=True)
                rows.append(row)
                output.write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
