"""Moment statistics of polynomial projection (Theorem 1, Lemma 6 of Tao & Sarwate): the projection's coefficients
against quadrature, Theorem 1's matrix, the sensitivities against brute force."""

import numpy as np
import pytest
from numpy.polynomial import legendre

from dpdist.central import moments as mom


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
