"""Slice quantiles (Imola et al., NeurIPS 2025) beside AQ and JointExp on a real data set.

Data: ``flights-departure`` (departure minute of day of the 328,521 NYC flights of 2013, shipped by
``dpdist[data]``; integers in [0, 1440], so heavy ties), the whole population, every run on the same
data.  ``--dataset earnings-hourly --replicate 12`` repeats the data as the paper's experiments do
(its Adult ages 12 times).  m = 9, 49, 99 equally spaced quantiles; epsilon = 0.5, 1, 5.

Metric: rank error of each released value z against the target rank floor(q n), where z's rank is
any rank it can take among ties, [#{x < z - w}, #{x <= z + w}] (0 when the target lies in it), w = 2^-20
of the bounds' width (the releases are grid points beside an atom, never on it; w is far below the
data's resolution of one minute and above the coarsest grid step, JointExp's 2^-20 at m = 99);
mean over the m quantiles and max over them, each averaged over the runs (standard errors given).

Methods, all dpdist's exact samplers on the public 2^32 grid (JointExp: 2^27/m cells):

* ``slice``: ``central.quantiles(method="slice")``, (eps, 1e-10)-DP under replace-one (n public);
* ``aq``, ``jointexp``: eps-DP under add/remove (their own relation, "aq", "jointexp"), and again at the
  add/remove epsilon that gives slice's replace-one epsilon ("aq@replace": eps/2, group privacy of two
  steps, since a replaced record may move between AQ's halves; "jointexp@replace": eps (1 - min gap),
  its utility's replace-one sensitivity 2 against its add/remove 2 (1 - min gap)).

``--jitter`` adds a fixed U[0, 1) to every value (continuous data, no ties: the paper's setting, a
minimum gap between values) and widens the upper bound by one.

``--reference DIR`` adds the authors' code (SliceQuantile of github.com/NynsenFaber/DP_CC_quantiles,
float samplers, their own (eps, delta) accounting, swap=True, g = ``--reference-gap`` (default 1, the
data's resolution; with ``--jitter`` the values are 1e-6 apart and less), delta 1e-10) from a checkout
in DIR (e.g. ``git -C <mirror> archive HEAD | tar -x -C /tmp/dpcc``); it needs no network.

Usage::

    uv run --extra data python benchmarks/bench_slice_quantiles.py [--runs 20] [--reference /tmp/dpcc]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from dpdist import central, datasets
from dpdist.errors import InvalidParameterError

RESULTS = Path(__file__).parent / "results" / "slice_quantiles.json"
DELTA = 1e-10
#: the reference code's g (its minimum gap between values; its h grows with log(width / g))
REFERENCE_GAP = [1.0]
MS, EPSILONS = (9, 49, 99), (0.5, 1.0, 5.0)  # the numbers of quantiles and the epsilons of the table


def rank_errors(sorted_x: np.ndarray, released: np.ndarray, q: np.ndarray, tolerance: float) -> np.ndarray:
    """Distance from floor(q n) to the ranks each released value can take among ties, the value read to within
    ``tolerance`` (the releases are grid points, which sit beside an atom, not on it)."""
    low = np.searchsorted(sorted_x, released - tolerance, side="left")
    high = np.searchsorted(sorted_x, released + tolerance, side="right")
    target = np.floor(q * sorted_x.size)
    return np.maximum(0, np.maximum(low - target, target - high)).astype(np.float64)


def reference_release(directory: str, x: np.ndarray, q: np.ndarray, epsilon: float, bounds, seed: int):
    if directory not in sys.path:
        sys.path.insert(0, directory)
    from our_mechanism.slice_quantile import SliceQuantile  # the authors' code, outside this repository

    np.random.seed(seed)
    gap = REFERENCE_GAP[0]
    mechanism = SliceQuantile(bound=bounds, n=x.size, m=q.size, eps=epsilon, split=0.5, swap=True, g=gap)
    if not mechanism.is_delta_approximate_DP(delta=DELTA, q_list=list(q)):
        raise InvalidParameterError("refused by its own delta check")
    return np.sort(np.asarray(mechanism.approximate_mechanism(x, delta=DELTA, q_list=list(q), sort=False)))


def run(method: str, x, q, epsilon, bounds, seed, reference):
    if method == "reference":
        return reference_release(reference, x, q, epsilon, bounds, seed)
    name, _, relation = method.partition("@")
    scale = 1.0
    if relation == "replace" and name == "aq":  # add/remove eps-DP is replace-one (2 eps)-DP (group privacy)
        scale = 2.0
    if relation == "replace" and name == "jointexp":  # its utility moves by 2 under replacement: eps / (1 - min gap)
        scale = 1.0 / (1.0 - float(np.min(np.diff(np.concatenate([[0.0], q, [1.0]])))))
    kwargs = {"delta": DELTA} if name == "slice" else {}
    release = central.quantiles(x, q, epsilon=epsilon / scale, bounds=bounds, method=name, rng=seed, **kwargs)
    return release.values


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--dataset", default="flights-departure")
    parser.add_argument("--replicate", type=int, default=1)
    parser.add_argument("--reference", default=None)
    parser.add_argument("--jitter", action="store_true", help="add U[0, 1) to every value (breaks the ties)")
    parser.add_argument("--jointexp-runs", type=int, default=None, help="runs of JointExp (default: --runs)")
    parser.add_argument("--jointexp-max-m", type=int, default=99, help="JointExp only up to this m (its m^2 D time)")
    parser.add_argument("--reference-gap", type=float, default=1.0, help="the reference code's g")
    parser.add_argument("--methods", default=None, help="comma-separated subset of the methods")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sample", type=int, default=None, help="a seeded sample of this many of the values (a check)")
    args = parser.parse_args()
    dataset = datasets.get(args.dataset)
    x = np.tile(np.asarray(dataset.load(), dtype=np.float64), args.replicate)
    if args.sample is not None:
        x = np.random.default_rng(2026).choice(x, args.sample, replace=False)
    bounds = tuple(map(float, dataset.bounds))
    if args.jitter:  # a fixed jitter: every run sees the same data
        x = x + np.random.default_rng(2026).uniform(0, 1, x.size)
        bounds = (bounds[0], bounds[1] + 1.0)
    x = np.sort(x)
    methods = ["slice", "aq", "jointexp", "aq@replace", "jointexp@replace"] + (["reference"] if args.reference else [])
    if args.methods:
        methods = [method for method in methods if method in args.methods.split(",")]
    REFERENCE_GAP[0] = args.reference_gap
    rows = []
    for m in MS:
        q = np.arange(1, m + 1) / (m + 1)
        for epsilon in EPSILONS:
            for method in methods:
                means, maxes, seconds, refused = [], [], [], None
                runs = 2 if args.quick else args.runs
                if method.startswith("jointexp"):
                    if m > args.jointexp_max_m:
                        continue
                    runs = min(runs, args.jointexp_runs or runs)
                for seed in range(runs):
                    start = time.perf_counter()
                    try:
                        values = run(method, x, q, epsilon, bounds, seed, args.reference)
                    except InvalidParameterError as error:
                        refused = str(error)[:160]
                        break
                    seconds.append(time.perf_counter() - start)
                    errors = rank_errors(x, values, q, (bounds[1] - bounds[0]) * 2.0**-20)
                    means.append(errors.mean())
                    maxes.append(errors.max())
                row = {"m": m, "epsilon": epsilon, "method": method, "n": int(x.size), "runs": len(means)}
                if refused:
                    row["refused"] = refused
                else:
                    root = np.sqrt(len(means))
                    row.update(mean_error=float(np.mean(means)), mean_se=float(np.std(means, ddof=1) / root),
                               max_error=float(np.mean(maxes)), max_se=float(np.std(maxes, ddof=1) / root),
                               seconds=float(np.median(seconds)))
                rows.append(row)
                print(json.dumps(row), flush=True)
    RESULTS.parent.mkdir(exist_ok=True)
    suffix = ("_jitter" if args.jitter else "") + ("_" + args.methods.replace(",", "_") if args.methods else "")
    results = RESULTS.with_name(RESULTS.stem + suffix + ".json")
    results.write_text(json.dumps({"dataset": args.dataset, "replicate": args.replicate, "jitter": args.jitter,
                                   "delta": DELTA, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
