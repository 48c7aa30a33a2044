"""Estimators on the exact channel: IBU (EM), GRR's closed-form MLE, bootstrap and analytic intervals."""

import numpy as np
import pytest
from scipy import stats

from conformance._examples import EXAMPLES
from dpdist import local
from dpdist.errors import InvalidParameterError
from dpdist.local._registry import registered_class
from dpdist.local.frequency._exact_channel import grr_maximum_likelihood

ALPHA = 1e-6

#: regimes picked by hand (HR's block form, FLH's prime, CP's matrix), on top of the registry's cases below
HAND_CASES = [
    ("grr", {"epsilon": 1.0, "domain_size": 9}),
    ("hr", {"epsilon": 1.0, "domain_size": 9}),
    ("hr", {"epsilon": 4.0, "domain_size": 20}),  # block form, B > 1
    ("flh", {"epsilon": 1.0, "domain_size": 9, "hash_count": 17}),
    ("flh", {"epsilon": 2.0, "domain_size": 9, "hash_count": 5, "hash_prime": 11}),
    ("cp", {"epsilon": 1.0, "domain_size": 9, "measurements": 12, "matrix_seed": 3}),
]
#: every registered protocol that declares an output histogram (a structured channel operator), with its first
#: conformance example unless a hand-picked case covers it: a new one is checked here with no list to join
OPERATOR_CASES = HAND_CASES + [
    (name, EXAMPLES[name][0])
    for name in local.available()
    if getattr(registered_class(name), "output_histogram", False) and name not in {hand for hand, _ in HAND_CASES}
]


def test_the_hand_picked_cases_declare_an_output_histogram():
    assert all(getattr(registered_class(name), "output_histogram", False) for name, _ in HAND_CASES)


@pytest.mark.parametrize("name, params", OPERATOR_CASES)
def test_structured_operators_equal_the_dense_channel(name, params):
    protocol = local.make(name, **params)
    channel = protocol.channel()
    operator = protocol.channel_operator()
    generator = np.random.default_rng(0)
    f, w = generator.random(channel.shape[0]), generator.random(channel.shape[1])
    np.testing.assert_allclose(operator.matvec(f), channel.T @ f, rtol=0, atol=1e-14)
    np.testing.assert_allclose(operator.rmatvec(w), channel @ w, rtol=0, atol=1e-14)


def _population(d, n, rng=0):
    weights = np.arange(1, d + 1, dtype=float)
    return np.random.default_rng(rng).choice(d, size=n, p=weights / weights.sum())


@pytest.mark.parametrize("name, params", OPERATOR_CASES)
def test_ibu_satisfies_the_kkt_conditions_of_the_exact_likelihood(name, params):
    """At the maximum of sum_y N_y log(Q^T f)_y on the simplex, the gradient is n on the support, <= n off it."""
    protocol = local.make(name, **params)
    aggregator = protocol.simulate(_population(protocol.domain_size, 3000), rng=1)
    estimate = protocol.estimate(aggregator, estimator="ibu", tolerance=1e-10, max_iterations=200_000)
    f = estimate.frequencies
    assert estimate.details["converged"] and np.all(f >= 0) and f.sum() == pytest.approx(1.0)
    channel = protocol.channel()
    gradient = channel @ (aggregator.statistic / (channel.T @ f))
    n = aggregator.n
    support = f > 1e-6
    np.testing.assert_allclose(gradient[support], n, rtol=1e-3)
    assert np.all(gradient[~support] <= n * (1 + 1e-3))


# plain EM on CP's matrix takes 0.6 CPU-s to converge: the full suite; the fast loop keeps CP's operator
# (test_structured_operators_equal_the_dense_channel) and its IBU optimum (test_ibu_satisfies_the_kkt_conditions_...)
# and this comparison on every other case
@pytest.mark.parametrize("name, params", [pytest.param(name, params, marks=pytest.mark.slow) if name == "cp"
                                          else (name, params) for name, params in OPERATOR_CASES])
