"""Vectorized exact discrete Gaussian noise on a lattice variance t * s, and its zCDP calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist.central import _gaussian_noise as gaussian_noise
from dpdist.central._gaussian_noise import (
    MIN_SIGMA,
    discrete_gaussian_lattice,
    gaussian_mu,
    lattice_for_mu,
    lattice_rho,
    lattice_variance,
    rounding_distance,
)
from dpdist.central.noise import gaussian_delta
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


@pytest.mark.parametrize("square_limit", [None, 1], ids=["int64 squares", "exact rationals"])
def test_a_few_coordinates_drawn_on_lists_are_the_arrays_numbers_and_generator_state(monkeypatch, square_limit):
    """Under FEW_ENTRIES coordinates the sampler runs on Python lists: what the array rounds draw from the same
    generator, to its last state, at sizes up to the cut, on a small and a large lattice variance."""
    from dpdist.central import noise

    if square_limit is not None:  # every |Y - s| > 1 decided with Python integers, on lists and on arrays alike
        monkeypatch.setattr(gaussian_noise, "_SQUARE_LIMIT", square_limit)
    for sigma in (2.5, 2.0**18 * 1.3):
        t, s = lattice_variance(sigma)
        for size in (1, 2, 3, 5, noise.FEW_ENTRIES - 1):
            on_lists, on_arrays = np.random.default_rng([size, t]), np.random.default_rng([size, t])
            few = discrete_gaussian_lattice(size, t, s, on_lists)
            with monkeypatch.context() as arrays_only:  # the array rounds at every size, the proposals' too
                arrays_only.setattr(gaussian_noise, "FEW_ENTRIES", 0)
                arrays_only.setattr(noise, "FEW_ENTRIES", 0)
                np.testing.assert_array_equal(few, discrete_gaussian_lattice(size, t, s, on_arrays))
            assert on_lists.bit_generator.state == on_arrays.bit_generator.state


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


@pytest.mark.parametrize("mu, sensitivity, integer", [(0.26, 1.0, True), (0.26, 70.7, True), (2.0, 5.0, False),
                                                      (1e-3, 1e6, False), (0.05, 3.0, True)])
def test_a_lattice_for_mu_has_at_least_its_noise_and_min_sigma_steps(mu, sensitivity, integer):
    step, steps, t, s = lattice_for_mu(mu, sensitivity, rounding=3.0, integer=integer)
    assert math.log2(step) == round(math.log2(step))  # a power of two
    assert steps == sensitivity / step + (0.0 if integer else 3.0)
    assert steps / math.sqrt(t * s) <= mu and math.sqrt(t * s) >= MIN_SIGMA
    if integer:
        assert step <= 1.0
    assert lattice_rho(t, s, steps) == pytest.approx((steps / math.sqrt(t * s)) ** 2 / 2)


def _rounding_tv(sigma: float) -> float:
    """The total variation between the discrete Gaussian and the rounded continuous one, summed in double
    precision (accurate to ~1e-13 at these sigmas)."""
    from scipy import special

    support = np.arange(-math.ceil(40 * sigma), math.ceil(40 * sigma) + 1)
    rounded = special.ndtr((support + 0.5) / sigma) - special.ndtr((support - 0.5) / sigma)
    discrete = np.exp(-support.astype(float) ** 2 / (2 * sigma * sigma))
    return 0.5 * float(np.abs(rounded - discrete / discrete.sum()).sum())


@pytest.mark.parametrize("sigma", [1.0, 2.0, 5.0, 20.0, 100.0])
def test_the_rounding_distance_bounds_the_total_variation_to_the_rounded_gaussian(sigma):
    assert _rounding_tv(sigma) <= rounding_distance(sigma)
    assert rounding_distance(sigma) < 10 * _rounding_tv(sigma)  # and is within a small factor of it


@pytest.mark.parametrize("epsilon, delta, changed", [(1.0, 1e-5, 1), (1.0, 1e-5, 100), (0.1, 1e-9, 50), (8.0, 1e-3, 2)])
def test_gaussian_mu_spends_its_delta_with_the_rounding_slack(epsilon, delta, changed):
    mu = gaussian_mu(epsilon, delta, changed)
    slack = (1 + math.exp(epsilon)) * changed * rounding_distance(MIN_SIGMA)
    assert gaussian_delta(1 / mu, epsilon, 1.0) + slack <= delta
    assert gaussian_delta(1 / mu, epsilon, 1.0) + slack > delta * (1 - 1e-6)


def test_a_delta_below_the_rounding_slack_is_refused():
    with pytest.raises(InvalidPrivacyParameterError, match="raise delta"):
        gaussian_mu(1.0, 1e-12, 1000)
