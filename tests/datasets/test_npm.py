"""Datasets read from npm packages: ``flights3m-departure`` and ``flights3m-distance`` (vega-datasets 3.2.1).

The tests of the real file need ``npm install --no-save --prefix ~/.cache/dpdist/npm
vega-datasets@3.2.1`` (``.ci/run`` installs it).  Outside CI they are skipped when the
package is absent; in CI (``CI=true``) they run and fail, so they never skip silently.
The population facts (row counts, the 979,213 departures on multiples of 5 minutes, the
1,109 distances) are exact counts of the file; the sample check's tolerance is 5
standard errors of a sample mean drawn without replacement.
"""

import datetime
import json
import math
import os

import numpy as np
import pytest

from dpdist import datasets
from dpdist.datasets import flights3m, npm
from dpdist.errors import DatasetUnavailableError, InvalidParameterError


def _installed() -> bool:
    return (npm.npm_prefix() / "node_modules" / "vega-datasets" / "package.json").is_file()


requires_vega = pytest.mark.skipif(
    not _installed() and os.environ.get("CI") != "true",
    reason="npm vega-datasets@3.2.1 not installed (npm install --no-save --prefix ~/.cache/dpdist/npm vega-datasets@3.2.1)",
)


@pytest.fixture
def fresh_population():
    """Forget the populations loaded in this process before and after the test."""
    flights3m._population.cache_clear()
    yield
    flights3m._population.cache_clear()


# ---------------------------------------------------------------------- the real file
@requires_vega
def test_departure_population(no_network):
    data = datasets.get("flights3m-departure")
    x = data.load()
    assert x.size == data.size == 3_000_000 and x.dtype == np.float64
    assert x.min() == 0 and x.max() == 1439 and np.array_equal(x, np.floor(x))  # whole minutes
    on_five = int(np.count_nonzero(x % 5 == 0))
    assert on_five == 979_213  # 32.6% on the 20% of minutes that are multiples of 5: heaped
    counts = np.bincount(x.astype(np.int64), minlength=1440)
    assert counts[6 * 60 : 22 * 60].min() > 500  # every daytime minute is represented


@requires_vega
def test_distance_population(no_network):
    data = datasets.get("flights3m-distance")
    y = data.load()
    assert y.size == data.size == 3_000_000
    assert y.min() == 21 and y.max() == 4962 and data.bounds == (0.0, 5000.0)
    assert np.unique(y).size == 1109


@requires_vega
def test_seeded_sample_is_a_subsample_with_the_population_mean():
    data = datasets.get("flights3m-departure")
    population = data.load()
    n = 100_000
    sample = data.load(n, rng=7)
    assert np.array_equal(sample, data.load(n, rng=7))
    assert not np.array_equal(sample, data.load(n, rng=8))
    assert np.isin(sample, population).all()
    size = population.size
    se = population.std() / math.sqrt(n) * math.sqrt((size - n) / (size - 1))
    assert abs(sample.mean() - population.mean()) < 5 * se
    with pytest.raises(InvalidParameterError, match="'n'"):
        data.load(size + 1)


@requires_vega
def test_binned_view_counts_every_flight():
    items = datasets.get("flights3m-departure", bins=288).load()
    assert items.max() == 287
    counts = np.bincount(items, minlength=288)
    assert counts.sum() == 3_000_000
    # 5-minute bins hold one multiple of 5 each: no aliasing saw-tooth between neighbours
    minutes = datasets.get("flights3m-departure").load().astype(np.int64)
    assert np.array_equal(counts, np.bincount(minutes // 5, minlength=288))


# ---------------------------------------------------------------------- finding the package
def test_missing_package_names_the_install_command(tmp_path, monkeypatch, fresh_population):
    monkeypatch.setenv(npm.NPM_PREFIX_VARIABLE, str(tmp_path))
    expected = f"npm install --no-save --prefix {tmp_path} vega-datasets@3.2.1"
    with pytest.raises(DatasetUnavailableError, match="'flights3m-departure'.*vega-datasets@3.2.1") as error:
        datasets.get("flights3m-departure").load(10, rng=0)
    assert expected in str(error.value)
    with pytest.raises(ImportError):  # DatasetUnavailableError is also an ImportError
        datasets.get("flights3m-distance").load()


def test_wrong_version_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(npm.NPM_PREFIX_VARIABLE, str(tmp_path))
    folder = tmp_path / "node_modules" / "vega-datasets"
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": "vega-datasets", "version": "2.8.0"}))
    with pytest.raises(DatasetUnavailableError, match="version 3.2.1. Got version '2.8.0'"):
        npm.npm_package_directory("vega-datasets", "3.2.1", "flights3m-departure")


def test_default_prefix_when_the_variable_is_unset(monkeypatch):
    monkeypatch.delenv(npm.NPM_PREFIX_VARIABLE, raising=False)
    assert npm.npm_prefix() == npm.Path("~/.cache/dpdist/npm").expanduser()


def _fake_package(prefix, stamps, distances):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    folder = prefix / "node_modules" / "vega-datasets"
    (folder / "data").mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": "vega-datasets", "version": "3.2.1"}))
    table = pa.table(
        {"date": pa.array(stamps, type=pa.timestamp("us")), "distance": pa.array(distances, type=pa.int64())}
    )
    pq.write_table(table, folder / "data" / "flights-3m.parquet")


def test_parser_and_cache_on_a_small_file(tmp_path, monkeypatch, fresh_population):
    monkeypatch.setenv(npm.NPM_PREFIX_VARIABLE, str(tmp_path))
    day = datetime.datetime(2001, 1, 1)
    stamps = [day + datetime.timedelta(minutes=m) for m in (1, 65, 1439, 1440, 1445 + 1440)]
    _fake_package(tmp_path, stamps, [21, 4962, 100, 100, 250])
    minutes = flights3m._population("departure")
    assert minutes.tolist() == [1, 65, 1439, 0, 5]  # midnight is minute 0 of the next day
    assert flights3m._population("distance").tolist() == [21, 4962, 100, 100, 250]
    cached = sorted(path.name for path in (tmp_path / "dpdist-cache").iterdir())
    assert len(cached) == 2 and all(name.endswith(".npy") for name in cached)


def test_cache_is_read_instead_of_parsing(tmp_path, monkeypatch):
    monkeypatch.setenv(npm.NPM_PREFIX_VARIABLE, str(tmp_path))
    source = tmp_path / "source.bin"
    source.write_bytes(b"abc")
    calls = []

    def parse(path):
        calls.append(path)
        return np.arange(4, dtype=np.int16)

    first = npm.cached_column(source, "key", parse)
    second = npm.cached_column(source, "key", parse)
    assert len(calls) == 1 and np.array_equal(first, second) and second.dtype == np.int16
    os.utime(source, ns=(0, 0))  # a reinstalled package (other modification time) is parsed again
    npm.cached_column(source, "key", parse)
    assert len(calls) == 2
