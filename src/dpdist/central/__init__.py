"""Central differential privacy: a trusted curator releases a private CDF of one numeric column.

Methods of Tao & Sarwate, "Functional Approximation Methods for Differentially
Private Distribution Estimation" (paper 002): polynomial
projection (Alg. 1) with its mergeable :class:`PolynomialMoments` for
decentralized and streaming data, matching pursuit over dictionaries (Alg. 2),
and the baselines histogram queries and adaptive quantiles (sec. II-B).  Every
function returns a :class:`dpdist.Distribution` with a monotone CDF in [0, 1];
see ``docs/explanation/central-release.md``.
"""

from .count import count
from .sums import mean, sum, variance
from .extremes import maximum, minimum
from .histogram import histogram_queries
from .polynomial import PolynomialMoments, polynomial_projection
from .pursuit import matching_pursuit
from .quantiles import adaptive_quantiles
from .many_quantiles import QuantileRelease, quantiles, unbounded_quantile
from .tree import TreeHistogram, cdf, tree_cdf

__all__ = [
    "count",
    "sum",
    "mean",
    "variance",
    "minimum",
    "maximum",
    "histogram_queries",
    "adaptive_quantiles",
    "polynomial_projection",
    "PolynomialMoments",
    "matching_pursuit",
    "cdf",
    "tree_cdf",
    "TreeHistogram",
    "quantiles",
    "unbounded_quantile",
    "QuantileRelease",
]
