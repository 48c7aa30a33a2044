"""A group-by per person and with private keys (``frame/_private_groups.py``): each person in at most ``max_groups``
groups, the groups chosen privately (truncated geometric or Gaussian thresholding), a statistic as one Gaussian
vector (``frame/_gaussian_groups.py``), the refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpdist import central, frame, privacy
from dpdist.budget import BudgetSession
from dpdist.errors import ContributionBoundWarning, InvalidParameterError


def test_group_release_with_private_keys_shows_the_groups_chosen_privately_per_person():
    """Keys that are not public: each person in at most 2 groups, the groups chosen by truncated geometric thresholding
    of their distinct persons; a key held by one person alone is (almost surely) not shown; the guarantee composes the
    selection and two groups' releases per person."""
    rng = np.random.default_rng(6)
    persons = np.repeat(np.arange(600), 5)
    merchant = np.where(rng.random(persons.size) < 0.9, rng.integers(0, 4, persons.size), 100 + persons)  # rare keys
    table = pd.DataFrame({"user": persons, "merchant": merchant, "amount": rng.gamma(2, 10, persons.size)})
    session = BudgetSession(2.0, 1e-5, neighbouring="add-remove", unit="person", reproducible=True)  # seeded keys
    with pytest.warns(ContributionBoundWarning):
        grouped = frame.group_release(table, "amount", "merchant", central.count, epsilon=0.4, groups=None,
                                      privacy_id="user", max_groups=2, max_contributions=3, selection_epsilon=0.5,
                                      selection_delta=1e-6, rng=1, session=session)
    assert list(grouped.keys()) == [0, 1, 2, 3]  # the 4 common merchants; none of the 600 of one person each
    assert grouped.guarantee == privacy.PrivacyGuarantee(1.3, 1e-6, "add-remove", "central", unit="person")
    assert 1.29 < session.spent.epsilon <= 1.3  # the tightest accountant's, at the session's delta
    assert "chosen privately" in grouped.covers and grouped.details["selection"]["epsilon"] == 0.5
    for key in grouped.keys():  # each count is of the rows kept: at most 3 per person and group
        true = np.count_nonzero(merchant == key)
        assert 0.4 * true < grouped[key].count <= true + 30


@pytest.mark.parametrize("kwargs, named", [
    ({"groups": ["a"], "privacy_id": "user"}, "'max_groups' parameter of frame.group_release must be given .* when "
     "'privacy_id' is given .* Got None"),
    ({"groups": ["a"], "max_groups": 2}, "'privacy_id' parameter of frame.group_release must be given .* when "
     "'max_groups' is given .* Got None"),
    ({"groups": None}, "'selection_epsilon'"),
    ({"groups": None, "selection_epsilon": 1.0}, "'selection_delta'"),
    ({"groups": ["a"], "selection_epsilon": 1.0, "selection_delta": 1e-6}, "'selection_epsilon' parameter of "
     "frame.group_release must be None when 'groups' is given .* Got 1.0"),
    ({"groups": None, "privacy_id": "nobody", "max_groups": 1}, "'privacy_id' parameter .* must be a column of the frame"),
    ({"groups": None, "selection_epsilon": 1.0, "selection_delta": 1e-6, "function": central.histogram_queries},
     "under add/remove neighbours"),
    ({"groups": None, "selection_epsilon": 1.0, "selection_delta": 1e-6, "selection": "mad"}, "'selection' "),
    ({"groups": ["a"], "selection": "adaptive"}, "'selection' parameter .* must be None when 'groups' is given"),
    ({"groups": ["a"], "noise": "gaussian"}, "'noise_delta' parameter .* must be given .* when noise='gaussian'"),
    ({"groups": ["a"], "noise_delta": 1e-6}, "'noise' parameter .* must be 'gaussian' when 'noise_delta' is given"),
    ({"groups": ["a"], "noise": "gaussian", "noise_delta": 1e-6}, "'noise' argument of frame.group_release is 'gaussian' for central.count"),
    ({"groups": ["a"], "noise": "gaussian", "noise_delta": 1e-6, "privacy_id": "user", "max_groups": 2,
      "function": central.sum}, "'max_contributions'"),
    ({"groups": ["a"], "noise": "gaussian", "noise_delta": 1e-6, "function": central.histogram_queries,
      "neighbouring": "add-remove"}, "'bins'"),
])
def test_group_release_per_person_refuses_bad_arguments_by_name(kwargs, named):
    table = pd.DataFrame({"user": [1, 1, 2], "key": ["a", "b", "a"], "x": [0.1, 0.2, 0.3]})
    function = kwargs.pop("function", central.cdf)
    with pytest.raises(InvalidParameterError, match=named):
        frame.group_release(table, "x", "key", function, epsilon=1.0, bounds=(0, 1), **kwargs)


