"""Range queries over numerical attributes: HDG/TDG grids (Yang et al., PVLDB 2020), their
geometry, consistency, answers and intervals (coverage measured by simulation)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError
from dpdist.local.multi._grids import GridGeometry, coverage, guideline_granularities, range_from_answers

SCHEMA = [{"name": "x", "bounds": [0.0, 100.0]}, {"name": "y", "bounds": [0.0, 50.0]}, {"name": "w", "bounds": [0.0, 10.0]}]


def _records(n, rng=0):
    """Correlated x and y (a shared normal factor), w independent and uniform."""
    generator = np.random.default_rng(rng)
    shared = generator.normal(size=n)
    x = np.clip(0.5 + 0.15 * (shared + 0.7 * generator.normal(size=n)), 0, 1) * 100
    y = np.clip(0.5 + 0.15 * (shared + 0.7 * generator.normal(size=n)), 0, 1) * 50
    return np.stack([x, y, generator.uniform(0, 10, n)], axis=1)


def _share(records, ranges):
    columns = {"x": 0, "y": 1, "w": 2}
    inside = [(records[:, columns[k]] >= lo) & (records[:, columns[k]] <= hi) for k, (lo, hi) in ranges.items()]
    return float(np.mean(np.all(inside, axis=0)))


def test_the_guideline_follows_the_paper_and_rounds_to_powers_of_two():
    # HDG sec. 5.3: n = 10^6, eps = 1, k = 2 (3 grids): g2 = sqrt(2 * 0.03 * (e - 1) * sqrt(n / (3e))) ~ 6.4 -> 8,
    # g1 = (n (e - 1)^2 0.49 / (6 e))^(1/3) ~ 31.9 -> 32
    assert guideline_granularities(10**6, 1.0, 2, True, 256) == (32, 8)
    assert guideline_granularities(10**6, 1.0, 2, False, 256)[1] == 8  # TDG: one 2-D grid, g2 ~ 11.1 -> 8
    assert guideline_granularities(10, 0.1, 5, True, 64) == (2, 2)  # never below 2
    assert guideline_granularities(10**12, 4.0, 2, True, 16) == (16, 16)  # never above c


def test_coverage_counts_the_part_of_each_bin_inside():
    np.testing.assert_allclose(coverage(0.1, 0.6, 4), [0.6, 1.0, 0.4, 0.0])
    np.testing.assert_allclose(coverage(0.0, 1.0, 8), np.ones(8))
    assert coverage(0.3, 0.3, 4).sum() == 0.0


def test_a_range_over_independent_attributes_is_the_product_of_its_answers():
    one_way = [0.3, 0.6, 0.5]
    two_way = {(0, 1): 0.18, (0, 2): 0.15, (1, 2): 0.3}
    assert range_from_answers(one_way, two_way) == pytest.approx(0.09, abs=1e-9)


def test_the_response_matrix_matches_its_grids():
    geometry = GridGeometry(16, 8, 4)
    rng = np.random.default_rng(0)
    two_way = rng.dirichlet(np.ones(16)).reshape(4, 4)
    rows = (two_way.sum(axis=1)[:, None] * rng.dirichlet(np.ones(2), size=4)).ravel()
    columns = (two_way.sum(axis=0)[:, None] * rng.dirichlet(np.ones(2), size=4)).ravel()
    matrix = geometry.response_matrix(two_way, rows, columns)
    assert matrix.shape == (16, 16) and matrix.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(matrix.reshape(4, 4, 4, 4).sum(axis=(1, 3)), two_way, atol=1e-10)
    np.testing.assert_allclose(matrix.sum(axis=1).reshape(8, 2).sum(axis=1), rows, atol=1e-10)
    np.testing.assert_allclose(matrix.sum(axis=0).reshape(8, 2).sum(axis=1), columns, atol=1e-10)
    flat = geometry.response_matrix(two_way, None, None)  # TDG: each cell spread evenly
    np.testing.assert_allclose(flat[:4, :4], two_way[0, 0] / 16)


def test_hdg_grids_are_consistent_and_their_answers_differ_from_exact_grids_by_noise_only():
    """n = 200,000 at eps = 2 (guideline: g1 = 32, g2 = 4).  Each answer is within 5 standard errors of the answer
    of the same grids collected without noise (eps = 30: GRR keeps every cell with probability 1 - 1e-11), and the
    hybrid grids' 2-D answers are closer to the truth than the 2-D grids' alone (HDG's point, sec. 5.3)."""
    records = _records(200_000, rng=1)
    proto = local.make("hdg", epsilon=2.0, attributes=SCHEMA, expected_reports=200_000)
    assert proto.grid_names == ["x,y", "x,w", "y,w", "x", "y", "w"]
    assert (proto.geometry.g1, proto.geometry.g2) == (32, 4)
    estimate = proto.estimate(proto.simulate(records, rng=2), postprocess="norm-sub")
    assert estimate.consistency.violation(estimate.tables) < 1e-6
    assert all(table.min() >= 0 for table in estimate.tables)
    exact = {}
    for hybrid in (True, False):
        reference = local.make("hdg", epsilon=30.0, attributes=SCHEMA, g1=32, g2=4, hybrid=hybrid)
        exact[hybrid] = reference.estimate(reference.simulate(records, rng=3), postprocess="norm-sub")
    for ranges in ({"x": (30, 60)}, {"x": (30, 60), "y": (20, 30)}, {"y": (10, 40), "w": (0, 5)}):
        answer = estimate.range(ranges)
        standard_error = (answer.high - answer.low) / (2 * 1.959964)
        assert abs(answer.estimate - exact[True].range(ranges).estimate) < 5 * standard_error, (ranges, answer)
    for ranges in ({"x": (30, 60), "y": (20, 30)}, {"x": (10, 45), "y": (5, 22)}):
        truth = _share(records, ranges)
        assert abs(exact[True].range(ranges).estimate - truth) < abs(exact[False].range(ranges).estimate - truth)
    three = estimate.range({"x": (30, 60), "y": (20, 30), "w": (0, 5)})
    assert three.low == -np.inf and three.high == np.inf
    assert three.estimate == pytest.approx(exact[True].range({"x": (30, 60), "y": (20, 30), "w": (0, 5)}).estimate, abs=0.02)


@functools.lru_cache(maxsize=2)
def _collections_on_two_attributes(hybrid: bool) -> tuple:
    """The records of x and y, and 200 seeded collections of them (n = 20,000, eps = 1) estimated once: the tests of
    ranges on cell edges read all of them, the test of conditional means the first 100 (the same draws)."""
    records = _records(20_000, rng=3)[:, :2]
    proto = local.make("hdg", epsilon=1.0, attributes=SCHEMA[:2], g1=8, g2=4, hybrid=hybrid)
    generator = np.random.default_rng(4)
    return records, tuple(proto.estimate(proto.simulate(records, rng=generator)) for _ in range(200))


@pytest.mark.slow
@pytest.mark.parametrize("hybrid", [True, False])
def test_intervals_of_ranges_on_cell_edges_cover_at_their_level(hybrid):
    """Ranges whose ends fall on 2-D cell edges have no uniformity error, so their interval must cover.  200
    simulated collections (n = 20,000, eps = 1) x 3 ranges = 600 trials: the coverage's standard error is 0.009,
    so a correct 95% interval lands in [0.91, 0.99] (4.4 sigma; false alarm below 1e-5)."""
    records, collections = _collections_on_two_attributes(hybrid)
    queries = [{"x": (25, 75)}, {"x": (0, 50), "y": (12.5, 37.5)}, {"x": (50, 100), "y": (0, 25)}]
    truth = [_share(records, ranges) for ranges in queries]
    hits = []
    for estimate in collections:
        for ranges, true in zip(queries, truth):
            interval = estimate.range(ranges)
            hits.append(interval.low <= true <= interval.high)
    assert 0.91 <= np.mean(hits) <= 0.99, np.mean(hits)  # measured: 0.948 (HDG), 0.953 (TDG)


@pytest.mark.slow
@pytest.mark.parametrize("hybrid", [True, False])
def test_intervals_of_ranges_that_cut_cells_cover_the_share_at_their_level(hybrid):
    """A range that cuts grid cells had the interval of the linear estimate (uniform within the cut
    cells), which covers that estimate's noise, not the share of records in the range.  Now the interval goes from
    the cells inside the range to the cells meeting it.  200 simulated collections (n = 20,000, eps = 1) x 3 ranges:
    a correct 95 % interval covers at least 0.95 - 3 sd of the coverage, sqrt(0.95 * 0.05 / 600) = 0.0089, so
    >= 0.923 (false alarm below 0.0014).  Measured: 1.000 (HDG and TDG; the limits are conservative)."""
    records = _records(20_000, rng=3)[:, :2]
    proto = local.make("hdg", epsilon=1.0, attributes=SCHEMA[:2], g1=8, g2=4, hybrid=hybrid)
    queries = [{"x": (30, 40), "y": (10, 20)}, {"x": (10, 63)}, {"x": (20, 70), "y": (5, 33)}]
    truth = [_share(records, ranges) for ranges in queries]
    generator = np.random.default_rng(5)
    hits = []
    for _ in range(200):
        estimate = proto.estimate(proto.simulate(records, rng=generator))
        for ranges, true in zip(queries, truth, strict=True):
            interval = estimate.range(ranges)
            assert "cells meeting it" in interval.method
            hits.append(interval.low <= true <= interval.high)
    assert np.mean(hits) >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / len(hits)), np.mean(hits)


