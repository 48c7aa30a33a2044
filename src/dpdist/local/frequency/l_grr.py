r"""Longitudinal GRR, ``l-grr`` (Arcolezi, Couchot, Al Bouna & Xiao, ICDE 2022, sec. 4).

GRR with :math:`\varepsilon_\infty` memoized per value (the permanent randomized
response), then GRR with the budget that makes one report :math:`\varepsilon_1`-LDP
(the instantaneous one); the guarantees over time and the device's memo are
:mod:`._longitudinal`'s.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._docs import shared_parameters
from ..._validation import EPSILON, NOT_SHOWN
from ...errors import IncompatibleStateError
from .._bernoulli import keep_or_uniform
from .._protocol import ProtocolTags, register
from .._report_kinds import ItemReports
from ._exact_channel import grr_matrix
from ._longitudinal import EPSILON_1_BELOW, LongitudinalProtocol, _chain, _grr_keeps, _grr_probabilities
from ._oracle import FrequencyOracle
from ..._types import ArrayLike

__all__ = ["LGRR"]


@register
@shared_parameters
class LGRR(LongitudinalProtocol, FrequencyOracle):
    """Longitudinal GRR (Arcolezi et al. 2022): GRR(:math:`\\varepsilon_\\infty`) memoized, then GRR(IRR).

    Parameters
    ----------
    {epsilon_longitudinal}
    {epsilon_1}
    domain_size : int
    """

    name = "l-grr"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    @property
    def statistic_total_per_report(self) -> int:
        """1: a histogram of the reported items."""
        return 1
    summary = "longitudinal GRR: memoized GRR(eps_inf), then GRR with the IRR budget of eps_1 per report"
    tags = ProtocolTags(
        kind="frequency", finite_channel=True, exact_simulate=True, memoized=True, fixed_support_size=True, bernoulli_support=True
    )
    _constraints = {**FrequencyOracle._constraints, "epsilon_1": EPSILON}
    _relations = (*FrequencyOracle._relations, EPSILON_1_BELOW)

    def _setup(self):
        d = self.domain_size
        self._keep1, self._keep2 = _grr_keeps(d, self.epsilon, self._params["epsilon_1"])
        self._p1, self._q1 = _grr_probabilities(self._keep1, d)
        self._p2, self._q2 = _grr_probabilities(self._keep2, d)
        self._p, self._q = _chain(self._p1, self._q1, self._p2, self._q2)

    def _prr_epsilon(self) -> float:
        return math.log(self._p1 / self._q1)

    def _chain_epsilon(self) -> float:
        return math.log(self._p / self._q)

    @property
    def epsilon_instantaneous(self) -> float:
        """:math:`\\varepsilon_I = \\ln(p_2/q_2)`: the IRR's ratio between any two memoized items."""
        return math.log(self._p2 / self._q2)

    def support_probabilities(self) -> tuple[float, float]:
        return self._p, self._q

    def permanent_response(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The first round (PRR) of each value: what a device memoizes."""
        return keep_or_uniform(values.astype(self._report_dtype), self._keep1, self.domain_size, rng, self._report_dtype)

    def instantaneous_response(self, memoized: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The second round (IRR) of memoized outputs: one report each."""
        return keep_or_uniform(memoized.astype(self._report_dtype), self._keep2, self.domain_size, rng, self._report_dtype)

    def _privatize(self, values, rng):
        return self.instantaneous_response(self.permanent_response(values, rng), rng)

    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        return {"keep1": self._keep1, "keep2": self._keep2, "p1": self._p1, "q1": self._q1, "p2": self._p2, "q2": self._q2}

    def _report_format(self):
        return ItemReports(self.domain_size)

    def _accumulate(self, reports):
        return np.bincount(reports, minlength=self.domain_size).astype(np.int64)

    def _simulate(self, values, rng):
        d = self.domain_size
        counts = np.bincount(values, minlength=d)
        for keep in (self._keep1, self._keep2):  # each round is GRR on the counts
            kept = rng.binomial(counts, keep)
            counts = kept + rng.multinomial(counts.sum() - kept.sum(), np.full(d, 1.0 / d))
        return counts.astype(np.int64)

    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        matrix = grr_matrix(self._p, self._q, self.domain_size)
        return matrix if values is None else matrix[self._check_values(values)]

    def permanent_channel(self) -> np.ndarray:
        """``P[x, s]`` of the first round."""
        return grr_matrix(self._p1, self._q1, self.domain_size)

    def instantaneous_channel(self) -> np.ndarray:
        """``P[s, y]`` of the second round."""
        return grr_matrix(self._p2, self._q2, self.domain_size)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports, dtype=np.int64)

    def _check_memo_value(self, item: int, value) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise IncompatibleStateError(f"A memo maps items to items (integers). Got a value of type {type(value).__name__} ({NOT_SHOWN}).")
        return int(self._check_values([value])[0])
