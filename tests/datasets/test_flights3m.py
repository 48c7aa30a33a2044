"""Three million US flights of 2001 (npm ``vega-datasets`` 3.2.1): the populations, a seeded sample, the binned view.

The tests of the real file need ``npm install --no-save --prefix ~/.cache/dpdist/npm vega-datasets@3.2.1``
(``.ci/run`` installs it).  Outside CI they are skipped when the package is absent; in CI (``CI=true``) they run and
fail, so they never skip silently.  The population facts (row counts, the 979,213 departures on multiples of 5
minutes, the 1,109 distances) are exact counts of the file; the sample check's tolerance is 5 standard errors of a
sample mean drawn without replacement.
"""

import math
import os

import numpy as np
import pytest

from dpdist import datasets
from dpdist.datasets import npm
from dpdist.errors import InvalidParameterError


def _installed() -> bool:
    return (npm.npm_prefix() / "node_modules" / "vega-datasets" / "package.json").is_file()

requires_vega = pytest.mark.skipif(
    not _installed() and os.environ.get("CI") != "true",
    reason="npm vega-datasets@3.2.1 not installed (npm install --no-save --prefix ~/.cache/dpdist/npm vega-datasets@3.2.1)",
)

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
