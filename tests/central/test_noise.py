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


def _exact_gaussian_delta(sigma, epsilon, delta_target, sensitivity=1.0):
    """delta(sigma) of Balle & Wang (2018, Thm. 8), recomputed with mpmath's erfc at 60 + log10(1/delta) digits."""
    import mpmath

    with mpmath.workdps(60 + int(-math.log10(delta_target))):
        s, e, d = mpmath.mpf(sigma), mpmath.mpf(epsilon), mpmath.mpf(sensitivity)
        a = d / (2 * s) - e * s / d
        b = d / (2 * s) + e * s / d
        root2 = mpmath.sqrt(2)
        return mpmath.erfc(-a / root2) / 2 - mpmath.exp(e) * mpmath.erfc(b / root2) / 2


# in double precision 11 of 468 calibrations exceeded delta, all at epsilon = 1e-8, delta <= 1e-20
GAUSSIAN_GRID = [
    (epsilon, delta) for epsilon in (1e-8, 1e-3, 0.1, 1.0, 8.0) for delta in (1e-5, 1e-12, 1e-20, 1e-60, 1e-300)
]


@pytest.mark.parametrize("epsilon,delta", GAUSSIAN_GRID)
def test_analytic_gaussian_is_never_under_noised(epsilon, delta):
    sigma = noise.analytic_gaussian_sigma(epsilon, delta, 1.0)
    assert _exact_gaussian_delta(sigma, epsilon, delta) <= delta


@pytest.mark.parametrize("epsilon,delta", [(0.1, 1e-5), (0.5, 1e-6), (1.0, 1e-12), (3.0, 1e-100)])
def test_analytic_gaussian_is_tight_where_double_precision_resolves_delta(epsilon, delta):
    sigma = noise.analytic_gaussian_sigma(epsilon, delta, 1.0)
    # 1e-9 less noise would violate the exact condition (relative tolerance 1e-12)
    assert _exact_gaussian_delta(sigma * (1 - 1e-9), epsilon, delta) > delta


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


def test_one_discrete_laplace_draw_at_a_time_matches_the_pmf():
    """One draw a call takes the list sampler (``_discrete_laplace_few``), not the array loop: its law, checked as the
    test above checks the arrays' (every cell within 5 standard errors of its exact probability)."""
    rng = np.random.default_rng(5)
    draws = np.array([noise.discrete_laplace(1, 2, 1.0, rng)[0] for _ in range(6000)])
    a = 0.5
    support = np.arange(-6, 7)
    pmf = np.exp(-a * np.abs(support)) * (1 - math.exp(-a)) / (1 + math.exp(-a))
    observed = np.array([(draws == z).mean() for z in support])
    assert np.all(np.abs(observed - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / draws.size))


def test_a_few_discrete_laplace_draws_on_lists_are_the_arrays_numbers_and_generator_state(monkeypatch):
    """Under FEW_ENTRIES draws the sampler runs on Python lists: what the array rounds draw from the same generator,
    to its last state (a scale t/s of integers t and s > 1, as the central releases' noise takes)."""
    for size in (1, 2, 4, noise.FEW_ENTRIES - 1):
        on_lists, on_arrays = np.random.default_rng(size), np.random.default_rng(size)
        few = noise.discrete_laplace(size, 3, 0.7, on_lists)
        monkeypatch.setattr(noise, "FEW_ENTRIES", 0)
        np.testing.assert_array_equal(few, noise.discrete_laplace(size, 3, 0.7, on_arrays))
        monkeypatch.undo()
        assert on_lists.bit_generator.state == on_arrays.bit_generator.state


@pytest.mark.parametrize("rng", [None, 7], ids=["csprng", "seeded"])
def test_laplace_outputs_lie_on_a_public_grid_in_every_mode(rng):
    # no raw noisy float leaves a release, whatever the generator
    from dpdist._rng import check_rng

    generator = check_rng(rng)
    values = np.array([0.123456789, -0.5, 0.75])
    noisy = noise.laplace_mechanism(values, 0.01, 1.0, generator)
    step = noise.secure_grid_step(0.01)
    assert np.all(noisy / step == np.round(noisy / step))
    counts = noise.laplace_mechanism(np.array([3.0, 7.0]), 2.0, 1.0, generator, integer_valued=True)
    assert np.all(counts == np.round(counts))
    # a real-valued query that happens to be integral still uses the fine grid (no data-dependent grid)
    real = noise.laplace_mechanism(np.array([3.0, 7.0]), 2.0, 1.0, generator)
    assert np.any(real != np.round(real))


def test_neighbouring_values_reach_the_same_set_of_outputs():
    # the floating-point attack (Mironov 2012) needs outputs that only one of two inputs can produce;
    # on the grid, two inputs within one grid step produce the same set of doubles
    step = noise.secure_grid_step(1.0)
    a = noise.laplace_mechanism(np.full(2000, 0.3), 1.0, 1.0, np.random.default_rng(1))
    b = noise.laplace_mechanism(np.full(2000, 0.3 + step / 3), 1.0, 1.0, np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)


