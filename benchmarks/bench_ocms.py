"""OCMS+RR against Apple's count-mean sketches on the worst-case MSE (Pan, CSF 2025, sec. 6.1 and Fig. 2a).

The paper's synthetic experiment, as its code runs it (``evaluation/sketch_experiment.py``,
``run_zipf_experiment_once``): n = 10,000 objects on 100 values with Zipf frequencies
:math:`\\propto 1/r^2` (each value's count ``round(n f)``, at least 1, the last cut to make n), the
100 values are the values of interest, 100 runs at each epsilon = 1..5, and the worst-case MSE is
estimated by eq. 18, :math:`\\max_x \\frac1t\\sum_t (\\hat f(x) - f(x))^2`.

Protocols, with dpdist's defaults: ``ocms`` (MSE-OCMS+RR, f* = 1), ``hcms`` (Apple's Hadamard
count-mean sketch, k = 2048, m = 1024: the paper's "CMS+HE"), ``cms`` (Apple's one-hot sketch,
m = 1024 bits flipped at epsilon/2: the paper's CMS with s-RP) and ``olh``.

The estimate of a value reads only the reports and that value's hash, so the law of the 100
estimates does not depend on the size d of the dictionary (the paper uses d = 10^5 in its text and
10^6 in its code); the collector's work does (O(n d) for ocms and olh), so the default domain is
the 100 values themselves (``--domain`` to change it).

For each protocol: eq. 18 from the runs, its expected value under the analytic variances
(Monte Carlo over Gaussian estimates with the exact per-value variances: eq. 18 is biased upward
by its max over 100 noisy means), the analytic worst case over the 100 values, and the gain
``hcms / ocms`` with a bootstrap 95 % interval over runs, beside Table 1's closed form
:math:`((e^\\varepsilon+1)/(e^\\varepsilon-1))^2 (e^{\\varepsilon/2}-1)^2 / e^{\\varepsilon/2}`.

Usage::

    uv run python benchmarks/bench_ocms.py [--runs 100] [--epsilon 1 2 3 4 5] [--domain 100]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from dpdist import local

PROTOCOLS = ("ocms", "hcms", "cms", "olh")
N = 10_000
VALUES = 100


def zipf_data(n: int = N, values: int = VALUES) -> np.ndarray:
    """The paper code's Zipf(a=2) data set: counts round(n f_r), at least 1, the last cut to make n."""
    frequencies = 1.0 / np.arange(1, values + 1) ** 2
    frequencies /= frequencies.sum()
    counts = np.maximum(1, np.round(n * frequencies).astype(np.int64))
    total = np.cumsum(counts)
    last = int(np.searchsorted(total, n))  # the first value whose cumulative count reaches n
    counts = counts[: last + 1]
    counts[-1] -= total[last] - n
    return np.repeat(np.arange(counts.size), counts)


def expected_eq18(variances: np.ndarray, runs: int, rng: np.random.Generator, draws: int = 2000) -> float:
    """E[max_x mean_t e_{xt}^2] for independent Gaussian errors of the given variances (Monte Carlo)."""
    chi2 = rng.chisquare(runs, size=(draws, variances.size)) / runs
    return float(np.mean(np.max(variances * chi2, axis=1)))


def one_epsilon(epsilon: float, runs: int, domain: int, seed: int) -> dict:
    data = zipf_data()
    truth = np.bincount(data, minlength=domain) / data.size
    interest = np.arange(VALUES)
    result: dict = {}
    errors = {}
    for index, name in enumerate(PROTOCOLS):
        protocol = local.make(name, epsilon=epsilon, domain_size=domain)
        rng = np.random.default_rng([index, int(epsilon * 1000), seed])
        start = time.process_time()
        estimates = np.array(
            [protocol.estimate(protocol.simulate(data, rng=rng)).frequencies[interest] for _ in range(runs)]
        )
        seconds = time.process_time() - start
        squared = (estimates - truth[interest]) ** 2
        errors[name] = squared
        variances = protocol.variance(N, truth)[interest]
        result[name] = {
            "width": getattr(protocol, "hash_range", getattr(protocol, "width", None)),
            "report_bits": int(protocol.privatize(np.zeros(1, dtype=np.int64), rng=0).nbytes * 8),
            "eq18": float(squared.mean(axis=0).max()),
            "eq18_expected": expected_eq18(variances, runs, np.random.default_rng([99, index, seed])),
            "worst_variance": float(variances.max()),
            "mean_mse": float(squared.mean()),
            "mean_variance": float(variances.mean()),
            "cpu_seconds": round(seconds, 2),
        }
    boot = np.random.default_rng([7, seed])
    gains = []
    for _ in range(2000):
        rows = boot.integers(0, runs, size=runs)
        gains.append(errors["hcms"][rows].mean(axis=0).max() / errors["ocms"][rows].mean(axis=0).max())
    e, root = math.exp(epsilon), math.exp(epsilon / 2)
    result["gain_hcms_over_ocms"] = {
        "eq18": result["hcms"]["eq18"] / result["ocms"]["eq18"],
        "eq18_interval": [float(np.quantile(gains, 0.025)), float(np.quantile(gains, 0.975))],
        "eq18_expected": result["hcms"]["eq18_expected"] / result["ocms"]["eq18_expected"],
        "analytic_worst": result["hcms"]["worst_variance"] / result["ocms"]["worst_variance"],
        "table_1": ((e + 1) / (e - 1)) ** 2 * (root - 1) ** 2 / root,
    }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--epsilon", type=float, nargs="+", default=[1.0, 2.0, 3.0, 4.0, 5.0])
    parser.add_argument("--domain", type=int, default=VALUES)
    parser.add_argument("--seed", type=int, default=50)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "ocms.json")
    args = parser.parse_args()
    results = {"runs": args.runs, "n": N, "values": VALUES, "domain": args.domain, "seed": args.seed, "epsilon": {}}
    for epsilon in args.epsilon:
        cell = one_epsilon(epsilon, args.runs, args.domain, args.seed)
        results["epsilon"][f"{epsilon:g}"] = cell
        gain = cell["gain_hcms_over_ocms"]
        print(
            f"eps {epsilon:g}: " + "  ".join(f"{name} {cell[name]['eq18']:.3g} (exp {cell[name]['eq18_expected']:.3g})"
                                              for name in PROTOCOLS)
            + f"  gain {gain['eq18']:.2f} [{gain['eq18_interval'][0]:.2f}, {gain['eq18_interval'][1]:.2f}]"
            f" expected {gain['eq18_expected']:.2f} analytic {gain['analytic_worst']:.2f} table 1 {gain['table_1']:.2f}",
            flush=True,
        )
    args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