def test_the_guides_range_example_has_an_interval_of_the_share_it_estimates():
    """Docs/multi_attribute.md's example printed 0.0864 with "95% interval 0.0543 .. 0.0629" and
    truth 0.0969: the linear estimate's interval (uniform within the one 2-D cell the range cuts), attached to the
    response matrix's answer.  The range (age 30-40, income 20-40k) lies inside one cell of the 4 x 4 grid, so the
    grids bound its share by 0 and that cell's share; an interval on cell edges is the normal one."""
    rng = np.random.default_rng(0)
    n = 20_000
    country = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    rng.integers(0, 2, n)  # the guide's device column, drawn before age
    age = np.clip(rng.normal(40 + 5 * country, 12), 0, 100)
    income = np.clip(np.exp(rng.normal(10.3 + 0.01 * age, 0.5)), 0, 200_000)
    numerical = [{"name": "age", "bounds": [0, 100]}, {"name": "income", "bounds": [0, 200_000]}]
    hdg = local.make("hdg", epsilon=2.0, attributes=numerical, expected_reports=n)
    grids = hdg.estimate(hdg.aggregator().add(hdg.privatize({"age": age, "income": income}, rng=3)), postprocess="norm-sub")
    answer = grids.range({"age": (30, 40), "income": (20_000, 40_000)})
    truth = np.mean((age >= 30) & (age <= 40) & (income >= 20_000) & (income <= 40_000))
    assert f"{answer.estimate:.4f}" == "0.0864" and f"{truth:.4f}" == "0.0969"  # the guide's numbers
    assert answer.low <= truth <= answer.high and answer.low <= answer.estimate <= answer.high
    aligned = grids.range({"age": (25, 50), "income": (0, 50_000)})  # one whole cell: no cut, the normal interval
    inside = np.mean((age >= 25) & (age <= 50) & (income <= 50_000))
    assert "normal approximation" in aligned.method and aligned.high - aligned.low < 0.1  # measured 0.054
    assert aligned.low <= inside <= aligned.high


