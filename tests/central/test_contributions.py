"""Central releases per person: every release takes ``privacy_id`` and ``max_contributions``, bounds
each person's rows by a uniformly random choice, runs at epsilon/k per row and states its guarantee per person."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from dpdist import central
from dpdist.central._contributions import AutoBound, PrivacyUnit, bounded_rows, group_stated, person_codes
from dpdist.errors import (
    ContributionBoundWarning,
    InvalidParameterError,
    InvalidValueTypeError,
    MissingValuesError,
)
from dpdist.privacy import PrivacyGuarantee
from dpdist.testing._central import _median_log_law

from central_releases import REPLACE, RELEASES, check_result as _check_result, output as _output

#: five persons: 0 holds 12 rows, the others 1, 2, 3 and 4
IDS = np.repeat(np.arange(5), [12, 1, 2, 3, 4])
X = np.random.default_rng(4).beta(2, 5, IDS.size)


def _quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ContributionBoundWarning)
        return call()


# ---------------------------------------------------------------------- the bounding
@pytest.mark.slow  # a Monte Carlo of 20,000 boundings (0.5 CPU-s); the next test bounds rows in the fast loop
def test_each_person_keeps_a_uniformly_random_choice_of_rows_not_the_first_ones():
    """A person with 5 rows and k = 2: each of the 10 pairs of rows is kept with probability 1/10 (chi-square over
    20,000 seeded draws), whatever the rows' order; a person with 2 rows keeps both."""
    codes = np.array([1, 0, 1, 1, 2, 1, 0, 1])  # person 1: rows 0, 2, 3, 5, 7; person 0: rows 1, 6; person 2: row 4
    rng = np.random.default_rng(11)
    pairs = {pair: i for i, pair in enumerate(itertools.combinations([0, 2, 3, 5, 7], 2))}
    seen = np.zeros(len(pairs))
    for _ in range(20_000):
        kept = bounded_rows(codes, 2, rng)
        assert {1, 4, 6} <= set(kept.tolist()) and kept.size == 5 and np.all(np.diff(kept) > 0)
        seen[pairs[tuple(int(r) for r in kept if codes[r] == 1)]] += 1
    assert stats.chisquare(seen).pvalue > 1e-3
    assert seen.min() > 1_800  # the first two rows (0, 2) are not favoured: every pair near 2,000


def test_bounding_keeps_every_row_of_a_person_within_the_bound_and_k_of_the_others():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 300, 5_000)
    for k in (1, 3, 17, 10_000):
        kept = bounded_rows(codes, k, rng)
        np.testing.assert_array_equal(np.bincount(codes[kept], minlength=300), np.minimum(np.bincount(codes, minlength=300), k))


def test_person_codes_take_ids_of_any_one_type():
    for ids in ([3, 1, 3], [3.5, 1.0, 3.5], ["b", "a", "b"], [b"b", b"a", b"b"],
                np.array(["2024-01-02", "2024-01-01", "2024-01-02"], dtype="datetime64[D]"),
                np.array(["b", "a", "b"], dtype=object)):
        np.testing.assert_array_equal(person_codes("f", ids, 3), [1, 0, 1])


# ---------------------------------------------------------------------- the statement, release by release
@pytest.mark.parametrize("name", sorted(set(RELEASES) - {"unbounded_quantile"}))
def test_every_release_states_its_guarantee_per_person_at_the_epsilon_given(name):
    result = _quiet(lambda: RELEASES[name](X, 1.0, privacy_id=IDS, max_contributions=3))
    _check_result(result)
    guarantee = result.guarantee
    assert guarantee.unit == "person" and guarantee.epsilon == pytest.approx(1.0, rel=1e-9)
    assert "per person" in guarantee.describe()
    assert guarantee.neighbouring == ("replace" if name in REPLACE or name == "tree_cdf replace" else "add-remove")
    unit = result.details["privacy_unit"]
    assert unit["max_contributions"] == 3 and unit["record_epsilon"] == pytest.approx(1.0 / 3)
    assert any("privacy unit: a person" in note for note in result.notes())
    if "polynomial" in name and "secure" not in name:  # (epsilon, delta) per person from (epsilon/k, delta/S_k)
        assert guarantee.delta == pytest.approx(1e-6, rel=1e-9)


