"""The trust ladder's Nebula comparison: per-item variance of the relay + GRR, of sample-and-threshold as
Brave runs it in P3A (K = 20, p = 0.105) and of pure local GRR, d = 8 and 64, n = 10^4 and 10^7, central (1, 1e-8).

    uv run python benchmarks/bench_trust_ladder.py

Prints the markdown tables of docs/reference/benchmarks/anonymity.md ("The trust ladder").  Uniform items (f = 1/d), the shape of
the issue's numbers.  Nebula's error three ways: without its threshold (f(1-p)/(np), the issue's reading), the
variance of its thresholded estimate, and its mean squared error (the suppressed items' bias included).
"""

from __future__ import annotations

import time

import numpy as np

from dpdist import explain_ladder, local
from dpdist.accounting._threshold import threshold_epsilon
from dpdist.accuracy._ladder_rows import counts_of, threshold_errors

#: the issue's measured ratios, (d, n) -> (Nebula / relay, local / Nebula)
ISSUE = {(8, 10**4): 100, (64, 10**4): 13, (8, 10**7): 96_835, (64, 10**7): 8_349}
ISSUE_LOCAL = {8: 3.2, 64: 261}
P3A = {"threshold": 20, "sampling": 0.105}


def grr_variance(epsilon: float, d: int, n: int) -> float:
    return float(np.mean(local.make("grr", epsilon=epsilon, domain_size=d).variance(n, np.full(d, 1 / d))))


def epsilon0_for(variance: float, d: int, n: int) -> float:
    """The GRR epsilon whose uniform per-item variance is ``variance`` (bisection)."""
    low, high = 1.0, 30.0
    for _ in range(60):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if grr_variance(middle, d, n) > variance else (low, middle)
    return low


def main() -> None:
    print("| d | n | epsilon0 (relay) | relay + GRR | Nebula, no threshold | Nebula var | Nebula MSE | ratio (no threshold) | "
          "issue | ratio (MSE) | local GRR eps 1 / Nebula | issue | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in (10**4, 10**7):
        for d in (8, 64):
            start = time.process_time()
            rungs = explain_ladder({"protocol": "grr", "epsilon": 1.0, "domain_size": d}, n, delta=1e-8, shape="uniform",
                                   **P3A)
            relay = rungs.row("shuffled")
            counts = counts_of(np.full(d, 1 / d), n)
            mse, variance, suppressed = threshold_errors(counts, P3A["sampling"], P3A["threshold"])
            plain = (1 / d) * (1 - P3A["sampling"]) / (n * P3A["sampling"])
            local_variance = rungs.row("local").variance
            seconds = time.process_time() - start
            print(f"| {d} | {n:.0e} | {relay.parameters['epsilon0']:.4g} | {relay.variance:.4g} | {plain:.4g} | "
                  f"{variance:.4g} | {mse:.4g} | {plain / relay.variance:,.4g} | {ISSUE[d, n]:,} | "
                  f"{mse / relay.variance:,.4g} | {local_variance / plain:.4g} (var {local_variance / variance:.4g}) | "
                  f"{ISSUE_LOCAL[d]} | {seconds:.1f} |")
    implied = epsilon0_for((1 / 64) * 0.895 / (10**7 * 0.105) / ISSUE[64, 10**7], 64, 10**7)
    print(f"\nThe issue's 8,349 at d = 64, n = 10^7 implies a relay variance of GRR at epsilon0 = {implied:.4g}.")
    for neighbouring in ("add-remove", "replace"):
        epsilon = threshold_epsilon(P3A["sampling"], P3A["threshold"], 1e-8, neighbouring=neighbouring)
        print(f"Exact account of K = 20, p = 0.105 ({neighbouring}): epsilon {epsilon:.4g} at delta 1e-8 "
              f"(Nebula states 1).")
    fitted = explain_ladder({"protocol": "grr", "epsilon": 1.0, "domain_size": 8}, 10**4, delta=1e-8, shape="uniform")
    row = fitted.row("sample-and-threshold")
    print(f"The largest p at central (1, 1e-8), K = 20, replace: {row.parameters['sampling']:.4g}; its variance at "
          f"d = 8, n = 10^4: {row.variance:.4g} ({row.variance / fitted.row('shuffled').variance:.3g} x the relay's).")
    print("(every number above is computed, not sampled: no run-to-run variation; seconds: CPU of the line's ladder)")


if __name__ == "__main__":
    main()
