r"""Sample one attribute per user, ``smp``.

Each user draws one attribute :math:`j` of their record uniformly at random and
reports :math:`j` together with their value of attribute :math:`j` randomized by
that attribute's protocol at the whole budget :math:`\varepsilon` (the "Smp"
solution: Wang et al., ICDE 2019, sec. IV; Arcolezi et al., CIKM 2021, sec. 2.3;
Arcolezi et al., PVLDB 2023, sec. 2.3.1: "each user tells the aggregator which
attribute is sampled, and what is the perturbed value for it", :math:`\langle j,
y_j\rangle`).

The index is drawn independently of the record, so revealing it costs nothing:
:math:`\Pr[(j, y) \mid x] = M_j(y \mid x_j)/k`, whose ratio between any two
records is at most :math:`e^\varepsilon` (``"replace"``); for records differing in
one attribute the bound is the same :math:`\varepsilon` (that attribute may be the
one sampled).

Estimation: attribute :math:`j`'s estimator on the :math:`N_j` reports that chose
it (unbiased given :math:`N_j \ge 1`); :math:`N_j \sim \mathrm{Binomial}(n, 1/k)`,
so the variance of a frequency estimate is the inner oracle's per-report variance
times :math:`E[1/N_j \mid N_j \ge 1]` (:func:`._sampling.inverse_count_mean`).

Reports: records with fields ``attribute`` (the index, one byte) and ``payload``
(the attribute's inner report as little-endian bytes, zero-padded to the widest
attribute), as the hierarchies of :mod:`dpdist.local.numerical.hh` store a level's report.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import InvalidParameterError
from ...estimates import FrequencyEstimate
from .._protocol import register
from ._base import MultiAttributeProtocol
from ._groups import SampledGroups
from ._sampling import inverse_count_mean

__all__ = ["SampleOne"]


@register
class SampleOne(MultiAttributeProtocol):
    """One uniformly sampled attribute per user, at the whole budget; the index is reported.

    Parameters
    ----------
    epsilon : float
        Budget of one record (the sampled attribute's protocol runs at ``epsilon``).
    attributes : list of dict
        The schema (:mod:`dpdist.local.multi._schema`).  Default protocols: the GRR/OUE
        variance rule at :math:`\\varepsilon` (categorical), ``sw`` (numerical).
    """

    name = "smp"
    summary = "several attributes: one sampled attribute per user at epsilon; the index is reported"
    _prefix_size = 0  # set per instance: the count of each attribute's reports

    def _budgets(self, k):
        return [self.epsilon] * k

    def _setup(self):
        self._prefix_size = len(self._params["attributes"])
        super()._setup()

    def _setup_reports(self):
        super()._setup_reports()
        self._groups = SampledGroups(self._inner, "attribute", self.attribute_names)

    def _group_values(self, records, group):
        return self._inner_values(records, group)

    # ------------------------------------------------------------------ client
    def _report_format(self):
        return self._groups.report_format()

    def _privatize(self, values, rng):
        return self._groups.privatize(values, self._group_values, self.report_format.empty(values.shape[0]), rng)

    # ------------------------------------------------------------------ server
    def _check_reports(self, reports, invalid):
        """Each payload is its attribute's inner report (checked by that protocol), zero-padded."""
        return self._groups.check(reports, invalid)

    def _accumulate(self, reports):
        return self._groups.accumulate(reports)

    def _simulate(self, values, rng):
        """Exact: each user's attribute drawn as in ``privatize``, then each attribute's inner simulate."""
        return self._groups.simulate(values, self._group_values, rng)

    def attribute_counts(self, statistic: np.ndarray) -> np.ndarray:
        """How many reports sampled each attribute."""
        return self._groups.counts(statistic)

    def _check_statistic(self, statistic, n):
        return self._groups.statistic_problem(statistic, n)

    # ------------------------------------------------------------------ estimation
    def _attribute_estimate(self, index, statistic, n, postprocess):
        count = int(statistic[index])
        if count == 0:
            return self._without_reports(index, n)
        estimate = self._inner_estimate(index, statistic, count, postprocess)
        if not self._attributes[index].categorical or n <= 1:
            return estimate
        # the N users who sampled the attribute are a random subset: add their frequencies' hypergeometric
        # variance around the population's, so the intervals are for the population (see _categorical_variance)
        f = np.clip(estimate.frequencies, 0.0, 1.0)
        sampling = f * (1.0 - f) * (n - count) / (count * (n - 1))
        return dataclasses.replace(estimate, variance=estimate.variance + sampling)

    def _without_reports(self, index, n):
        """An attribute no user sampled: a uniform estimate with no interval (says so in ``details``)."""

        attribute, inner = self._attributes[index], self._inner[index]
        if not attribute.categorical:
            raise InvalidParameterError(
                f"{self.display_name}.estimate: no report sampled attribute {attribute.name!r} (n={n}); "
                "collect more reports."
            )
        size = attribute.domain_size
        return FrequencyEstimate(
            np.full(size, 1.0 / size), 0, np.full(size, np.inf), inner.epsilon, inner.name, "none",
            {"no_interval": f"no report sampled attribute {attribute.name!r}"}, inner.guarantee, attribute.labels,
        )

    def _estimate_details(self, statistic, n):
        return {"attribute_counts": dict(zip(self.attribute_names, self.attribute_counts(statistic).tolist()))}

    def _categorical_variance(self, index, n, frequencies):
        r"""The randomizer's variance over the :math:`N` sampled reports plus the sampling variance of who they are.

        Given the :math:`N` users who sampled the attribute, the estimate is unbiased for *their*
        frequency :math:`f_S`, whose variance given :math:`N` is hypergeometric,
        :math:`f(1-f)(n-N)/(N(n-1))`; the oracle's variance is :math:`V_1(f_S)/N` with
        :math:`V_1` linear in :math:`f`.  So, with :math:`m = E[1/N \mid N \ge 1]`,
        :math:`\operatorname{Var} = m\,(V_1(f) + f(1-f)\,n/(n-1)) - f(1-f)/(n-1)`.
        """
        m = inverse_count_mean(n, len(self._attributes))
        f = np.asarray(frequencies, dtype=np.float64)
        spread = f * (1.0 - f)
        if n <= 1:
            return self._inner[index].variance(1, f) * m
        return m * (self._inner[index].variance(1, f) + spread * n / (n - 1)) - spread / (n - 1)

    # ------------------------------------------------------------------ channel
    def _combine_channel(self, rows):
        return np.concatenate(rows, axis=1) / len(rows)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        reports, _ = self.report_format.read(reports)
        return self._groups.report_index(reports, self._output_counts())
