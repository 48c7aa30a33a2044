r"""The exponential mechanism for one quantile on a public grid, sampled exactly.

The data are first mapped to the cells of a public grid of :data:`GRID_CELLS` equal cells over
the bounds (cell :math:`c(x) = \lfloor (x - a) G / (b - a) \rfloor`, the last cell closed: a
per-record map, so neighbouring data sets stay neighbours).  The outputs are the :math:`G + 1`
grid points :math:`a + k (b - a)/G`; a record in cell :math:`c` lies below point :math:`k` when
:math:`c < k`.  On a range of points :math:`[\ell, h]` and the :math:`K` records of cells in
:math:`[\ell, h)`, Smith's exponential mechanism for the :math:`q`-quantile (Smith 2011; Kaplan,
Schnapp & Stemmer 2022, Alg. 1's building block) draws point :math:`k` with probability

.. math::

    P(k) \propto \exp\bigl(-\gamma\,|\#\{c < k\} - qK|\bigr), \qquad \gamma = \varepsilon'/2,

the utility :math:`-|\#\{c < k\} - qK|` having sensitivity 1 under add/remove (and replacement)
neighbours: the mechanism is :math:`\varepsilon'`-DP (McSherry & Talwar 2007).  Points between
two consecutive distinct cells share a rank, so the draw is a choice among the :math:`D + 1`
groups of points, group :math:`i` holding :math:`n_i` points of rank :math:`r_i`, with weight
:math:`n_i e^{-\gamma |r_i - qK|}`, then a uniform point of the group.  Both are exact: the group by
:func:`~dpdist.central._exact_choice.certified_gumbel_max` (:math:`\varepsilon'` is rounded down to
a dyadic rational as for the Laplace noise, :math:`q` is a double, so every exponent is an exact
rational), the point by a uniform integer.  The output is a grid point: no bit of a sampler's
floats is released.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ._exact_choice import certified_gumbel_max
from .noise import _dyadic_epsilon

__all__ = ["GRID_CELLS", "to_cells", "cell_points", "rank_groups", "exponential_quantile", "exponential_rank"]

#: Cells of the public grid the quantile releases work on (outputs are its points).
GRID_CELLS = 2**32


def to_cells(x: np.ndarray, bounds: tuple[float, float], cells: int = GRID_CELLS) -> np.ndarray:
    """The grid cell (int64 in ``[0, cells)``) of every value of ``x`` (already inside ``bounds``)."""
    low, high = bounds
    index = np.floor((np.asarray(x, dtype=np.float64) - low) / (high - low) * cells)
    return np.clip(index, 0, cells - 1).astype(np.int64)


def cell_points(points: np.ndarray, bounds: tuple[float, float], cells: int = GRID_CELLS) -> np.ndarray:
    """The values of grid points (integers in ``[0, cells]``)."""
    low, high = bounds
    return np.clip(low + np.asarray(points, dtype=np.float64) * ((high - low) / cells), low, high)


def rank_groups(sorted_cells: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(first point, number of points, rank)`` of every group of points of ``[lo, hi]`` sharing a rank."""
    first = np.flatnonzero(np.diff(sorted_cells, prepend=-1))  # sorted: a new value starts at each change
    values = sorted_cells[first]
    counts = np.diff(np.append(first, sorted_cells.size))
    starts = np.concatenate([[lo], values + 1])
    ends = np.concatenate([values, [hi]])  # inclusive
    ranks = np.concatenate([[0], np.cumsum(counts)])
    return starts, ends - starts + 1, ranks


def exponential_quantile(sorted_cells: np.ndarray, lo: int, hi: int, q: float, epsilon: float, rng) -> int:
    r"""A grid point of ``[lo, hi]`` drawn by the exponential mechanism for the ``q``-quantile of the cells.

    ``sorted_cells`` are the sorted cells of the records in ``[lo, hi)``; ``epsilon`` is the
    mechanism's :math:`\varepsilon'` (rounded down to a dyadic rational before use).
    """
    return exponential_rank(sorted_cells, lo, hi, Fraction(q) * int(np.asarray(sorted_cells).size), epsilon, rng)


def exponential_rank(sorted_cells: np.ndarray, lo: int, hi: int, target: Fraction, epsilon: float, rng, *,
                     closed: bool = False) -> int:
    r"""A grid point of ``[lo, hi]`` drawn with probability :math:`\propto \exp(-\varepsilon' d_k/2)`.

    :math:`d_k = |\#\{c < k\} - t|`, as :func:`exponential_quantile` with the target rank :math:`t`
    given as an exact rational (any value; the records below ``lo`` are accounted for by lowering it
    by their number).  ``closed=True``: :math:`d_k` is the distance from :math:`t` to the ranks
    :math:`[\#\{c < k\}, \#\{c \le k\}]` a point takes among the records of the cell it opens (the
    point at the lower edge of a cell stands for the cell's records), so that a slice of equal
    values has a point of utility 0; both ends move by at most one with one record, so the
    sensitivity stays 1.
    """
    starts, sizes, ranks = rank_groups(np.asarray(sorted_cells, dtype=np.int64), int(lo), int(hi))
    low_ranks, high_ranks = ranks, ranks
    if closed and ranks.size > 1:  # each group but the last ends at a record's cell: that point stands apart
        ends = starts + sizes - 1
        starts = np.concatenate([starts[:-1], ends[:-1], starts[-1:]])
        sizes = np.concatenate([sizes[:-1] - 1, np.ones(ranks.size - 1, dtype=sizes.dtype), sizes[-1:]])
        low_ranks = np.concatenate([ranks[:-1], ranks[:-1], ranks[-1:]])
        high_ranks = np.concatenate([ranks[:-1], ranks[1:], ranks[-1:]])
        keep = sizes > 0
        starts, sizes, low_ranks, high_ranks = starts[keep], sizes[keep], low_ranks[keep], high_ranks[keep]
    gamma = _dyadic_epsilon(epsilon) / 2
    target = Fraction(target)
    gamma_float, target_float = float(gamma), float(target)
    distance = np.maximum(0.0, np.maximum(low_ranks - target_float, target_float - high_ranks))
    scores = np.log(sizes.astype(np.float64)) - gamma_float * distance
    # the doubles are a few roundings from the exact rationals: 2^-48 of their size is far above that
    error = 2.0**-48 * (gamma_float * (high_ranks + abs(target_float) + 1.0) + np.abs(np.log(sizes.astype(np.float64)))
                        + 1.0)

    def exact_score(group: int, context):
        exponent = gamma * max(Fraction(0), int(low_ranks[group]) - target, target - int(high_ranks[group]))
        return context.ln(int(sizes[group])) - context.divide(exponent.numerator, exponent.denominator)

    group = certified_gumbel_max(scores, error, exact_score, rng)
    return int(starts[group]) + int(rng.integers(0, int(sizes[group])))
