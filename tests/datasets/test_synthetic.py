"""Synthetic datasets: i.i.d. draws from known laws (beta, the step density of eq. 92, truncated laws, geometric,
sparse, uniform and Zipf items).

Statistical tolerances are 5 standard errors of the checked estimator under the stated law (a false failure has
probability < 1e-6 per check, and seeds are fixed).
"""

import math

import numpy as np
import pytest

from dpdist import datasets


def test_beta_mean_matches_the_law():
    x = datasets.get("beta-5-2").load(100_000, rng=0)
    a, b = 5, 2
    sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    assert x.min() >= 0 and x.max() <= 1
    assert abs(x.mean() - a / (a + b)) < 5 * sd / math.sqrt(x.size)

@pytest.mark.parametrize("intervals", [2, 4, 8, 16])
def test_step_density_of_eq_92(intervals):
    n = 200_000
    x = datasets.get(f"step-{intervals}").load(n, rng=intervals)
    counts = np.bincount(np.floor(x * intervals).astype(int), minlength=intervals)
    # eq. 92: density 1.5 on odd intervals, 0.5 on even ones, each of width 1/intervals
    expected = np.where(np.arange(intervals) % 2 == 1, 1.5, 0.5) / intervals
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(counts / n - expected) < 5 * se)

def test_truncated_laws_stay_in_bounds_and_are_centred():
    x = datasets.get("normal").load(50_000, rng=1)
    assert x.min() >= -4 and x.max() <= 4
    assert abs(x.mean()) < 5 / math.sqrt(x.size)  # sd of N(0,1) truncated at 4 is < 1
    y = datasets.get("lognormal").load(50_000, rng=1)
    assert y.min() >= 0 and y.max() <= 5
    # median of Lognormal(0, 0.5) is 1; truncation at 5 moves it by < 1e-3
    assert abs(np.mean(y < 1.0) - 0.5) < 5 * 0.5 / math.sqrt(y.size)

def test_geometric_sparse_uniform_and_zipf():
    n = 100_000
    geo = datasets.get("geo-0.8").load(n, rng=2)
    assert geo.dtype == np.int64 and geo.min() >= 0 and geo.max() < 10_000
    p0 = 0.8  # lambda / (1 - (1 - lambda)^k) = 0.8 to double precision for k = 10,000
    assert abs(np.mean(geo == 0) - p0) < 5 * math.sqrt(p0 * (1 - p0) / n)
    unif = datasets.get("unif-25").load(n, rng=2)
    support = np.unique(unif)
    assert support.size == 25
    assert np.all(np.abs(np.bincount(unif)[support] / n - 1 / 25) < 5 * math.sqrt((1 / 25) * (24 / 25) / n))
    assert np.isin(datasets.get("unif-25").load(1000, rng=9), support).all()  # the support is fixed
    zipf = datasets.get("zipf-1.1").load(n, rng=2)
    weights = np.arange(1, 10_001) ** -1.1
    p = weights / weights.sum()
    frequencies = np.bincount(zipf, minlength=10_000) / n
    assert np.all(np.abs(frequencies[:5] - p[:5]) < 5 * np.sqrt(p[:5] * (1 - p[:5]) / n))