B = (0.0, 1.0)
#: releases called with a generator: name -> f(x, epsilon, delta, rng, **unit)
SEEDED = {
    "histogram_queries add-remove": lambda x, e, d, g, **u: central.histogram_queries(
        x, e, B, rng=g, neighbouring="add-remove", **u),
    "adaptive_quantiles": lambda x, e, d, g, **u: central.adaptive_quantiles(x, e, B, rng=g, **u),
    "matching_pursuit": lambda x, e, d, g, **u: central.matching_pursuit(x, e, B, rng=g, **u),
    "polynomial_projection": lambda x, e, d, g, **u: central.polynomial_projection(x, e, d, B, rng=g, **u),
    "cdf": lambda x, e, d, g, **u: central.cdf(x, e, B, rng=g, **u),
    "quantiles tree": lambda x, e, d, g, **u: central.quantiles(x, [0.25, 0.5], epsilon=e, bounds=B, rng=g, **u),
    "quantiles aq": lambda x, e, d, g, **u: central.quantiles(x, epsilon=e, bounds=B, rng=g, method="aq",
                                                               interval_share=0.3, **u),
    "quantiles jointexp": lambda x, e, d, g, **u: central.quantiles(x, [0.2, 0.7], epsilon=e, bounds=B, rng=g,
                                                                     method="jointexp", **u),
    "unbounded_quantile": lambda x, e, d, g, **u: central.unbounded_quantile(x, e, rng=g, **u),
}


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_a_release_per_person_is_the_release_per_row_at_epsilon_over_k_on_the_rows_kept(name):
    """The generator first draws the choice of rows, then the release's noise: the release per person equals the
    per-row release at epsilon/k (delta/S_k) on the rows kept, number for number."""
    k, epsilon, delta = 3, 1.0, 1e-6
    per_person = _quiet(lambda: SEEDED[name](X, epsilon, delta, np.random.default_rng(5), privacy_id=IDS,
                                             max_contributions=k))
    generator = np.random.default_rng(5)
    kept = X[bounded_rows(person_codes("f", IDS, IDS.size), k, generator)]
    chained = math.fsum(math.exp(i * epsilon / k) for i in range(k))
    per_row = SEEDED[name](kept, epsilon / k, delta / chained, generator)
    np.testing.assert_array_equal(_output(per_person), _output(per_row))


def test_the_noise_scale_is_the_sensitivity_times_k_over_epsilon():
    for k in (1, 4, 9):
        release = _quiet(lambda: central.histogram_queries(X, 2.0, (0.0, 1.0), bins=8, rng=0, neighbouring="add-remove",
                                                           privacy_id=IDS, max_contributions=k))
        assert release.details["noise_scale"] == pytest.approx(k * 1.0 / 2.0)


def test_the_rows_left_out_are_counted_for_the_holder_of_the_data_and_in_no_release():
    with pytest.warns(ContributionBoundWarning) as warned:
        release = central.quantiles(X, [0.5], epsilon=1.0, bounds=(0, 1), privacy_id=IDS, max_contributions=2, rng=0)
    (said,) = [w.message for w in warned]
    assert said.count == (12 - 2) + (3 - 2) + (4 - 2) and str(said.count) not in str(said)
    assert str(said.count) not in release.to_json()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ContributionBoundWarning)  # nothing left out: nothing said
        central.quantiles(X, [0.5], epsilon=1.0, bounds=(0, 1), privacy_id=IDS, max_contributions=12, rng=0)
    with pytest.warns(ContributionBoundWarning, match="under replace neighbours the persons' numbers of rows are "
                                                      "public and n is the rows kept"):  # never "in no release" alone
        replaced = central.histogram_queries(X, 1.0, (0, 1), privacy_id=IDS, max_contributions=2, rng=0)
    assert replaced.n == IDS.size - 13 and "follows from n" in " ".join(replaced.notes())


def test_a_missing_value_dropped_takes_its_row_id_with_it():
    x = X.copy()
    x[0] = np.nan  # one of person 0's rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dropped = central.cdf(x, 1.0, (0, 1), rng=2, missing="drop", privacy_id=IDS, max_contributions=3)
        without = central.cdf(X[1:], 1.0, (0, 1), rng=2, privacy_id=IDS[1:], max_contributions=3)
    np.testing.assert_array_equal(dropped.cumulative, without.cumulative)


