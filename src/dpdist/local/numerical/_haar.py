r"""Haar encoding (eq. 39) and reconstruction (eq. 67-69) of the wavelet paper.

Paper 000 (Zhao et al., IEEE S&P 2026), sec. 2.2, 4.3, 4.7.

Cells are half-open, :math:`[k 2^{-j}, (k+1) 2^{-j})`, the last one closed at 1
(eq. 15 as printed gives a point on a cell boundary two non-zero coefficients);
with this convention :math:`\psi_{jk}(x) = \pm 2^{j/2}` for exactly one ``k``.
Values are first put on the public grid of :math:`2^{J+1}` fine bins (floating-point
safety: reports depend on the value only through its bin), and every level's code is
read from the fine bin ``b``: the half-cell of level ``j`` is
``h = b >> (J - j)``, the cell ``k = h >> 1`` and the sign ``+1`` if ``h`` is even.
"""

from __future__ import annotations

import numpy as np

from ._base import unit_bin_index

__all__ = ["fine_bins", "haar_encode", "level_code", "reconstruct_density"]


def fine_bins(unit_values: np.ndarray, levels: int) -> np.ndarray:
    """Fine bin ``floor(u 2^(J+1))`` of each ``u`` in [0, 1] (the last bin closed)."""
    return unit_bin_index(unit_values, 2 ** (levels + 1))


def level_code(bins: np.ndarray, level, levels: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Cell ``k`` and sign of :math:`\psi_{jk}` at ``level`` j (scalar or per-user array) for fine bins."""
    half = np.asarray(bins, dtype=np.int64) >> (levels - np.asarray(level, dtype=np.int64))
    return half >> 1, 1 - 2 * (half & 1)


def haar_encode(unit_values: np.ndarray, level: int) -> np.ndarray:
    r"""Eq. 39: :math:`\mathbf v = 2^{-j/2}(\psi_{j0}(x), \dots, \psi_{j,2^j-1}(x))`, a signed one-hot int8 row per value."""
    bins = fine_bins(unit_values, level)
    cells, signs = level_code(bins, level, level)
    out = np.zeros((bins.size, 2**level), dtype=np.int8)
    out[np.arange(bins.size), cells] = signs
    return out


def reconstruct_density(coefficients: list[np.ndarray], *, clip: str | None = "cell") -> np.ndarray:
    r"""Density :math:`f_J` on the :math:`2^{J+1}` fine bins from :math:`a_{jk}`, ``j = 0..J`` (eq. 67).

    Parameters
    ----------
    coefficients : list of arrays
        ``coefficients[j]`` holds :math:`a_{j0}, \dots, a_{j,2^j-1}`.
    clip : {"cell", "paper", None}
        The non-negativity procedure of sec. 4.7 (eq. 68-69), level by level from
        :math:`f_{-1} = 1`: :math:`a_{jk} \leftarrow \operatorname{Clip}(a_{jk}, a_{\max})`.
        ``"cell"``: :math:`a_{\max} = 2^{-j/2} f_{j-1}` on the cell
        :math:`[k2^{-j}, (k+1)2^{-j})` (where :math:`f_{j-1}` is constant), exactly the
        largest :math:`|a_{jk}|` keeping :math:`f_j \ge 0` there.  ``"paper"``: eq. 69
        read literally, the minimum of :math:`f_{j-1}` at both ends
        :math:`k 2^{-j}` and :math:`(k+1) 2^{-j}` (the latter lies in the next cell;
        more conservative).  ``None``: the raw eq. 67 (may be negative).
        Every variant integrates to 1, since each :math:`\psi_{jk}` integrates to 0.
    """
    density = np.ones(1)
    for j, a in enumerate(coefficients):
        a = np.asarray(a, dtype=np.float64)
        scale = 2.0 ** (j / 2)
        if clip is not None:
            bound = density if clip == "cell" else np.minimum(density, np.append(density[1:], density[-1]))
            a = np.clip(a, -bound / scale, bound / scale)
        step = a * scale
        density = np.stack([density + step, density - step], axis=1).reshape(-1)
    return density
