r"""The maximum-entropy table with given marginals, by iterative proportional fitting.

CALM (Zhang, Wang, Li, He, Chen, CCS 2018, sec. 5) answers a marginal that no group
reported by the distribution of maximum entropy among those whose projections equal
the (consistent, non-negative) reported marginals; HDG's "weighted update" (Yang et
al., PVLDB 2020, sec. 5.3) is the same fitting on a grid.  Iterative proportional
fitting (Deming and Stephan 1940; Csiszár 1975: started from the uniform table it
converges to the I-projection, the maximum-entropy table, when the constraints are
feasible) rescales the table to each constraint in turn.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["fit_table"]


def fit_table(
    shape: Sequence[int],
    constraints: Sequence[tuple[tuple[int, ...], np.ndarray]],
    *,
    tolerance: float = 1e-10,
    max_iterations: int = 1000,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray, int, float]:
    """The table of ``shape`` (summing to 1) closest in entropy to ``start`` (uniform) matching the ``constraints``.

    Parameters
    ----------
    constraints : sequence of (axes, target)
        ``target`` is the wanted sum of the table over every axis *not* in ``axes``
        (sorted), shaped as those axes; targets must be non-negative.

    Returns
    -------
    (table, iterations, gap)
        ``gap``: the largest absolute difference of a constraint's sum and its target
        after the last sweep (below ``tolerance`` at convergence).
    """
    shape = tuple(int(size) for size in shape)
    table = np.full(shape, 1.0 / int(np.prod(shape))) if start is None else np.array(start, dtype=np.float64)
    gap = np.inf
    iterations = 0
    for iterations in range(1, max_iterations + 1):
        gap = 0.0
        for axes, target in constraints:
            others = tuple(axis for axis in range(len(shape)) if axis not in axes)
            current = table.sum(axis=others, keepdims=True)
            wanted = np.asarray(target, dtype=np.float64).reshape(current.shape)
            gap = max(gap, float(np.max(np.abs(current - wanted))))
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(current > 0, wanted / current, 0.0)
            table = table * ratio
        if gap <= tolerance:
            break
    return table, iterations, gap
