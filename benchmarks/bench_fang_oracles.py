"""RUE, RLH and RWS (Fang, Chen & Liu, USENIX Security 2025): dpdist's against the authors' code, and against
dpdist's earlier best (OUE, OLH, SS).

1. Side by side.  The same data (a Zipf(1.1) sample over ``d`` items, written to a ``.npy`` file) go through
   dpdist's ``privatize`` + aggregator + unbiased estimate and, in a separate Python with NumPy 1.26 (the
   authors' pin), through the authors' ``fp/RUE.py``, ``fp/RLH.py`` and ``fp/RWS.py`` (their per-user loops,
   ``cpu_count=1``), ``--runs`` times each.  Reported: the empirical MSE (mean over items of the squared error,
   mean over runs, with its standard error over runs) and each side's analytic mean MSE.  The authors' code
   is not part of dpdist: point ``--authors`` at a folder holding their three files and ``--python`` at that
   other interpreter (``python -m venv side && side/bin/pip install numpy==1.26.4``).
2. Against OUE, OLH and SS: the analytic mean MSE times n (exact for any data: the per-item variance is linear
   in f and the frequencies sum to one) and the report bits, at a grid of (epsilon, d), with the winner.

Usage::

    uv run python benchmarks/bench_fang_oracles.py --authors /work/side/fo50/authors --python /work/side/fo50/venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

WORKER = r'''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from RLH import RLH
from RUE import RUE
from RWS import RWS
values = np.load(sys.argv[2]); epsilon, d, runs = float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
n = values.size
out = {}
for name, cls in (("rue", RUE), ("rlh", RLH), ("rws", RWS)):
    protocol = cls(epsilon, d, 1)
    estimates = []
    for run in range(runs):
        if name == "rue":
            counts = protocol.aggregate_data_list_sum(protocol.perturb_data_list_sum(values), n)
        else:
            counts = protocol.aggregate_data_list(protocol.perturb_data_list(values))
        estimates.append((counts / n).tolist())
    out[name] = {"estimates": estimates, "analytic": float(protocol.get_ana_MSE(n))}
print(json.dumps(out))
'''


def zipf_values(d: int, n: int, seed: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, d + 1) ** 1.1
    return np.random.default_rng(seed).choice(d, size=n, p=weights / weights.sum())


def mse_summary(estimates: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    per_run = ((estimates - truth) ** 2).mean(axis=1)
    return float(per_run.mean()), float(per_run.std(ddof=1) / np.sqrt(per_run.size))


def side_by_side(authors: str, python: str, settings, n: int, runs: int, seed: int) -> list[dict]:
    from dpdist import local

    rows = []
    for index, (epsilon, d) in enumerate(settings):
        values = zipf_values(d, n, seed + index)
        truth = np.bincount(values, minlength=d) / n
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "values.npy"
            np.save(path, values)
            result = subprocess.run([python, "-c", WORKER, authors, str(path), str(epsilon), str(d), str(runs)],
                                    capture_output=True, text=True, check=True)
        theirs = json.loads(result.stdout)
        for name in ("rue", "rlh", "rws"):
            protocol = local.make(name, epsilon=epsilon, domain_size=d)
            ours = np.array([
                protocol.estimate(protocol.aggregator().add(protocol.privatize(values, rng=np.random.default_rng([index, run, seed])))).frequencies
                for run in range(runs)
            ])
            our_mse, our_se = mse_summary(ours, truth)
            their_mse, their_se = mse_summary(np.array(theirs[name]["estimates"]), truth)
            rows.append({
                "epsilon": epsilon, "d": d, "protocol": name, "n": n, "runs": runs,
                "dpdist_mse": our_mse, "dpdist_se": our_se,
                "dpdist_analytic": float(np.mean(protocol.variance(n, np.full(d, 1.0 / d)))),
                "authors_mse": their_mse, "authors_se": their_se, "authors_analytic": theirs[name]["analytic"],
                "z": (our_mse - their_mse) / float(np.hypot(our_se, their_se)),
            })
    return rows


def against_best(settings) -> list[dict]:
    from dpdist import local

    rows = []
    for epsilon, d in settings:
        row = {"epsilon": epsilon, "d": d}
        for name in ("oue", "olh", "ss", "rue", "rlh", "rws"):
            protocol = local.make(name, epsilon=epsilon, domain_size=d)
            report = protocol.privatize(np.zeros(1, dtype=np.int64), rng=0)
            row[name] = (float(np.mean(protocol.variance(1, np.full(d, 1.0 / d)))), int(report.nbytes * 8))
        row["best"] = min(("oue", "olh", "ss", "rue", "rlh", "rws"), key=lambda name: row[name][0])
        rows.append(row)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors", help="folder with the authors' RUE.py, RLH.py, RWS.py (without it: part 2 only)")
    parser.add_argument("--python", help="the other interpreter (NumPy 1.26) that runs them")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2025)
    args = parser.parse_args(argv)
    if args.authors is None or args.python is None:
        print("(no --authors and --python: the side by side with the authors' code is left out)\n")
    else:
        side_by_side_table(args)
    names = ("oue", "olh", "ss", "rue", "rlh", "rws")
    print("| eps | d | " + " | ".join(f"{name} MSE·n (bits)" for name in names) + " | lowest |")
    print("|---|---|" + "---|" * len(names) + "---|")
    for row in against_best([(eps, d) for eps in (0.5, 1.0, 2.0, 4.0) for d in (16, 128, 1024)]):
        cells = " | ".join(f"{row[name][0]:.4g} ({row[name][1]})" for name in names)
        print(f"| {row['epsilon']:g} | {row['d']} | {cells} | {row['best']} |")
    sys.stdout.flush()


def side_by_side_table(args) -> None:
    """Part 1: dpdist's and the authors' MSE on the same data, as a markdown table."""
    print("| eps | d | protocol | dpdist MSE (se) | authors' MSE (se) | z | dpdist analytic | authors' analytic |")
    print("|---|---|---|---|---|---|---|---|")
    for row in side_by_side(args.authors, args.python, [(1.0, 31), (4.0, 31), (1.0, 100), (4.0, 100)], args.n, args.runs, args.seed):
        print(f"| {row['epsilon']:g} | {row['d']} | {row['protocol']} | {row['dpdist_mse']:.4e} ({row['dpdist_se']:.1e}) | "
              f"{row['authors_mse']:.4e} ({row['authors_se']:.1e}) | {row['z']:+.2f} | {row['dpdist_analytic']:.4e} | "
              f"{row['authors_analytic']:.4e} |")
    print()


if __name__ == "__main__":
    main()
