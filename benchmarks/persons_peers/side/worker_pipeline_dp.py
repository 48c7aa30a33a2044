"""PipelineDP 0.3.1 (its LocalBackend), in its own environment: deciles, a CDF from 99 percentiles and counts per group
with private keys, per person, for ``bench_persons_peers.py``; sums and means per public group for
``bench_sum_peers.py``; the keys each partition selection strategy keeps, and counts and sums per public key with
Gaussian noise, for ``bench_many_keys.py``.  Reads the job (JSON) from argv[1], prints the results.

Every call is PipelineDP's documented API: ``DPEngine.aggregate`` with ``AggregateParams`` (``max_partitions_contributed``,
``max_contributions_per_partition``: its contribution bounding by sampling each person's rows and partitions) and a
``NaiveBudgetAccountant`` of the per-person epsilon; public partition ``[0]`` for the column's release, private
partitions (truncated geometric selection, its default) for the grouped counts.  Imports NumPy and PipelineDP only.
"""

import json
import sys
import time
from importlib.metadata import version

import numpy as np
import pipeline_dp


def _run(rows, params, extractors, epsilon, delta, public):
    budget = pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon, total_delta=delta)
    engine = pipeline_dp.DPEngine(budget, pipeline_dp.LocalBackend())
    result = engine.aggregate(rows, params, extractors, public_partitions=public)
    budget.compute_budgets()
    return list(result)


def percentiles(job, ids, values, percents):
    rows = list(zip(ids.tolist(), values.tolist()))
    params = pipeline_dp.AggregateParams(
        metrics=[pipeline_dp.Metrics.PERCENTILE(p) for p in percents], max_partitions_contributed=1,
        max_contributions_per_partition=job["k"], min_value=job["bounds"][0], max_value=job["bounds"][1],
        noise_kind=pipeline_dp.NoiseKind.LAPLACE)
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: 0,
                                            value_extractor=lambda r: r[1])
    ((_, metrics),) = _run(rows, params, extractors, job["epsilon"], 0.0, [0])
    return [float(v) for v in metrics]


def counts(job, ids, groups):
    rows = list(zip(ids.tolist(), groups.tolist()))
    params = pipeline_dp.AggregateParams(
        metrics=[pipeline_dp.Metrics.COUNT], max_partitions_contributed=job["m"],
        max_contributions_per_partition=job["k"], noise_kind=pipeline_dp.NoiseKind.LAPLACE)
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: r[1],
                                            value_extractor=lambda r: 0)
    found = _run(rows, params, extractors, job["epsilon"], job["delta"], None)
    return {str(key): float(metrics.count) for key, metrics in found}


def sums(job, ids, values, groups, metric):
    """SUM or MEAN per public partition ``job["partitions"]``, values clamped to the bounds."""
    rows = list(zip(ids.tolist(), groups.tolist(), values.tolist()))
    params = pipeline_dp.AggregateParams(
        metrics=[getattr(pipeline_dp.Metrics, metric)], max_partitions_contributed=job["m"],
        max_contributions_per_partition=job["k"], min_value=job["bounds"][0], max_value=job["bounds"][1],
        noise_kind=pipeline_dp.NoiseKind.LAPLACE)
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: r[1],
                                            value_extractor=lambda r: r[2])
    found = _run(rows, params, extractors, job["epsilon"], 0.0, job["partitions"])
    return {str(key): float(getattr(metrics, metric.lower())) for key, metrics in found}


def select(job, ids, groups):
    """The keys ``select_partitions`` keeps with the strategy ``job["strategy"]`` at ``max_partitions_contributed``."""
    rows = list(zip(ids.tolist(), groups.tolist()))
    strategy = getattr(pipeline_dp.PartitionSelectionStrategy, job["strategy"])
    params = pipeline_dp.SelectPartitionsParams(max_partitions_contributed=job["m"],
                                                partition_selection_strategy=strategy)
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: r[1])
    budget = pipeline_dp.NaiveBudgetAccountant(total_epsilon=job["epsilon"], total_delta=job["delta"])
    engine = pipeline_dp.DPEngine(budget, pipeline_dp.LocalBackend())
    result = engine.select_partitions(rows, params, extractors)
    budget.compute_budgets()
    return sorted(int(key) for key in result)


def gaussian(job, ids, values, groups):
    """One metric (COUNT, PRIVACY_ID_COUNT or SUM) per public key with Gaussian noise, the whole budget its own."""
    rows = list(zip(ids.tolist(), groups.tolist(), values.tolist()))
    metric = getattr(pipeline_dp.Metrics, job["metric"])
    params = pipeline_dp.AggregateParams(
        metrics=[metric], noise_kind=pipeline_dp.NoiseKind.GAUSSIAN, max_partitions_contributed=job["m"],
        max_contributions_per_partition=job["k"], min_value=job["bounds"][0], max_value=job["bounds"][1])
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: r[1],
                                            value_extractor=lambda r: r[2])
    found = _run(rows, params, extractors, job["epsilon"], job["delta"], job["partitions"])
    name = {"COUNT": "count", "PRIVACY_ID_COUNT": "privacy_id_count", "SUM": "sum"}[job["metric"]]
    return {str(key): float(getattr(metrics, name)) for key, metrics in found}


def main():
    job = json.loads(open(sys.argv[1]).read())
    ids, values = np.load(job["ids"]), np.load(job["values"])
    groups = np.load(job["groups"]) if job.get("groups") else None
    runs = []
    for _ in range(job["repeats"]):
        start = time.process_time()
        if job["task"] == "deciles":
            out = percentiles(job, ids, values, list(range(10, 100, 10)))
        elif job["task"] == "cdf":
            out = percentiles(job, ids, values, list(range(1, 100)))
        elif job["task"] in ("SUM", "MEAN"):
            out = sums(job, ids, values, groups, job["task"])
        elif job["task"] == "select":
            out = select(job, ids, groups)
        elif job["task"] == "gaussian":
            out = gaussian(job, ids, values, groups)
        else:
            out = counts(job, ids, groups)
        runs.append({"output": out, "cpu_seconds": time.process_time() - start})
    print(json.dumps({"library": f"pipeline-dp {version('pipeline-dp')} (python-dp {version('python-dp')})",
                      "runs": runs}))


if __name__ == "__main__":
    main()
