"""W1 on the circle of the day: the circular optimal piecewise mechanism against the interval methods (issue 35.1).

Run: ``uv run python benchmarks/bench_circular.py [--repeats 5] [--datasets flights-departure,...]``.

Departure times of day (minutes in [0, 1440), 23:59 next to 00:00) from three data sets: the demo's
embedded 100,000 flights (``demo``), ``flights-departure`` (328,521 NYC flights) and
``flights3m-departure`` (3,000,000 US flights; needs the npm data, see docs/experiments.md).  Every
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
from dpdist.local.numerical.opm import optimal_window  # noqa: E402

PERIOD = 1440.0
INTERVAL_METHODS = ("sw", "gw", "hh", "hh-admm", "haar-hrr", "binning", "wavelet", "opm")
RESULTS = Path(__file__).resolve().parent / "results" / "circular.json"


def load(name: str) -> np.ndarray:
    return load_departure_minutes() if name == "demo" else datasets.get(name).load()


def method_configs(epsilon: float, factors: list[float]) -> list[tuple[str, str, dict]]:
    """(label, protocol, parameters): the interval methods at their defaults, then the circular ones."""
    configs = [(name, name, {}) for name in INTERVAL_METHODS]
    for factor in factors:
        label = "opm-circular" if factor == 1.0 else f"opm-circular w*x{factor:g}"
        configs.append((label, "opm-circular", {} if factor == 1.0 else {"window": factor * optimal_window(epsilon)}))
    return configs


def error(protocol_name: str, params: dict, epsilon: float, values: np.ndarray, seed: int) -> float:
    extra = {"n_users": values.size} if local.needs_population_size(protocol_name) else {}
    protocol = local.make(protocol_name, epsilon=epsilon, bounds=(0.0, PERIOD), **params, **extra)
    estimate = protocol.estimate(protocol.simulate(values, rng=seed))
    return metrics.circular_wasserstein(estimate, values, period=PERIOD)


def run(dataset: str, epsilons: list[float], factors: list[float], repeats: int) -> list[dict]:
    values = load(dataset)
    rows = []
    for epsilon in epsilons:
        for label, name, params in method_configs(epsilon, factors):
            start = time.perf_counter()
            errors = [error(name, params, epsilon, values, seed=1000 * round(epsilon) + r) for r in range(repeats)]
            rows.append({"dataset": dataset, "n": int(values.size), "epsilon": epsilon, "method": label,
                         "w1_circle": errors, "seconds": (time.perf_counter() - start) / repeats})
            print(f"  {dataset} eps={epsilon:g} {label}: {np.mean(errors):.3f}", flush=True)
    return rows


def table(rows: list[dict]) -> str:
    """Markdown: one line per (dataset, eps), the best interval method and the circular protocol(s)."""
    lines = ["| data set (n) | eps | best interval method | its W1 | opm-circular (paper window) | ratio | "
             "opm-circular w* x 0.6 | ratio |", "|---|---|---|---|---|---|---|---|"]
    for key in sorted({(r["dataset"], r["epsilon"]) for r in rows}):
        cell = {r["method"]: np.asarray(r["w1_circle"]) for r in rows if (r["dataset"], r["epsilon"]) == key}
        n = next(r["n"] for r in rows if r["dataset"] == key[0])

        def show(errors):
            return f"{errors.mean():.2f} ± {errors.std(ddof=1) / math.sqrt(errors.size):.2f}"

        best = min((m for m in cell if m in INTERVAL_METHODS), key=lambda m: cell[m].mean())
        circular = [m for m in cell if m.startswith("opm-circular")]
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
    args = parser.parse_args()
    epsilons = [float(e) for e in args.epsilons.split(",")]
    factors = [float(f) for f in args.factors.split(",")]
    rows = [row for name in args.datasets.split(",") for row in run(name, epsilons, factors, args.repeats)]
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"load": os.getloadavg(), "repeats": args.repeats, "rows": rows}, indent=1))
    print(table(rows))
    print(f"(load average at the end: {os.getloadavg()[0]:.1f}; wrote {RESULTS})")


if __name__ == "__main__":
    main()
