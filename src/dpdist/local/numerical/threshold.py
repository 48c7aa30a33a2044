r"""One threshold question per user, ``threshold``: the per-round randomizer of adaptive LDP quantiles.

The bounds are cut into ``grid_size`` equal cells (the public grid of :math:`B` points of the
noisy binary search, Aamand, Boninsegna, Gentle, Imola, Pagh, "Lightweight Protocols for
Distributed Private Quantile Estimation", ICML 2025, arXiv:2502.02990).  A round publishes
``cuts``, :math:`T` grid indices :math:`c_1 < \dots < c_T` in :math:`[1, B - 1]`, i.e. the
thresholds :math:`t_j = lo + c_j (hi - lo)/B`.  Each user

1. picks :math:`j` uniformly among the :math:`T` cuts (a public coin, independent of the value),
2. computes the private bit :math:`s = [x < t_j]` (on the cell index: ``cell(x) < c_j``),
3. reports :math:`(j, b)` with :math:`b = s` with probability :math:`p`, else :math:`1 - s`
   (binary randomized response, :math:`p` the largest :math:`2^{-53}`-grid probability with
   :math:`p/(1-p) \le e^\varepsilon`).

Output :math:`k = 2j + b`; its probability is :math:`\tfrac1T p` or :math:`\tfrac1T(1-p)`, so any two
values' ratio is at most :math:`p/(1-p) \le e^\varepsilon`: :math:`\varepsilon`-LDP for one report
(the exact channel is :meth:`ThresholdRR.channel`).  The statistic counts the :math:`2T` outputs.
With :math:`n_j` reports on cut :math:`j` and :math:`y_j` of them ones,
:math:`\hat F(t_j) = (y_j/n_j - (1-p))/(2p-1)` is unbiased for the fraction below :math:`t_j`
of those users, with variance :math:`\hat y(1-\hat y)/(n_j(2p-1)^2)` estimated by the plug-in.

The adaptive search itself (which cuts round :math:`k+1` asks, from round :math:`k`'s
counts) is :mod:`dpdist.local.adaptive_quantiles`; each user answers in one round only.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..._types import ArrayLike
from ..._validation import Below, Constraint, Integer, Optional, check_allocation, validate_params
from ...estimates import Distribution
from ...postprocess import isotonic_cdf
from .._bernoulli import exp_lower, odds_probability
from .._docs import shared_parameters
from .._protocol import ProtocolTags, register
from .._report_kinds import ItemReports
from ._base import VALUES_GIVEN, NumericalProtocol, unit_bin_index

__all__ = ["ThresholdRR", "Cuts", "MAX_CUTS", "cut_fractions"]

#: at most this many cuts in one round (the statistic has two counts per cut)
MAX_CUTS = 4096


class Cuts(Constraint):
    """A non-empty increasing list of distinct integers >= 1 (grid indices); stored as a tuple of ints."""

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, np.ndarray)):
            raise ValueError
        cuts = tuple(value)
        if not 1 <= len(cuts) <= MAX_CUTS:
            raise ValueError
        if any(isinstance(c, bool) or not isinstance(c, (int, np.integer)) for c in cuts):
            raise ValueError
        cuts = tuple(int(c) for c in cuts)
        if cuts[0] < 1 or any(b <= a for a, b in zip(cuts, cuts[1:])):
            raise ValueError
        return cuts

    def describe(self) -> str:
        return f"a list of 1 to {MAX_CUTS} increasing distinct integers >= 1 (grid indices of the thresholds)"

    def invalid_examples(self) -> list:
        return [[], [0], [3, 2], [2, 2], [1.5], "12", None, [True]]


def cut_fractions(statistic: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(fraction, variance, reports)`` per cut from a threshold statistic (``2T`` counts, zeros then ones).

    ``fraction`` is the unbiased :math:`\\hat F(t_j)` (NaN where no report), ``variance`` its plug-in
    variance (the binomial variance of the ones' share, inflated by :math:`1/(2p-1)^2`).
    """
    counts = np.asarray(statistic, dtype=np.float64).reshape(-1, 2)
    reports = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ones = counts[:, 1] / reports
        fraction = (ones - (1.0 - p)) / (2.0 * p - 1.0)
        # plug-in binomial variance, floored at one pseudo-observation so a share of 0 or 1 is not certain
        share = np.clip(ones, 1.0 / (reports + 1.0), 1.0 - 1.0 / (reports + 1.0))
        variance = share * (1.0 - share) / reports / (2.0 * p - 1.0) ** 2
    return fraction, variance, reports


