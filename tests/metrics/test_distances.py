"""Tests of dpdist.metrics: exact distances against SciPy and dense integration, grid
convention, range queries, statistics, frequency metrics and input errors."""

import numpy as np
import pytest
from scipy import stats

from dpdist import Distribution, FrequencyEstimate, metrics
from dpdist.errors import DPDistError, InvalidParameterError, InvalidValueTypeError, OutOfDomainError


def random_distribution(rng, bins=7, bounds=(-1.0, 2.0)):
    """Uneven bins, some with zero mass."""
    inner = np.sort(rng.uniform(*bounds, size=bins - 1))
    edges = np.concatenate([[bounds[0]], inner, [bounds[1]]])
    masses = rng.random(bins)
    masses[rng.random(bins) < 0.3] = 0.0
    masses[0] += 0.1
    return Distribution(edges, masses / masses.sum())


def dense_difference(first, second, low, high, points=2_000_001):
    """CDF difference on a dense midpoint grid (independent of the exact algorithm)."""
    edges = np.linspace(low, high, points)
    midpoints = (edges[:-1] + edges[1:]) / 2

    def evaluate(value):
        if isinstance(value, Distribution):
            return value.cdf(midpoints)
        return np.searchsorted(np.sort(value), midpoints, side="right") / len(value)

    return evaluate(first) - evaluate(second), edges[1] - edges[0]


