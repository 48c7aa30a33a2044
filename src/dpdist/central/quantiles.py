r"""Adaptive quantiles: the iterative noisy-count baseline of sec. II-B2 of Tao & Sarwate.

Paper 002 sec. II-B2 (after McKenna's note, their ref. [38]).
Known points start as :math:`Q = \{0: a, 1: b\}` at the bounds; each iteration
splits, at its midpoint, the interval between consecutive known points that
holds the largest estimated mass (the paper: "the largest interval between known
quantiles"; its Fig. 4 discussion — the method concentrates where the CDF is
steepest — shows the interval is measured in quantile, not in x), counts the
data below and above the midpoint with Laplace noise, and stores the noisy
quantile.  The budget is split evenly over the iterations.
"""

from __future__ import annotations

import numpy as np

from ._common import (
    cdf_distribution,
    check_central_input,
    check_positive_int,
    grid_edges,
)
from ._defaults import quantile_iterations
from .noise import laplace_mechanism
from ..estimates import Distribution
from ..postprocess import isotonic_cdf
from .._guarantee import sequential, split
from .._types import ArrayLike, FloatBounds, Seed

__all__ = ["adaptive_quantiles"]


def adaptive_quantiles(
    x: ArrayLike, epsilon: float, bounds: FloatBounds, iterations: int | None = None, rng: Seed = None, clip: bool = True, secure: bool = False, *, grid_size: int = 1024,
    missing: str | float = "refuse", privacy_id: ArrayLike | None = None, max_contributions: int | str | None = None,
) -> Distribution:
    r"""Private CDF by adaptive quantile search (sec. II-B2).

    Each of the ``iterations`` rounds releases the pair (count below
    :math:`x_0`, count above :math:`x_0`), whose l1 sensitivity is 2 when one
    entry is replaced, with Laplace noise of scale
    :math:`2\,\mathrm{iterations}/\varepsilon`; the noisy quantile is
    :math:`q = \tilde c_\le / (\tilde c_\le + \tilde c_>)`.  The paper's
    post-processing "reorders the x and q values": both are sorted
    independently and paired, so the knots form a monotone CDF.  The CDF is
    piecewise linear through the knots and ``(a, 0)``, ``(b, 1)``, evaluated on
    ``grid_size`` equal bins.

    Parameters
    ----------
    x, epsilon, bounds, rng, clip, secure
        As in :func:`histogram_queries`.
    iterations : int, optional
        Number of noisy splits (the paper uses 50 and 80).  Default
        :math:`\sqrt{\varepsilon n}/4` in [10, 1000] from the public n
        (:func:`dpdist.central._defaults.quantile_iterations`).
    grid_size : int
        Bins of the returned :class:`~dpdist.Distribution`.
    missing : {"refuse"} or float
        Missing values (NaN, None) in ``x``: refused with their count (the default) or each counted as
        the number given (``"drop"`` is refused: replace neighbours, n public); the result's notes
        state the policy (:mod:`dpdist._missing`).
    privacy_id, max_contributions : optional
        Whose row each value is, and the rows kept per person (an int >= 1, or ``"auto"``): per person
        (:mod:`dpdist.central._contributions`). Ids compare exactly, numbers by value, strings as written (normalise
        them first); two kinds are refused (:mod:`dpdist._ids`).

    Returns
    -------
    Distribution
        ``details["knots"]`` holds the post-processed ``(x, q)`` pairs.
    """
    owner = "adaptive_quantiles"
    data = check_central_input(owner, x, epsilon=epsilon, bounds=bounds, rng=rng, clip=clip, secure=secure,
                               grid_size=grid_size, missing=missing, neighbouring="replace", privacy_id=privacy_id,
                               max_contributions=max_contributions)
    if iterations is None:
        iterations = quantile_iterations(float(data.x.size), data.epsilon)
    iterations = check_positive_int(owner, "iterations", iterations, high=100_000)
    low, high = data.bounds
    ordered = np.sort(data.x)
    n = ordered.size
    rounds = split(data.guarantee("replace"), iterations)  # sequential: every round reads all the data
    epsilon_round = rounds[0].epsilon

    points = np.array([low, high])
    quantiles = np.array([0.0, 1.0])
    for _ in range(iterations):
        # reorder post-processing (free: a function of released values) keeps (points, quantiles) sorted
        gap = int(np.argmax(np.diff(quantiles)))
        midpoint = 0.5 * (points[gap] + points[gap + 1])
        below = float(np.searchsorted(ordered, midpoint, side="right"))
        noisy_below, noisy_above = laplace_mechanism(
            np.array([below, n - below]), 2.0, epsilon_round, data.rng, integer_valued=True
        )
        quantile = float(np.clip(noisy_below / max(noisy_below + noisy_above, 1.0), 0.0, 1.0))
        points = np.sort(np.append(points, midpoint))
        quantiles = np.sort(np.append(quantiles, quantile))

    edges = grid_edges(data.bounds, data.grid_size)
    cdf = isotonic_cdf(np.interp(edges, points, quantiles), pinned=True)
    details = {
        "iterations": iterations,
        "sensitivity_l1": 2.0,
        "noise_scale": 2.0 / epsilon_round,
        "budget": {"per_iteration": epsilon_round, "iterations": iterations},
        "knots": {"x": points.tolist(), "q": quantiles.tolist()},
        "secure": data.secure,
    }
    return cdf_distribution(
        edges, cdf, method="adaptive-quantiles", guarantee=data.stated(sequential(rounds)), n=n, details=data.details(**details)
    )
