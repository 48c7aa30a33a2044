r"""The transition matrices of the wave mechanisms as fast operators for the EM solver (:mod:`dpdist.local._em`).

Paper 003, sec. 5.5.  Both products :math:`Mx` and :math:`M^\top y` exploit :math:`M = c + B` (the wave's
uniform part :math:`c = q\tilde w` plus a bump part :math:`B` that vanishes outside a band): BLAS
products on column blocks of the band, or, when the output buckets have the width of the input bins
so that :math:`M` is Toeplitz, a convolution by FFT in :math:`O((d + \tilde d)\log(d + \tilde d))`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BandedOperator", "ToeplitzOperator", "transition_operator"]


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

        # one block spanning the whole matrix (a wave as wide as the domain): one product, no slices
        self._whole = len(self._blocks) == 1 and self._blocks[0][:4] == (0, self.shape[1], 0, self.shape[0])

    def matvec(self, x: np.ndarray) -> np.ndarray:
        if self._whole:  # c * sum(x) + Bx, the same sum as the blocks' (addition commutes exactly)
            out = self._blocks[0][4] @ x
            out += self.constant * x.sum()
            return out
        out = np.full(self.shape[0], self.constant * x.sum())
        for start, stop, low, high, part, _ in self._blocks:
            out[low:high] += part @ x[start:stop]
        return out

    def matvec_rows(self, x: np.ndarray) -> np.ndarray:
        """:meth:`matvec` of each row of ``x``, the same numbers (:meth:`_rows`)."""
        return self._rows(x, self.matvec, 4, self.shape[0])

    def rmatvec_rows(self, y: np.ndarray) -> np.ndarray:
        """:meth:`rmatvec` of each row of ``y``, the same numbers (:meth:`_rows`)."""
        return self._rows(y, self.rmatvec, 5, self.shape[1])

    def _rows(self, vectors: np.ndarray, product, part: int, size: int) -> np.ndarray:
        """``product`` of each row: a BLAS product per row (one matrix-matrix product would sum in another order),
        with one block's constant part for all rows at once; ``part`` picks the block's matrix or its transpose."""
        if not self._whole:
            return np.array([product(row) for row in vectors]).reshape(len(vectors), size)
        matrix = self._blocks[0][part]
        out = np.array([matrix @ row for row in vectors]).reshape(len(vectors), size)
        out += (self.constant * vectors.sum(axis=1))[:, None]
        return out

    def rmatvec(self, y: np.ndarray) -> np.ndarray:
        if self._whole:
            out = self._blocks[0][5] @ y
            out += self.constant * y.sum()
            return out
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
