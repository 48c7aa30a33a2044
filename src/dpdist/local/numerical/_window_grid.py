r"""Window mechanisms of the optimal piecewise mechanism on a public output grid (interval and circle).

Zheng, Mishra and Hu, "Optimal Piecewise-based Mechanism for Collecting Bounded Numerical Data under
Local Differential Privacy" (arXiv 2505.15483; PETS 2025).  Both mechanisms report, for an input
:math:`v` of the unit domain, an output of the *same* domain (no output margin, unlike the square wave
of paper 003) with the piecewise-constant density

.. math::

    f(y \mid v) = \begin{cases} p_\varepsilon & y \in [\ell(v), \ell(v) + w] \\
                                 p_\varepsilon e^{-\varepsilon} & \text{otherwise,} \end{cases}

written here, like the waves of :mod:`._wave_shape`, as the mixture :math:`f = (1 - \lambda) + \lambda g`
of the uniform density on the unit domain and the uniform density :math:`g = 1/w` on the window.  The
ratio of the two levels is :math:`1 + \lambda / (w (1 - \lambda))`, at most :math:`e^\varepsilon` iff
:math:`\lambda/(1-\lambda) \le (e^\varepsilon - 1) w`: :func:`~dpdist.local._bernoulli.mixture_keep`
picks the largest :math:`\lambda` on the :math:`2^{-53}` grid within it (the window's width shrunk by
:math:`1 - 2^{-30}` for the float64 sampling of the window, as in :class:`~._wave_shape.WaveShape`).

* :class:`CircularWindowGrid`: the circle :math:`[0, 1)` with :math:`0 \equiv 1`; the window is centred on
  :math:`v` and wraps around.  The output buckets are the ``bins`` input bins, so the transition matrix
  is circulant (:class:`CirculantOperator`: EM by FFT).
* :class:`ClampedWindowGrid`: the interval :math:`[0, 1]`; the window's centre is
  :math:`\mathrm{clip}(v, w/2, 1 - w/2)`, so near an edge the window stops at the edge (the paper's
  classical-domain mechanism: :math:`[0, w]` for :math:`v < w/2`, :math:`[1 - w, 1]` for :math:`v > 1 - w/2`).

Reports are public output-bucket indices (floating-point safety: docs/explanation/privacy-model.md, "Privacy model"): every bucket has probability
at least :math:`(1-\lambda)\tilde w > 0` for every input.  With :math:`G(x) = \mathrm{clip}((x + w/2)/w, 0, 1)`
the CDF of the window's offset and :math:`K = \int G` (0 below :math:`-w/2`,
:math:`(x + w/2)^2/(2w)` inside, :math:`x` above), a point input's bucket masses are
:math:`(1 - \lambda)\tilde w + \lambda [G(e_{j+1} - c) - G(e_j - c)]` (:math:`c` the window's centre,
summed over the shifts :math:`c \pm 1` on the circle) and an input uniform on bin :math:`[c_i, c_{i+1})`
integrates :math:`G` into differences of :math:`K`, as in :mod:`._wave_grid`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._bernoulli import mixture_keep
from ._wave_shape import _FLOAT_MARGIN

__all__ = ["CircularWindowGrid", "ClampedWindowGrid", "CirculantOperator", "optimal_window"]


def optimal_window(epsilon: float) -> float:
    r"""Width :math:`w^* = 1/(e^{\varepsilon/2} + 1)` of the optimal window, as a fraction of the domain.

    Zheng, Mishra and Hu (arXiv 2505.15483), closed-form optimal mechanisms (classical domain: window
    half-width :math:`C = (e^{\varepsilon/2} - 1)/(2(e^\varepsilon - 1))` of :math:`[0, 1]`, density
    :math:`e^{\varepsilon/2}` inside; circular domain :math:`[0, 2\pi)`: half-width
    :math:`\pi (e^{\varepsilon/2} - 1)/(e^\varepsilon - 1)`, density :math:`e^{\varepsilon/2}/(2\pi)`),
    both :math:`w^* = 1/(e^{\varepsilon/2}+1)` of the domain.  Criterion: the expected absolute error
    :math:`E|Y - v|` of one report (circular distance on the circle).  Derivation (checked, ours): with
    :math:`c = e^{-\varepsilon}` and the density :math:`a = 1/(w(1 - c) + c)` inside a centred window,
    the circle gives :math:`E d(Y, v) = (w^2(1-c) + c)/(4(w(1-c) + c))` for every :math:`v`, and the
    interval's worst case (at an edge, window :math:`[0, w]`) is twice that; the derivative vanishes
    iff :math:`(1-c)w^2 + 2cw - c = 0`, i.e. :math:`w = \sqrt c/(1 + \sqrt c) = w^*`.  Computed as
    :math:`e^{-\varepsilon/2}/(1 + e^{-\varepsilon/2})`, so a large :math:`\varepsilon` cannot overflow.
    """
    root = math.exp(-epsilon / 2.0)
    return root / (1.0 + root)


def _window_cdf(x: np.ndarray, half: float) -> np.ndarray:
    """:math:`G(x)`: CDF of the offset, uniform on ``[-half, half]``."""
    return np.clip((np.asarray(x, dtype=np.float64) + half) / (2.0 * half), 0.0, 1.0)


def _window_cdf_integral(x: np.ndarray, half: float) -> np.ndarray:
    r""":math:`K(x) = \int_{-\infty}^x G`: 0 below ``-half``, ``x`` above ``half``, a parabola between."""
    x = np.asarray(x, dtype=np.float64)
    inside = np.clip(x, -half, half)
    return np.where(x >= half, x, (inside + half) ** 2 / (4.0 * half))


class _WindowGrid:
    """Shared constants of the window mechanisms: width ``w``, keep probability ``weight``, ``bins`` buckets."""

    toeplitz = False

    def __init__(self, epsilon: float, width: float, bins: int):
        self.width_window = float(width)
        self.half = self.width_window / 2.0
        self.bins = self.buckets = int(bins)
        self.width = 1.0 / self.buckets
        self.edges = np.arange(self.buckets + 1) / self.buckets
        kept = Fraction(self.width_window) * _FLOAT_MARGIN
        self.weight = mixture_keep(epsilon, kept, 1)
        self.q = 1.0 - self.weight  # the uniform density's weight (its density on [0, 1])

    def client_design(self) -> dict:
        """The constants the JavaScript client's randomizer uses."""
        return {"buckets": self.buckets, "weight": self.weight, "window": self.width_window}

    def transition_parts(self) -> tuple[float, np.ndarray]:
        raise NotImplementedError

    def transition_matrix(self) -> np.ndarray:
        constant, bump = self.transition_parts()
        return constant + bump

    def _place(self, values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Where the window's offsets put each value's report (wrapped, or from the clamped centre)."""
        raise NotImplementedError

    def _bucket_of(self, position: np.ndarray) -> np.ndarray:
        bucket = np.floor(position * self.buckets).astype(np.int64)
        return np.clip(bucket, 0, self.buckets - 1, out=bucket)

    def sample(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        r"""One bucket index per input value in [0, 1] (int64): the mixture, as :meth:`OutputGrid.sample`.

        With probability :math:`1 - \lambda` an exact uniform bucket; otherwise the bucket of
        :math:`c(v) + Z`, :math:`Z` uniform on :math:`[-w/2, w/2]` (one 53-bit uniform), wrapped into
        :math:`[0, 1)` on the circle.
        """
        size = values.size
        uniform = rng.integers(0, self.buckets, size=size)
        from_window = rng.random(size) < self.weight
        offsets = self.half * (2.0 * rng.random(size) - 1.0)
        position = self._place(values, offsets)
        return np.where(from_window, self._bucket_of(position), uniform)


class CircularWindowGrid(_WindowGrid):
    """The circular mechanism: a window of width ``w`` centred on the input, wrapping around ``1 = 0``."""

    def _place(self, values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        position = values + offsets
        return position - np.floor(position)

    def point_masses(self, values: np.ndarray) -> np.ndarray:
        """``P[k, j] = Pr[bucket j | input values[k]]`` (exact; the window wrapped by the shifts -1, 0, 1)."""
        values = np.asarray(values, dtype=np.float64)[:, None]
        bump = np.zeros((values.shape[0], self.buckets))
        for shift in (-1, 0, 1):
            bump += np.diff(_window_cdf(self.edges[None, :] - values - shift, self.half), axis=1)
        return self.q * self.width + self.weight * bump

    def transition_column(self) -> np.ndarray:
        """``m`` with ``M[j, i] = m[(j - i) mod bins]``: the law of the bucket for an input uniform on bin 0."""
        h = self.width
        per_bin = np.zeros(self.buckets + 1)
        for shift in (-1, 0, 1):
            ends = self.edges - shift
            per_bin += _window_cdf_integral(ends, self.half) - _window_cdf_integral(ends - h, self.half)
        per_bin /= h
        return self.q * h + self.weight * np.diff(per_bin)

    def transition_parts(self) -> tuple[float, np.ndarray]:
        """``(c, B)`` with ``M = c + B`` (dense; the estimator uses :class:`CirculantOperator` instead)."""
        column = self.transition_column()
        offsets = (np.arange(self.buckets)[:, None] - np.arange(self.bins)[None, :]) % self.bins
        constant = self.q * self.width
        return constant, column[offsets] - constant


class ClampedWindowGrid(_WindowGrid):
    """The interval mechanism: the window of width ``w`` centred on ``clip(v, w/2, 1 - w/2)``."""

    def _centre(self, values):
        return np.clip(values, self.half, 1.0 - self.half)

    def _place(self, values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        return self._centre(values) + offsets

    def point_masses(self, values: np.ndarray) -> np.ndarray:
        """``P[k, j] = Pr[bucket j | input values[k]]`` for inputs in [0, 1] (exact)."""
        centre = self._centre(np.asarray(values, dtype=np.float64))[:, None]
        bump = np.diff(_window_cdf(self.edges[None, :] - centre, self.half), axis=1)
        return self.q * self.width + self.weight * bump

    def transition_parts(self) -> tuple[float, np.ndarray]:
        r"""``(c, B)`` with ``M = c + B``, ``B`` zero where bucket ``j`` cannot meet bin ``i``'s windows.

        Over bin :math:`[c_i, c_{i+1})` the centre is the constant :math:`w/2` below :math:`w/2`,
        :math:`v` itself in :math:`[w/2, 1 - w/2]` and the constant :math:`1 - w/2` above, so
        :math:`\frac1h\int G(e - c(v))\,dv` is a length times :math:`G` for the clamped parts plus
        :math:`K(e - A) - K(e - B)` (:math:`A, B` the bin's ends clipped to the middle part).
        """
        half, h = self.half, 1.0 / self.bins
        low, high = self.edges[:-1][None, :], self.edges[1:][None, :]
        start, stop = np.clip(low, half, 1.0 - half), np.clip(high, half, 1.0 - half)
        below = np.maximum(np.minimum(high, half) - low, 0.0)
        above = np.maximum(high - np.maximum(low, 1.0 - half), 0.0)
        e = self.edges[:, None]
        per_bin = (
            below * _window_cdf(e - half, half)
            + _window_cdf_integral(e - start, half)
            - _window_cdf_integral(e - stop, half)
            + above * _window_cdf(e - (1.0 - half), half)
        ) / h
        bump = self.weight * np.diff(per_bin, axis=0)
        reach = (self.edges[1:, None] > start - half) & (self.edges[:-1, None] < stop + half)
        return self.q * self.width, np.where(reach, bump, 0.0)


class CirculantOperator:
    """Products with the circulant ``M[j, i] = m[(j - i) mod d]`` by real FFT (O(d log d) each)."""

    def __init__(self, column: np.ndarray):
        self.column = np.asarray(column, dtype=np.float64)
        size = self.column.size
        self.shape = (size, size)
        self._spectrum = np.fft.rfft(self.column)

    def matvec(self, x: np.ndarray) -> np.ndarray:
        return np.fft.irfft(np.fft.rfft(x) * self._spectrum, self.shape[0])

    def rmatvec(self, y: np.ndarray) -> np.ndarray:
        # (M^T y)_i = sum_j m[(j - i) mod d] y_j: a circular correlation
        return np.fft.irfft(np.fft.rfft(y) * np.conj(self._spectrum), self.shape[0])
