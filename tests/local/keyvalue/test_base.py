"""What the key-value protocols (PrivKV, PCKV-UE, PCKV-GRR) share (dpdist.local.keyvalue._base): exact epsilon of the
combined report, the frequency estimator's variance, the mean estimators, and refused input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError, InvalidValueTypeError, OutOfDomainError
from dpdist.estimates._presented import document_lines
from dpdist.local.keyvalue import KeyValueSets
from dpdist.testing._statistics import assert_epsilon_ldp, max_privacy_loss


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0, 8.0])
@pytest.mark.parametrize("name, padding", [("pckv-ue", 1), ("pckv-ue", 2), ("pckv-grr", 1), ("pckv-grr", 3)])
def test_the_combined_report_is_exactly_as_private_as_the_theorem_says(name, padding, epsilon):
    """PCKV's exact loss over every set of 3 keys equals Theorem 2 (UE) / 3 (GRR) with the realized
    probabilities, and both equal the stated epsilon: the tighter composition is spent in full."""
    protocol = local.make(name, epsilon=epsilon, domain_size=3, padding_length=padding)
    loss = max_privacy_loss(protocol.channel())
    assert loss <= epsilon * (1 + 1e-12)
    assert loss == pytest.approx(protocol.composed_epsilon(), rel=1e-9, abs=1e-12)
    assert loss == pytest.approx(epsilon, rel=1e-9)


def test_a_value_perturbation_that_keeps_more_breaks_the_exact_check():
    """The exact check can fail: PCKV-UE with p raised by 1% loses more than the stated epsilon."""
    protocol = local.make("pckv-ue", epsilon=1.0, domain_size=3, padding_length=2)
    vars(protocol)["_p"] = min(1.0, protocol._p * 1.01)
    with pytest.raises(AssertionError, match="exceeds epsilon"):
        assert_epsilon_ldp(protocol.channel(), 1.0)


def _sets_within(padding: int, n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """n users each holding at most ``padding`` keys (key k more often the higher k), values Beta(2, 5) on [-1, 1]."""
    dense = np.full((n, d), np.nan)
    weights = np.arange(1, d + 1, dtype=float)
    for slot in range(padding):
        keys = rng.choice(d, size=n, p=weights / weights.sum())
        held = rng.random(n) < 0.8
        dense[np.flatnonzero(held), keys[held]] = 2 * rng.beta(2, 5, size=int(held.sum())) - 1
    return dense


def _variance_within_three_standard_errors(name, padding, repeats, n):
    protocol = local.make(name, epsilon=1.0, domain_size=5, padding_length=padding) if name != "privkv" else \
        local.make(name, epsilon=1.0, domain_size=5)
    values = _sets_within(padding, n, 5, np.random.default_rng(7))
    truth = np.mean(~np.isnan(values), axis=0)
    generator = np.random.default_rng(11)
    sets = KeyValueSets(*_flat(values))
    estimates = np.array([protocol.estimate(protocol.simulate(sets, rng=generator)).frequencies for _ in range(repeats)])
    analytic = protocol.variance(n, truth)
    empirical = estimates.var(axis=0, ddof=1)
    standard_error = analytic * math.sqrt(2 / (repeats - 1))  # of a sample variance of near-normal estimates
    assert np.all(np.abs(empirical - analytic) < 3 * standard_error), (empirical, analytic, standard_error)
    bias_se = np.sqrt(analytic / repeats)
    assert np.all(np.abs(estimates.mean(axis=0) - truth) < 4 * bias_se)


def _flat(dense):
    held = ~np.isnan(dense)
    users, keys = np.nonzero(held)
    return keys, dense[users, keys], held.sum(axis=1)


@pytest.mark.slow  # 1,500 simulations (0.6 CPU-s), like PCKV-GRR's and PrivKV's below; the tests after it run PCKV-UE fast
def test_pckv_ue_frequency_variance_is_the_analytic_one():
    """Seeded: 1500 exact simulations of 2000 users with at most 2 pairs (padding 2); the empirical variance
    of each key's frequency is within 3 standard errors of the exact analytic variance, the mean within 4."""
    _variance_within_three_standard_errors("pckv-ue", 2, 1500, 2000)


@pytest.mark.slow
@pytest.mark.parametrize("name, padding", [("pckv-grr", 2), ("privkv", 1)])
def test_grr_and_privkv_frequency_variance_is_the_analytic_one(name, padding):
    _variance_within_three_standard_errors(name, padding, 1000, 2000)


@pytest.mark.parametrize("name", ["privkv", "pckv-ue", "pckv-grr"])
def test_frequencies_and_means_are_recovered(name):
    """One pair per user, 200000 users, epsilon 4: frequencies within 5 standard errors; PCKV's corrected means
    within 0.1 of the truth on the frequent keys, PrivKV's shrunk toward 0 (its fake values)."""
    rng = np.random.default_rng(3)
    d, n = 4, 200_000
    keys = rng.choice(d, size=n, p=[0.4, 0.3, 0.2, 0.1])
    true_means = np.array([0.6, -0.5, 0.2, 0.9])
    sets = KeyValueSets(keys, true_means[keys], np.ones(n, dtype=np.int64))
    protocol = local.make(name, epsilon=4.0, domain_size=d)
    estimate = protocol.estimate(protocol.simulate(sets, rng=5))
    truth = np.bincount(keys, minlength=d) / n
    assert np.all(np.abs(estimate.frequencies - truth) < 5 * np.sqrt(estimate.variance))
    error = np.abs(estimate.means - true_means)
    if name == "privkv":
        assert np.all(np.abs(estimate.means[:2]) < np.abs(true_means[:2]))
    else:
        assert np.all(error[:3] < 0.1), error
    assert estimate.to_dict()["kind"] == "key_value"