def test_a_range_meeting_every_cell_of_a_grid_inside_none_has_the_interval_zero_to_one():
    """A 2-D range that cuts all four cells of a 2 x 2 grid: no cell inside it (low 0) and the sum of every cell, a
    constant of the consistent grids with variance 0 (high 1).  It raised IndexError (a 0-d variance) before."""
    proto = local.make("hdg", epsilon=1.0, attributes=SCHEMA[:2], g1=4, g2=2)
    records = _records(4000)[:, :2]
    grids = proto.estimate(proto.simulate(records, rng=5), postprocess="norm-sub")
    answer = grids.range({"x": (30, 60), "y": (20, 30)})
    assert (answer.low, answer.high) == (0.0, 1.0) and "cells meeting it" in answer.method
    assert 0 < answer.estimate < 1 and abs(answer.estimate - _share(records, {"x": (30, 60), "y": (20, 30)})) < 0.2


def test_the_report_reveals_only_the_grid_and_the_oracle_output():
    proto = local.make("hdg", epsilon=1.0, attributes=SCHEMA[:2], g1=4, g2=2)
    reports = proto.privatize(_records(1000)[:, :2], rng=5)
    assert reports.dtype.names == ("grid", "payload")
    assert set(np.unique(reports["grid"])) <= {0, 1, 2}
    assert proto.attribute_guarantee.epsilon == proto.guarantee.epsilon == 1.0


def test_hdg_refuses_what_it_cannot_estimate():
    with pytest.raises(InvalidParameterError, match="a list of 2 to .* numerical attributes"):
        local.make("hdg", epsilon=1.0, attributes=SCHEMA[:1])
    with pytest.raises(InvalidParameterError, match="numerical attributes"):
        local.make("hdg", epsilon=1.0, attributes=[SCHEMA[0], {"name": "c", "domain_size": 3}])
    with pytest.raises(InvalidParameterError, match="g2 <= g1"):
        local.make("hdg", epsilon=1.0, attributes=SCHEMA[:2], g1=4, g2=8)
    with pytest.raises(InvalidParameterError, match="power of two"):
        local.make("hdg", epsilon=1.0, attributes=SCHEMA[:2], resolution=48)
    proto = local.make("hdg", epsilon=1.0, attributes=SCHEMA[:2], g1=4, g2=2)
    estimate = proto.estimate(proto.simulate(_records(500)[:, :2], rng=0))
    with pytest.raises(InvalidParameterError, match="attributes of"):
        estimate.range({"age": (0, 1)})
    with pytest.raises(InvalidParameterError, match="low <= high"):
        estimate.range({"x": (60, 30)})
    with pytest.raises(InvalidParameterError, match=r"The 'values' parameter of HDG.channel must be given .*input records.*Got None"):
        proto.channel()


