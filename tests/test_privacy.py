"""The privacy guarantee as a value (dpdist.privacy) and the releases that state it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import central, local
from dpdist.central.polynomial import PolynomialMoments
from dpdist.central.tree import TreeHistogram
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError
from dpdist.privacy import PrivacyGuarantee, local_guarantee, parallel, sequential, split
from dpdist import privacy


def central_guarantee(epsilon, delta=0.0, neighbouring="replace"):
    return PrivacyGuarantee(epsilon, delta, neighbouring, "central")


# ---------------------------------------------------------------------- the value
@pytest.mark.parametrize("epsilon", [0.0, -1.0, math.inf, math.nan, "1", True, None])
def test_epsilon_must_be_finite_and_positive(epsilon):
    with pytest.raises(InvalidPrivacyParameterError, match="'epsilon'"):
        PrivacyGuarantee(epsilon)


@pytest.mark.parametrize("delta", [-0.1, 1.0, math.nan, "0"])
def test_delta_must_lie_in_zero_one(delta):
    with pytest.raises(InvalidPrivacyParameterError, match="'delta'"):
        PrivacyGuarantee(1.0, delta)


def test_relation_and_model_are_checked():
    with pytest.raises(InvalidParameterError, match="'neighbouring'"):
        PrivacyGuarantee(1.0, neighbouring="swap")
    with pytest.raises(InvalidParameterError, match="'model'"):
        PrivacyGuarantee(1.0, model="shuffle")


def test_describe_and_to_dict():
    assert local_guarantee(1.0).describe() == "1-LDP (local: any two values of one user)"
    assert central_guarantee(0.5, 1e-6, "add-remove").describe() == "(0.5, 1e-06)-differential privacy (central, add or remove one record)"
    assert central_guarantee(2.0).to_dict() == {
        "epsilon": 2.0, "delta": 0.0, "neighbouring": "replace", "model": "central"
    }
    assert local_guarantee(1.0).pure and not central_guarantee(1.0, 1e-9).pure


# ---------------------------------------------------------------------- the accountant
def test_sequential_composition_adds_epsilons_and_deltas():
    composed = sequential([central_guarantee(0.5, 1e-6), central_guarantee(0.25, 2e-6), central_guarantee(0.25)])
    assert composed == central_guarantee(1.0, 3e-6)


def test_parallel_composition_takes_the_largest():
    assert parallel([local_guarantee(1.0), local_guarantee(2.0), local_guarantee(0.5)]) == local_guarantee(2.0)
    assert parallel([central_guarantee(1.0, 1e-6), central_guarantee(0.5, 1e-5)]) == central_guarantee(1.0, 1e-5)


def test_composition_refuses_mixed_relations_models_and_empty_input():
    with pytest.raises(InvalidParameterError, match="one neighbouring relation and model"):
        sequential([central_guarantee(1.0), central_guarantee(1.0, neighbouring="add-remove")])
    with pytest.raises(InvalidParameterError, match="one neighbouring relation and model"):
        parallel([local_guarantee(1.0), central_guarantee(1.0)])
    with pytest.raises(InvalidParameterError, match=r"The .guarantees. parameter of privacy.sequential must be one or more PrivacyGuarantee values \(a list\)\. Got \[\] instead"):
        sequential([])
    with pytest.raises(InvalidParameterError, match="PrivacyGuarantee"):
        parallel([1.0])


def test_sequential_deltas_must_stay_below_one():
    with pytest.raises(InvalidPrivacyParameterError, match="deltas"):
        sequential([central_guarantee(1.0, 0.6), central_guarantee(1.0, 0.6)])


@pytest.mark.parametrize("shares", [1, 3, 7, 80, [0.05, 0.95], [1, 2, 3]])
def test_split_composes_back_to_the_total(shares):
    total = central_guarantee(1.3, 1e-6, "add-remove")
    parts = split(total, shares)
    assert len(parts) == (shares if isinstance(shares, int) else len(shares))
    composed = sequential(parts)
    assert composed.covers(total) and total.covers(composed)
    assert all(p.neighbouring == "add-remove" and p.model == "central" for p in parts)
    if not isinstance(shares, int):
        np.testing.assert_allclose([p.epsilon for p in parts], 1.3 * np.array(shares) / sum(shares))


@pytest.mark.parametrize("shares", [0, -2, [], [1.0, -1.0], [0.0], "half", True])
def test_split_refuses_bad_shares(shares):
    with pytest.raises(InvalidParameterError, match="'shares'"):
        split(local_guarantee(1.0), shares)


# ---------------------------------------------------------------------- local protocols
@pytest.mark.parametrize("name", ["grr", "sw", "binning", "pm", "hh"])  # an oracle, EMS, a wrapped oracle, a mean, a tree
def test_local_estimates_state_the_protocols_guarantee(name):
    """A sample of estimate types; every registered protocol is checked by the conformance kit
    (``check_estimate_states_the_guarantee``)."""
    params = {"epsilon": 1.5, "domain_size": 6} if name in local.available("frequency") else {"epsilon": 1.5}
    protocol = local.make(name, **params)
    values = np.arange(6).repeat(20) if "domain_size" in params else np.linspace(0.0, 1.0, 120)
    estimate = protocol.estimate(protocol.simulate(values, rng=0))
    assert protocol.guarantee == local_guarantee(1.5)
    assert estimate.guarantee == protocol.guarantee


def test_two_phase_mean_and_variance_compose_in_parallel_over_disjoint_users():
    protocol = local.make("pm", epsilon=1.0)
    values = np.random.default_rng(0).random(4000)
    first, second = values[:2000], values[2000:]
    mean = protocol.estimate(protocol.simulate(first, rng=1))
    deviation_protocol = protocol.deviation_protocol(mean.mean)
    deviation = deviation_protocol.estimate(deviation_protocol.simulate((second - mean.mean) ** 2, rng=2))
    from dpdist.estimates import MeanVarianceEstimate

    both = MeanVarianceEstimate(mean.mean, deviation.mean, mean.mean, mean, deviation)
    assert both.guarantee == local_guarantee(1.0)  # each user answers once: not 2 epsilon


# ---------------------------------------------------------------------- central releases
X = np.random.default_rng(3).beta(2, 5, size=3000)


@pytest.mark.parametrize("neighbouring", ["replace", "add-remove"])
def test_histogram_states_its_neighbouring_relation(neighbouring):
    release = central.histogram_queries(X, 0.7, (0.0, 1.0), 16, rng=0, neighbouring=neighbouring)
    assert release.guarantee == central_guarantee(0.7, neighbouring=neighbouring)
    assert release.epsilon == 0.7


def test_budget_splits_compose_to_the_total():
    aq = central.adaptive_quantiles(X, 1.0, (0.0, 1.0), iterations=40, rng=0)
    assert aq.details["budget"]["per_iteration"] == pytest.approx(1.0 / 40)
    assert aq.guarantee.covers(central_guarantee(1.0)) and central_guarantee(1.0).covers(aq.guarantee)
    mp = central.matching_pursuit(X, 1.0, (0.0, 1.0), "legendre", 20, 3, rng=0)
    assert mp.details["budget"]["per_release"] == pytest.approx(1.0 / 6)
    assert mp.guarantee.epsilon == pytest.approx(1.0)
    tree = TreeHistogram.release(X, 1.0, (0.0, 1.0), rng=0)  # 5% of it buys the coarse profile (and noisy n)
    parts = tree.releases[0]
    assert parts["profile"]["epsilon"] == pytest.approx(0.05)
    refined = parts.get("refinement", {}).get("epsilon", 0.0)  # the heavy leaves' sub-trees, from the tree's 95%
    assert parts["tree_epsilon"] + refined == pytest.approx(0.95) and parts["tree_epsilon"] < 0.95
    assert tree.guarantee.epsilon == pytest.approx(1.0) and tree.guarantee.neighbouring == "add-remove"
    many = central.quantiles(X, 1.0, (0.0, 1.0), method="aq", rng=0)
    assert many.guarantee.epsilon == pytest.approx(1.0) and many.guarantee.neighbouring == "add-remove"


def test_sites_compose_in_parallel():
    halves = np.array_split(X, 2)
    trees = [TreeHistogram.release(part, eps, (0.0, 1.0), height=2, rng=i) for i, (part, eps) in
             enumerate(zip(halves, (0.5, 1.0)))]
    merged = trees[0].merge(trees[1])
    assert merged.guarantee == central_guarantee(1.0, neighbouring="add-remove")
    assert merged.to_distribution().guarantee == merged.guarantee
    moments = [PolynomialMoments.release(part, eps, 1e-6, (0.0, 1.0), 4, rng=i) for i, (part, eps) in
               enumerate(zip(halves, (2.0, 1.0)))]
    pooled = moments[0].merge(moments[1])
    assert pooled.guarantee == central_guarantee(2.0, 1e-6)
    assert pooled.to_distribution().guarantee == pooled.guarantee


def test_convert_states_each_guarantee_in_one_central_relation():
    from dpdist.privacy import PrivacyGuarantee, convert

    local_one = PrivacyGuarantee(1.0, 0.0, "replace", "local")
    assert convert(local_one, "replace") == PrivacyGuarantee(1.0, 0.0, "replace", "central")
    history = PrivacyGuarantee(2.5, 0.0, "history", "local", reports=3)
    assert convert(history, "replace") == PrivacyGuarantee(2.5, 0.0, "replace", "central")
    removal = PrivacyGuarantee(0.5, 1e-6, "add-remove", "central")
    assert convert(removal, "add-remove") is removal
    # group privacy of two add/remove steps: e^eps (e^eps P + delta) + delta
    doubled = convert(removal, "replace")
    assert doubled.epsilon == 1.0 and doubled.delta == pytest.approx((1 + math.exp(0.5)) * 1e-6, rel=1e-15)
    for refused in (PrivacyGuarantee(1.0, 0.0, "replace", "central"), local_one,
                    PrivacyGuarantee(1.0, 0.0, "stable", "local")):
        with pytest.raises(InvalidParameterError, match="states nothing under"):
            convert(refused, "add-remove" if refused.neighbouring != "stable" else "replace")
    with pytest.raises(InvalidParameterError, match="neighbouring"):
        convert(removal, "history")


def test_a_guarantee_per_person_composes_with_its_unit_and_converts_to_one_per_record_never_back():
    from dpdist.privacy import PrivacyGuarantee, convert, parallel, sequential

    person = PrivacyGuarantee(0.5, 1e-7, "add-remove", "central", unit="person")
    assert "per person" in person.describe() and person.to_dict()["unit"] == "person"
    assert PrivacyGuarantee.from_dict(person.to_dict()) == person
    assert "unit" not in PrivacyGuarantee(0.5, 0.0, "add-remove", "central").to_dict()  # old documents read alike
    assert sequential([person, person]).unit == parallel([person, person]).unit == "person"
    with pytest.raises(InvalidParameterError, match="one neighbouring relation and model, of one unit"):
        sequential([person, PrivacyGuarantee(0.5, 1e-7, "add-remove", "central")])
    # a record added or removed: the person's rows removed, then added back changed (two person steps)
    record = convert(person, "add-remove")
    assert record.unit == "record" and record.epsilon == 1.0
    assert record.delta == pytest.approx((1 + math.exp(0.5)) * 1e-7)
    swapped = PrivacyGuarantee(0.5, 0.0, "replace", "central", unit="person")
    assert convert(swapped, "replace") == PrivacyGuarantee(0.5, 0.0, "replace", "central")
    assert convert(person, "replace", "person").epsilon == 1.0
    with pytest.raises(InvalidParameterError, match="protects nothing of a person"):
        convert(PrivacyGuarantee(0.5, 0.0, "add-remove", "central"), "add-remove", "person")
    with pytest.raises(InvalidParameterError, match="'unit' parameter"):
        PrivacyGuarantee(0.5, 0.0, "replace", "local", unit="person")


def test_shuffled_refuses_a_protocol_name_and_takes_a_config():
    with pytest.raises(InvalidParameterError, match=r"The 'protocol' parameter of shuffled must be a local protocol "
                                                    r"\(dpdist\.local\.make\(name, .*a name alone is not enough.*"
                                                    r"Got 'grr' instead\."):
        privacy.shuffled("grr", 1000, 1e-6)
    with pytest.raises(InvalidParameterError, match=r"The 'protocol' parameter of shuffled.*Got 3 instead"):
        privacy.shuffled(3, 1000, 1e-6)
    grr = local.make("grr", epsilon=2.0, domain_size=4)
    assert privacy.shuffled(grr.config(), 1000, 1e-6) == privacy.shuffled(grr, 1000, 1e-6)  # a config is a protocol
    assert privacy.shuffled(grr, 1000, 1e-6).epsilon < 2.0


def test_sequential_parallel_split_and_convert_keep_a_shuffled_guarantees_assumptions_and_a_session_states_them():
    """privacy.sequential([s, s]) gave a plain guarantee, and a session charging it no longer named the shuffler:
    the result now carries what its inputs assume (an AssumingGuarantee), equal to the plain one."""
    from dpdist.budget import BudgetSession

    shuffled = privacy.shuffled(local.make("grr", epsilon=4.0, domain_size=8), n=1000, delta=1e-8)
    plain = PrivacyGuarantee(1.0, 0.0, "replace", "central")
    composed = [sequential([shuffled, shuffled]), parallel([shuffled, plain]), *split(shuffled, 2),
                privacy.convert(shuffled, "replace")]
    for guarantee in composed:
        assert guarantee.assumptions == shuffled.assumptions
        assert guarantee.describe().endswith("; assuming: (1) " + "; (2) ".join(shuffled.assumptions))
        session = BudgetSession(20.0, 1e-6)
        session.charge(guarantee, "relayed")
        assert "the shuffler (relay) does not collude" in session.describe()
    assert sequential([shuffled, shuffled]) == PrivacyGuarantee(2 * shuffled.epsilon, 2e-8, "replace", "central")
    assert type(sequential([plain, plain])) is PrivacyGuarantee  # a plain composition stays plain
    assert sequential([plain, plain]).describe() == "2-differential privacy (central, replace one record)"
