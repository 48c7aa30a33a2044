"""Every central release succeeds or fails on public inputs only (issue 27 items 6 and 9).

A refusal is an output: if a release raised for one data set and not for a neighbour, the
exception would tell them apart with certainty.  So each release below must return a result
for any data (empty, one record, many, values outside the bounds) and for every epsilon of
:data:`dpdist._validation.CENTRAL_EPSILON`; only public arguments may be refused.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpdist import central
from dpdist._validation import CENTRAL_EPSILON
from dpdist.estimates import Distribution

BOUNDS = (0.0, 1.0)

#: Every release ``dpdist.central`` offers, called with its defaults: name -> f(x, epsilon).
RELEASES = {
    "histogram_queries": lambda x, e: central.histogram_queries(x, e, BOUNDS, rng=1),
    "histogram_queries add-remove": lambda x, e: central.histogram_queries(x, e, BOUNDS, rng=1, neighbouring="add-remove"),
    "histogram_queries norm-sub": lambda x, e: central.histogram_queries(x, e, BOUNDS, rng=1, postprocess="norm-sub"),
    "histogram_queries isotonic": lambda x, e: central.histogram_queries(x, e, BOUNDS, rng=1, postprocess="isotonic"),
    "adaptive_quantiles": lambda x, e: central.adaptive_quantiles(x, e, BOUNDS, rng=1),
    "polynomial_projection": lambda x, e: central.polynomial_projection(x, e, 1e-6, BOUNDS, rng=1),
    "polynomial_projection legendre": lambda x, e: central.polynomial_projection(
        x, e, 1e-6, BOUNDS, rng=1, moments="legendre"
    ),
    "polynomial_projection secure": lambda x, e: central.polynomial_projection(x, e, 1e-6, BOUNDS, secure=True),
    "PolynomialMoments.release": lambda x, e: central.PolynomialMoments.release(
        x, e, 1e-6, BOUNDS, 4, rng=1
    ).to_distribution(),
    "matching_pursuit": lambda x, e: central.matching_pursuit(x, e, BOUNDS, rng=1),
    "cdf": lambda x, e: central.cdf(x, e, BOUNDS, rng=1),
    "tree_cdf replace": lambda x, e: central.tree_cdf(x, e, BOUNDS, rng=1, neighbouring="replace"),
    "tree_cdf size rule": lambda x, e: central.tree_cdf(x, e, BOUNDS, rng=1, rule="size"),
    "TreeHistogram.release": lambda x, e: central.TreeHistogram.release(x, e, BOUNDS, height=2, rng=1).to_distribution(),
    "quantiles tree": lambda x, e: central.quantiles(x, e, BOUNDS, rng=1),
    "quantiles aq": lambda x, e: central.quantiles(x, e, BOUNDS, rng=1, method="aq"),
    "quantiles jointexp": lambda x, e: central.quantiles(x, e, BOUNDS, [0.1, 0.5, 0.9], rng=1, method="jointexp"),
    "unbounded_quantile": lambda x, e: central.unbounded_quantile(x, e, rng=1),
}


def _check_result(result) -> None:
    if isinstance(result, Distribution):
        assert result.cumulative[0] == 0.0 and result.cumulative[-1] == pytest.approx(1.0)
        assert np.all(np.diff(result.cumulative) >= -1e-12)
    elif isinstance(result, central.QuantileRelease):
        assert np.all(np.isfinite(result.values)) and np.all(np.diff(result.values) >= 0)
    else:
        assert np.isfinite(result)


@pytest.mark.parametrize("name", sorted(RELEASES))
@pytest.mark.parametrize("epsilon", [CENTRAL_EPSILON.low, CENTRAL_EPSILON.high])
def test_every_release_accepts_both_ends_of_the_stated_epsilon_range(name, epsilon):
    # 1e-6 used to fail in seven releases: a split budget's step fell below the samplers' 2**-20 resolution
    x = np.random.default_rng(0).beta(2, 5, 500)
    _check_result(RELEASES[name](x, epsilon))


@pytest.mark.parametrize("name", sorted(RELEASES))
@pytest.mark.parametrize("epsilon", [float("nan"), float("inf"), 1e308, 0.0, -1.0, 1e-7, "1"])
def test_an_epsilon_outside_the_range_is_a_named_privacy_error(name, epsilon):
    # polynomial_projection(epsilon=nan | inf) raised a raw ValueError / OverflowError from its default degree rule
    from dpdist.errors import InvalidPrivacyParameterError

    with pytest.raises(InvalidPrivacyParameterError, match="'epsilon'"):
        RELEASES[name]([0.2, 0.5], epsilon)