CONDITIONAL_QUERIES = [("y", {"x": (30, 60)}), ("x", {"y": (20, 30)}), ("y", {"x": (0, 25)}), ("w", {"x": (50, 100)})]


def test_conditional_means_and_quantiles_differ_from_exact_grids_by_noise_only():
    """n = 200,000 at eps = 2, as above.  The conditional mean of one attribute given a range of another is within 5
    of its standard errors of the same grids' noise-free answer (eps = 30); for w, independent of x, the noise-free
    conditional distribution is the truth up to the fine bins (mean within 0.05, quartiles within 0.15 on [0, 10])."""
    records = _records(200_000, rng=1)
    proto = local.make("hdg", epsilon=2.0, attributes=SCHEMA, expected_reports=200_000)
    estimate = proto.estimate(proto.simulate(records, rng=2), postprocess="norm-sub")
    reference = local.make("hdg", epsilon=30.0, attributes=SCHEMA, g1=32, g2=4)
    exact = reference.estimate(reference.simulate(records, rng=3), postprocess="norm-sub")
    columns = {"x": 0, "y": 1, "w": 2}
    for attribute, given in CONDITIONAL_QUERIES:
        mean = estimate.conditional_mean(attribute, given)
        distribution = estimate.conditional(attribute, given)
        assert mean.estimate == pytest.approx(distribution.mean(), rel=1e-12) and mean.low < mean.estimate < mean.high
        standard_error = (mean.high - mean.low) / (2 * 1.959964)
        assert abs(mean.estimate - exact.conditional_mean(attribute, given).estimate) < 5 * standard_error, (attribute, given, mean)
        [(name, (low, high))] = given.items()
        inside = (records[:, columns[name]] >= low) & (records[:, columns[name]] <= high)
        assert distribution.details["share"] == pytest.approx(inside.mean(), abs=0.02)
    w = records[(records[:, 0] >= 50) & (records[:, 0] <= 100), 2]
    noise_free = exact.conditional("w", {"x": (50, 100)})
    assert abs(noise_free.mean() - w.mean()) < 0.05
    np.testing.assert_allclose(noise_free.quantile([0.25, 0.5, 0.75]), np.quantile(w, [0.25, 0.5, 0.75]), atol=0.15)


def test_conditional_refuses_what_the_grids_cannot_answer():
    proto = local.make("hdg", epsilon=2.0, attributes=SCHEMA, g1=8, g2=4)
    estimate = proto.estimate(proto.simulate(_records(2_000), rng=1))
    with pytest.raises(InvalidParameterError, match="exactly one other attribute"):
        estimate.conditional("x", {"x": (0, 10)})
    with pytest.raises(InvalidParameterError, match="exactly one other attribute"):
        estimate.conditional_mean("x", {"y": (0, 10), "w": (0, 5)})
    with pytest.raises(InvalidParameterError, match="'attribute' parameter.*one of 'x', 'y', 'w'. Got 'z'"):
        estimate.conditional("z", {"y": (0, 10)})
    with pytest.raises(InvalidParameterError, match="low <= high"):
        estimate.conditional("x", {"y": (10, 0)})


@pytest.mark.slow
@pytest.mark.parametrize("hybrid", [True, False])
def test_conditional_mean_intervals_cover_the_noise_free_answer(hybrid):
    """100 simulated collections (n = 20,000, eps = 1) x 3 ranges on 2-D cell edges = 300 trials: the noise-only
    interval must cover the same grids' noise-free conditional mean (eps = 30) at its level at least; the coverage's
    standard error is 0.013, so [0.91, 1] (a conservative interval passes; measured 0.98 for both: the delta-method
    variance of the coarse linear estimate is above that of the response matrix's mean)."""
    records, collections = _collections_on_two_attributes(hybrid)
    reference = local.make("hdg", epsilon=30.0, attributes=SCHEMA[:2], g1=8, g2=4, hybrid=hybrid)
    noise_free = reference.estimate(reference.simulate(records, rng=3))
    queries = [("y", {"x": (25, 75)}), ("x", {"y": (0, 25)}), ("y", {"x": (50, 100)})]
    targets = [noise_free.conditional_mean(attribute, given).estimate for attribute, given in queries]
    hits = []
    for estimate in collections[:100]:
        for (attribute, given), target in zip(queries, targets):
            interval = estimate.conditional_mean(attribute, given)
            hits.append(interval.low <= target <= interval.high)
    assert 0.91 <= np.mean(hits) <= 1.0, np.mean(hits)