def test_bad_parameters_and_sets_are_refused_by_name():
    with pytest.raises(InvalidParameterError, match="padding_length") as raised:
        local.make("pckv-ue", epsilon=1.0, domain_size=4, padding_length=0)
    assert "0" in str(raised.value)
    protocol = local.make("pckv-grr", epsilon=1.0, domain_size=4, padding_length=2)
    with pytest.raises(OutOfDomainError, match=r"values.*\[0, 4\).*Got 1 value\(s\) that are keys outside it \(not shown"):
        protocol.privatize(KeyValueSets.from_pairs([{4: 0.5}]), rng=0)
    with pytest.raises(OutOfDomainError, match=r"values.*\[-1, 1\].*Got 1 value\(s\) outside it \(or NaN\) \(not shown"):
        protocol.privatize(KeyValueSets.from_pairs([[(0, 1.5)]]), rng=0)
    with pytest.raises(OutOfDomainError, match="at most once per user. A key appears twice for user 1 \\(not shown"):
        protocol.privatize(KeyValueSets.from_pairs([[(0, 0.1)], [(2, 0.1), (2, 0.3)]]), rng=0)
    with pytest.raises(InvalidValueTypeError, match=r"values.*shape \(n, 4\).*\(2, 5\)"):
        protocol.simulate(np.zeros((2, 5)), rng=0)
    with pytest.raises(InvalidValueTypeError, match="lengths"):
        protocol.privatize(KeyValueSets(np.array([0, 1]), np.array([0.1, 0.2]), np.array([1])), rng=0)


def test_sets_and_their_dense_form_give_the_same_reports():
    sets = KeyValueSets.from_pairs([{0: 0.5, 2: -1.0}, [], [(1, 0.2)], {3: 1.0, 0: -0.3, 1: 0.0}])
    for name in ("privkv", "pckv-ue", "pckv-grr"):
        protocol = local.make(name, epsilon=2.0, domain_size=4)
        assert np.array_equal(protocol.privatize(sets, rng=4), protocol.privatize(sets.to_dense(4), rng=4))
    assert len(sets[1:3]) == 2 and sets[1:3].keys.tolist() == [1]


@pytest.mark.parametrize("name, extra", [("privkv", {}), ("pckv-ue", {"padding_length": 1}),
                                         ("pckv-grr", {"padding_length": 1})])
def test_a_key_nobody_holds_gets_no_mean_and_the_estimate_says_why(name, extra):
    """Key 9 has no holder (its frequency is noise around 0); its mean was -0.99 (pckv-grr), now
    NaN, null in JSON, 'not estimated' in describe() and the document's text, with a note naming the key and the
    rule (frequency below 2 standard errors). Keys held by 12% of 20000 users keep their means."""
    rng = np.random.default_rng(12345)
    d, n = 10, 20_000
    keys = rng.choice(8, n)
    sets = KeyValueSets(keys, np.where(keys % 2 == 0, 0.6, -0.6), np.ones(n, dtype=np.int64))
    protocol = local.make(name, epsilon=2.0, domain_size=d, **extra)
    estimate = protocol.estimate(protocol.aggregator().add(protocol.privatize(sets, rng=5)))
    standard_error = np.sqrt(estimate.variance)
    held = estimate.frequencies >= 2 * standard_error
    assert held[:8].all()
    assert np.isnan(estimate.means[~held]).all() and np.isfinite(estimate.means[held]).all()
    assert estimate.details["means_withheld"] == [int(k) for k in np.flatnonzero(~held)]
    document = estimate.to_dict()
    withheld = np.flatnonzero(~held)
    assert all(document["means"][k] is None for k in withheld)
    assert withheld.size and 9 in withheld
    assert any("means not estimated" in note and "2 standard errors" in note for note in document["notes"])
    assert "not estimated" in estimate.describe()
    assert any("not estimated" in line for line in document_lines(document))
    assert isinstance(estimate.summary()["top key"], int)


def test_a_key_nobodys_mean_is_withheld_even_where_noise_makes_it_look_confident():
    """The attack's case: pckv-grr gave key 9 (no holder, frequency ~0) a mean of -0.99; the rule withholds it."""
    rng = np.random.default_rng(12345)
    d, n = 10, 20_000
    keys = rng.choice(8, n)
    keys[:30] = 8
    sets = KeyValueSets(keys, np.where(keys % 2 == 0, 0.6, -0.6), np.ones(n, dtype=np.int64))
    protocol = local.make("pckv-grr", epsilon=2.0, domain_size=d, padding_length=1)
    estimate = protocol.estimate(protocol.aggregator().add(protocol.privatize(sets, rng=5)))
    assert np.isnan(estimate.means[8:]).all()
    assert np.isfinite(estimate.means[:8]).all()


@pytest.mark.parametrize("sets, match", [
    ([{1: "x"}], r"'values'.*real numbers.*Got a value of type str \(not shown"),
    ([[(1, None)]], r"'values'.*real numbers.*Got a value of type NoneType"),
    ([[(1, [0.5])]], r"'values'.*real numbers"),
    ([5], r"'values'.*one dict or list.*Got a value of type int for user 0 \(not shown"),
    ([[5]], r"'values'.*\(key, value\) pairs"),
])
def test_from_pairs_refuses_what_is_no_number_naming_values(sets, match):
    """KeyValueSets.from_pairs([{1: "x"}]) raised a bare ValueError (numpy's); the refusal names the type, never the
    value (a user's)."""
    with pytest.raises(InvalidValueTypeError, match=match) as refused:
        KeyValueSets.from_pairs(sets)
    assert "'x'" not in str(refused.value) and "5 for" not in str(refused.value)
