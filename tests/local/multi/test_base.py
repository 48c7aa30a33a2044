"""Multi-attribute protocols (dpdist.local.multi._base and its SPL, SMP, RS+FD, RS+RFD) beyond the conformance kit.

The kit (tests/conformance, examples_multi.py) proves each one's record-level epsilon and
attribute-level guarantee on exact channels, its sampler, unbiasedness and analytic variance.
Here: the estimators against the papers' closed forms, the attribute-level loss of RS+FD
against the paper's amplification claim, the forms records may take, and bad input.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import (ClippedValuesWarning, InvalidParameterError, InvalidValueTypeError, MissingValuesError,
                           MissingValuesWarning, OutOfDomainError)
from dpdist.local.multi.rsfd import amplified_epsilon
from dpdist.testing import max_privacy_loss

_THREE = [{"name": "a", "domain_size": 4}, {"name": "b", "domain_size": 4}, {"name": "c", "domain_size": 4}]


def _records(n, rng=0):
    generator = np.random.default_rng(rng)
    return np.stack([generator.integers(0, 4, n), generator.integers(0, 4, n), generator.integers(0, 4, n)], axis=1)


# ---------------------------------------------------------------------- the papers' estimators
@pytest.mark.parametrize("protocol_name, fake", [("grr", "auto"), ("oue", "zero"), ("oue", "random"), ("sue", "random")])
def test_rsfd_estimates_are_the_papers_closed_forms(protocol_name, fake):
    attributes = [{**attribute, "protocol": protocol_name} for attribute in _THREE]
    proto = local.make("rsfd", epsilon=1.3, attributes=attributes, fake=fake)
    aggregator = proto.simulate(_records(5000), rng=1)
    estimate = proto.estimate(aggregator)
    n, k = aggregator.n, 3
    for index, name in enumerate("abc"):
        counts = proto.attribute_statistic(aggregator.statistic, index).astype(float)
        p, q = proto.inner_protocols[index].support_probabilities()
        d = 4
        if protocol_name == "grr":  # PVLDB 2023 sec. 2.3.2, RS+FD[GRR]
            expected = (counts * k * d - n * (k - 1 + q * d)) / (n * d * (p - q))
        elif fake == "zero":  # RS+FD[UE-z]
            expected = k * (counts - n * q) / (n * (p - q))
        else:  # RS+FD[UE-r]
            expected = (counts * k * d - n * (q * d + (p - q) * (k - 1) + q * d * (k - 1))) / (n * d * (p - q))
        np.testing.assert_allclose(estimate[name].frequencies, expected, rtol=1e-12, atol=1e-12)


def test_rsrfd_estimates_are_eqs_6_and_7():
    priors = [[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], [0.7, 0.1, 0.1, 0.1]]
    attributes = [{**_THREE[0], "protocol": "grr"}, {**_THREE[1], "protocol": "oue"}, {**_THREE[2], "protocol": "sue"}]
    proto = local.make("rsrfd", epsilon=0.8, attributes=attributes, priors=priors)
    aggregator = proto.simulate(_records(4000, rng=3), rng=2)
    estimate = proto.estimate(aggregator)
    n, k = aggregator.n, 3
    for index, name in enumerate("abc"):
        counts = proto.attribute_statistic(aggregator.statistic, index).astype(float)
        p, q = proto.inner_protocols[index].support_probabilities()
        prior = proto.realized_priors[index]
        assert np.allclose(prior, priors[index], atol=2**-31)  # realized on the 2^-32 grid
        if index == 0:  # eq. (6)
            expected = (k * counts - n * (q + (k - 1) * prior)) / (n * (p - q))
        else:  # eq. (7)
            expected = (k * counts - n * (q + (p - q) * (k - 1) * prior + q * (k - 1))) / (n * (p - q))
        np.testing.assert_allclose(estimate[name].frequencies, expected, rtol=1e-12, atol=1e-12)


def test_the_estimates_are_close_to_the_truth_at_large_n():
    records = _records(200_000, rng=4)
    truth = [np.bincount(records[:, j], minlength=4) / records.shape[0] for j in range(3)]
    for name in ("spl", "smp", "rsfd"):
        proto = local.make(name, epsilon=2.0, attributes=_THREE)
        estimate = proto.estimate(proto.simulate(records, rng=5))
        for j, attribute in enumerate("abc"):
            error = np.abs(estimate[attribute].frequencies - truth[j])
            # within 6 standard errors of the analytic variance (Bonferroni over 12 items: far below 1e-6)
            assert np.all(error < 6 * estimate[attribute].standard_error), (name, attribute, error)


# ---------------------------------------------------------------------- privacy
def _attribute_loss_by_enumeration(proto) -> float:
    sizes = [a.domain_size for a in proto.attributes]
    grid = np.stack([g.ravel() for g in np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij")], axis=1)
    log_channel = np.log(proto.channel(grid))
    worst = 0.0
    for j in range(grid.shape[1]):
        _, group = np.unique(np.delete(grid, j, axis=1), axis=0, return_inverse=True)
        for label in np.unique(group):
            rows = log_channel[group.ravel() == label]
            worst = max(worst, float(np.max(rows.max(axis=0) - rows.min(axis=0))))
    return worst


def test_rsfd_at_the_papers_amplified_budget_meets_the_claim_only_for_equal_domains():
    equal = local.make("rsfd", epsilon=amplified_epsilon(1.0, 2), attributes=[
        {"name": "a", "domain_size": 3, "protocol": "grr"}, {"name": "b", "domain_size": 3, "protocol": "grr"}])
    assert equal.attribute_guarantee.epsilon == pytest.approx(1.0, abs=1e-12)
    assert _attribute_loss_by_enumeration(equal) == pytest.approx(1.0, abs=1e-9)
    # a record changed in every attribute: the report's ratio is e^eps', not e^1 (amplification needs one change)
    assert max_privacy_loss(equal.channel()) == pytest.approx(equal.epsilon, rel=1e-9)
    assert equal.epsilon == pytest.approx(math.log(2 * (math.e - 1) + 1))
    unequal = local.make("rsfd", epsilon=amplified_epsilon(1.0, 2), attributes=[
        {"name": "a", "domain_size": 2, "protocol": "grr"}, {"name": "b", "domain_size": 9, "protocol": "grr"}])
    exact = _attribute_loss_by_enumeration(unequal)
    assert exact > 1.1 and unequal.attribute_guarantee.epsilon == pytest.approx(exact, rel=1e-9)


def test_a_prior_with_a_zero_leaves_no_amplification():
    proto = local.make("rsrfd", epsilon=1.0, attributes=_THREE[:2], priors=[[0.5, 0.5, 0.0, 0.0], None])
    assert proto.attribute_guarantee.epsilon == pytest.approx(1.0, rel=1e-12)
    assert _attribute_loss_by_enumeration(proto) == pytest.approx(1.0, rel=1e-9)


def test_spl_and_smp_state_their_guarantees():
    spl = local.make("spl", epsilon=1.5, attributes=_THREE)
    smp = local.make("smp", epsilon=1.5, attributes=_THREE)
    assert spl.attribute_guarantee.epsilon == pytest.approx(0.5)
    assert smp.attribute_guarantee.epsilon == 1.5
    assert spl.guarantee.neighbouring == smp.guarantee.neighbouring == "replace"
    assert "differing in one attribute" in spl.attribute_guarantee.describe()
    estimate = spl.estimate(spl.simulate(_records(300), rng=0))
    assert estimate.guarantee == spl.guarantee and estimate["a"].guarantee == spl.guarantee
    assert estimate["a"].details["attribute_epsilon"] == pytest.approx(0.5)
    assert estimate.details["attribute_guarantee"] == spl.attribute_guarantee


# ---------------------------------------------------------------------- records
def test_every_form_of_records_gives_the_same_reports():
    pandas = pytest.importorskip("pandas")
    attributes = [{"name": "colour", "labels": ["red", "green"]}, {"name": "age", "bounds": [0, 100], "protocol": "pm"}]
    proto = local.make("spl", epsilon=1.0, attributes=attributes)
    colours, ages = ["red", "green", "green"], [10.0, 55.5, 99.0]
    rows = proto.privatize(np.array([[0, 10.0], [1, 55.5], [1, 99.0]]), rng=7)
    structured = np.array(list(zip(colours, ages)), dtype=[("colour", "U5"), ("age", float)])
    for form in (
        {"colour": colours, "age": ages},
        pandas.DataFrame({"age": ages, "colour": colours}),
        structured,
        np.array([["red", 10.0], ["green", 55.5], ["green", 99.0]], dtype=object),
    ):
        np.testing.assert_array_equal(proto.privatize(form, rng=7), rows)
    # a column the schema does not name is refused, not left out: select the schema's columns
    whole = pandas.DataFrame({"age": ages, "colour": colours, "other": [1, 2, 3]})
    with pytest.raises(InvalidValueTypeError, match=r"unknown column\(s\) \['other'\]"):
        proto.privatize(whole, rng=7)
    np.testing.assert_array_equal(proto.privatize(whole[proto.attribute_names], rng=7), rows)


def test_numerical_values_are_clipped_or_refused():
    proto = local.make("smp", epsilon=1.0, attributes=[{"name": "x", "bounds": [0, 1], "protocol": "pm"}, _THREE[0]])
    with pytest.warns(ClippedValuesWarning, match="2 numerical value"):
        clipped = proto.privatize({"x": [2.0, -1.0, 0.5], "a": [0, 1, 2]}, rng=1)
    np.testing.assert_array_equal(clipped, proto.privatize({"x": [1.0, 0.0, 0.5], "a": [0, 1, 2]}, rng=1))
    with pytest.raises(OutOfDomainError, match="attribute 'x'"):
        proto.privatize({"x": [2.0], "a": [0]}, clip=False)


def test_a_record_with_a_missing_value_is_refused_or_left_out_as_asked():
    """NaN was clipped to the lower bound and randomized (a record with no value reported as one at lo)."""
    proto = local.make("smp", epsilon=1.0, attributes=[{"name": "x", "bounds": [0, 1], "protocol": "pm"}, _THREE[0]])
    records = {"x": [2.0, np.nan, 0.5], "a": [0, None, 2]}
    with pytest.raises(MissingValuesError, match=r"has 1 record\(s\) with a missing value .* among 3"):
        proto.privatize(records, rng=1)
    with pytest.warns(MissingValuesWarning, match="1 missing value"), pytest.warns(ClippedValuesWarning):
        kept = proto.privatize(records, rng=1, missing="drop")
    np.testing.assert_array_equal(kept, proto.privatize({"x": [1.0, 0.5], "a": [0, 2]}, rng=1))
    with pytest.raises(InvalidParameterError, match="'missing' parameter .* 'refuse' .* or 'drop'"):
        proto.simulate(records, rng=1, missing=0.0)


def test_bad_records_name_what_is_wrong():
    proto = local.make("smp", epsilon=1.0, attributes=_THREE)
    with pytest.raises(InvalidValueTypeError, match="no column \\['c'\\]"):
        proto.privatize({"a": [0], "b": [1]})
    with pytest.raises(InvalidValueTypeError, match="shape \\(n, 3\\)"):
        proto.privatize(np.zeros((4, 2)))
    with pytest.raises(OutOfDomainError, match="attribute 'b'"):
        proto.privatize([[0, 4, 0]])


def test_bad_schemas_and_settings_are_refused():
    with pytest.raises(InvalidParameterError, match="categorical attributes"):
        local.make("rsfd", epsilon=1.0, attributes=[{"name": "x", "bounds": [0, 1]}])
    with pytest.raises(InvalidParameterError, match="'fake' parameter"):
        local.make("rsfd", epsilon=1.0, fake="zero", attributes=[{"name": "a", "domain_size": 3, "protocol": "grr"}])
    with pytest.raises(InvalidParameterError, match="domain_size=3 probabilities"):
        local.make("rsrfd", epsilon=1.0, attributes=[{"name": "a", "domain_size": 3}], priors=[[0.5, 0.5]])
    with pytest.raises(InvalidParameterError, match="attribute 'a' is categorical"):
        local.make("spl", epsilon=1.0, attributes=[{"name": "a", "domain_size": 3, "protocol": "sw"}])
    with pytest.raises(InvalidParameterError, match="attribute 'a'.*bins"):
        local.make("spl", epsilon=1.0, attributes=[{"name": "a", "bounds": [0, 1], "protocol": "binning", "options": {"bins": 1}}])
    with pytest.raises(InvalidParameterError, match="'attributes' parameter"):
        local.make("smp", epsilon=1.0, attributes=[{"name": "payload", "domain_size": 3}])


def test_an_attribute_no_user_sampled_has_no_interval():
    proto = local.make("smp", epsilon=1.0, attributes=[{"name": f"a{i}", "domain_size": 2} for i in range(40)])
    estimate = proto.estimate(proto.simulate(np.zeros((5, 40), dtype=int), rng=0))
    empty = [name for name, counts in estimate.details["attribute_counts"].items() if counts == 0]
    assert empty and not estimate[empty[0]].has_intervals
    assert "no report sampled" in estimate[empty[0]].details["no_interval"]


def test_the_estimate_table_stacks_the_attributes_tables():
    attributes = [_THREE[0], {"name": "x", "bounds": [0, 1], "protocol": "binning", "options": {"bins": 5}},
                  {"name": "m", "bounds": [0, 1], "protocol": "pm"}]
    proto = local.make("spl", epsilon=3.0, attributes=attributes)
    estimate = proto.estimate(proto.simulate({"a": [0, 1] * 50, "x": [0.1, 0.9] * 50, "m": [0.5] * 100}, rng=0))
    table = estimate.table()
    assert list(table["attribute"]) == ["a"] * 4 + ["x"] * 5 + ["m"]
    assert {"attribute", "frequency", "probability", "mean"} <= set(table)  # the attributes' own columns
    assert np.isnan(table["mean"][:9]).all() and np.isfinite(table["mean"][9])
    assert "m: mean" in estimate.summary() and estimate.frequencies.shape == (4,)


# ---------------------------------------------------------------------- the chooser


