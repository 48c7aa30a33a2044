"""The peers' adapters: their current (fixed) randomizers are not flagged; the published bugs, rebuilt, are.

The peer libraries randomize one value per Python call and pure-LDP alone takes ~3 CPU-s to import, so every test
that builds a real adapter is slow; the fast loop checks what the adapters rely on without importing them.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from dpdist import audit
from dpdist.audit import Randomizer, peers
from dpdist.errors import MissingDependencyError


def _not_flagged(randomizer, samples, pilot):
    result = audit.audit(randomizer, samples=samples, pilot=pilot, rng=11)
    assert result.verdict == "no violation found", result.text()
    assert 0.3 < result.certified_epsilon <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize("build, package", [
    (lambda: peers.pure_ldp_direct_encoding(4, 1.0), "pure_ldp"),
    (lambda: peers.pure_ldp_unary_encoding(4, 1.0), "pure_ldp"),
    (lambda: peers.multi_freq_ldpy_grr(4, 1.0), "multi_freq_ldpy"),
    (lambda: peers.multi_freq_ldpy_ue(4, 1.0, optimal=False), "multi_freq_ldpy"),
], ids=["pure-ldp-de", "pure-ldp-ue", "mfl-grr", "mfl-sue"])
def test_current_peers_are_not_flagged(build, package):
    pytest.importorskip(package)
    _not_flagged(build(), 2000, 400)


def test_the_global_streams_are_seeded_from_the_audit_and_restored():
    np.random.seed(5)
    random.seed(5)
    before = (np.random.random(), random.random())
    np.random.seed(5)
    random.seed(5)
    inside = []
    for _ in range(2):
        with peers._global_streams(np.random.default_rng(0)):
            inside.append((np.random.random(), random.random()))
    assert inside[0] == inside[1] != before  # the same audit seed draws the same, not the outer stream
    assert (np.random.random(), random.random()) == before


@pytest.mark.slow
def test_the_adapters_leave_the_global_streams_as_they_were():
    pytest.importorskip("multi_freq_ldpy")
    np.random.seed(5)
    before = np.random.random()
    np.random.seed(5)
    audit.audit(peers.multi_freq_ldpy_grr(3, 1.0), samples=1000, pilot=200, white_box=False, rng=0)
    assert np.random.random() == before


def test_a_missing_peer_is_a_missing_dependency_naming_the_package():
    with pytest.raises(MissingDependencyError, match="'no-such-ldp-package'"):
        peers._require("no_such_ldp_package.oracles", "no-such-ldp-package")


def test_pure_ldp_unary_encoding_before_1_2_0_is_caught():
    """The shape of pure-LDP's UE bug before 1.2.0 (Samuel-Maddock/pure-LDP#11: the true bit not kept with
    probability p): here the item's bit is drawn like every other bit and then set to 1 w.p. p, so it is 1 w.p.
    p + (1 - p) q.  A reconstruction on the fixed client's parameters (OUE at epsilon 1), not the old code."""
    p, q = 0.5, 1 / (math.e + 1)

    def old(values, rng):
        values = np.asarray(values, dtype=np.int64)
        bits = (rng.random((values.size, 8)) < q).astype(np.uint8)
        bits[np.arange(values.size), values] |= (rng.random(values.size) < p).astype(np.uint8)
        return bits

    assert audit.audit(Randomizer(old, epsilon=1.0, domain=8), samples=50_000, rng=12).violates


@pytest.mark.slow
def test_opendp_current_randomizers_are_not_flagged():
    pytest.importorskip("opendp")
    for randomizer in (peers.opendp_randomized_response(4, 1.0), peers.opendp_bitvector(8, 0.5)):
        result = audit.audit(randomizer, samples=4000, pilot=500)
        assert result.verdict == "no violation found", result.text()
