"""Errors of what a distribution answers: random range queries of a fixed width, the mean, the variance, quantiles."""

from __future__ import annotations

from typing import Union

import numpy as np
from numpy.typing import ArrayLike

from .._rng import check_rng
from .._validation import Bounds, Integer, Interval, Items, OneOf, check_param, validate_params
from ._cdfs import DistributionLike, _default_bounds, _pair

__all__ = ["range_query_mae", "mean_error", "variance_error", "quantile_error", "DECILES"]

#: a quantile level
_LEVEL = Interval(0.0, 1.0, closed="both")
DECILES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def range_query_mae(
    estimate: DistributionLike,
    truth: DistributionLike,
    *,
    alpha: float = 0.1,
    n_queries: int = 200,
    rng: Union[None, int, np.random.SeedSequence, np.random.Generator] = None,
    bounds: Union[tuple[float, float], None] = None,
) -> float:
    r"""Mean absolute error of random range queries of relative width ``alpha``.

    Draws ``n_queries`` ranges :math:`[a, a + \alpha (hi - lo)]` with
    :math:`a \sim U[lo, hi - \alpha (hi - lo)]` (so every range fits in the bounds) and
    returns the mean over queries of :math:`|\hat{F}(b) - \hat{F}(a) - \text{mass}(a, b)|`.
    For samples the mass of a range is the fraction of samples in the closed range
    :math:`[a, b]` (eq. 93 of [000]); for a Distribution it is ``cdf(b) - cdf(a)``.

    Parameters
    ----------
    estimate, truth : Distribution or array_like of shape (n,)
        As in :func:`wasserstein`.
    alpha : float in (0, 1], default 0.1
        Width of a range as a fraction of the bounds' width ([003] sec. 7 uses 0.1 and
        0.4; [000] sec. 6.5 uses 0.2 and 0.4).
    n_queries : int >= 1, default 200
    rng : None, int, SeedSequence or Generator
        Draws the range starts.
    bounds : (lo, hi), optional
        Defaults to the estimate's bounds (the truth's if the estimate is samples; the
        pooled sample range if both are).

    Returns
    -------
    float
    """
    owner = "metrics.range_query_mae"
    first, second = _pair(estimate, truth, owner)
    alpha = check_param(owner, "alpha", alpha, Interval(0.0, 1.0, closed="right"))
    n_queries = check_param(owner, "n_queries", n_queries, Integer(low=1))
    generator = check_rng(rng, owner=owner)
    if bounds is None:
        lo, hi = _default_bounds(first, second, owner)
    else:
        lo, hi = check_param(owner, "bounds", bounds, Bounds())
    width = alpha * (hi - lo)
    low = lo + generator.random(n_queries) * (hi - lo - width)
    high = low + width
    return float(np.mean(np.abs(first.mass(low, high) - second.mass(low, high))))


def mean_error(estimate: DistributionLike, truth: DistributionLike) -> float:
    r"""Absolute error of the mean, :math:`|\hat\mu - \mu|` ([003] sec. 3.2).

    The mean of a Distribution is that of its piecewise-uniform density; of samples, their
    average.
    """
    first, second = _pair(estimate, truth, "metrics.mean_error")
    return abs(first.mean() - second.mean())


def variance_error(estimate: DistributionLike, truth: DistributionLike) -> float:
    r"""Absolute error of the variance, :math:`|\hat\sigma^2 - \sigma^2|` ([003] sec. 3.2).

    The variance of a Distribution includes the within-bin :math:`w^2/12`; that of samples
    is the variance of their empirical distribution (divisor ``n``).
    """
    first, second = _pair(estimate, truth, "metrics.variance_error")
    return abs(first.var() - second.var())


@validate_params({"quantiles": OneOf((_LEVEL, Items(_LEVEL, "", min_length=1)),
                                     "a float in [0, 1] or a non-empty 1-D array of floats in [0, 1]")},
                 owner="metrics.quantile_error")
def quantile_error(estimate: DistributionLike, truth: DistributionLike, quantiles: ArrayLike = DECILES) -> float:
    r"""Mean absolute error of quantiles, :math:`\frac{1}{|B|}\sum_{\beta \in B} |\hat Q(\beta) - Q(\beta)|`.

    [003] sec. 3.2 and Fig. 4, with :math:`B` the deciles 0.1 .. 0.9 by default.  The
    quantile is the generalized inverse :math:`Q(\beta) = \min\{x : F(x) \ge \beta\}` on
    both sides (for samples, the order statistic :math:`X_{(\lceil \beta n \rceil)}`).

    Parameters
    ----------
    estimate, truth : Distribution or array_like of shape (n,)
    quantiles : array_like of floats in [0, 1], default deciles 0.1 .. 0.9
    """
    owner = "metrics.quantile_error"
    first, second = _pair(estimate, truth, owner)
    levels = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    return float(np.mean(np.abs(first.quantile(levels) - second.quantile(levels))))