def test_accelerated_and_plain_em_reach_the_same_estimate(name, params):
    protocol = local.make(name, **params)
    aggregator = protocol.simulate(_population(protocol.domain_size, 3000), rng=2)
    runs = {
        accelerate: protocol.estimate(aggregator, estimator="ibu", tolerance=1e-9, max_iterations=500_000,
                                      accelerate=accelerate)
        for accelerate in (False, True)
    }
    assert runs[True].details["converged"] and runs[False].details["converged"]
    np.testing.assert_allclose(runs[True].frequencies, runs[False].frequencies, atol=2e-5)
    assert runs[True].details["iterations"] < runs[False].details["iterations"]
    # at the stopping point, the accelerated run is at least as likely as the plain one (up to tolerance)
    assert runs[True].details["loglikelihood"] >= runs[False].details["loglikelihood"] - 1e-9


def test_grr_mle_is_the_ibu_maximum_and_equals_the_unbiased_estimate_inside_the_simplex():
    protocol = local.make("grr", epsilon=0.5, domain_size=12)
    skewed = protocol.simulate(np.repeat(np.arange(12), [500, 300, 150, 40, 10, 0, 0, 0, 0, 0, 0, 0]), rng=3)
    mle = protocol.estimate(skewed, estimator="mle").frequencies
    ibu = protocol.estimate(skewed, estimator="ibu", tolerance=1e-11, max_iterations=10**6).frequencies
    np.testing.assert_allclose(mle, ibu, atol=1e-5)
    assert np.any(mle == 0) and mle.sum() == pytest.approx(1.0)
    # the MLE rescales the counts; the simplex projection of the unbiased estimate shifts them
    projected = protocol.estimate(skewed, postprocess="simplex").frequencies
    assert np.abs(projected - mle).max() > 1e-3
    flat = protocol.simulate(np.repeat(np.arange(12), 2000), rng=4)
    unbiased = protocol.estimate(flat).frequencies
    assert np.all(unbiased > 0)
    np.testing.assert_allclose(protocol.estimate(flat, estimator="mle").frequencies, unbiased, atol=1e-12)


def test_grr_mle_water_filling_matches_a_direct_kkt_check():
    generator = np.random.default_rng(5)
    p, q = 0.4, 0.1
    kappa = q / (p - q)
    for _ in range(50):
        counts = generator.integers(0, 40, size=15).astype(float)
        counts[0] += 1
        f = grr_maximum_likelihood(counts, p, q)
        gradient = counts / (f + kappa)
        active = f > 0
        multiplier = gradient[active][0]
        np.testing.assert_allclose(gradient[active], multiplier, rtol=1e-10)
        assert np.all(gradient[~active] <= multiplier * (1 + 1e-12))
        assert f.sum() == pytest.approx(1.0)


def test_estimator_options_are_checked():
    grr = local.make("grr", epsilon=1.0, domain_size=4)
    aggregator = grr.simulate([0, 1, 2, 3] * 10, rng=0)
    with pytest.raises(InvalidParameterError, match="'estimator'.*'unbiased', 'ibu', 'mle'"):
        grr.estimate(aggregator, estimator="em")
    with pytest.raises(InvalidParameterError, match="tolerance"):
        grr.estimate(aggregator, tolerance=1e-3)  # meaningless for the unbiased estimator
    with pytest.raises(InvalidParameterError, match="'tolerance'"):
        grr.estimate(aggregator, estimator="ibu", tolerance=-1.0)
    with pytest.raises(InvalidParameterError, match="'bootstrap'"):
        grr.estimate(aggregator, estimator="mle", bootstrap=-2)
    with pytest.raises(InvalidParameterError, match="significance"):
        grr.estimate(aggregator, estimator="mle", significance=0.05)
    oue = local.make("oue", epsilon=1.0, domain_size=4)
    with pytest.raises(InvalidParameterError, match="support counts"):
        oue.estimate(oue.simulate([0, 1] * 10, rng=0), estimator="ibu")
    hr = local.make("hr", epsilon=1.0, domain_size=4)
    with pytest.raises(InvalidParameterError, match="grr only"):
        hr.estimate(hr.simulate([0, 1] * 10, rng=0), estimator="mle")


