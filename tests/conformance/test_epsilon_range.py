"""Every local protocol honours the shared EPSILON range at both ends: it runs there and its estimate is finite.

FLH and PEM used to refuse epsilon above 16.6 and 8.3 (their default hash range
``round(e^eps + 1)`` overflowed the count table) with a message telling the user
to lower ``hash_count``, a parameter they had not set.  Their default range is
now capped (:func:`dpdist.local.frequency.flh.default_hash_range`), so every
epsilon of the shared rule works with the default parameters.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpdist import local
from dpdist._validation import EPSILON
from dpdist.local._registry import registered_class
from dpdist.testing import population
from dpdist.testing._statistics import assert_epsilon_ldp

from conformance._examples import EXAMPLES

ENDS = (EPSILON.low, 2 * EPSILON.low, 8.5, 16.7, 25.0, EPSILON.high)


def _at(name: str, params: dict, epsilon: float) -> dict:
    # a protocol whose range is narrower names it in its constraint (SPL: each of up to 64 attributes gets
    # epsilon / k, so it starts at 64 times the shared low end): its own ends stand in for the shared ones
    rule = registered_class(name)._constraints["epsilon"]
    if epsilon < 2.5 * EPSILON.low:  # the low ends (1 and 2 times the shared one): the protocol's own
        epsilon *= rule.low / EPSILON.low
    params = {**params, "epsilon": epsilon}
    if "epsilon_1" in params:  # one report's budget must stay below the longitudinal one
        params["epsilon_1"] = max(EPSILON.low, epsilon / 2) if epsilon > EPSILON.low else None
    return params


# HH-ADMM's estimate at the low end runs ADMM to its iteration cap (0.65-1 CPU-s each): the full suite; the fast loop
# takes it from 8.5 up.  FLH and PEM at 16.7 and 25 fill tables near their 2**24 cells
# (0.2 to 0.34 CPU-s each): the full suite; the fast loop keeps them at 30 (0.03 CPU-s), also past both old
# refusals, and test_flh_and_pem_take_every_epsilon_with_their_default_parameters at 8.4 and 30
SLOW_ENDS = {("hh-admm", EPSILON.low), ("hh-admm", 2 * EPSILON.low), ("flh", 16.7), ("pem", 16.7), ("flh", 25.0), ("pem", 25.0)}


@pytest.mark.parametrize(
    "name, epsilon",
    [pytest.param(name, epsilon, marks=[pytest.mark.slow] if (name, epsilon) in SLOW_ENDS else [],
                  id=f"{name}-{epsilon}")
     for name in local.available() for epsilon in ENDS],
)
def test_every_protocol_runs_at_both_ends_of_the_epsilon_range(name, epsilon):
    params = _at(name, EXAMPLES[name][0], epsilon)
    if params.get("epsilon_1", 0) is None:
        pytest.skip("epsilon_1 < epsilon leaves no valid epsilon_1 at the lowest epsilon")
    protocol = local.make(name, **params)
    values = population(protocol, 200)
    estimate = protocol.estimate(protocol.aggregator().add(protocol.privatize(values, rng=1), on_invalid="raise"))
    assert np.all(np.isfinite(_numbers(estimate))), (name, epsilon)


def _numbers(estimate) -> np.ndarray:
    """The numbers an estimate states: every table of consistent marginals (CALM), else its frequencies,
    probabilities or mean."""
    if hasattr(estimate, "tables"):
        return np.concatenate([np.ravel(table) for table in estimate.tables])
    return next(np.asarray(getattr(estimate, field)) for field in ("frequencies", "probabilities", "mean")
                if getattr(estimate, field, None) is not None)


# 0.6-0.8 CPU-s each (tables of up to 2**24 cells): the fast loop takes the epsilon just past PEM's old refusal
# (PEM 8.3, FLH 16.6), the full suite 16.7, the two between and the top of the range (0.35 CPU-s; the test above
# runs both at 30 with their examples' parameters in the fast loop)
@pytest.mark.parametrize("epsilon", [8.4, pytest.param(12.0, marks=pytest.mark.slow),
                                     pytest.param(16.7, marks=pytest.mark.slow),
                                     pytest.param(20.0, marks=pytest.mark.slow), pytest.param(30.0, marks=pytest.mark.slow)])
def test_flh_and_pem_take_every_epsilon_with_their_default_parameters(epsilon):
    flh = local.make("flh", epsilon=epsilon, domain_size=1000)
    pem = local.make("pem", epsilon=epsilon, alphabet="abcdefghijklmnopqrstuvwxyz", k=20)
    for protocol in (flh, pem):
        values = population(protocol, 500) if protocol is flh else np.array(["apple", "fig", "kiwi"] * 100)
        protocol.estimate(protocol.aggregator().add(protocol.privatize(values, rng=2), on_invalid="raise"))
    assert 2 <= flh.hash_range <= 2**20 and flh.hash_count * flh.hash_range <= 2**24
    assert pem.groups * pem.oracle.hash_count * pem.oracle.hash_range <= 2**24


# the exact channels have 3 * 2**20 outputs (0.6-1 CPU-s each): the full suite, just past FLH's old refusal and at
# the top of the range (the fast loop runs FLH and PEM at 30 above, and the cap's rule below)
@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [17.0, 30.0])
def test_a_capped_hash_range_is_still_epsilon_ldp(epsilon):
    # the exact channel of small instances: the capped g changes variance only
    flh = local.make("flh", epsilon=epsilon, domain_size=4, hash_count=3, hash_prime=5)
    pem = local.make("pem", epsilon=epsilon, bits=3, k=2, step=1, hash_count=3)
    assert pem.oracle.hash_range == 2**24 // (pem.groups * 3) or pem.oracle.hash_range == 2**20
    for protocol in (flh, pem):
        assert_epsilon_ldp(protocol.channel(np.arange(min(protocol.domain_size, 8))), epsilon)


def test_the_cap_depends_only_on_epsilon_and_the_given_table():
    # below the cap nothing changes: g is OLH's round(e^eps + 1), as before
    for epsilon in (0.5, 1.0, 4.0, 8.0):
        assert local.make("flh", epsilon=epsilon, domain_size=10).hash_range == max(2, round(np.exp(epsilon) + 1))
    assert local.make("flh", epsilon=12.0, domain_size=10, hash_count=1024).hash_range == 2**24 // 1024
    assert local.make("pem", epsilon=8.0, bits=8, k=2, step=7).oracle.hash_range == 2982
