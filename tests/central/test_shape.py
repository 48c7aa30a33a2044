"""The data-adaptive shape of the tree CDF (a coarse noisy histogram picks branching and height)."""

import math

import numpy as np
import pytest

from dpdist import central
from dpdist.central import _shape
from dpdist.central.tree import TreeHistogram
from dpdist.errors import InvalidParameterError
from dpdist.postprocess import hay_consistency
from dpdist.privacy import PrivacyGuarantee, sequential


@pytest.mark.parametrize("branching, height", [(64, 1), (16, 2), (8, 3), (17, 2), (12, 3), (5, 3)])
def test_noise_factor_matches_the_consistent_tree(branching, height):
    # E max_k |cumulative noise_k - (k/L) total noise| of Laplace(1) nodes through Hay's consistency
    rng = np.random.default_rng(7)
    leaves = branching**height
    draws = []
    for _ in range(400):
        levels = [None] + [rng.laplace(0.0, 1.0, branching**level) for level in range(1, height + 1)]
        levels[0] = np.array([levels[1].sum()])
        cumulative = np.concatenate([[0.0], np.cumsum(hay_consistency(levels, branching)[-1])])
        draws.append(np.max(np.abs(cumulative - np.arange(leaves + 1) / leaves * cumulative[-1])))
    mean, se = np.mean(draws), np.std(draws, ddof=1) / math.sqrt(len(draws))
    # the fit is within 7% on b = 2..64, L <= 2^16; 4 standard errors for the Monte-Carlo draw
    assert abs(_shape.noise_factor(branching, height) - mean) <= 0.07 * mean + 4 * se


def test_curvature_interpolation_passes_through_the_reference_models():
    for concentration, curvature in (_shape.SMOOTH_REFERENCE, _shape.SKEWED_REFERENCE):
        assert _shape.curvature_from_concentration(concentration) == pytest.approx(curvature)
    assert _shape.curvature_from_concentration(0.5) == _shape.curvature_from_concentration(1.0)  # at least uniform


def test_rule_is_shallow_for_smooth_and_deep_for_concentrated_data():
    smooth = _shape.best_shape(10**5, 1.0, 3.06)
    skewed = _shape.best_shape(10**5, 1.0, 13.96)
    # (any integer branching is a candidate now, so the smooth optimum is 11^3 = 1331, no longer
    # the power of two 1024 just below it)
    assert smooth[0] ** smooth[1] <= 2048 < 4096 <= skewed[0] ** skewed[1]
    # more budget or data: never fewer leaves
    leaves = [b**h for b, h in (_shape.best_shape(n, 1.0, 13.96) for n in (10**3, 10**4, 10**5, 10**6))]
    assert leaves == sorted(leaves)
    # a given branching is kept
    assert _shape.best_shape(10**5, 1.0, 13.96, branching=4)[0] == 4
    assert _shape.best_shape(10**5, 1.0, 3.06, branching=10) in {(10, 2), (10, 3), (10, 4)}


def test_leaf_floor_where_the_profile_is_blind_heaps_at_every_size():
    from dpdist.central.tree import LARGE_SIZE, leaf_floor

    assert leaf_floor(LARGE_SIZE / 2, 1.0, 16.0, 16) == 0.0  # below the size: the model alone, without ties
    assert leaf_floor(10**4, 1.0, 3.0, 16, heaped=True) == 10**4 / 32  # ties: at every size
    assert leaf_floor(10**6, 1.0, 15.9, 16) == 10**6 / 4  # nearly all in one bin of a wider range
    assert leaf_floor(10**6, 1.0, 16.0, 1) == 0.0  # the tree covers that bin alone: the model sees it
    assert leaf_floor(10**6, 1.0, 3.0, 16) == 0.0  # smooth, no ties
    assert leaf_floor(10**6, 1.0, 3.0, 16, heaped=True) == 10**6 / 32
    # the floor is obeyed (the model's best above it), or the most leaves there are
    branching, height = _shape.best_shape(10**6, 1.0, 3.0, min_leaves=2.5e5)
    assert branching**height >= 2.5e5 and _shape.best_shape(10**6, 1.0, 3.0)[1] == 3
    most = _shape.best_shape(10**6, 1.0, 3.0, min_leaves=1e9)
    assert most[0] ** most[1] == 2**20


def test_heavy_tail_at_a_loose_bound_gets_a_fine_tree_at_large_size():
    rng = np.random.default_rng(5)
    x = np.clip(10_000 * (1 + rng.pareto(1.2, 10**6)), 0, 1e7)  # 99% in the first of the profile's 16 bins
    tree = TreeHistogram.release(x, 1.0, (0, 1e7), rng=0)
    assert tree.releases[0]["profile"]["concentration"] >= 15 and tree.branching**tree.height >= 0.9e6 / 4


