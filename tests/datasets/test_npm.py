"""Datasets read from npm packages (``vega-datasets`` 3.2.1): finding the package, its version, the parser and its
cache (the real file's populations: test_flights3m.py)."""

import datetime
import json
import os

import numpy as np
import pytest

from dpdist import datasets
from dpdist.datasets import flights3m, npm
from dpdist.errors import DatasetUnavailableError


@pytest.fixture
def fresh_population():
    """Forget the populations loaded in this process before and after the test."""
    flights3m._population.cache_clear()
    yield
    flights3m._population.cache_clear()


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
