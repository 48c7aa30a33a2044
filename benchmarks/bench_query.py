"""The decile question as one query: deciles of income in 4 public regions, as SQL and as expressions, on Polars and
DuckDB, beside ``frame.group_release`` (the release underneath).

Data (each size and run drawn afresh, seeded): ``n`` persons, one row each, a region uniform over 4 public keys and an
income lognormal with median 30,000 USD times 0.8, 1, 1.25 or 1.5 by region and sigma 0.8; bounds (0, 300,000),
epsilon 1 per person for the whole query.  Each engine's table is the same rows (a Polars DataFrame; a DuckDB relation
over it).

Metrics, mean over runs: the **rank error** ``mean over regions and deciles |F_region(released) - q|`` (F the region's
empirical CDF, right-continuous), and the CPU seconds of one release (``time.process_time``: reading the table, every
release and the result table in the caller's engine; imports and a first warm-up release excluded).  A second query adds
``HISTOGRAM(age, 8)`` and ``COUNT(*)`` under the same budget: its rows state the split (equal thirds) and the deciles'
rank error at their third.

Beside them (``--peers opendp``), the same question as one query of OpenDP 0.16's Polars plugin, in its own environment
(``benchmarks/persons_peers/requirements/opendp.lock``: polars 1.36.1, the version it requires; the worker
``benchmarks/persons_peers/side/worker_opendp.py``): ``group_by("region")`` over a margin of invariant keys and nine
``dp.quantile`` over a 200-USD candidate grid, epsilon 1 split evenly over them; the same tables, the same metrics, its
CPU seconds in its own process (the second release of each table: the first loads OpenDP's library).

Usage::

    uv run python benchmarks/bench_query.py [--sizes 20000,2000] [--runs 6] [--engines polars,duckdb] [--peers opendp]

Writes ``benchmarks/results/query.json`` (one row per size, engine, interface and query).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import tempfile
import time
import warnings

import numpy as np

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "query.json"
REGIONS = ["north", "south", "east", "west"]
DECILES = np.arange(1, 10) / 10
BOUNDS = (0.0, 300_000.0)
SQL = {"deciles": "SELECT region, QUANTILES(income, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9) FROM t GROUP BY region",
       "deciles, histogram, count": "SELECT region, QUANTILES(income, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9), "
                                    "HISTOGRAM(age, 8), COUNT(*) FROM t GROUP BY region"}


def table(n: int, seed: int):
    import polars as pl

    rng = np.random.default_rng([90, n, seed])
    region = rng.integers(0, 4, n)
    income = rng.lognormal(np.log(30_000.0), 0.8, n) * np.array([0.8, 1.0, 1.25, 1.5])[region]
    return pl.DataFrame({"person": np.arange(n), "region": np.array(REGIONS)[region], "income": income,
                         "age": rng.integers(18, 90, n)})


def engine_table(data, engine: str):
    if engine == "polars":
        return data
    import duckdb

    return duckdb.from_arrow(data.to_arrow())


def built(kind: str, interface: str, source, seed: int):
    import dpdist
    from dpdist.queries import count, histogram, quantiles

    unit = {"privacy_id": "person", "max_contributions": 1, "rng": seed}
    if interface == "sql":
        return dpdist.sql(SQL[kind], tables={"t": source}, epsilon=1.0, bounds={"income": BOUNDS, "age": (0, 80)},
                          keys={"region": REGIONS}, **unit)
    statistics = [quantiles("income", DECILES, BOUNDS)]
    if kind != "deciles":
        statistics += [histogram("age", 8, (0, 80)), count()]
    return dpdist.query(source, epsilon=1.0, **unit).group_by("region", keys=REGIONS).agg(*statistics)


def rank_error(data, released: dict) -> float:
    errors = []
    for region in REGIONS:
        values = np.sort(data.filter(data["region"] == region)["income"].to_numpy())
        errors.append(np.mean(np.abs(np.searchsorted(values, released[region].values, side="right") / values.size
                                     - DECILES)))
    return float(np.mean(errors))


def baseline(data, seed: int) -> tuple[float, float]:
    from dpdist import central, frame

    start = time.process_time()
    grouped = frame.group_release(data, "income", "region", central.quantiles, DECILES, epsilon=1.0, bounds=BOUNDS,
                                  groups=REGIONS, rng=seed)
    return rank_error(data, grouped.results), time.process_time() - start


def one_row(n: int, runs: int, engine: str, interface: str, kind: str) -> dict:
    errors, seconds, split = [], [], None
    for run in range(runs):
        data = table(n, run)
        query = built(kind, interface, engine_table(data, engine), run)
        start = time.process_time()
        result = query.release()
        released = result.table()
        if engine == "duckdb":
            released.fetchall()
        seconds.append(time.process_time() - start)
        errors.append(rank_error(data, result.results["quantiles(income)"]))
        split = {p.statistic.label: round(p.share, 4) for p in result.plan.statistics}
        assert abs(result.guarantee.epsilon - 1.0) < 1e-9
    return {"n": n, "engine": engine, "interface": interface, "query": kind, "rank_error": float(np.mean(errors)),
            "rank_error_se": float(np.std(errors, ddof=1) / np.sqrt(runs)), "cpu_seconds": float(np.mean(seconds)),
            "split": split, "epsilon": 1.0}


def peer_row(n: int, runs: int) -> dict:
    """OpenDP's Polars plugin on the same tables (its side environment, one job per run)."""
    from bench_persons_peers import side  # benchmarks/, beside this script

    errors, seconds, library = [], [], ""
    with tempfile.TemporaryDirectory() as folder:
        for run in range(runs):
            data = table(n, run)
            files = {"ids": os.path.join(folder, "regions.npy"), "values": os.path.join(folder, "incomes.npy")}
            np.save(files["ids"], data["region"].to_numpy().astype(str))
            np.save(files["values"], data["income"].to_numpy())
            found = side("opendp", {"task": "grouped deciles", "epsilon": 1.0, "bounds": list(BOUNDS), "step": 200.0,
                                    "repeats": 2}, files)  # the second release is timed: the first loads OpenDP's library
            library, last = found["library"], found["runs"][-1]
            errors.append(rank_error(data, {region: _Values(last["output"][region]) for region in REGIONS}))
            seconds.append(last["cpu_seconds"])
    return {"n": n, "engine": library, "interface": "opendp polars plugin", "query": "deciles",
            "rank_error": float(np.mean(errors)), "rank_error_se": float(np.std(errors, ddof=1) / np.sqrt(runs)),
            "cpu_seconds": float(np.mean(seconds)), "split": {"9 x dp.quantile": round(1 / 9, 4)}, "epsilon": 1.0}


