"""FLH against OLH: collector time at large n and accuracy as a function of the family size S.

Timing (d = 1024, eps = 1, Zipf(1.1) data): reports are made by ``privatize`` in
batches of 10^6 (not timed); the collector's time is ``Aggregator.add`` over
all batches plus ``estimate``.  OLH's collector costs O(n d) hash evaluations,
so it is timed at a smaller ``--olh-users`` and extrapolated linearly to ``--users``
(the printout says so).

Accuracy (d = 1024, eps = 1 and 4, n = 10^6 by default): FLH's empirical MSE per
item, over ``--families`` public families x ``--draws`` exact aggregate samples
each (``simulate``), against OLH's analytic variance (OLH's estimator is exactly
unbiased, conformance-checked) and against the prediction
``Var_OLH + c/(S(1-c)) * sum_{v' != v} f_{v'}^2`` of ``dpdist.local.frequency.flh``.

Usage::

    uv run python benchmarks/bench_flh.py                  # timing at 10^7 users + accuracy table
    uv run python benchmarks/bench_flh.py --users 1000000  # quicker
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from dpdist import local
from dpdist.local.frequency import _hashing

BATCH = 1_000_000


def zipf(n: int, d: int, rng) -> np.ndarray:
    weights = 1.0 / np.arange(1, d + 1) ** 1.1
    return rng.choice(d, size=n, p=weights / weights.sum())


def collector_seconds(protocol, values, rng) -> float:
    batches = [protocol.privatize(values[start : start + BATCH], rng=rng) for start in range(0, values.size, BATCH)]
    started = time.perf_counter()
    aggregator = protocol.aggregator()
    for batch in batches:
        aggregator.add(batch)
    protocol.estimate(aggregator)
    return time.perf_counter() - started


def timing(users: int, olh_users: int, d: int, epsilon: float, hash_counts) -> list[dict]:
    rng = np.random.default_rng(0)
    rows = []
    values = zipf(olh_users, d, rng)
    olh = local.make("olh", epsilon=epsilon, domain_size=d)
    seconds = collector_seconds(olh, values, rng)
    rows.append({"protocol": "olh", "S": None, "timed_users": olh_users, "seconds": seconds,
                 "seconds_at_users": seconds * users / olh_users, "extrapolated": users != olh_users})
    values = zipf(users, d, rng)
    for hash_count in hash_counts:
        flh = local.make("flh", epsilon=epsilon, domain_size=d, hash_count=hash_count)
        seconds = collector_seconds(flh, values, rng)
        rows.append({"protocol": "flh", "S": hash_count, "timed_users": users, "seconds": seconds,
                     "seconds_at_users": seconds, "extrapolated": False})
    return rows


def accuracy(users: int, d: int, epsilons, hash_counts, families: int, draws: int) -> list[dict]:
    rng = np.random.default_rng(1)
    values = zipf(users, d, rng)
    truth = np.bincount(values, minlength=d) / users
    rows = []
    for epsilon in epsilons:
        olh = local.make("olh", epsilon=epsilon, domain_size=d)
        olh_mse = float(olh.variance(users, truth).mean())
        for hash_count in hash_counts:
            errors = []
            for family in range(families):
                flh = local.make("flh", epsilon=epsilon, domain_size=d, hash_count=hash_count, family_seed=family)
                for _ in range(draws):
                    errors.append(np.mean((flh.estimate(flh.simulate(values, rng=rng)).frequencies - truth) ** 2))
            c = _hashing.collision_probability(2**31 - 1, flh.hash_range)
            excess = c / (hash_count * (1 - c)) * (np.sum(truth**2) - truth**2)
            rows.append({
                "epsilon": epsilon, "S": hash_count, "g": flh.hash_range,
                "flh_mse": float(np.mean(errors)), "flh_mse_se": float(np.std(errors, ddof=1) / np.sqrt(len(errors))),
                "olh_mse": olh_mse, "predicted_flh_mse": olh_mse + float(excess.mean()),
            })
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000_000)
    parser.add_argument("--olh-users", type=int, default=200_000)
    parser.add_argument("--accuracy-users", type=int, default=1_000_000)
    parser.add_argument("--families", type=int, default=8)
    parser.add_argument("--draws", type=int, default=4)
    parser.add_argument("--hash-counts", default="256,4096,65536,262144", help="the family sizes S, comma-separated")
    args = parser.parse_args()
    d = 1024
    hash_counts = [int(count) for count in args.hash_counts.split(",")]
    time_rows = timing(args.users, args.olh_users, d, 1.0, hash_counts)
    print(f"collector time, d={d}, eps=1, n={args.users:,} (seconds)")
    for row in time_rows:
        note = f" (timed at n={row['timed_users']:,}, extrapolated linearly)" if row["extrapolated"] else ""
        print(f"  {row['protocol']:4s} S={str(row['S']):>6s}  {row['seconds_at_users']:9.2f}{note}")
    acc_rows = accuracy(args.accuracy_users, d, [1.0, 4.0], hash_counts, args.families, args.draws)
    print(f"\nMSE per item, Zipf(1.1), d={d}, n={args.accuracy_users:,}; FLH over "
          f"{args.families} families x {args.draws} draws")
    print("  eps      S    g   FLH MSE (+-se)          OLH MSE     FLH/OLH  predicted FLH/OLH")
    for row in acc_rows:
        print(f"  {row['epsilon']:3.1f} {row['S']:6d} {row['g']:4d}   {row['flh_mse']:.3e} (+-{row['flh_mse_se']:.1e})"
              f"   {row['olh_mse']:.3e}   {row['flh_mse'] / row['olh_mse']:6.3f}   "
              f"{row['predicted_flh_mse'] / row['olh_mse']:6.3f}")
    out = Path(__file__).parent / "results" / "flh.json"
    out.write_text(json.dumps({"timing": time_rows, "accuracy": acc_rows}, indent=1))


if __name__ == "__main__":
    main()
