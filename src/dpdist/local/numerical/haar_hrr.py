r"""HaarHRR, ``haar-hrr``: Haar coefficients by Hadamard randomized response.

Cormode, Kulkarni, Srivastava, "Answering Range Queries Under Local
Differential Privacy", PVLDB 12(10), 2019 (reference [18] of paper 003), as
summarized in paper 003 sec. 4.2.

The bounds are cut into ``bins = 2**h`` leaves of a binary tree.  An inner node
:math:`a` of height :math:`t \in \{1, \dots, h\}` (leaves have height 0) holds
the Haar coefficient :math:`c_a = (C_l^{(a)} - C_r^{(a)}) / 2^{t/2}`; for one
user the coefficients of a level are all zero except :math:`\pm 1` at their
ancestor :math:`j` (+1 if the value is in its left subtree).  Each user

1. draws a level :math:`t` uniformly from :math:`\{1, \dots, h\}` (population
   division, sec. 4.2);
2. draws a row :math:`r` of the Sylvester-Hadamard matrix
   :math:`\phi \in \{\pm 1\}^{m \times m}`, :math:`m = 2^{h-t}`, uniformly, with
   :math:`\phi_{rj} = (-1)^{\mathrm{popcount}(r \wedge j)}`;
3. reports :math:`(t, r, b)` with :math:`b = \pm s\,\phi_{rj}`: kept with
   probability :math:`p = e^\varepsilon / (e^\varepsilon + 1)`, negated otherwise.

The pair :math:`(t, r)` is independent of the value and :math:`b` is binary
randomized response, so every output has probability ratio at most
:math:`p/(1-p) = e^\varepsilon`.  With :math:`S_t[r]` the sum of the reported
:math:`b` of level :math:`t` and row :math:`r`, :math:`n_t` the level's users and
:math:`\kappa = (e^\varepsilon + 1)/(e^\varepsilon - 1)`,

.. math::

    \hat D_t[j] = \frac{\kappa}{n_t} \sum_r \phi_{rj} S_t[r] = \frac{\kappa}{n_t} (\phi S_t)_j

is an unbiased estimate of :math:`f_l(j) - f_r(j)` (left minus right subtree
frequency of node :math:`j`), since :math:`E[\phi_{rj}\phi_{rj'}] = \delta_{jj'}`.
The inverse Haar transform is then exact top-down from the root total 1:
children totals :math:`(T_j \pm \hat D_t[j]) / 2`; the unnormalized
:math:`2^{t/2}` factors cancel.  The leaves are unbiased (possibly negative);
``estimate`` applies Norm-Sub to make a distribution (paper 003 evaluates
HaarHRR only on range queries, sec. 6.1); :meth:`HaarHRR.frequencies` gives the
raw leaves.

Report format: 1-D structured array with fields ``level`` (uint8, t),
``row`` (uint32, r) and ``bit`` (uint8, 1 for +1 and 0 for -1).
"""

from __future__ import annotations

import numpy as np

from ... import postprocess as _postprocess
from ..._types import ArrayLike
from ..._validation import PowerOfTwo, validate_params
from .._aggregator import Aggregator
from .._bernoulli import exp_lower, odds_probability
from .._docs import shared_parameters
from .._protocol import ProtocolTags, register
from .._report_kinds import Field, RecordReports
from .._state_validation import level_sums_problem as _level_sums_problem
from .._walsh_hadamard import fast_walsh_hadamard, hadamard_sign_is_plus
from ._base import VALUES_GIVEN, BinnedProtocol, NumericalProtocol, unit_bin_index
from .binning import DISTRIBUTION_POSTPROCESS_RULE

__all__ = ["HaarHRR", "inverse_haar"]

REPORT_DTYPE = np.dtype([("level", np.uint8), ("row", np.uint32), ("bit", np.uint8)])


def inverse_haar(differences: list[np.ndarray], total: float = 1.0) -> np.ndarray:
    """Leaf masses from the left-minus-right differences of every level (``t = 1 .. h``).

    ``differences[t - 1]`` has ``2**(h - t)`` entries; from the root total down,
    a node of total ``T`` and difference ``D`` has children ``(T + D)/2`` and ``(T - D)/2``.
    """
    totals = np.array([float(total)])
    for level in reversed(differences):
        totals = np.stack([(totals + level) / 2, (totals - level) / 2], axis=1).reshape(-1)
    return totals


