"""Coverage matrix of every interval and band dpdist reports.

For each method that prints an interval or a band, M independent collections (or releases) are
drawn and the fraction whose interval contains the truth is counted, at the nominal level 0.95.
The binomial standard error of a coverage near 0.95 is ``sqrt(0.95 * 0.05 / M)`` (0.015 at
M = 200, 0.022 at M = 100, 0.034 at M = 40); a cell is flagged ``LOW`` when it is more than
3 of them below 0.95 (the worst of k items: below the 0.1 % quantile of the worst of k
binomial proportions).

* **CDF bands** (``dpdist.uncertainty.cdf_band``: binning, hh, haar-hrr, hh-admm, wavelet, sw,
  gw): pointwise band (the fraction of edges covered, averaged over collections), simultaneous
  band, the quantile intervals of q = 0.1, 0.25, 0.5, 0.75, 0.9 (pooled) and the mean's interval.
  Each collection draws n values i.i.d. from a fixed population (a real data set, or 10^6 draws
  of a synthetic law); the truth at an edge e is the population's share below e in the
  protocol's own binning (bins are [e_i, e_{i+1})), the quantiles are the population's
  (generalized inverse of its CDF), the mean its mean.
* **frequency intervals** (``FrequencyEstimate.confidence_interval``, every frequency protocol,
  its default estimate): the per-item coverage (averaged over items) and the worst item's,
  against the shares of the n users who reported (what the oracles' analytic variance, given
  the users' values, is about) and against the population's shares (which adds the users'
  sampling, f(1 - f)/n); ``zero-width`` counts the intervals of width 0 of the items present, as released (a
  standard error of 0, or an interval wholly below 0 clipped alone to [0, 0]; ``share_limits`` keeps an interval at
  least its half-width wide).
* **mean intervals** (``MeanEstimate.confidence_interval``: pm, sr).
* **central releases** (``dpdist release``: the tree's quantile intervals and its pointwise CDF
  band ``TreeHistogram.cdf_band``): they cover the *data's* empirical quantiles and CDF (the
  noise is the only randomness), so one data set is drawn per cell and released M times.

Data: skewed, flat and real, real data with atoms included: numerical ``lognormal`` (skewed),
``uniform`` (flat, Uniform(0, 1)), ``flights-departure`` (real, smooth), ``income-weekly`` (real,
spiky at round sums) and ``weeks-worked`` (real, atoms at 0, 40 and 52 on integers); categorical
``zipf`` (Zipf(1.1), items >= 63 pooled: 64 items), ``uniform-64`` (flat), ``weeks-worked`` as 53
integer items (real, atoms) and ``seattle-weather`` (a 5-label column; read from the
npm package ``vega-datasets`` when installed, see ``dpdist.datasets.npm``).

Usage::

    uv run --extra data python benchmarks/bench_coverage.py [--quick] [--only bands,frequency,mean,central]

``--quick`` is the small matrix (fewer cells and collections) for a smoke run; the full matrix
took about 40 minutes on the shared 2-core machine (two processes, ``--only band`` and
``--only frequency,mean,central``).  Results: ``benchmarks/results/coverage.json``
and the tables of ``docs/reference/benchmarks/coverage.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from dpdist import central, datasets, local
from dpdist.central.many_quantiles import _tree_quantiles
from dpdist.uncertainty import cdf_band

LEVEL = 0.95
QUANTILES = np.array([0.1, 0.25, 0.5, 0.75, 0.9])


def standard_error(runs: int) -> float:
    return math.sqrt(LEVEL * (1 - LEVEL) / runs)


def flag(coverage: float, runs: int) -> str:
    return "LOW" if coverage < LEVEL - 3 * standard_error(runs) else ""


def flag_worst(coverage: float, runs: int, items: int) -> str:
    """``LOW`` when the worst of ``items`` per-item coverages is below what the worst of that many
    binomial(M, 0.95) proportions reaches with probability 0.999 (a Bonferroni bound)."""
    from scipy.stats import binom

    return "LOW" if coverage < binom.ppf(0.001 / items, runs, LEVEL) / runs else ""


# ---------------------------------------------------------------------- populations
def numerical_population(name: str) -> tuple[np.ndarray, tuple[float, float]]:
    """A fixed population and its bounds (real data sets whole; synthetic laws 10^6 draws)."""
    rng = np.random.default_rng(12345)
    if name == "uniform":
        return rng.random(10**6), (0.0, 1.0)
    data = datasets.get(name)
    values = data.load(n=None if not data.synthetic else 10**6, rng=rng)
    return np.clip(np.asarray(values, dtype=np.float64), *data.bounds), tuple(map(float, data.bounds))


def categorical_population(name: str) -> np.ndarray | None:
    """The population's shares over its items (``None`` when the data are not installed)."""
    if name == "zipf":
        items = datasets.get("zipf-1.1").load(n=10**6, rng=np.random.default_rng(12345))
        return np.bincount(np.minimum(items, 63), minlength=64) / items.size
    if name == "uniform-64":
        return np.full(64, 1 / 64)
    if name == "weeks-worked":
        weeks = np.rint(datasets.get("weeks-worked").load(n=None)).astype(np.int64)
        return np.bincount(weeks, minlength=53) / weeks.size
    if name == "seattle-weather":
        from dpdist.datasets.npm import npm_package_directory
        from dpdist.errors import DatasetUnavailableError

        try:
            folder = npm_package_directory("vega-datasets", "3.2.1", "seattle-weather")
        except DatasetUnavailableError:
            return None
        lines = (folder / "data" / "seattle-weather.csv").read_text().splitlines()[1:]
        column = [line.rsplit(",", 1)[1] for line in lines if line]
        labels = sorted(set(column))
        return np.bincount([labels.index(value) for value in column], minlength=len(labels)) / len(column)
    raise ValueError(name)


