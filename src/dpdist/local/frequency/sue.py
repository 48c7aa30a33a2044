r"""Symmetric unary encoding, ``sue`` (basic one-time RAPPOR).

Each of the :math:`d` bits of the one-hot encoding of the user's item is kept
with probability :math:`p = e^{\varepsilon/2} / (e^{\varepsilon/2} + 1)` and
flipped otherwise, so bit :math:`v` is 1 with probability :math:`p` and every
other bit with :math:`q = 1 - p`; the privacy ratio is
:math:`p(1-q)/((1-p)q) = (p/q)^2 = e^\varepsilon`.  (Erlingsson, Pihur,
Korolova, CCS 2014, "basic one-time RAPPOR"; Wang et al., USENIX Security 2017,
sec. 4.2; paper 001 sec. II-B; paper 004 sec. 5 baseline "RAPPOR".)

Sampling, the bit-packed report format and the exact aggregate sampler are
shared with OUE (:mod:`dpdist.local.frequency._unary`).
"""

from __future__ import annotations

import math

from .._docs import shared_parameters
from .._protocol import register
from ._unary import UnaryEncoding

__all__ = ["SUE"]


@register
@shared_parameters
class SUE(UnaryEncoding):
    """Symmetric unary encoding (basic one-time RAPPOR).

    Parameters
    ----------
    {epsilon}
    {domain_size}

    Reports are bit-packed ``uint8`` rows of ``ceil(d/8)`` bytes.
    """

    name = "sue"
    summary = "symmetric unary encoding (basic RAPPOR): each bit kept w.p. e^(eps/2)/(e^(eps/2)+1)"

    def target_probabilities(self) -> tuple[float, float]:
        half = math.exp(self.epsilon / 2.0)
        return half / (half + 1.0), 1.0 / (half + 1.0)
