"""The peers' adapters: their current (fixed) randomizers are not flagged; the published bugs, rebuilt, are."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import audit
from dpdist.audit import Randomizer, peers

pytest.importorskip("pure_ldp")
pytest.importorskip("multi_freq_ldpy")


@pytest.mark.parametrize("build", [
    lambda: peers.pure_ldp_direct_encoding(4, 1.0),
    lambda: peers.pure_ldp_unary_encoding(4, 1.0),
    lambda: peers.multi_freq_ldpy_grr(4, 1.0),
    lambda: peers.multi_freq_ldpy_ue(4, 1.0, optimal=False),
])
def test_current_peers_are_not_flagged(build):
    result = audit.audit(build(), samples=2000, pilot=400, rng=11)
    assert result.verdict == "no violation found", result.text()
    assert 0.3 < result.certified_epsilon <= 1.0


def test_the_adapters_leave_the_global_streams_as_they_were():
    np.random.seed(5)
    before = np.random.random()
    np.random.seed(5)
    audit.audit(peers.multi_freq_ldpy_grr(3, 1.0), samples=1000, pilot=200, white_box=False, rng=0)
    assert np.random.random() == before


def test_pure_ldp_unary_encoding_before_1_2_0_is_caught():
    """The shape of pure-LDP's UE bug before 1.2.0 (Samuel-Maddock/pure-LDP#11: the true bit not kept with
    probability p): here the item's bit is drawn like every other bit and then set to 1 w.p. p, so it is 1 w.p.
    p + (1 - p) q.  A reconstruction on the fixed client's parameters, not the old code."""
    fixed = peers.pure_ldp_unary_encoding(8, 1.0)
    p, q = 0.5, 1 / (math.e + 1)

    def old(values, rng):
        values = np.asarray(values, dtype=np.int64)
        bits = (rng.random((values.size, 8)) < q).astype(np.uint8)
        bits[np.arange(values.size), values] |= (rng.random(values.size) < p).astype(np.uint8)
        return bits

    assert audit.audit(Randomizer(old, epsilon=fixed.epsilon, domain=8), samples=50_000, rng=12).violates


@pytest.mark.slow
def test_opendp_current_randomizers_are_not_flagged():
    pytest.importorskip("opendp")
    for randomizer in (peers.opendp_randomized_response(4, 1.0), peers.opendp_bitvector(8, 0.5)):
        result = audit.audit(randomizer, samples=4000, pilot=500)
        assert result.verdict == "no violation found", result.text()
