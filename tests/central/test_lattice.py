"""The heap lattice: its public candidate units, the records' classes (one each: sensitivity 1), the heaps read from
the noisy counts, and quantiles read on it inside the segments of even density."""

import math

import numpy as np
import pytest

from dpdist import central
from dpdist.central import _lattice
from dpdist.central.noise import _dyadic_epsilon


def test_the_candidate_units_are_public_each_divides_the_next_and_none_exceeds_half_the_range():
    units = _lattice.candidate_units((0.0, 300_000.0))
    assert units[-1] == 100_000 and units[0] == 0.1 and units.size == 2 * _lattice.DECADES - 1  # 500,000: above
    ratios = units[1:] / units[:-1]
    assert np.allclose(ratios, np.round(ratios)) and np.all(units <= 150_000)
    assert _lattice.candidate_units((18.0, 100.0))[-1] == 10  # half of 82 is 41


def test_a_value_is_in_the_class_of_the_coarsest_unit_it_is_a_multiple_of():
    units = _lattice.candidate_units((0.0, 300_000.0))
    values = np.array([40_000.0, 41_000.0, 41_500.0, 41_550.0, 0.29 * 100, 31_656.5, 0.0, 1 / 3])
    classes = _lattice.unit_classes(values, units)
    named = [None if c < 0 else float(units[c]) for c in classes]
    assert named[:6] == [10_000.0, 1000.0, 500.0, 50.0, 1.0, 0.5]
    assert named[6] == 100_000.0 and named[7] is None  # 0 is a multiple of every unit; 1/3 of none


def test_one_record_moves_one_class_count_by_one():
    # the release is a histogram over the classes: adding or removing a record moves exactly one count by one
    rng = np.random.default_rng(2)
    bounds = (0.0, 2500.0)
    units = _lattice.candidate_units(bounds)
    for _ in range(100):
        x = np.round(rng.lognormal(6.5, 0.6, rng.integers(0, 40)), rng.integers(-2, 3))
        extra = np.round(rng.uniform(0, 2500), rng.integers(-2, 3))
        before = np.bincount(_lattice.unit_classes(x, units) + 1, minlength=units.size + 1)
        after = np.bincount(_lattice.unit_classes(np.append(x, extra), units) + 1, minlength=units.size + 1)
        assert np.abs(after - before).sum() == 1


def test_the_release_is_discrete_laplace_of_scale_one_over_its_epsilon():
    x = np.round(np.random.default_rng(3).uniform(0, 100, 5000))
    exact = _lattice.release_lattice(x, (0.0, 100.0), 1e9, np.random.default_rng(0))
    noise = np.concatenate([_lattice.release_lattice(x, (0.0, 100.0), 0.3, np.random.default_rng(seed)).counts
                            - exact.counts for seed in range(200)])
    a = float(_dyadic_epsilon(0.3))
    variance = 2 * math.exp(-a) / (1 - math.exp(-a)) ** 2
    assert abs(noise.var() - variance) < 5 * math.sqrt(5 / noise.size) * variance
    replaced = _lattice.release_lattice(x, (0.0, 100.0), 0.3, np.random.default_rng(0), "replace")
    assert replaced.noise_sd == pytest.approx(math.sqrt(2) * 2 / 0.3)  # a replacement moves two counts


def _lattice_of(counts: dict, rest: float, bounds=(0.0, 300_000.0), noise_sd: float = 10.0):
    units = _lattice.candidate_units(bounds)
    noisy = np.zeros(units.size)
    for unit, count in counts.items():
        noisy[int(np.flatnonzero(np.isclose(units, unit))[0])] = count
    return _lattice.Lattice(units, noisy, rest, noise_sd, 1.0)


def test_a_class_too_small_for_the_noise_joins_the_coarsest_heap_finer_than_it():
    lattice = _lattice_of({1000: 6000, 10_000: 2500, 50_000: 20, 5: 25}, rest=1455)
    units, shares, rest = lattice.heaps()
    assert units.tolist() == [1000.0, 10_000.0]
    np.testing.assert_allclose(shares, [0.6, 0.252])  # 50,000's 20 records are multiples of 10,000
    assert rest == pytest.approx(0.148)  # the values of no class and 5's, below every heap
    assert _lattice_of({5: 20}, rest=100).heaps()[0].size == 0  # no heap: nothing is read on a lattice


