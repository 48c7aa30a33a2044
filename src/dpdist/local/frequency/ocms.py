r"""Optimized count-mean sketch with randomized response, ``ocms`` (Pan, IEEE CSF 2025).

Pan, "Improving Count-Mean Sketch as the Leading Locally Differentially Private
Frequency Estimator for Large Dictionaries", 38th IEEE Computer Security
Foundations Symposium (CSF 2025), sec. 3 and Algorithm 1 ("OCMS+RR").

**Mechanism** (Algorithm 1, ``CLIENT``; sec. 3, steps 1-3).  Each user draws
one hash function of a pairwise-independent family :math:`[d] \to [m]` (the
count-mean sketch's "row", drawn per user) and reports it with the hashed item
perturbed by :math:`m`-ary randomized response (eq. 12):
:math:`\Pr[z = h(x)] = e^\varepsilon/(e^\varepsilon + m - 1)`, each other value
:math:`1/(e^\varepsilon + m - 1)`.  Sec. 4.4 shows this is local hashing; what
the paper adds is the choice of the sketch's width :math:`m` for the loss that
matters, which is what this protocol implements:

* ``objective="worst-case"`` (MSE-OCMS+RR, Theorem 3.6, eq. 13): with a public
  bound :math:`f^*` on every item's frequency (``max_frequency``, default 1:
  no prior knowledge), :math:`m` is an integer next to
  :math:`1 + e^{\varepsilon/2}` when :math:`f^* > 1/2` and to
  :math:`1 + \Delta_{MSE}/(f^* e^\varepsilon + 1 - f^*)` otherwise, with
  :math:`\Delta_{MSE} = e^{\varepsilon/2}\sqrt{[(1-f^*)e^\varepsilon + f^*][f^* e^\varepsilon + 1 - f^*]}`
  (eq. 20).  The worst-case MSE is then
  :math:`e^{\varepsilon/2}/(n(e^{\varepsilon/2}-1)^2)` for :math:`f^* > 1/2` and
  :math:`2(\Delta_{MSE} + e^\varepsilon)/(n(e^\varepsilon - 1)^2)` otherwise.
  At that continuous optimum (:math:`f^* > 1/2`) :math:`p^* + q^* = 1`, so every item's
  variance is the same whatever its frequency; an integer :math:`m` nearly so.
* ``objective="l2"`` (l-OCMS+RR, Theorem 3.8): :math:`m` next to
  :math:`1 + \Delta_l/(e^\varepsilon + d - 1)`,
  :math:`\Delta_l = e^{\varepsilon/2}\sqrt{(e^\varepsilon + d - 1)(d e^\varepsilon - e^\varepsilon + 1)}`,
  minimizing the :math:`\ell_2` loss :math:`\max_X \sum_x \mathrm{MSE}(\hat f(x))` (eq. 11, 21);
  it tends to OLH's :math:`1 + e^\varepsilon` for :math:`d \gg e^\varepsilon`.

Algorithm 1 rounds these optima to the closest integer; dpdist takes the better of the two
integers around them (:func:`ocms_hash_range`); at the paper's settings (:math:`\varepsilon` = 1..5,
:math:`f^* = 1`) that is :math:`m` = 3, 4, 6, 8, 13 against Algorithm 1's 3, 4, 5, 8, 13 (at
:math:`\varepsilon = 3`, 0.3 % less worst-case MSE).

**Hash family** (sec. 3.5).  dpdist's Carter–Wegman family
:math:`h_{a,b}(x) = ((a x + b) \bmod P) \bmod m` (:mod:`dpdist.local.frequency._hashing`;
default :math:`P = 2^{31} - 1`, the paper's condition :math:`P \ge \max(d + 1, 5m)`
holds for every allowed :math:`d \le P - 1` and :math:`m \le 2^{20}`), with its
*exact* collision probability :math:`c` (the paper's Lemma 3.2 for its own family).

**Estimator** (eq. 2, with the paper's imperfect-hashing correction eq. 8,
:math:`m' = 1/\bar c`).  A report :math:`(h, z)` supports item :math:`x` when
:math:`h(x) = z`; with the support count :math:`C_x`,
:math:`\hat f(x) = (C_x/n - q^*)/(p^* - q^*)`,
:math:`p^* = e^\varepsilon/(e^\varepsilon + m - 1)`,
:math:`q^* = p^* c + (1 - p^*)(1 - c)/(m - 1)`, which with :math:`c = 1/m` is
:math:`\frac{m}{n(m-1)}\sum_i \hat y^{(i)}[h^{(i)}(x)] - \frac{1}{m-1}` of eq. 2
with the RR decoding of Algorithm 1 (``DECODE``).

**Variance** (eq. 6 with eq. 12, i.e. eq. 19): for a fixed data set, linear in
the item's own frequency,

.. math::

    \operatorname{Var}[\hat f(x)] = \frac{f(x)\,p^*(1-p^*) + (1-f(x))\,q^*(1-q^*)}{n (p^* - q^*)^2},

:meth:`worst_case_variance` its largest value over :math:`f(x) \in [0, f^*]`
(Theorem 3.6, eq. 1) and :meth:`l2_loss` its sum over the items of any data set (eq. 21).

**Privacy.**  As OLH's: a report's probability is the family's uniform weight
times an RR probability, every ratio at most :math:`e^\varepsilon`; the RR keep
probability is on the :math:`2^{-53}` grid (:mod:`dpdist.local._bernoulli`), and
``channel()`` enumerates small families exactly.
"""