@pytest.mark.parametrize("persons", [3, 60, 400])
@pytest.mark.parametrize("function, kwargs", [
    (central.quantiles, {"method": "slice", "delta": 1e-6}),
    (central.tree_cdf, {"neighbouring": "replace"}),
    (central.histogram_queries, {}),
])
def test_a_replace_release_per_person_is_refused_by_name_before_the_data_are_read(persons, function, kwargs):
    """Slice quantiles was dry-run on the real ids first, so a 60-person table
    was refused by "the n = 60 records are too close" (a private count), a 400-person one by the refusal of replace
    releases. Now every table is refused alike, by the function and the neighbouring it states, and no message holds a
    count of the data."""
    table = pd.DataFrame({"user": np.arange(persons), "key": "a", "x": np.random.default_rng(1).uniform(0, 1, persons)})
    args = (0.5,) if function is central.quantiles else ()
    with pytest.raises(InvalidParameterError, match="under add/remove neighbours.*replace") as refused:
        frame.group_release(table, "x", "key", function, *args, epsilon=1.0, bounds=(0, 1), groups=["a"],
                            privacy_id="user", max_groups=1, max_contributions=1, rng=1, **kwargs)
    assert str(persons) not in str(refused.value)


@pytest.mark.parametrize("selection", ["truncated_geometric", "gaussian", "weighted_gaussian", "adaptive", None])
def test_every_selection_shows_the_common_keys_and_states_its_method(selection):
    rng = np.random.default_rng(9)
    persons = np.repeat(np.arange(800), 4)
    shop = np.where(rng.random(persons.size) < 0.9, rng.integers(0, 3, persons.size), 100 + persons)
    table = pd.DataFrame({"user": persons, "shop": shop, "amount": rng.uniform(0, 10, persons.size)})
    grouped = frame.group_release(table, "amount", "shop", central.count, epsilon=0.5, groups=None, privacy_id="user",
                                  max_groups=4, max_contributions=4, selection_epsilon=0.5, selection_delta=1e-6,
                                  selection=selection, rng=2)
    assert list(grouped.keys()) == [0, 1, 2]
    assert grouped.details["selection"]["method"] == (selection or "adaptive")  # the default with max_groups=4


def test_a_gaussian_group_by_releases_every_group_shown_at_one_budget_per_person():
    """Counts and sums per shop as one Gaussian vector each: the guarantee is the selection plus (epsilon, delta) of
    the vector, whatever max_groups; every shop's count is within 5 standard deviations of its rows kept."""
    rng = np.random.default_rng(10)
    persons = np.repeat(np.arange(2000), 3)
    shop = rng.integers(0, 5, persons.size)
    table = pd.DataFrame({"user": persons, "shop": shop, "amount": rng.uniform(0, 10, persons.size)})
    for function, kwargs in ((central.count, {}), (central.sum, {"bounds": (0.0, 10.0)}),
                             (central.mean, {"bounds": (0.0, 10.0)})):
        grouped = frame.group_release(table, "amount", "shop", function, epsilon=0.5, groups=None, privacy_id="user",
                                      max_groups=5, max_contributions=3, selection_epsilon=0.5, selection_delta=1e-6,
                                      noise="gaussian", noise_delta=1e-6, rng=3, **kwargs)
        assert grouped.guarantee == privacy.PrivacyGuarantee(1.0, 2e-6, "add-remove", "central", unit="person")
        assert list(grouped.keys()) == [0, 1, 2, 3, 4] and grouped.details["noise"] == "gaussian"
        if function is central.count:
            for key in grouped.keys():
                assert abs(grouped[key].count - np.count_nonzero(shop == key)) < 5 * grouped[key].standard_error


def test_the_rows_left_out_by_max_groups_are_counted_for_the_holder_of_the_data():
    """50 persons x 6 rows over 3 shops, max_groups=1: the 200 rows of the
    other two shops of each person were in no ContributionBoundWarning. Now they are counted (in ``count`` only)."""
    table = pd.DataFrame({"c": np.repeat(np.arange(50), 6), "shop": np.tile(["a", "b", "c"], 100), "v": np.zeros(300)})
    with pytest.warns(ContributionBoundWarning) as warned:
        grouped = frame.group_release(table, "v", "shop", central.count, epsilon=1.0, groups=["a", "b", "c"],
                                      privacy_id="c", max_groups=1, max_contributions=3, rng=1)
    (said,) = [w.message for w in warned if "max_groups" in str(w.message)]
    assert said.count == 200 and "200" not in str(said) and "100" not in str(said)
    assert "200" not in grouped.table().to_string() and all(w.filename == __file__ for w in warned)
