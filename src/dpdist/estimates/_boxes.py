r"""A range's answer from 1-D and 2-D tables of equal bins: the part of each bin inside it, and more than two ranges.

A range is answered by summing the bins it covers, a bin cut by its end in proportion to the part
covered (:func:`coverage`: the uniformity assumption of HDG/TDG, Yang et al., PVLDB 2020, sec. 4.2; PriPL-Tree,
Wang et al., PVLDB 2024, sec. 4.1 step 4).  A range over :math:`\lambda > 2` attributes is answered from its
:math:`\lambda` 1-D and :math:`\binom{\lambda}{2}` 2-D answers (:func:`range_from_answers`, HDG/TDG sec. 4.2,
"answering :math:`\lambda`-D queries"): the distribution on :math:`\{in, out\}^\lambda` of maximum
entropy that matches them.  Used by the results that answer ranges (:class:`~dpdist.estimates.RangeEstimate`,
HDG's grids).
"""

from __future__ import annotations

import numpy as np

from ._maxent import fit_table

__all__ = ["coverage", "range_from_answers"]


def coverage(low: float, high: float, resolution: int) -> np.ndarray:
    """The fraction of each of ``resolution`` equal bins of [0, 1] inside ``[low, high]`` (on [0, 1])."""
    edges = np.linspace(0.0, 1.0, resolution + 1)
    inside = np.clip(np.minimum(edges[1:], high) - np.maximum(edges[:-1], low), 0.0, None)
    return inside * resolution


def range_from_answers(one_way: list[float], two_way: dict[tuple[int, int], float]) -> float:
    """The share of records inside every one of :math:`\\lambda` ranges, from the 1-D and 2-D answers (maximum entropy
    on :math:`\\{in, out\\}^\\lambda`, HDG/TDG sec. 4.2)."""
    size = len(one_way)
    constraints: list[tuple[tuple[int, ...], np.ndarray]] = []
    for (i, j), both in two_way.items():
        a, b = float(np.clip(one_way[i], 0, 1)), float(np.clip(one_way[j], 0, 1))
        both = float(np.clip(both, max(0.0, a + b - 1), min(a, b)))
        # axis value 0 = inside the range, 1 = outside
        table = np.array([[both, a - both], [b - both, 1 - a - b + both]])
        constraints.append(((i, j), np.clip(table, 0.0, None)))
    for i, a in enumerate(one_way):
        constraints.append(((i,), np.array([np.clip(a, 0, 1), 1 - np.clip(a, 0, 1)])))
    table, _, _ = fit_table((2,) * size, constraints, tolerance=1e-12, max_iterations=1000)
    return float(table[(0,) * size])
