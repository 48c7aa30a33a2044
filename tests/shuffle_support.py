"""An exact lower bound on what one device's reports reveal in a shuffled GRR batch (tests of the ladder's relayed row
and of a relayed campaign's statement)."""

from __future__ import annotations

import math

import numpy as np


def exact_device_delta(epsilon0: float, d: int, batch: int, reports: int, epsilon: float) -> float:
    """The hockey-stick divergence at ``epsilon`` between a GRR(``epsilon0``, ``d``) batch of ``batch`` reports in
    which one device sends ``reports`` reports of item a and one in which it sends them of item b, the other reports
    all of a third item.  The counts of a and b are a sufficient statistic of the shuffled batch for this pair, so this
    is exact for the pair, and a lower bound on the delta any (``epsilon``, delta) statement for the device must have.
    Direct convolution: an FFT's rounding, times ``e**epsilon``, would count mass that is not there."""
    from scipy import stats  # lazy: scipy, for the tests that use it only

    e = math.exp(epsilon0)
    p, q = e / (e + d - 1), 1 / (e + d - 1)

    def pair(m: int, pa: float, pb: float, top: int) -> np.ndarray:  # the law of (N_a, N_b) over m reports
        g = np.arange(top + 1)
        conditional = stats.binom.pmf(g[None, :], (m - g)[:, None].clip(0), pb / (1 - pa))
        conditional[g > m] = 0
        return stats.binom.pmf(g, m, pa)[:, None] * conditional

    others = batch - reports
    top = int(others * q + 12 * math.sqrt(others * q + 1) + reports + 20)
    rest = pair(others, q, q, top)
    with_a = _direct_convolution(rest, pair(reports, p, q, reports))
    with_b = _direct_convolution(rest, pair(reports, q, p, reports))
    return float(np.sum(np.maximum(with_a - math.exp(epsilon) * with_b, 0)))


def _direct_convolution(law: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """The direct (not FFT) 2-D convolution of ``law`` with a small ``kernel``, cut to ``law``'s shape: one shifted,
    scaled copy of ``law`` per nonzero entry of ``kernel`` (``scipy.signal.convolve(..., method="direct")`` computes the
    same sums of the same products, 20-40x slower on a 1,400 x 1,400 law: 3-4 CPU-s per call)."""
    rows, columns = law.shape
    out = np.zeros_like(law)
    for i, j in zip(*np.nonzero(kernel)):
        if i < rows and j < columns:
            out[i:, j:] += kernel[i, j] * law[: rows - i, : columns - j]
    return out
