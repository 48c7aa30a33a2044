"""GRR and OUE specifics beyond the conformance suite: closed forms, report formats, rejection."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError, MalformedReportError


@pytest.mark.parametrize("epsilon, d", [(0.5, 2), (1.0, 10), (4.0, 1000)])
def test_grr_probabilities_are_the_closed_form(epsilon, d):
    protocol = local.make("grr", epsilon=epsilon, domain_size=d)
    p, q = protocol.support_probabilities()
    e = math.exp(epsilon)
    assert p == pytest.approx(e / (e + d - 1), rel=1e-15)
    assert q == pytest.approx(1 / (e + d - 1), rel=1e-15)
    assert math.log(p / q) == pytest.approx(epsilon, rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0, 12.0])
def test_oue_realized_probabilities_never_exceed_epsilon(epsilon):
    protocol = local.make("oue", epsilon=epsilon, domain_size=16)
    p, q = protocol.support_probabilities()
    assert p == 0.5
    target = 1 / (math.exp(epsilon) + 1)
    assert target <= q < target + 2**-32  # q rounded up to the 2^-32 grid
    assert math.log(p * (1 - q) / ((1 - p) * q)) <= epsilon


def test_oue_reports_are_bit_packed():
    protocol = local.make("oue", epsilon=1.0, domain_size=20)
    reports = protocol.privatize(np.arange(20), rng=0)
    assert reports.dtype == np.uint8 and reports.shape == (20, 3)
    assert np.all(reports[:, -1] & 0x0F == 0)  # 4 padding bits stay zero
    bits = protocol.unpack(reports)
    np.testing.assert_array_equal(protocol.pack(bits), reports)


def test_grr_reports_use_the_narrowest_dtype():
    assert local.make("grr", epsilon=1.0, domain_size=256).privatize([255], rng=0).dtype == np.uint8
    assert local.make("grr", epsilon=1.0, domain_size=257).privatize([256], rng=0).dtype == np.uint16


def test_out_of_range_reports_are_counted_and_valid_ones_kept():
    protocol = local.make("grr", epsilon=1.0, domain_size=4)
    reports = np.array([0, 1, 4, 3, -1, 2])
    aggregator = protocol.aggregator().add(reports)
    assert aggregator.n == 4
    assert aggregator.rejected == {"out_of_range": 2}
    np.testing.assert_array_equal(aggregator.statistic, [1, 1, 1, 1])
    with pytest.raises(MalformedReportError, match="row 2"):
        protocol.aggregator().add(reports, on_invalid="raise")


def test_oue_reports_with_padding_bits_set_are_rejected():
    protocol = local.make("oue", epsilon=1.0, domain_size=5)
    reports = protocol.privatize([0, 1, 2], rng=0)
    reports[1, 0] |= 0x01  # bit 7 of byte 0: item 7, beyond d = 5
    aggregator = protocol.aggregator().add(reports)
    assert aggregator.n == 2 and aggregator.rejected == {"padding_bits_set": 1}


def test_oue_reports_of_the_wrong_width_are_unreadable():
    protocol = local.make("oue", epsilon=1.0, domain_size=9)
    with pytest.raises(MalformedReportError, match=r"shape \(n, 2\)"):
        protocol.aggregator().add(np.zeros((3, 1), dtype=np.uint8))


def test_estimate_from_reports_equals_estimate_from_aggregator():
    protocol = local.make("oue", epsilon=2.0, domain_size=30)
    reports = protocol.privatize(np.random.default_rng(1).integers(0, 30, 5000), rng=2)
    from_reports = protocol.estimate(reports)
    from_aggregator = protocol.estimate(protocol.aggregator().add(reports))
    np.testing.assert_array_equal(from_reports.frequencies, from_aggregator.frequencies)


@pytest.mark.parametrize("method", ["clip", "clip-normalize", "norm", "norm-sub", "base-pos", "simplex"])
def test_postprocessing_options(method):
    protocol = local.make("grr", epsilon=1.0, domain_size=50)
    values = np.random.default_rng(0).zipf(2.0, 3000) % 50
    estimate = protocol.estimate(protocol.simulate(values, rng=1), postprocess=method)
    assert estimate.postprocess == method
    if method in ("clip-normalize", "norm", "norm-sub", "simplex"):
        assert estimate.frequencies.sum() == pytest.approx(1.0)
    if method != "norm":
        assert estimate.frequencies.min() >= 0


def test_significance_threshold_zeroes_items_below_eq6_of_paper_001():
    protocol = local.make("oue", epsilon=1.0, domain_size=100)
    values = np.zeros(10_000, dtype=int)  # all mass on item 0
    estimate = protocol.estimate(protocol.simulate(values, rng=3), significance=0.05)
    threshold = estimate.details["significance_threshold"]
    # eq. 6: Phi^-1(1 - alpha/d) * sqrt(Var*), Var* = q(1-q) / (n (p-q)^2)
    p, q = protocol.support_probabilities()
    expected = 3.2905267314919255 * math.sqrt(q * (1 - q) / (10_000 * (p - q) ** 2))
    assert threshold == pytest.approx(expected, rel=1e-9)
    assert estimate.frequencies[0] > 0.9
    assert np.all((estimate.frequencies[1:] == 0) | (estimate.frequencies[1:] >= threshold))


def test_estimate_rejects_unknown_options_and_bad_significance():
    protocol = local.make("grr", epsilon=1.0, domain_size=5)
    aggregator = protocol.simulate([0, 1, 2], rng=0)
    with pytest.raises(InvalidParameterError, match="unknown option"):
        protocol.estimate(aggregator, smoothing=True)
    with pytest.raises(InvalidParameterError, match="significance"):
        protocol.estimate(aggregator, significance=1.5)
    with pytest.raises(InvalidParameterError, match="postprocess"):
        protocol.estimate(aggregator, postprocess="magic")


def test_simulate_is_fast_path_for_large_n():
    # O(d) aggregate sampling: 10^6 users with d = 8 must give exact counts summing to n
    protocol = local.make("grr", epsilon=1.0, domain_size=8)
    aggregator = protocol.simulate(np.zeros(1_000_000, dtype=np.int32), rng=0)
    assert aggregator.n == 1_000_000 and aggregator.statistic.sum() == 1_000_000


@pytest.mark.parametrize("n_bits", [1, 7, 8, 9, 1024, 1031])
def test_packed_bit_counts_equal_unpacked_column_sums(n_bits):
    from dpdist.local._reports import count_packed_bits

    bits = np.random.default_rng(n_bits).random((3001, n_bits)) < 0.3
    packed = np.packbits(bits, axis=1)
    np.testing.assert_array_equal(count_packed_bits(packed, n_bits), bits.sum(axis=0))
