r"""Consistent marginals of categorical attributes, ``calm`` (Zhang, Wang, Li, He, Chen, CCS 2018).

CALM ("Consistent Adaptive Local Marginal") estimates the :math:`k`-way marginals of
categorical attributes from one report per user:

1. *Reporting* (sec. 4.1-4.2): the users are divided at random among the marginals to
   collect (here every :math:`m`-subset of the attributes, :math:`m` = ``order``); each
   user reports the cell of their record in their marginal, the product domain of its
   attributes, through a frequency oracle at the whole budget, together with the
   marginal's index (independent of the record, so it costs no privacy: the report is
   :math:`\varepsilon`-LDP for any two records, and for records differing in one attribute).
   The oracle: GRR when the marginal has fewer than :math:`3e^\varepsilon + 2` cells,
   else OUE (their variances; CALM uses OLH, whose variance is OUE's).
2. *Consistency* (sec. 4.3, PriView's step, :mod:`._consistency`): the marginals are made
   to agree on every shared attribute set, each difference weighted by the inverse
   variance of the estimates it comes from.
3. *Non-negativity* (``postprocess="norm-sub"``, sec. 4.3): Norm-Sub of every marginal
   and consistency again, in turn, ending with Norm-Sub (as HDG, PVLDB 2020, does).
4. *Any marginal* (sec. 5): a marginal within a reported one is its projection; any
   other is the maximum-entropy table matching the reported marginals (:mod:`dpdist.estimates._maxent`).

Uncertainty: :meth:`~._marginals.MarginalsEstimate.marginal` and
:meth:`~._marginals.MarginalsEstimate.probability` give intervals from the exact
variance of the consistent (linear) estimate, including the sampling of which users
report which marginal (:mod:`._covariance`).

Not taken from the paper: CALM's adaptive choice of the number and size of the
marginals (sec. 4.4); here ``order`` is given (every :math:`m`-subset reported).
"""

from __future__ import annotations

import itertools
import math
from typing import ClassVar

import numpy as np

from ..._types import ArrayLike
from ..._validation import Below, Integer, Options, Relation
from ...errors import InvalidParameterError
from .._protocol import make, register
from ..numerical._composite import inner_aggregator
from ._consistency import Consistency, nonnegative
from ._groups import SampledGroups
from ._marginals import GroupNoise, MarginalsEstimate
from ._record import RecordProtocol
from ._schema import Attributes

__all__ = ["ConsistentMarginals", "MAX_CELLS"]

#: the most cells of one reported marginal
MAX_CELLS = 1 << 16
ORACLES = ("auto", "grr", "oue", "sue")


