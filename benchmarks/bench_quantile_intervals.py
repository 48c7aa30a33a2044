"""Intervals of AQ and JointExp (``interval_share``) beside the tree's, on smooth data and on data with ties.

For each data set, n and method: R seeded releases of 9 deciles at epsilon, each checked against the
data's empirical quantiles (``np.quantile(x, q, method="inverted_cdf")``): coverage (share of the
9 R intervals holding it), the mean and median interval width in ranks (records between its ends), the mean
absolute rank error of the point release (|#{x < value} - q n|), and how often the point lies outside
its own interval.  The tree's intervals are free; AQ and JointExp spend ``interval_share`` of epsilon
on theirs.  Data: N(0, 1) on [-4, 4]; ``income-weekly`` (``dpdist[data]``, weekly earnings with round-sum
ties) resampled to n within its own bounds.

Usage::

    uv run --extra data python benchmarks/bench_quantile_intervals.py [--runs 20] [--n 10000 100000]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from dpdist import central

Q = np.linspace(0.1, 0.9, 9)


def _data(name: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, tuple[float, float]]:
    if name == "normal":
        return rng.normal(size=n), (-4.0, 4.0)
    from dpdist import datasets

    dataset = datasets.get(name)
    return rng.choice(np.asarray(dataset.load(), dtype=np.float64), size=n, replace=True), tuple(map(float, dataset.bounds))


def _measure(x, bounds, method: str, share, epsilon: float, runs: int) -> dict:
    clipped = np.sort(np.clip(x, *bounds))
    truth = np.quantile(clipped, Q, method="inverted_cdf")
    covered, widths, errors, outside, seconds = [], [], [], [], []
    for seed in range(runs):
        start = time.perf_counter()
        release = central.quantiles(x, Q, epsilon=epsilon, bounds=bounds, method=method, rng=seed,
                                    interval_share=share)
        seconds.append(time.perf_counter() - start)
        errors.append(np.abs(np.searchsorted(clipped, release.values) - Q * x.size))
        if release.low is None:  # no interval bought: the point accuracy alone
            continue
        covered.append((release.low <= truth) & (truth <= release.high))
        widths.append(np.searchsorted(clipped, release.high) - np.searchsorted(clipped, release.low))
        outside.append((release.values < release.low) | (release.values > release.high))
    if not covered:
        covered = widths = outside = [np.nan]
    return {"coverage": float(np.mean(covered)), "width_ranks": float(np.mean(widths)),
            "median_width_ranks": float(np.median(widths)),
            "rank_error": float(np.mean(errors)), "point_outside": float(np.mean(outside)),
            "seconds": float(np.median(seconds))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--data", nargs="+", default=["normal", "income-weekly"])
    parser.add_argument("--out", default=None, help="write the rows as JSON here")
    args = parser.parse_args()
    rows = []
    for name in args.data:
        for n in args.n:
            x, bounds = _data(name, n, np.random.default_rng(n))
            for method, share in (("tree", None), ("aq", None), ("aq", 0.2), ("aq", 0.4), ("jointexp", None),
                                  ("jointexp", 0.2), ("jointexp", 0.4)):
                row = {"data": name, "n": n, "method": method, "share": share,
                       **_measure(x, bounds, method, share, args.epsilon, args.runs)}
                rows.append(row)
                print(f"{name:>14} n={n:>7} {method:>8} share={share!s:>4}: coverage {row['coverage']:.3f}  "
                      f"width {row['width_ranks']:7.1f} (median {row['median_width_ranks']:6.0f}) ranks  rank error {row['rank_error']:6.1f}  "
                      f"point outside {row['point_outside']:.3f}  {row['seconds']:.2f} s", flush=True)
    if args.out:
        with open(args.out, "w") as handle:
            json.dump({"epsilon": args.epsilon, "runs": args.runs, "q": Q.tolist(), "rows": rows}, handle, indent=1)


if __name__ == "__main__":
    main()
