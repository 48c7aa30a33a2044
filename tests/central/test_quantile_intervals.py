"""Intervals for the quantiles of AQ and JointExp (``central.quantiles(..., interval_share=...)``).

The intervals come from brackets released beside each quantile and certified below or above it by
noisy counts (``dpdist.central._quantile_intervals``).  Coverage is checked against the data's
empirical quantile (``np.quantile(x, q, method="inverted_cdf")``, the only randomness being the
release's) over R seeded runs: at level 0.95 a check passes when the coverage is at least
``0.95 - 3 * sqrt(0.95 * 0.05 / R)`` (a one-sided binomial bound at about 0.1% error), on smooth
data and on data with ties, where the point release itself misses; without the counts' noise
bound the same runs cover 0.63-0.66 (the check can fail).  The Chernoff bound of the counts' noise
is checked against the sampler's draws, and shown necessary (half of it fails).
"""

import math

import numpy as np
import pytest

from dpdist import central
from dpdist.central import _quantile_intervals as qi
from dpdist.central.noise import discrete_laplace
from dpdist.errors import InvalidParameterError

LEVEL = 0.95


def _lower_bound(total: int) -> float:
    return LEVEL - 3 * math.sqrt(LEVEL * (1 - LEVEL) / total)


def _coverage(method: str, data, q, runs: int, epsilon: float, bounds) -> tuple[float, int]:
    truth = np.quantile(np.clip(data, *bounds), q, method="inverted_cdf")
    covered = 0
    for seed in range(runs):
        release = central.quantiles(data, q, epsilon=epsilon, bounds=bounds, method=method, rng=seed,
                                    interval_share=0.3)
        covered += int(np.sum((release.low <= truth) & (truth <= release.high)))
    return covered / (runs * len(q)), runs * len(q)


# JointExp's 60 runs (twice) are slow-marked (0.8 CPU-s): its ties test below keeps its intervals in the fast loop
@pytest.mark.parametrize("method", ["aq", pytest.param("jointexp", marks=pytest.mark.slow)])
@pytest.mark.slow  # 0.51 CPU-s: coverage over repeated releases
def test_intervals_cover_the_empirical_quantiles_of_smooth_data(method, monkeypatch):
    x = np.random.default_rng(3).normal(size=2000)
    coverage, total = _coverage(method, x, [0.1, 0.5, 0.9], 60, 1.0, (-4.0, 4.0))
    assert coverage >= _lower_bound(total), coverage
    # the same runs certifying brackets by the noisy counts alone, with no allowance for their noise, miss
    # (0.63 and 0.66): the check can fail
    monkeypatch.setattr(qi, "count_noise_bound", lambda q, below, above, alpha, epsilon: np.zeros(np.shape(below)))
    unguarded, _ = _coverage(method, x, [0.1, 0.5, 0.9], 60, 1.0, (-4.0, 4.0))
    assert unguarded < 0.8, unguarded


@pytest.mark.parametrize("method", ["aq", "jointexp"])
@pytest.mark.slow  # 0.59 CPU-s: coverage over repeated releases
def test_intervals_cover_where_ties_make_the_point_release_miss(method):
    # an atom holding ranks 30%..90% around the median: AQ's median falls just below the atom,
    # and its rescaled 0.25-quantile lands near the 0.15-quantile, 0.1 n ranks off
    rng = np.random.default_rng(4)
    n = 2000
    x = np.concatenate([rng.uniform(0, 5, int(0.3 * n)), np.full(int(0.6 * n), 6.0), rng.uniform(7, 10, int(0.1 * n))])
    q = [0.25, 0.5, 0.95]
    coverage, total = _coverage(method, x, q, 60, 1.0, (0.0, 10.0))
    assert coverage >= _lower_bound(total), coverage


def test_aq_point_release_misses_under_ties_and_its_interval_still_covers():
    """The interval does not lean on the point release: here AQ's 0.25-quantile is ~0.1 n ranks off."""
    rng = np.random.default_rng(4)
    n = 4000
    x = np.concatenate([rng.uniform(0, 5, int(0.3 * n)), np.full(int(0.6 * n), 6.0), rng.uniform(7, 10, int(0.1 * n))])
    truth = np.quantile(x, 0.25, method="inverted_cdf")
    release = central.quantiles(x, [0.25, 0.5, 0.75], epsilon=2.0, bounds=(0.0, 10.0), method="aq", rng=0,
                                interval_share=0.3)
    rank = np.searchsorted(np.sort(x), release.values[0]) / n
    assert rank < 0.2  # the point release is far off (the tie floor propagated by the rescaling)
    assert release.low[0] <= truth <= release.high[0]
    assert not release.low[0] <= release.values[0] <= release.high[0]  # and its interval says so


def test_count_noise_bound_holds_for_the_sampler_and_half_of_it_does_not():
    # N = (1 - q) sum of K_b draws - q sum of K_a draws of the counts' discrete Laplace at epsilon
    epsilon, q, below, above, alpha = 0.5, 0.3, 6, 13, 0.05
    bound = float(qi.count_noise_bound(q, np.array(below), np.array(above), alpha, epsilon))
    draws = 40_000
    z = discrete_laplace(draws * (below + above), 1, epsilon, np.random.default_rng(7)).reshape(draws, -1)
    noise = (1 - q) * z[:, :below].sum(axis=1) - q * z[:, below:].sum(axis=1)
    tolerance = 3 * math.sqrt(alpha * (1 - alpha) / draws)
    assert np.mean(noise >= bound) <= alpha + tolerance
    assert np.mean(noise <= -bound) <= alpha + tolerance  # the noise is symmetric: one bound for both sides
    assert np.mean(noise >= bound / 2) > alpha + tolerance  # a bound half as large fails: the check has power


