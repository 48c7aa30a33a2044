r"""The smallest and the largest value of a bounded column: the exponential mechanism for the quantile at rank 0 and n.

A minimum has no useful sensitivity (one record added at the lower bound moves it there), so it is released as the
order statistic the exponential mechanism finds (Smith 2011; McSherry & Talwar 2007), as Google's order statistics
(``Min``, ``Max``) and Tumult Analytics' ``min`` and ``max`` (quantiles at 0 and 1) do: on the public grid of
:data:`~dpdist.central._grid_quantile.GRID_CELLS` cells over the bounds, grid point :math:`k` is drawn with probability

.. math::

    P(k) \propto \exp\bigl(-\tfrac{\varepsilon'}{2}\,|\#\{c < k\} - t|\bigr), \qquad t = 0 \text{ (minimum)},\;
    t = n \text{ (maximum)},

whose utility has sensitivity 1 under add/remove neighbours (:func:`~dpdist.central._grid_quantile.exponential_rank`,
exact): :math:`\varepsilon`-DP.  What it finds is a *rank*: with probability at least :math:`1 - \beta` at most
:math:`2(\ln(G + 1) + \ln(1/\beta))/\varepsilon'` records lie beyond the value released (``details["rank_error_bound"]``).
Every grid point between the bound and the extreme value has the best utility, so the release is most often a
uniform point between them: it is as close to the extreme in value as the bound is.  No interval is released (one
in value would need the data's gaps).  Per person (``privacy_id``) each person's rows are bounded to
``max_contributions`` and the mechanism runs at :math:`\varepsilon / k` (:mod:`dpdist.central._contributions`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._types import ArrayLike, FloatBounds, Seed
from ..estimates import QuantileRelease
from ._common import check_central_input
from ._grid_quantile import GRID_CELLS, cell_points, exponential_rank, to_cells

__all__ = ["minimum", "maximum"]


def minimum(x: ArrayLike, epsilon: float, bounds: FloatBounds, *, rng: Seed = None, secure: bool = False,
            missing: str | float = "refuse", privacy_id: ArrayLike | None = None,
            max_contributions: int | str | None = None) -> QuantileRelease:
    """The smallest value of ``x`` under ``epsilon``-DP (add/remove neighbours): the exponential mechanism for the
    quantile at rank 0 on the public grid of ``bounds`` (the module docstring); ``values[0]`` of the release, at
    ``q = 0``.  The other parameters are those of :func:`dpdist.central.sum`."""
    return _extreme("minimum", x, epsilon, bounds, rng, secure, missing, privacy_id, max_contributions)


def maximum(x: ArrayLike, epsilon: float, bounds: FloatBounds, *, rng: Seed = None, secure: bool = False,
            missing: str | float = "refuse", privacy_id: ArrayLike | None = None,
            max_contributions: int | str | None = None) -> QuantileRelease:
    """The largest value of ``x`` under ``epsilon``-DP: the exponential mechanism for the quantile at rank n (as
    :func:`minimum`); ``values[0]`` of the release, at ``q = 1``."""
    return _extreme("maximum", x, epsilon, bounds, rng, secure, missing, privacy_id, max_contributions)


def _extreme(owner: str, x, epsilon, bounds, rng, secure, missing, privacy_id, max_contributions) -> QuantileRelease:
    data = check_central_input(owner, x, epsilon=epsilon, bounds=bounds, rng=rng, secure=secure, missing=missing,
                               neighbouring="add-remove", privacy_id=privacy_id, max_contributions=max_contributions)
    cells = np.sort(to_cells(data.x, data.bounds))
    target = Fraction(0) if owner == "minimum" else Fraction(int(cells.size))
    point = exponential_rank(cells, 0, GRID_CELLS, target, data.epsilon, data.rng)
    value = cell_points(np.array([point]), data.bounds)
    level = 0.95
    ranks = 2 * (math.log(GRID_CELLS + 1) + math.log(1 / (1 - level))) / data.epsilon
    details = {"mechanism": f"exponential mechanism for the quantile at rank {'0' if owner == 'minimum' else 'n'} on a "
               "public grid, exact (central._grid_quantile)", "grid_cells": GRID_CELLS, "bounds": list(data.bounds),
               "rank_error_bound": {"probability": level, "ranks": ranks}, "secure": data.secure}
    guarantee = data.stated(data.guarantee("add-remove"))
    return QuantileRelease(np.array([0.0 if owner == "minimum" else 1.0]), value, None, None, level, owner,
                           guarantee.epsilon, data.details(**details), guarantee)
