"""Contribution bounding at scale: 10^8 rows of 10^6 persons bounded on Dask, on Spark and in one process, then released.

The table is drawn block by block where it is used (100 blocks of 10^6 rows; block ``b`` from
``default_rng([2026, b])``): each row's person is ``floor(P U^2)`` (heavy tailed: person 0 holds about 10^5 rows,
the last ones about 50; 100 on average), its value a lognormal amount with a level of its person's.  Each person's
rows are bounded to ``max_contributions`` (8) by per-person reservoirs keyed by a salted hash of the id
(:mod:`dpdist.distributed._reservoirs`), merged exactly: on Dask (the threaded scheduler, 2 threads, blocks as
delayed tasks), on Spark (``local[2]``, the blocks made by a ``mapInArrow`` over ``spark.range``, one partition per
block) and in one process (:func:`dpdist.distributed.bound_blocks`); the three states must be equal.  The merged
reservoir is then released on the driver (deciles by the tree, per person).

Wall and CPU seconds are measured per engine (Spark: the JVM's and its Python workers', by psutil; the JVM start and
a warm-up job outside the timing).  Usage::

    /work/wt/slot uv run python benchmarks/bench_persons_scale.py [--rows 100000000] [--persons 1000000]

Writes ``benchmarks/results/persons_scale.json`` and prints a table (docs/reference/benchmarks/central.md quotes it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

K = 8
SEED = 11


def make_block(index: int, rows: int, persons: int) -> tuple[np.ndarray, np.ndarray]:
    """Block ``index``: ``(ids, amounts)`` of ``rows`` rows."""
    level = np.random.default_rng([2026, 10**9]).standard_normal(persons)  # each person's own level
    generator = np.random.default_rng([2026, index])
    u = generator.random(rows)
    ids = (persons * u * u).astype(np.int64)
    amounts = np.exp(3.0 + 0.5 * level[ids] + 0.8 * generator.standard_normal(rows))
    return ids, amounts


def _cpu_of_children() -> float:
    import psutil

    total = 0.0
    for process in psutil.Process(os.getpid()).children(recursive=True):
        try:
            times = process.cpu_times()
            total += times.user + times.system
        except psutil.Error:
            pass
    return total


def one_process(blocks: int, rows: int, persons: int):
    from dpdist import distributed

    return distributed.bound_blocks((make_block(b, rows, persons) for b in range(blocks)), K, seed=SEED)


def on_dask(blocks: int, rows: int, persons: int):
    import dask
    import dask.array as da
    from dask.delayed import delayed

    from dpdist import distributed

    made = [delayed(make_block, pure=True)(b, rows, persons) for b in range(blocks)]
    ids = da.concatenate([da.from_delayed(block[0], shape=(rows,), dtype=np.int64) for block in made])
    values = da.concatenate([da.from_delayed(block[1], shape=(rows,), dtype=np.float64) for block in made])
    with dask.config.set(scheduler="threads", num_workers=2):
        return distributed.bound_contributions(values, ids, K, seed=SEED, split_every=8)


def on_spark(blocks: int, rows: int, persons: int):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from dpdist.distributed import spark as dpdist_spark

    session = (SparkSession.builder.master("local[2]").appName("bench-persons")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.memory", "6g").config("spark.driver.maxResultSize", "4g")
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(rows)).getOrCreate())
    session.sparkContext.setLogLevel("ERROR")

    def generate(batches):
        import pyarrow as pa

        for batch in batches:
            for index in batch.column(0).to_pylist():
                ids, amounts = make_block(int(index), rows, persons)
                yield pa.RecordBatch.from_pydict({"user": ids, "amount": amounts})

    try:
        frame = session.range(blocks, numPartitions=blocks).mapInArrow(generate, "user long, amount double")
        dpdist_spark.bound_contributions(session.range(2, numPartitions=2).mapInArrow(
            generate_small(persons), "user long, amount double"), "amount", "user", K, seed=SEED)  # warm-up
        before = _cpu_of_children()
        start, cpu = time.perf_counter(), time.process_time()
        state = dpdist_spark.bound_contributions(frame, "amount", "user", K, seed=SEED)
        seconds, driver = time.perf_counter() - start, time.process_time() - cpu
        return state, seconds, driver + _cpu_of_children() - before
    finally:
        session.stop()


def generate_small(persons: int):
    def generate(batches):
        import pyarrow as pa

        for batch in batches:
            for index in batch.column(0).to_pylist():
                ids, amounts = make_block(int(index), 1000, persons)
                yield pa.RecordBatch.from_pydict({"user": ids, "amount": amounts})

    return generate


def timed(function, *args):
    start, cpu = time.perf_counter(), time.process_time()
    state = function(*args)
    return state, time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10**8)
    parser.add_argument("--persons", type=int, default=10**6)
    parser.add_argument("--block", type=int, default=10**6)
    parser.add_argument("--engines", default="one,dask,spark")
    args = parser.parse_args()
    blocks = args.rows // args.block
    results: dict = {"rows": blocks * args.block, "persons": args.persons, "blocks": blocks, "max_contributions": K,
                     "machine": {"cpus": os.cpu_count(), "python": platform.python_version()}, "engines": {}}
    states = {}
    for engine in args.engines.split(","):
        if engine == "spark":
            state, seconds, cpu = on_spark(blocks, args.block, args.persons)
        else:
            state, seconds, cpu = timed({"one": one_process, "dask": on_dask}[engine], blocks, args.block, args.persons)
        states[engine] = state
        results["engines"][engine] = {"wall_seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
                                      "cpu_ns_per_row": round(cpu / (blocks * args.block) * 1e9, 1),
                                      "kept": state.kept, "dropped": state.dropped}
        print(f"{engine:6} {seconds:7.1f} s wall, {cpu:7.1f} CPU s ({cpu / (blocks * args.block) * 1e9:5.0f} ns/row), "
              f"kept {state.kept:,} of {state.rows:,} rows", flush=True)
    names = list(states)
    results["equal_states"] = all(states[name] == states[names[0]] for name in names[1:])
    print(f"states equal across {names}: {results['equal_states']}")
    from dpdist import central

    start, cpu = time.perf_counter(), time.process_time()
    released = states[names[0]].release(central.quantiles, epsilon=1.0, bounds=(0.0, 2000.0), rng=SEED)
    results["release"] = {"wall_seconds": round(time.perf_counter() - start, 1),
                          "cpu_seconds": round(time.process_time() - cpu, 1),
                          "deciles": [round(float(v), 2) for v in released.values],
                          "guarantee": released.guarantee.describe()}
    print(f"release of the deciles per person: {results['release']}")
    results["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    out = Path(__file__).parent / "results" / "persons_scale.json"
    out.write_text(json.dumps(results, indent=2))
    print(f"raw records: {out}")


if __name__ == "__main__":
    main()
