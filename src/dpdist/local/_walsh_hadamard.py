"""Fast Walsh–Hadamard transform (Sylvester order), vectorized over leading axes."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["butterfly_walsh_hadamard", "fast_walsh_hadamard", "hadamard_sign_is_plus"]

#: Lengths up to this one are transformed by :func:`butterfly_walsh_hadamard`'s matrix products.
SMALL = 32


def fast_walsh_hadamard(array: np.ndarray) -> np.ndarray:
    r"""``H @ x`` along the last axis for the Sylvester Hadamard matrix
    :math:`H[r, j] = (-1)^{\mathrm{popcount}(r \,\&\, j)}` of size ``2^m``.

    :math:`O(b \log b)` additions per row (butterflies on reshaped views); the
    dtype is kept, so integer input gives exact integer output.
    """
    result = np.array(array, copy=True)
    size = result.shape[-1]
    if size & (size - 1):
        raise ValueError(f"fast_walsh_hadamard needs a power-of-two length, got {size}")
    lead = result.shape[:-1]
    half = 1
    while half < size:
        view = result.reshape(*lead, size // (2 * half), 2, half)
        top = view[..., 0, :].copy()
        bottom = view[..., 1, :]
        view[..., 0, :] += bottom
        np.subtract(top, bottom, out=view[..., 1, :])
        half *= 2
    return result


@lru_cache(maxsize=None)
def _butterflies(size: int) -> tuple[np.ndarray, ...]:
    """The rounds of :func:`fast_walsh_hadamard` as ``size x size`` matrices ``R`` (``x @ R`` is one round): column
    ``c`` holds ``1`` at ``c`` and at ``c + half`` when bit ``half`` of ``c`` is clear, else ``1`` at ``c - half``
    and ``-1`` at ``c``."""
    rounds = []
    columns = np.arange(size)
    half = 1
    while half < size:
        matrix = np.zeros((size, size))
        low = (columns & half) == 0
        matrix[columns[low], columns[low]] = 1.0
        matrix[columns[low] + half, columns[low]] = 1.0
        matrix[columns[~low] - half, columns[~low]] = 1.0
        matrix[columns[~low], columns[~low]] = -1.0
        matrix.flags.writeable = False
        rounds.append(matrix)
        half *= 2
    return tuple(rounds)


def butterfly_walsh_hadamard(array: np.ndarray) -> np.ndarray:
    r""":func:`fast_walsh_hadamard` of finite floats, each round of butterflies one product with its matrix of
    :math:`0, \pm 1` (:func:`_butterflies`) for lengths up to :data:`SMALL`, where a round's dozen NumPy calls
    cost more than the arithmetic (the EM products of HR over a few items, thousands per bootstrap).

    The same numbers: each output of a round is :math:`x_a \pm x_b` plus exact zeros, rounded once in any order of
    summation.  Longer rows go to :func:`fast_walsh_hadamard`.
    """
    result = np.asarray(array, dtype=np.float64)
    if result.shape[-1] > SMALL:
        return fast_walsh_hadamard(result)
    if result.shape[-1] & (result.shape[-1] - 1):
        raise ValueError(f"fast_walsh_hadamard needs a power-of-two length, got {result.shape[-1]}")
    for matrix in _butterflies(result.shape[-1]):
        result = result @ matrix
    return result


def hadamard_sign_is_plus(rows, columns) -> np.ndarray:
    """``H[r, j] == +1``, i.e. ``popcount(r & j)`` is even (broadcasting)."""
    return np.bitwise_count(np.bitwise_and(rows, columns)) % 2 == 0
