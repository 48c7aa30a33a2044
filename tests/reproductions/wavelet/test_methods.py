"""The ``wavelet`` reproduction's methods and metrics (``dpdist.reproductions.wavelet.methods``)."""

from __future__ import annotations

import numpy as np
import pytest

from dpdist import datasets, local, metrics
from dpdist.local.numerical._haar_design import wasserstein_bound
from dpdist.reproductions.wavelet import methods as paper_methods


def test_unit_wasserstein_is_grid_w1_over_the_width():
    dataset = datasets.get("income-weekly")
    x = dataset.load(3000, rng=np.random.default_rng(0))
    estimate = local.make("binning", epsilon=2.0, bins=16, bounds=dataset.bounds).estimate(
        local.make("binning", epsilon=2.0, bins=16, bounds=dataset.bounds).simulate(x, rng=1)
    )
    width = dataset.bounds[1] - dataset.bounds[0]
    expected = metrics.wasserstein(estimate, x, grid=256) / width
    assert paper_methods.unit_wasserstein(estimate, x) == pytest.approx(expected, rel=1e-12)

def test_theorem1_bound_metric_reads_the_wavelet_estimate():
    x = np.random.default_rng(1).beta(5, 2, 4000)
    proto = local.make("wavelet", epsilon=1.0, levels=4)
    estimate = proto.estimate(proto.simulate(x, rng=2))
    assert paper_methods.theorem1_bound(estimate, x) == pytest.approx(wasserstein_bound(4000, 1.0, 4))
    other = local.make("binning", epsilon=1.0, bins=8)
    assert paper_methods.theorem1_bound(other.estimate(other.simulate(x, rng=3)), x) is None

def test_hierarchy_isotonic_is_a_valid_cdf_close_to_the_data_at_a_large_budget():
    dataset = datasets.get("beta-5-2")
    x = dataset.load(20_000, rng=np.random.default_rng(6))
    estimate = paper_methods.hierarchy_isotonic(x, dataset, {"epsilon": 12.0}, np.random.default_rng(7))
    assert estimate.probabilities.size == 256
    assert estimate.probabilities.min() >= 0 and estimate.probabilities.sum() == pytest.approx(1.0)
    # eps = 12: the oracles are almost exact; what is left is the 256-bin resolution
    # (W1 <= 1/512 ~ 0.002) and the level split of 20,000 users (~ 1/sqrt(5000) per node
    # at worst, ~ 0.003 on the CDF); 0.01 is more than twice their sum.
    assert paper_methods.unit_wasserstein(estimate, x) < 0.01
