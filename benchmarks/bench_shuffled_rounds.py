"""Rounds of shuffled GRR reports: the composed bound against an exact lower bound.

For GRR on d = 3 values, delta = 1e-8, n = 10^3..10^7, eps0 = 0.5..8 and T = 1, 10, 30, 100 rounds:

* ``new``: ``dpdist.amplification.account(..., rounds=T)`` (rounds composed through a dominating pair's privacy
  loss distribution, :mod:`dpdist.amplification._composition`), with its CPU seconds (one call, scipy imported);
* ``old``: the optimal composition theorem (Kairouz, Oh & Viswanath 2015) applied to each round's
  (eps, delta) curve, as ``account`` composed rounds before (``amplification.compose_rounds``);
* ``lower``: the exact loss of one concrete neighbouring pair (victim 0 or 1, every other user 2) composed
  over the T rounds, rounded down (:mod:`dpdist.amplification._lower_bound`): every valid bound is above it.

Run: ``uv run python benchmarks/bench_shuffled_rounds.py`` (writes ``results/shuffled_rounds.json``; about
ten CPU minutes, most of it the lower bound's enumeration at n = 10^7 and the old composition).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from dpdist import amplification, local
from dpdist.amplification import _accounting, _channel, _structured
from dpdist.amplification._lower_bound import grr_pair_distribution, grr_pair_epsilon

DELTA = 1e-8
SIZES = (10**3, 10**4, 10**5, 10**6, 10**7)
EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
ROUNDS = (1, 10, 30, 100)
#: the calls timed by time_calls: (protocol, its parameters, method), each at TIMED_ROUNDS rounds, median of TIMED_REPEATS
TIMED = [("grr", {"domain_size": 3}, "numerical"), ("grr", {"domain_size": 8}, "numerical"),
         ("oue", {"domain_size": 64}, "numerical"), ("ss", {"domain_size": 64}, "numerical"),
         ("hr", {"domain_size": 8}, "channel"), ("grr", {"domain_size": 8}, "generic")]
TIMED_ROUNDS, TIMED_REPEATS = (30, 100), 5


def old_bound(protocol, n: int, rounds: int) -> float:
    """The previous composition: Kairouz-Oh-Viswanath on each round's (eps, delta), never above rounds * eps0."""
    bound = _accounting._Bound([_channel.pair_reductions(*_structured.pair_classes(protocol))], n)
    epsilon0 = protocol.guarantee.epsilon
    return min(amplification.compose_rounds(bound.within, max(epsilon0, bound.t_max), rounds, DELTA), rounds * epsilon0)


def main() -> None:
    amplification.numerical_epsilon(1.0, 1000, 1e-8)  # scipy imported once
    rows = []
    print("| eps0 | n | T | new | old (KOV) | lower | new / lower | old / lower | new CPU s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for epsilon0 in EPSILONS:
        protocol = local.make("grr", epsilon=epsilon0, domain_size=3)
        for n in SIZES:
            start = time.process_time()
            distribution = grr_pair_distribution(epsilon0, n)
            lower_seconds = time.process_time() - start
            for rounds in ROUNDS:
                start = time.process_time()
                new = amplification.account(protocol, n, DELTA, rounds=rounds).epsilon
                seconds = time.process_time() - start
                old = old_bound(protocol, n, rounds)
                lower = grr_pair_epsilon(epsilon0, n, rounds, DELTA, distribution)
                rows.append({"epsilon0": epsilon0, "n": n, "rounds": rounds, "new": new, "old": old, "lower": lower,
                             "new_cpu_s": seconds, "lower_enumeration_cpu_s": lower_seconds})
                print(f"| {epsilon0:g} | {n:.0e} | {rounds} | {new:.4g} | {old:.4g} | {lower:.4g} | {new / lower:.3f} "
                      f"| {old / lower:.2f} | {seconds:.3f} |", flush=True)
    below = [row for row in rows if row["new"] < row["lower"]]
    ratios = [row["new"] / row["lower"] for row in rows]
    print(f"\nnew below the lower bound: {len(below)} of {len(rows)}; new / lower from {min(ratios):.4f} to "
          f"{max(ratios):.4f}; old / lower up to {max(row['old'] / row['lower'] for row in rows):.2f}; new CPU max "
          f"{max(row['new_cpu_s'] for row in rows):.3f} s")
    timings = time_calls()
    out = Path(__file__).parent / "results" / "shuffled_rounds.json"
    out.write_text(json.dumps({"delta": DELTA, "protocol": "grr", "domain_size": 3, "rows": rows, "timings": timings},
                              indent=1))


def time_calls() -> list[dict]:
    """CPU seconds of one ``account(..., rounds=T)`` call, median of 5, for a few protocols at n = 10^5."""
    timings = []
    print("\n| protocol | method | T | epsilon | CPU s (median of 5) |")
    print("|---|---|---:|---:|---:|")
    for name, params, method in TIMED:
        protocol = local.make(name, epsilon=4.0, **params)
        for rounds in TIMED_ROUNDS:
            seconds = []
            for _ in range(TIMED_REPEATS):
                start = time.process_time()
                epsilon = amplification.account(protocol, 10**5, DELTA, method=method, rounds=rounds).epsilon
                seconds.append(time.process_time() - start)
            median = float(np.median(seconds))
            timings.append({"protocol": name, **params, "method": method, "rounds": rounds, "epsilon": epsilon,
                            "cpu_s": median})
            print(f"| {name} d = {params['domain_size']} | {method} | {rounds} | {epsilon:.4g} | {median:.3f} |", flush=True)
    return timings


if __name__ == "__main__":
    main()
