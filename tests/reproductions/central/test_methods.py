"""The ``central`` reproduction's methods and metrics (``dpdist.reproductions.central.methods``)."""

from __future__ import annotations

import numpy as np
import pytest

from dpdist import central, datasets, metrics
from dpdist.errors import InvalidParameterError
from dpdist.reproductions.central import methods as paper_methods


def test_step_cdf_is_the_staircase_of_the_histogram():
    x = np.random.default_rng(0).normal(size=2_000).clip(-4, 4)
    dataset = datasets.get("normal")
    linear = paper_methods.histogram_method(x, dataset, {"epsilon": 1.0, "bins": 8}, np.random.default_rng(1))
    step = paper_methods.histogram_method(x, dataset, {"epsilon": 1.0, "bins": 8, "cdf": "step"},
                                        np.random.default_rng(1))
    inside = linear.edges[:-1] + 0.5 * np.diff(linear.edges)  # bin midpoints
    # the staircase holds the CDF of the left edge inside a bin; the linear CDF interpolates
    np.testing.assert_allclose(step.cdf(inside), linear.cumulative[:-1], atol=1e-9)
    np.testing.assert_allclose(step.cdf(linear.edges), linear.cumulative, atol=1e-9)

def test_split_settings_pool_all_parts_and_keep_a_valid_cdf():
    x = np.random.default_rng(2).beta(10, 2, size=3_000)
    dataset = datasets.get("beta-10-2")
    for method in (paper_methods.histogram_method, paper_methods.adaptive_quantiles_method,
                   paper_methods.polynomial_method, paper_methods.matching_pursuit_method):
        for setting in ("decentralized", "streaming"):
            estimate = method(x, dataset, {"epsilon": 1.0, "setting": setting, "parts": 3}, np.random.default_rng(3))
            assert np.all(np.diff(estimate.cumulative) >= -1e-12)
            assert estimate.cumulative[0] == 0 and estimate.cumulative[-1] == 1
    pooled = paper_methods.polynomial_method(x, dataset, {"epsilon": 1.0, "setting": "decentralized", "parts": 3},
                                           np.random.default_rng(4))
    releases = pooled.details["releases"]
    assert [r["n"] for r in releases] == [1_000, 1_000, 1_000]
    assert all(r["delta"] == pytest.approx(1_000 ** -1.5) for r in releases)  # delta = n_site^-3/2
    with pytest.raises(InvalidParameterError, match="'parts'"):
        paper_methods.histogram_method(x, dataset, {"epsilon": 1.0, "setting": "streaming", "parts": 0}, None)
    with pytest.raises(InvalidParameterError, match="'setting'"):
        paper_methods.histogram_method(x, dataset, {"epsilon": 1.0, "setting": "federated"}, None)

def test_nonprivate_references_match_the_noise_free_limit():
    x = np.random.default_rng(5).normal(size=20_000).clip(-4, 4)
    dataset = datasets.get("normal")
    projection = paper_methods.polynomial_method(x, dataset, {"degree": 12, "private": False}, None)
    # with a budget so large the noise is negligible, the private release is the same projection
    private = central.polynomial_projection(x, 1e4, 1e-6, (-4, 4), 12, rng=0, moments="legendre")
    assert metrics.ks(projection, x) == pytest.approx(metrics.ks(private, x), abs=1e-3)
    pursuit = paper_methods.matching_pursuit_method(x, dataset, {"sparsity": 12, "private": False}, None)
    assert metrics.ks(pursuit, x) < metrics.ks(
        paper_methods.matching_pursuit_method(x, dataset, {"sparsity": 2, "private": False}, None), x
    )
