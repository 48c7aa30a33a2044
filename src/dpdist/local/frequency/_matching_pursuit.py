r"""Orthogonal matching pursuit (Pati, Rezaiifar, Krishnaprasad 1993; Tropp 2004).

Greedy sparse recovery of :math:`x` from :math:`y \approx \Phi x`: at each of
:math:`s` steps add the column most correlated with the residual (correlation
divided by the column's norm), then refit :math:`y` by least squares on the
chosen columns.  Paper 004 uses it for the recovery step of Algorithm 1.
"""

from __future__ import annotations

import numpy as np

__all__ = ["orthogonal_matching_pursuit"]


def orthogonal_matching_pursuit(matrix: np.ndarray, target: np.ndarray, sparsity: int, *, tolerance: float = 1e-12):
    """Return ``(x, support)``: an ``s``-sparse least-squares fit of ``target`` on columns of ``matrix``.

    Stops early when the residual's norm falls below ``tolerance`` times the
    target's.  Each step costs one ``m x k`` matrix–vector product plus a
    least-squares solve on at most ``s`` columns.
    """
    m, k = matrix.shape
    norms = np.linalg.norm(matrix, axis=0)
    norms[norms == 0] = np.inf
    residual = target.astype(np.float64, copy=True)
    support: list[int] = []
    coefficients = np.zeros(0)
    stop = tolerance * max(np.linalg.norm(target), 1e-300)
    for _ in range(min(sparsity, m, k)):
        if np.linalg.norm(residual) <= stop:
            break
        scores = np.abs(matrix.T @ residual) / norms
        scores[support] = -1.0
        support.append(int(np.argmax(scores)))
        columns = matrix[:, support]
        coefficients, *_ = np.linalg.lstsq(columns, target, rcond=None)
        residual = target - columns @ coefficients
    solution = np.zeros(k)
    solution[support] = coefficients
    return solution, np.array(support, dtype=np.int64)
