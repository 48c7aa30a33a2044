"""OLH: the hash family's exact collision law, vectorized aggregation, report validation."""

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError, MalformedReportError
from dpdist.local.frequency import _hashing


@pytest.mark.parametrize("prime, hash_range", [(5, 2), (7, 3), (11, 4), (13, 13)])
def test_collision_probability_formula_matches_enumeration_of_the_family(prime, hash_range):
    seeds = np.arange(_hashing.seed_count(prime))
    items = np.arange(prime)
    hashed = _hashing.hash_items(seeds[:, None], items[None, :], prime, hash_range)  # (seeds, items)
    expected = _hashing.collision_probability(prime, hash_range)
    for first in range(prime):
        for second in range(first + 1, prime):
            assert np.mean(hashed[:, first] == hashed[:, second]) == pytest.approx(expected, abs=1e-15)


def test_default_family_is_nearly_universal_and_matches_the_optimal_variance():
    epsilon = 1.0
    protocol = local.make("olh", epsilon=epsilon, domain_size=1000)
    e = math.exp(epsilon)
    assert protocol.hash_range == round(e + 1)
    _, q = protocol.support_probabilities()
    assert q == pytest.approx(1 / protocol.hash_range, rel=1e-8)  # P = 2^31 - 1 >> g
    g = protocol.hash_range
    p = e / (e + g - 1)
    # Wang et al. 2017 eq. (Var* of local hashing) with q* = 1/g
    np.testing.assert_allclose(protocol.variance(1), (1 / g) * (1 - 1 / g) / (p - 1 / g) ** 2, rtol=1e-7)


def test_chunked_aggregation_equals_hashing_each_report():
    protocol = local.make("olh", epsilon=2.0, domain_size=37)
    values = np.random.default_rng(1).integers(0, 37, size=3000)
    reports = protocol.privatize(values, rng=2)
    a, b = 1 + reports[:, 0].astype(np.int64) // (2**31 - 1), reports[:, 0].astype(np.int64) % (2**31 - 1)
    naive = np.zeros(37, dtype=np.int64)
    for item in range(37):  # test oracle: scalar formula per item
        naive[item] = np.sum((a * item + b) % (2**31 - 1) % protocol.hash_range == reports[:, 1].astype(np.int64))
    np.testing.assert_array_equal(protocol.aggregator().add(reports).statistic, naive)


def test_reports_are_seed_value_pairs_and_out_of_range_rows_are_counted():
    protocol = local.make("olh", epsilon=1.0, domain_size=5, hash_prime=7)
    reports = protocol.privatize(np.arange(5), rng=0)
    assert reports.shape == (5, 2) and reports.dtype == np.uint64
    bad = reports.copy()
    bad[0, 0] = 6 * 7  # seeds are in [0, (P-1)P)
    bad[1, 1] = protocol.hash_range
    aggregator = protocol.aggregator().add(bad)
    assert aggregator.n == 3
    assert aggregator.rejected == {"seed_out_of_range": 1, "value_out_of_range": 1}
    with pytest.raises(MalformedReportError, match=r"\(n, 2\)"):
        protocol.aggregator().add(reports[:, :1])


def test_invalid_family_parameters_are_refused():
    with pytest.raises(InvalidParameterError, match="hash_prime"):
        local.make("olh", epsilon=1.0, domain_size=5, hash_prime=9)
    with pytest.raises(InvalidParameterError, match="domain_size"):
        local.make("olh", epsilon=1.0, domain_size=8, hash_prime=7)


def test_a_wrong_q_star_would_bias_the_estimate_for_a_small_prime():
    # With P = 5, g = 4 the collision probability is 2/20 = 0.1, not 1/g = 0.25: the exact q* matters.
    protocol = local.make("olh", epsilon=1.0, domain_size=4, hash_prime=5)
    assert protocol.hash_range == 4
    assert _hashing.collision_probability(5, protocol.hash_range) == pytest.approx(0.1)
    values = np.repeat(np.arange(4), [20000, 12000, 6000, 2000])
    truth = np.bincount(values) / values.size
    reports = protocol.privatize(values, rng=4)
    exact = protocol.estimate(reports).frequencies
    support = protocol.aggregator().add(reports).statistic / values.size
    p, _ = protocol.support_probabilities()
    naive = (support - 1 / protocol.hash_range) / (p - 1 / protocol.hash_range)
    # 6 standard errors (analytic variance at the truth) for the exact estimator;
    # the naive q* = 1/g is off by far more than that
    limit = 6 * np.sqrt(protocol.variance(values.size, truth))
    assert np.all(np.abs(exact - truth) < limit)
    assert np.any(np.abs(naive - truth) > 3 * limit)


def test_report_hashes_support_the_own_item_with_the_keep_probability():
    protocol = local.make("olh", epsilon=1.0, domain_size=8)
    values = np.repeat(np.arange(4), 5000)
    buckets, reported = protocol.report_hashes(protocol.privatize(values, rng=0), np.arange(4))
    supported = (buckets == reported[:, None])[np.arange(values.size), values]
    p, _ = protocol.support_probabilities()
    assert abs(supported.mean() - p) < 4 * math.sqrt(p * (1 - p) / values.size)
