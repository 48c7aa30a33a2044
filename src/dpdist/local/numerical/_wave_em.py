r"""Expectation maximization (EM) and EM with smoothing (EMS) on bucket counts (paper 003, Alg. 1).

Paper: ``003_168e87404547aacd.txt``, sec. 5.5 and App. (derivation of Alg. 1).
Given the counts :math:`n_j` of reports in output bucket :math:`j` and the
transition matrix :math:`M_{j,i} = \Pr[\tilde v \in \tilde B_j \mid v \in B_i]`,
EM maximizes the log-likelihood

.. math::

    L(x) = \sum_j n_j \log (Mx)_j

over the simplex by iterating (Alg. 1)

.. math::

    P_i = x_i \sum_j n_j \frac{M_{j,i}}{(Mx)_j}, \qquad x_i \leftarrow P_i / \textstyle\sum_k P_k .

EMS adds, after each M-step, the smoothing of Nychka (1990) / Silverman et
al. (1990) cited in sec. 5.5: :math:`x_i \leftarrow \frac12 x_i + \frac14(x_{i-1} + x_{i+1})`,
i.e. the binomial weights (1, 2, 1)/4.  At the two ends the missing neighbour
is dropped and the row renormalized: :math:`(2x_0 + x_1)/3` and
:math:`(x_{d-2} + 2x_{d-1})/3` (so a constant vector is a fixed point), then
the vector is renormalized to sum 1.

Stopping rule (sec. 5.5): stop after the first iteration with
:math:`|L(x^{(t+1)}) - L(x^{(t)})| < \tau`; :math:`L` is the *total*
log-likelihood of the :math:`n` reports (as in the paper), with the paper's
tolerances :math:`\tau = 10^{-3} e^\varepsilon` for EM and :math:`\tau = 10^{-3}`
for EMS, and an iteration cap.

Both products :math:`Mx` and :math:`M^\top y` run through an operator that
exploits :math:`M = c + B` (the wave's uniform part :math:`c = q\tilde w` plus a
bump part :math:`B` that vanishes outside a band): BLAS products on column
blocks of the band, or, when the output buckets have the width of the input
bins so that :math:`M` is Toeplitz, a convolution by FFT in
:math:`O((d + \tilde d)\log(d + \tilde d))`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "DenseOperator",
    "BandedOperator",
    "ToeplitzOperator",
    "transition_operator",
    "binomial_smoothing_matrix",
    "smooth",
    "expectation_maximization",
    "EMResult",
]


class DenseOperator:
    """Products with a dense ``(outputs, inputs)`` matrix."""

    def __init__(self, matrix: np.ndarray):
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float64)
        self._transposed = np.ascontiguousarray(self.matrix.T)
        self.shape = self.matrix.shape

    def matvec(self, x: np.ndarray) -> np.ndarray:
        return self.matrix @ x

    def rmatvec(self, y: np.ndarray) -> np.ndarray:
        return self._transposed @ y


class BandedOperator:
    """Products with ``M = c + B``, ``B`` zero outside a band: dense BLAS on column blocks of the band.

    The wave matrices are a constant (the uniform part of the wave) plus a bump
    part whose nonzero rows move down with the column, so each block of
    ``block`` columns only touches the rows its band spans; ``Mx = c * sum(x) + Bx``.
    """

    def __init__(self, constant: float, band: np.ndarray, block: int = 128):
        self.constant = float(constant)
        self.shape = band.shape
        nonzero = band != 0
        self._blocks = []
        for start in range(0, self.shape[1], block):
            stop = min(start + block, self.shape[1])
            rows = np.flatnonzero(nonzero[:, start:stop].any(axis=1))
            if rows.size:
                low, high = int(rows[0]), int(rows[-1]) + 1
                part = np.ascontiguousarray(band[low:high, start:stop])
                self._blocks.append((start, stop, low, high, part, np.ascontiguousarray(part.T)))

    def matvec(self, x: np.ndarray) -> np.ndarray:
        out = np.full(self.shape[0], self.constant * x.sum())
        for start, stop, low, high, part, _ in self._blocks:
            out[low:high] += part @ x[start:stop]
        return out

    def rmatvec(self, y: np.ndarray) -> np.ndarray:
        out = np.full(self.shape[1], self.constant * y.sum())
        for start, stop, low, high, _, transposed in self._blocks:
            out[start:stop] += transposed @ y[low:high]
        return out


class ToeplitzOperator:
    """Products with a Toeplitz matrix ``T[j, i] = t[j - i]`` by real FFT convolution.

    ``column`` is the first column ``T[:, 0]`` (length ``outputs``) and ``row``
    the first row ``T[0, :]`` (length ``inputs``); ``row[0]`` must equal ``column[0]``.
    """

    def __init__(self, column: np.ndarray, row: np.ndarray):
        outputs, inputs = len(column), len(row)
        self.shape = (outputs, inputs)
        # kernel k[m] = t[m - (inputs - 1)], m = 0 .. outputs + inputs - 2
        kernel = np.concatenate([np.asarray(row, dtype=np.float64)[:0:-1], np.asarray(column, dtype=np.float64)])
        self._length = 1 << (outputs + 2 * inputs - 3).bit_length()  # a power of two >= the linear length
        self._kernel = np.fft.rfft(kernel, self._length)
        self._kernel_reversed = np.fft.rfft(kernel[::-1], self._length)

    def matvec(self, x: np.ndarray) -> np.ndarray:
        outputs, inputs = self.shape
        full = np.fft.irfft(np.fft.rfft(x, self._length) * self._kernel, self._length)
        return full[inputs - 1 : inputs - 1 + outputs]

    def rmatvec(self, y: np.ndarray) -> np.ndarray:
        outputs, inputs = self.shape
        # (T^T y)_i = sum_j t[j - i] y_j: correlation, a convolution with the reversed kernel
        full = np.fft.irfft(np.fft.rfft(y, self._length) * self._kernel_reversed, self._length)
        return full[outputs - 1 : outputs - 1 + inputs]


def transition_operator(constant: float, band: np.ndarray, *, toeplitz: bool):
    """The fastest exact operator for ``M = constant + band`` (Toeplitz by FFT when ``toeplitz``)."""
    if toeplitz:
        matrix_column, matrix_row = constant + band[:, 0], constant + band[0, :]
        return ToeplitzOperator(matrix_column, matrix_row)
    return BandedOperator(constant, band)


def binomial_smoothing_matrix(size: int) -> np.ndarray:
    """The (1, 2, 1)/4 smoothing as a matrix, boundary rows renormalized (for reference and tests)."""
    matrix = np.zeros((size, size))
    index = np.arange(size)
    matrix[index, index] = 2.0
    matrix[index[1:], index[:-1]] = 1.0
    matrix[index[:-1], index[1:]] = 1.0
    return matrix / matrix.sum(axis=1, keepdims=True)


def smooth(x: np.ndarray) -> np.ndarray:
    """``binomial_smoothing_matrix(len(x)) @ x`` in O(d)."""
    out = np.empty_like(x)
    out[1:-1] = 0.5 * x[1:-1] + 0.25 * (x[:-2] + x[2:])
    out[0] = (2.0 * x[0] + x[1]) / 3.0
    out[-1] = (x[-2] + 2.0 * x[-1]) / 3.0
    return out


@dataclass(frozen=True)
class EMResult:
    """Estimated input histogram and the convergence trace."""

    probabilities: np.ndarray
    iterations: int
    converged: bool
    tolerance: float
    loglikelihood: np.ndarray  # L(x^(t)) for t = 0 .. iterations (x^(0) uniform)


def expectation_maximization(
    counts: np.ndarray,
    operator,
    *,
    smoothing: bool,
    tolerance: float,
    max_iterations: int,
) -> EMResult:
    """Alg. 1 of paper 003 (EM), with the smoothing step after each M-step when ``smoothing`` (EMS).

    Parameters
    ----------
    counts : ndarray of shape (outputs,)
        Reports per output bucket, :math:`n_j`.
    operator
        :class:`BandedOperator`, :class:`ToeplitzOperator` or :class:`DenseOperator` for :math:`M`
        (columns summing to 1, entries > 0).
    smoothing : bool
        EMS when True.
    tolerance : float
        :math:`\\tau`: stop once the total log-likelihood changes by less.
    max_iterations : int
        Cap on the number of EM iterations.
    """
    counts = np.asarray(counts, dtype=np.float64)
    bins = operator.shape[1]
    x = np.full(bins, 1.0 / bins)
    predicted = operator.matvec(x)  # > 0: every entry of M is
    trace = [float(counts @ np.log(predicted))]
    converged = False
    iterations = 0
    while iterations < max_iterations:
        x *= operator.rmatvec(counts / predicted)  # E-step: P_i = x_i sum_j n_j M_ji / (Mx)_j
        np.maximum(x, 0.0, out=x)  # FFT round-off can leave -1e-17 where x is 0
        x /= x.sum()  # M-step
        if smoothing:
            x = smooth(x)
            x /= x.sum()
        iterations += 1
        predicted = operator.matvec(x)
        trace.append(float(counts @ np.log(predicted)))
        if abs(trace[-1] - trace[-2]) < tolerance:
            converged = True
            break
    return EMResult(
        probabilities=x,
        iterations=iterations,
        converged=converged,
        tolerance=float(tolerance),
        loglikelihood=np.asarray(trace),
    )
