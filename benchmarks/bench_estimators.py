"""Estimators on the exact channel against the unbiased one: MSE, top-k MSE and l1 over data, eps and d.

For GRR and HR at d in {16, 256, 4096} and FLH (S = 4096) at d in {16, 256}, eps in
{0.5, 1, 2, 4}, n = 10^5 users drawn from Zipf(1.1), Geometric(0.8) (truncated to
d items) and uniform data, ``--repeats`` exact aggregate samples (``simulate``) each,
seed 0.  Estimators: ``unbiased`` (raw), ``unbiased+simplex`` (its Euclidean projection
onto the simplex, the projected decoder), ``ibu`` (EM on the exact likelihood,
SQUAREM, tolerance 1e-3 on the total log-likelihood) and, for GRR, ``mle`` (closed
form).  Metrics (``dpdist.metrics``): MSE over all items, MSE over the true top 10, l1.

Usage::

    uv run python benchmarks/bench_estimators.py               # the table of docs/explanation/frequency-estimators.md
    uv run python benchmarks/bench_estimators.py --repeats 1 --dims 16,256
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from dpdist import local, metrics

EPSILONS = [0.5, 1.0, 2.0, 4.0]
N_USERS = 100_000


def distribution(name: str, d: int) -> np.ndarray:
    items = np.arange(d)
    if name == "zipf":
        weights = 1.0 / (items + 1.0) ** 1.1
    elif name == "geometric":
        weights = 0.8**items
    else:
        weights = np.ones(d)
    return weights / weights.sum()


def estimators(name: str) -> list[tuple[str, dict]]:
    chosen = [("unbiased", {}), ("unbiased+simplex", {"postprocess": "simplex"}), ("ibu", {"estimator": "ibu"})]
    if name == "grr":
        chosen.append(("mle", {"estimator": "mle"}))
    return chosen


def run(dims, repeats) -> list[dict]:
    rng = np.random.default_rng(0)
    rows = []
    for d in dims:
        protocols = [("grr", {}), ("hr", {})] + ([("flh", {"hash_count": 4096})] if d <= 256 else [])
        for data in ("zipf", "geometric", "uniform"):
            truth_law = distribution(data, d)
            for epsilon in EPSILONS:
                values = rng.choice(d, size=N_USERS, p=truth_law)
                truth = np.bincount(values, minlength=d) / N_USERS
                for name, extra in protocols:
                    protocol = local.make(name, epsilon=epsilon, domain_size=d, **extra)
                    scores = {label: [] for label, _ in estimators(name)}
                    seconds = {label: 0.0 for label, _ in estimators(name)}
                    for _ in range(repeats):
                        aggregator = protocol.simulate(values, rng=rng)
                        for label, options in estimators(name):
                            started = time.perf_counter()
                            f = protocol.estimate(aggregator, **options).frequencies
                            seconds[label] += time.perf_counter() - started
                            scores[label].append(
                                (metrics.mse(f, truth), metrics.mse_top_k(f, truth, 10), metrics.l1(f, truth))
                            )
                    for label, values_ in scores.items():
                        mse, top, l1 = np.mean(values_, axis=0)
                        rows.append({"d": d, "data": data, "epsilon": epsilon, "protocol": name, "estimator": label,
                                     "mse": mse, "top10_mse": top, "l1": l1, "seconds": seconds[label] / repeats})
                print(f"done d={d} {data}", flush=True)
    return rows


def summary(rows) -> str:
    """Per (d, data, protocol): each estimator's metric relative to the unbiased one, averaged over eps."""
    lines = ["| d | data | protocol | estimator | MSE / unbiased | top-10 MSE / unbiased | l1 / unbiased | s |",
             "|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["d"], r["data"], r["protocol"]) for r in rows}, key=lambda k: (k[0], k[1], k[2]))
    for d, data, protocol in keys:
        cell = [r for r in rows if (r["d"], r["data"], r["protocol"]) == (d, data, protocol)]
        base = {r["epsilon"]: r for r in cell if r["estimator"] == "unbiased"}
        for label in dict.fromkeys(r["estimator"] for r in cell):
            if label == "unbiased":
                continue
            mine = [r for r in cell if r["estimator"] == label]
            ratio = {m: np.exp(np.mean([np.log(r[m] / base[r["epsilon"]][m]) for r in mine]))
                     for m in ("mse", "top10_mse", "l1")}
            secs = np.mean([r["seconds"] for r in mine])
            lines.append(f"| {d} | {data} | {protocol} | {label} | {ratio['mse']:.3f} | {ratio['top10_mse']:.3f} "
                         f"| {ratio['l1']:.3f} | {secs:.3f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", default="16,256,4096")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = run([int(d) for d in args.dims.split(",")], args.repeats)
    print(summary(rows))
    out = Path(__file__).parent / "results" / "estimators.json"
    out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
