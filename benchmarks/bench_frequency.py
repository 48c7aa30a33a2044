"""Speed, memory and accuracy of dpdist's categorical oracles against peer libraries.

Side by side, on the same data (Zipf(1.1) over ``d`` items, ``n`` users, seed 0),
for GRR, OUE, SUE, OLH, HR and SS:

* ``dpdist``           -- per-user path: ``privatize`` + ``Aggregator.add`` + ``estimate``;
* ``dpdist-simulate``  -- ``simulate`` + ``estimate`` (exact aggregate sampler where one exists);
* ``pure-ldp``         -- pure-LDP 1.2 clients/servers (``privatise``, ``aggregate_all``,
  ``estimate_all``);
* ``multi-freq-ldpy``  -- multi-freq-ldpy 0.2 ``*_Client`` per user + ``*_Aggregator_MI``.

Each cell runs in its own subprocess (so its peak RSS is its own) with a
timeout; every pipeline is warmed up on 1000 users (lazy imports, numba
compilation), then timed up to 5 times within 5 s and the median reported.
MSE is over the ``d`` items against the true frequencies: ``mse_raw`` for the
unbiased estimate (dpdist, pure-ldp), ``mse_clip_normalize`` after
clipping negatives and renormalizing, which is what multi-freq-ldpy's ``MI``
returns, so each peer is compared with dpdist under its own post-processing.

Usage::

    uv run --extra bench python benchmarks/bench_frequency.py            # n=1e5, d=1024, eps=1
    uv run --extra bench python benchmarks/bench_frequency.py --large    # dpdist only, n=1e7
    uv run --extra bench python benchmarks/bench_frequency.py --protocols grr,oue --timeout 60

Writes the table to stdout and the raw records to ``benchmarks/results/frequency*.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

PROTOCOLS = ["grr", "oue", "sue", "olh", "hr", "ss"]
IMPLEMENTATIONS = ["dpdist", "dpdist-simulate", "pure-ldp", "multi-freq-ldpy"]
#: users per batch on dpdist's per-user path for large n (a collector reads reports in batches)
BATCH = 1_000_000
#: every pipeline first runs on this many users, untimed
WARM_UP = 1000
#: timed runs per cell (median reported), fewer when they exceed the budget in seconds
REPEATS, REPEAT_BUDGET = 5, 5.0


def population(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    generator = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, d + 1) ** 1.1
    values = generator.choice(d, size=n, p=weights / weights.sum())
    return values, np.bincount(values, minlength=d) / n


def _clip_normalize(frequencies: np.ndarray) -> np.ndarray:
    clipped = np.clip(frequencies, 0.0, None)
    return clipped / clipped.sum() if clipped.sum() > 0 else clipped


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ---------------------------------------------------------------------- implementations
def dpdist_pipeline(protocol_name, d, epsilon, simulate):
    from dpdist import local

    protocol = local.make(protocol_name, epsilon=epsilon, domain_size=d)

    def pipeline(values):
        if simulate:
            aggregator = protocol.simulate(values, rng=1)
        else:
            aggregator = protocol.aggregator()
            generator = np.random.default_rng(1)
            for begin in range(0, values.size, BATCH):
                aggregator.add(protocol.privatize(values[begin : begin + BATCH], rng=generator))
        return protocol.estimate(aggregator).frequencies

    return pipeline, None


def pure_ldp_pipeline(protocol_name, d, epsilon):
    identity = lambda x: x  # noqa: E731  (items are already 0..d-1)
    if protocol_name not in ("grr", "oue", "sue", "olh", "hr"):
        return None

    def pipeline(values):
        client, server = _pure_ldp_pair(protocol_name, d, epsilon, identity)
        reports = [client.privatise(item) for item in values.tolist()]
        server.aggregate_all(reports)
        return np.asarray(server.estimate_all(range(d), suppress_warnings=True), dtype=np.float64) / values.size

    return pipeline, None


def _pure_ldp_pair(protocol_name, d, epsilon, identity):
    from pure_ldp.frequency_oracles import (
        DEClient,
        DEServer,
        HadamardResponseClient,
        HadamardResponseServer,
        LHClient,
        LHServer,
        UEClient,
        UEServer,
    )

    if protocol_name == "grr":
        client, server = DEClient(epsilon, d, index_mapper=identity), DEServer(epsilon, d, index_mapper=identity)
    elif protocol_name in ("oue", "sue"):
        oue = protocol_name == "oue"
        client = UEClient(epsilon, d, use_oue=oue, index_mapper=identity)
        server = UEServer(epsilon, d, use_oue=oue, index_mapper=identity)
    elif protocol_name == "olh":
        client = LHClient(epsilon, d, use_olh=True, index_mapper=identity)
        server = LHServer(epsilon, d, use_olh=True, index_mapper=identity)
    elif protocol_name == "hr":
        server = HadamardResponseServer(epsilon, d, index_mapper=identity)
        client = HadamardResponseClient(epsilon, d, server.get_hash_funcs(), index_mapper=identity)
    return client, server


def multi_freq_ldpy_pipeline(protocol_name, d, epsilon):
    from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, SS, UE

    if protocol_name == "grr":
        client, aggregate = (lambda v: GRR.GRR_Client(v, d, epsilon)), (lambda r: GRR.GRR_Aggregator_MI(r, d, epsilon))
    elif protocol_name in ("oue", "sue"):
        optimal = protocol_name == "oue"
        client = lambda v: UE.UE_Client(v, d, epsilon, optimal)  # noqa: E731
        aggregate = lambda r: UE.UE_Aggregator_MI(r, epsilon, optimal)  # noqa: E731
    elif protocol_name == "olh":
        client = lambda v: LH.LH_Client(v, d, epsilon, True)  # noqa: E731
        aggregate = lambda r: LH.LH_Aggregator_MI(r, d, epsilon, True)  # noqa: E731
    elif protocol_name == "ss":
        client, aggregate = (lambda v: SS.SS_Client(v, d, epsilon)), (lambda r: SS.SS_Aggregator_MI(r, d, epsilon))
    else:
        return None

    def pipeline(values):
        reports = [client(item) for item in values.tolist()]
        return np.asarray(aggregate(reports), dtype=np.float64)

    return pipeline, "MI clips and renormalizes"


def run_cell(implementation, protocol_name, n, d, epsilon) -> dict:
    values, truth = population(n, d)
    if implementation.startswith("dpdist"):
        built = dpdist_pipeline(protocol_name, d, epsilon, simulate=implementation == "dpdist-simulate")
    elif implementation == "pure-ldp":
        built = pure_ldp_pipeline(protocol_name, d, epsilon)
    else:
        built = multi_freq_ldpy_pipeline(protocol_name, d, epsilon)
    if built is None:
        return {"implementation": implementation, "protocol": protocol_name, "status": "not offered"}
    pipeline, note = built
    pipeline(values[:WARM_UP])  # first-call costs (lazy imports, numba compilation) outside the timing
    baseline = _peak_rss_mb()
    times = []
    while True:
        start = time.perf_counter()
        estimate = pipeline(values)
        times.append(time.perf_counter() - start)
        if len(times) == REPEATS or sum(times) > REPEAT_BUDGET:
            break
    seconds = float(np.median(times))
    record = {
        "implementation": implementation,
        "protocol": protocol_name,
        "n": n,
        "d": d,
        "epsilon": epsilon,
        "status": "ok",
        "seconds": seconds,
        "runs": len(times),
        "peak_rss_mb": _peak_rss_mb(),
        "rss_before_mb": baseline,
        "mse_raw": float(np.mean((estimate - truth) ** 2)),
        "mse_clip_normalize": float(np.mean((_clip_normalize(estimate) - truth) ** 2)),
        "estimate_sum": float(estimate.sum()),
    }
    if note:
        record["note"] = note
    return record


# ---------------------------------------------------------------------- driver
def _spawn(implementation, protocol_name, n, d, epsilon, timeout) -> dict:
    command = [sys.executable, __file__, "--cell", implementation, protocol_name, str(n), str(d), str(epsilon)]
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=os.environ)
    except subprocess.TimeoutExpired:
        return {"implementation": implementation, "protocol": protocol_name, "n": n, "status": f"timeout > {timeout} s"}
    if completed.returncode != 0:
        tail = completed.stderr.strip().splitlines()[-1:] or ["?"]
        return {"implementation": implementation, "protocol": protocol_name, "n": n, "status": f"error: {tail[0]}"}
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _format(records: list[dict]) -> str:
    lines = [
        "| protocol | implementation | time (s) | speed-up vs fastest peer | peak RSS (MB) | MSE raw | MSE clip+norm |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for protocol_name in PROTOCOLS:
        rows = [r for r in records if r["protocol"] == protocol_name]
        peers = [r["seconds"] for r in rows if not r["implementation"].startswith("dpdist") and r["status"] == "ok"]
        fastest = min(peers) if peers else None
        for r in rows:
            if r["status"] != "ok":
                lines.append(f"| {protocol_name} | {r['implementation']} | {r['status']} | | | | |")
                continue
            speedup = f"{fastest / r['seconds']:.0f}x" if fastest and r["implementation"].startswith("dpdist") else ""
            lines.append(
                f"| {protocol_name} | {r['implementation']} | {r['seconds']:.3g} | {speedup} | {r['peak_rss_mb']:.0f} "
                f"| {r['mse_raw']:.3g} | {r['mse_clip_normalize']:.3g} |"
            )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cell", nargs=5, metavar=("IMPL", "PROTOCOL", "N", "D", "EPSILON"))
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=1024)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--protocols", default=",".join(PROTOCOLS))
    parser.add_argument("--implementations", default=",".join(IMPLEMENTATIONS))
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--large", action="store_true", help="dpdist alone at n = 10^7")
    arguments = parser.parse_args(argv)
    if arguments.cell:
        implementation, protocol_name, n, d, epsilon = arguments.cell
        print(json.dumps(run_cell(implementation, protocol_name, int(n), int(d), float(epsilon))))
        return
    n = 10_000_000 if arguments.large else arguments.n
    implementations = ["dpdist", "dpdist-simulate"] if arguments.large else arguments.implementations.split(",")
    records = []
    for protocol_name in arguments.protocols.split(","):
        for implementation in implementations:
            record = _spawn(implementation, protocol_name, n, arguments.d, arguments.epsilon, arguments.timeout)
            print(json.dumps(record), file=sys.stderr, flush=True)
            if record["status"] != "not offered":
                records.append(record)
    output = Path(__file__).parent / "results" / f"frequency_n{n}.json"
    output.parent.mkdir(exist_ok=True)
    kept = json.loads(output.read_text()) if output.exists() else []  # a partial run updates its cells only
    done = {(r["implementation"], r["protocol"]) for r in records}
    kept = [r for r in kept if (r["implementation"], r["protocol"]) not in done]
    output.write_text(json.dumps(kept + records, indent=1))
    print(_format(records))


if __name__ == "__main__":
    main()
