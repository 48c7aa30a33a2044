"""Polynomial projection (Theorem 1, Alg. 1, Lemma 6, Prop. 1) and its mergeable moments."""

import numpy as np
import pytest
from numpy.polynomial import legendre

from dpdist import central
from dpdist.central import moments as mom
from dpdist.central.polynomial import PolynomialMoments
from dpdist.errors import (
    IncompatibleStateError,
    InvalidParameterError,
    InvalidPrivacyParameterError,
    OutOfDomainError,
)


def _ecdf_legendre_coefficients_by_quadrature(u, degree):
    """<F_n, e_i> by Gauss-Legendre quadrature on each interval where F_n is constant."""
    u = np.sort(u)
    breaks = np.concatenate([[-1.0], u, [1.0]])
    levels = np.arange(u.size + 1) / u.size  # F_n on [breaks[k], breaks[k+1])
    nodes, weights = legendre.leggauss(40)  # exact for polynomials of degree <= 79
    half = np.diff(breaks) / 2
    points = ((breaks[:-1] + breaks[1:]) / 2)[:, None] + half[:, None] * nodes
    basis = legendre.legvander(points.ravel(), degree) * np.sqrt((2 * np.arange(degree + 1) + 1) / 2)
    integrand = (levels[:, None] * half[:, None] * weights).ravel()
    return integrand @ basis


@pytest.mark.parametrize("degree", [1, 6, 15, 30])
@pytest.mark.parametrize("basis", ["monomial", "legendre"])
def test_projection_coefficients_match_numerical_integration(degree, basis):
    u = np.random.default_rng(degree).uniform(-1, 1, 60)
    expected = _ecdf_legendre_coefficients_by_quadrature(u, degree)
    got = mom.legendre_coefficients(mom.data_moments(u, degree, basis), degree, basis)
    # Theorem 1 (exact rationals, entries up to ~1e9 at degree 30) loses ~1e-6 to cancellation; Legendre moments ~1e-14
    tolerance = 1e-5 if basis == "monomial" else 1e-12
    np.testing.assert_allclose(got, expected, atol=tolerance)


def test_theorem1_matrix_matches_legendre_monomial_coefficients():
    for degree in (3, 10):
        matrix = mom.theorem1_matrix(degree)
        for i in range(degree + 1):
            coefficients = legendre.leg2poly([0] * i + [1]) * np.sqrt((2 * i + 1) / 2)
            expected = coefficients / (np.arange(i + 1) + 1)  # int F_n x^j = (1 - mu_{j+1}) / (j + 1)
            np.testing.assert_allclose(matrix[i, : i + 1], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("degree", [2, 5, 6, 11])
@pytest.mark.parametrize("basis", ["monomial", "legendre"])
def test_lemma6_sensitivity_bounds_brute_force(degree, basis):
    n = 3
    grid = np.linspace(-1, 1, 401)
    values = mom._basis_values(grid, degree, basis)
    # neighbours differ in one entry x -> x': mu - mu' = (v(x) - v(x')) / n
    differences = (values[:, None, :] - values[None, :, :]) / n
    brute_l2 = np.sqrt((differences**2).sum(axis=-1)).max()
    brute_l1 = np.abs(differences).sum(axis=-1).max()
    l1, l2 = mom.moment_sensitivities(degree, n, basis)
    assert brute_l2 <= l2 * (1 + 1e-12) and brute_l1 <= l1 * (1 + 1e-12)
    # the per-moment ranges are tight (checked on a finer grid: spacing 1e-4 -> error < 1e-5)
    fine = mom._basis_values(np.linspace(-1, 1, 20001), degree, basis)
    np.testing.assert_allclose(np.ptp(fine, axis=0), mom.moment_ranges(degree, basis), atol=1e-5)
    if basis == "monomial":  # Lemma 6 closed form
        expected = (5 * degree + 8) / 2 if degree % 2 == 0 else (5 * degree + 5) / 2
        assert l2 == pytest.approx(np.sqrt(expected) / n)
        assert l1 == pytest.approx(((3 * degree + 4) if degree % 2 == 0 else (3 * degree + 3)) / (2 * n))


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
