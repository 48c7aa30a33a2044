"""Vectorized exact discrete Gaussian noise on a lattice variance t * s, and its zCDP calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist.central import _gaussian_noise as gaussian_noise
from dpdist.central._gaussian_noise import (
    discrete_gaussian_lattice,
    lattice_for_rho,
    lattice_rho,
    lattice_variance,
)
from dpdist.errors import InvalidPrivacyParameterError


@pytest.mark.parametrize("sigma", [0.3, 1.0, 1.5, 3.0, 7.7, 28.3, 1000.5, 2.6e5, 2.0**20])
def test_the_lattice_variance_is_at_least_sigma_squared_with_a_scale_near_sigma(sigma):
    t, s = lattice_variance(sigma)
    assert t * s >= sigma**2
    if sigma >= 1:
        assert sigma / 2 <= t <= 2 * sigma
    if sigma >= 100:
        assert t * s <= sigma**2 * (1 + 1e-4)  # a divisor near sigma is found


@pytest.mark.parametrize("sigma", [0.0, -1.0, math.inf, math.nan, 2.0**20 * 1.01])
def test_a_lattice_variance_out_of_range_is_refused(sigma):
    with pytest.raises(InvalidPrivacyParameterError, match="standard deviation"):
        lattice_variance(sigma)


def _pmf(support: np.ndarray, variance: int) -> np.ndarray:
    wide = np.arange(-40 * math.isqrt(variance) - 40, 40 * math.isqrt(variance) + 41)
    return np.exp(-support.astype(float) ** 2 / (2 * variance)) / np.exp(-wide.astype(float) ** 2 / (2 * variance)).sum()


@pytest.mark.parametrize("t, s", [(1, 3), (3, 3), (2, 5), (4, 1)])
def test_the_draws_follow_the_discrete_gaussian_law(t, s):
    # each probability within 5 standard errors at 20,000 draws
    draws = discrete_gaussian_lattice(20_000, t, s, np.random.default_rng([t, s]))
    support = np.arange(-12, 13)
    pmf = _pmf(support, t * s)
    observed = np.array([(draws == z).mean() for z in support])
    assert np.all(np.abs(observed - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / draws.size) + 1e-12)


def test_large_proposals_take_the_exact_rational_path_with_the_same_law(monkeypatch):
    monkeypatch.setattr(gaussian_noise, "_SQUARE_LIMIT", 1)  # every |Y - s| > 1 decided with Python integers
    draws = discrete_gaussian_lattice(6_000, 2, 2, np.random.default_rng(8))
    support = np.arange(-8, 9)
    pmf = _pmf(support, 4)
    observed = np.array([(draws == z).mean() for z in support])
    assert np.all(np.abs(observed - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / draws.size) + 1e-12)


def test_bernoulli_of_e_to_minus_an_integer_has_that_frequency():
    counts = np.repeat(np.array([0, 1, 2, 3]), 20_000)
    kept = gaussian_noise._exp_minus_integers(counts, np.random.default_rng(3))
    for q in range(4):
        p = math.exp(-q)
        assert abs(kept[counts == q].mean() - p) < 5 * math.sqrt(p * (1 - p) / 20_000) + 1e-12


def test_many_coordinates_at_a_large_sigma_have_that_standard_deviation():
    t, s = lattice_variance(2.6e5)
    draws = discrete_gaussian_lattice(20_000, t, s, np.random.default_rng(4))
    # the sample variance of 20,000 normal draws: within 5 standard errors sqrt(2 / n) of 1 (relative)
    assert abs(draws.var() / (t * s) - 1) < 5 * math.sqrt(2 / draws.size)
    assert abs(draws.mean()) < 5 * math.sqrt(t * s / draws.size)


@pytest.mark.parametrize("rho, sensitivity", [(0.02, 1.0), (0.5, 7.0), (1e-2, 65536.0)])
def test_the_lattice_of_a_target_rho_spends_at_most_it(rho, sensitivity):
    t, s = lattice_for_rho(rho, sensitivity)
    assert lattice_rho(t, s, sensitivity) <= rho
    assert lattice_rho(t, s, sensitivity) >= rho * 0.9  # and not much less