# ---------------------------------------------------------------- exact distances
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_sample_sets_match_scipy(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=300)
    y = np.round(rng.normal(0.2, 1.3, size=211), 1)  # ties within y and with nothing else
    y[:5] = x[:5]  # ties between the two sets
    assert metrics.wasserstein(x, y) == pytest.approx(stats.wasserstein_distance(x, y), rel=1e-12)
    assert metrics.energy(x, y) == pytest.approx(stats.energy_distance(x, y), rel=1e-12)
    assert metrics.ks(x, y) == pytest.approx(stats.ks_2samp(x, y).statistic, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_distribution_against_samples_matches_dense_integration(seed):
    rng = np.random.default_rng(seed)
    distribution = random_distribution(rng)
    samples = rng.uniform(-1.5, 2.5, size=40)  # some samples lie outside the bounds
    difference, step = dense_difference(distribution, samples, -1.5, 2.5)
    # The midpoint rule errs only on cells holding a jump or a kink: at most step * (total
    # variation of D <= 2) for W1 and D^2, so 4 * step is a safe tolerance.
    assert metrics.wasserstein(distribution, samples) == pytest.approx(np.abs(difference).sum() * step, abs=4 * step)
    exact_energy = metrics.energy(distribution, samples)
    assert exact_energy**2 == pytest.approx(2 * (difference**2).sum() * step, abs=8 * step)
    # One-sample KS against a continuous CDF is the exact sup over left/right limits.
    assert metrics.ks(distribution, samples) == pytest.approx(
        stats.kstest(samples, distribution.cdf).statistic, rel=1e-12
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_two_distributions_match_dense_integration(seed):
    rng = np.random.default_rng(seed)
    first = random_distribution(rng, bins=9)
    second = random_distribution(rng, bins=5, bounds=(-0.5, 3.0))
    difference, step = dense_difference(first, second, -1.0, 3.0)
    # D is continuous and piecewise linear: the midpoint rule errs by O(step^2); sign changes
    # of |D| add at most step * |slope| per root.
    assert metrics.wasserstein(first, second) == pytest.approx(np.abs(difference).sum() * step, abs=1e-6)
    assert metrics.energy(first, second) ** 2 == pytest.approx(2 * (difference**2).sum() * step, abs=1e-6)
    assert metrics.ks(first, second) == pytest.approx(np.abs(difference).max(), abs=1e-5)


def test_closed_forms_for_two_uniforms():
    # F = x on [0, 1], G = x / 2 on [0, 2]: W1 = 1/2 (difference of means), KS = 1/2 at x = 1,
    # int (F - G)^2 = 1/12 + 1/12, energy = sqrt(2 / 6).
    unit = Distribution([0.0, 1.0], [1.0])
    wide = Distribution([0.0, 2.0], [1.0])
    assert metrics.wasserstein(unit, wide) == pytest.approx(0.5, rel=1e-14)
    assert metrics.ks(unit, wide) == pytest.approx(0.5, rel=1e-14)
    assert metrics.energy(unit, wide) == pytest.approx(np.sqrt(1 / 3), rel=1e-14)


def test_sign_change_inside_an_interval():
    # F = x on [0, 1] against a point mass at 1/2 (one sample): D = x on [0, 1/2) and
    # x - 1 on [1/2, 1]; W1 = 1/8 + 1/8, KS = 1/2 (both limits at 1/2).
    unit = Distribution([0.0, 1.0], [1.0])
    assert metrics.wasserstein(unit, [0.5]) == pytest.approx(0.25, rel=1e-14)
    assert metrics.ks(unit, [0.5]) == pytest.approx(0.5, rel=1e-14)
    # Two Distributions crossing inside a bin: G uniform on [0.25, 0.75]; D = F - G
    # crosses zero at x = 1/2, inside G's bin.
    middle = Distribution([0.0, 0.25, 0.75, 1.0], [0.0, 1.0, 0.0])
    # |D| = x on [0, .25], |x - 2(x - .25)| = |.5 - x| on [.25, .75], 1 - x on [.75, 1]
    expected = 0.25**2 / 2 + 2 * 0.25**2 / 2 + 0.25**2 / 2
    assert metrics.wasserstein(unit, middle) == pytest.approx(expected, rel=1e-14)


def test_metrics_are_symmetric_and_zero_on_identical_inputs():
    rng = np.random.default_rng(5)
    distribution = random_distribution(rng)
    samples = rng.normal(size=100)
    for metric in (metrics.wasserstein, metrics.ks, metrics.energy):
        assert metric(distribution, samples) == pytest.approx(metric(samples, distribution), rel=1e-12)
        assert metric(samples, samples) == 0.0
        assert metric(distribution, distribution) == 0.0


def test_samples_of_the_distribution_converge():
    # W1 between a law and n of its samples shrinks like 1/sqrt(n): the expected value is
    # at most int sqrt(F(1-F)/n) <= width / (2 sqrt(n)) = 3/(2*316) ~ 0.005 for n = 1e5;
    # 4x that bound is a safe ceiling.
    rng = np.random.default_rng(11)
    distribution = random_distribution(rng)
    samples = distribution.sample(100_000, rng=rng)
    assert metrics.wasserstein(distribution, samples) < 0.02
    # DKW: P(KS > t) <= 2 exp(-2 n t^2) = 2e-8 at t = 0.01.
    assert metrics.ks(distribution, samples) < 0.01


# ---------------------------------------------------------------- grid convention
def test_grid_int_equals_explicit_linspace_over_estimate_bounds():
    rng = np.random.default_rng(3)
    distribution = random_distribution(rng)
    samples = rng.normal(size=500)
    lo, hi = distribution.bounds
    for metric in (metrics.wasserstein, metrics.ks, metrics.energy):
        assert metric(distribution, samples, grid=64) == metric(distribution, samples, grid=np.linspace(lo, hi, 65))
        # samples as estimate: the truth Distribution's bounds are used
        assert metric(samples, distribution, grid=64) == metric(samples, distribution, grid=np.linspace(lo, hi, 65))


def test_grid_definition_by_direct_sum():
    rng = np.random.default_rng(4)
    distribution = Distribution.uniform_bins(rng.dirichlet(np.ones(256)), bounds=(0.0, 1.0))
    samples = rng.beta(5, 2, size=1000)
    x = np.arange(1, 257) / 256  # right ends of the 256 cells
    truth = np.array([np.mean(samples <= point) for point in x])
    difference = np.abs(distribution.cdf(x) - truth)
    assert metrics.wasserstein(distribution, samples, grid=256) == pytest.approx(difference.mean(), rel=1e-12)
    assert metrics.ks(distribution, samples, grid=256) == pytest.approx(difference.max(), rel=1e-12)
    assert metrics.energy(distribution, samples, grid=256) == pytest.approx(
        np.sqrt(2 * np.mean(difference**2)), rel=1e-12
    )


def test_fine_grid_converges_to_exact():
    rng = np.random.default_rng(6)
    distribution = random_distribution(rng)
    samples = distribution.sample(200, rng=rng)
    exact = metrics.wasserstein(distribution, samples)
    # Right Riemann sum of a function of total variation <= 2: error <= 2 * spacing = 6e-5.
    assert metrics.wasserstein(distribution, samples, grid=100_000) == pytest.approx(exact, abs=6e-5)


# ---------------------------------------------------------------- range queries and statistics
def test_range_query_mae_closed_form():
    # Estimate U[0, 1], truth uniform on [0, 1/2]; alpha = 0.1.  Error per query is 0.1 for
    # a in [0, .4] and [.5, .9], |2a - .9| on [.4, .5]: expectation 0.085 / 0.9.  Errors lie
    # in [0, 0.1] (sd <= 0.05): with 20000 queries 5 standard errors = 0.0018.
    unit = Distribution([0.0, 1.0], [1.0])
    half = Distribution([0.0, 0.5, 1.0], [1.0, 0.0])
    value = metrics.range_query_mae(unit, half, alpha=0.1, n_queries=20_000, rng=0)
    assert value == pytest.approx(0.085 / 0.9, abs=0.0018)


def test_range_query_mae_samples_use_closed_ranges_and_bounds():
    unit = Distribution([0.0, 1.0], [1.0])
    samples = np.array([0.0, 0.25, 1.0, 1.0])  # on both bounds
    # alpha = 1: the one range is [0, 1] and holds every sample
    assert metrics.range_query_mae(unit, samples, alpha=1.0, n_queries=5, rng=1) == 0.0
    same = np.linspace(0, 1, 101)
    assert metrics.range_query_mae(same, same, alpha=0.2, rng=2) == 0.0
    # explicit bounds wider than the data: ranges past the data hold no sample on either side
    assert metrics.range_query_mae(same, same + 0.0, alpha=0.2, rng=2, bounds=(-5, 5)) == 0.0
    # same seed, same value
    first = metrics.range_query_mae(unit, samples, alpha=0.2, rng=3)
    assert first == metrics.range_query_mae(unit, samples, alpha=0.2, rng=3)


def test_mean_variance_and_quantile_errors():
    unit = Distribution([0.0, 1.0], [1.0])
    ends = np.array([0.0, 1.0])
    assert metrics.mean_error(unit, ends) == pytest.approx(0.0, abs=1e-15)
    assert metrics.variance_error(unit, ends) == pytest.approx(0.25 - 1 / 12, rel=1e-12)
    # Q(beta) = 10 beta for U[0, 10]; for samples 1..10 the generalized inverse is the
    # order statistic X_(ceil(10 beta)) = 10 beta.
    wide = Distribution([0.0, 10.0], [1.0])
    assert metrics.quantile_error(wide, np.arange(1.0, 11.0)) == pytest.approx(0.0, abs=1e-12)
    # 0.28 * 25 = 7.000000000000001 in floating point, yet F_25(X_(7)) = 7/25 = 0.28 >= 0.28
    # so Q(0.28) = X_(7) = 7 for samples 1..25 (U[0, 25] has Q(0.28) = 7 too).
    assert metrics.quantile_error(
        Distribution([0.0, 25.0], [1.0]), np.arange(1.0, 26.0), [0.28, 0.56]
    ) == pytest.approx(0.0, abs=1e-12)
    rng = np.random.default_rng(8)
    samples = rng.normal(size=1001)
    levels = np.array([0.0, 0.05, 0.1, 0.5, 0.999, 1.0])
    reference = np.quantile(samples, levels, method="inverted_cdf")
    expected = np.mean(np.abs(wide.quantile(levels) - reference))
    assert metrics.quantile_error(wide, samples, quantiles=levels) == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------- frequency metrics
def test_frequency_metrics_by_definition():
    truth = np.array([0.4, 0.3, 0.2, 0.1, 0.0])
    estimate = np.array([0.5, 0.1, 0.25, 0.2, -0.05])
    errors = estimate - truth
    assert metrics.mse(estimate, truth) == pytest.approx(np.mean(errors**2))
    assert metrics.l1(estimate, truth) == pytest.approx(np.abs(errors).sum())
    assert metrics.l2(estimate, truth) == pytest.approx(np.sqrt((errors**2).sum()))
    # top-2 by TRUE frequency: items 0 and 1 (item 3 has the larger estimate, not truth)
    assert metrics.mse_top_k(estimate, truth, 2) == pytest.approx((0.1**2 + 0.2**2) / 2)
    # threshold 0.15: frequent = {0, 1, 2}; detected = {0, 2, 3}
    assert metrics.true_false_positives(estimate, truth, 0.15) == (2, 1)
    counts = metrics.true_false_positives(estimate, truth, 0.15)
    assert counts.true_positives == 2 and counts.false_positives == 1


def test_frequency_metrics_accept_estimates_and_raw_items():
    items = np.array([0, 0, 1, 3, 3, 3, 3, 2])
    truth = np.bincount(items, minlength=5) / items.size
    estimate = FrequencyEstimate(np.array([0.2, 0.1, 0.1, 0.5, 0.1]), n=8, variance=0.01)
    for metric in (metrics.mse, metrics.l1, metrics.l2):
        assert metric(estimate, items, domain_size=5) == metric(estimate.frequencies, truth)
    assert metrics.mse_top_k(estimate, items, 1, domain_size=5) == pytest.approx(0.0)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: metrics.wasserstein(np.ones((2, 2)), [0.0]), InvalidValueTypeError),
        (lambda: metrics.wasserstein([], [0.0]), InvalidValueTypeError),
        (lambda: metrics.ks([0.0, np.nan], [0.0]), OutOfDomainError),
        (lambda: metrics.energy(["a"], [0.0]), InvalidValueTypeError),
        (lambda: metrics.ks([True], [0.0]), InvalidValueTypeError),
        (lambda: metrics.wasserstein(FrequencyEstimate([1.0, 0.0], 1, 0.0), [0.0]), InvalidValueTypeError),
        (lambda: metrics.wasserstein([0.0, 1.0], [0.5], grid=0), InvalidParameterError),
        (lambda: metrics.wasserstein([0.0, 1.0], [0.5], grid=[1.0, 0.0]), InvalidParameterError),
        (lambda: metrics.wasserstein([0.0, 1.0], [0.5], grid=[0.0]), InvalidParameterError),
        (lambda: metrics.ks([0.0, 1.0], [0.5], grid="abc"), InvalidParameterError),
        (lambda: metrics.ks([1.0], [1.0], grid=4), InvalidParameterError),
        (lambda: metrics.range_query_mae([0.0, 1.0], [0.5], alpha=0.0), InvalidParameterError),
        (lambda: metrics.range_query_mae([0.0, 1.0], [0.5], alpha=1.5), InvalidParameterError),
        (lambda: metrics.range_query_mae([0.0, 1.0], [0.5], n_queries=0), InvalidParameterError),
        (lambda: metrics.range_query_mae([0.0, 1.0], [0.5], bounds=(1, 0)), InvalidParameterError),
        (lambda: metrics.range_query_mae([0.0, 1.0], [0.5], rng="seed"), InvalidParameterError),
        (lambda: metrics.quantile_error([0.0, 1.0], [0.5], quantiles=[1.5]), InvalidParameterError),
        (lambda: metrics.quantile_error([0.0, 1.0], [0.5], quantiles=[]), InvalidParameterError),
        (lambda: metrics.mse([0.5, 0.5], [1.0, 0.0, 0.0]), InvalidValueTypeError),
        (lambda: metrics.mse([[0.5, 0.5]], [1.0, 0.0]), InvalidValueTypeError),
        (lambda: metrics.mse([0.5, np.inf], [1.0, 0.0]), OutOfDomainError),
        (lambda: metrics.mse([0.5, 0.5], [0, 5], domain_size=2), OutOfDomainError),
        (lambda: metrics.mse([0.5, 0.5], [0, 1], domain_size=3), InvalidParameterError),
        (lambda: metrics.mse_top_k([0.5, 0.5], [1.0, 0.0], 3), InvalidParameterError),
        (lambda: metrics.true_false_positives([0.5, 0.5], [1.0, 0.0], np.nan), InvalidParameterError),
    ],
)
def test_bad_input_raises_a_dpdist_error(call, error):
    with pytest.raises(error) as raised:
        call()
    assert isinstance(raised.value, DPDistError)


def test_error_message_names_argument_and_value():
    with pytest.raises(InvalidParameterError, match=r"'alpha'.*metrics.range_query_mae.*Got 2.0"):
        metrics.range_query_mae([0.0, 1.0], [0.5], alpha=2.0)
    with pytest.raises(InvalidValueTypeError, match=r"'truth'.*metrics.wasserstein"):
        metrics.wasserstein([0.0], np.zeros((2, 3)))
