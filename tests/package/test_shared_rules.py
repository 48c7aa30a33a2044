"""Shared constraints live in ``_validation``, derived random streams in ``_rng``."""

from __future__ import annotations

import numpy as np

from dpdist import _rng, _validation, local
from dpdist.central import _common
from dpdist.experiments import _spec
from dpdist.local import _protocol
from dpdist.local._registry import registered_class
from dpdist.local.frequency import auto
from dpdist.local.multi import MAX_ATTRIBUTES


def test_every_epsilon_rule_is_the_shared_one():
    for name in local.available():
        cls = registered_class(name)
        rule = cls._constraints["epsilon"]
        if name == "spl":  # each of up to 64 attributes gets epsilon / k, itself within the shared rule
            assert (rule.low, rule.high) == (_validation.LOCAL_EPSILON.low * MAX_ATTRIBUTES, _validation.LOCAL_EPSILON.high)
            continue
        assert rule is _validation.LOCAL_EPSILON, name
    assert _validation.EPSILON is _validation.LOCAL_EPSILON
    assert _common.EPSILON is _validation.CENTRAL_EPSILON and _common.DELTA is _validation.DELTA
    assert _protocol.EPSILON is _validation.EPSILON  # the old import still works


def test_categorical_domain_rule_is_shared():
    for name in local.available("frequency"):
        cls = registered_class(name)
        assert cls._constraints["domain_size"] is _validation.DOMAIN_SIZE, name
    assert auto.DOMAIN_SIZE is _validation.DOMAIN_SIZE


def test_block_streams_are_spawned_children():
    root = _rng.root_seed_sequence(7)
    for index in (0, 3):
        expected = np.random.default_rng(np.random.SeedSequence(7).spawn(index + 1)[index]).integers(0, 2**62, 4)
        assert np.array_equal(_rng.block_generator(root, index).integers(0, 2**62, 4), expected)


def test_named_streams_are_keyed_by_canonical_names():
    assert _spec.stable_id is _rng.stable_id  # the runner's seeds and the demo's share one derivation
    assert _rng.stable_id("epsilon", 1) == _rng.stable_id("epsilon", 1.0)
    a = _rng.named_generator(5, "grr", 1.0).integers(0, 2**62, 3)
    assert np.array_equal(a, _rng.named_generator(5, "grr", 1).integers(0, 2**62, 3))
    assert not np.array_equal(a, _rng.named_generator(5, "oue", 1.0).integers(0, 2**62, 3))