def test_gaussian_mechanism_is_on_the_grid_with_the_calibrated_variance():
    rng = np.random.default_rng(5)
    values = np.linspace(-1, 1, 400)
    noisy, sigma = noise.gaussian_mechanism(values, 0.01, 1.0, 1e-6, rng)
    step = noise.secure_grid_step(0.01)
    assert np.all(noisy / step == np.round(noisy / step))
    # sigma covers the grid's l2 sensitivity (Delta / step + sqrt(d)) at the zCDP calibration
    expected = noise.zcdp_gaussian_sigma(1.0, 1e-6, 0.01 / step + math.sqrt(400)) * step
    assert sigma == pytest.approx(expected, rel=1e-9) and sigma >= expected
    residual = (noisy - values) / sigma
    # 400 draws of N(0, 1): mean within 5 standard errors, variance within 5 s.e. of 1
    assert abs(residual.mean()) < 5 / math.sqrt(400)
    assert abs(residual.var() - 1) < 5 * math.sqrt(2 / 400)


@pytest.mark.parametrize("size", [2000, pytest.param(6000, marks=pytest.mark.slow)])  # 6000: 1.2 CPU-s
def test_discrete_gaussian_matches_its_pmf(size):
    # 5 standard errors at the sample size
    from fractions import Fraction

    rng = np.random.default_rng(6)
    variance = Fraction(9, 4)
    draws = noise.discrete_gaussian(size, variance, rng)
    support = np.arange(-6, 7)
    weights = np.exp(-np.arange(-60, 61) ** 2 / (2 * 2.25))
    pmf = np.exp(-support**2 / (2 * 2.25)) / weights.sum()
    observed = np.array([(draws == z).mean() for z in support])
    assert np.all(np.abs(observed - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / draws.size))


@pytest.mark.parametrize("epsilon,delta", [(0.1, 1e-5), (1.0, 1e-6), (5.0, 1e-20), (1e-6, 1e-10)])
def test_zcdp_calibration_is_at_least_the_exact_gaussian_requirement(epsilon, delta):
    # the zCDP bound is looser than Thm. 8 of Balle & Wang, never tighter
    sigma = noise.zcdp_gaussian_sigma(epsilon, delta, 1.0)
    assert _exact_gaussian_delta(sigma, epsilon, delta) <= delta
    assert noise.zcdp_delta(1.0 / (2 * sigma**2), epsilon) <= delta * (1 + 1e-6)


def test_dyadic_epsilon_rounds_down():
    assert float(noise._dyadic_epsilon(0.1)) <= 0.1
    assert 0.1 - float(noise._dyadic_epsilon(0.1)) < 2**-20
    assert noise._dyadic_epsilon(0.1).denominator == 2**20  # the law above 2**-10 is unchanged
    # below 2**-10 the resolution follows epsilon (it used to refuse anything below 2**-20)
    for epsilon in (1e-3, 1e-6, 1e-9, 1e-11):
        rounded = float(noise._dyadic_epsilon(epsilon))
        assert epsilon * (1 - 2**-10) < rounded <= epsilon
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError):
            noise._dyadic_epsilon(bad)


def test_large_scales_are_rounded_up_within_int64():
    # a step of 1e-9 on a 2**17 sensitivity: the exact scale's numerator is ~2**57, beyond the sampler's
    # int64 arithmetic; it is rounded up (more noise) to a numerator <= 2**52
    from fractions import Fraction

    scale = Fraction(2**17 + 5) / noise._dyadic_epsilon(1e-9)
    t, s = noise._sampler_scale(scale)
    assert Fraction(t, s) >= scale and Fraction(t, s) - scale <= scale * 2**-51 and t <= 2**52
    assert noise._sampler_scale(Fraction(7, 3)) == (7, 3)  # small scales are exact
    draws = noise.discrete_laplace(20_000, 2**17 + 5, 1e-9, np.random.default_rng(3))
    # |Z| of a discrete Laplace of this scale has mean ~scale and sd ~scale: 5 standard errors
    assert abs(np.abs(draws).mean() / float(scale) - 1) < 5 / np.sqrt(draws.size)


# ---------------------------------------------------------------- report noisy max: exact channel
def _noisy_max_probabilities(scores, scale):
    """P(argmax = i) of scores + i.i.d. Laplace(scale): trapezoid rule on a 400k-point grid (error < 1e-8)."""
    z = np.linspace(-60 * scale, 60 * scale, 400_001)
    laplace = 0.5 * np.exp(-np.abs(z / scale)) / scale  # the winner's noise density, the same for every i
    out = []
    for i, s in enumerate(scores):
        density = laplace
        for j, t in enumerate(scores):
            if j != i:
                density = density * _laplace_cdf(s + z - t, scale)
        out.append(integrate.trapezoid(density, z))
    return np.array(out)


