"""SR (dpdist.local.numerical.sr; paper 003 sec. 2.2): its channel and variance."""

from __future__ import annotations

import math

import numpy as np

from dpdist import local


def test_sr_channel_and_variance():
    epsilon = 1.5
    protocol = local.make("sr", epsilon=epsilon, bounds=(0.0, 2.0))
    p = math.exp(epsilon) / (math.exp(epsilon) + 1)
    v = np.array([-1.0, 0.0, 0.5, 1.0])
    channel = protocol.channel(v + 1)
    np.testing.assert_allclose(channel[:, 1], (1 - p) + (2 * p - 1) * (1 + v) / 2)
    assert (channel.max(axis=0) / channel.min(axis=0)).max() <= math.exp(epsilon) * (1 + 1e-12)
    np.testing.assert_allclose(protocol.report_variance(v + 1), 1 / (2 * p - 1) ** 2 - v**2)
