"""PM (dpdist.local.numerical.pm; paper 003 sec. 2.2): a public grid, unbiased and epsilon-LDP, and its variance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import local


def _continuous_pm_variance(v, epsilon):
    """Wang et al. ICDE 2019, Lemma 1: Var[PM(v)] = v^2/(e^{eps/2}-1) + (e^{eps/2}+3)/(3(e^{eps/2}-1)^2)."""
    a = math.exp(epsilon / 2)
    return v**2 / (a - 1) + (a + 3) / (3 * (a - 1) ** 2)


@pytest.mark.parametrize("epsilon, grid", [(0.5, 8), (1.0, 64), (4.0, 1024)])
def test_pm_grid_is_public_unbiased_and_epsilon_ldp(epsilon, grid):
    protocol = local.make("pm", epsilon=epsilon, grid=grid, bounds=(-3.0, 5.0))
    values = np.concatenate([[-3.0, 5.0, 1.0], np.random.default_rng(0).uniform(-3, 5, 200)])
    channel = protocol.channel(values)
    # the support is the whole public grid for every input: nothing depends on the value
    assert channel.shape == (values.size, grid + 1) and np.all(channel > 0)
    np.testing.assert_allclose(channel.sum(axis=1), 1.0, atol=1e-12)
    # decoding grid points is exactly unbiased (stochastic rounding keeps E[y] = v)
    decoded = protocol.from_unit((channel @ protocol.decoded_values + 1) / 2)
    np.testing.assert_allclose(decoded, values, atol=1e-12)
    ratio = channel.max(axis=0) / channel.min(axis=0)
    assert ratio.max() <= math.exp(epsilon) * (1 + 1e-12)


@pytest.mark.parametrize("epsilon, grid", [(0.5, 16), (2.0, 256)])
def test_pm_report_variance_is_pm_plus_a_rounding_term(epsilon, grid):
    protocol = local.make("pm", epsilon=epsilon, grid=grid)  # bounds (0, 1): scale (1/2)^2
    x = np.linspace(0, 1, 11)
    variance = protocol.report_variance(x) * 4
    continuous = _continuous_pm_variance(2 * x - 1, epsilon)
    step = 2 * protocol.output_bound / grid
    assert np.all(variance >= continuous - 1e-12) and np.all(variance <= continuous + step**2 / 4 + 1e-12)


