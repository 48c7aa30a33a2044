"""The tree CDF reads mass above both neighbouring leaves as an atom of unknown position."""

import numpy as np
import pytest

from dpdist import metrics
from dpdist.central import _atoms
from dpdist.central.tree import TreeHistogram
from dpdist.estimates import Distribution


def test_atoms_are_the_mass_above_both_neighbours_beyond_the_noise():
    masses = np.array([5.0, 10.0, 100.0, 12.0, 13.0, 14.0, 200.0])
    atoms = _atoms.atom_masses(masses, noise_sd=1.0)
    margin = 3.0 * np.sqrt(2.0)
    assert atoms[2] == pytest.approx(100.0 - 12.0 - margin)
    assert np.all(atoms[[1, 3, 4, 5]] == 0)  # below a neighbour, or a smooth rise
    assert atoms[0] == atoms[-1] == 0  # the end leaves keep the linear reading
    assert np.all(_atoms.atom_masses(np.linspace(1, 50, 40), 0.0) == 0)  # a rising density has none
    assert np.all(_atoms.atom_masses(np.array([10.0, 13.0, 10.0]), 1.0) == 0)  # a bump within the noise margin


def test_atom_aware_cdf_keeps_the_leaf_edges_and_splits_the_atom():
    edges = np.linspace(0.0, 4.0, 5)
    cdf = np.array([0.0, 0.1, 0.7, 0.9, 1.0])
    atoms = np.array([0.0, 0.4, 0.0, 0.0])
    x, f, held = _atoms.atom_aware_cdf(edges, cdf, atoms)
    assert np.interp(held, x, f) == pytest.approx(cdf)
    assert np.all(np.diff(x) > 0) and np.all(np.diff(f) >= 0)
    width = _atoms.JUMP_WIDTH
    assert np.interp(edges[1:] - width, x, f) == pytest.approx(cdf[1:])  # the released share just below each edge
    assert np.interp(edges, x, f) == pytest.approx([0.0, 0.3, 0.7, 0.9, 1.0])  # half the atom at its left edge
    assert np.interp(2 - 2 * width, x, f) == pytest.approx(0.5)  # the other half just before its right edge
    assert np.interp(1.5, x, f) == pytest.approx(0.4, abs=1e-5)  # the rest spread evenly
    # bounds whose floating-point resolution cannot hold the jump bins keep the linear reading
    far = 1e9 + np.linspace(0.0, 1e-6, 5)
    assert np.array_equal(_atoms.atom_aware_cdf(far, cdf, atoms)[0], far)


def test_an_atom_at_a_leaf_edge_costs_half_its_mass_not_all_of_it():
    # 20% of the records at 0.5, a leaf edge of the 16^2 grid, the rest uniform: the linear reading
    # misses the atom by its whole mass (0.2), the atom-aware one by half of it
    rng = np.random.default_rng(0)
    x = np.concatenate([np.full(20_000, 0.5), rng.random(80_000)])
    linear, aware = [], []
    for seed in range(5):
        tree = TreeHistogram.release(x, 1.0, (0, 1), branching=16, height=2, rng=seed)
        edges, cdf = tree.leaf_cdf()
        linear.append(metrics.ks(Distribution.from_cdf(edges, cdf), x))
        distribution = tree.to_distribution()
        assert distribution.details["atoms"] >= 1
        aware.append(metrics.ks(distribution, x))
    # noise on a CDF value at eps n = 1e5 is ~1e-4; the two readings differ by 0.1 exactly
    assert np.mean(linear) == pytest.approx(0.2, abs=0.005)
    assert np.mean(aware) == pytest.approx(0.1, abs=0.005)


def test_smooth_data_keep_the_linear_reading():
    rng = np.random.default_rng(1)
    ratios = []
    for seed in range(5):
        x = np.clip(rng.normal(size=10**5), -4, 4)
        tree = TreeHistogram.release(x, 1.0, (-4, 4), rng=seed)
        edges, cdf = tree.leaf_cdf()
        linear = Distribution.from_cdf(edges, cdf)
        ratios.append(metrics.ks(tree.to_distribution(), x) / metrics.ks(linear, x))
    # noise-made atoms are soft-thresholded: what is left of them moves the KS by well under 5%
    assert np.mean(ratios) <= 1.05


def test_the_band_holds_where_the_released_values_do():
    x = np.concatenate([np.full(5000, 0.3), np.random.default_rng(2).random(20_000)])
    tree = TreeHistogram.release(x, 1.0, (0, 1), branching=16, height=2, rng=0)
    distribution = tree.to_distribution(level=0.9)
    edges, cdf = tree.leaf_cdf()
    assert distribution.details["atoms"] >= 1 and distribution.edges.size > edges.size
    assert distribution.cdf(distribution.band.edges) == pytest.approx(cdf)  # the band's centre
    cdf_interval = distribution.intervals()[0]
    assert np.all((cdf_interval.low <= cdf_interval.estimate) & (cdf_interval.estimate <= cdf_interval.high))
