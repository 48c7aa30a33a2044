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