@register
@shared_parameters
class ThresholdRR(NumericalProtocol):
    """Binary randomized response on "is my value below the threshold?", one public threshold per user.

    Parameters
    ----------
    {epsilon}
    {bounds}
    cuts : list of int, optional
        The round's thresholds as grid indices :math:`1 \\le c_1 < \\dots < c_T \\le B - 1`
        (threshold :math:`t_j = lo + c_j (hi - lo)/B`); each user answers one, chosen uniformly.
        Default: the middle of the grid, ``[grid_size // 2]``.
    grid_size : int
        :math:`B`, the cells of the public grid (default 1024).
    round : int
        The round this config belongs to (public; 0 for a one-round use). It changes the config, so
        reports of one round cannot be merged into another's aggregate.

    Notes
    -----
    ``estimate`` returns a :class:`~dpdist.Distribution` with bins between consecutive thresholds
    (an isotonic fit of the debiased fractions); ``details`` holds the raw per-cut fractions
    (``cdf``), their ``variance`` and the ``reports`` per cut.
    """

    name = "threshold"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    summary = "one randomized-response bit on a public threshold per user (rounds of adaptive LDP quantiles)"
    tags: ClassVar[ProtocolTags] = ProtocolTags(kind="numerical", finite_channel=True, exact_simulate=True, unbiased=False)
    @property
    def statistic_total_per_report(self) -> int:
        """1: each report adds one to the statistic."""
        return 1
    _constraints = {**NumericalProtocol._constraints, "cuts": Optional(Cuts()), "grid_size": Integer(low=2, high=2**30),
                    "round": Integer(low=0, high=2**31 - 1)}
    _relations = (Below("cuts", "grid_size", every=True, why="cuts lie in [1, grid_size - 1]",
                        counterexample={"grid_size": 16, "cuts": [3, 16]}),)
    _defaults = {**NumericalProtocol._defaults, "cuts": None, "grid_size": 1024, "round": 0}

    def _check_memory(self) -> None:
        check_allocation(self.display_name, "cuts", len(self._params["cuts"] or ()), 16, "counts")

    def _setup(self) -> None:
        if self._params["cuts"] is None:  # one question, at the middle of the grid
            self._params["cuts"] = (max(self.grid_size // 2, 1),)
        self._p = odds_probability(exp_lower(self.epsilon))
        self._cut_array = np.asarray(self.cuts, dtype=np.int64)

    @property
    def cuts(self) -> tuple[int, ...]:
        """The round's thresholds as grid indices."""
        return self._params["cuts"]

    @property
    def grid_size(self) -> int:
        return self._params["grid_size"]

    @property
    def round(self) -> int:
        return self._params["round"]

    @property
    def keep_probability(self) -> float:
        """:math:`p`, the probability that the reported bit is the true one."""
        return self._p

    @property
    def thresholds(self) -> np.ndarray:
        """The thresholds :math:`t_j` in the units of ``bounds``."""
        return self.from_unit(self._cut_array / self.grid_size)

    @property
    def statistic_size(self) -> int:
        return 2 * len(self.cuts)

    # ------------------------------------------------------------------ client
    def _below(self, unit: np.ndarray, j: np.ndarray) -> np.ndarray:
        return unit_bin_index(unit, self.grid_size) < self._cut_array[j]

    def _privatize(self, values, rng):
        j = rng.integers(len(self.cuts), size=values.size)
        keep = rng.random(values.size) < self._p
        bit = self._below(values, j) == keep  # the truth when kept, its negation otherwise
        return (2 * j + bit).astype(self._report_dtype)

    def _report_format(self):
        return ItemReports(self.statistic_size)

    def _client_design(self):
        """The constant the JavaScript client's randomizer uses (``client_view()['design']``)."""
        return {"keep": self._p}

    def _accumulate(self, reports):
        return np.bincount(reports, minlength=self.statistic_size).astype(np.int64)

    def _simulate(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Exact: the public cut of each user, then two binomials per cut (true answers kept, false ones flipped)."""
        j = rng.integers(len(self.cuts), size=values.size)
        truth = np.bincount(2 * j + self._below(values, j), minlength=self.statistic_size).reshape(-1, 2)
        ones = rng.binomial(truth[:, 1], self._p) + rng.binomial(truth[:, 0], 1.0 - self._p)
        return np.stack([truth.sum(axis=1) - ones, ones], axis=1).reshape(-1).astype(np.int64)

    @validate_params({}, relations=(VALUES_GIVEN,))
    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Exact ``P[i, 2j + b] = Pr[cut j, bit b | values[i]]`` (``1/T`` times ``p`` or ``1 - p``)."""
        unit = self._check_values(values)
        cuts = len(self.cuts)
        below = unit_bin_index(unit, self.grid_size)[:, None] < self._cut_array[None, :]
        out = np.empty((unit.size, cuts, 2))
        out[:, :, 1] = np.where(below, self._p, 1.0 - self._p) / cuts
        out[:, :, 0] = np.where(below, 1.0 - self._p, self._p) / cuts
        return out.reshape(unit.size, 2 * cuts)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports, dtype=np.int64)

    # ------------------------------------------------------------------ estimation
    def cut_estimates(self, statistic: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(fraction, variance, reports)`` per cut (see :func:`cut_fractions`)."""
        return cut_fractions(np.asarray(statistic), self._p)

    def _estimate(self, aggregator) -> Distribution:
        fraction, variance, reports = self.cut_estimates(aggregator.statistic)
        answered = reports > 0
        edges = np.concatenate([[0.0], self._cut_array[answered] / self.grid_size, [1.0]])
        cdf = isotonic_cdf(np.concatenate([[0.0], fraction[answered], [1.0]]), pinned=True)
        return Distribution.from_cdf(
            self.from_unit(edges), cdf, method=self.name, epsilon=self.epsilon, n=aggregator.n,
            details={"cuts": list(self.cuts), "round": self.round, "cdf": _json_floats(fraction),
                     "variance": _json_floats(variance), "reports": reports.astype(int).tolist()},
            guarantee=self.guarantee,
        )


def _json_floats(values: np.ndarray) -> list:
    """The values as a JSON-safe list: None where a cut had no report (NaN)."""
    return [None if np.isnan(value) else float(value) for value in values]
