r"""Re-optimized unary encoding, ``rue`` (Fang, Chen & Liu, "Further Study on Frequency Estimation under
Local Differential Privacy", USENIX Security 2025, the RUE protocol; the authors' ``fp/RUE.py``).

Unary encoding (:mod:`dpdist.local.frequency._unary`: bit :math:`v` is 1 with probability :math:`p`,
every other bit with probability :math:`q`, all independent) whose :math:`(p, q)` minimize the paper's
accuracy measure, the mean over the :math:`d` items of the estimator's variance for frequencies that sum
to one, rather than OUE's variance at :math:`f_v = 0`.  With

.. math::

    h = \sqrt{\frac{d - 1 + e^{-\varepsilon}}{d - 1 + e^{\varepsilon}}}, \qquad
    p = \frac{1}{h + 1}, \qquad q = \frac{1}{h e^\varepsilon + 1},

the ratio :math:`p(1-q)/((1-p)q)` is exactly :math:`e^\varepsilon` (randomizer).  The estimator is the
pure-protocol one of :class:`FrequencyOracle`, :math:`\hat f_v = (C_v/n - q)/(p - q)` (unbiased), with
per-item variance :math:`[f_v p(1-p) + (1 - f_v) q(1-q)]/(n (p-q)^2)`, whose mean over the items is the
paper's MSE

.. math::

    \overline{\mathrm{MSE}} = \frac{q(1-q)}{n (p-q)^2} + \frac{1 - p - q}{n d (p - q)}.

Equation numbers: the paper's text was not reachable when this module was written, so the formulas are
cited by protocol and checked against the authors' code (``get_ana_MSE`` of ``fp/RUE.py``), not by
number; ``benchmarks/bench_fang_oracles.py`` runs both side by side.  For :math:`d = 2`, :math:`h = e^{-\varepsilon/2}` and RUE is
symmetric unary encoding; as :math:`d \to \infty`, :math:`h \to 1` and it tends to OUE.
"""

from __future__ import annotations

import math

from .._docs import shared_parameters
from .._protocol import register
from ._unary import UnaryEncoding

__all__ = ["RUE", "rue_probabilities"]


def rue_probabilities(epsilon: float, domain_size: int) -> tuple[float, float]:
    """The target :math:`(p, q)` of RUE (module docstring); the sampler rounds them to the 2^-32 grid."""
    e = math.exp(epsilon)
    h = math.sqrt((domain_size - 1 + 1.0 / e) / (domain_size - 1 + e))
    return 1.0 / (h + 1.0), 1.0 / (h * e + 1.0)


@register
@shared_parameters
class RUE(UnaryEncoding):
    """Re-optimized unary encoding (Fang, Chen & Liu, USENIX Security 2025).

    Parameters
    ----------
    {epsilon}
    {domain_size}

    Reports are bit-packed ``uint8`` rows of ``ceil(d/8)`` bytes (``d`` bits), as OUE's.
    """

    name = "rue"
    summary = "re-optimized unary encoding: d-bit reports, p=1/(h+1), q=1/(h e^eps+1) minimizing the mean MSE"

    def target_probabilities(self) -> tuple[float, float]:
        return rue_probabilities(self.epsilon, self.domain_size)
