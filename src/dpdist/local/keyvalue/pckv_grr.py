r"""PCKV-GRR, ``pckv-grr``: Padding-and-Sampling, then one key-value pair by generalized randomized response.

Gu, Li, Cheng, Xiong, Cao, USENIX Security 2020.  Each user samples one pair :math:`\langle k, v\rangle`
of their set padded to length :math:`\ell` (Algorithm 1), discretizes :math:`v` to :math:`v^* = \pm 1`
and reports one pair over the :math:`d' = d + \ell` real and dummy keys (Algorithm 3):
:math:`\langle k, v^*\rangle` w.p. :math:`ap`, :math:`\langle k, -v^*\rangle` w.p. :math:`a(1-p)`, and
:math:`\langle i, \pm 1\rangle` for each other key :math:`i` w.p. :math:`b/2` each,
:math:`b = (1-a)/(d'-1)`.

Because only one key is reported, the sampling amplifies: with :math:`e^{\varepsilon_1} = a(d'-1)/(1-a)`,
:math:`e^{\varepsilon_2} = p/(1-p)` and :math:`\lambda = (\ell - 1)(e^{\varepsilon_2} + 1)/2`, the combined
report is :math:`\varepsilon`-LDP with

.. math::

    \varepsilon = \ln \frac{e^{\varepsilon_1 + \varepsilon_2} + \lambda}
                          {\min\{e^{\varepsilon_1}, (e^{\varepsilon_2} + 1)/2\} + \lambda}

(Theorem 3, proof in Appendix B).  The optimized allocation (proof in Appendix F) is
:math:`e^{\varepsilon_2} = \ell(e^\varepsilon - 1) + 1`, :math:`e^{\varepsilon_1} = \ell(e^\varepsilon - 1)/2 + 1`,
i.e. :math:`a = \frac{\ell(e^\varepsilon - 1) + 2}{\ell(e^\varepsilon - 1) + 2d'}`,
:math:`p = \frac{\ell(e^\varepsilon - 1) + 1}{\ell(e^\varepsilon - 1) + 2}`.  Here ``p`` is the largest multiple
of :math:`2^{-53}` with odds at most :math:`\ell(e^\varepsilon - 1) + 1`, and ``a`` the largest multiple for which
Theorem 3's epsilon, in exact rational arithmetic with the realized ``p``, is at most :math:`\varepsilon`
(it grows with ``a``); ``channel`` gives the exact law over sets and the conformance kit checks it.

Reports: the item :math:`2i + s` (``ItemReports(2d')``), :math:`s = 0` for ``+1``, 1 for ``-1``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .._bernoulli import exp_lower, grid_floor, odds_probability
from .._protocol import ProtocolTags, register
from .._report_kinds import ItemReports
from ._padded import PaddedKeyValue

__all__ = ["PCKVGRR"]


def _largest_key_odds(bound: Fraction, e2: Fraction, ell: int) -> Fraction:
    r"""The largest :math:`x = e^{\varepsilon_1}` with Theorem 3's ratio at most ``bound`` (it grows with x)."""
    c = (e2 + 1) / 2
    lam = (ell - 1) * c
    above = (bound * (c + lam) - lam) / e2  # x >= c: (x e2 + lam) / (c + lam) <= bound
    if above >= c:
        return above
    # x < c: (x e2 + lam) / (x + lam) <= bound  <=>  x (e2 - bound) <= lam (bound - 1)
    return lam * (bound - 1) / (e2 - bound)


@register
class PCKVGRR(PaddedKeyValue):
    """PCKV-GRR over ``domain_size`` keys with padding length ``padding_length`` (see the module docstring)."""

    name = "pckv-grr"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    summary = "key-value pairs: padding-and-sampling, one pair by randomized response, correlated (PCKV-GRR)"
    tags = ProtocolTags(kind="key_value", finite_channel=True, exact_simulate=False, unbiased=True)

    @property
    def statistic_total_per_report(self) -> int:
        """1: the statistic is a histogram of the reported (key, sign) pairs."""
        return 1

    def _setup(self):
        bound = exp_lower(self.epsilon)
        ell, width = self.padding_length, self.extended_size
        p = Fraction(odds_probability(ell * (bound - 1) + 1))
        x = _largest_key_odds(bound, p / (1 - p), ell)
        self._p = float(p)
        self._a = grid_floor(x / (x + width - 1))
        self._b = (1.0 - self._a) / (width - 1)

    def composed_epsilon(self) -> float:
        """Theorem 3's epsilon for the realized a and p."""
        a, p = Fraction(self._a), Fraction(self._p)
        e1, e2 = a * (self.extended_size - 1) / (1 - a), p / (1 - p)
        lam = (self.padding_length - 1) * (e2 + 1) / 2
        return self._log((e1 * e2 + lam) / (min(e1, (e2 + 1) / 2) + lam))

    # ------------------------------------------------------------------ client
    def _report_format(self):
        return ItemReports(2 * self.extended_size)

    def _privatize(self, values, rng):
        keys, signs = self._sample(values, rng)
        n, width = len(values), self.extended_size
        kept = rng.random(n) < self._a
        value_kept = rng.random(n) < self._p
        other = rng.integers(0, width - 1, size=n, dtype=np.int64)  # drawn either way
        other += other >= keys
        fair = rng.random(n) < 0.5
        out_key = np.where(kept, keys, other)
        positive = np.where(kept, np.where(value_kept, signs == 1, signs == -1), fair)
        dtype = self._report_dtype
        return (2 * out_key + (~positive)).astype(dtype)

    # ------------------------------------------------------------------ server
    def _accumulate(self, reports):
        counts = np.bincount(np.asarray(reports, dtype=np.int64), minlength=2 * self.extended_size)
        return counts.reshape(self.extended_size, 2).T.ravel().astype(np.int64)

    def _pair_channel(self):
        a, b, p = self._a, self._b, self._p
        width = self.extended_size
        matrix = np.full((2 * width, 2 * width), b / 2)
        for k in range(width):
            matrix[2 * k, 2 * k], matrix[2 * k, 2 * k + 1] = a * p, a * (1 - p)
            matrix[2 * k + 1, 2 * k], matrix[2 * k + 1, 2 * k + 1] = a * (1 - p), a * p
        return matrix

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports, dtype=np.int64)

