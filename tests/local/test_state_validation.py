"""One validator refuses every impossible aggregator state, for every protocol."""

import copy
import functools

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import IncompatibleStateError
from dpdist.local import Aggregator
from conformance._examples import CASES, make, population

ONE_CASE_PER_PROTOCOL = list({name: (name, params) for name, params in CASES}.values())


def _state(case):
    """The protocol and a valid state of it (a copy each call: a test may change what it is given)."""
    protocol, state = _made(case[0])
    return protocol, copy.deepcopy(state)


@functools.cache
def _made(name):
    # built once per protocol for the 11 + 5 + 1 tests that read it (privatizing 400 values each time cost 0.5 CPU-s)
    protocol = make((name, dict(ONE_CASE_PER_PROTOCOL)[name]))
    return protocol, protocol.aggregator().add(protocol.privatize(population(protocol, 400), rng=3)).to_dict()


def _with_statistic(state, index, value):
    statistic = list(state["statistic"])
    statistic[index] = value
    return {**state, "statistic": statistic}


BAD_FIELDS = {
    "n huge": {"n": 10**30},
    "n fractional": {"n": 1000.9},
    "n string": {"n": "200"},
    "n bool": {"n": True},
    "n negative": {"n": -1},
    "rejected negative": {"rejected": {"other_config": -1}},
    "rejected not a dict": {"rejected": [1, 2]},
    "rejected float": {"rejected": {"x": 1.5}},
    "format": {"format": "something-else"},
    "version": {"version": 99},
    "config": {"config": {"protocol": ["grr"]}},
}


# that a valid state round-trips (with and without its protocol): the conformance suite's check_state_round_trip, for
# every example of every protocol


@pytest.mark.parametrize("field", sorted(BAD_FIELDS))
@pytest.mark.parametrize("case", ONE_CASE_PER_PROTOCOL, ids=lambda c: c[0])
def test_impossible_fields_are_refused(case, field):
    _, state = _state(case)
    with pytest.raises(IncompatibleStateError):
        Aggregator.from_dict({**state, **BAD_FIELDS[field]})


@pytest.mark.parametrize("value_name", ["negative", "above n", "1e300", "fraction", "nan"])
@pytest.mark.parametrize("case", ONE_CASE_PER_PROTOCOL, ids=lambda c: c[0])
def test_impossible_statistics_are_refused(case, value_name):
    protocol, state = _state(case)
    n = state["n"]
    value = {"negative": -n - 1 if protocol.statistic_signed else -1, "above n": n + 1, "1e300": 1e300,
             "fraction": 0.5, "nan": float("nan")}[value_name]
    with pytest.raises(IncompatibleStateError):
        Aggregator.from_dict(_with_statistic(state, 0, value))


@pytest.mark.parametrize("case", ONE_CASE_PER_PROTOCOL, ids=lambda c: c[0])
def test_merge_refuses_a_corrupted_aggregator(case):
    protocol, state = _state(case)
    good = Aggregator.from_dict(state)
    forged = Aggregator.from_dict(state)
    forged.statistic = forged.statistic.copy()
    forged.statistic[0] = 10**18
    with pytest.raises(IncompatibleStateError):
        good.copy().merge(forged)
    forged = Aggregator.from_dict(state)
    forged.n = 1.5
    with pytest.raises(IncompatibleStateError):
        good.copy().merge(forged)


def test_state_files_validate_through_the_same_rule(tmp_path):
    from dpdist.io import load_state, save_state

    protocol = local.make("sw", epsilon=1.0)
    aggregator = protocol.simulate(np.linspace(0, 1, 100), rng=0)
    aggregator.statistic[0] = aggregator.n + 5  # impossible, yet saved as-is
    path = tmp_path / "state.bin"
    save_state(path, aggregator)
    with pytest.raises(IncompatibleStateError, match="above n"):
        load_state(path)
