r"""Optimized unary encoding, ``oue`` (Wang et al., USENIX Security 2017, sec. 4.3).

Bit :math:`v` is kept at 1 with probability :math:`p = 1/2`; every other bit is
set with probability :math:`q = 1/(e^\varepsilon + 1)`, the choice that
minimizes the estimator's variance
:math:`4 e^\varepsilon / (n (e^\varepsilon - 1)^2)` at :math:`f_v = 0`.
See :mod:`dpdist.local.frequency._unary` for the bit-exact sampling and packed
report format.
"""

from __future__ import annotations

import math

from .._docs import shared_parameters
from .._protocol import register
from ._unary import UnaryEncoding

__all__ = ["OUE"]


@register
@shared_parameters
class OUE(UnaryEncoding):
    """Optimized unary encoding.

    Parameters
    ----------
    {epsilon}
    {domain_size}

    Reports are bit-packed ``uint8`` rows of ``ceil(d/8)`` bytes.
    """

    name = "oue"
    summary = "optimized unary encoding: bit-packed d-bit reports, p=1/2, q=1/(e^eps+1)"

    def target_probabilities(self) -> tuple[float, float]:
        return 0.5, 1.0 / (math.exp(self.epsilon) + 1.0)