class _Values:
    """A peer's released deciles as ``rank_error`` reads a release (its ``values``)."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,2000")
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--engines", default="polars,duckdb")
    parser.add_argument("--peers", default="", help="'opendp': OpenDP's Polars plugin in its own environment")
    arguments = parser.parse_args()
    warnings.simplefilter("ignore")
    built("deciles", "sql", table(100, 0), 0).release()  # warm-up: imports and first calls
    rows = []
    for n in (int(size) for size in arguments.sizes.split(",")):
        base = [baseline(table(n, run), run) for run in range(arguments.runs)]
        rows.append({"n": n, "engine": "polars", "interface": "frame.group_release", "query": "deciles",
                     "rank_error": float(np.mean([e for e, _ in base])),
                     "rank_error_se": float(np.std([e for e, _ in base], ddof=1) / np.sqrt(arguments.runs)),
                     "cpu_seconds": float(np.mean([s for _, s in base])), "split": None, "epsilon": 1.0})
        for engine in arguments.engines.split(","):
            for interface in ("sql", "expressions"):
                for kind in SQL:
                    rows.append(one_row(n, arguments.runs, engine, interface, kind))
                    print(json.dumps(rows[-1]), flush=True)
        if "opendp" in arguments.peers:
            rows.append(peer_row(n, arguments.runs))
            print(json.dumps(rows[-1]), flush=True)
    RESULTS.write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