def binned_cdf(population: np.ndarray, bounds, bins: int) -> np.ndarray:
    """Share of the population below each of the ``bins + 1`` equal-width edges, in the protocols' binning."""
    low, high = bounds
    index = np.minimum(((population - low) / (high - low) * bins).astype(np.int64), bins - 1)
    return np.concatenate([[0.0], np.cumsum(np.bincount(index, minlength=bins))]) / population.size


def shares_below(ordered: np.ndarray, edges: np.ndarray, top: float) -> np.ndarray:
    """Share of the sorted data below each edge as the tree counts it (its last leaf and beyond hold ``top`` too):
    the band's edges are the leaf edges, and the bounds asked for beyond a zoomed tree."""
    side = np.where(edges >= top, "right", "left")
    return np.array([np.searchsorted(ordered, edge, side=s) for edge, s in zip(edges, side)]) / ordered.size


# ---------------------------------------------------------------------- cells
BAND_PROTOCOLS = {
    "binning": {}, "hh": {}, "haar-hrr": {}, "hh-admm": {}, "wavelet": {},
    "sw": {"bins": 128}, "gw": {"bins": 128},
}
EXPENSIVE = {"sw", "gw", "hh-admm", "wavelet"}


def band_cell(name, data, epsilon, n, runs, replicates, seed=0) -> dict:
    population, bounds = numerical_population(data)
    extra = {"n_users": n} if local.needs_population_size(name) else {}
    protocol = local.make(name, epsilon=epsilon, bounds=bounds, **BAND_PROTOCOLS[name], **extra)
    truth = None
    true_quantiles = np.quantile(population, QUANTILES, method="inverted_cdf")
    true_mean = population.mean()
    pointwise, simultaneous, quantile, mean, width = [], [], [], [], []
    for run in range(runs):
        rng = np.random.default_rng([seed, run])
        values = population[rng.integers(0, population.size, n)]
        band = cdf_band(protocol, protocol.simulate(values, rng=rng), replicates=replicates, rng=rng).band
        if truth is None:  # the estimate's equal-width edges
            truth = binned_cdf(population, bounds, band.edges.size - 1)
        pointwise.append(np.mean((truth >= band.lower - 1e-12) & (truth <= band.upper + 1e-12)))
        simultaneous.append(
            np.all((truth >= band.simultaneous_lower - 1e-12) & (truth <= band.simultaneous_upper + 1e-12))
        )
        low, high = band.quantile_interval(QUANTILES)
        quantile.append(np.mean((low <= true_quantiles) & (true_quantiles <= high)))
        mean_low, mean_high = band.mean_interval()
        mean.append(mean_low <= true_mean <= mean_high)
        width.append(np.mean(band.simultaneous_upper - band.simultaneous_lower))
    return {
        "kind": "band", "method": name, "data": data, "epsilon": epsilon, "n": n, "runs": runs,
        "replicates": replicates, "pointwise": float(np.mean(pointwise)), "simultaneous": float(np.mean(simultaneous)),
        "quantiles": float(np.mean(quantile)), "mean": float(np.mean(mean)), "band_width": float(np.mean(width)),
    }


