"""SUE (basic one-time RAPPOR): its probabilities, privacy and variance against closed forms."""

import math

import numpy as np
import pytest

from dpdist import local


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_bits_are_kept_with_probability_e_half_epsilon_over_one_plus(epsilon):
    protocol = local.make("sue", epsilon=epsilon, domain_size=7)
    p, q = protocol.support_probabilities()
    target = math.exp(epsilon / 2) / (math.exp(epsilon / 2) + 1)
    # bits are drawn from 32-bit uniforms: p rounded down, q rounded up, by at most 2^-32
    assert target - 2**-32 <= p <= target and 1 - target <= q <= 1 - target + 2**-32


def test_privacy_ratio_is_e_epsilon_and_the_channel_attains_it():
    protocol = local.make("sue", epsilon=1.3, domain_size=4)
    channel = protocol.channel()
    loss = np.max(np.log(channel.max(axis=0) / channel.min(axis=0)))
    assert loss <= 1.3 + 1e-12
    assert loss > 1.3 - 1e-8  # SUE uses its whole budget


def test_variance_matches_the_rappor_closed_form():
    # Wang et al. 2017, eq. for basic RAPPOR: Var* = e^{eps/2} / (n (e^{eps/2} - 1)^2)
    epsilon, n = 1.0, 10_000
    protocol = local.make("sue", epsilon=epsilon, domain_size=16)
    half = math.exp(epsilon / 2)
    np.testing.assert_allclose(protocol.variance(n), half / (n * (half - 1) ** 2), rtol=1e-8)


def test_reports_are_bit_packed_and_bad_padding_is_counted():
    protocol = local.make("sue", epsilon=1.0, domain_size=10)
    reports = protocol.privatize(np.arange(10), rng=0)
    assert reports.shape == (10, 2) and reports.dtype == np.uint8
    reports[3, -1] |= 1  # a padding bit
    aggregator = protocol.aggregator().add(reports)
    assert aggregator.n == 9 and aggregator.rejected == {"padding_bits_set": 1}