# ---------------------------------------------------------------------- refusals, by name
BAD_BOUNDS = [0, -1, 2.5, "3", True, None, [2]]


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_bad_units_are_refused_by_name_before_anything_is_released(name):
    release = RELEASES[name]
    with pytest.raises(InvalidParameterError, match="'privacy_id' argument .* one id per value .* another number of ids"):
        release(X, 1.0, privacy_id=IDS[:-1], max_contributions=2)
    for bound in BAD_BOUNDS:
        with pytest.raises(InvalidParameterError, match="'max_contributions'"):
            release(X, 1.0, privacy_id=IDS, max_contributions=bound) if bound is not None else \
                release(X, 1.0, privacy_id=IDS)
    with pytest.raises(InvalidParameterError, match="'max_contributions' parameter of .* must be None when privacy_id=None .*needs 'privacy_id'.*Got 2"):
        release(X, 1.0, max_contributions=2)
    with pytest.raises(InvalidValueTypeError, match="'privacy_id' argument .* 1-D"):
        release(X, 1.0, privacy_id=IDS.reshape(-1, 1).repeat(2, 1), max_contributions=2)


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_a_missing_id_is_refused_by_name_with_its_count_for_the_curator_only(name):
    for ids in (np.where(IDS == 0, np.nan, IDS.astype(float)), np.where(IDS == 0, None, IDS.astype(object))):
        with pytest.raises(MissingValuesError, match="'privacy_id' argument .* missing ids") as refused:
            RELEASES[name](X, 1.0, privacy_id=ids, max_contributions=2)
        assert refused.value.count == 12 and "12" not in str(refused.value)


def test_ids_of_types_that_do_not_compare_are_refused_by_name():
    with pytest.raises(InvalidValueTypeError, match="'privacy_id' argument .* one kind"):
        central.cdf([0.1, 0.2], 1.0, (0, 1), privacy_id=np.array([1, "a"], dtype=object), max_contributions=1)
    with pytest.raises(InvalidValueTypeError, match="'privacy_id' argument .* one type.* do not compare"):
        central.cdf([0.1, 0.2], 1.0, (0, 1), privacy_id=[{"a": 1}, {"b": 2}], max_contributions=1)


@pytest.mark.parametrize("ids", [[1, "1", 2.0], ["a", b"a", "b"], [1, "x"], np.array([2, "2"], dtype=object),
                                 [np.int64(1), np.str_("1")]])
def test_ids_of_several_kinds_are_refused_not_converted(ids):
    # NumPy makes [1, "1", 2.0] the strings "1", "1", "2.0": persons 1 and "1" were one (codes [0, 0, 1]), silently
    with pytest.raises(InvalidValueTypeError, match=r"'privacy_id' argument of f must hold ids of one kind.*numbers "
                                                    r"\(.*\), strings, bytes.*Got ids of several kinds: "):
        person_codes("f", ids, len(ids))


def test_numbers_are_one_person_by_exact_value_strings_exactly():
    # ints and integral floats: one person per value; never rounded through float64 (2**53 + 1 is not 2.0**53)
    np.testing.assert_array_equal(person_codes("f", [1, 1.0, True, 2, 2.5], 5), [0, 0, 0, 1, 2])
    np.testing.assert_array_equal(person_codes("f", [2**53 + 1, 2.0**53, 2**53], 3), [1, 0, 0])
    with pytest.raises(MissingValuesError):
        person_codes("f", [1, None, 2.0], 3)
    # dates are instants: one day in two units is one person
    same_day = [np.datetime64("2024-01-01", "D"), np.datetime64("2024-01-01T00:00:00", "s"), np.datetime64("2024-01-02")]
    np.testing.assert_array_equal(person_codes("f", same_day, 3), [0, 0, 1])
    # strings are compared exactly: case and spaces make other persons (the caller normalises)
    np.testing.assert_array_equal(person_codes("f", ["alice", " alice", "Alice", "alice"], 4), [2, 0, 1, 2])


# ---------------------------------------------------------------------- group privacy, the bound chosen privately
def test_group_privacy_chains_epsilon_and_delta_over_the_k_rows_of_a_person():
    record = PrivacyGuarantee(0.25, 1e-8, "add-remove", "central")
    stated = group_stated(record, 4)
    assert stated.epsilon == 1.0 and stated.unit == "person"
    assert stated.delta == pytest.approx(1e-8 * sum(math.exp(0.25 * i) for i in range(4)))
    unit = PrivacyUnit(4)
    epsilon, delta = unit.record_budget(1.0, 1e-6)
    assert unit.stated(PrivacyGuarantee(epsilon, delta, "replace", "central")).delta == pytest.approx(1e-6)