def _frequency_protocol(name: str, epsilon: float, k: int):
    extra = {"epsilon_1": epsilon / 2} if "epsilon_1" in local.parameter_names(name) else {}
    return local.make(name, epsilon=epsilon, domain_size=k, **extra)


def frequency_cell(name, data, epsilon, n, runs, postprocess=None, seed=0) -> dict | None:
    shares = categorical_population(data)
    if shares is None:
        return None
    k = shares.size
    protocol = _frequency_protocol(name, epsilon, k)
    options = {} if postprocess is None else {"postprocess": postprocess}
    covered, covered_sample, zero, none = np.zeros(k), np.zeros(k), 0, 0
    for run in range(runs):
        rng = np.random.default_rng([seed, run])
        counts = rng.multinomial(n, shares)
        values = rng.permutation(np.repeat(np.arange(k), counts))
        estimate = protocol.estimate(protocol.simulate(values, rng=rng), **options)
        if not estimate.has_intervals:
            none += 1
            continue
        low, high = estimate.confidence_interval(LEVEL)
        covered += (low <= shares) & (shares <= high)
        covered_sample += (low <= counts / n) & (counts / n <= high)
        zero += int(np.sum((high - low <= 0) & (shares > 0)))  # as released, of the items present
    done = runs - none
    coverage, sample = covered / max(done, 1), covered_sample / max(done, 1)
    present = shares > 0
    return {
        "kind": "frequency", "method": name, "postprocess": postprocess or "default", "data": data, "k": k,
        "epsilon": epsilon, "n": n, "runs": runs, "without_interval": none, "zero_width": zero,
        "coverage": float(coverage.mean()) if done else None,
        "worst_item": float(coverage[present].min()) if done else None,
        "sample_coverage": float(sample.mean()) if done else None,
        "sample_worst_item": float(sample[present].min()) if done else None,
    }


def mean_cell(name, data, epsilon, n, runs, seed=0) -> dict:
    population, bounds = numerical_population(data)
    protocol = local.make(name, epsilon=epsilon, bounds=bounds)
    truth = population.mean()
    covered = []
    for run in range(runs):
        rng = np.random.default_rng([seed, run])
        estimate = protocol.estimate(protocol.simulate(population[rng.integers(0, population.size, n)], rng=rng))
        low, high = estimate.confidence_interval(LEVEL)
        covered.append(low <= truth <= high)
    return {"kind": "mean", "method": name, "data": data, "epsilon": epsilon, "n": n, "runs": runs,
            "coverage": float(np.mean(covered))}


def central_cell(data, epsilon, n, runs, seed=0) -> dict:
    population, bounds = numerical_population(data)
    x = population[np.random.default_rng([seed, 10**6]).integers(0, population.size, n)]
    true_quantiles = np.quantile(x, QUANTILES, method="inverted_cdf")
    quantile, pointwise, simultaneous = [], [], []
    for run in range(runs):
        tree = central.TreeHistogram.release(x, epsilon, bounds, rng=np.random.default_rng([seed, run]), clip=True)
        se = tree.cdf_standard_error()
        band = tree.cdf_band(LEVEL, standard_error=se)
        truth = shares_below(np.sort(x), band.edges, tree.bounds[1])
        release = _tree_quantiles(tree, QUANTILES, LEVEL, se)
        quantile.append(np.mean((release.low <= true_quantiles) & (true_quantiles <= release.high)))
        pointwise.append(np.mean((truth >= band.lower - 1e-12) & (truth <= band.upper + 1e-12)))
        simultaneous.append(
            np.all((truth >= band.simultaneous_lower - 1e-12) & (truth <= band.simultaneous_upper + 1e-12))
        )
    return {"kind": "central", "method": "tree", "data": data, "epsilon": epsilon, "n": n, "runs": runs,
            "quantiles": float(np.mean(quantile)), "pointwise": float(np.mean(pointwise)),
            "simultaneous": float(np.mean(simultaneous))}


