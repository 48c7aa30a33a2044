"""W1 on the circle of the day: the circular optimal piecewise mechanism against the interval methods.

Run: ``uv run python benchmarks/bench_circular.py [--repeats 5] [--datasets flights-departure,...]``.

Departure times of day (minutes in [0, 1440), 23:59 next to 00:00) from three data sets: the demo's
embedded 100,000 flights (``demo``), ``flights-departure`` (328,521 NYC flights) and
``flights3m-departure`` (3,000,000 US flights; needs the npm data, see docs/how-to/run-experiments.md); also
``synthetic-vm1``, ``synthetic-vm2``, ``synthetic-mix3`` (10^5 draws, :func:`synthetic`).  Every
numerical distribution protocol at its defaults (1024 bins where it has bins) gets the whole data set
(``simulate``), ``--repeats`` times with independent seeds, at eps = 1..4; the error is
``metrics.circular_wasserstein`` of its estimate against the samples (period 1440; an interval
method's estimate read on the same circle).  ``opm-circular`` runs at the paper's window and at
0.6 times it (``--factors``).  Prints a markdown table (mean +- standard error over the repeats, and
the circular protocol's ratio to the best interval method) and writes
``benchmarks/results/circular.json``.  One BLAS thread.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from dpdist import datasets, local, metrics  # noqa: E402
from dpdist.demo import load_departure_minutes  # noqa: E402
from dpdist.local.numerical._wave_shape import mutual_information_b  # noqa: E402
from dpdist.local.numerical.opm import optimal_window  # noqa: E402

PERIOD = 1440.0
INTERVAL_METHODS = ("sw", "gw", "hh", "hh-admm", "haar-hrr", "binning", "wavelet", "opm")
RESULTS = Path(__file__).resolve().parent / "results" / "circular.json"


def synthetic(name: str, n: int = 100_000, seed: int = 7) -> np.ndarray:
    """Circular test populations in minutes (where the window factor 0.6 was chosen, before the departures):
    ``vm1`` one von Mises bump at midnight, ``vm2`` two (one across midnight), ``mix3`` three wrapped normals."""
    rng = np.random.default_rng(seed)
    if name == "vm1":
        unit = rng.vonmises(0.0, 4.0, n) / (2 * np.pi)
    elif name == "vm2":
        first = rng.random(n) < 0.6
        unit = np.where(first, rng.vonmises(-0.4 * np.pi, 8.0, n), rng.vonmises(0.9 * np.pi, 3.0, n)) / (2 * np.pi)
    else:
        component = rng.choice(3, n, p=[0.5, 0.3, 0.2])
        unit = np.array([0.05, 0.4, 0.7])[component] + np.array([0.04, 0.08, 0.02])[component] * rng.standard_normal(n)
    return np.mod(unit, 1.0) * PERIOD


def load(name: str) -> np.ndarray:
    if name.startswith("synthetic-"):
        return synthetic(name.removeprefix("synthetic-"))
    return load_departure_minutes() if name == "demo" else datasets.get(name).load()


def method_configs(epsilon: float, factors: list[float], sw_factors: list[float] = ()) -> list[tuple[str, str, dict]]:
    """(label, protocol, parameters): the interval methods at their defaults (and SW at narrower b), then the
    circular ones."""
    configs = [(name, name, {}) for name in INTERVAL_METHODS]
    configs += [(f"sw b*x{f:g}", "sw", {"b": f * mutual_information_b(epsilon)}) for f in sw_factors]
    for factor in factors:
        label = "opm-circular" if factor == 1.0 else f"opm-circular w*x{factor:g}"
        configs.append((label, "opm-circular", {} if factor == 1.0 else {"window": factor * optimal_window(epsilon)}))
    return configs


def error(protocol_name: str, params: dict, epsilon: float, values: np.ndarray, seed: int) -> float:
    extra = {"n_users": values.size} if local.needs_population_size(protocol_name) else {}
    protocol = local.make(protocol_name, epsilon=epsilon, bounds=(0.0, PERIOD), **params, **extra)
    estimate = protocol.estimate(protocol.simulate(values, rng=seed))
    return metrics.circular_wasserstein(estimate, values, period=PERIOD)


def run(dataset: str, epsilons: list[float], factors: list[float], repeats: int, sw_factors: list[float]) -> list[dict]:
    values = load(dataset)
    rows = []
    for epsilon in epsilons:
        for label, name, params in method_configs(epsilon, factors, sw_factors):
            start = time.perf_counter()
            errors = [error(name, params, epsilon, values, seed=1000 * round(epsilon) + r) for r in range(repeats)]
            rows.append({"dataset": dataset, "n": int(values.size), "epsilon": epsilon, "method": label,
                         "w1_circle": errors, "seconds": (time.perf_counter() - start) / repeats})
            print(f"  {dataset} eps={epsilon:g} {label}: {np.mean(errors):.3f}", flush=True)
    return rows


def table(rows: list[dict]) -> str:
    """Markdown: one line per (dataset, eps), the best interval method and the circular protocol(s)."""
    circular = sorted({r["method"] for r in rows if r["method"].startswith(("opm-circular", "sw b"))}, key=len)
    header = ["data set (n)", "eps", "best interval method", "its W1"]
    for method in circular:
        header += [method.replace("opm-circular", "opm-circular (paper window)") if method == "opm-circular" else method,
                   "ratio"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for key in sorted({(r["dataset"], r["epsilon"]) for r in rows}):
        cell = {r["method"]: np.asarray(r["w1_circle"]) for r in rows if (r["dataset"], r["epsilon"]) == key}
        n = next(r["n"] for r in rows if r["dataset"] == key[0])

        def show(errors):
            return f"{errors.mean():.2f} ± {errors.std(ddof=1) / math.sqrt(errors.size):.2f}"

        best = min((m for m in cell if m in INTERVAL_METHODS), key=lambda m: cell[m].mean())
        parts = [f"{key[0]} ({n:,})", f"{key[1]:g}", best, show(cell[best])]
        for method in circular:
            parts += [show(cell[method]), f"{cell[method].mean() / cell[best].mean():.2f}"]
        lines.append("| " + " | ".join(parts) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--datasets", default="demo,flights-departure,flights3m-departure")
    parser.add_argument("--epsilons", default="1,2,3,4")
    parser.add_argument("--factors", default="1,0.6", help="opm-circular windows, as multiples of the paper's")
    parser.add_argument("--sw-factors", default="", help="also SW at these multiples of the MI rule's b")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    epsilons = [float(e) for e in args.epsilons.split(",")]
    factors = [float(f) for f in args.factors.split(",")]
    sw_factors = [float(f) for f in args.sw_factors.split(",") if f]
    rows = [row for name in args.datasets.split(",") for row in run(name, epsilons, factors, args.repeats, sw_factors)]
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps({"load": os.getloadavg(), "repeats": args.repeats, "rows": rows}, indent=1))
    print(table(rows))
    print(f"(load average at the end: {os.getloadavg()[0]:.1f}; wrote {args.out})")


if __name__ == "__main__":
    main()
