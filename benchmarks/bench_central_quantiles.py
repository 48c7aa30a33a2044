"""Many quantiles and the CDF, side by side: dpdist tree / AQ / JointExp / flat histogram
against OpenDP's and diffprivlib's quantile releases.

Grid: n = 10^3, 10^4, 10^5, 10^6; epsilon = 0.1, 0.5, 1; normal data clipped to [-4, 4], lognormal(0, 1)
clipped to [0, 50], and ``income-weekly`` (weekly earnings of the 2000 US census extract shipped
by ``dpdist[data]``, 29,266 values on [0, 6250], resampled with replacement to n: heavy ties
and a long right tail).

Metrics, median over runs (fresh data each run):

* ``rank9`` / ``rank99``: mean absolute rank error of m = 9 (deciles) and m = 99 (percentiles)
  released quantiles, ``mean_j |F_n(released_j) - q_j|`` with F_n the data's empirical CDF;
* ``KS`` / ``W1`` to the empirical CDF, exact, of the released CDF: for the tree and the flat
  histogram their own piecewise-linear CDF; for the quantile methods the piecewise-linear CDF
  through (bound_low, 0), (released_j, q_j) for the 99 percentiles, (bound_high, 1).

Every release is epsilon-DP under add/remove neighbours.  The peers split epsilon evenly over
the m quantiles, as their APIs do:

* diffprivlib ``tools.quantile(x, q, epsilon, bounds)`` (Smith's exponential mechanism per
  quantile, epsilon / m each);
* OpenDP ``m.make_private_quantile`` (symmetric distance, max divergence) per quantile over
  16,385 equally spaced candidates, its scale set so that its privacy map gives epsilon / m;
* dpdist ``central.quantiles(method="tree")`` (one release serves m = 9, m = 99 and the CDF),
  ``method="aq"`` and ``method="jointexp"`` (one release per m), and the flat histogram
  ``central.histogram_queries(neighbouring="add-remove", postprocess="isotonic")`` with its
  default bins (epsilon * sqrt(1.6 n)); its quantiles are read off its CDF.

OpenDP samples from its own CSPRNG (not seedable); its rows vary between invocations within
their Monte-Carlo error.  Results go to ``benchmarks/results/central_quantiles.json``.

Usage::

    uv run --extra bench --extra data python benchmarks/bench_central_quantiles.py [--runs 5] [--quick]
        [--sizes 1000,10000] [--skip "OpenDP@1000000/99"] [--rerun "dpdist tree"]

``--rerun`` runs the named methods again in every saved cell (the same data and seeds: a paired comparison) and keeps
the other methods' results; the cell records it (``"rerun"``).
"""

from __future__ import annotations

import argparse
import json
import time
import zlib
from pathlib import Path

import numpy as np

from dpdist import central

RESULTS = Path(__file__).parent / "results" / "central_quantiles.json"
Q = {9: np.linspace(0, 1, 11)[1:-1], 99: np.linspace(0, 1, 101)[1:-1]}


# ---------------------------------------------------------------- data
_POPULATION: dict = {}


def data(name: str, n: int, rng: np.random.Generator):
    if name == "normal":
        return np.clip(rng.normal(size=n), -4, 4), (-4.0, 4.0)
    if name == "lognormal":
        return np.clip(rng.lognormal(0, 1, n), 0, 50), (0.0, 50.0)
    if name not in _POPULATION:
        from dpdist import datasets

        dataset = datasets.get(name)
        _POPULATION[name] = (dataset.load(), tuple(map(float, dataset.bounds)))
    population, bounds = _POPULATION[name]
    return rng.choice(population, n, replace=True), bounds


# ---------------------------------------------------------------- metrics
def rank_error(sorted_x: np.ndarray, released: np.ndarray, q: np.ndarray) -> float:
    return float(np.mean(np.abs(np.searchsorted(sorted_x, released, side="right") / sorted_x.size - q)))


def ks_w1(knots: np.ndarray, cdf: np.ndarray, sorted_x: np.ndarray) -> tuple[float, float]:
    """Exact KS and W1 between the piecewise-linear CDF through (knots, cdf) and the empirical CDF.

    Tied knots (a jump) are spread by 1e-12 of the range so the interpolation is well defined.
    """
    span = knots[-1] - knots[0]
    knots = knots + np.arange(knots.size) * span * 1e-12 / knots.size
    knots = np.maximum.accumulate(knots)
    n = sorted_x.size
    points = np.unique(np.concatenate([knots, sorted_x]))
    at = np.interp(points, knots, cdf)
    right = np.searchsorted(sorted_x, points, side="right") / n
    left = np.searchsorted(sorted_x, points, side="left") / n
    ks = float(max(np.max(np.abs(at - right)), np.max(np.abs(at - left))))
    # on [p_k, p_k+1) the empirical CDF is right[k] and the model is linear from at[k] to at[k+1]
    a, b = at[:-1] - right[:-1], at[1:] - right[:-1]
    width = np.diff(points)
    same = a * b >= 0
    denominator = np.where(same, 1.0, np.abs(a) + np.abs(b))
    area = np.where(same, width * (np.abs(a) + np.abs(b)) / 2, width * (a * a + b * b) / (2 * denominator))
    return ks, float(area.sum())


