r"""Metrics and method adapters of the ``wavelet`` reproduction (paper 000, sec. 6).

:func:`unit_wasserstein` (W1 on the paper's 256-point grid, on [0, 1]),
:func:`theorem1_bound` (the Theorem 1 bound as a metric, for Fig. 4),
:func:`wiener_binning` (paper 001's DW / IIW on d bins with paper 000's oracle rule) and
:func:`hierarchy_isotonic` (HH read as a CDF by isotonic regression).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import local, postprocess
from ... import metrics as _metrics
from ...estimates import Distribution
from ...experiments import run_local_protocol
from ...local.numerical._haar_design import wasserstein_bound
from ...local.numerical.hh import HierarchicalHistogram

__all__ = ["GRID_POINTS", "unit_wasserstein", "theorem1_bound", "wiener_binning", "hierarchy_isotonic"]

#: the paper's grid of sec. 6.1 (M = 256 points)
GRID_POINTS = 256


def unit_wasserstein(estimate: Any, truth: np.ndarray, *, grid: int = GRID_POINTS) -> float:
    """W1 on the ``grid``-point grid (sec. 6.1) with the bounds mapped to [0, 1], as in the paper.

    ``metrics.wasserstein(estimate, truth, grid=grid)`` divided by the width of the
    estimate's bounds (W1 scales with the width; the paper maps every dataset to [0, 1]).
    """
    lo, hi = estimate.bounds
    return _metrics.wasserstein(estimate, truth, grid=grid) / (hi - lo)


def theorem1_bound(estimate: Any, truth: np.ndarray, *, variance_rule: str = "exact") -> float | None:
    r"""The Theorem 1 bound (eq. 77 + 72) on :math:`E[W(F_J, F)]` for a wavelet estimate.

    :math:`\sqrt{\sum_j 2^{-(2j+2)} V_j / n_j} + 2^{-(J+1)}` with the eq. 83 shares of the
    estimate's n users, its J and :math:`\varepsilon`
    (:func:`dpdist.local.numerical._haar_design.wasserstein_bound`); on [0, 1], like
    :func:`unit_wasserstein`.  ``None`` (not applicable) for any other estimate.
    """
    if not isinstance(estimate, Distribution) or estimate.method != "wavelet" or estimate.epsilon is None:
        return None
    levels = int(estimate.details["levels"])
    return wasserstein_bound(int(np.asarray(truth).size), float(estimate.epsilon), levels, variance_rule)


def wiener_binning(values: np.ndarray, dataset: Any, params: dict[str, Any], rng: np.random.Generator) -> Any:
    r"""A Wiener filter of paper 001 (``deconvolve`` = "dw" or "iiw") on ``bins`` equal bins.

    The frequency oracle follows the rule of paper 000 sec. 6.1: kRR (``grr``) if
    :math:`d < 3e^\varepsilon + 2`, else OUE; the deconvolved frequencies are Norm-Sub
    post-processed by the runner's adapter.
    """
    params = dict(params)
    oracle = "grr" if params["bins"] < 3 * math.exp(params["epsilon"]) + 2 else "oue"
    return run_local_protocol(oracle, values, dataset, params, rng)


def hierarchy_isotonic(values: np.ndarray, dataset: Any, params: dict[str, Any], rng: np.random.Generator) -> Any:
    r"""HH (``hh``: 4-ary tree, Hay et al. consistency) read as a CDF by isotonic regression.

    The consistent leaves of the hierarchical histogram answer prefix (range) queries
    well, but Norm-Sub of 256 noisy leaves (the ``hh`` default) moves much of the mass:
    at :math:`\varepsilon = 1` and n = 100,000 the negative leaves sum to about -0.7.
    Here the prefix sums of the consistent leaves are made a CDF by the least-squares
    non-decreasing fit (:func:`dpdist.postprocess.isotonic_cdf`, pinned to 1 at the
    upper bound), the usual reading of a range-query structure as a distribution.
    """

    params = dict(params)
    proto = local.make("hh", bounds=dataset.bounds, **params)
    assert isinstance(proto, HierarchicalHistogram)
    aggregator = proto.simulate(values, rng=rng)
    cdf = postprocess.isotonic_cdf(np.cumsum(proto.consistent_tree(aggregator)[-1]))
    cdf[-1] = 1.0
    masses = np.diff(cdf, prepend=0.0)
    return Distribution.uniform_bins(
        masses, dataset.bounds, method="hh", epsilon=proto.epsilon, n=aggregator.n,
        details={"postprocess": "isotonic-cdf"}, guarantee=proto.guarantee,
    )

