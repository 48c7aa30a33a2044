r"""Split the budget over the attributes, ``spl``.

Every user reports every attribute of their record, each through its own
protocol at budget :math:`\varepsilon/k` (``privacy.split``; sequential composition
gives :math:`\varepsilon`-LDP for the whole record).  This is the "Spl" solution of
the multidimensional LDP literature (Wang et al., ICDE 2019, sec. IV "the
straightforward approach"; Arcolezi et al., CIKM 2021, sec. 2.3 "Spl"; Arcolezi et
al., PVLDB 2023, sec. 2.3.1).

Reports are records with one field per attribute (its inner report; an inner
report that is itself a record is stored as bytes), so the joint law of a record's
report is the product of the attributes' channels: :meth:`SplitBudget.channel` is
the row-wise Kronecker product, and a record's report also carries its joint
information (the reports of a pair of attributes can be cross-tabulated, see
:mod:`dpdist.local.multi.calm` for marginals).

Estimation: each attribute's own estimator on all ``n`` reports (unbiased for the
frequency oracles, variance of the inner oracle at :math:`\varepsilon/k`).

Guarantees: :math:`\varepsilon`-LDP for any two records; for records that differ in
one attribute only that attribute's report changes law: :math:`\varepsilon/k`.
"""

from __future__ import annotations

import numpy as np

from ..._guarantee import local_guarantee, split
from ..._validation import Interval
from .._protocol import register
from .._report_kinds import RecordReports
from ._base import MultiAttributeProtocol, _kron_rows, _mixed_radix
from ._schema import MAX_ATTRIBUTES

__all__ = ["SplitBudget"]


@register
class SplitBudget(MultiAttributeProtocol):
    """Every attribute reported at :math:`\\varepsilon / k` (see the module docstring).

    Parameters
    ----------
    epsilon : float
        Budget of one record (at least ``64e-6``: every attribute gets ``epsilon / k``,
        and each protocol's range starts at ``1e-6``).
    attributes : list of dict
        The schema (:mod:`dpdist.local.multi._schema`): ``{"name", "domain_size" | "labels" |
        "bounds", "protocol", "options"}`` per attribute.  Default protocols: the GRR/OUE
        variance rule at :math:`\\varepsilon/k` (categorical), ``sw`` (numerical).
    """

    name = "spl"
    summary = "several attributes: every attribute reported, each at epsilon/k (split budget)"
    _constraints = {
        **MultiAttributeProtocol._constraints,
        "epsilon": Interval(1e-6 * MAX_ATTRIBUTES, 30.0, closed="both", privacy=True),
    }

    def _budgets(self, k):
        return [share.epsilon for share in split(local_guarantee(self.epsilon), k)]

    def _attribute_epsilon(self):
        return max(inner.epsilon for inner in self._inner)

    # ------------------------------------------------------------------ client
    def _report_format(self):
        return RecordReports([codec.field() for codec in self._codecs])

    def _privatize(self, values, rng):
        reports = self.report_format.empty(values.shape[0])
        for index, codec in enumerate(self._codecs):
            reports[codec.name] = codec.encode(codec.inner._privatize(self._inner_values(values, index), rng))
        return reports

    # ------------------------------------------------------------------ server
    def _check_reports(self, reports, invalid):
        self._check_fields(reports, np.arange(reports.shape[0]), invalid)
        return invalid

    @property
    def statistic_total_per_report(self) -> int | None:
        totals = [inner.statistic_total_per_report for inner in self._inner]
        return None if any(total is None for total in totals) else int(sum(totals))

    def _simulate(self, values, rng):
        """Exact: the attributes' reports are independent given the records, so each inner simulate in turn."""
        statistic: np.ndarray = np.zeros(self.statistic_size, dtype=self.statistic_dtype)
        for index, inner in enumerate(self._inner):
            start, stop = self._offsets[index + 1], self._offsets[index + 2]
            statistic[start:stop] = inner._simulate(self._inner_values(values, index), rng)
        return statistic

    # ------------------------------------------------------------------ estimation
    def _attribute_estimate(self, index, statistic, n, postprocess):
        return self._inner_estimate(index, statistic, n, postprocess)

    def _categorical_variance(self, index, n, frequencies):
        return self._inner[index].variance(n, frequencies)

    # ------------------------------------------------------------------ channel
    def _combine_channel(self, rows):
        return _kron_rows(rows)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        reports, _ = self.report_format.read(reports)
        indices = [self._inner_report_index(index, reports[codec.name]) for index, codec in enumerate(self._codecs)]
        return _mixed_radix(indices, self._output_counts())