def _hadamard_sign(rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """``phi[rows, columns]`` in {-1, +1}."""
    return np.where(hadamard_sign_is_plus(rows.astype(np.uint64), columns.astype(np.uint64)), 1, -1)


@register
@shared_parameters
class HaarHRR(BinnedProtocol):
    """Haar wavelet coefficients estimated by Hadamard randomized response.

    Parameters
    ----------
    {epsilon}
    bins : int
        Number of leaves, a power of 2 (default 256).
    {bounds}
    """

    statistic_signed = True  # signed sums of +-1 Haar-coefficient reports

    name = "haar-hrr"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    summary = "HaarHRR (Kulkarni et al. 2019): one Haar level per user, Hadamard randomized response"
    tags = ProtocolTags(kind="numerical", finite_channel=True, exact_simulate=True, unbiased=False)
    _constraints = {**NumericalProtocol._constraints, "bins": PowerOfTwo(low=2, high=2**24)}
    estimate_options = {"postprocess": DISTRIBUTION_POSTPROCESS_RULE}
    _defaults = {**NumericalProtocol._defaults, "bins": 256}
    report_dtype = REPORT_DTYPE

    def _setup(self):
        height = self.bins.bit_length() - 1  # bins is a power of 2 (its rule in the table)
        self._height = height
        # the largest grid probability with keep / (1 - keep) <= e^eps: U < keep realizes it exactly
        self._keep = odds_probability(exp_lower(self.epsilon))
        self._scale = 1.0 / (2.0 * self._keep - 1.0)  # (e + 1)/(e - 1) at the realized keep
        # level t has 2**(h - t) coefficient nodes; statistic: h level counts, then S_t for t = 1..h
        self._sizes = [2 ** (height - t) for t in range(1, height + 1)]
        self._offsets = np.concatenate([[height], height + np.cumsum(self._sizes)])

    @property
    def height(self) -> int:
        return self._height

    @property
    def statistic_size(self) -> int:
        return int(self._offsets[-1])

    def _signs_and_nodes(self, leaves: np.ndarray, level: np.ndarray):
        """Ancestor node at height ``level`` and the sign of the user's Haar coefficient there."""
        nodes = leaves >> level
        left = ((leaves >> (level - 1)) & 1) == 0
        return nodes, np.where(left, 1, -1)

    # ------------------------------------------------------------------ client
    def _privatize(self, values, rng):
        leaves = unit_bin_index(values, self.bins)
        levels = rng.integers(1, self._height + 1, size=values.size)
        sizes = np.asarray(self._sizes)[levels - 1]
        rows = np.floor(rng.random(values.size) * sizes).astype(np.int64)
        rows = np.minimum(rows, sizes - 1)
        nodes, signs = self._signs_and_nodes(leaves, levels)
        truth = signs * _hadamard_sign(rows, nodes)
        kept = rng.random(values.size) < self._keep
        reported = np.where(kept, truth, -truth)
        reports = np.empty(values.size, dtype=REPORT_DTYPE)
        reports["level"] = levels
        reports["row"] = rows
        reports["bit"] = reported > 0
        return reports

    # ------------------------------------------------------------------ server
    def _report_format(self):
        return RecordReports([
            Field("level", np.uint8, low=1, high=self._height + 1, reason="level_out_of_range"),
            Field("row", np.uint32),
            Field("bit", np.uint8, high=2, reason="bit_not_binary"),
        ])

    def _check_reports(self, reports, invalid):
        """The row must exist at the report's level."""
        bad_level = invalid["level_out_of_range"]
        sizes = np.asarray(self._sizes + [0])[np.where(bad_level, self._height, reports["level"].astype(np.int64) - 1)]
        row = {"row_out_of_range": ~bad_level & (reports["row"] >= sizes)}
        return {"level_out_of_range": bad_level, **row, "bit_not_binary": invalid["bit_not_binary"]}

    def _accumulate(self, reports):
        statistic = np.zeros(self.statistic_size, dtype=np.int64)
        levels = reports["level"].astype(np.int64)
        statistic[: self._height] = np.bincount(levels, minlength=self._height + 1)[1:]
        position = self._offsets[levels - 1] + reports["row"].astype(np.int64)
        signed = 2 * reports["bit"].astype(np.int64) - 1
        statistic += np.bincount(position, weights=signed, minlength=self.statistic_size).astype(np.int64)
        return statistic

    def _check_statistic(self, statistic, n):
        """Level counts ``>= 0`` summing to ``n``; level ``t`` holds one +-1 per report of the level."""
        return _level_sums_problem(statistic, n, self._offsets, np.ones(self._height, dtype=np.int64), first_level=1)

    def _simulate(self, values, rng):
        """Exact: multinomial levels per leaf, multinomial rows per (node, sign) class, binomial flips."""
        h = self._height
        leaf_counts = np.bincount(unit_bin_index(values, self.bins), minlength=self.bins)
        split = rng.multinomial(leaf_counts, np.full(h, 1.0 / h))  # (bins, h)
        statistic = np.zeros(self.statistic_size, dtype=np.int64)
        statistic[:h] = split.sum(axis=0)
        for t, size in enumerate(self._sizes, start=1):
            # users of one class (ancestor j, side) share their report law; classes = leaves >> (t-1)
            classes = split[:, t - 1].reshape(2 * size, -1).sum(axis=1)
            per_row = rng.multinomial(classes, np.full(size, 1.0 / size))  # (2 * size, size)
            flipped = rng.binomial(per_row, 1.0 - self._keep)
            nodes = np.arange(2 * size) >> 1
            signs = np.where(np.arange(2 * size) % 2 == 0, 1, -1)
            truth = signs[:, None] * _hadamard_sign(np.arange(size)[None, :], nodes[:, None])
            statistic[self._offsets[t - 1] : self._offsets[t]] = (truth * (per_row - 2 * flipped)).sum(axis=0)
        return statistic

    # ------------------------------------------------------------------ estimation
    def coefficient_differences(self, aggregator: Aggregator) -> list[np.ndarray]:
        """Unbiased :math:`\\hat D_t` (left minus right frequency of each node), ``t = 1 .. h``."""
        aggregator._check_protocol(self)
        counts = aggregator.statistic[: self._height]
        out = []
        for t in range(1, self._height + 1):
            sums = aggregator.statistic[self._offsets[t - 1] : self._offsets[t]]
            n_t = int(counts[t - 1])
            out.append(self._scale * fast_walsh_hadamard(np.asarray(sums, dtype=np.float64)) / n_t if n_t else np.zeros(self._sizes[t - 1]))
        return out

    def frequencies(self, aggregator: Aggregator) -> np.ndarray:
        """Unbiased leaf frequencies by the inverse Haar transform (sum to 1, may be negative)."""
        return inverse_haar(self.coefficient_differences(aggregator))

    def leaf_variance(self, n: int) -> float:
        r"""Approximate variance of each unbiased leaf frequency for ``n`` users.

        A leaf is :math:`2^{-h} + \sum_{t=1}^{h} \pm \hat D_t[j_t] / 2^{t}` over its
        ancestors :math:`j_t`, the levels independent.  Every user of level
        :math:`t` adds a :math:`\pm 1` term to every node's sum, so
        :math:`\operatorname{Var}[\hat D_t[j]] = \kappa^2 (1 - f_t(j)/\kappa^2) / n_t
        \approx \kappa^2 h / n` with :math:`n_t \approx n/h` (small frequencies).
        Hence :math:`\sum_t \kappa^2 h / (n\,4^t)`.
        """
        h = self._height
        return float(sum(self._scale**2 * h / (n * 4**t) for t in range(1, h + 1)))

    def _estimate(self, aggregator, *, postprocess: str = "norm-sub"):
        """Leaf masses: the unbiased leaves made a distribution by ``postprocess`` (Norm-Sub default)."""
        postprocess = postprocess or "norm-sub"  # None: the default (estimate_options checked any other value)
        leaves = self.frequencies(aggregator)
        return self._distribution(
            _postprocess.apply(postprocess, leaves),
            aggregator=aggregator,
            postprocess=postprocess,
            unbiased_frequencies=leaves,
        )

    # ------------------------------------------------------------------ channel
    @validate_params({}, relations=(VALUES_GIVEN,))
    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Exact ``P[i, (t, r, b)]``; outputs ordered by level, then row, then bit (-1 before +1)."""
        leaves = unit_bin_index(self._check_values(values), self.bins)
        blocks = []
        for t, size in enumerate(self._sizes, start=1):
            nodes, signs = self._signs_and_nodes(leaves, np.full(leaves.size, t))
            truth = signs[:, None] * _hadamard_sign(np.arange(size)[None, :], nodes[:, None])  # (n, size)
            plus = np.where(truth > 0, self._keep, 1.0 - self._keep) / (self._height * size)
            minus = 1.0 / (self._height * size) - plus
            blocks.append(np.stack([minus, plus], axis=2).reshape(leaves.size, 2 * size))
        return np.concatenate(blocks, axis=1)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        reports, _ = self.report_format.read(reports)
        levels = reports["level"].astype(np.int64)
        return 2 * (self._offsets[levels - 1] - self._height + reports["row"].astype(np.int64)) + reports[
            "bit"
        ].astype(np.int64)
