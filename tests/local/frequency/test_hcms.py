"""``hcms``: Apple's Hadamard count-mean sketch (one bit per report, a k x m sketch)."""

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError, MalformedReportError


def test_the_estimate_is_unbiased_with_the_stated_variance():
    protocol = local.make("hcms", epsilon=2.0, domain_size=50, hash_count=64, width=16)
    values = np.repeat(np.arange(5), [400, 300, 200, 80, 20])
    truth = np.bincount(values, minlength=50) / values.size
    runs = np.array([protocol.estimate(protocol.privatize(values, rng=seed)).frequencies for seed in range(300)])
    variance = protocol.variance(values.size, truth)
    # the family-averaged law: a fixed family of 64 functions adds a bias of mean square <= ||f||^2 c / (k (1 - c))
    collision = 1 / 16
    bias_bound = math.sqrt(np.sum(truth**2) * collision / (64 * (1 - collision)))
    error = np.abs(runs.mean(axis=0) - truth)
    assert np.all(error <= 5 * np.sqrt(variance / runs.shape[0]) + 4 * bias_bound)
    assert np.median(runs.var(axis=0) / variance) == pytest.approx(1.0, abs=0.25)


def test_the_server_transform_equals_apples_sketch_formula():
    protocol = local.make("hcms", epsilon=1.0, domain_size=30, hash_count=8, width=8)
    reports = protocol.privatize(np.arange(30).repeat(7), rng=3)
    j, column, bit = (reports[:, i].astype(int) for i in range(3))
    e = math.exp(1.0)
    c_eps = (e + 1) / (e - 1)
    sketch = np.zeros((8, 8))
    np.add.at(sketch, (j, column), 8 * c_eps * np.where(bit == 1, 1.0, -1.0))  # Apple Alg. 4: k c_eps w at (j, l)
    hadamard = np.array([[(-1) ** bin(r & c).count("1") for c in range(8)] for r in range(8)])
    sketch = sketch @ hadamard.T
    hashed = protocol._hashed(np.arange(8)[:, None], np.arange(30)[None, :])
    apple = (8 / 7) * (sketch[np.arange(8)[:, None], hashed].mean(axis=0) - reports.shape[0] / 8)
    ours = protocol.estimate(reports).frequencies * reports.shape[0]
    # equal up to the family's exact collision probability (Apple uses 1/m)
    np.testing.assert_allclose(ours, apple, rtol=0.02, atol=2.0)


def test_a_huge_domain_keeps_a_small_state():
    protocol = local.make("hcms", epsilon=4.0, domain_size=2**30, hash_count=16, width=64)
    assert protocol.statistic_size == 2 * 16 * 64
    reports = protocol.privatize(np.array([2**29, 12345, 2**30 - 1]), rng=0)
    assert reports.shape == (3, 3) and protocol.aggregator().add(reports).n == 3


def test_bad_parameters_and_reports_are_refused():
    with pytest.raises(InvalidParameterError, match=r"'width'.*a power of 2.*Got 6"):
        local.make("hcms", epsilon=1.0, domain_size=10, width=6)
    with pytest.raises(InvalidParameterError, match="hash_count"):
        local.make("hcms", epsilon=1.0, domain_size=10, hash_count=2**22, width=1024)
    protocol = local.make("hcms", epsilon=1.0, domain_size=10, hash_count=4, width=4)
    with pytest.raises(MalformedReportError, match=r"shape \(n, 3\)"):
        protocol.aggregator().add(np.zeros((2, 2), dtype=np.uint8), on_invalid="raise")
    aggregator = protocol.aggregator().add(np.array([[0, 0, 2], [4, 0, 1], [0, 4, 0], [1, 1, 1]]), on_invalid="count")
    assert aggregator.n == 1 and sum(aggregator.rejected.values()) == 3


@pytest.mark.parametrize("name", ["cms", "hcms"])
def test_a_huge_domain_is_queried_item_by_item(name):
    protocol = local.make(name, epsilon=4.0, domain_size=2**30, hash_count=64, width=64)
    values = np.repeat(np.array([5, 2**29 + 1, 77]), [3000, 2000, 1000])
    aggregator = protocol.aggregator().add(protocol.privatize(values, rng=0))
    with pytest.raises(InvalidParameterError, match="frequencies_of"):
        protocol.estimate(aggregator)
    found = protocol.frequencies_of(aggregator, [5, 2**29 + 1, 77, 12345])
    np.testing.assert_allclose(found, [0.5, 1 / 3, 1 / 6, 0.0], atol=0.05)
    small = local.make(name, epsilon=4.0, domain_size=100, hash_count=8, width=16)
    aggregator = small.aggregator().add(small.privatize(np.arange(100).repeat(3), rng=1))
    np.testing.assert_allclose(small.frequencies_of(aggregator, np.arange(100)), small.estimate(aggregator).frequencies)