def quantile_cdf(values: np.ndarray, q: np.ndarray, bounds) -> tuple[np.ndarray, np.ndarray]:
    knots = np.concatenate([[bounds[0]], np.clip(np.sort(values), *bounds), [bounds[1]]])
    return knots, np.concatenate([[0.0], q, [1.0]])


# ---------------------------------------------------------------- peers
def diffprivlib_quantiles(x, q, epsilon, bounds, seed):
    from diffprivlib.tools import quantile

    return np.asarray(quantile(x, q, epsilon=epsilon, bounds=bounds, random_state=seed), dtype=float)


_OPENDP: dict = {}


def opendp_quantiles(x, q, epsilon, bounds, seed):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    candidates = list(np.linspace(bounds[0], bounds[1], 2**14 + 1))
    values = list(map(float, x))
    out = []
    for alpha in q:
        key = (float(alpha), epsilon / len(q), bounds)
        if key not in _OPENDP:
            domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))

            def build(scale, alpha=float(alpha)):
                return dp.m.make_private_quantile(
                    domain, dp.symmetric_distance(), dp.max_divergence(), candidates=candidates, alpha=alpha, scale=scale
                )

            # the privacy map is sensitivity / scale: one probe gives the scale for epsilon / m
            scale = build(1.0).map(1) / (epsilon / len(q))
            measurement = build(scale)
            while measurement.map(1) > epsilon / len(q):
                scale *= 1 + 1e-12
                measurement = build(scale)
            _OPENDP[key] = measurement
        out.append(_OPENDP[key](values))
    return np.asarray(out, dtype=float)


def dpdist_quantiles(method):
    def release(x, q, epsilon, bounds, seed):
        return central.quantiles(x, q, epsilon=epsilon, bounds=bounds, method=method, rng=seed, clip=True).values

    return release


QUANTILE_METHODS = {
    "dpdist aq": dpdist_quantiles("aq"),
    "dpdist jointexp": dpdist_quantiles("jointexp"),
    "diffprivlib": diffprivlib_quantiles,
    "OpenDP": opendp_quantiles,
}
CDF_METHODS = ("dpdist tree", "flat histogram")
ALL = (*CDF_METHODS, *QUANTILE_METHODS)


def cdf_release(name, x, epsilon, bounds, seed):
    if name == "dpdist tree":
        distribution = central.tree_cdf(x, epsilon, bounds, rng=seed, clip=True)
    else:
        distribution = central.histogram_queries(
            x, epsilon, bounds, rng=seed, clip=True, neighbouring="add-remove", postprocess="isotonic"
        )
    return distribution


# ---------------------------------------------------------------- the grid
def cell(dataset: str, n: int, epsilon: float, runs: int, skip: set[str], names=ALL) -> dict:
    metrics = {name: {"rank9": [], "rank99": [], "ks": [], "w1": [], "seconds": []} for name in names}
    for run in range(runs):
        x, bounds = data(dataset, n, np.random.default_rng([zlib.crc32(dataset.encode()), n, run]))
        ordered = np.sort(x)
        for name in names:
            seed = np.random.default_rng([zlib.crc32(name.encode()), n, int(epsilon * 1000), run])
            if name in CDF_METHODS:
                start = time.perf_counter()
                distribution = cdf_release(name, x, epsilon, bounds, seed)
                values = {m: distribution.quantile(q) for m, q in Q.items()}
                metrics[name]["seconds"].append(time.perf_counter() - start)
                knots, cdf = distribution.edges, distribution.cumulative
            else:
                values = {}
                seconds = 0.0
                for m, q in Q.items():
                    if name in skip or f"{name}@{n}/{m}" in skip:  # a whole library left out, or one release
                        continue
                    start = time.perf_counter()
                    values[m] = QUANTILE_METHODS[name](x, q, epsilon, bounds, int(seed.integers(2**31)) if "dpdist" not in name else seed)
                    seconds += time.perf_counter() - start
                metrics[name]["seconds"].append(seconds)
                knots, cdf = quantile_cdf(values[99], Q[99], bounds) if 99 in values else (None, None)
            for m in Q:
                if m in values:
                    metrics[name][f"rank{m}"].append(rank_error(ordered, values[m], Q[m]))
            if knots is not None:
                ks, w1 = ks_w1(np.asarray(knots, dtype=float), np.asarray(cdf, dtype=float), ordered)
                metrics[name]["ks"].append(ks)
                metrics[name]["w1"].append(w1)
    row = {"dataset": dataset, "n": n, "epsilon": epsilon, "runs": runs}
    for name, values in metrics.items():
        row[name] = {key: (float(np.median(v)) if v else None) for key, v in values.items()}
    return row


