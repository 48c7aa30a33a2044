"""Adaptive quantiles, the baseline of sec. II-B (dpdist.central.quantiles): without noise they are the ECDF at the
knots; the budget is spent as stated and the result is valid."""

import numpy as np
import pytest

from dpdist import central


def test_adaptive_quantiles_without_noise_recovers_the_ecdf_at_the_knots():
    x = np.random.default_rng(2).lognormal(0, 0.5, 2000).clip(0, 5)
    dist = central.adaptive_quantiles(x, 1e12, (0, 5), 40, rng=0)
    knots_x, knots_q = np.array(dist.details["knots"]["x"]), np.array(dist.details["knots"]["q"])
    ecdf = np.searchsorted(np.sort(x), knots_x, side="right") / x.size
    np.testing.assert_allclose(knots_q, ecdf, atol=1e-9)
    # the splits go where the mass is: every gap between consecutive knots is below 2 / (iterations + 1)
    assert np.max(np.diff(knots_q)) < 2 / 41


def test_adaptive_quantiles_budget_and_validity():
    x = np.random.default_rng(3).normal(0, 1, 1000).clip(-4, 4)
    dist = central.adaptive_quantiles(x, 0.5, (-4, 4), 50, rng=1)
    assert dist.details["budget"] == {"per_iteration": 0.01, "iterations": 50}
    assert dist.details["noise_scale"] == pytest.approx(2 / 0.01)
    assert np.all(dist.probabilities >= 0) and dist.bins == 1024
    secure = central.adaptive_quantiles(x, 0.5, (-4, 4), 10, secure=True)
    assert np.all(secure.probabilities >= 0)