from __future__ import annotations

import math

import numpy as np

from ..._validation import Interval, Options, Prime
from .._docs import shared_parameters
from .._protocol import ProtocolTags, register
from ._oracle import FrequencyOracle, check_max_frequency
from .olh import OLH

__all__ = ["OCMS", "check_max_frequency", "ocms_hash_range"]

_MERSENNE_31 = 2**31 - 1
#: the widest sketch (as OLH's ``hash_range``): beyond it the reports would not be faster to aggregate nor more accurate
_MAX_WIDTH = 2**20
OBJECTIVES = ("worst-case", "l2")


def _loss(width: int, e: float, domain_size: int, objective: str, max_frequency: float) -> float:
    """The loss of width ``width`` for ``n = 1`` and collision probability :math:`1/m` (eq. 19 and 21)."""
    p = e / (e + width - 1.0)
    q = 1.0 / width
    scale = (p - q) ** 2
    if objective == "l2":
        return (p * (1.0 - p) + (domain_size - 1.0) * q * (1.0 - q)) / scale  # eq. 21
    at_zero = q * (1.0 - q) / scale
    at_bound = (max_frequency * p * (1.0 - p) + (1.0 - max_frequency) * q * (1.0 - q)) / scale
    return max(at_zero, at_bound)  # eq. 1 with eq. 19: the variance is linear in f


def ocms_hash_range(epsilon: float, domain_size: int, objective: str = "worst-case", max_frequency: float = 1.0) -> int:
    r"""The sketch width :math:`m` of OCMS+RR: Algorithm 1, ``HASHRANGE`` (eq. 13, 20; Theorem 3.8).

    The paper's continuous optimum is :math:`1 + e^{\varepsilon/2}` (worst case,
    :math:`f^* > 1/2`), :math:`1 + \Delta_{MSE}/(f^* e^\varepsilon + 1 - f^*)` (worst
    case, :math:`f^* \le 1/2`) or :math:`1 + \Delta_l/(e^\varepsilon + d - 1)` (``"l2"``),
    and Algorithm 1 rounds it to the closest integer.  The loss is unimodal in :math:`m`
    (Appendix B: it decreases then increases), so the integer optimum is one of the two
    integers around it; dpdist takes the one of lower loss (eq. 19 or 21 with
    :math:`\bar c = 1/m`; the smaller on a tie), which the closest integer misses by up to
    4 % of worst-case MSE at :math:`f^* = 1` and 10 % at :math:`f^* = 1/2` (e.g.
    :math:`\varepsilon = 0.8`: :math:`m = 3`, not 2).  Kept in :math:`[2, 2^{20}]`.
    Arguments are trusted (checked by :class:`OCMS`).
    """
    e = math.exp(epsilon)
    root = math.exp(epsilon / 2.0)
    if objective == "l2":
        delta = root * math.sqrt((e + domain_size - 1.0) * (domain_size * e - e + 1.0))
        optimum = 1.0 + delta / (e + domain_size - 1.0)  # Theorem 3.8
    elif max_frequency > 0.5:
        optimum = 1.0 + root  # eq. 13, second case
    else:
        f = max_frequency
        delta = root * math.sqrt(((1.0 - f) * e + f) * (f * e + 1.0 - f))
        optimum = 1.0 + delta / (f * e + 1.0 - f)  # eq. 20
    low = int(min(_MAX_WIDTH, max(2, math.floor(optimum))))
    high = int(min(_MAX_WIDTH, low + 1))
    if _loss(high, e, domain_size, objective, max_frequency) < _loss(low, e, domain_size, objective, max_frequency):
        return high
    return low


