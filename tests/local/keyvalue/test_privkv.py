"""PrivKV (dpdist.local.keyvalue.privkv): it spends less than its sequential composition."""

from __future__ import annotations

import math

import pytest

from dpdist import local
from dpdist.testing._statistics import max_privacy_loss


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_privkv_spends_less_than_its_sequential_composition(epsilon):
    """PrivKV states eps1 + eps2 = eps; its exact loss is max{eps2, eps1 + ln(2 p2)} (what PCKV's Theorem 2
    says of a correlated pair), below it."""
    protocol = local.make("privkv", epsilon=epsilon, domain_size=3)
    _, p2 = protocol.perturbation_probabilities()
    half = math.log(p2 / (1 - p2))
    assert max_privacy_loss(protocol.channel()) == pytest.approx(max(half, half + math.log(2 * p2)), rel=1e-9)
    assert max_privacy_loss(protocol.channel()) < epsilon