def test_a_bound_chosen_privately_is_near_the_quantile_and_charged_to_the_same_budget():
    rng = np.random.default_rng(7)
    counts = rng.geometric(0.2, 20_000)  # mean 5; 90% of persons hold at most 11 rows
    ids = np.repeat(np.arange(counts.size), counts)
    x = rng.random(ids.size)
    release = _quiet(lambda: central.quantiles(x, [0.5], epsilon=1.0, bounds=(0, 1), privacy_id=ids,
                                               max_contributions="auto", rng=3))
    unit = release.details["privacy_unit"]
    assert unit["chosen"] == {"quantile": 0.9, "share": 0.1, "largest": 1024, "epsilon": 0.1}
    assert 8 <= unit["max_contributions"] <= 16
    assert unit["record_epsilon"] == pytest.approx(0.9 / unit["max_contributions"])
    assert release.guarantee.epsilon == pytest.approx(1.0) and release.guarantee.unit == "person"
    custom = _quiet(lambda: central.cdf(x, 1.0, (0, 1), privacy_id=ids, rng=3,
                                        max_contributions=AutoBound(quantile=0.5, share=0.2)))
    assert 3 <= custom.details["privacy_unit"]["max_contributions"] <= 6
    with pytest.raises(InvalidParameterError, match="'quantile' parameter of AutoBound"):
        AutoBound(quantile=1.0)


def _spread_warnings(counts, seed):
    ids = np.repeat(np.arange(counts.size), counts)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        central.count(ids, 1.0, privacy_id=ids, max_contributions="auto", rng=seed)
    return [w.message for w in caught if isinstance(w.message, ContributionBoundWarning) and "2x" in str(w.message)]


def test_auto_warns_the_holder_when_its_draw_is_often_far_from_the_quantile_and_only_then():
    """At epsilon 1 (0.1 for the bound) the draw among the ~40 candidates needs about 2,000 persons: at 300 persons of
    geometric counts (mean 4) most of its mass lies past 2x the quantile, and with one row per person the candidates
    from 1 up tie however many persons there are; at 20,000 persons it lands near the quantile and says nothing."""
    rng = np.random.default_rng(11)
    few = _spread_warnings(rng.geometric(0.25, 300), 1)
    assert len(few) == 1 and few[0].count == 300 and "auto" in str(few[0]) and "holder of the data" in str(few[0])
    assert len(_spread_warnings(np.ones(5_000, dtype=np.int64), 2)) == 1
    assert _spread_warnings(rng.geometric(0.25, 20_000), 3) == []


@pytest.mark.parametrize("name", sorted(set(RELEASES) - {"unbounded_quantile"}))
def test_auto_under_replace_reads_the_public_counts_for_no_budget_and_under_add_remove_publishes_no_count(name):
    # under replace each person's number of rows is public (the relation keeps it: rows replaced by as many), so
    # the bound is the exact 0.9-quantile of the counts 1, 2, 3, 4, 12 (12) and the whole epsilon goes to the release;
    # before, 10% of it was spent choosing what was public
    release = _quiet(lambda: RELEASES[name](X, 1.0, privacy_id=IDS, max_contributions="auto"))
    unit, relation = release.details["privacy_unit"], release.guarantee.neighbouring
    assert release.guarantee.epsilon == pytest.approx(1.0) and release.guarantee.unit == "person"
    if name in REPLACE:
        assert relation == "replace" and unit["max_contributions"] == 12 and unit["chosen"]["epsilon"] == 0.0
        assert unit["chosen"]["share"] == 0.0 and unit["record_epsilon"] == pytest.approx(1.0 / 12)
        assert "NUMBER of rows is public" in " ".join(release.notes()) and "number of rows" in unit["public"]
        assert release.n == 22  # the rows kept: a function of the public counts and k
        return
    assert relation == "add-remove" and unit["chosen"]["epsilon"] == pytest.approx(0.1) and "public" not in unit
    assert getattr(release, "n", None) is None and "NUMBER of rows" not in " ".join(release.notes())
    text = release.to_json()
    for count in ('"persons"', '"kept"', '"rows"'):  # no exact count of persons or rows kept in the result
        assert count not in text


