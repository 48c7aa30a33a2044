r"""Orthogonal matching pursuit (Pati, Rezaiifar, Krishnaprasad 1993; Tropp 2004).

Greedy sparse recovery of :math:`x` from :math:`y \approx \Phi x`: at each of
:math:`s` steps add the column most correlated with the residual (correlation
divided by the column's norm), then refit :math:`y` by least squares on the
chosen columns.  Paper 004 uses it for the recovery step of Algorithm 1.

:func:`omp_sparsity` chooses :math:`s` from the data alone by the risk inflation
criterion of Foster & George (1994): minimize
:math:`\|r_s\|^2 + 2\ln(k)\, s\, \sigma^2` along the OMP path, where
:math:`\sigma^2` is the (known) noise variance of one measurement.  A column
picked for noise alone lowers :math:`\|r\|^2` by about the largest of :math:`k`
squared Gaussian correlations, :math:`2\ln(k)\sigma^2`, so the criterion stops
where the pursuit starts fitting noise.
"""

from __future__ import annotations

import numpy as np

__all__ = ["orthogonal_matching_pursuit", "omp_sparsity"]


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


def omp_sparsity(matrix: np.ndarray, target: np.ndarray, noise_variance: float, max_sparsity: int) -> tuple[int, np.ndarray]:
    r"""The sparsity minimizing the risk inflation criterion on the OMP path, and the criterion per step.

    Parameters
    ----------
    matrix : ndarray (m, k)
    target : ndarray (m,)
    noise_variance : float
        Variance :math:`\sigma^2` of the noise of one entry of ``target``.
    max_sparsity : int
        Longest path tried; the path also ends once the residual falls below half
        the expected noise energy :math:`m\sigma^2` (every later step fits noise).

    Returns
    -------
    sparsity : int
        The minimizer (at least 1).
    criterion : ndarray
        :math:`\|r_s\|^2 + 2\ln(k) s \sigma^2` for ``s = 0 .. len - 1``.
    """
    m, k = matrix.shape
    norms = np.linalg.norm(matrix, axis=0)
    norms[norms == 0] = np.inf
    penalty = 2.0 * np.log(k) * noise_variance
    residual = target.astype(np.float64, copy=True)
    criterion = [float(residual @ residual)]
    support: list[int] = []
    for _ in range(min(max_sparsity, m, k)):
        if residual @ residual <= 0.5 * m * noise_variance:
            break
        scores = np.abs(matrix.T @ residual) / norms
        scores[support] = -1.0
        support.append(int(np.argmax(scores)))
        coefficients, *_ = np.linalg.lstsq(matrix[:, support], target, rcond=None)
        residual = target - matrix[:, support] @ coefficients
        criterion.append(float(residual @ residual) + penalty * len(support))
    criterion = np.asarray(criterion)
    return max(int(np.argmin(criterion)), 1), criterion