def test_a_segment_without_a_heap_moves_to_the_nearest_only_where_the_rest_is_certified_small():
    # the noisy rest plus two noise sds of its sum (the values of no class and the classes below every heap) over the
    # noisy total: 40,000 records on whole thousands and tens certify it; 35% off the heaps does not
    on = _lattice_of({1000: 30_000, 10_000: 10_000}, rest=0.0, noise_sd=72.0)
    off = _lattice_of({1000: 6500}, rest=3500, noise_sd=72.0)
    assert on.all_on_heaps() and not off.all_on_heaps()
    cells, cumulative = np.array([0.0, 39_100.0, 39_900.0, 300_000.0]), np.array([0.0, 0.1, 0.3, 1.0])
    read = _lattice.lattice_quantiles(cells, cumulative, np.array([0.2]), np.array([39_500.0]), on, 1e-4)
    assert read[0] == pytest.approx(40_000 - 1e-4)  # the tree read 39,500, below 40,000: just below it
    assert _lattice.lattice_quantiles(cells, cumulative, np.array([0.2]), np.array([39_500.0]), off, 1e-4) == 39_500


def test_a_quantile_in_a_segment_lands_on_the_heap_its_rank_falls_in_on_its_nearer_side():
    # one segment [39,500, 41,500) of mass 0.2 from 0.1: 40,000 (a 10,000 heap) and 41,000 (a 1,000 heap) hold
    # nearly all of it, in proportion to their weights p / rho
    lattice = _lattice_of({1000: 6000, 10_000: 3000}, rest=1000)
    cells, cumulative = np.array([0.0, 39_500.0, 41_500.0, 300_000.0]), np.array([0.0, 0.1, 0.3, 1.0])
    units, weights = lattice.point_weights()
    w1000, w10000 = weights
    continuous = lattice.heaps()[2] * 2000
    total = w1000 + w10000 + continuous
    below_40000 = continuous * 500 / 2000 / total  # the continuous share between 39,500 and 40,000
    step = 1e-4
    at = lambda share: 0.1 + 0.2 * share  # noqa: E731
    q = np.array([at(below_40000 + 0.2 * w10000 / total), at(below_40000 + 0.8 * w10000 / total),
                  at(below_40000 + (w10000 + 500 * continuous / 2000 + 0.6 * w1000) / total)])
    read = _lattice.lattice_quantiles(cells, cumulative, q, np.full(3, -1.0), lattice, step)
    np.testing.assert_allclose(read, [40_000 - step, 40_000 + step / 2, 41_000 + step / 2])


def test_a_segment_without_a_heap_and_a_release_without_heaps_keep_the_trees_reading():
    cells, cumulative = np.array([0.0, 39_100.0, 39_900.0, 300_000.0]), np.array([0.0, 0.1, 0.3, 1.0])
    heaped = _lattice_of({1000: 6000}, rest=4000)
    tree_values = np.array([39_500.0])
    assert _lattice.lattice_quantiles(cells, cumulative, np.array([0.2]), tree_values, heaped, 1e-4) == 39_500.0
    flat = _lattice_of({}, rest=10_000)
    assert _lattice.lattice_quantiles(cells, cumulative, np.array([0.2]), tree_values, flat, 1e-4) == 39_500.0


def test_a_refinements_evenly_shared_run_is_one_segment():
    cells = np.array([0.0, 1.0, 2.0, 2.5, 3.0, 3.5, 4.0])
    cumulative = np.array([0.0, 0.1, 0.2, 0.25, 0.30, 0.60, 1.0])  # density 0.1 up to 3, then 0.6, then 0.8
    assert _lattice.even_segments(cells, cumulative).tolist() == [0, 4, 5, 6]


def test_the_defaults_deciles_of_whole_numbers_land_on_whole_numbers_and_state_the_lattices_step():
    from dpdist.central.many_quantiles import LATTICE_SHARE

    # 40,000 ages: the rest off the heaps is certified below REST_AT_MOST (its noise over ~12 classes is ~500 records)
    rng = np.random.default_rng(4)
    ages = np.minimum(18 + np.floor(rng.gamma(6, 7, 40_000)), 99)
    release = central.quantiles(ages, epsilon=1.0, bounds=(0, 100), rng=6)
    assert release.method == "tree" and release.guarantee.epsilon == pytest.approx(1.0, rel=1e-9)
    lattice = release.details["lattice"]
    assert lattice["epsilon"] == pytest.approx(LATTICE_SHARE * (1 - 0.02)) and "1" in lattice["heaps"]
    # on a heap, or within the release grid's step of one (on the side its rank is nearer to)
    assert np.all(np.abs(release.values - np.round(release.values)) < 1e-6)
