"""CP's sparsity chosen from the aggregate, against fixed choices and RAPPOR.

Setting of paper 004's Fig. 2 (k = 10^4 items, m = 500 rows, epsilon = 0.5, n = 10^6):
mean l1 error over ``--runs`` exact aggregate samples (``simulate``) of

* CP with ``sparsity=None``: the risk inflation criterion on the OMP path (the default);
* CP with the reproduction's fixed s (2 for Geo(0.8), 3 for Geo(0.6), s for Unif(s));
* CP with s = 5 / 6 (the values the issue found to win on geometric data);
* CP with the matrix-only bound ``default_sparsity()`` (s ln(k/s) <= m/4: s = 20);
* RAPPOR (``sue``, basic one-time RAPPOR) with the simplex projection.

The CP matrix is the same public one for every run (``matrix_seed=1``, exact calibration).

Usage::

    uv run python benchmarks/bench_cp_sparsity.py            # 5 runs per cell
    uv run python benchmarks/bench_cp_sparsity.py --runs 2   # quicker
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from dpdist import local

K, M, EPSILON, USERS = 10_000, 500, 0.5, 1_000_000


def datasets() -> dict[str, tuple[np.ndarray, int, int]]:
    """name -> (distribution, the reproduction's fixed s, the larger s of the issue)."""
    items = np.arange(K)
    out = {}
    for lam, fixed, larger in ((0.8, 2, 5), (0.6, 3, 6)):
        p = (1 - lam) ** items * lam
        out[f"Geo({lam})"] = (p / p.sum(), fixed, larger)
    for s in (10, 25):
        out[f"Unif({s})"] = ((items < s) / s, s, s)
    zipf = 1.0 / (items + 1) ** 1.5
    out["Zipf(1.5)"] = (zipf / zipf.sum(), 10, 20)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default="benchmarks/results/cp_sparsity.json")
    args = parser.parse_args()
    cp = local.make("cp", epsilon=EPSILON, domain_size=K, measurements=M, matrix_seed=1)
    rappor = local.make("sue", epsilon=EPSILON, domain_size=K)
    rng = np.random.default_rng(2026)
    rows = []
    for name, (p, fixed, larger) in datasets().items():
        errors: dict[str, list[float]] = {}
        chosen, seconds = [], []
        for _ in range(args.runs):
            values = rng.choice(K, size=USERS, p=p)
            aggregate = cp.simulate(values, rng=rng)
            start = time.perf_counter()
            auto = cp.estimate(aggregate)
            seconds.append(time.perf_counter() - start)
            chosen.append(int(auto.details["sparsity"]))
            cells = {
                "cp auto": auto,
                f"cp s={fixed}": cp.estimate(aggregate, sparsity=fixed),
                f"cp s={larger}": cp.estimate(aggregate, sparsity=larger),
                f"cp s={cp.default_sparsity()} (matrix bound)": cp.estimate(aggregate, sparsity=cp.default_sparsity()),
                "rappor + simplex": rappor.estimate(rappor.simulate(values, rng=rng), postprocess="simplex"),
            }
            for label, estimate in cells.items():
                errors.setdefault(label, []).append(float(np.abs(estimate.frequencies - p).sum()))
        row = {
            "dataset": name,
            "chosen_s": chosen,
            "auto_estimate_seconds": float(np.median(seconds)),
            "l1": {label: (float(np.mean(v)), float(np.std(v, ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0)
                   for label, v in errors.items()},
        }
        rows.append(row)
        cells_text = "  ".join(f"{label} {mean:.4f}±{se:.4f}" for label, (mean, se) in row["l1"].items())
        print(f"{name:10s} chosen s {chosen}  {cells_text}  (auto estimate {row['auto_estimate_seconds']:.2f} s)",
              flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"k": K, "m": M, "epsilon": EPSILON, "n": USERS, "runs": args.runs,
                                          "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
