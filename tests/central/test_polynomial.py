"""Polynomial projection (Theorem 1, Alg. 1, Lemma 6, Prop. 1) and its mergeable moments."""

import numpy as np
import pytest

from dpdist import central
from dpdist.central import moments as mom
from dpdist.central.polynomial import PolynomialMoments
from dpdist.errors import (
    IncompatibleStateError,
    InvalidParameterError,
    InvalidPrivacyParameterError,
    OutOfDomainError,
)


@pytest.mark.parametrize("moments", ["monomial", "legendre"])
@pytest.mark.parametrize("degree", [3, 8, 30])
def test_output_is_a_monotone_cdf_in_unit_interval(moments, degree):
    x = np.random.default_rng(0).beta(10, 2, 2000)
    dist = central.polynomial_projection(x, 0.5, 1e-6, (0, 1), degree, rng=1, moments=moments)
    assert np.all(dist.probabilities >= 0)
    assert dist.cumulative[0] == 0 and dist.cumulative[-1] == 1
    assert dist.bins == 1024 and dist.method == "polynomial-projection"


def test_noise_scale_and_budget_are_recorded():
    x = np.random.default_rng(0).uniform(-2, 2, 500)
    dist = central.polynomial_projection(x, 0.5, 1e-6, (-2, 2), 6, rng=0)
    (release,) = dist.details["releases"]
    l1, l2 = mom.moment_sensitivities(6, 500, "monomial")
    assert release["sensitivity_l2"] == pytest.approx(l2)
    from dpdist.central.noise import secure_grid_step, zcdp_gaussian_sigma

    # the discrete Gaussian on the grid: sigma for the grid's l2 sensitivity (Delta / step + sqrt(d))
    step = secure_grid_step(l2)
    expected = zcdp_gaussian_sigma(0.5, 1e-6, l2 / step + np.sqrt(7)) * step
    assert release["mechanism"] == "discrete-gaussian"
    assert release["sigma"] == pytest.approx(expected, rel=1e-9) and release["sigma"] >= expected
    assert dist.details["budget"] == {"moments": {"epsilon": 0.5, "delta": 1e-6}}
    assert dist.epsilon == 0.5 and dist.n == 500


@pytest.mark.parametrize("releases", [100, pytest.param(400, marks=pytest.mark.slow)])  # 400: 1.2 CPU-s
def test_noise_on_moments_has_the_calibrated_variance(releases):
    x = np.random.default_rng(1).uniform(-1, 1, 1000)
    exact = mom.data_moments(x, 4, "legendre")
    draws = np.array(
        [PolynomialMoments.release(x, 1.0, 1e-5, (-1, 1), 4, rng=seed, basis="legendre").moments
         for seed in range(releases)]
    )
    sigma = PolynomialMoments.release(x, 1.0, 1e-5, (-1, 1), 4, rng=0, basis="legendre").releases[0]["sigma"]
    # sample mean within 5 standard errors; sample variance within 5 s.e. (var of s^2 is 2 sigma^4 / (k - 1))
    assert np.all(np.abs(draws.mean(axis=0) - exact) < 5 * sigma / np.sqrt(releases))
    assert np.all(np.abs(draws.var(axis=0, ddof=1) / sigma**2 - 1) < 5 * np.sqrt(2 / (releases - 1)))


def test_large_epsilon_recovers_the_isotonic_projection():
    x = np.random.default_rng(2).normal(0, 1, 3000).clip(-4, 4)
    dist = central.polynomial_projection(x, 1e9, 0.5, (-4, 4), 12, rng=0, moments="legendre")
    u = np.linspace(-1, 1, 1025)
    exact = mom.evaluate_projection(mom.legendre_coefficients(mom.data_moments(x / 4, 12, "legendre"), 12, "legendre"), u)
    from dpdist.postprocess import isotonic_cdf

    np.testing.assert_allclose(dist.cumulative, isotonic_cdf(exact, pinned=True), atol=1e-6)