def _laplace_cdf(x, scale):
    """``stats.laplace.cdf(x, scale=scale)`` for finite ``x``, by scipy's own formula without its argument checks
    (the same numbers, a third of the time on the 400k-point grid)."""
    y = x / scale
    return np.where(y > 0, 1.0 - 0.5 * np.exp(-y), 0.5 * np.exp(y))


def _worst_ratio(scale, sensitivity=1.0):
    """Max probability ratio over neighbouring score vectors: each score moves by at most the sensitivity."""
    base = np.array([0.0, 0.3, -0.2])
    worst = 0.0
    p = _noisy_max_probabilities(base, scale)  # once: the same for every shift
    for shift in [np.array([1, -1, -1]), np.array([-1, 1, 1]), np.array([1, -1, 1]), np.array([1, 1, -1])]:
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
    winner = noise.report_noisy_max(np.array([0.0, 1000.0, 0.0]), 1.0, 1.0, rng)
    assert winner == 1


def test_secure_mode_rejects_an_epsilon_below_its_resolution():
    from dpdist import central
    from dpdist.errors import InvalidPrivacyParameterError

    with pytest.raises(InvalidPrivacyParameterError, match="'epsilon'"):
        central.histogram_queries([0.5], 2.0**-30, (0, 1), 4, secure=True)


def test_a_split_budget_below_the_old_sampler_resolution_is_released():
    # 1e-5 is a supported total epsilon; the tree's 5% profile step gets 5e-7 < 2**-20, which the
    # samplers used to refuse: the resolution now follows the step (tests/central/test_common.py
    # runs every release at both ends of the range)
    from dpdist import central

    assert central.cdf(np.linspace(0, 1, 50), 1e-5, (0, 1), rng=0).epsilon == pytest.approx(1e-5)


def test_each_coordinate_noise_has_one_step_of_rounding_slack():
    # AboveThreshold's queries are separate releases: the grid-rounding slack is one step per query,
    # not one per coordinate of the block (4096 steps would add 6.25% to the scale, 13% to the variance)
    from dpdist.central.noise import _dyadic_epsilon

    step = noise.secure_grid_step(2.0)
    values = np.zeros(4096)
    draws = np.concatenate([
        noise.laplace_mechanism(values, 2.0, 1.0, np.random.default_rng(seed), each_coordinate=True) / step
        for seed in range(10)
    ])
    a = float(_dyadic_epsilon(1.0)) / (math.ceil(2.0 / step) + 1)  # P(z) ∝ exp(-a |z|) in grid units
    variance = 2 * math.exp(-a) / (1 - math.exp(-a)) ** 2
    assert abs(draws.var() - variance) < 5 * math.sqrt(5 / draws.size) * variance


def test_unbounded_quantile_above_threshold_meets_epsilon_exactly(monkeypatch):
    # Dwork & Roth Thm. 3.23 on grids: the rounded queries of neighbours differ by up to D' = step_q (ceil(1/step_q) + 1)
    # (query sensitivity 1, one rounding step); the proof shifts the threshold by some s >= D' that lies on both grids
    # and the stopping query by s + D'.  Realized loss = eps1' s / (step_T S_T) + eps2' (s + D') / (step_q S_q), with
    # S the discrete Laplace integer scales actually drawn.  It was eps (2**16 + 2) / (2**16 + 1) = 1.0000153 eps.
    from dpdist import central

    steps, draws = [], []
    on_grid, discrete_laplace = noise._on_grid, noise.discrete_laplace
    monkeypatch.setattr(noise, "_on_grid", lambda values, step: steps.append(step) or on_grid(values, step))
    monkeypatch.setattr(
        noise, "discrete_laplace", lambda size, s, e, rng: draws.append((s, e)) or discrete_laplace(size, s, e, rng)
    )
    epsilon = 1.0
    central.unbounded_quantile(np.random.default_rng(0).exponential(1.0, 500), epsilon, 0.5, rng=0)
    (step_t, step_q), ((s_t, e_t), (s_q, e_q)) = steps[:2], draws[:2]
    assert len(set(steps[1:])) == 1 and len(set(draws[1:])) == 1  # every query block has the same law
    rounded_sensitivity = step_q * (math.ceil(1.0 / step_q) + 1)
    coarse = max(step_t, step_q)
    shift = math.ceil(rounded_sensitivity / coarse) * coarse
    realized = (
        float(noise._dyadic_epsilon(e_t)) * (shift / step_t) / s_t
        + float(noise._dyadic_epsilon(e_q)) * ((shift + rounded_sensitivity) / step_q) / s_q
    )
    assert realized <= epsilon
    assert realized == pytest.approx(epsilon, rel=1e-12)  # and no more noise than the proof needs


def test_above_threshold_stops_at_the_first_clear_hit():
    rng = np.random.default_rng(4)
    blocks = [np.full(5, -1e6), np.array([-1e6, 1e6, 1e6])]
    assert noise.above_threshold(iter(blocks), 1.0, 1.0, 1.0, rng) == 6
    assert noise.above_threshold(iter([np.full(3, -1e6)]), 1.0, 1.0, 1.0, rng) is None
