"""explain's predicted errors against realized ones.

For each method, ``dpdist.explain`` predicts the expected error at n and epsilon (analytic, or
its seeded simulation: the mean of 20 runs with its standard error). The realized error is
measured here independently: 100 collections or releases written with the public API (local:
``privatize`` then ``Aggregator.add``; central: the release itself) on data drawn with
``dpdist.datasets.synthetic`` from the same law as explain's shape (Normal(0.5, 0.15^2) on the
bounds, truncated), each against its own data. ``z`` is the difference over the combined standard
error; ``|z| < 3`` is agreement within the stated error. Results: docs/how-to/predict-accuracy.md.

    uv run python benchmarks/bench_explain.py
"""

from __future__ import annotations

import math
import time

import numpy as np

from dpdist import central, local, metrics
from dpdist.accuracy import explain
from dpdist.accuracy._shapes import SHAPES
from dpdist.datasets import synthetic

RUNS = 100
N = 20_000


def _mean_se(values):
    array = np.asarray(values, dtype=np.float64)
    return float(array.mean()), float(array.std(ddof=1) / math.sqrt(array.size))


def frequency_case(name: str, epsilon: float, d: int = 64):
    protocol = local.make(name, epsilon=epsilon, domain_size=d)
    predicted = explain(protocol, N, epsilons=[epsilon]).predictions[0].errors["mse"]
    rng = np.random.default_rng(1)
    items = SHAPES["normal"].draw_items(N, d, rng)
    truth = np.bincount(items, minlength=d) / N
    realized = []
    for _ in range(RUNS):
        reports = protocol.privatize(items, rng=rng)
        realized.append(float(np.mean((protocol.estimate(protocol.aggregator().add(reports)).frequencies - truth) ** 2)))
    return f"{name} (d={d})", epsilon, "mse", predicted, _mean_se(realized)


def numerical_case(protocol, epsilon: float, metric: str = "w1"):
    release = callable(protocol) and not isinstance(protocol, local.LocalProtocol)
    extra = {"bounds": (0.0, 1.0)} if release else {}
    predicted = explain(protocol, N, epsilons=[epsilon], **extra).predictions[0].errors[metric]
    law = synthetic.normal(0.5, 0.15, bounds=(0.0, 1.0))
    rng = np.random.default_rng(2)
    realized = []
    for _ in range(RUNS):
        data = law.load(N, rng=rng)
        if release:
            estimate = protocol(data, epsilon=epsilon, bounds=(0.0, 1.0), rng=rng)
        else:
            estimate = protocol.estimate(protocol.aggregator().add(protocol.privatize(data, rng=rng)))
        if metric == "w1":
            realized.append(metrics.wasserstein(estimate, data))
        else:
            realized.append((estimate.mean - data.mean()) ** 2)
    name = getattr(protocol, "name", None) or f"central.{protocol.__name__}"
    mean, se = _mean_se(realized)
    if metric == "mean_rmse":  # the realized RMSE from the mean square (delta method)
        mean, se = math.sqrt(mean), se / (2 * math.sqrt(mean))
    return name, epsilon, metric, predicted, (mean, se)


def main() -> None:
    cases = [
        lambda: frequency_case("oue", 1.0),
        lambda: frequency_case("grr", 2.0, d=16),
        lambda: frequency_case("olh", 0.5),
        lambda: numerical_case(local.make("pm", epsilon=1.0, bounds=(0.0, 1.0)), 1.0, "mean_rmse"),
        lambda: numerical_case(local.make("sw", epsilon=1.0, bounds=(0.0, 1.0), bins=256), 1.0),
        lambda: numerical_case(local.make("hh", epsilon=2.0, bounds=(0.0, 1.0)), 2.0),
        lambda: numerical_case(central.cdf, 0.5),
        lambda: numerical_case(central.histogram_queries, 1.0),
    ]
    print(f"n = {N:,}; realized: {RUNS} independent runs; predicted: analytic, or explain's 20 seeded runs")
    print("| method | eps | metric | predicted | source | realized | z |")
    print("|---|---|---|---|---|---|---|")
    for case in cases:
        start = time.perf_counter()
        name, epsilon, metric, predicted, (mean, se) = case()
        z = (mean - predicted.value) / math.hypot(se, predicted.standard_error)
        shown = f"{predicted.value:.4g}" + (f" ± {predicted.standard_error:.2g}" if predicted.standard_error else "")
        print(f"| {name} | {epsilon:g} | {metric} | {shown} | {predicted.source} | {mean:.4g} ± {se:.2g} | {z:+.2f} |"
              f"  ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
