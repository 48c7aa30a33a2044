r"""Re-optimized local hashing, ``rlh`` (Fang, Chen & Liu, "Further Study on Frequency Estimation under
Local Differential Privacy", USENIX Security 2025, the RLH protocol; the authors' ``fp/RLH.py``).

Local hashing as OLH (:mod:`dpdist.local.frequency.olh`: a uniform function :math:`h` of the prime
family into :math:`[g]`, then :math:`g`-ary randomized response of :math:`h(v)`, :math:`p =
e^\varepsilon/(e^\varepsilon + g - 1)`; report :math:`(h, y)`) with the range :math:`g` that minimizes the
paper's accuracy measure, the mean over the :math:`d` items of the estimator's variance, rather than
OLH's :math:`e^\varepsilon + 1`.  The real-valued optimum is

.. math::

    g^\circ = h_d e^\varepsilon + 1, \qquad h_d = \sqrt{\frac{d - 1 + e^{-\varepsilon}}{d - 1 + e^{\varepsilon}}},

and :math:`g` is whichever of :math:`\lfloor g^\circ \rfloor` and :math:`\lceil g^\circ \rceil` has the
lower mean MSE with :math:`p^* = p`, :math:`q^* = 1/g` (the paper's rule, and its mean MSE

.. math::

    \overline{\mathrm{MSE}}(g) = \frac{q^*(1-q^*)}{n (p^*-q^*)^2} + \frac{1 - p^* - q^*}{n d (p^* - q^*)},

as ``get_ana_MSE_by_g`` of the authors' code; the smaller :math:`g` on a tie).  :math:`g^\circ \ge 2` for
every :math:`d \ge 2`.  The estimator and its variance are OLH's, with this family's exact collision
probability :math:`c` (:math:`q^* = p c + (1-p)(1-c)/(g-1)`, :math:`\approx 1/g`), so the estimator is
exactly unbiased for dpdist's hash family; ``variance`` gives its per-item variance
:math:`[f_v p^*(1-p^*) + (1-f_v) q^*(1-q^*)]/(n(p^*-q^*)^2)`.

Equation numbers: the paper's text was not reachable when this module was written, so the formulas are
cited by protocol and checked against the authors' code, not by number; ``benchmarks/bench_fang_oracles.py``
runs both side by side.  The authors draw a fully random hash per user from its index (a seeded NumPy
generator); dpdist keeps OLH's Carter-Wegman family, whose report is the seed of the function (``uint64``
rows ``(seed, value)``, as OLH's).
"""

from __future__ import annotations

import math

from .._docs import shared_parameters
from .._protocol import register
from . import _hashing
from ._oracle import FrequencyOracle
from .olh import OLH

__all__ = ["RLH", "rlh_hash_range"]


def _mean_mse(epsilon: float, domain_size: int, g: int) -> float:
    """The paper's mean MSE (times n) of local hashing into ``g`` values with ``q* = 1/g`` (module docstring)."""
    e = math.exp(epsilon)
    p_star = e / (e + g - 1)
    q_star = 1.0 / g
    gap = p_star - q_star
    return q_star * (1 - q_star) / (gap * gap) + (1 - p_star - q_star) / (domain_size * gap)


def rlh_hash_range(epsilon: float, domain_size: int) -> int:
    r"""RLH's :math:`g`: the floor or the ceiling of :math:`h_d e^\varepsilon + 1`, the lower mean MSE (module docstring)."""
    e = math.exp(epsilon)
    h = math.sqrt((domain_size - 1 + 1.0 / e) / (domain_size - 1 + e))
    optimum = h * e + 1.0
    low, high = max(2, math.floor(optimum)), max(2, math.ceil(optimum))
    return high if _mean_mse(epsilon, domain_size, high) < _mean_mse(epsilon, domain_size, low) else low


@register
@shared_parameters
class RLH(OLH):
    """Re-optimized local hashing (Fang, Chen & Liu, USENIX Security 2025).

    Parameters
    ----------
    {epsilon}
    {hashed_domain_size}
    hash_prime : int
        The prime :math:`P` of the hash family; default :math:`2^{31}-1`.

    Notes
    -----
    Reports are ``uint64`` arrays of shape ``(n, 2)`` as OLH's: column 0 the hash seed in
    :math:`[0, (P-1)P)`, column 1 the perturbed hash value in :math:`[0, g)`; ``hash_range`` gives
    :math:`g` (:func:`rlh_hash_range`).
    """

    name = "rlh"
    summary = "re-optimized local hashing: OLH with g = round(h e^eps + 1) minimizing the mean MSE"
    _constraints = {**FrequencyOracle._constraints, "hash_prime": OLH._constraints["hash_prime"]}
    _defaults = {"hash_prime": OLH._defaults["hash_prime"]}

    def _setup(self):
        self._prime = self._checked_prime()
        self._g = rlh_hash_range(self.epsilon, self.domain_size)
        self._n_seeds = _hashing.seed_count(self._prime)
        self._setup_hashed_grr()