def _closed_law(cells: np.ndarray, lo: int, hi: int, target: float, epsilon: float) -> np.ndarray:
    """P(point) of the closed-rank exponential mechanism on points lo..hi, written out point by point."""
    points = np.arange(lo, hi + 1)
    below = np.array([np.sum(cells < p) for p in points])
    at_or_below = np.array([np.sum(cells <= p) for p in points])
    distance = np.maximum(0, np.maximum(below - target, target - at_or_below))
    weights = np.exp(-epsilon * distance / 2)
    return weights / weights.sum()


def test_bracket_targets_keep_each_mechanism_within_its_epsilon():
    """Both brackets of a segment (R above its low end, R below its top) are epsilon'-DP under add/remove."""
    epsilon, lo, hi, offset = 0.8, 0, 12, 2
    rng = np.random.default_rng(1)
    for _ in range(30):
        cells = np.sort(rng.integers(lo, hi, size=rng.integers(0, 7)))
        for added in range(lo, hi):
            larger = np.sort(np.append(cells, added))
            for target in (lambda k: offset, lambda k: k - offset):
                p = _closed_law(cells, lo, hi, target(cells.size), epsilon)
                p_added = _closed_law(larger, lo, hi, target(larger.size), epsilon)
                assert np.max(np.abs(np.log(p_added / p))) <= epsilon + 1e-9


def test_the_ends_are_released_points_and_the_guarantee_states_the_total():
    x = np.random.default_rng(5).lognormal(size=3000)
    for method in ("aq", "jointexp"):
        release = central.quantiles(x, [0.2, 0.5, 0.8], epsilon=0.7, bounds=(0.0, 20.0), method=method, rng=2,
                                    interval_share=0.25)
        budget = release.details["interval_budget"]
        assert release.guarantee.epsilon == pytest.approx(0.7) and release.epsilon == pytest.approx(0.7)
        assert budget["quantiles"] + budget["brackets"] + budget["counts"] == pytest.approx(0.7)
        assert budget["quantiles"] == pytest.approx(0.7 * 0.75)
        brackets = release.details["brackets"]
        released = {0.0, 20.0, *brackets["lower"], *brackets["upper"], *brackets["reserves"]}
        assert set(release.low.tolist()) <= released and set(release.high.tolist()) <= released
        assert np.all(release.low <= release.high)
        (interval,) = release.intervals()
        assert interval.quantity == "quantile" and interval.level == LEVEL
        assert np.all(np.isfinite(release.table()["low"]))
        assert all(isinstance(v, int) for v in release.details["brackets"]["noisy_counts"])


def test_without_a_share_there_are_no_intervals_and_the_whole_budget_goes_to_the_quantiles():
    x = np.random.default_rng(6).normal(size=500)
    release = central.quantiles(x, [0.5], epsilon=1.0, bounds=(-4.0, 4.0), method="aq", rng=1)
    assert release.low is None and release.intervals() == () and "interval_budget" not in release.details
    assert release.details["epsilon_per_release"] == pytest.approx(1.0)


@pytest.mark.parametrize("epsilon", [1e-6, 1e12])
def test_both_ends_of_the_epsilon_range_give_intervals(epsilon):
    x = np.random.default_rng(8).normal(size=500)
    truth = np.quantile(x, [0.1, 0.5], method="inverted_cdf")
    for method in ("aq", "jointexp"):
        release = central.quantiles(x, [0.1, 0.5], epsilon=epsilon, bounds=(-4.0, 4.0), method=method, rng=1,
                                    interval_share=0.3)
        assert np.all((release.low <= truth) & (truth <= release.high))
        if epsilon > 1:  # next to no noise: the brackets sit at their offsets, a few records from the quantile
            assert np.all(release.high - release.low < 0.2)


def test_empty_data_is_released_with_intervals():
    for method in ("aq", "jointexp"):
        release = central.quantiles([], [0.5], epsilon=1.0, bounds=(0.0, 1.0), method=method, rng=0,
                                    interval_share=0.5)
        assert 0.0 <= release.low[0] <= release.high[0] <= 1.0


@pytest.mark.parametrize("arguments, match", [
    (dict(method="tree", interval_share=0.2), "must be None when method='tree' .*applies to method='aq' and method='jointexp'.*Got 0.2"),
    (dict(method="slice", interval_share=0.2), "must be None when method='slice' .*applies to method='aq' and method='jointexp'.*Got 0.2"),
    (dict(method="aq", interval_share=0.0), r"must be None or a float in \(0, 1\)"),
    (dict(method="aq", interval_share=1.0), r"must be None or a float in \(0, 1\)"),
    (dict(method="jointexp", interval_share=True), r"must be None or a float in \(0, 1\)"),
    (dict(method="aq", interval_share="0.2"), r"must be None or a float in \(0, 1\)"),
])
def test_bad_interval_share_is_refused_by_name(arguments, match):
    with pytest.raises(InvalidParameterError, match="interval_share") as error:
        central.quantiles(np.arange(10.0), [0.5], epsilon=1.0, bounds=(0.0, 10.0), **arguments)
    assert error.match(match)


def test_offsets_grow_with_the_noise_and_the_split_uses_the_whole_budget():
    q = np.array([0.1, 0.5, 0.9])
    small = qi.bracket_offsets(q, LEVEL, 0.2, 0.2, 10.0)
    large = qi.bracket_offsets(q, LEVEL, 0.1, 0.1, 10.0)
    assert np.all(large > small) and np.all(small > 0)
    brackets, counts = qi.split_interval_budget(q, LEVEL, 0.3, 10.0)
    assert brackets + counts == pytest.approx(0.3) and brackets > 0 and counts > 0
