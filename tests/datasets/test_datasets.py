"""Datasets: the registry, seeded loads, the binned, permuted and spread views (the laws, the real data and the user
files: test_synthetic.py, test_real.py, test_files.py)."""

import numpy as np
import pytest

from dpdist import datasets
from dpdist.errors import InvalidParameterError


def test_registry_rows_carry_the_metadata():
    rows = {row[0]: row for row in datasets.describe()}
    for name in ("beta-5-2", "step-16", "geo-0.8", "unif-10", "zipf-1.1", "flights-departure", "wiki-words"):
        assert name in rows
    for name in datasets.available():
        data = datasets.get(name)
        assert data.description and data.license and data.source and data.size > 0
        assert (data.bounds is not None) == (data.kind == "numerical")
        assert (data.domain_size is not None) == (data.kind == "categorical")


def test_unknown_name_and_bad_n_are_rejected():
    with pytest.raises(InvalidParameterError, match="'name'.*Got 'nope'"):
        datasets.get("nope")
    with pytest.raises(InvalidParameterError, match="'n'"):
        datasets.get("beta-5-2").load(0)


def test_same_seed_same_values():
    data = datasets.get("normal-mixture")
    assert np.array_equal(data.load(1000, rng=3), data.load(1000, rng=3))
    assert not np.array_equal(data.load(1000, rng=3), data.load(1000, rng=4))


def test_binned_and_permuted_views():
    binned = datasets.get("beta-5-2", bins=16)
    assert binned.kind == "categorical" and binned.domain_size == 16
    items = binned.load(10_000, rng=5)
    assert np.array_equal(items, datasets.bucketize(datasets.get("beta-5-2").load(10_000, rng=5), (0, 1), 16))
    permuted = datasets.get("beta-5-2", bins=16, permute=1)
    relabelled = permuted.load(10_000, rng=5)
    assert np.array_equal(np.sort(np.bincount(relabelled, minlength=16)), np.sort(np.bincount(items, minlength=16)))
    assert not np.array_equal(relabelled, items)
    with pytest.raises(InvalidParameterError, match="numerical"):
        datasets.get("geo-0.8").binned(4)


def test_bucketize_puts_the_upper_bound_in_the_last_bin():
    assert datasets.bucketize([0.0, 0.2499, 0.25, 1.0], (0, 1), 4).tolist() == [0, 0, 1, 3]


def test_spread_makes_data_recorded_on_a_grid_smooth_inside_each_block():
    # departures recorded to the minute, spread uniformly over 5-minute blocks: the same 5-minute profile, no
    # heaping inside a block (docs/explanation/verdicts.md, "Scope of a claim")
    base = datasets.get("flights-departure")
    spread = datasets.get("flights-departure", spread=5)
    x, y = base.load(50_000, rng=3), spread.load(50_000, rng=3)
    assert spread.name == "flights-departure[spread=5]" and spread.bounds == base.bounds
    assert np.array_equal(np.floor(x / 5), np.floor(y / 5))  # each value stays in its block
    assert np.all(x == np.round(x)) and np.mean(y == np.round(y)) < 0.001  # no longer on the minute grid
    assert 0.19 < np.mean((y % 5) < 1) < 0.21  # uniform inside the block
    with pytest.raises(InvalidParameterError, match="width"):
        base.spread(0)
    with pytest.raises(InvalidParameterError, match="numerical"):
        datasets.get("geo-0.8").spread(5)


def test_a_spread_dataset_is_a_reference_of_an_experiment():
    from dpdist.experiments import DatasetRef, ExperimentSpec, cell_key

    plain = ExperimentSpec(name="t", datasets=["flights-departure"], methods=["oue"], metrics=["ks"],
                           grid={"epsilon": [1.0]}, repeats=1)
    smooth = ExperimentSpec(name="t", datasets=[{"name": "flights-departure", "spread": 5, "label": "smooth"}],
                            methods=["oue"], metrics=["ks"], grid={"epsilon": [1.0]}, repeats=1)
    assert smooth.datasets[0] == DatasetRef(name="flights-departure", spread=5, label="smooth")
    assert smooth.datasets[0].resolve().name == "flights-departure[spread=5]"
    assert cell_key(plain.cells()[0], plain) != cell_key(smooth.cells()[0], smooth)
