"""Many quantiles from one budget: python-dp's QuantileTree beside dpdist's tree, AQ and JointExp.

Google's python-dp 1.1.5 ``QuantileTree.compute_quantiles`` releases many quantiles from one budget (a tree of
noisy counts; it drops nodes below a share of the total).  It runs in its own environment (pinned by
``benchmarks/audit_field/requirements/python_dp.lock``; its worker is ``adapt_python_dp.quantiles_of``), dpdist's
methods here.  Every release is epsilon-DP under add/remove of one record (python-dp: one partition, one
contribution per privacy unit, delta 0, Laplace noise; dpdist's ``central.quantiles``: add/remove).

Data: lognormal incomes (median 30,000 USD, sigma 0.8, clipped to [0, 200,000]) and a normal (mean 50, sd 10,
clipped to [0, 100]); n = 2,000, 20,000, 200,000; epsilon 0.5 and 1; 20 runs (fresh data each); python-dp's tree
height and branching tuned over (4, 16) (its default), (3, 32), (6, 8), (8, 4) per setting, the best by mean decile
error reported.  Metrics: mean absolute error of the 9 deciles in the data's units, and W1 of the piecewise-linear
CDF through the 99 released percentiles to the empirical CDF (``bench_central_quantiles.ks_w1``).  Usage::

    uv run python benchmarks/bench_python_dp_quantiles.py [--runs 20] [--sizes 2000,20000] [--data normal]
        [--rerun tree]

``--rerun tree`` runs dpdist's tree again in every saved row (the same data and seeds) and keeps the other results.

Writes ``benchmarks/results/python_dp_quantiles.json``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from bench_audit_field import FIELD, environment  # noqa: E402  (the side environments)
from bench_central_quantiles import ks_w1, quantile_cdf  # noqa: E402

from dpdist import central  # noqa: E402

RESULTS = pathlib.Path(__file__).parent / "results" / "python_dp_quantiles.json"
DECILES = np.linspace(0, 1, 11)[1:-1]
PERCENTILES = np.linspace(0, 1, 101)[1:-1]
SHAPES = [(4, 16), (3, 32), (6, 8), (8, 4)]


def data(name: str, n: int, rng: np.random.Generator):
    if name == "lognormal incomes":
        return np.clip(rng.lognormal(np.log(30_000), 0.8, n), 0, 200_000), (0.0, 200_000.0)
    return np.clip(rng.normal(50, 10, n), 0, 100), (0.0, 100.0)


PYTHON_DP = """
import json, sys
import numpy as np
sys.path.insert(0, {folder!r})
from adapt_python_dp import quantiles_of
job = json.load(sys.stdin)
out = [quantiles_of(np.asarray(x), job["epsilon"], job["bounds"], h, b, job["q"]) for x in job["datasets"] for h, b in job["shapes"]]
print(json.dumps(out))
"""


def python_dp(datasets, epsilon, bounds, q, shapes=SHAPES):
    """Every dataset's quantiles at every tree shape (height, branching), in one run of python-dp's environment."""
    job = {"datasets": [np.asarray(x).tolist() for x in datasets], "epsilon": epsilon, "bounds": list(bounds),
           "q": list(q), "shapes": [list(shape) for shape in shapes]}
    done = subprocess.run([str(environment("python_dp")), "-c", PYTHON_DP.format(folder=str(FIELD / "side"))],
                          input=json.dumps(job), capture_output=True, text=True, check=True)
    flat = np.asarray(json.loads(done.stdout))
    return flat.reshape(len(datasets), len(shapes), len(q))


def scores(x, released, bounds):
    """(mean absolute decile error, W1) of 99 released percentiles (deciles are every tenth)."""
    ordered = np.sort(x)
    truth = np.quantile(ordered, DECILES)
    deciles = np.asarray(released)[9::10][:9]
    knots, cdf = quantile_cdf(np.asarray(released), PERCENTILES, bounds)
    return float(np.mean(np.abs(deciles - truth))), ks_w1(knots, cdf, ordered)[1]


def cell(name: str, n: int, epsilon: float, runs: int, peer: bool = True,
         methods: tuple = ("tree", "aq", "jointexp")) -> dict:
    datasets = [data(name, n, np.random.default_rng([n, run, 7]))[0] for run in range(runs)]
    bounds = data(name, 2, np.random.default_rng(0))[1]
    started = time.process_time()
    row: dict = {"data": name, "n": n, "epsilon": epsilon, "runs": runs}
    if peer:
        row["python-dp"] = python_dp_row(datasets, epsilon, bounds)
    for method in methods:
        measured = []
        for run, x in enumerate(datasets):
            released = central.quantiles(x, PERCENTILES, epsilon=epsilon, bounds=bounds, method=method,
                                         rng=np.random.default_rng([n, run, 11]), clip=True).values
            measured.append(scores(x, released, bounds))
        row[f"dpdist {method}"] = {"decile_error": float(np.mean([m[0] for m in measured])),
                                   "w1": float(np.mean([m[1] for m in measured]))}
    row["cpu_seconds"] = round(time.process_time() - started, 1)
    print(json.dumps(row), flush=True)
    return row


def python_dp_row(datasets, epsilon: float, bounds) -> dict:
    """python-dp's scores at its best tree shape (the lowest mean decile error), and every shape's decile error."""
    theirs = python_dp(datasets, epsilon, bounds, PERCENTILES)
    per_shape = [[scores(x, theirs[r, s], bounds) for r, x in enumerate(datasets)] for s in range(len(SHAPES))]
    best = int(np.argmin([np.mean([m[0] for m in shape]) for shape in per_shape]))
    return {"decile_error": float(np.mean([m[0] for m in per_shape[best]])),
            "w1": float(np.mean([m[1] for m in per_shape[best]])), "shape": SHAPES[best],
            "by_shape": {f"h={h} b={b}": float(np.mean([m[0] for m in per_shape[i]])) for i, (h, b) in enumerate(SHAPES)}}


def markdown(rows) -> str:
    methods = ("python-dp", "dpdist tree", "dpdist aq", "dpdist jointexp")
    out = ["| data | n | ε | runs | " + " | ".join(f"{m} decile err / W1" for m in methods) + " | python-dp shape | "
           "python-dp / best dpdist |", "|---" * (len(methods) + 6) + "|"]
    for r in rows:
        cells = [f"{r[m]['decile_error']:,.3g} / {r[m]['w1']:,.3g}" if m in r else "-" for m in methods]
        best = min(r[m]["decile_error"] for m in methods[1:])
        peer = r.get("python-dp")  # None: run --without python-dp
        shape = "-" if peer is None else f"h={peer['shape'][0]} b={peer['shape'][1]}"
        ratio = "-" if peer is None else f"{peer['decile_error'] / best:.1f}x"
        out.append(f"| {r['data']} | {r['n']:,} | {r['epsilon']:g} | {r['runs']} | " + " | ".join(cells) +
                   f" | {shape} | {ratio} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sizes", default="2000,20000,200000")
    parser.add_argument("--epsilons", default="0.5,1")
    parser.add_argument("--data", default="lognormal incomes,normal")
    parser.add_argument("--markdown", action="store_true", help="print the table of the saved results and stop")
    parser.add_argument("--without", default="", help="python-dp: leave the peer out (its side environment not made)")
    parser.add_argument("--rerun", default="", help='dpdist methods ("tree", "aq", "jointexp") to run again in every '
                        "saved row, keeping the other results")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(json.loads(RESULTS.read_text())))
        return
    rows = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    if args.rerun:  # dpdist's named methods again in every saved row, the same data and seeds; the rest kept
        for row in rows:
            again = cell(row["data"], row["n"], row["epsilon"], row["runs"], False, tuple(args.rerun.split(",")))
            row.update({key: value for key, value in again.items() if key.startswith("dpdist ")})
            row["rerun"] = sorted(set(row.get("rerun", [])) | set(args.rerun.split(",")))
        RESULTS.write_text(json.dumps(rows, indent=1) + "\n")
        print(markdown(rows))
        return
    for name in args.data.split(","):
        for n in map(int, args.sizes.split(",")):
            for epsilon in map(float, args.epsilons.split(",")):
                rows = [r for r in rows if (r["data"], r["n"], r["epsilon"]) != (name, n, epsilon)]
                rows.append(cell(name, n, epsilon, args.runs, peer="python-dp" not in args.without.split(",")))
                RESULTS.write_text(json.dumps(rows, indent=1) + "\n")  # an interrupted run keeps its cells
    print(markdown(sorted(rows, key=lambda r: (r["data"], r["n"], r["epsilon"]))))


if __name__ == "__main__":
    main()
