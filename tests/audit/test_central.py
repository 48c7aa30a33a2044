"""Audits on neighbouring datasets: central releases (record- and person-level) and whole-column mechanisms."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpdist import audit
from dpdist.errors import InvalidParameterError


def geometric_count(epsilon):
    """A count plus two-sided geometric noise: epsilon-DP for adding or removing one record (integers: no float)."""
    keep = 1 - math.exp(-epsilon)

    def release(data, rng):
        return len(data) + rng.geometric(keep) - rng.geometric(keep)

    return release


@pytest.mark.slow  # 0.39 CPU-s: a seeded audit
def test_a_correct_count_is_not_flagged_and_the_relation_is_stated():
    result = audit.central(geometric_count(1.0), 1.0, domain=(0.0, 1.0), samples=20_000, rng=0)
    assert result.verdict == "no violation found" and 0.7 < result.certified_epsilon <= 1.0
    assert result.neighbouring == "add or remove one record" and "neighbouring: add or remove one record" in result.text()
    assert "added vs without it" in result.witness["datasets"]


def test_a_count_with_too_little_noise_is_certified_to_violate():
    result = audit.central(geometric_count(3.0), 1.0, domain=(0.0, 1.0), samples=20_000, rng=1)
    assert result.violates and 1.0 < result.certified_epsilon <= 3.0


def test_a_per_person_release_is_audited_on_person_neighbours():
    """One person holds up to 5 records: the count at epsilon 1 per record is 5 per person.  The audit on person-level
    neighbours flags it against 1 and finds nothing against 5."""
    background = np.zeros(20)
    person = audit.add_remove([background], [np.zeros(5)], unit="person")
    assert person.relation == "add or remove one person's records (up to 5 records)"
    flagged = audit.central(geometric_count(1.0), 1.0, person, samples=20_000, rng=2)
    kept = audit.central(geometric_count(1.0), 5.0, person, samples=20_000, rng=2)
    assert flagged.violates and flagged.certified_epsilon > 2.0
    assert kept.verdict == "no violation found" and "person" in kept.neighbouring


@pytest.mark.slow  # 1.0 CPU-s: a seeded audit
def test_an_approximate_claim_subtracts_delta():
    """A count that leaks its dataset w.p. 0.01 (outputs -1 only when the extra record is present): (1, 0.02)-DP
    holds, (1, 0) does not."""
    def leaky(data, rng):
        noisy = geometric_count(1.0)(data, rng)
        return -1 if len(data) == 16 and rng.random() < 0.01 else noisy

    assert audit.central(leaky, 1.0, domain=(0.0, 1.0), samples=20_000, rng=3).violates
    assert not audit.central(leaky, 1.0, domain=(0.0, 1.0), delta=0.02, samples=20_000, rng=3).violates


def k_ary_rr_with_data_domain(column, rng, epsilon=1.0):
    """trasgoDP 2.1.0's k-ary randomized response: its categories are np.unique of the column."""
    categories = np.unique(column)
    k = len(categories)
    flip = rng.random(len(column)) < k / (math.exp(epsilon) + k - 1)
    return np.where(flip, categories[rng.integers(0, k, len(column))], column)


def k_ary_rr_with_public_domain(column, rng, d=8, epsilon=1.0):
    column = np.asarray(column)
    keep = math.exp(epsilon) / (math.exp(epsilon) + d - 1)
    return np.where(rng.random(len(column)) < keep, column, (column + rng.integers(1, d, len(column))) % d)


def test_a_domain_taken_from_the_column_is_certified_on_a_unique_value():
    result = audit.column(k_ary_rr_with_data_domain, 1.0, 8, rng=0)
    assert result.violates and result.certified_epsilon > 3.0
    assert "0 unique" in result.witness["datasets"] and result.neighbouring.startswith("replace one record")


@pytest.mark.slow  # 0.44 CPU-s: a seeded audit
def test_a_per_record_randomizer_on_a_column_is_not_flagged():
    result = audit.column(k_ary_rr_with_public_domain, 1.0, 8, rng=0)
    assert result.verdict == "no violation found" and result.certified_epsilon <= 1.0


def test_bounds_taken_from_the_column_are_certified_on_an_extreme_value():
    """Laplace noise scaled to the column's own range (max - min): one extreme record widens every record's noise."""
    def scaled_by_data(column, rng):
        column = np.asarray(column, dtype=np.float64)
        scale = max(column.max() - column.min(), 1e-9)
        return np.round(column + rng.laplace(0.0, scale, len(column)), 3)

    result = audit.column(scaled_by_data, 1.0, (0.0, 1.0), float_bits=False, rng=0)
    assert result.violates


def test_adversarial_neighbours_differ_in_one_record():
    for domain in (8, (0.0, 1.0)):
        for relation in ("replace-one", "add-remove"):
            for pair in audit.adversarial(domain, 10, relation).pairs:
                first, second = np.sort(pair.dataset), np.sort(pair.neighbour)
                if relation == "replace-one":
                    assert len(first) == len(second) == 10 and np.count_nonzero(pair.dataset != pair.neighbour) == 1
                else:  # a background of 9, and a count near 0: one record against two
                    assert len(first) == len(second) + 1 and len(second) in (9, 1)
                    assert np.array_equal(np.sort(pair.dataset[:-1]), second)


@pytest.mark.parametrize("kwargs, named", [({}, "'domain'"), ({"domain": "x"}, "'domain'"),
                                           ({"neighbours": 3}, "'neighbours'")])
def test_central_audits_refuse_what_they_cannot_compare(kwargs, named):
    with pytest.raises(InvalidParameterError, match=named):
        audit.central(geometric_count(1.0), 1.0, **kwargs)


def _deciles(per_person: bool):
    """Deciles by AQ of a dataset of (person id, value) rows, per person (each person's rows bounded to 2) or per row."""
    from dpdist import central

    def release(dataset, rng):
        dataset = np.asarray(dataset, dtype=np.float64).reshape(-1, 2)
        unit = {"privacy_id": dataset[:, 0], "max_contributions": 2} if per_person else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return central.quantiles(dataset[:, 1], epsilon=1.0, bounds=(0.0, 1.0), method="aq", rng=rng, **unit).values

    return release


@pytest.mark.slow
def test_deciles_per_person_pass_the_audit_on_person_neighbours_where_deciles_per_row_are_flagged():
    """One person holds 300 rows at the top among 300 persons of one row.  On neighbours that add or remove
    the person, the deciles bounded to 2 rows per person at epsilon 1 per person show no violation of 1; the same
    release per row at epsilon 1 per row is certified far above 1 (the person moves every decile)."""
    background = np.column_stack([np.arange(300), np.linspace(0.05, 0.6, 300)])
    person = np.column_stack([np.full(300, 999), np.full(300, 0.97)])
    neighbours = audit.add_remove([background], [person], unit="person")
    kept = audit.central(_deciles(True), 1.0, neighbours, samples=4_000, rng=4)
    flagged = audit.central(_deciles(False), 1.0, neighbours, samples=4_000, rng=4)
    assert kept.verdict == "no violation found", kept.text()
    assert flagged.violates and flagged.certified_epsilon > 2.0, flagged.text()
