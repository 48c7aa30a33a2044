r"""Stochastic rounding, ``sr`` (Duchi, Jordan, Wainwright; paper 003 sec. 2.2, reference [9]).

On :math:`v \in [-1, 1]` (the bounds rescaled), with :math:`p = e^\varepsilon/(e^\varepsilon+1)`
and :math:`q = 1 - p`, the user reports :math:`+1` with probability
:math:`q + (p - q)(1 + v)/2` and :math:`-1` otherwise.  Both output
probabilities lie in :math:`[q, p]`, so the ratio is at most
:math:`p/q = e^\varepsilon`.  Since :math:`E[v'] = (p - q) v`, the decoded value
:math:`\tilde v = v'/(p - q)` is unbiased, with variance
:math:`1/(p-q)^2 - v^2` per user.

The report is one bit (``uint8``, 1 for :math:`+1`); the output is finite, so
there is no floating-point leakage of the support.  Variance estimation by the
two-phase method of sec. 6.3: see :class:`._mean.MeanProtocol`.
"""

from __future__ import annotations

import numpy as np

from .._bernoulli import exp_lower, odds_probability, realized
from .._docs import shared_parameters
from .._protocol import register
from ._mean import MeanProtocol

__all__ = ["StochasticRounding"]


@register
@shared_parameters
class StochasticRounding(MeanProtocol):
    """Stochastic rounding to the two extreme values, for mean (and two-phase variance) estimation.

    Parameters
    ----------
    {epsilon}
    {bounds}

    Notes
    -----
    ``estimate`` returns a :class:`~dpdist.MeanEstimate`;
    ``estimate_mean_variance(values, rng)`` runs the two-phase variance protocol.
    """

    name = "sr"
    summary = "stochastic rounding (Duchi et al.): one bit per user, unbiased mean; two-phase variance"

    def _setup(self):
        # p is the largest grid probability with p / (1 - p) <= e^eps and q = 1 - p (also on the grid)
        self._p = odds_probability(exp_lower(self.epsilon))
        self._q = 1.0 - self._p
        self._decoded = np.array([-1.0, 1.0]) / (self._p - self._q)

    def _plus_probability(self, v: np.ndarray) -> np.ndarray:
        r"""The threshold of the +1 draw, clipped to the grid values ``[q, p]``.

        ``U < t`` (``U`` on the :math:`2^{-53}` grid) has probability :math:`\lceil t 2^{53}\rceil 2^{-53}`,
        which for :math:`t \in [q, p]` stays in :math:`[q, p]`: the ratio is at most :math:`p/q \le e^\varepsilon`
        whatever the rounding of :math:`q + (p-q)(1+v)/2`.
        """
        return np.clip(self._q + (self._p - self._q) * (1.0 + v) / 2.0, self._q, self._p)

    def _sample(self, v, rng):
        return (rng.random(v.size) < self._plus_probability(v)).astype(np.uint8)

    def _unit_channel(self, v):
        plus = realized(self._plus_probability(v))  # what the draw really has
        return np.stack([1.0 - plus, plus], axis=1)

    def _unit_second_moment(self, v):
        return np.full(v.shape, 1.0 / (self._p - self._q) ** 2)
