"""The released counts follow their claimed discrete laws (seeded; tolerances from the variance)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist.central import TreeHistogram
from dpdist.central._grid_quantile import GRID_CELLS, cell_points, exponential_quantile, to_cells
from dpdist.central.noise import _dyadic_epsilon


def _tree_levels(x, branching, height):
    leaves = branching**height
    levels = [np.bincount(np.minimum((x * leaves).astype(np.int64), leaves - 1), minlength=leaves)]
    for _ in range(height - 1):
        levels.append(levels[-1].reshape(-1, branching).sum(axis=1))
    return np.concatenate(levels[::-1])


def test_tree_node_noise_is_discrete_laplace_of_scale_height_over_epsilon():
    # epsilon = 0.7 is not dyadic, so the sampler runs with a non-integer scale t/s (s > 1):
    # P(z) ∝ exp(-|z| eps' / h), eps' = floor(eps 2^20) / 2^20, on the integers
    x = np.random.default_rng(0).random(1000)
    epsilon, branching, height = 0.7, 16, 2
    exact = _tree_levels(x, branching, height)
    noise = np.concatenate([
        np.concatenate(TreeHistogram.release(x, epsilon, (0, 1), branching=branching, height=height, rng=seed).levels[1:]) - exact
        for seed in range(100)
    ])
    a = float(_dyadic_epsilon(epsilon)) / height
    support = np.arange(-8, 9)
    pmf = np.exp(-a * np.abs(support)) * (1 - math.exp(-a)) / (1 + math.exp(-a))
    observed = np.array([(noise == z).mean() for z in support])
    # every cell within 5 standard errors of its exact probability (27,200 draws)
    assert np.all(np.abs(observed - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / noise.size))
    # the variance, 2 e^-a / (1 - e^-a)^2, within 5 standard errors (sd of a sample variance
    # ~ sqrt((kurtosis - 1) / N) var, kurtosis of the discrete Laplace below 6)
    variance = 2 * math.exp(-a) / (1 - math.exp(-a)) ** 2
    assert abs(noise.var() - variance) < 5 * math.sqrt(5 / noise.size) * variance
    assert abs(noise.mean()) < 5 * math.sqrt(variance / noise.size)


@pytest.mark.slow  # 1.8 CPU-s: a law checked from 20,000 draws
def test_single_quantile_exponential_mechanism_matches_its_law():
    # Smith's mechanism (AQ's building block): interval i between sorted points has
    # probability ∝ w_i exp(-eps |i - q k| / 2), the output uniform inside it
    # (on the 2^32-cell public grid, exactly sampled; the grid's law differs from the
    # continuous one by the points' rounding, ~1e-9, invisible at 20,000 draws); the bounds are 5 standard
    # errors at the number of draws
    x = np.array([0.1, 0.2, 0.5, 0.9])
    epsilon, q = 1.0, 0.5
    points = np.concatenate([[0.0], x, [1.0]])
    widths = np.diff(points)
    weights = widths * np.exp(-epsilon * np.abs(np.arange(x.size + 1) - q * x.size) / 2)
    pmf = weights / weights.sum()
    rng = np.random.default_rng(11)
    cells = to_cells(x, (0.0, 1.0))
    draws = cell_points(np.array([exponential_quantile(cells, 0, GRID_CELLS, q, epsilon, rng) for _ in range(20_000)]),
                        (0.0, 1.0))
    observed = np.bincount(np.searchsorted(points, draws, side="right") - 1, minlength=x.size + 1)[: x.size + 1] / draws.size
    assert np.all(np.abs(observed - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / draws.size))
    # uniform inside the chosen interval: the position within interval 2 ([0.2, 0.5)) has mean 1/2
    inside = (draws[(draws >= 0.2) & (draws < 0.5)] - 0.2) / 0.3
    assert abs(inside.mean() - 0.5) < 5 * math.sqrt(1 / 12 / inside.size)
