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
where the pursuit starts fitting noise.  It assumes the measurement noise is the only noise.

:func:`stands_out_of_noise` is a pre-test of the empty model against the noise level of
the decoded coefficients themselves, for data that are compressible but not sparse (heavy
tails): does any coefficient exceed the universal threshold of Donoho & Johnstone (1994), in
its Bonferroni form at a stated false-alarm probability?
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

__all__ = ["column_norms", "orthogonal_matching_pursuit", "omp_sparsity", "stands_out_of_noise", "noise_ratio"]


def column_norms(matrix: np.ndarray) -> np.ndarray:
    """Each column's Euclidean norm, ``inf`` for a zero column (scores divide by it): what the functions below
    compute when not given ``norms`` (a caller with a fixed matrix, CP's, computes it once)."""
    norms = np.linalg.norm(matrix, axis=0)
    norms[norms == 0] = np.inf
    return norms


def _omp_path(matrix: np.ndarray, target: np.ndarray, steps: int, norms: np.ndarray | None = None):
    """Yield ``(support, residual)`` after each OMP step (the least-squares residual on the support).

    The chosen columns are kept as an orthonormal basis, extended by Gram-Schmidt with one
    re-orthogonalization per step ("twice is enough", Giraud et al. 2005), so the residual of the
    least-squares refit is ``target`` minus its projection: ``O(m s)`` per step instead of a fresh
    ``m x s`` least-squares solve.
    """
    m, k = matrix.shape
    norms = column_norms(matrix) if norms is None else norms
    residual = target.astype(np.float64, copy=True)
    basis = np.empty((m, min(steps, m, k)))
    support: list[int] = []
    for step in range(basis.shape[1]):
        scores = np.abs(matrix.T @ residual) / norms
        scores[support] = -1.0
        column = int(np.argmax(scores))
        direction = matrix[:, column].astype(np.float64)
        for _ in range(2):
            direction = direction - basis[:, :step] @ (basis[:, :step].T @ direction)
        length = np.linalg.norm(direction)
        if length <= 1e-12 * max(norms[column], 1e-300):  # in the span already: nothing left to fit
            return
        support.append(column)
        basis[:, step] = direction / length
        residual = residual - basis[:, step] * (basis[:, step] @ residual)
        yield support, residual


def orthogonal_matching_pursuit(matrix: np.ndarray, target: np.ndarray, sparsity: int, *, tolerance: float = 1e-12,
                                norms: np.ndarray | None = None):
    """Return ``(x, support)``: an ``s``-sparse least-squares fit of ``target`` on columns of ``matrix``.

    Stops early when the residual's norm falls below ``tolerance`` times the
    target's.  Each step costs one ``m x k`` matrix-vector product plus an
    ``O(m s)`` update of the least-squares residual (:func:`_omp_path`); the
    coefficients are solved once at the end.  ``norms``: :func:`column_norms` of ``matrix``, if known.
    """
    k = matrix.shape[1]
    stop = tolerance * max(float(np.linalg.norm(target)), 1e-300)
    support: list[int] = []
    if np.linalg.norm(target) > stop:
        for support, residual in _omp_path(matrix, target, sparsity, norms):
            if np.linalg.norm(residual) <= stop:
                break
    solution = np.zeros(k)
    if support:
        solution[support], *_ = np.linalg.lstsq(matrix[:, support], target, rcond=None)
    return solution, np.array(support, dtype=np.int64)


def omp_sparsity(matrix: np.ndarray, target: np.ndarray, noise_variance: float, max_sparsity: int,
                 norms: np.ndarray | None = None) -> tuple[int, np.ndarray]:
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
    norms : ndarray (k,), optional
        :func:`column_norms` of ``matrix``, if known.

    Returns
    -------
    sparsity : int
        The minimizer; 0 when no step lowers the criterion (the empty model of Foster & George).
    criterion : ndarray
        :math:`\|r_s\|^2 + 2\ln(k) s \sigma^2` for ``s = 0 .. len - 1``.
    """
    m, k = matrix.shape
    penalty = 2.0 * np.log(k) * noise_variance
    target = target.astype(np.float64)
    criterion = [float(target @ target)]
    if criterion[0] > 0.5 * m * noise_variance:
        for support, residual in _omp_path(matrix, target, max_sparsity, norms):
            energy = float(residual @ residual)
            criterion.append(energy + penalty * len(support))
            if energy <= 0.5 * m * noise_variance:
                break
    return int(np.argmin(criterion)), np.asarray(criterion)


def stands_out_of_noise(matrix: np.ndarray, target: np.ndarray, noise_variance: float, level: float = 0.05,
                        norms: np.ndarray | None = None) -> bool:
    r"""Whether the best column's decoded coefficient stands out of the noise at family-wise ``level``.

    The decoded coefficient of column :math:`j` is :math:`c_j = b_j^\top y / \|b_j\|`.  When
    :math:`y` holds no item that stands out, each :math:`c_j` of the random matrix of paper 004
    (entries i.i.d., variance :math:`1/m`, so :math:`\|b_j\| \approx 1`) is centred with variance
    :math:`\tau^2 = \|y\|^2/m`, whatever :math:`y` holds: the measurement noise (variance
    :math:`\sigma^2` per entry) *and* the many small items of a heavy tail, which a random matrix
    spreads over every coefficient.  The test: :math:`\max_j |c_j| > t\,\hat\tau`,
    :math:`\hat\tau^2 = \max(\sigma^2, \|y\|^2/m)`, with the Bonferroni threshold
    :math:`t = \Phi^{-1}(1 - \alpha / (2k))`: under the null each :math:`c_j/\tau` is standard
    normal, so the largest of the :math:`k` exceeds :math:`t` with probability at most
    :math:`\alpha` (``level``).  It is the universal threshold :math:`\sqrt{2\ln k}` of Donoho &
    Johnstone (1994, "Ideal spatial adaptation by wavelet shrinkage", Biometrika 81, 425-455) with
    its false-alarm probability made explicit: :math:`\sqrt{2\ln k}` itself is passed by noise with
    probability up to :math:`1/\sqrt{\pi\ln k}` (0.18 at :math:`k = 10^4`); at
    :math:`\alpha = 0.05`, :math:`k = 10^4`, :math:`t = 4.56` against 4.29.

    Parameters
    ----------
    matrix : ndarray (m, k)
    target : ndarray (m,)
    noise_variance : float
        Known variance :math:`\sigma^2` of the noise of one entry of ``target``.
    level : float
        Family-wise probability :math:`\alpha` that pure noise passes.
    norms : ndarray (k,), optional
        :func:`column_norms` of ``matrix``, if known.
    """
    return noise_ratio(matrix, target, noise_variance, level, norms) > 1.0


def noise_ratio(matrix: np.ndarray, target: np.ndarray, noise_variance: float, level: float = 0.05,
                norms: np.ndarray | None = None) -> float:
    r"""The largest decoded coefficient over the threshold :math:`t\,\hat\tau` of :func:`stands_out_of_noise`
    (above 1: an item stands out of the noise); what an estimate of sparsity 0 reports."""
    m, k = matrix.shape
    norms = column_norms(matrix) if norms is None else norms
    target = target.astype(np.float64)
    largest = float(np.max(np.abs(matrix.T @ target) / norms))
    threshold = NormalDist().inv_cdf(1.0 - level / (2.0 * k))
    scale = threshold * np.sqrt(max(noise_variance, float(target @ target) / m))
    return largest / scale if scale > 0 else (np.inf if largest > 0 else 0.0)
