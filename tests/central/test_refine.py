"""The refinement of a tree's heavy leaves: its noise law and sensitivity, its reading, and what it does to quantiles."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from dpdist import central
from dpdist.central import _refine
from dpdist.central.noise import _dyadic_epsilon
from dpdist.central.tree import TreeHistogram


def _data(x, seed=0):
    return SimpleNamespace(x=np.asarray(x, dtype=np.float64), bounds=(0.0, 1.0), rng=np.random.default_rng(seed))


def _exact_levels(x, masses):
    """The refinement's counts without noise (an epsilon so large that the discrete Laplace draws are all 0)."""
    return _refine.release_refinement(_data(x), masses, 1e9, "add-remove").levels


def test_refinement_noise_is_discrete_laplace_of_scale_height_over_its_epsilon():
    # epsilon = 0.3 is not dyadic: P(z) ∝ exp(-|z| eps' / h) on the integers, eps' = floor(eps 2^20) / 2^20
    x = np.random.default_rng(0).random(2000)
    masses = np.full(8, 250.0)  # 8 leaves, every one heavy enough to be refined
    exact = np.concatenate([level.ravel() for level in _exact_levels(x, masses)])
    noise = np.concatenate([
        np.concatenate([level.ravel() for level in _refine.release_refinement(_data(x, seed), masses, 0.3,
                                                                              "add-remove").levels]) - exact
        for seed in range(20)])
    a = float(_dyadic_epsilon(0.3)) / _refine.SUB_HEIGHT
    support = np.arange(-12, 13)
    pmf = np.exp(-a * np.abs(support)) * (1 - math.exp(-a)) / (1 + math.exp(-a))
    observed = np.array([(noise == z).mean() for z in support])
    # every cell within 5 standard errors of its exact probability (43,520 draws)
    assert np.all(np.abs(observed - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / noise.size))
    variance = 2 * math.exp(-a) / (1 - math.exp(-a)) ** 2
    assert abs(noise.var() - variance) < 5 * math.sqrt(5 / noise.size) * variance
    release = _refine.release_refinement(_data(x), masses, 0.3, "replace")
    assert release.noise_scale == pytest.approx(2 * _refine.SUB_HEIGHT / 0.3)  # one replacement moves two records


def test_one_record_moves_the_refinement_by_its_height_at_most():
    # the refined leaves are chosen from the released masses alone; inside them a record lies in one node per level
    rng = np.random.default_rng(1)
    x = rng.random(3000)
    masses = np.array([600.0, 0.0, 600.0, 600.0])  # the second leaf is too light to be refined
    before = _exact_levels(x, masses)
    assert _refine.release_refinement(_data(x), masses, 1.0, "add-remove").leaves.tolist() == [0, 2, 3]
    for value in np.r_[rng.random(40), 0.0, 0.25, 0.5, 1.0]:
        after = _exact_levels(np.append(x, value), masses)
        moved = sum(int(np.abs(a - b).sum()) for a, b in zip(after, before))
        assert moved == (0 if 0.25 <= value < 0.5 else _refine.SUB_HEIGHT)


def test_refine_share_spends_nothing_on_small_data_and_less_on_large():
    assert _refine.refine_share(1000, 1.0) == 0.0
    assert _refine.refine_share(10_000, 1.0) == _refine.REFINE_SHARE
    assert _refine.refine_share(100_000, 1.0) == pytest.approx(0.05)
    assert _refine.refine_share(10**7, 1.0) == _refine.REFINE_FLOOR


def test_smooth_leaves_keep_the_linear_reading():
    used = refined = 0
    for seed in range(4):
        x = np.random.default_rng(seed).random(100_000)
        tree = TreeHistogram.release(x, 1.0, (0, 1), rng=seed)
        edges, cdf = tree.leaf_cdf()
        total = tree.consistent_leaves()[1]
        flags = _refine.refined_masses(tree.refinement, np.diff(cdf) * total)[1]
        used, refined = used + int(flags.sum()), refined + flags.size
    # a leaf reads its sub-tree only where a child or a trend stands out: with uniform data only by noise, FALSE_FINDS
    # children and FALSE_FINDS trends a release in expectation (the trend's bound up to 5x loose: 0.06 a release at
    # most), 0.24 in four; more than 3 has a probability below 0.05% (Poisson)
    assert refined > 1000 and used <= 3


