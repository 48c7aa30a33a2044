"""Fast Walsh–Hadamard transform (Sylvester order), vectorized over leading axes."""

from __future__ import annotations

import numpy as np

__all__ = ["fast_walsh_hadamard", "hadamard_sign_is_plus"]


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


def hadamard_sign_is_plus(rows, columns) -> np.ndarray:
    """``H[r, j] == +1``, i.e. ``popcount(r & j)`` is even (broadcasting)."""
    return np.bitwise_count(np.bitwise_and(rows, columns)) % 2 == 0