# ---------------------------------------------------------------------- the matrix
NUMERICAL = ["lognormal", "uniform", "flights-departure", "income-weekly", "weeks-worked"]
CATEGORICAL = ["zipf", "uniform-64", "weeks-worked", "seattle-weather"]


#: the smoke plan: one cell of each kind, tiny (a check that every runner runs, not a figure)
SMOKE = [("band", ("binning", "income-weekly", 1.0, 2000, 3, 20)), ("frequency", ("grr", "weeks-worked", 1.0, 2000, 3)),
         ("mean", ("pm", "income-weekly", 1.0, 2000, 3)), ("central", ("weeks-worked", 1.0, 2000, 3))]


def plan(quick: bool):
    """(kind, arguments) of every cell; the quick plan is a slice of the full one.

    Full (sized for a shared 2-core machine, about 40 minutes): every band protocol on the five
    numerical data sets at (eps 1, n 20,000) (hh-admm and wavelet, the slowest, on two), hh and
    binning also at (0.5, 5,000) and (4, 100,000) on income-weekly; every frequency protocol on
    the four categorical sets at (1, 20,000) (the seattle column at its own n and eps 2), at
    (4, 100,000) on zipf and at (0.5, 5,000) on weeks-worked, GRR/OUE/OLH with Norm-Sub too; PM
    and SR; the tree at two settings on every numerical set.
    """
    cells = []
    main = (1.0, 20_000)
    numerical = ["income-weekly", "weeks-worked"] if quick else NUMERICAL
    for name in BAND_PROTOCOLS:
        expensive = name in EXPENSIVE
        runs = (20 if expensive else 60) if quick else (30 if expensive else 100)
        replicates = 200 if name == "binning" else 100
        chosen = numerical
        if name in ("hh-admm", "wavelet") and not quick:
            runs, chosen = 20, ["income-weekly", "weeks-worked"]
        elif name == "haar-hrr" and not quick:
            runs, chosen = 60, ["lognormal", "income-weekly", "weeks-worked"]
        for data in chosen:
            cells.append(("band", (name, data, *main, runs, replicates)))
        if name in ("hh", "binning") and not quick:
            for epsilon, n in [(0.5, 5_000), (4.0, 100_000)]:
                cells.append(("band", (name, "income-weekly", epsilon, n, 60, 100)))
    slow = {"cms", "hcms", "flh", "dbitflippm"}
    for name in local.available("frequency"):
        runs = 60 if quick else (40 if name in slow else 100)
        settings = [("seattle-weather", 2.0, 1461), ("weeks-worked", *main)]  # the column's own size
        if not quick:
            settings += [("zipf", *main), ("uniform-64", *main), ("zipf", 4.0, 100_000), ("weeks-worked", 0.5, 5_000)]
        for data, epsilon, n in settings:
            cells.append(("frequency", (name, data, epsilon, n, runs)))
    for name in ("grr", "oue", "olh"):
        for data in (["zipf"] if quick else ["zipf", "weeks-worked"]):
            cells.append(("frequency", (name, data, *main, 60 if quick else 100, "norm-sub")))
    for name in ("pm", "sr"):
        for data in (["income-weekly"] if quick else NUMERICAL):
            cells.append(("mean", (name, data, *main, 60 if quick else 200)))
    for data in (["weeks-worked"] if quick else NUMERICAL):
        for epsilon, n in ([main] if quick else [main, (0.1, 5_000)]):
            cells.append(("central", (data, epsilon, n, 40 if quick else 100)))
    return cells


