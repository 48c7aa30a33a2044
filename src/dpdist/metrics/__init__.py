r"""Accuracy metrics of the five source papers, for numerical and categorical estimates.

Numerical metrics compare two distributions on the real line.  Each side is either a
:class:`~dpdist.Distribution` (its CDF is piecewise linear through ``(edges, cumulative)``,
so central-DP CDFs returned as Distributions work too) or raw samples (a 1-D array, read as
the right-continuous empirical CDF :math:`F_n(x) = \#\{X_i \le x\} / n`, a step function).

* :func:`wasserstein`, :func:`ks`, :func:`energy` -- distances between CDFs, exact by
  default, or on an evaluation grid as in the papers' experiments (``grid=256``).
* :func:`circular_wasserstein` -- W1 on a circle (times of day, angles), exact.
* :func:`range_query_mae` -- random range queries of a fixed width.
* :func:`mean_error`, :func:`variance_error`, :func:`quantile_error` -- statistics.

Categorical metrics compare frequency vectors (a :class:`~dpdist.FrequencyEstimate` or an
array against the true frequencies, or raw items with ``domain_size``):
:func:`mse`, :func:`mse_top_k`, :func:`l1`, :func:`l2`, :func:`true_false_positives`.

Exactness
---------
Between two consecutive breakpoints (the union of the Distribution's edges and the sorted
sample points) both CDFs are linear, hence so is their difference :math:`D = F - G`.  With
:math:`a` the right limit of :math:`D` at the left breakpoint, :math:`b` its left limit at
the right one and :math:`w` the interval's width,

.. math::

    \int |D| = w \frac{|a| + |b|}{2} \;(ab \ge 0), \qquad
    \int |D| = w \frac{a^2 + b^2}{2(|a| + |b|)} \;(ab < 0), \qquad
    \int D^2 = w \frac{a^2 + ab + b^2}{3},

(the second: two triangles meeting at the root :math:`t = a/(a-b)`), and
:math:`\sup |D|` is attained at a left or right limit at a breakpoint.  Outside the
breakpoints both CDFs are 0 (left) or 1 (right).  The cost is one sort, :math:`O((n + k)
\log(n + k))` for :math:`n` samples and :math:`k` bins.

References
----------
.. [000] Zhao et al., "Consistent Estimation of Numerical Distributions under LDP by
   Wavelet Expansion", paper 000: eqs. (18)-(19) (W1, KS), the
   256-point grid of sec. 6.1, range-query MAE eq. (93) with alpha = 0.2, 0.4.
.. [001] Fang et al., "LDP Frequency Estimation Based on Convolution Framework",
   paper 001, sec. VI: MSE, top-k MSE, true/false positives.
.. [002] Tao & Sarwate, "Functional Approximation Methods for DP Distribution
   Estimation", paper 002: KS, EMD and energy distance.
.. [003] Li et al., "Estimating Numerical Distributions under LDP" (SIGMOD 2020),
   paper 003, sec. 3: W1, KS, range queries (alpha = 0.1, 0.4,
   sec. 7), mean, variance and decile errors (Fig. 4).
"""

from ._cdfs import DistributionLike, Grid
from ._distances import circular_wasserstein, energy, ks, wasserstein
from ._frequencies import DetectionCounts, FrequencyLike, l1, l2, mse, mse_top_k, true_false_positives
from ._statistics import DECILES, mean_error, quantile_error, range_query_mae, variance_error

__all__ = [
    "wasserstein",
    "circular_wasserstein",
    "ks",
    "energy",
    "range_query_mae",
    "mean_error",
    "variance_error",
    "quantile_error",
    "mse",
    "mse_top_k",
    "l1",
    "l2",
    "true_false_positives",
    "DetectionCounts",
    "DECILES",
    "DistributionLike",
    "FrequencyLike",
    "Grid",
]
