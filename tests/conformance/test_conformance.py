"""The conformance suite: every registered local protocol, every check its tags allow.

Tolerances: statistical checks are seeded (deterministic) and use the level
``ALPHA = 1e-6`` per check with Bonferroni corrections over items/coordinates,
so a correct implementation fails for a given seed with probability ~1e-6, while
the broken variants in ``test_checks_catch_broken.py`` fail by many orders of
magnitude.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import dpdist.local as local
from dpdist.errors import (
    EmptyAggregateError,
    IncompatibleStateError,
    InvalidParameterError,
    InvalidValueTypeError,
    MalformedReportError,
    OutOfDomainError,
)
from dpdist.local import Aggregator

from ._checks import (
    assert_channel_is_stochastic,
    assert_epsilon_ldp,
    assert_privatize_samples_channel,
    assert_simulate_matches_privatize,
    assert_unbiased_with_analytic_variance,
)
from ._examples import CASES, EXAMPLES, case_id, channel_inputs, make, population

ALL = pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])


def _cases_with(**tags):
    selected = [c for c in CASES if all(getattr(make(c).tags, k) == v for k, v in tags.items())]
    return pytest.mark.parametrize("case", selected, ids=[case_id(c) for c in selected])


def _aggregate(protocol, values, rng) -> Aggregator:
    return protocol.aggregator().add(protocol.privatize(values, rng=rng), on_invalid="raise")


# ---------------------------------------------------------------------- registry
def test_every_protocol_has_examples():
    missing = [name for name in local.available() if not EXAMPLES.get(name)]
    assert not missing, f"protocols without conformance examples: {missing}"


@ALL
def test_config_round_trip(case):
    protocol = make(case)
    config = json.loads(json.dumps(protocol.config()))
    rebuilt = local.from_config(config)
    assert rebuilt == protocol
    assert rebuilt.config() == protocol.config()
    assert config["protocol"] == protocol.name


@ALL
def test_aggregator_state_round_trip(case):
    protocol = make(case)
    aggregator = _aggregate(protocol, population(protocol, 200), rng=1)
    state = json.loads(json.dumps(aggregator.to_dict()))
    assert Aggregator.from_dict(state) == aggregator
    assert Aggregator.from_dict(state, protocol) == aggregator


# ---------------------------------------------------------------------- privacy
@_cases_with(finite_channel=True)
def test_channel_is_exactly_epsilon_ldp(case):
    protocol = make(case)
    channel = protocol.channel(channel_inputs(protocol))
    assert_channel_is_stochastic(channel)
    assert_epsilon_ldp(channel, protocol.epsilon)


@_cases_with(finite_channel=True)
def test_privatize_samples_the_channel(case):
    protocol = make(case)
    inputs = channel_inputs(protocol)
    outputs = protocol.channel(inputs[:1]).shape[1]
    assert_privatize_samples_channel(protocol, inputs, n_per_input=min(200_000, max(20_000, 50 * outputs)), rng=3)


@_cases_with(finite_channel=True)
def test_privatize_samples_the_channel_with_a_32_bit_generator(case):
    # MT19937's raw output is 32 bits wide: samplers must not assume 64-bit raw words
    protocol = make(case)
    inputs = channel_inputs(protocol)
    outputs = protocol.channel(inputs[:1]).shape[1]
    generator = np.random.Generator(np.random.MT19937(4))
    assert_privatize_samples_channel(protocol, inputs, n_per_input=min(100_000, max(10_000, 30 * outputs)), rng=generator)


@ALL
def test_privatize_is_reproducible_and_secure_mode_works(case):
    protocol = make(case)
    values = population(protocol, 500)
    first, second = protocol.privatize(values, rng=11), protocol.privatize(values, rng=11)
    np.testing.assert_array_equal(np.asarray(first), np.asarray(second))
    secure = protocol.aggregator().add(protocol.privatize(values, secure=True), on_invalid="raise")
    assert secure.n == len(values) and not secure.rejected
    with pytest.raises(InvalidParameterError, match="secure"):
        protocol.privatize(values, rng=1, secure=True)


# ---------------------------------------------------------------------- statistics
@_cases_with(kind="frequency", unbiased=True)
def test_estimator_is_unbiased_with_the_analytic_variance(case):
    assert_unbiased_with_analytic_variance(make(case), rng=5)


@_cases_with(exact_simulate=True)
def test_simulate_matches_privatize_and_aggregate_in_distribution(case):
    assert_simulate_matches_privatize(make(case), rng=9)


# ---------------------------------------------------------------------- merging
@ALL
def test_merge_equals_aggregate_of_union_in_any_order(case):
    protocol = make(case)
    values = population(protocol, 1500)
    reports = protocol.privatize(values, rng=21)
    parts = np.random.default_rng(22).integers(0, 3, size=len(values))
    union = protocol.aggregator().add(reports)
    shards = [protocol.aggregator().add(protocol._select_reports(reports, parts == k)) for k in range(3)]
    forward = shards[0].copy().merge(shards[1]).merge(shards[2])
    backward = shards[2].copy().merge(shards[1].copy().merge(shards[0]))
    assert forward == union and backward == union
    assert union.copy().merge(protocol.aggregator()) == union


@ALL
def test_merge_of_different_configs_is_refused(case):
    protocol = make(case)
    other = local.make(protocol.name, **{**protocol.params, "epsilon": protocol.epsilon * 2})
    with pytest.raises(IncompatibleStateError, match="config"):
        protocol.aggregator().merge(other.aggregator())
    aggregator = _aggregate(other, population(other, 50), rng=0)
    with pytest.raises(IncompatibleStateError):
        protocol.estimate(aggregator)


# ---------------------------------------------------------------------- bad input
def _invalid_parameter_cases():
    for case in CASES:
        protocol = make(case)
        for key, constraint in type(protocol)._constraints.items():
            for bad in constraint.invalid_examples():
                yield pytest.param(case, key, bad, constraint.error, id=f"{case_id(case)}-{key}={bad!r}")


@pytest.mark.parametrize("case, key, bad, error", list(_invalid_parameter_cases()))
def test_invalid_parameters_are_rejected_with_a_clear_error(case, key, bad, error):
    name, params = case
    with pytest.raises(error, match=key):
        local.make(name, **{**params, key: bad})


@ALL
def test_unknown_parameter_is_rejected(case):
    name, params = case
    with pytest.raises(InvalidParameterError, match="unknown"):
        local.make(name, **params, not_a_parameter=1)


@ALL
def test_values_outside_the_domain_are_rejected(case):
    protocol = make(case)
    if protocol.tags.kind == "frequency":
        bad_values = [[protocol.domain_size], [-1], [0, 1, protocol.domain_size + 5]]
    else:
        lo, hi = protocol.bounds
        bad_values = [[hi + 1.0], [lo - 1e-3], [math.nan], [math.inf]]
    for values in bad_values:
        with pytest.raises(OutOfDomainError, match="values"):
            protocol.privatize(values, rng=0)
        with pytest.raises(OutOfDomainError):
            protocol.simulate(values, rng=0)


@ALL
def test_values_of_the_wrong_type_are_rejected(case):
    protocol = make(case)
    bad = [np.array([0.5, 1.5])] if protocol.tags.kind == "frequency" else [np.array(["a", "b"])]
    bad.append(np.zeros((2, 2), dtype=int))
    for values in bad:
        with pytest.raises(InvalidValueTypeError, match="values"):
            protocol.privatize(values, rng=0)


@ALL
def test_unreadable_report_batches_are_rejected(case):
    protocol = make(case)
    for reports in (np.zeros((2, 2, 2)), "reports"):
        with pytest.raises(MalformedReportError):
            protocol.aggregator().add(reports)


@ALL
def test_estimate_of_an_empty_aggregator_is_refused(case):
    protocol = make(case)
    with pytest.raises(EmptyAggregateError):
        protocol.estimate(protocol.aggregator())