def test_default_quantiles_on_heaped_data_get_a_finer_tree_at_large_size():
    rng = np.random.default_rng(6)
    x = np.round(rng.lognormal(np.log(45_000), 0.7, 10**6), -3)  # whole thousands: nearly every record tied
    release = central.quantiles(x, epsilon=1.0, bounds=(0, 300_000), rng=1)
    assert release.details["releases"][0]["choice"]["method"] == "tree"
    branching, height = _shape.best_shape(10**6, 0.9, 3.0)  # the model alone, on smooth data of this size
    assert release.details["leaves"] >= 0.9e6 / 32 > branching**height


def test_release_picks_the_shape_from_the_data():
    rng = np.random.default_rng(3)
    normal = TreeHistogram.release(np.clip(rng.normal(size=10**5), -4, 4), 1.0, (-4, 4), rng=0)
    lognormal = TreeHistogram.release(np.clip(rng.lognormal(0, 1, 10**5), 0, 50), 1.0, (0, 50), rng=0)
    assert normal.branching**normal.height <= 2048  # 11^3 = 1331 (any integer branching)
    assert normal.releases[0]["profile"]["concentration"] < 4
    # the lognormal's far tail holds too little to keep its bins: the tree covers the first few, with leaves as fine
    # as 2048 over the whole range at least
    assert lognormal.bounds[0] == 0 and lognormal.bounds[1] <= 50 / 2 and lognormal.public_bounds == (0.0, 50.0)
    assert (lognormal.bounds[1] - lognormal.bounds[0]) / lognormal.branching**lognormal.height <= 50 / 2048


def test_zoom_keeps_the_bins_that_hold_the_data():
    sigma = 28.0
    counts = np.array([3.0, -20, 5, 4000, 5000, 900, 60, 10, -5, 8, 0, -30, 12, 3, 1, -2])
    first, last = _shape.zoom_bins(counts, sigma, counts.sum())
    assert (first, last) == (3, 5)  # the left three hold ~0, the right ten 57 records: both within the noise of 0
    # nothing to leave out at a small n (the noise of the outer bins' sum is above 5% of it) or with data everywhere
    assert _shape.zoom_bins(counts / 10, sigma, counts.sum() / 10) == (0, 15)
    assert _shape.zoom_bins(np.full(16, 1000.0), sigma, 16000.0) == (0, 15)
    assert _shape.zoom_bins(np.r_[np.zeros(15), 10000.0], sigma, 10000.0) == (15, 15)  # at least one bin
    # a first bin of 4.9% of a large n is data, not noise: kept, though within 5% of n (Beta(2, 5) on [0, 1])
    assert _shape.zoom_bins(np.r_[9800.0, np.full(15, 12680.0)], sigma, 200_000.0) == (0, 15)


def test_zoomed_tree_counts_the_values_outside_in_cells_of_their_own_and_states_the_bounds_asked_for():
    x = np.random.default_rng(8).normal(50, 10, 20_000)
    tree = TreeHistogram.release(x, 1.0, (-1000, 1000), rng=1)
    assert tree.public_bounds == (-1000.0, 1000.0) and tree.bounds == (0.0, 125.0)
    assert tree.releases[0]["profile"]["zoom"] == [0.0, 125.0] and tree.releases[0]["bounds"] == [-1000.0, 1000.0]
    distribution = tree.to_distribution()
    assert (distribution.edges[0], distribution.edges[-1]) == (-1000.0, 1000.0)
    # none of the records lies beyond: the cells hold their noise alone, Laplace of scale 1 / 0.76 (sd 1.9 records)
    assert distribution.cdf(-0.001) <= 10 / x.size and distribution.cdf(125.0) >= 1 - 10 / x.size
    release = central.quantiles(x, [0.001, 0.5, 0.999], epsilon=1.0, bounds=(-1000, 1000), rng=1)
    assert release.details["bounds"] == [-1000.0, 1000.0]
    # 50 records at 900 (0.25%) are counted beyond the tree, not at its edge: the 0.999-quantile lies beyond it, and
    # its interval reaches the bound asked for
    far = central.quantiles(np.r_[x, np.full(50, 900.0)], [0.999], epsilon=1.0, bounds=(-1000, 1000), rng=1)
    assert far.values[0] > 125.0 and far.high[0] == 1000.0