def test_the_bound_read_off_public_counts_is_never_stated_under_add_remove():
    unit = PrivacyUnit(3, AutoBound(), 0.0, "replace")
    with pytest.raises(ValueError, match="no budget under replace"):
        unit.stated(PrivacyGuarantee(0.5, 0.0, "add-remove", "central"))


# ---------------------------------------------------------------------- exact checks on small instances (item 5)
def _worst_ratio(with_person: tuple, without: np.ndarray, epsilon: float) -> float:
    """max over grid points of |log P(point | with the person) - log P(point | without)|, exactly over every bounding."""
    datasets, weights = with_person
    boundaries = np.unique(np.concatenate([[0, 2**32 + 1], *(cells + 1 for cells in datasets), without + 1]))
    return float(np.max(np.abs(_median_log_law(datasets, weights, epsilon, boundaries)
                               - _median_log_law([without], [1.0], epsilon, boundaries))))


def _median_release_epsilon(background: np.ndarray, person: np.ndarray, epsilon: float, k: int) -> float:
    """The epsilon the median's exponential mechanism runs at in ``quantiles(method="aq", q=[0.5])`` per person (each
    background value its own person, ``person`` one person's rows), read from the release's details."""
    ids = np.concatenate([np.arange(background.size), np.full(person.size, -1)])
    release = _quiet(lambda: central.quantiles(np.concatenate([background, person]), [0.5], epsilon=epsilon,
                                               bounds=(0, 1), method="aq", rng=0, privacy_id=ids, max_contributions=k))
    assert release.guarantee.epsilon == pytest.approx(epsilon) and release.details["levels"] == 1
    return float(release.details["epsilon_per_release"])


def _cells(values):
    from dpdist.central._grid_quantile import to_cells

    return np.sort(to_cells(np.asarray(values, dtype=np.float64), (0.0, 1.0)))


@pytest.mark.parametrize("k", [1, 2, 3])
def test_a_person_with_many_rows_moves_the_median_by_no_more_than_epsilon_per_person_exactly(k):
    """Eight persons of one row and one of six distinct rows at the top: the law of the released median with the
    person (a mixture over the 15 or 20 or 6 choices of k rows, each equally likely) and without, point by point on
    the grid: at most e^epsilon apart at epsilon/k per row; the release per row at epsilon (no bound) is not."""
    epsilon = 1.0
    background = np.linspace(0.05, 0.45, 8)
    person = np.array([0.55, 0.6, 0.7, 0.8, 0.9, 0.95])
    choices = [np.sort(np.concatenate([_cells(background), _cells(person[list(s)])]))
               for s in itertools.combinations(range(person.size), k)]
    each_row = _median_release_epsilon(background, person, epsilon, k)
    per_person = _worst_ratio((choices, [1 / len(choices)] * len(choices)), _cells(background), each_row)
    assert per_person <= epsilon * (1 + 1e-12)
    per_row = _worst_ratio(([np.sort(np.concatenate([_cells(background), _cells(person)]))], [1.0]), _cells(background),
                           epsilon)
    assert per_row > 1.4 * epsilon


def test_a_person_with_ten_thousand_rows_among_ten_thousand_persons_of_one_row_exactly():
    """The issue's instance: the person's 10^4 rows at the top of the range (every choice of k rows alike).  Bounded to
    k = 5 at epsilon/5 per row, the median moves by at most e^1 in probability at every point; per row at epsilon 1
    the person decides the median (log-ratio in the thousands)."""
    background = np.random.default_rng(9).random(10_000)
    top = np.full(10_000, 0.999)
    with_person = np.sort(np.concatenate([_cells(background), _cells(top[:5])]))
    each_row = _median_release_epsilon(background, top, 1.0, 5)
    assert _worst_ratio(([with_person], [1.0]), _cells(background), each_row) <= 1.0 * (1 + 1e-12)
    unbounded = np.sort(np.concatenate([_cells(background), _cells(top)]))
    assert _worst_ratio(([unbounded], [1.0]), _cells(background), 1.0) > 1_000


