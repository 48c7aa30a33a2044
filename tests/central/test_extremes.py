"""``central.minimum`` and ``central.maximum``: the exponential mechanism for the quantile at rank 0 and at rank n."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpdist import central

VALUES = np.random.default_rng(11).lognormal(10.0, 0.7, 2_000)
BOUNDS = (0.0, 300_000.0)


def test_the_minimum_and_the_maximum_have_few_rows_beyond_them():
    """The rank the mechanism finds: at most its stated bound of rows lie below the minimum (above the maximum) in
    every one of 100 releases (each holds with probability 0.95 or more), one or two on average (the gaps between
    the largest incomes are wide: the mechanism often lands below the largest)."""
    rng = np.random.default_rng(0)
    for function, beyond in ((central.minimum, lambda v: np.sum(VALUES < v)),
                             (central.maximum, lambda v: np.sum(VALUES > v))):
        counts = []
        for _ in range(100):
            released = function(VALUES, 1.0, BOUNDS, rng=rng)
            counts.append(beyond(released.values[0]))
        bound = released.details["rank_error_bound"]["ranks"]
        assert bound == pytest.approx(2 * (math.log(2**32 + 1) + math.log(20)))
        assert max(counts) <= bound and np.mean(counts) < 2


def test_a_minimum_lies_between_the_lower_bound_and_the_smallest_value_more_often_than_not():
    rng = np.random.default_rng(1)
    released = np.array([central.minimum(VALUES, 1.0, BOUNDS, rng=rng).values[0] for _ in range(200)])
    inside = (released >= BOUNDS[0]) & (released <= VALUES.min())
    assert inside.mean() > 0.5 and released.max() < np.sort(VALUES)[60]


def test_the_release_states_its_rank_its_guarantee_and_no_interval():
    released = central.maximum(VALUES, 0.5, BOUNDS, rng=2)
    assert released.q.tolist() == [1.0] and released.low is None and released.intervals() == ()
    assert released.guarantee.epsilon == 0.5 and released.method == "maximum"


def test_per_person_the_mechanism_runs_at_epsilon_over_the_rows_kept():
    ids = np.repeat(np.arange(400), 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        released = central.minimum(VALUES, 1.0, BOUNDS, privacy_id=ids, max_contributions=4, rng=3)
    assert released.guarantee.unit == "person" and released.details["privacy_unit"]["record_epsilon"] == 0.25
    assert released.details["rank_error_bound"]["ranks"] == pytest.approx(
        2 * (math.log(2**32 + 1) + math.log(20)) / 0.25)