@register
@shared_parameters
class OCMS(OLH):
    """Optimized count-mean sketch with randomized response (OCMS+RR).

    Parameters
    ----------
    {epsilon}
    {hashed_domain_size}
    objective : {"worst-case", "l2"}
        The loss the width :math:`m` minimizes: the worst-case MSE of any item
        (MSE-OCMS+RR, default) or the :math:`\\ell_2` loss over all items (l-OCMS+RR).
    max_frequency : float
        :math:`f^* \\in [1/d, 1]`, a public bound on every item's frequency for
        ``objective="worst-case"`` (default 1: none known); ignored by ``"l2"``.
        A bound that the data exceeds costs at most :math:`(f - f^*)(1-2f^*)/n`
        of worst-case MSE (Theorem 3.7); privacy never depends on it.
    hash_prime : int
        The prime :math:`P` of the family; default :math:`2^{31}-1`.

    Notes
    -----
    Reports are OLH's: ``uint64`` rows ``(seed, value)`` (128 bits in dpdist's
    encoding; their information is :math:`\\log_2((P-1)P) + \\log_2 m` bits, the
    paper's :math:`2\\lceil\\log_2 \\max(d+1, 5m)\\rceil + \\log_2 m` with its smallest field).
    The collector hashes every report against every item (:math:`O(nd)`).
    """

    name = "ocms"
    summary = "optimized count-mean sketch + RR (Pan, CSF 2025): OLH's report with the width m minimizing the worst-case MSE or the l2 loss"
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=False, bernoulli_support=True)
    _constraints = {
        **FrequencyOracle._constraints,
        "objective": Options(OBJECTIVES),
        "max_frequency": Interval(0.0, 1.0, closed="both"),
        "hash_prime": Prime(low=3, high=_MERSENNE_31),
    }
    _defaults = {"objective": "worst-case", "max_frequency": 1.0, "hash_prime": _MERSENNE_31}

    def _setup(self):
        self._prime = self._checked_prime()
        bound = check_max_frequency(self.display_name, self._params["max_frequency"], self.domain_size)
        self._g = ocms_hash_range(self.epsilon, self.domain_size, self._params["objective"], bound)
        self._n_seeds = (self._prime - 1) * self._prime
        self._setup_hashed_grr()

    @property
    def objective(self) -> str:
        """``"worst-case"`` or ``"l2"``: the loss the width was chosen for."""
        return self._params["objective"]

    @property
    def max_frequency(self) -> float:
        """The public bound :math:`f^*` the worst-case width assumes."""
        return float(self._params["max_frequency"])

    def worst_case_variance(self, n: int, max_frequency: float | None = None) -> float:
        r"""The largest variance of any item whose frequency is at most :math:`f^*` (eq. 1, Theorem 3.6).

        The variance is linear in the item's frequency (eq. 19), so the largest is at
        :math:`f = 0` or :math:`f = f^*`.  ``max_frequency`` defaults to the protocol's own.
        """
        bound = self.max_frequency if max_frequency is None else check_max_frequency(
            f"{self.display_name}.worst_case_variance", max_frequency, self.domain_size)
        at_ends = self.variance(n, np.array([0.0, bound] + [0.0] * (self.domain_size - 2)))
        return float(max(at_ends[0], at_ends[1]))

    def l2_loss(self, n: int) -> float:
        r"""The :math:`\ell_2` loss :math:`\sum_x \operatorname{Var}[\hat f(x)]` of any data set (eq. 11, 21).

        Summing the linear variance over items with :math:`\sum_x f(x) = 1` gives
        :math:`[p^*(1-p^*) + (d-1) q^*(1-q^*)] / (n (p^*-q^*)^2)`, whatever the data.
        """
        p, q = self.support_probabilities()
        return float((p * (1 - p) + (self.domain_size - 1) * q * (1 - q)) / (n * (p - q) ** 2))
