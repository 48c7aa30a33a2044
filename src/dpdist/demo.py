"""``dpdist demo``: every registered protocol on an embedded dataset, repeated, with tables and plots.

The data are the departure times of day (minutes after midnight) of 100,000
flights from New York City in 2013 (``_data/README.md``).  Categorical protocols
see them as 144 ten-minute items; numerical protocols see the minutes in bounds
(0, 1440).  Each protocol's aggregate is drawn with ``simulate`` (exact and fast
where the protocol has an exact aggregate sampler, otherwise privatize + aggregate).

Every (protocol, epsilon) runs ``repeats`` times (default 5) on independent
randomness, so the table shows the median error with its spread across runs,
and the plots show the CDF of each protocol with the range of its runs and the
error against epsilon with its spread: one run alone can be lucky or unlucky.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from . import local, metrics
from ._rng import named_generator
from ._validation import EPSILON, Integer, check_param
from .datasets._binning import bucketize
from .estimates import Distribution, FrequencyEstimate

BOUNDS = (0.0, 1440.0)
ITEMS = 144  # ten-minute buckets for the categorical protocols
REPEATS = 5
_ITEM_EDGES = np.linspace(*BOUNDS, ITEMS + 1)


@dataclass
class DemoRun:
    """Errors of one run (NaN where the protocol estimates only the mean)."""

    protocol: str
    kind: str
    epsilon: float
    run: int
    wasserstein: float
    ks: float
    mse: float
    mean_error: float
    seconds: float


def load_departure_minutes() -> np.ndarray:
    """The embedded dataset: 100,000 departure times of day in minutes (float64)."""
    with resources.files("dpdist._data").joinpath("departure_minutes.npz").open("rb") as handle:
        return np.load(handle)["minutes"].astype(np.float64)


def _run_one(name: str, epsilon: float, minutes: np.ndarray, rng: np.random.Generator):
    if name in local.available("frequency"):
        params = {"domain_size": ITEMS}
        values = bucketize(minutes, BOUNDS, ITEMS)
    else:
        params = {"bounds": BOUNDS}
        values = minutes
    if local.needs_population_size(name):
        params["n_users"] = values.size
    budget = {"epsilon": epsilon}
    if "epsilon_1" in local.parameter_names(name):  # longitudinal: one report at epsilon, eps_inf = 2 epsilon
        budget = {"epsilon": 2.0 * epsilon, "epsilon_1": epsilon}
    protocol = local.make(name, **budget, **params)
    start = time.perf_counter()
    estimate = protocol.estimate(protocol.simulate(values, rng=rng), **_estimate_options(protocol))
    seconds = time.perf_counter() - start
    return protocol, estimate, seconds


def _estimate_options(protocol) -> dict:
    return {"postprocess": "norm-sub"} if protocol.tags.kind == "frequency" else {}


def _as_distribution(estimate) -> Distribution | None:
    if isinstance(estimate, Distribution):
        return estimate
    if isinstance(estimate, FrequencyEstimate):
        return Distribution.uniform_bins(estimate.frequencies, BOUNDS, method=estimate.protocol)
    return None


def _errors(name, epsilon, run, minutes, true_items, rng) -> tuple[DemoRun, Distribution | None]:
    protocol, estimate, seconds = _run_one(name, epsilon, minutes, rng)
    distribution = _as_distribution(estimate)
    if distribution is None:  # a mean-only protocol (pm, sr)
        nan = float("nan")
        mean_error = abs(estimate.mean - minutes.mean())
        return DemoRun(name, protocol.tags.kind, epsilon, run, nan, nan, nan, mean_error, seconds), None
    items = np.diff(distribution.cdf(_ITEM_EDGES))  # every protocol compared on the same 144 items
    return DemoRun(
        name,
        protocol.tags.kind,
        epsilon,
        run,
        metrics.wasserstein(distribution, minutes),
        metrics.ks(distribution, minutes),
        metrics.mse(items, true_items),
        abs(distribution.mean() - minutes.mean()),
        seconds,
    ), distribution


def _cell(values: list[float], digits: str) -> str:
    values = np.asarray(values, dtype=np.float64)
    if np.all(np.isnan(values)):
        return "-"
    median = format(float(np.median(values)), digits)
    return median if values.size < 2 else f"{median} ±{format(float(np.std(values, ddof=1)), digits)}"


def run_demo(out: str = "dpdist-demo", epsilons=(0.5, 1.0, 2.0, 4.0), seed: int = 0, repeats: int = REPEATS) -> int:
    """Run every registered protocol ``repeats`` times at each epsilon; print and save tables and plots."""
    epsilons = [check_param("dpdist demo", "epsilon", epsilon, EPSILON) for epsilon in epsilons]
    repeats = check_param("dpdist demo", "repeats", repeats, Integer(low=1, high=1000))
    minutes = load_departure_minutes()
    true_items = np.bincount(bucketize(minutes, BOUNDS, ITEMS), minlength=ITEMS) / minutes.size
    output = Path(out)
    output.mkdir(parents=True, exist_ok=True)
    runs: list[DemoRun] = []
    shown: dict[str, list[Distribution]] = {}
    plot_epsilon = sorted(epsilons)[len(epsilons) // 2]
    names = sorted(local.available("frequency") + local.available("numerical"))  # heavy hitters: local.heavy_hitters
    print(
        f"dpdist demo: {minutes.size:,} departure times of day (minutes), {len(names)} protocols, "
        f"{repeats} runs each: median ±sd over the runs\n"
    )
    header = (
        f"{'protocol':<9} {'kind':<9} {'eps':>4} {'W1 (minutes)':>13} {'KS':>13} {'MSE (x1e-6)':>13} "
        f"{'|mean err| (min)':>16} {'s/run':>6}"
    )
    print(header)
    print("-" * len(header))
    for name in names:
        for epsilon in epsilons:
            cell_runs = []
            for run in range(repeats):
                # keyed by names, not positions: adding a protocol never changes another's numbers
                rng = named_generator(seed, name, float(epsilon), run)
                result, distribution = _errors(name, epsilon, run, minutes, true_items, rng)
                cell_runs.append(result)
                if epsilon == plot_epsilon and distribution is not None:
                    shown.setdefault(name, []).append(distribution)
            runs.extend(cell_runs)
            column = {field: [getattr(r, field) for r in cell_runs] for field in DemoRun.__dataclass_fields__}
            print(
                f"{name:<9} {cell_runs[0].kind:<9} {epsilon:>4g} {_cell(column['wasserstein'], '.1f'):>13} "
                f"{_cell(column['ks'], '.3f'):>13} {_cell([v * 1e6 for v in column['mse']], '.2f'):>13} "
                f"{_cell(column['mean_error'], '.1f'):>16} {np.median(column['seconds']):>6.3f}"
            )
    table = output / "demo_table.csv"
    _write_table(table, runs)
    figure, errors_figure = output / "demo.png", output / "demo_errors.png"
    _plot_cdfs(shown, minutes, plot_epsilon, figure)
    _plot_errors(runs, errors_figure)
    print(
        f"\nW1 and mean error in minutes; KS and MSE over the {ITEMS} ten-minute items compare every "
        "protocol's estimate with the true distribution (frequency protocols after Norm-Sub); "
        "pm and sr estimate only the mean."
    )
    print(f"wrote {table} (one row per run), {figure} (CDFs at epsilon = {plot_epsilon:g}) and {errors_figure}")
    return 0


def _write_table(path: Path, runs: list[DemoRun]) -> None:
    fields = list(DemoRun.__dataclass_fields__)
    with path.open("w") as handle:
        handle.write(",".join(fields) + "\n")
        for run in runs:
            handle.write(",".join("" if _is_nan(v) else str(v) for v in (getattr(run, f) for f in fields)) + "\n")


def _is_nan(value) -> bool:
    return isinstance(value, float) and np.isnan(value)


def _hours_axis(axis) -> None:
    axis.set_xticks(np.arange(0, 1441, 360), [f"{h:02d}:00" for h in range(0, 25, 6)])
    axis.set_xlim(*BOUNDS)


def _plot_cdfs(distributions: dict[str, list[Distribution]], minutes: np.ndarray, epsilon: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = 4
    panels = max(len(distributions), 1)
    rows = -(-panels // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4 * columns, 2.8 * rows), squeeze=False, sharex=True,
                                sharey=True)
    grid = np.linspace(*BOUNDS, 721)
    truth = np.searchsorted(np.sort(minutes), grid, side="right") / minutes.size
    for axis in axes.flat[panels:]:
        axis.set_visible(False)
    for axis, (name, runs) in zip(axes.flat, distributions.items()):
        curves = np.array([run.cdf(grid) for run in runs])
        errors = [metrics.wasserstein(run, minutes) for run in runs]
        typical = curves[int(np.argsort(errors)[len(errors) // 2])]
        axis.fill_between(grid, curves.min(axis=0), curves.max(axis=0), color="C0", alpha=0.3, linewidth=0,
                          label=f"range of {len(runs)} runs")
        axis.plot(grid, typical, color="C0", lw=1.2, label="median run")
        axis.plot(grid, truth, color="k", lw=1.0, ls="--", label="true")
        axis.set_title(f"{name}: W1 = {np.median(errors):.1f} min (median)", fontsize=9)
        _hours_axis(axis)
    for axis in axes[:, 0]:
        axis.set_ylabel("fraction departed")
    for axis in axes[-1, :]:
        axis.set_xlabel("time of day")
    axes[0, 0].legend(fontsize=7, loc="upper left")
    figure.suptitle(f"CDF of departure time of day under {epsilon:g}-LDP, n = {minutes.size:,}")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _plot_errors(runs: list[DemoRun], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for axis, kind in zip(axes, ("frequency", "numerical")):
        names = sorted({run.protocol for run in runs if run.kind == kind and not _is_nan(run.wasserstein)})
        for index, name in enumerate(names):
            epsilons = sorted({run.epsilon for run in runs if run.protocol == name})
            values = [[run.wasserstein for run in runs if run.protocol == name and run.epsilon == e] for e in epsilons]
            medians = [np.median(v) for v in values]
            spread = np.array([[m - np.min(v) for m, v in zip(medians, values)],
                               [np.max(v) - m for m, v in zip(medians, values)]])
            axis.errorbar(epsilons, medians, yerr=spread, marker="o", ms=3, capsize=2, lw=1,
                          color=f"C{index % 10}", ls="-" if index < 10 else "--", label=name)
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_xlabel("epsilon")
        axis.set_ylabel("W1 to the true distribution (minutes)")
        axis.set_title(f"{kind} protocols: median and range of the runs", fontsize=10)
        axis.legend(fontsize=7, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
