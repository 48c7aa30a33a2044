r"""Hadamard count-mean sketch, ``hcms`` (Apple's Differential Privacy Team, 2017).

Apple's "Learning with Privacy at Scale" (2017, sec. 3, Algorithms 3-5)
collects items of huge domains with a sketch of :math:`k` public hash
functions :math:`h_0, \dots, h_{k-1}: [d] \to [m]` and one *bit* per device:

* **client** (Alg. 3): draw :math:`j \in [k]` and :math:`l \in [m]`
  uniformly, compute :math:`w = H_m[h_j(v), l] \in \{\pm 1\}` (:math:`H_m`
  the Sylvester–Hadamard matrix, :math:`H[r, l] = (-1)^{\mathrm{popcount}(r
  \wedge l)}`), flip it with probability :math:`1/(e^\varepsilon + 1)`, and
  send :math:`(j, l, \tilde w)`: :math:`\lceil\log_2 k\rceil + \log_2 m + 1` bits;
* **server** (Alg. 4-5): the sketch row :math:`j` sums :math:`c_\varepsilon
  \tilde w` at column :math:`l`, is transformed by :math:`H_m` (one fast
  Walsh–Hadamard transform per row, :math:`O(k m \log m)`), and the
  frequency of :math:`v` is read as
  :math:`\frac{m}{m-1}\bigl(\frac1k \sum_j M[j, h_j(v)] - \frac nm\bigr)/n`.

The same estimator in the support-count form shared by dpdist's pure oracles
(derived here).  Say a report *supports* :math:`v` when :math:`\tilde w =
H[h_j(v), l]`.  With :math:`p = e^\varepsilon/(e^\varepsilon + 1)`:
:math:`\Pr[\text{support} \mid v] = p`; for :math:`u \ne v` the rows
:math:`h_j(u), h_j(v)` coincide with the family's collision probability
:math:`c` (then support has probability :math:`p`) and otherwise agree on
exactly half the columns, so :math:`q^* = p c + (1 - c)/2`.  The support
count is

.. math::

    C_v = \sum_{j,l} T[j, l, H[h_j(v), l]]
        = \frac n2 + \frac12 \sum_j \bigl(D_j H_m\bigr)[h_j(v)],
    \qquad D_{jl} = T[j, l, +] - T[j, l, -],

and :math:`\hat f_v = (C_v/n - q^*)/(p - q^*)` is Apple's debiased estimate
(with :math:`c = 1/m`), with variance :math:`q^*(1-q^*)/(n(p-q^*)^2)` at
:math:`f_v = 0` — over the draw of the family, like FLH's
(:mod:`dpdist.local.frequency.flh`): a fixed family adds a bias of mean square
about :math:`\lVert f\rVert_2^2 c/(k(1-c))`.

Privacy: :math:`p` is drawn as ``U < p`` with ``U`` a multiple of :math:`2^{-53}`, so it is
the largest such multiple with :math:`p/(1-p) \le e^\varepsilon` (:mod:`dpdist.local._bernoulli`).
The output :math:`(j, l, \tilde w)` has probability
:math:`\frac{1}{km}` times :math:`p` or :math:`1-p`, so every likelihood ratio
is at most :math:`e^\varepsilon` whatever the family; ``channel()``
enumerates the :math:`2km` outputs exactly.  The aggregate is the table of
report counts over :math:`(j, l, \tilde w)` (mergeable by addition; the
server's state does not grow with :math:`d`).

Defaults.  ``width`` :math:`m = 1024` (:math:`q^*` is then within 0.1 % of its
:math:`m \to \infty` value) and ``hash_count`` :math:`k = 2048` (a table of
:math:`2^{22}` counts; the family's bias, at most :math:`1/(k(m-1)) \approx
4.8 \cdot 10^{-7}` in mean square, is below the variance for
:math:`n \lesssim 10^6`).
"""

from __future__ import annotations


import numpy as np

