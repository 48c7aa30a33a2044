"""PriPL-Tree with adaptive grids (dpdist.local.multi.pripl): each step against its equation, the plan's privacy
bookkeeping, bad input, and the release against the truth at a budget where the oracles' noise is known."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from dpdist.errors import MissingValuesError, MissingValuesWarning, SmallSampleWarning, ClippedValuesWarning, DPDistError, InvalidParameterError
from dpdist.estimates import RangeEstimate
from dpdist.local.multi._adaptive_grid import (
    adaptive_partition,
    blocks,
    fit_grid_to_leaves,
    response_matrix,
    update_leaves,
)
from dpdist.local.multi._pl_fit import PLFit, fit_piecewise_linear, pl_design
from dpdist.local.multi._pripl_tree import (
    _allocation,
    _expected_error,
    build_tree,
    clip_slopes,
    leaf_density,
    norm_sub,
    refine_tree,
)
from dpdist.local.multi.pripl import PriPLTrees, pripl_ranges

TWO = [{"name": "x", "bounds": [0, 1]}, {"name": "y", "bounds": [-1, 1]}]


def _triangle(size=128, apex=40):
    v = np.arange(size, dtype=float)
    kink = apex + 0.5  # a kink between two bins: a continuous PL function with a half-integer breakpoint (eq. 2)
    h = 1.0 + np.minimum(v, kink) - (kink / (size - 1 - kink)) * np.maximum(v - kink, 0.0)
    return h / h.sum()


# ---------------------------------------------------------------------- Algorithm 1 (eqs. 2-6)
def test_design_matrix_is_the_continuous_pl_function_of_eq_2():
    breaks = np.array([0.0, 10.5, 20.5, 31.0])
    beta = np.array([2.0, 1.0, -3.0, 0.5])  # intercept and three slopes
    f = pl_design(breaks, 32) @ beta
    v = np.arange(32)
    expected = np.where(v <= 10.5, 2 + v, np.where(v <= 20.5, 2 + 10.5 - 3 * (v - 10.5), 2 + 10.5 - 30 + 0.5 * (v - 20.5)))
    np.testing.assert_allclose(f, expected)


def test_fit_finds_the_breakpoint_of_a_noise_free_triangle():
    h = _triangle()
    fit = fit_piecewise_linear(h, h, threshold=0.0, max_segments=4)
    # the first breakpoint found is the kink, 40.5, and the fit is exact from there on
    assert 40.5 in fit.breakpoints[1:-1]
    residual = pl_design(fit.breakpoints, h.size) @ np.concatenate([[fit.intercept], fit.slopes]) - h
    assert np.sum(residual**2) < 1e-8 * np.sum(h**2)


def test_fit_stops_at_max_segments_and_respects_the_threshold():
    rng = np.random.default_rng(0)
    noisy = _triangle(256) + rng.normal(0, 1e-3, 256)
    assert fit_piecewise_linear(noisy, noisy, threshold=0.0, max_segments=6).slopes.size <= 6
    # a segment lighter than the threshold is never split: with a threshold above 1 only the forced first split happens
    assert fit_piecewise_linear(noisy, noisy, threshold=1.01, max_segments=32).slopes.size == 2


# ---------------------------------------------------------------------- Algorithm 2 (eqs. 7-8)
def _fit(lefts, size):
    rights = np.concatenate([np.asarray(lefts[1:]) - 1, [size - 1]])
    return PLFit(np.concatenate([[0.0], rights[:-1] + 0.5, [size - 1.0]]), np.zeros(len(lefts)), 0.0)


@pytest.mark.parametrize("leaves", [2, 3, 5, 8, 13])
def test_every_band_partitions_the_domain_and_every_path_holds_all_users(leaves):
    size = 64
    shape = build_tree(_fit(np.linspace(0, size, leaves, endpoint=False).astype(int), size), size)
    for nodes in shape.band_nodes:
        lefts, rights = shape.lefts[nodes], shape.rights[nodes]
        assert lefts[0] == 0 and rights[-1] == size - 1 and np.all(lefts[1:] == rights[:-1] + 1)
    for leaf in shape.leaves:  # along the path root -> leaf, the nodes' user shares tile [0, 1)
        path, node = [], leaf
        while node >= 0:
            path.append(node)
            node = shape.parents[node]
        spans = sorted((shape.starts[k], shape.ends[k]) for k in path)
        assert spans[0][0] == 0 and spans[-1][1] == pytest.approx(1.0)
        assert all(a[1] == pytest.approx(b[0]) for a, b in zip(spans, spans[1:]))
    assert shape.bands[0] == 0 and shape.bands[-1] == pytest.approx(1.0)


def test_a_node_keeps_one_over_its_height_of_what_it_inherits():
    # root -> {1, 2}; 1 -> {3, 4}; 3 -> {5, 6}: heights 3 (node 1), 2 (node 3), 1 (leaves)
    parents = {0: -1, 1: 0, 2: 0, 3: 1, 4: 1, 5: 3, 6: 3}
    children = {0: [1, 2], 1: [3, 4], 3: [5, 6]}
    start, end = _allocation(parents, children)
    assert (start[1], end[1]) == (0.0, pytest.approx(1 / 3))
    assert (start[2], end[2]) == (0.0, 1.0)  # a leaf under the root takes everything
    assert (start[3], end[3]) == (pytest.approx(1 / 3), pytest.approx(2 / 3))
    assert (start[4], end[4]) == (pytest.approx(1 / 3), 1.0)
    assert (start[5], end[5]) == (pytest.approx(2 / 3), 1.0)


def test_node_reduction_never_raises_the_expected_error_of_eq_7():
    size = 256
    fit = _fit(np.array([0, 5, 9, 60, 61, 62, 200, 230, 250]), size)
    shape = build_tree(fit, size)
    # rebuild the unreduced balanced tree's error and compare with the reduced one's
    parents = {0: -1}
    children: dict[int, list[int]] = {}
    lefts, rights = {0: 0}, {0: size - 1}
    counter = [1]

    def grow(a, b, parent):
        for lo, hi in ((a, (a + b) // 2), ((a + b) // 2, b)) if b - a > 1 else ():
            node = counter[0]
            counter[0] += 1
            parents[node], lefts[node], rights[node] = parent, int(fit.lefts[lo]), int(fit.rights[hi - 1])
            children.setdefault(parent, []).append(node)
            if hi - lo > 1:
                grow(lo, hi, node)

    grow(0, fit.lefts.size, 0)
    full = _expected_error(parents, children, lefts, rights, size)
    reduced_parents = {0: -1, **{k + 1: (-1 if p < 0 else p + 1) for k, p in enumerate(shape.parents)}}
    reduced_parents = {k: (0 if p == -1 and k else p) for k, p in reduced_parents.items()}
    reduced_children: dict[int, list[int]] = {}
    for k, p in reduced_parents.items():
        if p >= 0:
            reduced_children.setdefault(p, []).append(k)
    reduced = _expected_error(reduced_parents, reduced_children, {0: 0, **{k + 1: int(v) for k, v in enumerate(shape.lefts)}},
                              {0: size - 1, **{k + 1: int(v) for k, v in enumerate(shape.rights)}}, size)
    assert reduced <= full + 1e-12
    assert len(shape.lefts) < len(parents) - 1  # some node was reduced on this skewed partition


# ---------------------------------------------------------------------- sec. 3.5 (eqs. 9-10, Algorithm 4)
def test_norm_sub_is_the_kkt_solution_of_eq_9():
    out = norm_sub(np.array([0.5, -0.2, 0.1, 0.4]), 0.6)
    assert out.sum() == pytest.approx(0.6) and np.all(out >= 0)
    positive = out > 0
    # the positive entries moved by one common shift, the others are zero
    shifts = out[positive] - np.array([0.5, -0.2, 0.1, 0.4])[positive]
    np.testing.assert_allclose(shifts, shifts[0])
    assert norm_sub(np.array([0.3, 0.2]), 0.0).tolist() == [0.0, 0.0]


def test_refinement_is_consistent_non_negative_and_its_slopes_keep_the_pl_function_non_negative():
    size = 64
    fit = PLFit(np.array([0.0, 15.5, 31.5, 47.5, 63.0]), np.array([1e-3, -5e-3, 2e-3, 0.0]), 0.0)
    shape = build_tree(fit, size)
    rng = np.random.default_rng(3)
    oracle = rng.normal(0.25, 0.05, shape.lefts.size) * (shape.rights - shape.lefts + 1) / 16
    refined = refine_tree(shape, oracle, np.full(shape.lefts.size, 1e-3), np.full(size, 1.0 / size), fit)
    f = refined.frequencies
    assert np.all(f >= 0)
    assert f[shape.parents < 0].sum() == pytest.approx(1.0)
    for node in range(shape.lefts.size):
        children = shape.children(node)
        if children.size:
            assert f[children].sum() == pytest.approx(f[node])
    widths = shape.rights[shape.leaves] - shape.lefts[shape.leaves] + 1
    bound = 2 * refined.leaf_frequencies / (widths * (widths - 1))
    assert np.all(np.abs(refined.slopes) <= bound + 1e-15)
    density = refined.density()
    assert np.all(density >= 0) and density.sum() == pytest.approx(1.0)
    assert np.all(refined.variances > 0) and np.all(refined.variances < 1e-3 * shape.lefts.size)


def test_algorithm_4_gives_the_variance_of_the_refined_leaves():
    # two leaves under the root: each leaf averages its oracle frequency with the SW mass (variance of SW by line 4),
    # then eq. 9 sets leaf i to (f_i - f_j) / 2 + 1/2, whose variance is (v_1 + v_2) / 4
    fit = PLFit(np.array([0.0, 31.5, 63.0]), np.zeros(2), 0.0)
    shape = build_tree(fit, 64)
    oracle, oracle_var = np.array([0.3, 0.7]), np.array([1e-3, 2e-3])
    refined = refine_tree(shape, oracle, oracle_var, np.full(64, 1 / 64), fit)
    sw_var = 0.2**2 - oracle_var
    averaged_var = sw_var * oracle_var / (sw_var + oracle_var)
    theta = oracle_var / (sw_var + oracle_var)
    averaged = theta * 0.5 + (1 - theta) * oracle
    np.testing.assert_allclose(refined.leaf_frequencies, averaged - (averaged.sum() - 1) / 2)
    np.testing.assert_allclose(refined.leaf_variances, averaged_var.sum() / 4)


def test_eq_1_sums_a_leaf_to_its_frequency_and_tilts_it_by_its_slope():
    density = leaf_density(np.array([0, 4]), np.array([3, 9]), np.array([0.4, 0.6]), np.array([0.02, -0.01]), 10)
    assert density[:4].sum() == pytest.approx(0.4) and density[4:].sum() == pytest.approx(0.6)
    np.testing.assert_allclose(np.diff(density[:4]), 0.02)
    assert clip_slopes(np.array([1.0, -1.0]), np.array([0.4, 0.6]), np.array([4, 6])).tolist() == [
        pytest.approx(2 * 0.4 / 12), pytest.approx(-2 * 0.6 / 30)]


# ---------------------------------------------------------------------- sec. 4.2-4.3 (Algorithm 3)
def _peaked(size=64):
    v = np.arange(size)
    d = np.exp(-0.5 * ((v - 20) / 3.0) ** 2) + 0.05
    return d / d.sum()


def test_grid_partition_splits_dense_cells_merges_sparse_ones_and_forms_blocks():
    density = _peaked()
    leaves = np.array([0, 16, 24, 32, 48])
    fine = adaptive_partition((density, density), (leaves, leaves), noise_variance=1e-7, eta=0.04)
    coarse = adaptive_partition((density, density), (leaves, leaves), noise_variance=1.0, eta=0.04)
    assert fine[0].size > leaves.size  # little noise: the dense leaf 16..23 is split
    assert coarse[0].size < leaves.size  # a lot of noise: sparse leaves merged
    assert coarse[0].size * coarse[1].size >= 2  # but a grid keeps two cells (an oracle needs two items)
    for cells in (*fine, *coarse):
        assert cells[0] == 0 and np.all(np.diff(cells) > 0)
        leaf_block, cell_block = blocks(leaves, cells)
        for block in range(leaf_block.max() + 1):  # one leaf <-> many cells or many leaves <-> one cell
            assert min((leaf_block == block).sum(), (cell_block == block).sum()) == 1


def test_leaf_update_is_the_inverse_variance_average_of_a_block():
    f, v = update_leaves(np.array([0.3, 0.2, 0.5]), np.array([1.0, 1.0, 2.0]), np.array([0, 4, 8]),
                         np.array([0.6, 0.4]), np.array([2.0, 2.0]), np.array([0, 8]))
    # block 0: leaves 0, 1 (total 0.5, variance 2) against the cell 0.6 (variance 2): the average 0.55
    assert f[:2].sum() == pytest.approx(0.55) and f[2] == pytest.approx(0.5 * 2 / 4 + 0.4 * 2 / 4)
    assert v[2] == pytest.approx(1.0) and v[:2].sum() < 2.0


def test_grid_fitted_to_leaves_and_response_matrix_meet_their_constraints():
    rng = np.random.default_rng(1)
    cells = (np.array([0, 8, 12]), np.array([0, 16]))
    table = rng.uniform(0.0, 0.3, (3, 2))
    leaves = (np.array([0, 8]), np.array([0, 16]))
    targets = (np.array([0.6, 0.4]), np.array([0.3, 0.7]))
    fitted = fit_grid_to_leaves(table, targets, leaves, cells)
    np.testing.assert_allclose([fitted[0].sum(), fitted[1:].sum()], targets[0], atol=1e-9)
    np.testing.assert_allclose(fitted.sum(axis=0), targets[1], atol=1e-9)
    rows, columns = _peaked(32), np.full(32, 1 / 32)
    rows_table = np.array([rows[:8].sum(), rows[8:12].sum(), rows[12:].sum()])
    matrix = response_matrix(rows, columns, np.outer(rows_table, [0.5, 0.5]), cells)
    np.testing.assert_allclose(matrix.sum(axis=1), rows, atol=1e-8)
    np.testing.assert_allclose(matrix.sum(axis=0), columns, atol=1e-8)


# ---------------------------------------------------------------------- the plan
def test_the_plan_splits_users_as_sec_4_1_says_and_each_reports_once():
    plan = PriPLTrees(epsilon=1.0, attributes=[*TWO, {"name": "z", "bounds": [0, 5]}], resolution=64)
    sizes = plan.split(30_000)
    assert sizes["tree:x"] == 30_000 // 6 and sizes["sw:x"] == int(0.2 * 5_000)
    assert sum(v for k, v in sizes.items() if not k.startswith("sw:")) == 30_000
    assert plan.guarantee.epsilon == 1.0 and plan.rounds == 3
    single = PriPLTrees(epsilon=1.0, attributes=TWO[:1]).split(1000)
    assert single == {"tree:x": 1000, "sw:x": 200} and PriPLTrees(epsilon=1.0, attributes=TWO[:1]).rounds == 2


def test_a_group_maps_values_to_the_items_of_its_cuts():
    plan = PriPLTrees(epsilon=1.0, attributes=TWO, resolution=16)
    rng = np.random.default_rng(0)
    records = {"x": rng.beta(2, 5, 4000), "y": rng.uniform(-1, 1, 4000)}
    history = []
    for r in range(plan.rounds):
        groups = plan.protocols(r, history, 4000)
        aggregates = {}
        for group in groups:
            columns = [records["x"][:group.users], records["y"][:group.users]]
            inputs = group.inputs(columns, [(0, 1), (-1, 1)], 16)
            if group.cuts is not None:
                items = 1
                for cuts in group.cuts:
                    items *= cuts.size + 1
                assert group.protocol.domain_size == items and inputs.max() < items
            aggregates[group.name] = group.protocol.simulate(inputs, rng=rng)
        history.append(aggregates)
    grid = plan.protocols(2, history[:2], 4000)[0]
    x, y = np.array([0.0, 0.999, 0.5]), np.array([-1.0, 0.999, 0.0])
    bins_x, bins_y = np.minimum((x * 16).astype(int), 15), np.minimum(((y + 1) / 2 * 16).astype(int), 15)
    expected = np.searchsorted(grid.cuts[0], bins_x, side="right") * (grid.cuts[1].size + 1) + np.searchsorted(
        grid.cuts[1], bins_y, side="right")
    np.testing.assert_array_equal(grid.inputs([x, y], [(0, 1), (-1, 1)], 16), expected)
    release = plan.estimate(history, 4000)
    assert release.n == sum(agg.n for groups in history for agg in groups.values())


@pytest.mark.slow  # 0.28 CPU-s: a large simulated release
def test_release_is_close_to_the_truth_where_the_oracle_noise_is_small():
    # eps = 20: OUE keeps a 1 with probability 1/2 and flips a 0 with e^-20, so a frequency's standard error is at most
    # sqrt(1 / n_group) (binomial sampling of the halves); with n = 60,000 a node's is below 0.02 / 4.
    rng = np.random.default_rng(7)
    n = 60_000
    group = rng.random(n) < 0.4
    x = np.where(group, rng.normal(0.25, 0.05, n), rng.normal(0.7, 0.1, n)).clip(0, 1)
    y = np.where(group, rng.normal(-0.5, 0.1, n), rng.normal(0.4, 0.2, n)).clip(-1, 1)
    release = pripl_ranges({"x": x, "y": y}, epsilon=20.0, attributes=TWO, rng=8, resolution=64)
    assert release.guarantee.epsilon == 20.0 and release.epsilon == 20.0
    for (a, b), (c, d) in itertools.product([(0.0, 0.5), (0.2, 0.8), (0.5, 1.0)], [(-1.0, 0.0), (-0.6, 0.6)]):
        truth = np.mean((x >= a) & (x <= b) & (y >= c) & (y <= d))
        assert release.range({"x": (a, b), "y": (c, d)}).estimate == pytest.approx(truth, abs=0.03)
    assert release.range({"x": (0.0, 0.5)}).estimate == pytest.approx(np.mean(x <= 0.5), abs=0.02)
    marginal = release.marginal("x")
    assert marginal.probabilities.sum() == pytest.approx(1.0) and marginal.bounds == (0.0, 1.0)
    again = pripl_ranges({"x": x, "y": y}, epsilon=20.0, attributes=TWO, rng=8, resolution=64)
    np.testing.assert_array_equal(again.histograms[0], release.histograms[0])


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs, named", [
    ({"epsilon": -1.0}, "epsilon"),
    ({"epsilon": math.inf}, "epsilon"),
    ({"attributes": [{"name": "c", "domain_size": 3}]}, "'c'"),
    ({"attributes": []}, "attributes"),
    ({"resolution": 4}, "resolution"),
    ({"resolution": 4096}, "resolution"),
    ({"alpha": 1.0}, "alpha"),
    ({"eta": 0.0}, "eta"),
    ({"max_segments": 1}, "max_segments"),
    ({"oracle": "grr"}, "oracle"),
])
def test_bad_parameters_raise_naming_the_argument(kwargs, named):
    with pytest.raises(DPDistError, match=named):
        PriPLTrees(**{"epsilon": 1.0, "attributes": TWO, **kwargs})


def test_a_tiny_population_still_gets_a_grid_of_two_cells():
    rng = np.random.default_rng(2)
    release = pripl_ranges({"x": rng.uniform(0, 1, 40), "y": rng.uniform(-1, 1, 40)}, epsilon=1.0, attributes=TWO, rng=3)
    cells = release.details["grids"]["x,y"]
    assert len(cells[0]) * len(cells[1]) >= 2 and release.n == 40


def test_bad_rounds_and_queries_raise_naming_the_argument():
    plan = PriPLTrees(epsilon=1.0, attributes=TWO, resolution=16)
    with pytest.raises(InvalidParameterError, match="history"):
        plan.protocols(1, "not a list", 1000)
    with pytest.raises(InvalidParameterError, match="round 1 needs"):
        plan.protocols(1, [], 1000)
    with pytest.raises(InvalidParameterError, match="round_index"):
        plan.protocols(5, [], 1000)
    with pytest.raises(InvalidParameterError, match="'n'"):
        plan.split(3)
    with pytest.raises(InvalidParameterError, match="all 3 rounds"):
        plan.estimate([{}])
    rng = np.random.default_rng(0)
    release = plan.run({"x": rng.uniform(0, 1, 3000), "y": rng.uniform(-1, 1, 3000)}, rng=1)
    with pytest.raises(InvalidParameterError, match="'z'"):
        release.range({"z": (0, 1)})
    with pytest.raises(InvalidParameterError, match="low <= high"):
        release.range({"x": (0.5, 0.2)})
    with pytest.raises(InvalidParameterError, match="ranges"):
        release.range({})
    with pytest.raises(DPDistError, match="values"):
        plan.run({"x": [0.5, 2.0] * 1000, "y": [0.0, 0.0] * 1000}, rng=1, clip=False)


def test_clipping_warns_with_the_count_and_refuses_a_missing_value_unless_asked():
    """7.0, +inf, -inf and NaN were clipped silently; now one ClippedValuesWarning counts the three
    values outside (as HDG's and SW's clip=True), clip=False refuses each, and in-bounds records warn nothing.
    NaN became the lower bound (all-NaN records answered ranges); now it is refused, or its record left
    out with missing="drop"."""
    plan = PriPLTrees(epsilon=1.0, attributes=TWO, resolution=16)
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0, 1, 2000), rng.uniform(-1, 1, 2000)
    with warnings.catch_warnings():  # nothing said of the values (the release's own caution at n = 2,000 aside)
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", SmallSampleWarning)
        plan.run({"x": x, "y": y}, rng=1)
    bad_x = np.r_[x[:-3], 7.0, np.inf, 0.5]
    bad_y = np.r_[y[:-1], -np.inf]
    with pytest.warns(ClippedValuesWarning, match="PriPLTrees.run: 3 numerical value"):
        plan.run({"x": bad_x, "y": bad_y}, rng=1)
    for column in ({"x": bad_x, "y": y}, {"x": x, "y": bad_y}):
        with pytest.raises(DPDistError):
            plan.run(column, rng=1, clip=False)
    with pytest.raises(MissingValuesError, match=r"has 1 record\(s\) with a missing value .* among 2000"):
        plan.run({"x": np.r_[np.nan, x[1:]], "y": y}, rng=1)
    with pytest.warns(MissingValuesWarning):
        dropped = plan.run({"x": np.r_[np.nan, x[1:]], "y": y}, rng=1, missing="drop")
    kept = plan.run({"x": x[1:], "y": y[1:]}, rng=1)
    assert np.array_equal(dropped.histograms[0], kept.histograms[0]) and dropped.n == kept.n == 1999
    assert any("a user without a value sent no report" in note for note in dropped.notes())


def test_a_release_from_too_few_users_says_so_from_its_own_noise():
    """A range from 50 users (0.82, truth about 0.49) came with no caution.  The caution is computed from
    the oracles' variances at the groups' sizes (public), so it is the same for any data of that n."""
    rng = np.random.default_rng(3)
    plan = PriPLTrees(epsilon=1.0, attributes=[{"name": "x", "bounds": [0, 1]}, {"name": "y", "bounds": [0, 1]}],
                      resolution=32)
    with pytest.warns(SmallSampleWarning, match="at n = 50 the oracles' noise alone has a standard deviation of about"):
        thin = plan.run({"x": rng.random(50), "y": rng.random(50)}, rng=1)
    assert thin.details["range_noise_sd"] > 0.2 and any(note.startswith("too few reports") for note in thin.notes())
    assert any(note.startswith("too few reports") for note in RangeEstimate.from_dict(thin.to_dict()).notes())
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        plenty = plan.run({"x": rng.random(30_000), "y": rng.random(30_000)}, rng=1)
    assert plenty.details["range_noise_sd"] < 0.1 and not any("too few" in note for note in plenty.notes())
