"""``dpdist demo``: every registered protocol on an embedded dataset, repeated, with tables and plots.

The data are the departure times of day (minutes after midnight) of 100,000
flights from New York City in 2013 (:mod:`._flights`, ``_data/README.md``).  Categorical protocols
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
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import local, metrics, plotting
from .._io._atomic import write_text_atomically
from .._rng import named_generator
from .._validation import EPSILON, Integer, check_param
from ..datasets._binning import bucketize
from ..estimates import Distribution
from ._flights import BOUNDS, load_departure_minutes

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
    #: W1 on the circle of the day (23:59 next to 00:00; :func:`dpdist.metrics.circular_wasserstein`)
    circular_wasserstein: float = float("nan")


def _run_one(name: str, epsilon: float, minutes: np.ndarray, rng: np.random.Generator):
    if name in local.available("frequency"):
        params: dict[str, Any] = {"domain_size": ITEMS}
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


def _errors(name, epsilon, run, minutes, true_items, rng) -> tuple[DemoRun, Distribution | None]:
    protocol, estimate, seconds = _run_one(name, epsilon, minutes, rng)
    distribution = estimate.as_distribution(BOUNDS)  # frequency protocols: the 144 items as bins of the day
    if distribution is None:  # a mean-only protocol (pm, sr)
        nan = float("nan")
        mean_error = abs(estimate.summary()["mean"] - minutes.mean())
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
        metrics.circular_wasserstein(distribution, minutes, period=BOUNDS[1] - BOUNDS[0]),
    ), distribution


def _cell(values: list[float], digits: str) -> str:
    array = np.asarray(values, dtype=np.float64)
    if np.all(np.isnan(array)):
        return "-"
    median = format(float(np.median(array)), digits)
    return median if array.size < 2 else f"{median} ±{format(float(np.std(array, ddof=1)), digits)}"


def run_demo(out: str = "dpdist-demo", epsilons: Sequence[float] = (0.5, 1.0, 2.0, 4.0), seed: int = 0, repeats: int = REPEATS) -> int:
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
    # heavy hitters: local.heavy_hitters; threshold: one round of local.adaptive_quantiles, not a distribution estimator
    names = sorted(set(local.available("frequency") + local.available("numerical")) - {"threshold"})
    print(
        f"dpdist demo: {minutes.size:,} departure times of day (minutes), {len(names)} protocols, "
        f"{repeats} runs each: median ±sd over the runs\n"
    )
    header = (
        f"{'protocol':<12} {'kind':<9} {'eps':>4} {'W1 (minutes)':>13} {'W1 circle':>11} {'KS':>13} "
        f"{'MSE (x1e-6)':>13} {'|mean err| (min)':>16} {'s/run':>6}"
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
                f"{name:<12} {cell_runs[0].kind:<9} {epsilon:>4g} {_cell(column['wasserstein'], '.1f'):>13} "
                f"{_cell(column['circular_wasserstein'], '.1f'):>11} {_cell(column['ks'], '.3f'):>13} {_cell([v * 1e6 for v in column['mse']], '.2f'):>13} "
                f"{_cell(column['mean_error'], '.1f'):>16} {np.median(column['seconds']):>6.3f}"
            )
    table = output / "demo_table.csv"
    _write_table(table, runs)
    figure, errors_figure = output / "demo.png", output / "demo_errors.png"
    _plot_cdfs(shown, minutes, plot_epsilon, figure)
    _plot_errors(runs, errors_figure)
    print(
        "\nW1 and mean error in minutes; 'W1 circle' is W1 on the circle of the day, where 23:59 is next to 00:00 "
        "(the time of day is circular: opm-circular's window wraps around midnight, the interval protocols' "
        f"estimates are read on the same circle); KS and MSE over the {ITEMS} ten-minute items compare every "
        "protocol's estimate with the true distribution (frequency protocols after Norm-Sub); "
        "pm and sr estimate only the mean."
    )
    for line in _explain_slow_fallers(runs):
        print(line)
    print(f"wrote {table} (one row per run), {figure} (CDFs at epsilon = {plot_epsilon:g}) and {errors_figure}")
    return 0


#: Why a protocol's W1 barely falls with epsilon on the demo's data (measured on it, 3 runs each).
_FLAT_REASONS = {
    "haar-hrr": (
        "its unbiased leaves are accurate (the W1 of their unprojected CDF falls 39 -> 8 minutes from eps 0.5 to "
        "4), but their noise makes many of its 256 leaves negative, and Norm-Sub, which turns them into a "
        "distribution, moves mass into the empty night hours: that bias, not the noise, dominates W1 and shrinks "
        "slowly with epsilon (range queries on HaarHRR.frequencies do not have it)"
    ),
    "hcms": (
        "a fixed hash family adds an error that epsilon does not reduce (mean square about |f|^2 c / k, c = 1/width "
        "the collision rate, k = hash_count; see dpdist.local.frequency.hcms); once the privacy noise is small it "
        "dominates"
    ),
}
_GENERIC_REASON = (
    "its error is dominated by a part that epsilon does not control (the bias of post-processing, hashing or "
    "the bin width)"
)


def _explain_slow_fallers(runs: list[DemoRun], factor: float = 3.0) -> list[str]:
    """A sentence for every protocol whose median W1 falls by less than ``factor`` from the smallest to the
    largest epsilon, when those are at least 4x apart (8x in the default run: a noise-dominated error falls
    by far more)."""
    epsilons = sorted({run.epsilon for run in runs})
    if not epsilons or epsilons[-1] < 4 * epsilons[0]:
        return []
    low, high = epsilons[0], epsilons[-1]
    lines = []
    for name in sorted({run.protocol for run in runs}):
        at = {e: [r.wasserstein for r in runs if r.protocol == name and r.epsilon == e and not _is_nan(r.wasserstein)]
              for e in (low, high)}
        if not at[low] or not at[high]:
            continue
        first, last = float(np.median(at[low])), float(np.median(at[high]))
        if last * factor > first:
            lines.append(f"  {name}: W1 {first:.0f} -> {last:.0f} min: {_FLAT_REASONS.get(name, _GENERIC_REASON)}.")
    if lines:
        lines.insert(0, f"\nErrors that barely fall with epsilon (median W1 less than {factor:g}x smaller at "
                        f"eps {high:g} than at {low:g}):")
    return lines


def _write_table(path: Path, runs: list[DemoRun]) -> None:
    fields = list(DemoRun.__dataclass_fields__)
    lines = [",".join(fields)] + [",".join("" if _is_nan(v) else str(v) for v in (getattr(run, f) for f in fields)) for run in runs]
    write_text_atomically(path, "".join(line + "\n" for line in lines))


def _is_nan(value) -> bool:
    return isinstance(value, float) and np.isnan(value)


def _hours_axis(axis) -> None:
    axis.set_xticks(np.arange(0, 1441, 360), [f"{h:02d}:00" for h in range(0, 25, 6)])
    axis.set_xlim(*BOUNDS)


def _plot_cdfs(distributions: dict[str, list[Distribution]], minutes: np.ndarray, epsilon: float, path: Path) -> None:
    plotting.headless()
    panels = max(len(distributions), 1)
    # the title gets its own strip above the panels' titles
    figure, axes = plotting.small_multiples(panels, 4, width=4, height=2.8, extra=0.6, left=0.06, bottom=0.5,
                                            top=0.75, hspace=0.35)
    grid = np.linspace(*BOUNDS, 721)
    truth = np.searchsorted(np.sort(minutes), grid, side="right") / minutes.size
    # the time of day is circular: the circular protocol's panel first, every panel's W1 on the circle
    ordered = sorted(distributions.items(), key=lambda item: item[0] != "opm-circular")
    for axis, (name, runs) in zip(axes.flat, ordered):
        curves = np.array([run.cdf(grid) for run in runs])
        errors = [metrics.circular_wasserstein(run, minutes, period=BOUNDS[1] - BOUNDS[0]) for run in runs]
        typical = curves[int(np.argsort(errors)[len(errors) // 2])]
        axis.fill_between(grid, curves.min(axis=0), curves.max(axis=0), color="C0", alpha=0.3, linewidth=0,
                          label=f"range of {len(runs)} runs")
        axis.plot(grid, typical, color="C0", lw=1.2, label="median run")
        axis.plot(grid, truth, color="k", lw=1.0, ls="--", label="true")
        axis.set_title(f"{name}: W1 on the circle {np.median(errors):.1f} min", fontsize=9)
        _hours_axis(axis)
    for axis in axes[:, 0]:
        axis.set_ylabel("fraction departed")
    plotting.label_bottom_panels(axes, panels, "time of day")
    axes[0, 0].legend(fontsize=7, loc="upper left")
    figure.suptitle(f"CDF of departure time of day under {epsilon:g}-LDP, n = {minutes.size:,}", fontsize=12)
    plotting.save_figure(figure, path, dpi=110)


def _plot_errors(runs: list[DemoRun], path: Path) -> None:
    """Small multiples: one panel per protocol (W1 against epsilon, median and range of the runs), the
    other protocols of its kind in grey behind it, so that 14 frequency protocols need no 14 colours."""
    import matplotlib.ticker  # lazy: loads matplotlib (1-2 s)

    plotting.headless()
    curves: dict[str, tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    for kind in ("frequency", "numerical"):
        for name in sorted({run.protocol for run in runs if run.kind == kind and not _is_nan(run.wasserstein)}):
            run_epsilons = sorted({run.epsilon for run in runs if run.protocol == name})
            values = [[run.wasserstein for run in runs if run.protocol == name and run.epsilon == e] for e in run_epsilons]
            curves[name] = (kind, np.array(run_epsilons), np.array([np.median(v) for v in values]),
                            np.array([np.min(v) for v in values]), np.array([np.max(v) for v in values]))
    panels = max(len(curves), 1)
    figure, axes = plotting.small_multiples(panels, 7, width=2.3, height=2.2, extra=0.8, left=0.05, bottom=0.55,
                                            top=0.7, hspace=0.3)  # fixed margins: a layout engine costs seconds
    colours = {"frequency": "C0", "numerical": "C3"}
    for axis, (name, (kind, epsilons, medians, lows, highs)) in zip(axes.flat, curves.items()):
        for other, (other_kind, other_eps, other_medians, _, _) in curves.items():
            if other != name and other_kind == kind:
                axis.plot(other_eps, other_medians, color="0.8", lw=0.8, zorder=1)
        axis.fill_between(epsilons, lows, highs, color=colours[kind], alpha=0.25, linewidth=0, zorder=2)
        axis.plot(epsilons, medians, marker="o", ms=3, lw=1.5, color=colours[kind], zorder=3)
        axis.set_title(f"{name} ({kind})", fontsize=9)
    # shared axes: scales and ticks set once; no minor ticks (hundreds of tick objects on 21 log axes cost seconds)
    first = axes[0, 0]
    first.set_xscale("log", base=2)
    first.set_yscale("log")
    ticks = sorted({float(e) for curve in curves.values() for e in curve[1]})
    if ticks:
        first.set_xticks(ticks, [f"{e:g}" for e in ticks])
    first.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    first.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    for axis in axes[:, 0]:
        axis.set_ylabel("W1 (minutes)")
    plotting.label_bottom_panels(axes, panels, "epsilon")
    figure.suptitle("Error against epsilon: median (line) and range (band) of the runs; grey: the other "
                    "protocols of the same kind", fontsize=11)
    plotting.save_figure(figure, path, dpi=110)
