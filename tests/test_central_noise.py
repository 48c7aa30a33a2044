"""Noise of the central estimators: analytic Gaussian calibration, exact discrete Laplace, report noisy max."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpdist.central import noise


# ---------------------------------------------------------------- analytic Gaussian
def test_analytic_gaussian_reference_value():
    # Balle & Wang (2018): eps = 1, delta = 1e-5, sensitivity 1 -> sigma = 3.7306 (4 decimals published)
    assert noise.analytic_gaussian_sigma(1.0, 1e-5, 1.0) == pytest.approx(3.7306, abs=5e-5)


def test_analytic_gaussian_scales_linearly_with_sensitivity():
    base = noise.analytic_gaussian_sigma(0.5, 1e-6, 1.0)
    assert noise.analytic_gaussian_sigma(0.5, 1e-6, 0.004) == pytest.approx(0.004 * base, rel=1e-9)


@pytest.mark.parametrize("epsilon,delta", [(0.1, 1e-5), (0.5, 1e-6), (1.0, 1e-12), (3.0, 1e-100), (0.05, 1e-300)])
def test_analytic_gaussian_is_never_under_noised(epsilon, delta):
    sigma = noise.analytic_gaussian_sigma(epsilon, delta, 1.0)
    # the returned sigma satisfies the exact condition; 1e-9 less would violate it (relative tolerance 1e-12)
    assert noise.gaussian_delta(sigma, epsilon, 1.0) <= delta
    assert noise.gaussian_delta(sigma * (1 - 1e-9), epsilon, 1.0) > delta


@pytest.mark.parametrize("epsilon,sigma", [(0.5, 3.0), (1.0, 1.5), (2.0, 0.7)])
def test_gaussian_delta_matches_hockey_stick_integral(epsilon, sigma):
    # delta(sigma) = int max(0, p(x) - e^eps q(x)) dx for p = N(0, s^2), q = N(1, s^2)
    def integrand(x):
        return max(0.0, stats.norm.pdf(x, 0, sigma) - math.exp(epsilon) * stats.norm.pdf(x, 1, sigma))

    expected = integrate.quad(integrand, -60 * sigma, 60 * sigma, limit=400, points=[0.5])[0]
    assert noise.gaussian_delta(sigma, epsilon, 1.0) == pytest.approx(expected, rel=1e-6)


def test_analytic_gaussian_beats_classical_calibration():
    epsilon, delta = 0.5, 1e-6
    classical = math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    assert noise.analytic_gaussian_sigma(epsilon, delta, 1.0) < classical


# ---------------------------------------------------------------- exact samplers
def test_bernoulli_exp_minus_frequency():
    from fractions import Fraction

    rng = np.random.default_rng(3)
    for gamma in (Fraction(1, 3), Fraction(5, 2)):
        draws = np.array([noise._bernoulli_exp_minus(gamma, rng) for _ in range(20000)])
        p = math.exp(-float(gamma))
        # 5 standard errors of a binomial proportion
        assert abs(draws.mean() - p) < 5 * math.sqrt(p * (1 - p) / draws.size)


def test_discrete_laplace_matches_its_pmf():
    rng = np.random.default_rng(4)
    draws = noise.discrete_laplace(20000, 2, 1.0, rng)
    a = 0.5  # P(z) ∝ exp(-|z| * eps / sensitivity)
    support = np.arange(-6, 7)
    pmf = np.exp(-a * np.abs(support)) * (1 - math.exp(-a)) / (1 + math.exp(-a))
    observed = np.array([(draws == z).mean() for z in support])
    # every cell within 5 standard errors of its exact probability
    assert np.all(np.abs(observed - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / draws.size))


def test_secure_laplace_outputs_lie_on_the_grid_and_need_a_csprng():
    from dpdist._rng import check_rng

    rng = check_rng(None, secure=True)
    values = np.array([0.123456789, -0.5, 0.75])
    noisy = noise.laplace_mechanism(values, 0.01, 1.0, rng, secure=True)
    step = noise.secure_grid_step(0.01)
    assert np.all(noisy / step == np.round(noisy / step))
    counts = noise.laplace_mechanism(np.array([3.0, 7.0]), 2.0, 1.0, rng, secure=True, integer_valued=True)
    assert np.all(counts == np.round(counts))
    # a real-valued query that happens to be integral still uses the fine grid (no data-dependent grid)
    real = noise.laplace_mechanism(np.array([3.0, 7.0]), 2.0, 1.0, rng, secure=True)
    assert np.any(real != np.round(real))


def test_dyadic_epsilon_rounds_down():
    assert float(noise._dyadic_epsilon(0.1)) <= 0.1
    assert 0.1 - float(noise._dyadic_epsilon(0.1)) < 2**-20
    with pytest.raises(ValueError):
        noise._dyadic_epsilon(1e-9)


# ---------------------------------------------------------------- report noisy max: exact channel
def _noisy_max_probabilities(scores, scale):
    """P(argmax = i) of scores + i.i.d. Laplace(scale): trapezoid rule on a 400k-point grid (error < 1e-8)."""
    z = np.linspace(-60 * scale, 60 * scale, 400_001)
    out = []
    for i, s in enumerate(scores):
        density = stats.laplace.pdf(z, scale=scale)
        for j, t in enumerate(scores):
            if j != i:
                density = density * stats.laplace.cdf(s + z - t, scale=scale)
        out.append(integrate.trapezoid(density, z))
    return np.array(out)


def _worst_ratio(scale, sensitivity=1.0):
    """Max probability ratio over neighbouring score vectors: each score moves by at most the sensitivity."""
    base = np.array([0.0, 0.3, -0.2])
    worst = 0.0
    for shift in [np.array([1, -1, -1]), np.array([-1, 1, 1]), np.array([1, -1, 1]), np.array([1, 1, -1])]:
        p = _noisy_max_probabilities(base, scale)
        q = _noisy_max_probabilities(base + sensitivity * shift, scale)
        worst = max(worst, np.max(np.log(p / q)), np.max(np.log(q / p)))
    return worst


def test_report_noisy_max_channel_is_epsilon_dp():
    epsilon = 1.0
    # dpdist's scale 2 * sensitivity / epsilon: the exact channel satisfies epsilon
    assert _worst_ratio(2.0 / epsilon) <= epsilon + 1e-6


def test_report_noisy_max_with_the_papers_scale_violates_epsilon_for_non_monotone_scores():
    epsilon = 1.0
    # Alg. 2's scale sensitivity / epsilon: a shift that raises one score and lowers the others breaks epsilon
    assert _worst_ratio(1.0 / epsilon) > epsilon + 0.05


def test_secure_report_noisy_max_picks_the_clear_winner():
    from dpdist._rng import check_rng

    rng = check_rng(None, secure=True)
    winner = noise.report_noisy_max(np.array([0.0, 1000.0, 0.0]), 1.0, 1.0, rng, secure=True)
    assert winner == 1


def test_secure_mode_rejects_an_epsilon_below_its_resolution():
    from dpdist import central
    from dpdist.errors import InvalidPrivacyParameterError

    with pytest.raises(InvalidPrivacyParameterError, match="'epsilon'"):
        central.histogram_queries([0.5], 2.0**-30, (0, 1), 4, secure=True)
