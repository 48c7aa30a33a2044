"""OpenDP 0.16 (its Polars context, polars 1.36.1), in its own environment: deciles per person for
``bench_persons_peers.py``, and deciles per public group (one ``group_by`` query) for ``bench_query.py``.  Reads the job (JSON) from argv[1], prints the results.

OpenDP's documented user-level API: ``dp.unit_of(contributions=k, identifier="user")``, ``truncate_per_group(k)``
(a uniform sample of each person's rows) and one ``dp.quantile`` per decile over the candidates (the exponential
mechanism; the context splits epsilon evenly over the nine), on values clipped to the bounds.  OpenDP has no CDF
release, and its grouped counts with private keys are not run here.  Imports NumPy, Polars and OpenDP only.
"""

import json
import sys
import time
from importlib.metadata import version

import numpy as np
import opendp.prelude as dp
import polars as pl

dp.enable_features("contrib")


def deciles(job, ids, values):
    low, high = job["bounds"]
    frame = pl.LazyFrame({"user": ids, "amount": values})
    context = dp.Context.compositor(
        data=frame, privacy_unit=dp.unit_of(contributions=job["k"], identifier="user"),
        privacy_loss=dp.loss_of(epsilon=job["epsilon"]), split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=int(ids.size))])
    candidates = list(np.linspace(low, high, job["candidates"]))
    column = pl.col("amount").fill_null(low).clip(low, high)
    query = context.query().truncate_per_group(job["k"]).select(
        [column.dp.quantile(alpha, candidates).alias(f"q{i}") for i, alpha in enumerate(np.arange(1, 10) / 10)])
    released = query.release().collect()
    return [float(released[f"q{i}"][0]) for i in range(9)]


def grouped_deciles(job, groups, values):
    """One query: ``group_by`` the public keys (a margin whose keys are invariant) and nine ``dp.quantile`` over the
    candidate grid, one row per person; the context splits epsilon evenly over the nine."""
    low, high = job["bounds"]
    frame = pl.LazyFrame({"region": groups, "income": values})
    context = dp.Context.compositor(
        data=frame, privacy_unit=dp.unit_of(contributions=1), privacy_loss=dp.loss_of(epsilon=job["epsilon"]),
        split_evenly_over=1, margins=[dp.polars.Margin(by=["region"], invariant="keys", max_length=int(values.size))])
    candidates = list(np.arange(low, high + job["step"] / 2, job["step"]))
    column = pl.col("income").fill_null(low).clip(low, high)
    query = context.query().group_by("region").agg(
        [column.dp.quantile(alpha, candidates).alias(f"q{i}") for i, alpha in enumerate(np.arange(1, 10) / 10)])
    released = query.release().collect()
    return {row["region"]: [float(row[f"q{i}"]) for i in range(9)] for row in released.iter_rows(named=True)}


def main():
    job = json.loads(open(sys.argv[1]).read())
    ids, values = np.load(job["ids"]), np.load(job["values"])
    runs = []
    for _ in range(job["repeats"]):
        start = time.process_time()
        if job.get("task") == "grouped deciles":
            output = grouped_deciles(job, ids, values)
        else:
            output = deciles(job, ids, values)
        runs.append({"output": output, "cpu_seconds": time.process_time() - start})
    print(json.dumps({"library": f"opendp {version('opendp')} (polars {version('polars')})", "runs": runs}))


if __name__ == "__main__":
    main()
