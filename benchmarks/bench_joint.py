"""Several campaigns, one estimate: ``local.estimate_jointly`` against each campaign alone and the inverse-variance optimum.

Each cell: ``--repetitions`` seeded repetitions (stream ``[repetition, campaign, 2024]``) of
independent campaigns of ``--users`` users each, items drawn i.i.d. from the cell's distribution
("interior": half uniform, half Dirichlet(1) with seed 7; "zipf": Zipf(1.3) over the d items, many
near 0).  Reported: the summed squared error over items (mean over repetitions, with its standard
error) of the joint likelihood estimate, of the inverse-variance baseline (``method=
"inverse-variance"``: weights from plug-in variances), of the inverse-variance optimum with the
*true* variances (analytic: sum over items of 1 / sum_c 1/Var_c), and of every campaign's
unbiased estimate alone; the 95% intervals' pooled coverage with its binomial standard error
(pooled over the d items of every repetition: the items of one repetition are not independent
draws, so the per-item SE sqrt(0.95*0.05/R) is the conservative one); the CPU time of one joint
estimate (sandwich included).

Usage::

    uv run python benchmarks/bench_joint.py [--repetitions 100] [--users 20000]
"""

from __future__ import annotations

import argparse
import os
import time

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # one BLAS thread: the machine is shared

import numpy as np  # noqa: E402

from dpdist import local  # noqa: E402

MIXES = {
    "grr1+oue2+olh0.5": (("grr", 1.0), ("oue", 2.0), ("olh", 0.5)),
    "grr2+oue1+hr1": (("grr", 2.0), ("oue", 1.0), ("hr", 1.0)),
}


def distribution(kind: str, domain_size: int) -> np.ndarray:
    if kind == "interior":
        return 0.5 / domain_size + 0.5 * np.random.default_rng(7).dirichlet(np.ones(domain_size))
    weights = 1.0 / np.arange(1, domain_size + 1) ** 1.3
    return weights / weights.sum()


def cell(mix, kind, domain_size, users, repetitions):
    truth = distribution(kind, domain_size)
    protocols = [local.make(name, epsilon=epsilon, domain_size=domain_size) for name, epsilon in mix]
    joint, baseline = np.zeros(repetitions), np.zeros(repetitions)
    single = np.zeros((repetitions, len(mix)))
    covered = np.zeros((repetitions, domain_size))
    seconds = 0.0
    for repetition in range(repetitions):
        aggregates = []
        for index, protocol in enumerate(protocols):
            rng = np.random.default_rng([repetition, index, 2024])
            items = np.repeat(np.arange(domain_size), rng.multinomial(users, truth))
            aggregates.append(protocol.simulate(items, rng=rng))
        started = time.process_time()
        estimate = local.estimate_jointly(aggregates)
        seconds += time.process_time() - started
        low, high = estimate.confidence_interval(0.95)
        covered[repetition] = (low <= truth) & (truth <= high)
        joint[repetition] = ((estimate.frequencies - truth) ** 2).sum()
        combined = local.estimate_jointly(aggregates, method="inverse-variance")
        baseline[repetition] = ((combined.frequencies - truth) ** 2).sum()
        single[repetition] = [((a.protocol.estimate(a).frequencies - truth) ** 2).sum() for a in aggregates]
    variances = np.array([protocol.variance(users, truth) for protocol in protocols])
    optimum = float((1.0 / (1.0 / variances).sum(0)).sum())
    coverage = covered.mean()
    return {
        "joint": (joint.mean(), joint.std(ddof=1) / np.sqrt(repetitions)),
        "baseline": (baseline.mean(), baseline.std(ddof=1) / np.sqrt(repetitions)),
        "optimum": optimum,
        "single": [(s.mean(), s.std(ddof=1) / np.sqrt(repetitions)) for s in single.T],
        "coverage": (coverage, np.sqrt(coverage * (1 - coverage) / covered.size), np.sqrt(0.95 * 0.05 / repetitions)),
        "seconds": seconds / repetitions,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=100)
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--domains", default="16,64")
    args = parser.parse_args()
    print(f"n = {args.users} per campaign, {args.repetitions} repetitions per row; MSE = summed squared error x 1e4")
    print("| campaigns | data | d | joint | inverse-variance (plug-in) | optimum (true variances) | joint / optimum "
          "| each alone (unbiased) | 95% coverage (pooled SE; per-item SE) | CPU s per joint estimate |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, mix in MIXES.items():
        for kind in ("interior", "zipf"):
            for domain_size in (int(d) for d in args.domains.split(",")):
                row = cell(mix, kind, domain_size, args.users, args.repetitions)
                alone = ", ".join(f"{name} {1e4 * m:.2f}" for (name, _), (m, _) in zip(mix, row["single"]))
                coverage, pooled, per_item = row["coverage"]
                print(f"| {label} | {kind} | {domain_size} | {1e4 * row['joint'][0]:.3f} ± {1e4 * row['joint'][1]:.3f} "
                      f"| {1e4 * row['baseline'][0]:.3f} ± {1e4 * row['baseline'][1]:.3f} | {1e4 * row['optimum']:.3f} "
                      f"| {row['joint'][0] / row['optimum']:.3f} | {alone} | {coverage:.4f} ({pooled:.4f}; {per_item:.4f}) "
                      f"| {row['seconds']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
