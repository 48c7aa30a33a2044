r"""Discrete square wave: "bucketize before randomize" (B-R) over ``d`` input buckets (paper 003, sec. 5.4).

Paper 003, sec. 5.4.  The user first maps
:math:`v \in [0, 1]` to its bucket :math:`i = \min(\lfloor vd \rfloor, d-1)`, then
reports :math:`\tilde v \in \{0, \dots, d + 2m - 1\}` with

.. math::

    \Pr[\tilde v = j] = \begin{cases} p & i \le j \le i + 2m \\ q & \text{otherwise} \end{cases},
    \qquad p = \frac{e^\varepsilon}{(2m+1)e^\varepsilon + d - 1}, \quad
    q = \frac{1}{(2m+1)e^\varepsilon + d - 1},

(the paper indexes outputs from :math:`-m`; we shift by :math:`m`), and
:math:`m = \lfloor b d \rfloor` with :math:`b` the half-width in units of the
input range (the paper's :math:`b = \lfloor \frac{\varepsilon e^\varepsilon - e^\varepsilon + 1}{2e^\varepsilon(e^\varepsilon - 1 - \varepsilon)} d \rfloor`).
The report is a mixture: with probability :math:`\lambda = (2m+1)(p - q)` a
uniform index of the window :math:`[i, i+2m]`, otherwise a uniform index of
all :math:`d + 2m` (then :math:`\lambda/(2m+1) + (1-\lambda)/(d+2m) = p`).
The transition matrix :math:`M_{j,i}` is Toeplitz.
"""

from __future__ import annotations

import numpy as np

from .._bernoulli import mixture_keep
from ._base import unit_bin_index

__all__ = ["DiscreteSquareWave"]


class DiscreteSquareWave:
    """B-R square wave on ``bins`` input buckets with a window of ``2 * half_width + 1`` outputs."""

    toeplitz = True

    def __init__(self, epsilon: float, bins: int, half_width: int):
        self.bins = int(bins)
        self.half_width = int(half_width)
        self.window = 2 * self.half_width + 1
        self.buckets = self.bins + 2 * self.half_width
        # lambda on the 2^-53 grid: the largest with ratio 1 + lambda (d + 2m) / ((2m + 1)(1 - lambda))
        # <= e^eps (dpdist.local._bernoulli); p and q are the probabilities it realizes
        self.weight = mixture_keep(epsilon, self.window, self.buckets)
        self.q = (1.0 - self.weight) / self.buckets
        self.p = self.weight / self.window + self.q

    def client_design(self) -> dict:
        """The constants the JavaScript client's randomizer uses."""
        return {"buckets": self.buckets, "weight": self.weight, "halfWidth": self.half_width}

    def input_bucket(self, values: np.ndarray) -> np.ndarray:
        return unit_bin_index(values, self.bins)

    def transition_parts(self) -> tuple[float, np.ndarray]:
        """``(q, B)`` with ``M = q + B``, ``B = p - q`` on the window ``0 <= j - i <= 2m``, else 0."""
        offset = np.arange(self.buckets)[:, None] - np.arange(self.bins)[None, :]
        return self.q, np.where((offset >= 0) & (offset < self.window), self.p - self.q, 0.0)

    def transition_matrix(self) -> np.ndarray:
        offset = np.arange(self.buckets)[:, None] - np.arange(self.bins)[None, :]
        return np.where((offset >= 0) & (offset < self.window), self.p, self.q)

    def point_masses(self, values: np.ndarray) -> np.ndarray:
        return self.transition_matrix()[:, self.input_bucket(values)].T

    def sample(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        size = values.size
        uniform = rng.integers(0, self.buckets, size=size)
        in_window = rng.random(size) < self.weight
        window = self.input_bucket(values) + rng.integers(0, self.window, size=size)
        return np.where(in_window, window, uniform)

    def simulate(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Exact aggregate sampler: binomial per input bucket, multinomials for the two mixture parts."""
        counts = np.bincount(self.input_bucket(values), minlength=self.bins)
        kept = rng.binomial(counts, self.weight)
        per_offset = rng.multinomial(kept, np.full(self.window, 1.0 / self.window))  # (bins, window)
        statistic = rng.multinomial(values.size - kept.sum(), np.full(self.buckets, 1.0 / self.buckets))
        for offset in range(self.window):
            statistic[offset : offset + self.bins] += per_offset[:, offset]
        return statistic.astype(np.int64)
