"""The seeded simulation behind every expected error that has no closed form, and the summary of its runs.

Run ``r`` at epsilon ``e`` draws its data from ``named_generator(seed, "data", r)``
(the same data at every epsilon: common random numbers make the curve smooth) and
its randomness from ``named_generator(seed, method, e, r)``; the expected error is
the mean over the runs and its standard error the runs' standard deviation over
the square root of their number.
"""

from __future__ import annotations

import math

import numpy as np

from .. import metrics
from .._rng import named_generator
from ..estimates import Distribution
from ._result import Expected

__all__ = ["data_generator", "run_generator", "summarize_runs", "distribution_errors"]

#: the 97.5% normal quantile: half-widths of 95% intervals
Z95 = 1.959963984540054


def data_generator(seed: int, run: int) -> np.random.Generator:
    return named_generator(seed, "data", run)


def run_generator(seed: int, method: str, epsilon: float, run: int) -> np.random.Generator:
    return named_generator(seed, method, float(epsilon), run)


def mean_of(values: list[float]) -> Expected:
    array = np.asarray(values, dtype=np.float64)
    spread = float(array.std(ddof=1)) if array.size > 1 else math.nan
    return Expected(float(array.mean()), spread / math.sqrt(array.size), "simulation")


def root_mean_square(errors: list[float]) -> Expected:
    """sqrt(mean(e^2)), its standard error by the delta method."""
    squares = np.asarray(errors, dtype=np.float64) ** 2
    value = math.sqrt(float(squares.mean()))
    spread = float(squares.std(ddof=1)) / math.sqrt(squares.size) if squares.size > 1 else math.nan
    return Expected(value, spread / (2 * value) if value > 0 else math.nan, "simulation")


def interval_of(errors: list[float]) -> Expected:
    """Half-width of a 95% interval of an estimate from its errors over the runs: 1.96 times their root mean
    square (bias included; for an unbiased normal estimate it is the usual 1.96 standard deviations)."""
    rms = root_mean_square(errors)
    return Expected(Z95 * rms.value, Z95 * rms.standard_error, "simulation")


def distribution_errors(runs: list[tuple[Distribution, np.ndarray]]) -> dict[str, Expected]:
    """W1, KS, the mean's RMSE and the median's 95% half-width of estimated distributions against their data."""
    w1 = [metrics.wasserstein(estimate, data) for estimate, data in runs]
    ks = [metrics.ks(estimate, data) for estimate, data in runs]
    mean_errors = [estimate.mean() - float(np.mean(data)) for estimate, data in runs]
    medians = [float(estimate.quantile(0.5)) - float(np.median(data)) for estimate, data in runs]
    return {"w1": mean_of(w1), "ks": mean_of(ks), "mean_rmse": root_mean_square(mean_errors),
            "interval": interval_of(medians)}


def summarize_runs(runs: list[dict[str, float]]) -> dict[str, Expected]:
    """The mean and standard error of each metric over runs given as ``{metric: value}``."""
    return {name: mean_of([run[name] for run in runs]) for name in runs[0]}
