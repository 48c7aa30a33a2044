"""``central.sum`` and ``central.mean``: clipped values plus exact discrete Laplace noise, per record or per person."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpdist import central, frame
from dpdist.errors import InvalidParameterError

VALUES = np.random.default_rng(3).uniform(0.0, 10.0, 400)


@pytest.mark.slow  # a Monte Carlo of 4,000 releases of each
def test_the_sum_and_mean_have_their_stated_spread_and_their_intervals_cover_at_their_level():
    rng = np.random.default_rng(0)
    sums = [central.sum(VALUES, 0.5, (0.0, 10.0), rng=rng) for _ in range(4_000)]
    noisy = np.array([r.value for r in sums])
    assert abs(noisy.mean() - VALUES.sum()) < 4 * sums[0].standard_error / math.sqrt(noisy.size)
    assert noisy.std() == pytest.approx(sums[0].standard_error, rel=0.04)
    covered = np.mean([r.low <= VALUES.sum() <= r.high for r in sums])
    assert covered >= 0.95 - 4 * math.sqrt(0.05 * 0.95 / noisy.size)
    means = [central.mean(VALUES, 0.5, (0.0, 10.0), rng=rng) for _ in range(4_000)]
    assert np.mean([r.low <= VALUES.mean() <= r.high for r in means]) >= 0.95 - 4 * math.sqrt(0.05 * 0.95 / 4_000)
    assert np.std([r.value for r in means]) == pytest.approx(np.mean([r.standard_error for r in means]), rel=0.1)


def test_the_sum_noise_is_the_largest_bound_over_epsilon_and_its_interval_is_exact_in_grid_steps():
    released = central.sum(VALUES, 0.5, (-4.0, 10.0), rng=1)
    assert released.details["noise_scale"] == pytest.approx(20.0, rel=1e-4)
    rho = math.exp(-1 / released.details["noise_scale"])
    assert released.standard_error == pytest.approx(math.sqrt(2 * rho) / (1 - rho), rel=1e-3)
    assert released.low < released.value < released.high and released.guarantee.epsilon == 0.5


def test_the_mean_centres_the_sum_at_the_midpoint_and_splits_the_budget_in_halves():
    released = central.mean(VALUES, 1.0, (0.0, 10.0), rng=2)
    assert released.details["sensitivity"]["centred_sum"] == 5.0
    assert released.details["noise_scale"] == {"centred_sum": pytest.approx(10.0, rel=1e-4), "count": 2.0}
    assert released.guarantee.epsilon == pytest.approx(1.0)
    assert abs(released.value - VALUES.mean()) < 6 * released.standard_error
    assert 0.0 <= released.low <= released.value <= released.high <= 10.0


def test_per_person_the_noise_scales_with_the_rows_kept_and_the_guarantee_is_per_person():
    ids = np.repeat(np.arange(40), 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        released = central.sum(VALUES, 1.0, (0.0, 10.0), rng=1, privacy_id=ids, max_contributions=4)
        mean = central.mean(VALUES, 1.0, (0.0, 10.0), rng=1, privacy_id=ids, max_contributions=4)
    assert released.details["noise_scale"] == pytest.approx(40.0, rel=1e-4)
    assert released.guarantee.unit == "person" and released.guarantee.epsilon == pytest.approx(1.0)
    assert mean.guarantee.unit == "person" and mean.details["privacy_unit"]["max_contributions"] == 4


def test_the_mean_of_no_record_has_the_bounds_as_its_interval():
    released = central.mean(np.zeros(0), 1.0, (0.0, 10.0), rng=0)
    assert (released.low, released.high) == (0.0, 10.0) and 0.0 <= released.value <= 10.0


@pytest.mark.parametrize("function", [central.sum, central.mean])
def test_bad_bounds_and_levels_are_refused_by_name(function):
    with pytest.raises(InvalidParameterError, match="'bounds'"):
        function(VALUES, 1.0, None)
    with pytest.raises(InvalidParameterError, match="'level'"):
        function(VALUES, 1.0, (0.0, 1.0), level=1.5)
    with pytest.raises(InvalidParameterError, match="'max_contributions'"):
        function(VALUES, 1.0, (0.0, 1.0), max_contributions=2)


def test_a_group_by_releases_a_sum_per_public_key_per_person():
    data = pd.DataFrame({"who": np.arange(400) % 50, "where": np.arange(400) % 2, "amount": VALUES})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grouped = frame.group_release(data, "amount", "where", central.sum, epsilon=0.5, bounds=(0.0, 10.0),
                                      groups=[0, 1], privacy_id="who", max_groups=2, max_contributions=8, rng=0)
    assert grouped.guarantee.epsilon == pytest.approx(1.0) and grouped.guarantee.unit == "person"
    for key in (0, 1):
        assert abs(grouped[key].value - VALUES[data["where"] == key].sum()) < 8 * grouped[key].standard_error


@pytest.mark.slow  # a Monte Carlo of 2,000 releases
def test_the_variance_has_about_its_stated_spread_and_its_interval_covers_at_its_level():
    rng = np.random.default_rng(4)
    released = [central.variance(VALUES, 1.0, (0.0, 10.0), rng=rng) for _ in range(2_000)]
    noisy = np.array([r.value for r in released])
    assert abs(noisy.mean() - VALUES.var()) < 4 * noisy.std() / math.sqrt(noisy.size)
    assert noisy.std() == pytest.approx(np.mean([r.standard_error for r in released]), rel=0.15)  # the delta method
    covered = np.mean([r.low <= VALUES.var() <= r.high for r in released])
    assert covered >= 0.95 - 4 * math.sqrt(0.05 * 0.95 / noisy.size)


def test_the_variance_splits_the_budget_in_thirds_and_centres_at_the_midpoint():
    released = central.variance(VALUES, 0.9, (0.0, 10.0), rng=5)
    assert released.details["sensitivity"] == {"centred_squares": 25.0, "centred_sum": 5.0, "count": 1}
    assert released.guarantee.epsilon == pytest.approx(0.9) and released.statistic == "variance"
    assert abs(released.value - VALUES.var()) < 6 * released.standard_error
    assert 0.0 <= released.low <= released.value <= released.high <= 25.0
    assert "union bound" in released.intervals()[0].method


def test_the_sample_variance_is_the_population_variance_times_n_over_n_minus_one():
    population = central.variance(VALUES, 1.0, (0.0, 10.0), rng=6)
    sample = central.variance(VALUES, 1.0, (0.0, 10.0), ddof=1, rng=6)  # the same noise
    ratio = sample.value / population.value
    assert 1.0 < ratio < 1.01 and abs(sample.value - VALUES.var(ddof=1)) < 6 * sample.standard_error
    with pytest.raises(InvalidParameterError, match="'ddof'"):
        central.variance(VALUES, 1.0, (0.0, 10.0), ddof=2)


def test_the_variance_of_too_few_records_has_every_value_the_bounds_allow_as_its_interval():
    released = central.variance(np.zeros(0), 1.0, (-1.0, 1.0), rng=0)
    assert (released.low, released.high) == (0.0, 1.0) and 0.0 <= released.value <= 1.0