def test_atoms_inside_heavy_leaves_are_found_within_a_sub_leaf():
    atoms = np.array([12_345.0, 20_011.0, 31_700.0, 40_404.0, 52_000.0])  # at no leaf edge
    shares = np.array([0.15, 0.22, 0.26, 0.21, 0.16])  # every decile inside an atom, 0.03 or more from its edges
    x = np.repeat(atoms, (shares * 20_000).astype(int))
    truth = np.quantile(x, np.linspace(0.1, 0.9, 9), method="inverted_cdf")
    for seed in range(5):
        tree = TreeHistogram.release(x, 1.0, (0, 100_000), rng=seed)
        width = (tree.bounds[1] - tree.bounds[0]) / tree.branching**tree.height / _refine.SUB_BRANCHING**_refine.SUB_HEIGHT
        values = central.quantiles(x, epsilon=1.0, bounds=(0, 100_000), rng=seed).values
        assert np.all(np.abs(values - truth) <= width), (seed, values, truth)


def test_merged_trees_keep_no_refinement():
    x = np.random.default_rng(2).random(20_000)
    tree = TreeHistogram.release(x, 1.0, (0, 1), rng=0)
    assert tree.refinement is not None
    merged = tree + TreeHistogram.release(x, 1.0, (0, 1), rng=1, branching=tree.branching, height=tree.height)
    assert merged.refinement is None and merged.releases[0]["refinement"]["epsilon"] > 0


@pytest.mark.parametrize("n, bound", [(5000, 300_000), (10_000, 2_500_000)])
@pytest.mark.slow  # 1.3 CPU-s: coverage over repeated releases
def test_tree_intervals_cover_the_empirical_quantiles_of_heaped_data(n, bound):
    # incomes at round thousands with a few big round sums: rank-to-value is a jump at each atom; the intervals cover
    # the data's own deciles (inverted_cdf) at 95% or more, pooled over 9 deciles and 40 runs, within 3 binomial sds
    rng = np.random.default_rng(9)
    q = np.linspace(0.1, 0.9, 9)
    covered = total = zoomed = 0
    for seed in range(40):
        incomes = rng.lognormal(math.log(45_000), 0.7, n)
        unit = np.where(rng.random(n) < 0.3, 10_000.0, 1000.0)
        x = np.minimum(np.round(incomes / unit) * unit, bound)
        release = central.quantiles(x, q, epsilon=1.0, bounds=(0, bound), rng=seed)
        zoomed += "zoom" in release.details["releases"][0]["profile"]
        truth = np.quantile(x, q, method="inverted_cdf")
        covered += int(np.sum((release.low <= truth) & (truth <= release.high)))
        total += q.size
    assert covered / total >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / total), covered / total
    assert bound < 10**6 or zoomed >= 30  # with the loose bound the tree's range is zoomed (the noise may stop it)


def test_an_atom_the_tree_reads_is_refined_below_the_heavy_leaves_mass():
    """A leaf whose released mass stands above both neighbours by more than the sub-tree's FOLLOW noise sds is refined
    (the reading follows its atom down the sub-tree), though lighter than the blind search's heavy leaves; a leaf as
    heavy as its neighbours is not."""
    x = np.random.default_rng(2).random(1000)
    scale = _refine.SUB_HEIGHT / 1.0  # the sub-tree's Laplace scale at epsilon 1
    heavy = _refine.SIGNIFICANCE * np.sqrt(2.0) * scale  # 11.3 records
    masses = np.array([2.0, 2.0, 9.0, 2.0, 2.0, 9.0, 9.0, 9.0])  # leaf 2: 7 above both neighbours, 5 sds of a sub-node
    assert masses.max() < heavy
    assert _refine.release_refinement(_data(x), masses, 1.0, "add-remove").leaves.size == 0
    refined = _refine.release_refinement(_data(x), masses, 1.0, "add-remove", leaf_sd=0.1).leaves.tolist()
    assert refined == [2]
