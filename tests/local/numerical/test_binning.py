"""CFO with binning (paper 003 sec. 4.1): oracle choice, channel, unbiasedness, accuracy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import local, metrics, postprocess
from dpdist.errors import InvalidParameterError


@pytest.mark.parametrize(
    "epsilon, bins, expected",
    [(1.0, 10, "grr"), (1.0, 11, "oue"), (2.0, 24, "grr"), (2.0, 25, "oue"), (0.5, 2, "grr")],
)
def test_auto_oracle_follows_the_variance_rule(epsilon, bins, expected):
    # GRR when bins < 3 e^eps + 2 (paper 000 sec. 6; 3e+2 = 10.15, 3e^2+2 = 24.17)
    assert (bins < 3 * math.exp(epsilon) + 2) == (expected == "grr")
    assert local.make("binning", epsilon=epsilon, bins=bins).oracle.name == expected


def test_named_oracles_are_built_through_the_registry():
    for name in ("grr", "oue", "olh"):
        protocol = local.make("binning", epsilon=1.0, bins=8, oracle=name)
        assert protocol.oracle.name == name and protocol.oracle.domain_size == 8


def test_channel_is_the_oracle_channel_of_each_bin():
    protocol = local.make("binning", epsilon=1.0, bins=4, oracle="oue", bounds=(-1.0, 3.0))
    values = np.array([-1.0, -0.0001, 0.0, 1.99, 2.0, 3.0])
    expected_bins = np.array([0, 0, 1, 2, 3, 3])  # bins [-1,0) [0,1) [1,2) [2,3]; hi in the last
    np.testing.assert_array_equal(protocol.bin_of(values), expected_bins)
    np.testing.assert_array_equal(protocol.channel(values), protocol.oracle.channel()[expected_bins])


def test_channel_needs_values():
    with pytest.raises(InvalidParameterError, match="values"):
        local.make("binning", epsilon=1.0, bins=4).channel()


def test_unbiased_bin_frequencies_with_the_oracle_variance():
    protocol = local.make("binning", epsilon=1.0, bins=8)
    values = np.random.default_rng(0).beta(5, 2, 2000)
    truth = np.bincount(protocol.bin_of(values), minlength=8) / values.size
    rng = np.random.default_rng(1)
    repeats = 400
    estimates = np.array(
        [protocol.frequencies(protocol.simulate(values, rng=rng)).frequencies for _ in range(repeats)]
    )
    variance = protocol.variance(values.size, truth)
    # 5 standard errors of the mean of `repeats` unbiased estimates, per bin
    assert np.all(np.abs(estimates.mean(axis=0) - truth) < 5 * np.sqrt(variance / repeats))
    # sample variance within 25% of the analytic one (sd of the ratio ~ sqrt(2/399) = 7%)
    np.testing.assert_allclose(estimates.var(axis=0, ddof=1) / variance, 1.0, atol=0.25)


def test_estimate_is_a_distribution_over_bounds_with_norm_sub_by_default():
    protocol = local.make("binning", epsilon=0.5, bins=16, bounds=(2.0, 4.0))
    values = 2.0 + 2.0 * np.random.default_rng(2).beta(5, 2, 3000)
    estimate = protocol.estimate(protocol.simulate(values, rng=3))
    assert estimate.bounds == (2.0, 4.0) and estimate.bins == 16
    raw = estimate.details["unbiased_frequencies"]
    np.testing.assert_allclose(estimate.probabilities, postprocess.norm_sub(raw))
    with pytest.raises(InvalidParameterError, match="postprocess"):
        protocol.estimate(protocol.simulate(values, rng=3), postprocess="none")


def test_accuracy_on_beta_5_2():
    """W1 on Beta(5,2), eps = 2, 16 bins, n = 100 000 (paper 003 sec. 6, CFO-binning-16)."""
    rng = np.random.default_rng(4)
    values = rng.beta(5, 2, 100_000)
    protocol = local.make("binning", epsilon=2.0, bins=16)
    estimate = protocol.estimate(protocol.simulate(values, rng=rng))
    # Bias floor: the true bin masses spread uniformly within bins.
    exact = np.bincount(protocol.bin_of(values), minlength=16) / values.size
    from dpdist.estimates import Distribution

    floor = metrics.wasserstein(Distribution.uniform_bins(exact), values)
    # Noise: W1 <= sum_k |F_hat_k - F_k| / 16 over the bin edges; each cumulative error has sd
    # at most sqrt(k * Var) (GRR bin errors are negatively correlated), so 5 such sds bound it.
    sd = np.sqrt(protocol.variance(values.size)[0])
    noise = 5 * sum(math.sqrt(k) * sd for k in range(1, 17)) / 16
    w1 = metrics.wasserstein(estimate, values)
    assert w1 < floor + noise, (floor, w1, noise)