def test_the_tree_per_person_is_epsilon_exactly_its_nodes_moving_by_k_times_the_height():
    """The tree's discrete Laplace of scale h / (epsilon/k) on its nodes: the worst log-ratio over outputs is
    (epsilon/k) / h times the l1 distance of the node counts with and without the person, which bounding keeps at k h
    whatever the person's rows (here 10^4 of them)."""
    rng = np.random.default_rng(2)
    background, person = rng.random(500), rng.random(10_000)
    ids = np.concatenate([np.arange(500), np.full(10_000, 500)])
    for k in (1, 4):
        with_person = _quiet(lambda: central.TreeHistogram.release(np.concatenate([background, person]), 1.0, (0, 1),
                                                                   height=3, branching=4, rng=0, privacy_id=ids,
                                                                   max_contributions=k))
        kept = np.concatenate([background, person])[bounded_rows(person_codes("f", ids, ids.size), k,
                                                                 np.random.default_rng(0))]
        distance = _node_distance(kept, background, branching=4, height=3)
        record = with_person.releases[0]["tree_epsilon"]
        assert distance == k * 3 and record / 3 * distance == pytest.approx(with_person.guarantee.epsilon)


def _node_distance(first: np.ndarray, second: np.ndarray, branching: int, height: int) -> int:
    """l1 distance of the counts of every node below the root of two trees over [0, 1]."""
    total = 0
    for level in range(1, height + 1):
        cells = branching**level
        total += int(np.abs(np.bincount(np.minimum((first * cells).astype(int), cells - 1), minlength=cells)
                            - np.bincount(np.minimum((second * cells).astype(int), cells - 1), minlength=cells)).sum())
    return total


def test_a_delta_that_group_privacy_would_divide_below_the_floats_is_refused_by_name():
    """(epsilon, delta) per person at k rows runs each row at delta / sum_(i<k) e^(i epsilon/k): at epsilon 2000 and
    k = 2 that is below the smallest float, and the Gaussian's log(delta) failed with a bare ValueError."""
    with pytest.raises(InvalidParameterError, match=r"'epsilon' argument \(2000\.0 per person\) with max_contributions=2"):
        central.polynomial_projection(np.array([0.1, 0.2, 0.3, 0.3]), 2000.0, 1e-6, (0, 1), rng=1,
                                      privacy_id=np.array([0, 1, 2, 2]), max_contributions=2)


def test_slice_quantiles_per_person_states_no_n_and_its_note_does_not_say_it_does():
    """Slice quantiles is a replace release with ``n: null``; its note said "n is
    the rows kept" as if the result held n. Now the note says n is public (the plan is a function of it) without a
    result's n, and the bound ``auto`` is the exact quantile of the public counts, for no budget."""
    persons = np.random.default_rng(3).geometric(0.25, 400)
    ids = np.repeat(np.arange(persons.size), persons)
    values = np.random.default_rng(4).uniform(0, 1, ids.size)
    release = _quiet(lambda: central.quantiles(values, [0.5], epsilon=1.0, bounds=(0, 1), method="slice", delta=1e-6,
                                               privacy_id=ids, max_contributions="auto", rng=0))
    notes = " ".join(release.notes())
    assert release.guarantee.neighbouring == "replace" and release.n is None
    assert "NUMBER of rows is public" in notes and "a result that states no n" in notes
    assert "n is the rows kept" not in notes
    assert release.details["privacy_unit"]["max_contributions"] == int(np.sort(persons)[math.ceil(0.9 * 400) - 1])


def test_refusals_name_the_function_called_and_an_integral_float_bound_is_taken_as_an_int():
    """``central.cdf``'s refusals named "TreeHistogram.release"; and
    ``max_contributions=2.0`` is taken as 2 (as every int parameter takes an integral float; docs/explanation/central-release.md says so)."""
    for name, call in (("cdf", central.cdf), ("tree_cdf", central.tree_cdf),
                       ("quantiles", lambda *a, **k: central.quantiles(*a, q=[0.5], **k))):
        with pytest.raises(InvalidParameterError, match=f"'privacy_id' argument of {name} must hold one id per value"):
            call(X, 1.0, (0, 1), privacy_id=IDS[:-1], max_contributions=2)
    given = _quiet(lambda: central.cdf(X, 1.0, (0, 1), privacy_id=IDS, max_contributions=2.0, rng=0))
    assert given.details["privacy_unit"]["max_contributions"] == 2
