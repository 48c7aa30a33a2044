"""Every release ``dpdist.central`` offers, called with its defaults, and what a result of one must satisfy: shared by
tests/central/test_common.py (refusals are public) and the tests of central/_contributions.py (per person); and the
quadrature the tests of matching pursuit and its dictionaries check atoms against."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.polynomial import legendre

from dpdist import central
from dpdist.estimates import Distribution

BOUNDS = (0.0, 1.0)

#: Every release ``dpdist.central`` offers, called with its defaults: name -> f(x, epsilon).
RELEASES = {
    "histogram_queries": lambda x, e, **kw: central.histogram_queries(x, e, BOUNDS, rng=1, **kw),
    "histogram_queries add-remove": lambda x, e, **kw: central.histogram_queries(x, e, BOUNDS, rng=1, neighbouring="add-remove", **kw),
    "histogram_queries norm-sub": lambda x, e, **kw: central.histogram_queries(x, e, BOUNDS, rng=1, postprocess="norm-sub", **kw),
    "histogram_queries isotonic": lambda x, e, **kw: central.histogram_queries(x, e, BOUNDS, rng=1, postprocess="isotonic", **kw),
    "adaptive_quantiles": lambda x, e, **kw: central.adaptive_quantiles(x, e, BOUNDS, rng=1, **kw),
    "polynomial_projection": lambda x, e, **kw: central.polynomial_projection(x, e, 1e-6, BOUNDS, rng=1, **kw),
    "polynomial_projection legendre": lambda x, e, **kw: central.polynomial_projection(
        x, e, 1e-6, BOUNDS, rng=1, moments="legendre", **kw
    ),
    "polynomial_projection secure": lambda x, e, **kw: central.polynomial_projection(x, e, 1e-6, BOUNDS, secure=True, **kw),
    "PolynomialMoments.release": lambda x, e, **kw: central.PolynomialMoments.release(
        x, e, 1e-6, BOUNDS, 4, rng=1, **kw
    ).to_distribution(),
    "matching_pursuit": lambda x, e, **kw: central.matching_pursuit(x, e, BOUNDS, rng=1, **kw),
    "cdf": lambda x, e, **kw: central.cdf(x, e, BOUNDS, rng=1, **kw),
    "tree_cdf replace": lambda x, e, **kw: central.tree_cdf(x, e, BOUNDS, rng=1, neighbouring="replace", **kw),
    "tree_cdf size rule": lambda x, e, **kw: central.tree_cdf(x, e, BOUNDS, rng=1, rule="size", **kw),
    "TreeHistogram.release": lambda x, e, **kw: central.TreeHistogram.release(x, e, BOUNDS, height=2, rng=1, **kw).to_distribution(),
    "quantiles tree": lambda x, e, **kw: central.quantiles(x, e, BOUNDS, rng=1, **kw),
    "quantiles aq": lambda x, e, **kw: central.quantiles(x, e, BOUNDS, rng=1, method="aq", **kw),
    "quantiles jointexp": lambda x, e, **kw: central.quantiles(x, e, BOUNDS, [0.1, 0.5, 0.9], rng=1, method="jointexp", **kw),
    "unbounded_quantile": lambda x, e, **kw: central.unbounded_quantile(x, e, rng=1, **kw),
}


def check_result(result) -> None:
    if isinstance(result, Distribution):
        assert result.cumulative[0] == 0.0 and result.cumulative[-1] == pytest.approx(1.0)
        assert np.all(np.diff(result.cumulative) >= -1e-12)
    elif isinstance(result, central.QuantileRelease):
        assert np.all(np.isfinite(result.values)) and np.all(np.diff(result.values) >= 0)
    else:
        assert np.isfinite(result)


def output(result):
    if isinstance(result, Distribution):
        return result.cumulative
    if isinstance(result, central.QuantileRelease):
        return result.values
    return np.array([result])


#: the releases whose guarantee is under replace neighbours (n public): missing="drop" is refused whatever the data
REPLACE = {"histogram_queries", "histogram_queries norm-sub", "histogram_queries isotonic", "adaptive_quantiles",
           "polynomial_projection", "polynomial_projection legendre", "polynomial_projection secure",
           "PolynomialMoments.release", "matching_pursuit", "tree_cdf replace"}


#: dictionaries of atoms (spec, size) that tests/central/test_dictionaries.py and test_pursuit.py check by quadrature
SPECS = [("legendre", 12), ("bspline0", 10), ("bspline1", 9), ("normal-cdf", 16), ("legendre+bspline0+bspline1", 15),
         ("bspline0-dyadic", 11), ("bspline1-dyadic", 12), ("bspline0-dyadic+bspline1-dyadic", 22)]


def quadrature(knots, panels=2000, nodes=20):
    """Composite Gauss-Legendre nodes/weights on [-1, 1] with the given knots as panel boundaries."""
    breaks = np.unique(np.concatenate([np.linspace(-1, 1, panels + 1), knots]))
    x, w = legendre.leggauss(nodes)
    half = np.diff(breaks) / 2
    middle = (breaks[:-1] + breaks[1:]) / 2
    return (middle[:, None] + half[:, None] * x).ravel(), (half[:, None] * w).ravel()


def knots_of(dictionary):
    """The knots of every family of a dictionary of atoms."""
    return np.concatenate([f.knots() for f in dictionary.families])