def print_row(row: dict) -> None:
    def fmt(value):
        return "   -   " if value is None else f"{value:.5f}"

    head = f"{row['dataset']:>13} n={row['n']:>7} eps={row['epsilon']:<4}"
    for metric in ("rank9", "rank99", "ks", "w1"):
        print(head, f"{metric:>6}", " ".join(f"{name.replace('dpdist ', '')}={fmt(row[name][metric])}" for name in ALL), flush=True)


def _fmt(value) -> str:
    if value is None:
        return "-"
    return f"{value:.2g}" if value >= 10 else f"{value:.4f}" if value >= 0.001 else f"{value:.1e}"


def markdown(rows: list[dict]) -> str:
    """The tables of docs/reference/benchmarks/central-quantiles.md: one per data set and metric, plus the target's ratios."""
    ours = ("dpdist tree", "dpdist aq", "dpdist jointexp")
    peers = ("diffprivlib", "OpenDP")
    out = []
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        chosen = sorted((r for r in rows if r["dataset"] == dataset), key=lambda r: (r["n"], r["epsilon"]))
        for metric, title in (("rank9", "rank error, 9 quantiles"), ("rank99", "rank error, 99 quantiles"), ("ks", "KS"), ("w1", "W1")):
            out.append(f"\n**{dataset}, {title}** (median over runs)\n")
            extra = "best peer / best dpdist quantiles" if metric.startswith("rank") else "tree / flat histogram"
            out.append("| n | ε | runs | " + " | ".join(name.replace("dpdist ", "") for name in ALL) + f" | {extra} |")
            out.append("|---" * (len(ALL) + 4) + "|")
            for r in chosen:
                cells = [_fmt(r[name][metric]) for name in ALL]
                if metric.startswith("rank"):
                    peer = [r[p][metric] for p in peers if r[p][metric] is not None]
                    best = min(r[o][metric] for o in ours)
                    ratio = f"{min(peer) / best:.1f}x" if peer and best > 0 else "-"
                else:
                    ratio = f"{r['dpdist tree'][metric] / r['flat histogram'][metric]:.2f}"
                out.append(f"| 10^{int(round(np.log10(r['n'])))} | {r['epsilon']:g} | {r['runs']} | " + " | ".join(cells) + f" | {ratio} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="n = 10^4, epsilon = 0.5, normal and lognormal, 1 run (< 1 min)")
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--datasets", default="normal,lognormal,income-weekly")
    parser.add_argument("--epsilons", default="0.1,0.5,1")
    parser.add_argument("--skip", default="", help='comma-separated "method@n/m" releases to leave out, e.g. "OpenDP@1000000/99"')
    parser.add_argument("--without", default="", help="comma-separated peer libraries to leave out (not installed)")
    parser.add_argument("--runs-large", type=int, default=None, help="runs at n >= 10^6 (default: --runs)")
    parser.add_argument("--output", default=str(RESULTS))
    parser.add_argument("--markdown", action="store_true", help="print the tables of the saved results and stop")
    parser.add_argument("--rerun", default="", help='comma-separated methods (e.g. "dpdist tree") to run again in every '
                        "saved cell of --output, keeping the others' results (the data and seeds are the cell's own)")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(json.loads(Path(args.output).read_text())))
        return
    if args.rerun:
        rows, names = json.loads(Path(args.output).read_text()), args.rerun.split(",")
        for row in rows:
            row.update({k: v for k, v in cell(row["dataset"], row["n"], row["epsilon"], row["runs"], set(), names).items()
                        if k in names})
            row["rerun"] = sorted(set(row.get("rerun", [])) | set(names))
            print_row(row)
            Path(args.output).write_text(json.dumps(rows, indent=1))
        return
    sizes = [int(v) for v in args.sizes.split(",")]
    datasets = args.datasets.split(",")
    epsilons = [float(v) for v in args.epsilons.split(",")]
    runs = args.runs
    if args.quick:
        sizes, datasets, epsilons, runs = [10000], ["normal", "lognormal"], [0.5], 1
    skip = {item for item in [*args.skip.split(","), *args.without.split(",")] if item}
    output = Path(args.output)
    rows = json.loads(output.read_text()) if output.exists() and not args.quick else []
    done = {(r["dataset"], r["n"], r["epsilon"]) for r in rows}
    for n in sizes:  # the largest last: an interrupted run keeps every smaller cell
        for dataset in datasets:
            for epsilon in epsilons:
                if (dataset, n, epsilon) in done:
                    continue
                count = args.runs_large if (args.runs_large and n >= 10**6) else runs
                row = cell(dataset, n, epsilon, count, skip)
                print_row(row)
                rows.append(row)
                if not args.quick:
                    output.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