def test_outside_cells_are_released_at_the_tree_budget_with_sensitivity_one():
    # 40 records far below (few enough for the profile to read their bins as empty): the tree starts at 0
    x = np.r_[np.random.default_rng(9).normal(50, 10, 20_000), np.full(40, -900.0)]
    errors = []
    for seed in range(20):
        tree = TreeHistogram.release(x, 1.0, (-1000, 1000), rng=seed)
        release = tree.releases[0]
        if tree.bounds[0] == 0.0:
            errors.append((release["outside"][0] - 40) * release["tree_epsilon"])  # in Laplace scales 1 / tree_epsilon
        # a record lies in the tree or in one cell: the guarantee is the profile's, the tree's and the refinement's
        steps = [release["profile"]["epsilon"], release["tree_epsilon"], release["refinement"]["epsilon"]]
        assert tree.epsilon == pytest.approx(1.0) and sum(steps) == pytest.approx(1.0)
    # |Laplace| / scale has mean 1 and sd 1: within 3 standard errors of the mean (the sensitivity 1 of a cell)
    assert len(errors) >= 15 and abs(np.mean(np.abs(errors)) - 1.0) <= 3 / np.sqrt(len(errors))


def test_a_tree_zoomed_on_one_side_carries_its_band_to_the_bounds_asked_for():
    x = np.random.default_rng(10).exponential(10.0, 20_000)
    tree = TreeHistogram.release(x, 1.0, (0, 1000), rng=0)
    assert tree.bounds[0] == 0.0 and tree.bounds[1] < 1000.0 and tree.releases[0]["outside"][0] == 0
    edges, cdf = tree.leaf_cdf()
    assert edges[0] == 0.0 and edges[-1] == 1000.0 and np.all(np.diff(edges) > 0) and cdf[-1] == 1.0
    band = tree.to_distribution(level=0.9).band
    assert band.edges.size == edges.size and np.all(np.diff(band.edges) >= 0) and band.edges[-1] == 1000.0


@pytest.mark.parametrize("neighbouring, sensitivity", [("add-remove", 1.0), ("replace", 2.0)])
def test_privacy_of_the_composed_release_is_exact(neighbouring, sensitivity):
    x = np.random.default_rng(4).beta(2, 5, 3000)
    tree = TreeHistogram.release(x, 0.8, (0, 1), neighbouring=neighbouring, rng=0)
    release = tree.releases[0]
    profile, refinement = release["profile"], release["refinement"]
    assert profile["epsilon"] == pytest.approx(0.05 * 0.8)
    assert release["tree_epsilon"] == pytest.approx(0.8 * 0.95 * 0.8)  # 3000 records at 0.8: a fifth to the refinement
    assert refinement["epsilon"] == pytest.approx(0.2 * 0.95 * 0.8)
    assert profile["sensitivity_l1"] == sensitivity and refinement["sensitivity_l1"] == 2 * sensitivity
    steps = [PrivacyGuarantee(epsilon, 0.0, neighbouring, "central")
             for epsilon in (profile["epsilon"], release["tree_epsilon"], refinement["epsilon"])]
    assert sequential(steps).epsilon == pytest.approx(0.8, rel=1e-12, abs=0) and sequential(steps).epsilon <= 0.8 * (1 + 1e-12)
    assert tree.guarantee == PrivacyGuarantee(release["epsilon"], 0.0, neighbouring, "central")
    assert tree.to_distribution().guarantee.epsilon == pytest.approx(0.8)
    assert ("noisy_n" in profile) == (neighbouring == "add-remove")  # under replacement n is public
    # the profile's l1 sensitivity: one record moves one coarse count (add/remove) or two (replace)
    rng = np.random.default_rng(5)

    def coarse(values):
        return np.bincount(np.minimum((values * 16).astype(int), 15), minlength=16)

    for _ in range(50):
        y = np.append(x, rng.random()) if neighbouring == "add-remove" else np.where(np.arange(x.size) == 7, rng.random(), x)
        assert np.abs(coarse(x) - coarse(y)).sum() <= sensitivity


def test_given_height_spends_the_whole_budget_on_the_tree():
    tree = TreeHistogram.release(np.linspace(0, 1, 500), 1.0, (0, 1), height=2, rng=0)
    assert (tree.branching, tree.height) == (16, 2)
    assert "profile" not in tree.releases[0] and tree.releases[0]["tree_epsilon"] == 1.0


def test_size_rule_is_kept_as_an_option():
    tree = TreeHistogram.release(np.linspace(0, 1, 1000), 1.0, (0, 1), rule="size", rng=0)
    assert tree.releases[0]["size"]["epsilon"] == pytest.approx(0.05) and tree.height >= 2


def test_bad_rule_is_named():
    with pytest.raises(InvalidParameterError, match=r"'rule' parameter of tree_cdf.*'adaptive', 'size'.*'flat'"):
        central.tree_cdf(np.linspace(0, 1, 100), 1.0, (0, 1), rule="flat")
    with pytest.raises(InvalidParameterError, match="branching"):
        central.tree_cdf(np.linspace(0, 1, 100), 1.0, (0, 1), branching=1)
