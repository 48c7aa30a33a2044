r"""Methods and metrics of the ``sw-ems`` reproduction (paper 003, sec. 6 and 3.2).

Runner methods: :func:`at_paper_granularity` (a local protocol on the paper's histogram
size), :func:`signed_leaves` (HH / HaarHRR before Norm-Sub, as a
:class:`SignedHistogram`, for range queries only) and :func:`mean_and_variance` (PM and
SR: the mean of one round and the two-phase variance, a :class:`MomentEstimate`).
Metrics that take those estimates as well as a Distribution: :func:`mean_abs_error`,
:func:`variance_abs_error` and :func:`range_query_error`.
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass

import numpy as np

from ... import local
from ... import metrics as _metrics
from ..._rng import check_rng
from ...experiments import run_local_protocol
from ...local.numerical._mean import MeanProtocol
from ..._types import ArrayLike, Seed

__all__ = [
    "PAPER_BUCKETS",
    "DEFAULT_BUCKETS",
    "at_paper_granularity",
    "mean_and_variance",
    "MomentEstimate",
    "signed_leaves",
    "SignedHistogram",
    "range_query_error",
    "mean_abs_error",
    "variance_abs_error",
]

#: histogram size of sec. 6.1: 256 buckets for Beta(5, 2), 1024 for the real datasets
PAPER_BUCKETS = {"beta-5-2": 256}
DEFAULT_BUCKETS = 1024


def at_paper_granularity(values: np.ndarray, dataset: Any, params: dict[str, Any], rng: np.random.Generator) -> Any:
    """Run the local protocol ``params["protocol"]`` on the paper's histogram size.

    ``bins`` defaults to 256 for Beta(5, 2) and 1024 for the other datasets (sec. 6.1);
    an explicit ``bins`` (Fig. 7's grid) wins.  The other parameters go to
    :func:`~dpdist.experiments.run_local_protocol`.
    """
    params = dict(params)
    protocol = params.pop("protocol")
    params.setdefault("bins", PAPER_BUCKETS.get(dataset.name, DEFAULT_BUCKETS))
    return run_local_protocol(protocol, values, dataset, params, rng)


@dataclass(frozen=True)
class SignedHistogram:
    """Leaf masses that sum to 1 but may be negative, uniform within each of the equal leaves.

    What HH (Hay et al.'s consistent tree) and HaarHRR (the inverse Haar transform)
    estimate before any post-processing: unbiased, not a distribution.  The paper scores
    them on range queries only (sec. 6.1, Table 2).
    """

    masses: np.ndarray
    bounds: tuple

    def mass(self, low: ArrayLike, high: ArrayLike) -> np.ndarray:
        """Signed mass of ``[low, high]`` (the cumulative masses interpolated linearly)."""
        edges = np.linspace(self.bounds[0], self.bounds[1], self.masses.size + 1)
        cumulative = np.concatenate(([0.0], np.cumsum(self.masses)))
        high_mass = np.interp(np.asarray(high, dtype=np.float64), edges, cumulative)
        return high_mass - np.interp(np.asarray(low, dtype=np.float64), edges, cumulative)


#: where the unbiased (signed) leaves are kept in the details of each protocol's estimate
_SIGNED_LEAVES = {"hh": "consistent_leaves", "haar-hrr": "unbiased_frequencies"}


def signed_leaves(values: np.ndarray, dataset: Any, params: dict[str, Any], rng: np.random.Generator) -> Any:
    """HH or HaarHRR (``params["protocol"]``) on the paper's histogram size, before Norm-Sub.

    Paper 003 sec. 6.1: "HH and HaarHRR are only evaluated for range queries as they
    produce estimation results with negative values"; the range queries are answered from
    the consistent (HH) or unbiased (HaarHRR) leaves, as in Kulkarni et al.
    """
    estimate = at_paper_granularity(values, dataset, params, rng)
    leaves = np.asarray(estimate.details[_SIGNED_LEAVES[params["protocol"]]], dtype=np.float64)
    return SignedHistogram(masses=leaves, bounds=tuple(dataset.bounds))


@dataclass(frozen=True)
class MomentEstimate:
    """A mean (one round on all users) and a variance (two-phase run) of PM or SR."""

    mean: float
    var: float
    method: str
    epsilon: float


def mean_and_variance(values: np.ndarray, dataset: Any, params: dict[str, Any], rng: np.random.Generator) -> Any:
    """PM or SR (``params["protocol"]``): the mean of Fig. 4(a-d) and the variance of Fig. 4(e-h).

    Paper 003 sec. 6.3: "SR and PM devote all privacy budget to estimate mean", so the
    mean comes from one collection from every user; the variance is the two-phase
    method (a random half estimates the mean, the others report squared deviations
    from it), run as its own experiment on the same users with fresh randomness.
    """
    params = dict(params)
    protocol = params.pop("protocol")
    proto = local.make(protocol, bounds=dataset.bounds, **params)
    assert isinstance(proto, MeanProtocol), "sr and pm estimate means"
    mean = proto.estimate(proto.simulate(values, rng=rng)).mean
    two_phase = proto.estimate_mean_variance(values, rng=rng)
    return MomentEstimate(mean=float(mean), var=float(two_phase.var), method=protocol, epsilon=proto.epsilon)


def mean_abs_error(estimate: Any, truth: np.ndarray) -> float:
    r""":math:`|\hat\mu - \mu|` (sec. 3.2) for a Distribution or a :class:`MomentEstimate`."""
    if isinstance(estimate, MomentEstimate):
        return abs(estimate.mean - float(np.mean(truth)))
    return _metrics.mean_error(estimate, truth)


def variance_abs_error(estimate: Any, truth: np.ndarray) -> float:
    r""":math:`|\hat\sigma^2 - \sigma^2|` (sec. 3.2) for a Distribution or a :class:`MomentEstimate`.

    The true variance is that of the samples' empirical distribution (divisor n), as in
    :func:`dpdist.metrics.variance_error`.
    """
    if isinstance(estimate, MomentEstimate):
        return abs(estimate.var - float(np.var(truth)))
    return _metrics.variance_error(estimate, truth)


def range_query_error(estimate: Any, truth: np.ndarray, *, alpha: float, n_queries: int = 200, rng: Seed = None) -> float:
    r"""Range-query MAE (sec. 3.2) for a Distribution or a :class:`SignedHistogram`.

    A Distribution goes to :func:`dpdist.metrics.range_query_mae`.  For signed leaves the
    same ranges are drawn the same way, :math:`[a, a + \alpha(hi - lo)]` with
    :math:`a \sim U[lo, hi - \alpha(hi - lo)]` from ``rng`` (so every method of a cell
    answers the same queries), and the true mass is the fraction of samples in the
    closed range.
    """
    if not isinstance(estimate, SignedHistogram):
        return _metrics.range_query_mae(estimate, truth, alpha=alpha, n_queries=n_queries, rng=rng)
    generator = check_rng(rng, owner="sw_ems.range_query_error")
    lo, hi = estimate.bounds
    width = alpha * (hi - lo)
    low = lo + generator.random(n_queries) * (hi - lo - width)
    high = low + width
    samples = np.sort(np.asarray(truth, dtype=np.float64))
    inside = np.searchsorted(samples, high, side="right") - np.searchsorted(samples, low, side="left")
    return float(np.mean(np.abs(estimate.mass(low, high) - inside / samples.size)))

