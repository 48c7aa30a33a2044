"""Every registered protocol's loss per report: exact from its channel, its composition cross-checked against
dp_accounting's (an independent implementation), and dominating every pair."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from dpdist import accounting, local
from dpdist.accounting._distributions import pair_atoms
from dpdist.accounting._zcdp import renyi
from dpdist.accounting._pld import deltas_at
from dpdist.privacy import local_guarantee
from accounting_support import dp_accounting_pld
from conformance._examples import CASES, case_id, make

STEP = 1e-3
REPORTS = 10
DELTA = 1e-6


@functools.cache  # 62 fast cases hold 37 distinct distributions (examples of one protocol at one epsilon): each once
def _peer_composition(atoms: accounting.Atoms, step: float, pessimistic: bool) -> float:
    """dp_accounting's composition of REPORTS copies of ``atoms`` (losses rounded up to the lattice, or down: below
    the exact composition)."""
    return float(dp_accounting_pld(atoms, step, pessimistic).self_compose(REPORTS).get_epsilon_for_delta(DELTA))


#: the heavier combination of a protocol with a lighter one in CASES (pckv-grr[epsilon=1.0,domain_size=3,...],
#: pckv-ue[epsilon=2.0,domain_size=2]): their channels have thousands of distinct pairs (0.3-0.5 CPU-s each to
#: enumerate), so they run in the whole suite only; every protocol keeps a case in the fast loop
HEAVY = {"pckv-grr[epsilon=3.0,domain_size=4]", "pckv-ue[epsilon=1.0,domain_size=3,padding_length=2]"}
assert all(any(case_id(c).split("[")[0] == h.split("[")[0] and case_id(c) not in HEAVY for c in CASES) for h in HEAVY)


def _params(cases):
    return [pytest.param(c, marks=pytest.mark.slow, id=case_id(c)) if case_id(c) in HEAVY else
            pytest.param(c, id=case_id(c)) for c in cases]


@pytest.mark.parametrize("case", _params(CASES))
def test_each_protocols_loss_is_stated_and_its_composition_agrees_with_dp_accountings(case):
    protocol = make(case)
    loss = accounting.protocol_loss(protocol)
    # one report: the protocol's epsilon; through a memo, guarantee_over(1) (epsilon_1), not its epsilon_inf
    one = protocol.guarantee_over(1).epsilon if protocol.tags.memoized else protocol.guarantee.epsilon
    assert loss.guarantee.epsilon == one
    assert loss.rho is not None and loss.rho <= 0.5 * one**2 * (1 + 1e-9)
    distribution = loss.distribution
    if protocol.tags.memoized or not isinstance(distribution, accounting.Atoms):
        return
    ours = accounting.epsilon_at(accounting.Composed(((distribution, REPORTS),)), DELTA, STEP)
    theirs = _peer_composition(distribution, STEP, True)
    optimistic = _peer_composition(distribution, STEP, False)  # below the exact composition
    assert abs(ours - theirs) <= REPORTS * STEP  # the stated discretization error
    assert optimistic * (1 - 1e-6) <= ours <= REPORTS * protocol.guarantee.epsilon + 1e-9


FINITE = [case for case in CASES if make(case).tags.finite_channel and not make(case).tags.memoized
          and make(case).tags.kind != "numerical"]  # numerical inputs are no finite list: the worst case of epsilon


@pytest.mark.parametrize("case", _params(FINITE))
def test_a_finite_channels_loss_dominates_every_pair_of_inputs(case):
    """delta(eps) of the stated pair at least every ordered pair's exact delta(eps), and rho at least each pair's
    D_alpha / alpha: the loss is an upper bound for every neighbouring pair, not one chosen pair."""
    protocol = make(case)
    loss = accounting.protocol_loss(protocol)
    if "exact channel" not in loss.source:
        pytest.skip(f"no enumerable channel: {loss.source}")
    channel = protocol.channel()
    epsilons = np.linspace(-protocol.guarantee.epsilon, protocol.guarantee.epsilon, 41)
    stated = deltas_at(loss.distribution, epsilons)
    orders = np.array([1.01, 1.5, 2.0, 8.0, 64.0])
    rows = channel.shape[0]
    pairs = [(a, b) for a in range(rows) for b in range(rows) if a != b]
    if len(pairs) > 400:  # large channels (key-value pairs): 400 ordered pairs drawn at random, seeded
        pairs = [pairs[i] for i in np.random.default_rng(0).choice(len(pairs), 400, replace=False)]
    checked = set()
    for first, second in pairs:
        pair = pair_atoms(channel[first], channel[second])
        if (key := (pair.losses, pair.masses, pair.infinity)) in checked:  # the same atoms: the same two checks
            continue
        checked.add(key)
        exact = np.array([pair.delta(float(e)) for e in epsilons])
        assert np.all(stated >= exact - 1e-12), (first, second)
        assert np.all(renyi(pair, orders) / orders <= loss.rho * (1 + 1e-9)), (first, second)


def test_a_memos_reports_are_one_mechanism_never_fresh_ones():
    memo = local.make("l-grr", epsilon=4.0, epsilon_1=0.5, domain_size=8)
    over = accounting.protocol_loss(memo, reports=50)
    assert over.guarantee == memo.guarantee_over(50)
    assert over.mechanisms == 1 and accounting.MEMO_ASSUMPTION in over.assumptions
    as_if_fresh = accounting.sequential([accounting.PrivacyLoss.of_guarantee(local_guarantee(0.5))] * 50)
    assert accounting.state(over, 1e-8).epsilon > accounting.state(as_if_fresh, 1e-8).epsilon  # it would undercount


def test_large_domains_are_exact_through_their_pair_classes():
    grr = accounting.protocol_loss(local.make("grr", epsilon=1.0, domain_size=100_000))
    p, q = math.e / (math.e + 99_999), 1 / (math.e + 99_999)
    assert grr.distribution.delta(0.0) == pytest.approx(p - q, rel=1e-9)
    assert "exact channel" in accounting.protocol_loss(local.make("oue", epsilon=1.0, domain_size=4096)).source
