"""OUE (dpdist.local.frequency.oue) beyond the conformance suite: realized probabilities within epsilon, bit-packed
reports, padding bits and widths refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import MalformedReportError


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


@pytest.mark.parametrize("name", ["oue", "sue", "rue"])
def test_a_report_of_a_domain_past_a_chunk_is_drawn_in_chunks_with_the_same_bits(name):
    # the d uniforms of one report were drawn at once: 500 MB for a report of 12 MB at d = 10^8
    from dpdist._rng import random_words

    d = (1 << 20) + 12_345  # odd: a 64-bit word's second half starts the next chunk
    protocol = local.make(name, epsilon=1.0, domain_size=d)
    values = [0, d - 1, (1 << 20) + 5]
    reports = protocol.privatize(values, rng=7)
    zeros = protocol.privatize_zero(2, np.random.default_rng(9))
    rng, zero_rng = np.random.default_rng(7), np.random.default_rng(9)
    p, q = protocol._p_threshold, protocol._q_threshold
    for row, item in enumerate(values):  # what drawing the user's d uniforms at once gives
        uniforms = random_words(rng, -(-d // 2)).view(np.uint32)[:d]
        bits = uniforms < q
        bits[item] = uniforms[item] < p
        np.testing.assert_array_equal(reports[row], np.packbits(bits))
    for row in range(2):
        np.testing.assert_array_equal(zeros[row], np.packbits(random_words(zero_rng, -(-d // 2)).view(np.uint32)[:d] < q))


def test_a_report_of_a_hundred_million_items_is_drawn_in_little_more_memory_than_itself():
    import tracemalloc

    protocol = local.make("oue", epsilon=1.0, domain_size=10**8)
    tracemalloc.start()
    try:
        report = protocol.privatize([10**8 - 1], rng=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.nbytes == 12_500_000 and peak < 2 * report.nbytes + (16 << 20), peak
