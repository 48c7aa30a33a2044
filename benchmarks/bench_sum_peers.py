"""Sums and means per public group, per person, beside PipelineDP 0.3.1's SUM and MEAN.

The table: 2,000 persons, each with 1 + a lognormal number of purchases (median 3) in 4 public categories, amounts
lognormal (median 40); 20 heavy persons hold 100 purchases each of amounts 10 times larger.  At the same epsilon per
person (1), the same bounds (amounts clamped to [0, 500]) and the same contribution bounds (2 categories per person,
4 purchases per person and category), dpdist's ``frame.group_release(..., central.sum | central.mean)`` and
PipelineDP's ``SUM``/``MEAN`` (Laplace noise, public partitions) release each category's sum and mean.  The table is
bounded once here, uniformly (dpdist's ``bounded_groups`` and ``bounded_rows``, seeded), and both libraries release
those rows (their own bounding then drops nothing): the errors are each mechanism's.

Metric: the relative error ``|released - truth| / truth`` per category (truth: the sum or mean of the clamped rows
released), the mean over categories and runs with its standard error, and the median.  CPU seconds per release.

PipelineDP runs in its own environment (``benchmarks/persons_peers/requirements/pipeline_dp.lock``, the worker
``benchmarks/persons_peers/side/worker_pipeline_dp.py``), dpdist in this process.  Usage::

    uv run python benchmarks/bench_sum_peers.py [--runs 20] [--peers pipeline_dp]

Writes ``benchmarks/results/sum_peers.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import tempfile

import numpy as np

from bench_persons_peers import _quiet, side  # benchmarks/, beside this script

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "sum_peers.json"
PERSONS, HEAVY, CATEGORIES = 2_000, 20, 4
BOUNDS, EPSILON, M, K = (0.0, 500.0), 1.0, 2, 4


def table() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(2000)
    counts = 1 + np.floor(rng.lognormal(1.0, 0.8, PERSONS)).astype(np.int64)
    counts[:HEAVY] = 100
    ids = np.repeat(np.arange(PERSONS), counts)
    amounts = rng.lognormal(np.log(40.0), 0.9, ids.size) * np.where(ids < HEAVY, 10.0, 1.0)
    return {"ids": ids, "values": amounts, "groups": rng.integers(0, CATEGORIES, ids.size)}


def bounded(data: dict) -> dict:
    from dpdist.central._contributions import bounded_rows
    from dpdist.central._partitions import bounded_groups

    rng = np.random.default_rng(6565)
    pairs = bounded_groups(data["ids"], data["groups"], M, rng)
    codes = np.unique(data["ids"][pairs] * CATEGORIES + data["groups"][pairs], return_inverse=True)[1].reshape(-1)
    kept = pairs[bounded_rows(codes, K, rng)]
    return {name: values[kept] for name, values in data.items()}


def dpdist_runs(rows: dict, statistic: str, runs: int) -> list:
    import pandas as pd

    from dpdist import central, frame

    data = pd.DataFrame({"person": rows["ids"], "category": rows["groups"], "amount": rows["values"]})
    function = getattr(central, statistic)
    out = []
    for run in range(runs):
        grouped, cpu = _quiet(lambda: frame.group_release(
            data, "amount", "category", function, epsilon=EPSILON / M, bounds=BOUNDS, groups=list(range(CATEGORIES)),
            privacy_id="person", max_groups=M, max_contributions=K, rng=run))
        assert abs(grouped.guarantee.epsilon - EPSILON) < 1e-9
        out.append({"output": {str(key): grouped[key].value for key in grouped.keys()}, "cpu_seconds": cpu})
    return out


def relative_errors(runs: list, truth: dict) -> dict:
    errors = np.array([[abs(run["output"][key] - value) / value for key, value in truth.items()] for run in runs])
    return {"mean": float(errors.mean()), "se": float(errors.mean(axis=1).std(ddof=1) / np.sqrt(len(runs))),
            "median": float(np.median(errors)), "cpu_seconds": float(np.mean([run["cpu_seconds"] for run in runs]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--peers", default="pipeline_dp", help="'' for dpdist alone")
    arguments = parser.parse_args()
    runs, peers = arguments.runs, arguments.peers
    rows = bounded(table())
    clamped = np.clip(rows["values"], *BOUNDS)
    truths = {"sum": {str(g): float(clamped[rows["groups"] == g].sum()) for g in range(CATEGORIES)},
              "mean": {str(g): float(clamped[rows["groups"] == g].mean()) for g in range(CATEGORIES)}}
    results: dict = {"settings": {"persons": PERSONS, "heavy": HEAVY, "rows": int(table()["ids"].size),
                                  "rows_released": int(rows["ids"].size), "bounds": BOUNDS, "epsilon": EPSILON,
                                  "max_groups": M, "max_contributions": K, "runs": runs}}
    with tempfile.TemporaryDirectory() as folder:
        files = {}
        for name in ("ids", "values", "groups"):
            files[name] = os.path.join(folder, f"{name}.npy")
            np.save(files[name], rows[name])
        base = {"epsilon": EPSILON, "bounds": list(BOUNDS), "repeats": runs, "k": K, "m": M,
                "partitions": list(range(CATEGORIES))}
        for statistic in ("sum", "mean"):
            results[statistic] = {"dpdist": relative_errors(dpdist_runs(rows, statistic, runs), truths[statistic])}
            if "pipeline_dp" in peers:
                peer = side("pipeline_dp", {**base, "task": statistic.upper()}, files)
                results[statistic][peer["library"]] = relative_errors(peer["runs"], truths[statistic])
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
