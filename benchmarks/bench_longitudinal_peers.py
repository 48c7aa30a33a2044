"""Longitudinal protocols: dpdist ``l-grr``, ``l-osue``, ``dbitflippm``, ``loloha`` against multi-freq-ldpy.

Accuracy of one round's frequency estimate (each user sends one report; the permanent
round is drawn for that report, as in the peers' clients).  Data: ``n`` users from
Zipf(1.1) truncated to ``d`` items (draws above ``d`` are redrawn), generator seed 0; the truth
is the empirical frequency vector.  Each cell runs ``trials`` independent rounds:

* dpdist: ``privatize(values, rng=default_rng([method_id, trial, 0]))`` then ``estimate``, MSE
  of the raw unbiased estimate ("dpdist") and of its ``clip-normalize`` post-processing
  ("dpdist c-n", the same post-processing the peer's ``*_Aggregator_MI`` applies: negatives
  to 0, then divide by the sum), and the analytic MSE ``mean_v Var[f_v]`` of the raw estimate;
* multi-freq-ldpy (``numpy.random.seed(trial + 1)``): its ``*_Client`` per user, then its
  ``*_Aggregator_MI``: ``L_GRR``, ``L_OSUE``, ``dBitFlipPM`` (``b = d`` buckets), ``L_LH`` with
  ``optimal=True`` (OLOLOHA's g) and ``optimal=False`` (BiLOLOHA, g = 2).

MSE = mean over items of the squared error, averaged over trials.

Usage::

    uv run --extra bench python benchmarks/bench_longitudinal_peers.py            # n 2e4, d 32, 5 trials
    uv run --extra bench python benchmarks/bench_longitudinal_peers.py --quick    # n 5e3, 2 trials

Writes the table to stdout and the raw records to ``benchmarks/results/longitudinal_peers*.json``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import numpy as np
from multi_freq_ldpy.long_freq_est.dBitFlipPM import dBitFlipPM_Aggregator_MI, dBitFlipPM_Client
from multi_freq_ldpy.long_freq_est.L_GRR import L_GRR_Aggregator_MI, L_GRR_Client
from multi_freq_ldpy.long_freq_est.L_LH import L_LH_Aggregator_MI, L_LH_Client
from multi_freq_ldpy.long_freq_est.L_OSUE import L_OSUE_Aggregator_MI, L_OSUE_Client

from dpdist import local, postprocess

ROOT_SEED = 0


def zipf_values(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    values = np.zeros(0, dtype=np.int64)
    while values.size < n:
        draws = rng.zipf(1.1, 4 * n) - 1
        values = np.concatenate([values, draws[draws < d]])
    return values[:n]


def cells(d: int):
    """(method id, label, dpdist name, dpdist params, peer client, peer aggregator) per epsilon pair."""
    for eps_inf, eps_1 in [(2.0, 1.0), (4.0, 2.0)]:
        yield (1, "l-grr", eps_inf, eps_1, "l-grr", {"epsilon": eps_inf, "epsilon_1": eps_1},
               lambda v: L_GRR_Client(int(v), d, eps_inf, eps_1),
               lambda reports: L_GRR_Aggregator_MI(reports, d, eps_inf, eps_1))
        yield (2, "l-osue", eps_inf, eps_1, "l-osue", {"epsilon": eps_inf, "epsilon_1": eps_1},
               lambda v: L_OSUE_Client(int(v), d, eps_inf, eps_1),
               lambda reports: L_OSUE_Aggregator_MI(reports, eps_inf, eps_1))
        yield (3, "loloha optimal", eps_inf, eps_1, "loloha", {"epsilon": eps_inf, "epsilon_1": eps_1},
               lambda v: L_LH_Client(int(v), d, eps_inf, eps_1, True),
               lambda reports: L_LH_Aggregator_MI(reports, d, eps_inf, eps_1, True))
        yield (4, "loloha binary", eps_inf, eps_1, "loloha",
               {"epsilon": eps_inf, "epsilon_1": eps_1, "variant": "binary"},
               lambda v: L_LH_Client(int(v), d, eps_inf, eps_1, False),
               lambda reports: L_LH_Aggregator_MI(reports, d, eps_inf, eps_1, False))
        for method, bits in ((5, 1), (6, 8)):
            yield (method, f"dbitflippm d'={bits}", eps_inf, eps_inf, "dbitflippm",
                   {"epsilon": eps_inf, "sampled_bits": bits},
                   lambda v, bits=bits: dBitFlipPM_Client(int(v), d, d, bits, eps_inf),
                   lambda reports, bits=bits: dBitFlipPM_Aggregator_MI(reports, d, bits, eps_inf))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n, d, trials = (5_000, 32, 2) if args.quick else (20_000, 32, 5)
    values = zipf_values(n, d, np.random.default_rng(ROOT_SEED))
    truth = np.bincount(values, minlength=d) / n
    records = []
    print(f"n = {n}, d = {d}, Zipf(1.1), {trials} trials; MSE x 1e4")
    print(f"{'protocol':18} {'eps_inf':>7} {'eps_1':>5} {'g':>3} {'analytic':>9} {'dpdist':>8} {'dpdist c-n':>10} "
          f"{'peer (c-n)':>10} {'dpdist s':>8} {'peer s':>7}")
    for method, label, eps_inf, eps_1, name, params, client, aggregate in cells(d):
        proto = local.make(name, domain_size=d, **params)
        raw, clipped, peer, times = [], [], [], [0.0, 0.0]
        for trial in range(trials):
            start = time.perf_counter()
            estimate = proto.estimate(proto.privatize(values, rng=np.random.default_rng([method, trial, ROOT_SEED])))
            times[0] += time.perf_counter() - start
            raw.append(np.mean((estimate.frequencies - truth) ** 2))
            clipped.append(np.mean((postprocess.apply("clip-normalize", estimate.frequencies) - truth) ** 2))
            np.random.seed(trial + 1)
            start = time.perf_counter()
            reports = [client(v) for v in values]
            peer_estimate = np.asarray(aggregate(reports))
            times[1] += time.perf_counter() - start
            peer.append(np.mean((peer_estimate - truth) ** 2))
        analytic = float(np.mean(proto.variance(n, truth)))
        g = getattr(proto, "hash_range", "")
        record = {
            "protocol": label, "epsilon_inf": eps_inf, "epsilon_1": eps_1, "g": g, "n": n, "d": d, "trials": trials,
            "analytic_mse": analytic, "dpdist_mse": float(np.mean(raw)), "dpdist_clip_normalize_mse": float(np.mean(clipped)),
            "peer_mse": float(np.mean(peer)), "dpdist_seconds": times[0] / trials, "peer_seconds": times[1] / trials,
        }
        records.append(record)
        print(f"{label:18} {eps_inf:7.1f} {eps_1:5.1f} {g!s:>3} {1e4 * analytic:9.3f} {1e4 * record['dpdist_mse']:8.3f} "
              f"{1e4 * record['dpdist_clip_normalize_mse']:10.3f} {1e4 * record['peer_mse']:10.3f} "
              f"{record['dpdist_seconds']:8.3f} {record['peer_seconds']:7.2f}", flush=True)
    out = pathlib.Path(__file__).parent / "results" / f"longitudinal_peers{'_quick' if args.quick else ''}.json"
    out.write_text(json.dumps({"root_seed": ROOT_SEED, "records": records}, indent=1))


if __name__ == "__main__":
    main()
