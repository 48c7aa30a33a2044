"""Registry, config and aggregator-state edge cases, and add/merge as a state machine."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from dpdist import local
from dpdist.errors import IncompatibleStateError, InvalidParameterError
from dpdist.local import Aggregator


def test_make_rejects_unknown_names_and_missing_parameters():
    with pytest.raises(InvalidParameterError, match="'name'.*'grr'"):
        local.make("nope", epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="domain_size"):
        local.make("grr", epsilon=1.0)


def test_from_config_rejects_other_versions_and_non_configs():
    config = local.make("grr", epsilon=1.0, domain_size=3).config()
    with pytest.raises(IncompatibleStateError, match="version"):
        local.from_config({**config, "version": 99})
    with pytest.raises(InvalidParameterError, match="protocol"):
        local.from_config({"epsilon": 1.0})
    with pytest.raises(IncompatibleStateError, match="version True"):  # true == 1 in Python, not in a config
        local.from_config({**config, "version": True})


@pytest.mark.parametrize(("config", "named"), [({"protocol": "sw", "epsilon": 1.0, "b": 1e308}, "b = 1e+308"),
                                               ({"protocol": "hdg", "epsilon": 1.0, "expected_reports": 1e308,
                                                 "attributes": [{"name": "x", "bounds": [0, 1]},
                                                                {"name": "y", "bounds": [0, 1]}]}, "expected_reports = 1e+308")])
def test_a_number_too_large_to_compute_with_is_the_callers_invalid_parameter(config, named):
    """``b = 1e308`` made SW's constants infinite, an ``OverflowError`` from deep inside."""
    with pytest.raises(InvalidParameterError, match=f"'{config['protocol']}' hold a number.*{re.escape(named)}"):
        local.from_config(config)


def test_state_of_another_config_or_shape_is_refused():
    protocol = local.make("grr", epsilon=1.0, domain_size=3)
    state = protocol.simulate([0, 1, 2], rng=0).to_dict()
    with pytest.raises(IncompatibleStateError, match="differs"):
        Aggregator.from_dict(state, local.make("grr", epsilon=2.0, domain_size=3))
    with pytest.raises(IncompatibleStateError, match="shape"):
        Aggregator.from_dict({**state, "statistic": [1, 2]})
    with pytest.raises(IncompatibleStateError, match="missing"):
        Aggregator.from_dict({"n": 3})
    with pytest.raises(IncompatibleStateError):
        protocol.aggregator().merge(state)


def test_add_rejects_an_unknown_on_invalid_policy():
    protocol = local.make("grr", epsilon=1.0, domain_size=3)
    with pytest.raises(InvalidParameterError, match="on_invalid"):
        protocol.aggregator().add([0], on_invalid="ignore")


def test_available_and_describe_list_every_protocol():
    names = local.available()
    assert {"grr", "oue"} <= set(names)
    assert [row[0] for row in local.describe()] == names
    kinds = ("frequency", "heavy_hitters", "numerical", "multi", "key_value")
    assert set().union(*(local.available(kind) for kind in kinds)) == set(names)
    assert local.available("heavy_hitters") == ["pem"]


PROTOCOL = local.make("grr", epsilon=1.0, domain_size=6)


class AddMergeMachine(RuleBasedStateMachine):
    """Random interleavings of add and merge over shards equal one-shot aggregation."""

    def __init__(self):
        super().__init__()
        self.shards = [PROTOCOL.aggregator()]
        self.batches = []

    @rule(seed=st.integers(0, 2**16), size=st.integers(0, 40), shard=st.integers(0, 7))
    def add_batch(self, seed, size, shard):
        reports = PROTOCOL.privatize(np.random.default_rng(seed).integers(0, 6, size), rng=seed)
        self.batches.append(reports)
        self.shards[shard % len(self.shards)].add(reports)

    @rule()
    def new_shard(self):
        self.shards.append(PROTOCOL.aggregator())

    @precondition(lambda self: len(self.shards) > 1)
    @rule(first=st.integers(0, 7), second=st.integers(0, 7))
    def merge_two(self, first, second):
        i, j = first % len(self.shards), second % len(self.shards)
        if i != j:
            merged = self.shards[i].merge(self.shards[j])
            self.shards = [s for k, s in enumerate(self.shards) if k not in (i, j)] + [merged]

    @invariant()
    def combined_equals_one_shot(self):
        combined = PROTOCOL.aggregator()
        for shard in self.shards:
            combined.merge(shard)
        one_shot = PROTOCOL.aggregator()
        for batch in self.batches:
            one_shot.add(batch)
        assert combined == one_shot


TestAddMerge = AddMergeMachine.TestCase
TestAddMerge.settings = settings(max_examples=30, stateful_step_count=15, deadline=None)


@pytest.mark.parametrize(
    "statistic, n, reason",
    [([-5.7, 3.9, 100], 3, "above n"), ([-1, 2, 2], 3, "negative counts"), ([0, 1, 4], 3, "above n"), ([1.5, 1, 0], 3, "non-integer"), ([1, 1, float("nan")], 3, "non-finite")],
)
def test_corrupt_states_are_refused(statistic, n, reason):
    state = local.make("grr", epsilon=1.0, domain_size=3).simulate([0, 1, 2], rng=0).to_dict()
    with pytest.raises(IncompatibleStateError, match=reason):
        Aggregator.from_dict({**state, "statistic": statistic, "n": n})
    with pytest.raises(IncompatibleStateError):
        Aggregator.from_dict({**state, "statistic": ["a", "b", "c"]})
