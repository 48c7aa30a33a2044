"""Square wave ``sw`` (paper 003, sec. 5): exact channel, public output grid, EM / EMS.

Statistical tests are seeded; each states its tolerance and why.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from dpdist import local
from dpdist.errors import (
    InvalidParameterError,
    MalformedReportError,
    OutOfDomainError,
)
from dpdist.local._em import DenseOperator, binomial_smoothing_matrix, expectation_maximization, smooth
from dpdist.local.numerical._wave_operators import BandedOperator, ToeplitzOperator
from dpdist.local.numerical._wave_grid import OutputGrid
from dpdist.local.numerical._wave_shape import WaveShape, mutual_information_b

GRIDS = [(1, 1), (2, 3), (7, 13), (16, 16), (64, 100), (100, 37), (256, 1000), (1024, 1024)]


def max_log_ratio(matrix: np.ndarray, axis: int) -> float:
    """Largest log ratio between entries of one output across inputs (``axis`` indexes inputs)."""
    return float(np.max(np.log(matrix.max(axis=axis)) - np.log(matrix.min(axis=axis))))


def wasserstein_to_beta(dist, a=5.0, b=2.0) -> float:
    """W1 between a Distribution on [0, 1] and Beta(a, b): integral of |F_hat - F| on a fine grid."""
    grid = np.linspace(0.0, 1.0, 20_001)
    return float(np.mean(np.abs(dist.cdf(grid) - stats.beta.cdf(grid, a, b))))


# ---------------------------------------------------------------------- b and the wave
def test_mutual_information_b_maximizes_the_bound_of_sec_5_3():
    def negative_bound(b, epsilon):
        e = math.exp(epsilon)
        return -(math.log((2 * b + 1) / (2 * b * e + 1)) + 2 * b * epsilon * e / (2 * b * e + 1))

    for epsilon in (0.1, 0.5, 0.99, 1.0, 2.0, 4.0, 8.0):
        numeric = optimize.minimize_scalar(negative_bound, bounds=(1e-9, 5), args=(epsilon,), method="bounded",
                                           options={"xatol": 1e-10}).x
        assert mutual_information_b(epsilon) == pytest.approx(numeric, rel=1e-5)
    # the paper's closed form, and the limits b -> 1/2 (epsilon -> 0), b -> 0 (epsilon -> inf)
    e = math.exp(2.0)
    assert mutual_information_b(2.0) == pytest.approx((2 * e - e + 1) / (2 * e * (e - 1 - 2)), rel=1e-14)
    assert mutual_information_b(1e-8) == pytest.approx(0.5, abs=1e-8)
    assert mutual_information_b(1 - 1e-12) == pytest.approx(mutual_information_b(1 + 1e-12), rel=1e-9)
    assert 0 < mutual_information_b(30.0) < 1e-11


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0])
def test_square_wave_has_the_paper_p_and_q(epsilon):
    b = mutual_information_b(epsilon)
    shape = WaveShape(epsilon, b, 1.0)
    e = math.exp(epsilon)
    # the paper's p and q up to the 2^-53 grid of the drawn weight and WaveShape's 2^-30 margin;
    # the realized ratio is never above e^eps
    assert shape.q == pytest.approx(1 / (2 * b * e + 1), rel=1e-8)
    assert shape.peak == pytest.approx(e / (2 * b * e + 1), rel=1e-8) and shape.peak <= e * shape.q
    z = np.array([-b - 1e-9, -b * 0.999, 0.0, b * 0.999, b + 1e-9])
    np.testing.assert_allclose(shape.density(z), [shape.q, shape.peak, shape.peak, shape.peak, shape.q], rtol=1e-13)


# ---------------------------------------------------------------------- exact channel on the public grid
@pytest.mark.parametrize("bins, output_bins", GRIDS)
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 4.0])
def test_channel_rows_sum_to_one_are_positive_and_epsilon_ldp(bins, output_bins, epsilon):
    bins = max(bins, 2)
    output_bins = max(output_bins, 2)
    protocol = local.make("sw", epsilon=epsilon, bins=bins, output_bins=output_bins)
    inputs = np.concatenate([[0.0, 1.0, 0.5, 1e-300, 1 - 1e-16], np.random.default_rng(0).uniform(0, 1, 40)])
    channel = protocol.channel(inputs)
    np.testing.assert_allclose(channel.sum(axis=1), 1.0, atol=1e-12)
    # support independence: every bucket has probability >= q * bucket width for every input
    q_mass = protocol._mechanism.shape.q * protocol._mechanism.width
    assert channel.min() >= q_mass * (1 - 1e-12)
    assert max_log_ratio(channel, axis=0) <= epsilon * (1 + 1e-12)


@pytest.mark.parametrize("bins, output_bins", GRIDS)
def test_transition_matrix_columns_sum_to_one_for_any_grid(bins, output_bins):
    bins, output_bins = max(bins, 2), max(output_bins, 2)
    for epsilon, b in ((1.0, None), (0.2, 1.7), (3.0, 0.013)):
        protocol = local.make("sw", epsilon=epsilon, bins=bins, output_bins=output_bins, b=b)
        matrix = protocol.transition_matrix()
        assert matrix.shape == (output_bins, bins)
        np.testing.assert_allclose(matrix.sum(axis=0), 1.0, atol=1e-9)
        assert matrix.min() > 0
        # averaging rows of the channel keeps the ratio bound (1e-9: cancellation in M's differences)
        assert max_log_ratio(matrix, axis=1) <= epsilon * (1 + 1e-9)


def test_channel_matches_quadrature_of_the_wave_and_matrix_averages_the_channel():
    protocol = local.make("sw", epsilon=1.3, bins=5, output_bins=9)
    grid = protocol._mechanism
    # channel row = integral of the wave density over each bucket (midpoint rule on 2e5 points per bucket)
    for value in (0.0, 0.37, 1.0):
        fine = np.linspace(0, 1, 200_001)
        midpoints = (fine[:-1] + fine[1:]) / 2
        expected = [
            np.mean(grid.shape.density(lo + (hi - lo) * midpoints - value)) * (hi - lo)
            for lo, hi in zip(grid.edges[:-1], grid.edges[1:])
        ]
        np.testing.assert_allclose(protocol.channel([value])[0], expected, atol=1e-6)
    # column i of M = the channel averaged over inputs uniform in bin i (midpoint rule, 4000 points)
    points = (np.arange(4000) + 0.5) / 4000
    for i in range(protocol.bins):
        average = protocol.channel((i + points) / protocol.bins).mean(axis=0)
        np.testing.assert_allclose(protocol.transition_matrix()[:, i], average, atol=1e-6)


def test_reports_are_bucket_indices_and_their_support_does_not_depend_on_the_input():
    protocol = local.make("sw", epsilon=2.0, bins=8, output_bins=12)
    # each bucket has probability >= q w = 0.0198 here, so 4000 draws miss one with prob < 12 * (1-0.0198)^4000 ~ 1e-33
    for value in (0.0, 0.5, 1.0):
        reports = protocol.privatize(np.full(4000, value), rng=1)
        assert reports.dtype == np.uint8
        assert set(np.unique(reports)) == set(range(12))


def test_privatize_samples_the_exact_bucket_masses():
    protocol = local.make("sw", epsilon=1.0, bins=16, output_bins=24)
    for value in (0.0, 0.3, 0.999):
        reports = protocol.privatize(np.full(200_000, value), rng=2)
        observed = np.bincount(reports, minlength=24)
        result = stats.chisquare(observed, 200_000 * protocol.channel([value])[0])
        assert result.pvalue > 1e-6 / 3  # Bonferroni over 3 inputs at level 1e-6


def test_a_wave_taller_than_e_epsilon_fails_the_exact_privacy_check():
    # a wave built for epsilon 1.2 but claimed at epsilon 1.0 is caught by the same max-ratio check
    grid = OutputGrid(WaveShape(1.2, 0.3, 1.0), 20, 10)
    assert max_log_ratio(grid.point_masses(np.linspace(0, 1, 11)), axis=0) > 1.0 + 0.1


# ---------------------------------------------------------------------- bucketize before randomize
def test_discrete_square_wave_is_the_paper_mechanism():
    epsilon, bins = 0.5, 12
    protocol = local.make("sw", epsilon=epsilon, bins=bins, discrete=True)
    m = math.floor(mutual_information_b(epsilon) * bins)
    assert m >= 1 and protocol.output_bins == bins + 2 * m and protocol.b == m / bins
    e = math.exp(epsilon)
    p, q = e / ((2 * m + 1) * e + bins - 1), 1 / ((2 * m + 1) * e + bins - 1)
    channel = protocol.channel([0.0, 0.5, 1.0])
    for row, bucket in zip(channel, (0, 6, 11)):
        expected = np.full(bins + 2 * m, q)
        expected[bucket : bucket + 2 * m + 1] = p
        np.testing.assert_allclose(row, expected, rtol=1e-14)
    assert max_log_ratio(protocol.transition_matrix(), axis=1) == pytest.approx(epsilon, rel=1e-12)
    np.testing.assert_allclose(protocol.transition_matrix().sum(axis=0), 1.0, atol=1e-14)


def test_discrete_simulate_has_the_exact_expected_counts():
    protocol = local.make("sw", epsilon=1.0, bins=10, discrete=True)
    values = np.random.default_rng(0).beta(5, 2, 20_000)
    expected = protocol.channel(values).sum(axis=0)
    statistics = np.array([protocol.simulate(values, rng=seed).statistic for seed in range(200)])
    # mean of 200 repeats within 5 standard errors of the exact expectation, per bucket
    standard_error = np.sqrt(expected * (1 - expected / values.size) / 200)
    assert np.all(np.abs(statistics.mean(axis=0) - expected) < 5 * standard_error)
    # and the per-bucket variance is the Poisson-binomial sum_k P_kj (1 - P_kj) (ratio within chi2 bounds)
    variance = (protocol.channel(values) * (1 - protocol.channel(values))).sum(axis=0)
    ratio = statistics.var(axis=0, ddof=1) / variance
    assert np.all((ratio > stats.chi2.ppf(1e-6, 199) / 199) & (ratio < stats.chi2.isf(1e-6, 199) / 199))


# ---------------------------------------------------------------------- EM / EMS
def test_smoothing_matrix_is_binomial_with_renormalized_boundary_rows():
    expected = np.array(
        [
            [2 / 3, 1 / 3, 0, 0, 0],
            [1 / 4, 1 / 2, 1 / 4, 0, 0],
            [0, 1 / 4, 1 / 2, 1 / 4, 0],
            [0, 0, 1 / 4, 1 / 2, 1 / 4],
            [0, 0, 0, 1 / 3, 2 / 3],
        ]
    )
    np.testing.assert_allclose(binomial_smoothing_matrix(5), expected, rtol=1e-15)
    x = np.random.default_rng(0).random(9)
    np.testing.assert_allclose(smooth(x), binomial_smoothing_matrix(9) @ x, rtol=1e-14)
    np.testing.assert_allclose(smooth(np.ones(4)), np.ones(4), rtol=1e-15)


def test_toeplitz_operator_equals_the_dense_products():
    rng = np.random.default_rng(1)
    for outputs, inputs in ((7, 4), (4, 7), (33, 33)):
        column, row = rng.random(outputs), rng.random(inputs)
        row[0] = column[0]
        dense = np.array([[column[j - i] if j >= i else row[i - j] for i in range(inputs)] for j in range(outputs)])
        operator = ToeplitzOperator(column, row)
        x, y = rng.random(inputs), rng.random(outputs)
        np.testing.assert_allclose(operator.matvec(x), dense @ x, rtol=1e-12)
        np.testing.assert_allclose(operator.rmatvec(y), dense.T @ y, rtol=1e-12)


@pytest.mark.parametrize("epsilon", [0.5, 4.0])
def test_banded_operator_equals_the_dense_products(epsilon):
    rng = np.random.default_rng(2)
    for bins, output_bins in ((300, 300), (1000, 130), (40, 700)):
        protocol = local.make("sw", epsilon=epsilon, bins=bins, output_bins=output_bins)
        constant, band = protocol._mechanism.transition_parts()
        operator = BandedOperator(constant, band, block=64)
        matrix = protocol.transition_matrix()
        x, y = rng.random(bins), rng.random(output_bins)
        np.testing.assert_allclose(operator.matvec(x), matrix @ x, rtol=1e-12)
        np.testing.assert_allclose(operator.rmatvec(y), matrix.T @ y, rtol=1e-12)


def _beta_aggregate(protocol, n, seed):
    values = np.random.default_rng(seed).beta(5, 2, n)
    return protocol.aggregator().add(protocol.privatize(values, rng=seed + 1))


def test_em_log_likelihood_never_decreases_and_stops_by_the_paper_rule():
    protocol = local.make("sw", epsilon=1.0, bins=64)
    # the paper's plain iteration (SQUAREM's trace is checked in tests/local/test_em.py)
    estimate = protocol.estimate(_beta_aggregate(protocol, 20_000, seed=3), method="em", accelerate=False)
    trace = estimate.details["loglikelihood"]
    assert estimate.details["converged"] and estimate.details["tolerance"] == pytest.approx(1e-3 * math.e)
    assert trace.size == estimate.details["iterations"] + 1
    # EM's monotonicity, up to float rounding of a sum of 20,000 logs (~1e-9 relative)
    assert np.all(np.diff(trace) >= -1e-9 * abs(trace[-1]))
    assert abs(trace[-1] - trace[-2]) < estimate.details["tolerance"] <= abs(trace[-2] - trace[-3])


@pytest.mark.parametrize("method", ["ems", "em"])
def test_estimators_recover_beta_5_2(method):
    # n = 50,000 at epsilon = 1 on 64 bins.  The paper (Fig. 2) reports W1 ~ 0.005-0.01 for SW-EMS
    # at n = 100,000 and epsilon = 1; the uniform guess has W1 = 0.21 to Beta(5, 2).  We allow
    # 0.02 (half the sampling noise scales as 1/sqrt(n), plus 1/(4*64) of binning), and check the
    # mean against 5/7 within 0.02 (several times its spread over seeds).
    protocol = local.make("sw", epsilon=1.0, bins=64)
    estimate = protocol.estimate(_beta_aggregate(protocol, 50_000, seed=7), method=method)
    assert estimate.details["converged"] and estimate.details["method"] == method
    assert wasserstein_to_beta(estimate) < 0.02
    assert abs(estimate.mean() - 5 / 7) < 0.02
    assert estimate.n == 50_000 and estimate.method == "sw" and estimate.bins == 64


def test_discrete_and_fft_grids_recover_beta_5_2_and_fft_equals_dense():
    # aligned grid (bucket width = bin width): M is Toeplitz and EMS runs by FFT
    protocol = local.make("sw", epsilon=1.0, bins=64, b=16 / 64, output_bins=96)
    aggregator = _beta_aggregate(protocol, 50_000, seed=11)
    estimate = protocol.estimate(aggregator, accelerate=False)  # the same (plain) path as the dense call
    assert estimate.details["operator"] == "toeplitz-fft"
    dense = expectation_maximization(
        aggregator.statistic, DenseOperator(protocol.transition_matrix()), smoothing=True, tolerance=1e-3,
        max_iterations=10_000,
    )
    assert dense.iterations == estimate.details["iterations"]
    np.testing.assert_allclose(estimate.probabilities, dense.probabilities, atol=1e-10)
    assert wasserstein_to_beta(estimate) < 0.02  # same tolerance as above
    discrete = local.make("sw", epsilon=1.0, bins=64, discrete=True)
    assert wasserstein_to_beta(discrete.estimate(_beta_aggregate(discrete, 50_000, seed=13))) < 0.02


def test_iteration_cap_and_estimate_from_reports():
    protocol = local.make("sw", epsilon=1.0, bins=32)
    reports = protocol.privatize(np.random.default_rng(0).beta(5, 2, 5000), rng=1)
    capped = protocol.estimate(reports, max_iterations=3)
    assert capped.details["iterations"] == 3 and not capped.details["converged"]
    tight = protocol.estimate(reports, method="ems", tolerance=1e-6)
    assert tight.details["iterations"] > protocol.estimate(reports).details["iterations"]


# ---------------------------------------------------------------------- bounds and errors
def test_bounds_are_rescaled():
    protocol = local.make("sw", epsilon=1.0, bins=16, bounds=(-3.0, 5.0))
    values = np.random.default_rng(0).uniform(-3.0, 5.0, 3)
    unit = local.make("sw", epsilon=1.0, bins=16)
    np.testing.assert_allclose(protocol.channel(values), unit.channel((values + 3.0) / 8.0), rtol=1e-14)
    estimate = protocol.estimate(protocol.privatize(np.full(2000, 4.0), rng=0))
    assert estimate.bounds == (-3.0, 5.0)


def test_bad_input_raises_dpdist_errors():
    with pytest.raises(InvalidParameterError, match="bounds"):
        local.make("sw", epsilon=1.0, bounds=(1.0, 1.0))
    with pytest.raises(InvalidParameterError, match="bins"):
        local.make("sw", epsilon=1.0, bins=5000)
    with pytest.raises(InvalidParameterError, match="output_bins"):
        local.make("sw", epsilon=1.0, discrete=True, output_bins=10)
    with pytest.raises(InvalidParameterError, match="'epsilon'.*<= 30"):  # outside the supported range
        local.make("sw", epsilon=800.0)
    protocol = local.make("sw", epsilon=1.0, bins=8, bounds=(0.0, 2.0))
    for values in ([2.5], [-0.1], [math.nan], [-math.inf]):
        with pytest.raises(OutOfDomainError, match="values"):
            protocol.privatize(values, clip=False)  # the default clip=True clips them (test_clipping.py)
        with pytest.raises(OutOfDomainError, match="values"):
            protocol.channel(values)
    with pytest.raises(InvalidParameterError, match="values"):
        protocol.channel()
    reports = protocol.privatize([0.5, 1.0], rng=0)
    for option in ({"method": "mle"}, {"tolerance": -1.0}, {"max_iterations": 0}, {"smoothing": 3}):
        with pytest.raises(InvalidParameterError, match=next(iter(option))):
            protocol.estimate(reports, **option)
    with pytest.raises(MalformedReportError):
        protocol.estimate(np.array([0, protocol.output_bins]))
    aggregator = protocol.aggregator().add(np.array([0, 3, protocol.output_bins, -1]))
    assert aggregator.n == 2 and aggregator.rejected == {"out_of_range": 2}


def test_discrete_sw_refuses_an_unbounded_output_grid():
    from dpdist import local
    from dpdist.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="'b'"):
        local.make("sw", epsilon=1.0, bins=4096, discrete=True, b=100.0)