def test_merge_weights_by_n_and_is_associative_and_commutative():
    rng = np.random.default_rng(3)
    sites = [PolynomialMoments.release(rng.uniform(0, 1, size), 0.5, 1e-6, (0, 1), 5, rng=i) for i, size in enumerate((100, 300, 50))]
    a, b, c = sites
    left, right = (a + b) + c, a + (b + c)
    np.testing.assert_allclose(left.moments, right.moments, rtol=1e-14)
    np.testing.assert_allclose((b + a).moments, (a + b).moments, rtol=1e-14)
    expected = (100 * a.moments + 300 * b.moments + 50 * c.moments) / 450
    np.testing.assert_allclose(PolynomialMoments.merge_all(sites).moments, expected, rtol=1e-14)
    assert left.n == 450 and len(left.releases) == 3
    dist = left.to_distribution()
    assert dist.n == 450 and dist.epsilon == 0.5 and len(dist.details["releases"]) == 3


def test_merge_of_streaming_batches_matches_pooled_moments_without_noise():
    rng = np.random.default_rng(4)
    batches = [rng.normal(size=1000).clip(-4, 4) for _ in range(10)]
    releases = [PolynomialMoments.release(b, 1e12, 0.5, (-4, 4), 6, rng=i) for i, b in enumerate(batches)]
    pooled = mom.data_moments(np.concatenate(batches) / 4, 6)
    # at huge epsilon the analytic-Gaussian sigma ~ Delta / sqrt(2 eps) ~ 3e-9; 1e-7 is > 30 sigma
    np.testing.assert_allclose(PolynomialMoments.merge_all(releases).moments, pooled, atol=1e-7)


def test_merge_rejects_incompatible_releases():
    x = np.linspace(0, 1, 50)
    a = PolynomialMoments.release(x, 1.0, 1e-6, (0, 1), 5, rng=0)
    for other in (
        PolynomialMoments.release(x, 1.0, 1e-6, (0, 1), 6, rng=0),
        PolynomialMoments.release(x, 1.0, 1e-6, (0, 2), 5, rng=0),
        PolynomialMoments.release(x, 1.0, 1e-6, (0, 1), 5, rng=0, basis="legendre"),
    ):
        with pytest.raises(IncompatibleStateError):
            a.merge(other)
    with pytest.raises(IncompatibleStateError):
        a.merge("not a release")
    with pytest.raises(InvalidParameterError):
        PolynomialMoments.merge_all([])


def test_secure_mode_is_pure_epsilon_on_a_grid():
    x = np.random.default_rng(5).uniform(0, 1, 200)
    release = PolynomialMoments.release(x, 1.0, 1e-6, (0, 1), 4, secure=True)
    assert release.releases[0]["mechanism"] == "discrete-laplace" and release.delta == 0.0
    from dpdist.central.noise import secure_grid_step

    step = secure_grid_step(release.releases[0]["sensitivity_l1"])
    assert np.all(release.moments / step == np.round(release.moments / step))
    with pytest.raises(InvalidParameterError):
        central.polynomial_projection(x, 1.0, 1e-6, (0, 1), 4, rng=3, secure=True)


@pytest.mark.parametrize(
    "kwargs,error",
    [
        ({"epsilon": 0.0}, InvalidPrivacyParameterError),
        ({"epsilon": float("nan")}, InvalidPrivacyParameterError),
        ({"delta": 0.0}, InvalidPrivacyParameterError),
        ({"delta": 1.0}, InvalidPrivacyParameterError),
        ({"bounds": (1.0, 0.0)}, InvalidParameterError),
        ({"degree": 0}, InvalidParameterError),
        ({"degree": 31}, InvalidParameterError),
        ({"moments": "chebyshev"}, InvalidParameterError),
        ({"x": [0.5, 2.0], "clip": False}, OutOfDomainError),  # the strict mode; the default clips
        ({"x": [0.5, float("nan")], "clip": False}, OutOfDomainError),
    ],
)
def test_bad_input_raises_a_named_error(kwargs, error):
    arguments = {"x": [0.1, 0.5], "epsilon": 1.0, "delta": 1e-6, "bounds": (0, 1), "degree": 4, "rng": 0}
    arguments.update(kwargs)
    with pytest.raises(error) as info:
        central.polynomial_projection(**arguments)
    name = next(iter(kwargs))
    assert repr(name) in str(info.value) or name == "x"


def test_clip_true_accepts_out_of_bounds_data():
    dist = central.polynomial_projection([-3.0, 0.5, 9.0], 1.0, 1e-6, (0, 1), 4, rng=0)  # clip=True: the default
    assert "clipped" not in dist.details["releases"][0]  # an un-noised count: never released