from .._docs import shared_parameters
from .._bernoulli import exp_lower, odds_probability
from .._protocol import ProtocolTags, register
from .._report_kinds import Column, IntegerRowReports
from .._walsh_hadamard import fast_walsh_hadamard, hadamard_sign_is_plus
from ._sketch import SketchOracle
from ..._types import ArrayLike
from .._aggregator import Aggregator

__all__ = ["HCMS"]


@register
@shared_parameters
class HCMS(SketchOracle):
    r"""Hadamard count-mean sketch: one bit per report, a ``hash_count`` x ``width`` sketch.

    Parameters
    ----------
    {epsilon}
    domain_size : int
        Number of items ``d``, ``2 <= d <= hash_prime`` (any size: the state is
        ``2 k m`` counts whatever ``d``).
    {sketch_family}

    Notes
    -----
    Reports are ``(n, 3)`` unsigned arrays: the function index :math:`j`, the
    column :math:`l` and the bit (1 for :math:`\tilde w = +1`).
    """

    name = "hcms"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    @property
    def statistic_total_per_report(self) -> int:
        """1: one (function, coefficient, bit) cell per report."""
        return 1
    summary = "Hadamard count-mean sketch (Apple 2017): one bit of H[h_j(v), l] per report, a k x m sketch"
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=False, unbiased=False)

    def _setup(self):
        k, m = self._params["hash_count"], self._params["width"]
        self._setup_family(2 * k * m)
        # the largest grid probability with p / (1 - p) <= e^eps: U < p realizes it exactly (_bernoulli)
        self._p = odds_probability(exp_lower(self.epsilon))
        self._q = self._p * self._collision + (1.0 - self._collision) / 2.0

    @property
    def statistic_size(self) -> int:
        return 2 * self._k * self._m

    # ------------------------------------------------------------------ client
    def _privatize(self, values, rng):
        functions = rng.integers(0, self._k, size=values.size, dtype=np.int64)
        columns = rng.integers(0, self._m, size=values.size, dtype=np.int64)
        plus = hadamard_sign_is_plus(self._hashed(functions, values), columns)
        keep = rng.random(values.size) < self._p
        bits = np.where(keep, plus, ~plus)
        return np.column_stack([functions, columns, bits]).astype(self._report_dtype)

    # ------------------------------------------------------------------ server
    def _report_format(self):
        return IntegerRowReports([Column("function", self._k), Column("column", self._m), Column("bit", 2)])

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        reports, _ = self.report_format.read(reports)
        function, column, bit = (reports[:, i].astype(np.int64) for i in range(3))
        return (function * self._m + column) * 2 + bit

    def _accumulate(self, reports):
        return np.bincount(self.report_index(reports), minlength=self.statistic_size).astype(np.int64, copy=False)

    def support_counts_of(self, aggregator: Aggregator, items: ArrayLike) -> np.ndarray:
        """:math:`C_v` of the given ``items`` only: :math:`O(km\\log m + k \\cdot |items|)`."""
        table = aggregator.statistic.reshape(self._k, self._m, 2).astype(np.float64)
        transformed = fast_walsh_hadamard(table[:, :, 1] - table[:, :, 0])  # row j: D_j H (H symmetric)
        items = np.asarray(items, dtype=np.int64)
        support = np.full(items.size, aggregator.n / 2.0)
        for functions, hashed in self._function_blocks(items):
            support += 0.5 * np.take_along_axis(transformed[functions], hashed, axis=1).sum(axis=0)
        return support

    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Output law over ``(j, l, bit)``, column ``(j m + l) 2 + bit``: :math:`\\frac{1}{km}(p \\text{ or } 1-p)`."""
        items = np.arange(self.domain_size) if values is None else self._check_values(values)
        functions = np.arange(self._k)
        hashed = self._hashed(functions[None, :], items[:, None])  # (items, k)
        plus = hadamard_sign_is_plus(hashed[:, :, None], np.arange(self._m)[None, None, :])  # (items, k, m)
        law = np.empty((items.size, self._k, self._m, 2))
        law[..., 1] = np.where(plus, self._p, 1.0 - self._p)
        law[..., 0] = 1.0 - law[..., 1]
        return (law / (self._k * self._m)).reshape(items.size, self.statistic_size)