@register
class ConsistentMarginals(RecordProtocol):
    """Every ``order``-way marginal of categorical attributes, one per group of users (see the module docstring).

    Parameters
    ----------
    epsilon : float
        Budget of one record (the marginal's oracle runs at ``epsilon``).
    attributes : list of dict
        Categorical attributes (``domain_size`` and/or ``labels``; no ``protocol``).
    order : int
        Size ``m`` of the reported marginals (default 2: every pair); at most 4 and at most ``k``.
    oracle : {"auto", "grr", "oue", "sue"}
        The oracle of every marginal; ``"auto"``: GRR when the marginal has fewer than
        ``3 e^eps + 2`` cells, else OUE.
    """

    name = "calm"
    summary = "several attributes: consistent k-way marginals (CALM: users split over marginals, PriView consistency)"
    _constraints = {
        **RecordProtocol._constraints,
        "attributes": Attributes(kind="categorical", bare=True),
        "order": Integer(low=1, high=4),
        "oracle": Options(ORACLES),
    }
    _relations: ClassVar[tuple[Relation, ...]] = (Below("order", "attributes", strict=False, count=True, counterexample={
        "attributes": [{"name": "a", "domain_size": 2}, {"name": "b", "domain_size": 2}], "order": 3}),)
    _defaults = {"order": 2, "oracle": "auto"}
    estimate_options = {"postprocess": Options(("none", "norm-sub"))}

    def _setup(self):
        self._setup_schema()
        owner, order = self.display_name, self._params["order"]
        self._sets = tuple(itertools.combinations(range(len(self._attributes)), order))
        self._sizes = [attribute.size for attribute in self._attributes]
        inners = []
        for attributes in self._sets:
            cells = int(np.prod([self._sizes[a] for a in attributes], dtype=np.int64))
            if cells > MAX_CELLS:
                names = [self._attributes[a].name for a in attributes]
                raise InvalidParameterError(
                    f"The 'attributes' parameter of {owner}: the marginal of {names} has {cells:,} cells; at most "
                    f"{MAX_CELLS:,} (lower 'order' or coarsen the attributes)."
                )
            inners.append(self._oracle(cells))
        self._groups = SampledGroups(inners, "marginal", [",".join(self._attributes[a].name for a in s) for s in self._sets])
        self._strides = [self._mixed_radix_strides(attributes) for attributes in self._sets]

    def _oracle(self, cells: int):
        name = self._params["oracle"]
        if name == "auto":
            name = "grr" if cells < 3.0 * math.exp(self.epsilon) + 2.0 else "oue"
        return make(name, epsilon=self.epsilon, domain_size=cells)

    def _mixed_radix_strides(self, attributes) -> np.ndarray:
        sizes = [self._sizes[a] for a in attributes]
        return np.array([int(np.prod(sizes[i + 1 :], dtype=np.int64)) for i in range(len(sizes))], dtype=np.int64)

    def _client_design(self) -> dict:
        """Each marginal's oracle as a client derives it (``clients/js/src/protocols/_marginals.js`` refuses a view
        whose entry differs): name, protocol, budget, report format and design constants."""
        return {"groups": self._groups.client_design()}

    @property
    def marginal_sets(self) -> list[list[str]]:
        """The attributes of each reported marginal."""
        return [[self._attributes[a].name for a in attributes] for attributes in self._sets]

    @property
    def oracles(self) -> tuple:
        """Each marginal's frequency oracle (over its cells, C order)."""
        return self._groups.inners

    def _group_values(self, records, group):
        """The cell of each record in marginal ``group`` (C order: the first attribute slowest)."""
        columns = records[:, list(self._sets[group])].astype(np.int64)
        return columns @ self._strides[group]

    # ------------------------------------------------------------------ reports
    def _report_format(self):
        return self._groups.report_format()

    def _privatize(self, values, rng):
        return self._groups.privatize(values, self._group_values, self.report_format.empty(values.shape[0]), rng)

    def _check_reports(self, reports, invalid):
        return self._groups.check(reports, invalid)

    @property
    def statistic_size(self) -> int:
        return self._groups.statistic_size

    @property
    def statistic_dtype(self) -> type:
        return self._groups.statistic_dtype

    def _accumulate(self, reports):
        return self._groups.accumulate(reports)

    def _simulate(self, values, rng):
        return self._groups.simulate(values, self._group_values, rng)

    def _check_statistic(self, statistic, n):
        return self._groups.statistic_problem(statistic, n)

    # ------------------------------------------------------------------ estimation
    def unbiased_marginals(self, statistic: np.ndarray, n: int) -> tuple[list[np.ndarray], list[GroupNoise]]:
        """Each reported marginal's unbiased estimate from its own group (uniform for a group without reports)."""
        tables, noise = [], []
        counts = self._groups.counts(statistic)
        for group, (attributes, inner) in enumerate(zip(self._sets, self._groups.inners)):
            shape = tuple(self._sizes[a] for a in attributes)
            count = int(counts[group])
            p, q = inner.support_probabilities()
            noise.append(GroupNoise(inner.name != "grr", p, q, count))
            if count == 0:
                tables.append(np.full(shape, 1.0 / int(np.prod(shape))))
                continue
            aggregator = inner_aggregator(inner, self._groups.part(statistic, group), count)
            tables.append(np.asarray(inner.estimate(aggregator).frequencies).reshape(shape))
        return tables, noise

    def _consistency(self, noise: list[GroupNoise]) -> Consistency:
        scales = [
            q * (1 - q) / (max(g.count, 1) * (p - q) ** 2) * (1.0 if g.count else 1e12)
            for g, (p, q) in zip(noise, [(g.p, g.q) for g in noise])
        ]
        return Consistency(self._sets, self._sizes, scales)

    def _estimate(self, aggregator, *, postprocess: str = "none") -> MarginalsEstimate:
        """Consistent marginals.

        Parameters
        ----------
        postprocess : {"none", "norm-sub"}
            ``"none"`` (default): consistent, unbiased, possibly negative; ``"norm-sub"``:
            Norm-Sub and consistency in turn (at most 100 rounds), ending with Norm-Sub.
        """
        tables, noise = self.unbiased_marginals(aggregator.statistic, aggregator.n)
        consistency = self._consistency(noise)
        linear = consistency.apply(tables)
        final, rounds = linear, 0
        if postprocess == "norm-sub":
            final, rounds = nonnegative(consistency, linear)
        details = {
            "postprocess": postprocess,
            "attribute_guarantee": self.attribute_guarantee,
            "marginal_counts": dict(zip(self._groups.names, self._groups.counts(aggregator.statistic).tolist())),
            "oracles": [inner.name for inner in self._groups.inners],
            **({"norm_sub_rounds": rounds, "consistency_violation": consistency.violation(final)} if rounds else {}),
        }
        return self._result(
            (tuple(self._attributes), self._sets, tuple(final), tuple(linear), tuple(noise), consistency,
             aggregator.n, self.epsilon, self.name, self.guarantee, details)
        )

    def _result(self, fields: tuple) -> MarginalsEstimate:
        """The estimate of the consistent marginals (``fields``: those of :class:`MarginalsEstimate`, in order)."""
        return MarginalsEstimate(*fields)

    # ------------------------------------------------------------------ channel
    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Exact ``P[i, y]`` for records ``values`` (every record when ``None``): the marginals' outputs in turn."""
        if values is None:
            grids = np.meshgrid(*[np.arange(a.size) for a in self._attributes], indexing="ij")
            values = np.stack([grid.ravel() for grid in grids], axis=1)
        records = self._check_values(values)
        rows = [inner.channel(None)[self._group_values(records, group)] for group, inner in enumerate(self._groups.inners)]
        return np.concatenate(rows, axis=1) / len(rows)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        reports, _ = self.report_format.read(reports)
        return self._groups.report_index(reports, [inner.channel(None).shape[1] for inner in self._groups.inners])