RUNNERS = {"band": band_cell, "frequency": frequency_cell, "mean": mean_cell, "central": central_cell}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small matrix")
    parser.add_argument("--smoke", action="store_true", help="one tiny cell of each kind (a check that it runs)")
    parser.add_argument("--only", default="band,frequency,mean,central", help="kinds of cells to run")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "coverage.json"))
    parser.add_argument("--resume", action="store_true", help="keep the cells already in --out, run the others")
    args = parser.parse_args(argv)
    kinds = set(args.only.split(","))
    out = Path(args.out)
    rows = json.loads(out.read_text()) if args.resume and out.exists() else []
    done = {_key(row) for row in rows}
    for kind, arguments in SMOKE if args.smoke else plan(args.quick):
        if kind not in kinds or _key_of(kind, arguments) in done:
            continue
        start = time.perf_counter()
        row = RUNNERS[kind](*arguments)
        if row is None:
            print(f"skipped {kind} {arguments}: data not installed", flush=True)
            continue
        row["seconds"] = round(time.perf_counter() - start, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rows, indent=1) + "\n")
    print(markdown(rows))


def _key(row: dict) -> tuple:
    return (row["kind"], row.get("method"), row.get("postprocess", "default"), row["data"], row["epsilon"], row["n"],
            row["runs"], row.get("replicates"))


def _key_of(kind: str, arguments: tuple) -> tuple:
    """The :func:`_key` of the row a cell will make."""
    if kind == "band":
        name, data, epsilon, n, runs, replicates = arguments
        return ("band", name, "default", data, epsilon, n, runs, replicates)
    if kind == "frequency":
        name, data, epsilon, n, runs, *postprocess = arguments
        return ("frequency", name, postprocess[0] if postprocess else "default", data, epsilon, n, runs, None)
    if kind == "mean":
        return ("mean", *arguments[:1], "default", *arguments[1:], None)
    return ("central", "tree", "default", *arguments, None)


def markdown(rows: list[dict]) -> str:
    """The tables of ``docs/reference/benchmarks/coverage.md``."""
    lines = []
    bands = [r for r in rows if r["kind"] == "band"]
    if bands:
        lines += ["| method | data | eps | n | M, B | pointwise | simultaneous | quantiles | mean |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in bands:
            cells = [f"{r[key]:.2f} {flag(r[key], r['runs'])}".strip()
                     for key in ("pointwise", "simultaneous", "quantiles", "mean")]
            lines.append(f"| {r['method']} | {r['data']} | {r['epsilon']:g} | {r['n']} | {r['runs']}, "
                         f"{r['replicates']} | " + " | ".join(cells) + " |")
        lines.append("")
    frequency = [r for r in rows if r["kind"] == "frequency"]
    if frequency:
        lines += ["| method | postprocess | data (k) | eps | n | M | users' shares: all items | worst item "
                  "| population's: all items | worst item | zero-width |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in frequency:
            cells = []
            for prefix in ("sample_", ""):
                if r.get(prefix + "coverage") is None:
                    cells += ["no interval", "-"] if r["coverage"] is None else ["-", "-"]
                    continue
                cells.append(f"{r[prefix + 'coverage']:.3f} {flag(r[prefix + 'coverage'], r['runs'])}".strip())
                cells.append(f"{r[prefix + 'worst_item']:.2f} "
                             f"{flag_worst(r[prefix + 'worst_item'], r['runs'], r['k'])}".strip())
            lines.append(f"| {r['method']} | {r['postprocess']} | {r['data']} ({r['k']}) | {r['epsilon']:g} | "
                         f"{r['n']} | {r['runs']} | " + " | ".join(cells) + f" | {r['zero_width']} |")
        lines.append("")
    means = [r for r in rows if r["kind"] == "mean"]
    if means:
        lines += ["| method | data | eps | n | M | coverage |", "|---|---|---|---|---|---|"]
        lines += [f"| {r['method']} | {r['data']} | {r['epsilon']:g} | {r['n']} | {r['runs']} | "
                  f"{r['coverage']:.2f} {flag(r['coverage'], r['runs'])} |" for r in means]
        lines.append("")
    centrals = [r for r in rows if r["kind"] == "central"]
    if centrals:
        lines += ["| release | data | eps | n | M | quantiles | pointwise CDF | simultaneous CDF |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in centrals:
            cells = [f"{r[key]:.2f} {flag(r[key], r['runs'])}".strip()
                     for key in ("quantiles", "pointwise", "simultaneous")]
            lines.append(f"| tree | {r['data']} | {r['epsilon']:g} | {r['n']} | {r['runs']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
