r"""Generalized (k-ary) randomized response, ``grr``.

Each user reports their item :math:`v` with probability
:math:`p = e^\varepsilon / (e^\varepsilon + d - 1)` and each other item with
probability :math:`q = 1 / (e^\varepsilon + d - 1)`; the ratio is
:math:`p/q = e^\varepsilon`.  (Kairouz, Bonawitz, Ramage, ICML 2016; Wang et al.,
USENIX Security 2017, sec. 4.1; paper 003 sec. 2.1, paper 001 sec. II-B "KRR".)

Sampling uses the equivalent two-step form: keep :math:`v` with probability
:math:`\lambda = p - q`, otherwise output a uniform item from all :math:`d`
(possibly :math:`v` again): :math:`\Pr[v] = \lambda + (1-\lambda)/d = p`.
The same form gives an exact aggregate sampler: the kept counts are
:math:`\mathrm{Binomial}(c_v, \lambda)` per item and the others a single
uniform multinomial, in :math:`O(d)` time whatever :math:`n`.

Exact draws.  :math:`\lambda` is the largest multiple of :math:`2^{-53}` whose ratio
:math:`1 + d\lambda/(1-\lambda)` is at most :math:`e^\varepsilon`
(:func:`dpdist.local._bernoulli.mixture_keep`), so the draw ``U < lambda`` realizes it exactly;
:math:`p = \lambda + (1-\lambda)/d` and :math:`q = (1-\lambda)/d` are the realized values that
``channel()`` and the estimators use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._docs import shared_parameters
from .._bernoulli import keep_or_uniform, mixture_keep
from .._protocol import ProtocolTags, register
from .._report_kinds import ItemReports
from ._exact_channel import GRROperator, grr_matrix, grr_maximum_likelihood, grr_maximum_likelihood_rows
from ._oracle import FrequencyOracle
from ..._types import ArrayLike

__all__ = ["GRR"]


@register
@shared_parameters
class GRR(FrequencyOracle):
    """k-ary randomized response over ``domain_size`` items.

    Parameters
    ----------
    {epsilon}
    domain_size : int
        Number of items ``d >= 2``; values are ints in ``[0, d)``.

    Reports are item indices in the narrowest unsigned dtype that holds ``d``.
    """

    name = "grr"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    @property
    def statistic_total_per_report(self) -> int:
        """1: a histogram of the reported items."""
        return 1
    summary = "generalized randomized response: report the true item w.p. e^eps/(e^eps+d-1)"
    tags = ProtocolTags(
        kind="frequency", finite_channel=True, exact_simulate=True, fixed_support_size=True, closed_form_mle=True,
        bernoulli_support=True,
    )
    output_histogram = True

    def _setup(self):
        d = self.domain_size
        self._keep = mixture_keep(self.epsilon, 1, d)  # lambda = p - q, on the 2^-53 grid
        self._q = (1.0 - self._keep) / d
        self._p = self._keep + self._q

    def support_probabilities(self) -> tuple[float, float]:
        return self._p, self._q

    def _privatize(self, values, rng):
        dtype = self._report_dtype
        return keep_or_uniform(values.astype(dtype), self._keep, self.domain_size, rng, dtype)

    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        return {"keep": self._keep}

    def _report_format(self):
        return ItemReports(self.domain_size)

    def _accumulate(self, reports):
        return np.bincount(reports, minlength=self.domain_size).astype(np.int64)

    def _simulate(self, values, rng):
        counts = np.bincount(values, minlength=self.domain_size)
        kept = rng.binomial(counts, self._keep)
        rerolled = rng.multinomial(values.size - kept.sum(), np.full(self.domain_size, 1.0 / self.domain_size))
        return (kept + rerolled).astype(np.int64)

    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        matrix = grr_matrix(self._p, self._q, self.domain_size)
        return matrix if values is None else matrix[self._check_values(values)]

    def channel_operator(self) -> Any:
        """:math:`Q^\\top f = q + (p - q) f` in O(d) (see :mod:`._exact_channel`)."""
        return GRROperator(self._p, self._q, self.domain_size)

    def maximum_likelihood(self, counts: np.ndarray) -> np.ndarray:
        """Closed-form MLE of the frequencies from the report counts (:func:`._exact_channel.grr_maximum_likelihood`)."""
        return grr_maximum_likelihood(counts, self._p, self._q)

    def _maximum_likelihood_rows(self, counts: np.ndarray) -> np.ndarray:
        return grr_maximum_likelihood_rows(counts, self._p, self._q)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports, dtype=np.int64)
