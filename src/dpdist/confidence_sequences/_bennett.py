r"""Confidence sequence of a mean whose reports' range is far wider than their spread (PM), from the sum alone.

PM decodes each report to a value :math:`g \in [-C, C]` with :math:`E[g \mid v] = v`
(:mod:`dpdist.local.numerical.pm`), and :math:`C = 4.08` at :math:`\varepsilon = 1`
while :math:`E[g^2 \mid v] \le 6.22`: the bounded-range mixture (:mod:`._boundary`) pays
for the worst law on :math:`[-C, C]`, whose variance :math:`C^2 - \mu^2` is 2.7 times the
largest PM can have.  The variance is bounded for every candidate mean :math:`\mu` by two upper bounds
of the second moment :math:`m_2 = E[g^2]`:

* the channel's: :math:`m_2 \le \max_v E[g^2 \mid v]` (exact channel, maximum over a
  grid of 201 values of :math:`v \in [-1, 1]`, attained at :math:`v = \pm 1` for PM);
* the reports': the aggregate is the histogram of decoded values, so
  :math:`\sum_i g_i^2` is known, and the beta-binomial mixture sequence of
  :math:`g^2/C^2 \in [0, 1]` at level :math:`\alpha/2` gives :math:`U_n \ge m_2` at
  every :math:`n` (the actual users' spread, often far below the worst one: at
  :math:`\varepsilon = 4` a value near the middle has :math:`E[g^2 \mid v] = 0.08`, one
  at an end 1.24).

With :math:`V_n(\mu) = \min(U_n, \max_v E[g^2 \mid v]) - \mu^2`,
:math:`X = g - \mu \le b = C - \mu` and :math:`-X \le a = C + \mu`, Bennett's
inequality (Bennett 1962; the sub-Poisson condition of Howard, Ramdas, McAuliffe &
Sekhon 2021, Fact 1) gives :math:`E[e^{\lambda X}] \le \exp(V\phi(\lambda))` for any
:math:`V \ge \operatorname{Var}[g]`, with :math:`\phi(\lambda) = (e^{\lambda b} - 1 - \lambda b)/b^2`
for :math:`\lambda \ge 0` and :math:`(e^{-\lambda a} - 1 + \lambda a)/a^2` below.  So
with the true :math:`m_2`, :math:`\exp(\lambda(S_n - n\mu) - n(m_2 - \mu^2)\phi(\lambda))` is a
supermartingale under :math:`\mu` for every :math:`\lambda`, and so is its discrete normal
mixture :math:`M_n(\mu, m_2)` (:func:`._boundary.normal_grid`), which only grows as the
variance it is given shrinks.  On the event (probability :math:`\ge 1 - \alpha/2`) that
:math:`U_n \ge m_2` at every :math:`n`, :math:`M_n(\mu, U_n) \le M_n(\mu, m_2)`, and Ville's
inequality for the latter at :math:`\alpha/2` makes
:math:`\{\mu: M_n(\mu, \min(U_n, \cdot)) < 2/\alpha\}` hold at every :math:`n` at once with
probability :math:`1 - \alpha` (a union bound).  It depends on :math:`n` and the sums of
:math:`g` and :math:`g^2` only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from ._boundary import bisect_end, mixture_interval, normal_grid

__all__ = ["BennettMean", "largest_second_moment"]


def largest_second_moment(protocol) -> float:
    """:math:`\\max_v E[g^2 \\mid v]` of a PM/SR protocol's decoded report, over 201 values of ``v`` in [-1, 1]."""
    return float(np.max(protocol._unit_second_moment(np.linspace(-1.0, 1.0, 201))))


@dataclass(frozen=True)
class BennettMean:
    """The sequence of ``offset + scale * mu``, ``mu`` in [-1, 1] the mean of ``g`` in ``[-bound, bound]``.

    ``total`` is the reports' sum of ``g`` after ``n`` of them; the mean of ``g`` is the
    mean of the users' values on [-1, 1], so the search stays in [-1, 1].
    """

    total: np.ndarray
    squares: np.ndarray
    n: float
    alpha: float
    bound: float
    second_moment: float
    target_n: float
    offset: float = 0.0
    scale: float = 1.0

    def _second_moment(self, squares: np.ndarray, n: float) -> np.ndarray:
        """:math:`\\min(U_n, \\max_v E[g^2 | v])`: the reports' upper bound at level alpha/2, and the channel's."""
        upper = self.bound**2 * mixture_interval(squares / self.bound**2, n, self.alpha / 2, target_n=self.target_n)[1]
        return np.minimum(upper, self.second_moment)

    def _log_mixture(self, mu: np.ndarray, total: np.ndarray, n: float, second: np.ndarray) -> np.ndarray:
        """:math:`\\log M_n(\\mu, \\cdot)`; ``+inf`` where :math:`\\mu^2` exceeds the second moment's bound
        (no law with that mean has a second moment under it: outside on the event the bound holds)."""
        variance = second - mu**2
        possible = variance > 1e-12
        variance = np.where(possible, variance, 1.0)
        lam, log_weights = normal_grid(variance, self.alpha / 2, self.target_n)
        up, down = (lam * (self.bound - mu)[:, None]), (-lam * (self.bound + mu)[:, None])
        # phi(lambda) with its exponent capped: past e^700 the term is -inf whichever way it is computed
        phi = np.where(lam >= 0, (np.expm1(np.minimum(up, 700.0)) - up) / (self.bound - mu)[:, None] ** 2,
                       (np.expm1(np.minimum(down, 700.0)) - down) / (self.bound + mu)[:, None] ** 2)
        value = logsumexp(log_weights + lam * (total - n * mu)[:, None] - n * variance[:, None] * phi, axis=1)
        return np.where(possible, value, np.inf)

    def interval(self, n: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` of ``offset + scale * mu``, now or projected to ``n`` reports with the same mean."""
        count = self.n if n is None else n
        ratio = 1.0 if n is None else n / max(self.n, 1.0)
        total, squares = np.atleast_1d(self.total * ratio), np.atleast_1d(self.squares * ratio)
        low, high = np.full(total.shape, -1.0), np.full(total.shape, 1.0)
        if count > 0:
            center = np.clip(total / count, -1.0, 1.0)
            second = self._second_moment(squares, count)
            threshold = np.log(2.0 / self.alpha)

            def excess(mu):
                return self._log_mixture(mu, total, count, second) - threshold

            low, high = bisect_end(excess, center, low), bisect_end(excess, center, high)
        return self.offset + self.scale * low, self.offset + self.scale * high

    def widths(self, n: float | None = None) -> np.ndarray:
        low, high = self.interval(n)
        return high - low
