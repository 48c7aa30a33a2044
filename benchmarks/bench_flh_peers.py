"""Fast local hashing: dpdist ``flh`` against pure-LDP's ``FastLHClient`` / ``FastLHServer``.

Both implement FLH (Cormode, Maddock & Maple, VLDB 2021, sec. 3.4): a public family of
``S`` hash functions, each user hashes with one of them picked uniformly and reports
``(j, GRR_g(h_j(v)))``, and the collector keeps the ``S x g`` table of report counts.
Same epsilon, ``d``, ``S`` and ``g = round(e^eps) + 1`` (dpdist's default ``round(e^eps + 1)``
is the same number); the families differ (dpdist: Carter-Wegman seeds from splitmix64,
pure-LDP: xxhash32 with seeds ``0..S-1``).

Data: Zipf(1.1) over ``d`` items, seed 0 (``bench_frequency.population``).  Each repeat ``r``
seeds the randomizers with ``1 + r`` (dpdist: ``rng=1 + r``; pure-LDP draws from the global
``random`` and ``numpy.random`` generators, both seeded with ``1 + r``).  Per repeat:

* privatize -- dpdist ``privatize`` in batches of 10^6; pure-LDP ``privatise`` per user;
* aggregate + estimate -- dpdist ``Aggregator.add`` + ``estimate``; pure-LDP
  ``aggregate_all`` + ``estimate_all`` (its ``O(S d)`` aggregate step runs inside
  ``estimate_all``), divided by ``n``.

Times are per user (median over repeats); ``setup`` is built once per cell and not in the
per-user times (dpdist: ``make`` + a 1000-user pipeline, which hashes the family against every
item; pure-LDP: ``FastLHServer``'s ``S x d`` hash matrix, then passed as ``hash_matrix`` to
the server of every repeat).  Accuracy: MSE and l1 of the frequency estimate against the
empirical frequencies of the data, median over repeats (both estimators are raw, not
clipped).  ``dpdist ibu`` is the same dpdist reports estimated with ``estimator="ibu"`` (EM
on the family's exact channel, which has no fixed-family bias); its time is the estimate alone.

Usage::

    uv run --extra bench python benchmarks/bench_flh_peers.py            # eps 1, 4; n 1e5, 1e6; S 1024
    uv run --extra bench python benchmarks/bench_flh_peers.py --quick    # n = 1e4, 2 repeats (< 1 min)
    uv run --extra bench python benchmarks/bench_flh_peers.py --peer-max-users 100000

Writes the table to stdout and the raw records to ``benchmarks/results/flh_peers_S<S>.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_frequency import population  # noqa: E402  (same data as the other peer benchmarks)

from dpdist import local, metrics  # noqa: E402

BATCH = 1_000_000
WARM_UP = 1000


def _scores(estimate: np.ndarray, truth: np.ndarray) -> dict:
    return {"mse": metrics.mse(estimate, truth), "l1": metrics.l1(estimate, truth)}


def dpdist_cell(values, truth, d, epsilon, hash_count, repeats) -> list[dict]:
    started = time.perf_counter()
    protocol = local.make("flh", epsilon=epsilon, domain_size=d, hash_count=hash_count)
    warm = protocol.aggregator()
    warm.add(protocol.privatize(values[:WARM_UP], rng=0))
    protocol.estimate(warm)
    setup = time.perf_counter() - started
    protocol.estimate(warm, estimator="ibu")  # first-call costs of the EM, outside the timing
    runs, ibu_runs = [], []
    for repeat in range(repeats):
        generator = np.random.default_rng(1 + repeat)
        started = time.perf_counter()
        batches = [protocol.privatize(values[b : b + BATCH], rng=generator) for b in range(0, values.size, BATCH)]
        privatized = time.perf_counter()
        aggregator = protocol.aggregator()
        for batch in batches:
            aggregator.add(batch)
        estimate = protocol.estimate(aggregator).frequencies
        finished = time.perf_counter()
        runs.append({"privatize": privatized - started, "aggregate_estimate": finished - privatized,
                     **_scores(estimate, truth)})
        started = time.perf_counter()
        result = protocol.estimate(aggregator, estimator="ibu")
        ibu_runs.append({"estimate": time.perf_counter() - started, "iterations": result.details["iterations"],
                         **_scores(result.frequencies, truth)})
    return [_summary("dpdist", runs, values.size, setup, protocol.hash_range),
            _summary("dpdist ibu", ibu_runs, values.size, None, protocol.hash_range)]


def pure_ldp_cell(values, truth, d, epsilon, hash_count, repeats) -> dict:
    from pure_ldp.frequency_oracles.local_hashing import FastLHClient, FastLHServer

    identity = lambda x: x  # noqa: E731  (items are already 0..d-1)
    started = time.perf_counter()
    hash_matrix = FastLHServer(epsilon, d, hash_count, use_olh=True, index_mapper=identity).hash_matrix
    setup = time.perf_counter() - started
    runs = []
    for repeat in range(repeats):
        random.seed(1 + repeat)
        np.random.seed(1 + repeat)
        client = FastLHClient(epsilon, d, hash_count, use_olh=True, index_mapper=identity)
        server = FastLHServer(epsilon, d, hash_count, use_olh=True, index_mapper=identity, hash_matrix=hash_matrix)
        items = values.tolist()
        started = time.perf_counter()
        reports = [client.privatise(item) for item in items]
        privatized = time.perf_counter()
        server.aggregate_all(reports)
        estimate = np.asarray(server.estimate_all(range(d), suppress_warnings=True), dtype=np.float64) / values.size
        finished = time.perf_counter()
        runs.append({"privatize": privatized - started, "aggregate_estimate": finished - privatized,
                     **_scores(estimate, truth)})
    return _summary("pure-ldp", runs, values.size, setup, server.g)


def _summary(implementation, runs, n, setup, g) -> dict:
    record = {"implementation": implementation, "n": n, "g": g, "repeats": len(runs), "setup_s": setup}
    for key in runs[0]:
        record[key] = float(np.median([run[key] for run in runs]))
    return record


def _us(seconds, n):
    return f"{1e6 * seconds / n:.3g}"


def format_table(records) -> str:
    lines = [
        "| eps | n (dpdist) | implementation | n timed | setup (s) | privatize (us/user) | aggregate+estimate "
        "(us/user) | peer/dpdist privatize | peer/dpdist agg+est | MSE | l1 |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for record in records:
        mine = [r for r in record["rows"]]
        base = next(r for r in mine if r["implementation"] == "dpdist")
        for r in mine:
            n = r["n"]
            setup = "" if r["setup_s"] is None else f"{r['setup_s']:.3g}"
            if "privatize" in r:
                privatize, aggregate = _us(r["privatize"], n), _us(r["aggregate_estimate"], n)
            else:
                privatize, aggregate = "", f"{_us(r['estimate'], n)} (estimate only, {r['iterations']:.0f} it.)"
            ratios = ["", ""]
            if r["implementation"] == "pure-ldp":
                ratios = [f"{(r['privatize'] / n) / (base['privatize'] / base['n']):.0f}x",
                          f"{(r['aggregate_estimate'] / n) / (base['aggregate_estimate'] / base['n']):.0f}x"]
            lines.append(
                f"| {record['epsilon']:g} | {record['n']:.0e} | {r['implementation']} | {n:.0e} | {setup} | "
                f"{privatize} | {aggregate} | {ratios[0]} | {ratios[1]} | {r['mse']:.3g} | {r['l1']:.3g} |"
            )
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d", type=int, default=1024)
    parser.add_argument("--hash-count", type=int, default=1024, help="S, the family size (both libraries)")
    parser.add_argument("--epsilons", default="1,4")
    parser.add_argument("--users", default="100000,1000000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--peer-max-users", type=int, default=1_000_000,
                        help="pure-LDP runs on the first min(n, this) users (per-user figures)")
    parser.add_argument("--quick", action="store_true", help="n = 10^4, 2 repeats")
    args = parser.parse_args(argv)
    users = [10_000] if args.quick else [int(u) for u in args.users.split(",")]
    repeats = 2 if args.quick else args.repeats
    records = []
    for epsilon in [float(e) for e in args.epsilons.split(",")]:
        for n in users:
            values, truth = population(n, args.d)
            rows = dpdist_cell(values, truth, args.d, epsilon, args.hash_count, repeats)
            peer_n = min(n, args.peer_max_users)
            peer_values, peer_truth = population(peer_n, args.d)
            rows.append(pure_ldp_cell(peer_values, peer_truth, args.d, epsilon, args.hash_count, repeats))
            records.append({"epsilon": epsilon, "n": n, "d": args.d, "S": args.hash_count, "rows": rows})
            print(json.dumps(records[-1]), file=sys.stderr, flush=True)
    print(f"FLH, d = {args.d}, S = {args.hash_count}, Zipf(1.1), median of {repeats} repeats")
    print(format_table(records))
    name = "flh_peers-quick.json" if args.quick else f"flh_peers_S{args.hash_count}.json"
    output = Path(__file__).parent / "results" / name
    output.parent.mkdir(exist_ok=True)
    output.write_text(json.dumps(records, indent=1))


if __name__ == "__main__":
    main()