def _coverage_bounds(repeats: int, level: float, items: int) -> tuple[float, float]:
    """Two-sided Binomial(repeats, level) bounds on a coverage count, Bonferroni over items at ALPHA."""
    return stats.binom.ppf(ALPHA / (2 * items), repeats, level), stats.binom.isf(ALPHA / (2 * items), repeats, level)


@pytest.mark.slow  # a coverage law over 2,000 repeated collections, 0.3 CPU-s
def test_unbiased_estimate_interval_has_its_nominal_coverage():
    protocol = local.make("grr", epsilon=1.0, domain_size=6)
    values = _population(6, 5000)
    truth = np.bincount(values, minlength=6) / values.size
    generator = np.random.default_rng(6)
    repeats, level = 2000, 0.9
    covered = np.zeros(6)
    for _ in range(repeats):
        low, high = protocol.estimate(protocol.simulate(values, rng=generator)).confidence_interval(level)
        covered += (low <= truth) & (truth <= high)
    low_count, high_count = _coverage_bounds(repeats, level, 6)
    assert np.all((covered >= low_count) & (covered <= high_count)), (covered, low_count, high_count)


@pytest.mark.parametrize(
    "name, params, estimator, repeats, replicates",
    [
        # the fast loop draws half the collections (Binomial bounds at that count: 155-198 of 200), the full suite all
        ("grr", {"epsilon": 1.0, "domain_size": 5}, "mle", 200, 200),
        pytest.param("grr", {"epsilon": 1.0, "domain_size": 5}, "mle", 400, 200, marks=pytest.mark.slow),
        pytest.param("hr", {"epsilon": 1.0, "domain_size": 5}, "ibu", 200, 100, marks=pytest.mark.slow),
    ],
)
def test_bootstrap_percentile_interval_has_its_nominal_coverage_inside_the_simplex(
    name, params, estimator, repeats, replicates
):
    """Users i.i.d. from an interior f (the bootstrap's model); coverage count within Binomial bounds."""
    protocol = local.make(name, **params)
    d = protocol.domain_size
    truth = np.arange(1, d + 1) / np.arange(1, d + 1).sum()
    generator = np.random.default_rng(7)
    level = 0.9
    covered = np.zeros(d)
    for _ in range(repeats):
        values = generator.choice(d, size=20_000, p=truth)
        estimate = protocol.estimate(protocol.simulate(values, rng=generator), estimator=estimator,
                                     bootstrap=replicates, level=level, rng=generator)
        low, high = estimate.details["interval"]
        covered += (low <= truth) & (truth <= high)
    # the percentile is taken from `replicates` draws: its Monte-Carlo error lowers coverage by
    # O(1/replicates), below the binomial tolerance here
    low_count, high_count = _coverage_bounds(repeats, level, d)
    assert np.all((covered >= low_count) & (covered <= high_count)), (covered, low_count, high_count)


def test_binning_passes_the_estimator_to_its_oracle():
    protocol = local.make("binning", epsilon=0.5, bounds=(0.0, 1.0), bins=8, oracle="grr")
    values = np.random.default_rng(8).beta(5, 2, size=4000)
    aggregator = protocol.simulate(values, rng=9)
    inner = protocol.oracle.estimate(_inner(protocol, aggregator), estimator="mle")
    assert inner.frequencies.min() >= 0 and inner.frequencies.sum() == pytest.approx(1.0)
    masses = protocol.estimate(aggregator, estimator="mle").details["mle_frequencies"]
    np.testing.assert_allclose(masses, inner.frequencies)
    with_oue = local.make("binning", epsilon=0.5, bounds=(0.0, 1.0), bins=64, oracle="oue")
    with pytest.raises(InvalidParameterError, match="support counts"):
        with_oue.estimate(with_oue.simulate(values, rng=0), estimator="ibu")


def _inner(protocol, aggregator):
    from dpdist.local.numerical._composite import inner_aggregator

    return inner_aggregator(protocol.oracle, aggregator.statistic, aggregator.n)
