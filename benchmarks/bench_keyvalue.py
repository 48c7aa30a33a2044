"""Key-value data under LDP: PCKV-UE and PCKV-GRR against PrivKV at the PCKV paper's synthetic setting.

Gu et al. (USENIX Security 2020), evaluation on synthetic data: n = 10^6 users, d = 100 keys, one
pair per user (padding length 1), keys Gaussian ``ceil(|N(0, 50^2)|)`` kept in 1..100, each key's
value Gaussian ``N(0, 1)`` kept in [-1, 1] and shared by the key's holders (the authors' ``GenData``
"GG"); epsilon 0.1 and 1..6.  Metrics as the paper's: the MSE of the frequencies and of the means,
averaged over the 100 keys, then over runs.  PrivKV is PrivKVM with one round (the paper's "1r"
baseline), at epsilon/2 for the key and for the value.

Every protocol runs through ``simulate`` (exact in law: PCKV-UE's aggregate sampler, the others
privatize in chunks), one seeded stream per (method, epsilon, run).

Usage::

    uv run python benchmarks/bench_keyvalue.py [--runs 5] [--n 1000000] [--out benchmarks/results/keyvalue.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from dpdist import local
from dpdist.local.keyvalue import KeyValueSets

METHODS = {"privkv": {}, "pckv-ue": {"padding_length": 1}, "pckv-grr": {"padding_length": 1}}
EPSILONS = [0.1, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def synthetic(n: int, d: int, rng: np.random.Generator) -> tuple[KeyValueSets, np.ndarray, np.ndarray]:
    """The "GG" data: one pair per user; the true frequencies and means."""
    keys = np.ceil(np.abs(rng.normal(0.0, 50.0, size=4 * n)))
    keys = keys[(keys >= 1) & (keys <= d)]
    keys = np.concatenate([np.arange(1, d + 1), keys])[:n].astype(np.int64) - 1  # every key held at least once
    means = rng.normal(0.0, 1.0, size=20 * d)
    means = means[np.abs(means) <= 1.0][:d]
    sets = KeyValueSets(keys, means[keys], np.ones(n, dtype=np.int64))
    return sets, np.bincount(keys, minlength=d) / n, means


def run(n: int, d: int, runs: int, seed: int) -> dict:
    sets, frequencies, means = synthetic(n, d, np.random.default_rng([seed, 0]))
    rows = []
    for m, (name, params) in enumerate(METHODS.items()):
        for e, epsilon in enumerate(EPSILONS):
            protocol = local.make(name, epsilon=epsilon, domain_size=d, **params)
            mse_f, mse_m, seconds = [], [], 0.0
            for r in range(runs):
                start = time.process_time()
                estimate = protocol.estimate(protocol.simulate(sets, rng=np.random.default_rng([seed, m + 1, e, r])))
                seconds += time.process_time() - start
                mse_f.append(float(np.mean((estimate.frequencies - frequencies) ** 2)))
                # the paper's estimator on every key (estimate.means withholds keys not clearly held: NaN)
                mse_m.append(float(np.mean((estimate.details["estimator_means"] - means) ** 2)))
            rows.append({"method": name, "epsilon": epsilon, "mse_frequency": float(np.mean(mse_f)),
                         "mse_mean": float(np.mean(mse_m)), "cpu_seconds_per_run": seconds / runs})
            print(f"{name:9s} eps={epsilon:4.1f}  MSE(f)={rows[-1]['mse_frequency']:.3e}  MSE(m)={rows[-1]['mse_mean']:.3e}  "
                  f"{seconds / runs:.2f} CPU-s", flush=True)
    return {"n": n, "d": d, "runs": runs, "seed": seed, "rows": rows}


def table(result: dict) -> str:
    by = {(row["method"], row["epsilon"]): row for row in result["rows"]}
    lines = ["| epsilon | MSE(f) PrivKV | MSE(f) PCKV-UE | MSE(f) PCKV-GRR | MSE(m) PrivKV | MSE(m) PCKV-UE | MSE(m) PCKV-GRR |",
             "|---|---|---|---|---|---|---|"]
    for epsilon in EPSILONS:
        cells = [f"{by[(method, epsilon)][metric]:.2e}" for metric in ("mse_frequency", "mse_mean") for method in METHODS]
        lines.append(f"| {epsilon:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20200812)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    result = run(args.n, args.d, args.runs, args.seed)
    print(table(result))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
