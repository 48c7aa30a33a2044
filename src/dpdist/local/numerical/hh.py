r"""Hierarchical histogram, ``hh`` (paper 003 sec. 4.2; Kulkarni, Cormode, Srivastava 2019).

The bounds are cut into ``bins = beta**h`` equal-width leaves of a complete
:math:`\beta`-ary tree (default :math:`\beta = 4`, as in paper 003 sec. 6.1).
Each user draws a level :math:`\ell \in \{1, \dots, h\}` uniformly at random
("divide the population", sec. 4.2; level 1 has :math:`\beta` nodes, level
:math:`h` the leaves) and reports :math:`\ell` together with a categorical
frequency oracle's report of their ancestor node at that level.  The oracle of
each level is chosen by the variance rule of sec. 2.1 (``oracle="auto"``: GRR
when :math:`\beta^\ell < 3e^\varepsilon + 2`, else OUE) or named.  The level is
drawn independently of the value, so revealing it costs no privacy; the report
(level, oracle report) is :math:`\varepsilon`-LDP because each oracle is, and
the channel below includes the level.

Estimation: each level's unbiased frequencies, then the constrained inference
of Hay et al. (PVLDB 2010; :func:`dpdist.postprocess.hay_consistency`) with the root fixed
at 1 (the total is known in LDP, sec. 4.3), then Norm-Sub on the leaves to get a
valid distribution.  Paper 003 evaluates HH only on range queries because the
consistent leaves can be negative (sec. 6.1); :meth:`HierarchicalHistogram.consistent_tree`
gives them raw.

Report format: a 1-D structured array with fields ``level`` (``uint8``, 1..h)
and ``payload`` (``uint8`` bytes: the level's oracle report as little-endian
bytes, zero-padded to the widest level).
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, cast

import numpy as np

from ... import postprocess as _postprocess
from ..._types import ArrayLike
from ..._validation import Integer, Options, PowerOf, Relation, validate_params
from ...postprocess import _consistent_tree, hay_consistency
from .._aggregator import Aggregator
from .._docs import shared_parameters
from .._protocol import ProtocolTags, register
from .._report_kinds import Field, RecordReports
from .._state_validation import exact_sum, statistic_problem
from ._base import VALUES_GIVEN, BinnedProtocol, NumericalProtocol, unit_bin_index
from ._composite import ORACLES, ReportCodec, inner_aggregator, make_oracle, unbiased_rows
from ._tree import tree_height
from .binning import DISTRIBUTION_POSTPROCESS_RULE

__all__ = ["HierarchicalHistogram"]


@register
@shared_parameters
class HierarchicalHistogram(BinnedProtocol):
    """Hierarchical histogram with users split uniformly over the levels.

    Parameters
    ----------
    {epsilon}
    bins : int
        Number of leaves; must be a power of ``branching`` (default 256 = 4^4).
    branching : int
        Branching factor :math:`\\beta \\ge 2` (default 4).
    oracle : {"auto", "grr", "oue", "olh"}
        Oracle of every level; "auto" chooses per level by variance.
    {bounds}
    """

    name = "hh"
    summary = "hierarchical histogram: beta-ary tree, one level per user, Hay consistency, Norm-Sub"
    tags = ProtocolTags(kind="numerical", finite_channel=True, exact_simulate=True, unbiased=False)
    _constraints = {
        **NumericalProtocol._constraints,
        "bins": Integer(low=2, high=2**20),
        "branching": Integer(low=2, high=256),
        "oracle": Options(ORACLES),
    }
    _relations: ClassVar[tuple[Relation, ...]] = (PowerOf("bins", "branching", why="the leaves of a complete tree",
                                                          counterexample={"bins": 100, "branching": 4}),)
    _defaults = {**NumericalProtocol._defaults, "bins": 256, "branching": 4, "oracle": "auto"}
    estimate_options = {"postprocess": DISTRIBUTION_POSTPROCESS_RULE}

    def _setup(self):
        bins, branching = self._params["bins"], self._params["branching"]
        self._height = height = cast(int, tree_height(bins, branching))  # an int: the relation PowerOf of the table
        self._oracles = [
            make_oracle(self.display_name, self._params["oracle"], branching**depth, self.epsilon)
            for depth in range(1, height + 1)
        ]
        self._codecs = [ReportCodec(oracle) for oracle in self._oracles]
        self._width = max(codec.width for codec in self._codecs)
        sizes = [height] + [oracle.statistic_size for oracle in self._oracles]
        self._stat_offsets = np.concatenate([[0], np.cumsum(sizes)])

    @property
    def statistic_dtype(self) -> type:
        """float64 if any level's oracle sums floats, else int64 (the levels' statistics share one vector)."""
        dtypes = {np.dtype(oracle.statistic_dtype) for oracle in self._oracles}
        return np.float64 if np.dtype(np.float64) in dtypes else np.int64

    # ------------------------------------------------------------------ structure
    @property
    def branching(self) -> int:
        return self._params["branching"]

    @property
    def height(self) -> int:
        """Number of reported levels ``h`` (``bins = branching**h``)."""
        return self._height

    @property
    def oracles(self) -> list:
        """The inner oracle of each level ``1 .. h`` (index 0 is level 1)."""
        return list(self._oracles)

    @property
    def statistic_size(self) -> int:
        return int(self._stat_offsets[-1])

    def _ancestors(self, leaves: np.ndarray, depth: int) -> np.ndarray:
        return leaves // self.branching ** (self._height - depth)

    # ------------------------------------------------------------------ client
    def _privatize(self, values, rng):
        leaves = unit_bin_index(values, self.bins)
        levels = rng.integers(1, self._height + 1, size=values.size)
        reports = self.report_format.empty(values.size)
        reports["level"] = levels
        for depth, (oracle, codec) in enumerate(zip(self._oracles, self._codecs), start=1):
            rows = np.flatnonzero(levels == depth)
            if rows.size:
                inner = oracle.privatize(self._ancestors(leaves[rows], depth), rng=rng)
                reports["payload"][rows] = codec.encode(inner, self._width)
        return reports

    # ------------------------------------------------------------------ server
    @property
    def report_dtype(self) -> np.dtype:
        """``report_format.dtype``: fields ``level`` and ``payload``."""
        return self.report_format.dtype

    def _report_format(self):
        return RecordReports([
            Field("level", np.uint8, low=1, high=self._height + 1, reason="level_out_of_range"),
            Field("payload", np.uint8, (self._width,)),
        ])

    def _check_reports(self, reports, invalid):
        """Each level's payload is its oracle's report (checked by the oracle), zero-padded."""
        levels = reports["level"]
        padding = np.zeros(reports.size, dtype=bool)
        for depth, (oracle, codec) in enumerate(zip(self._oracles, self._codecs), start=1):
            rows = np.flatnonzero(levels == depth)
            if not rows.size:
                continue
            payload = reports["payload"][rows]
            padding[rows] = codec.padding_set(payload)
            _, inner_invalid = oracle.check_reports(codec.decode(payload))
            for reason, mask in inner_invalid.items():
                invalid.setdefault(reason, np.zeros(reports.size, dtype=bool))[rows[mask]] = True
        invalid["padding_bytes_set"] = padding
        return invalid

    def _accumulate(self, reports):
        statistic: np.ndarray = np.zeros(self.statistic_size, dtype=self.statistic_dtype)
        levels = reports["level"]
        statistic[: self._height] = np.bincount(levels, minlength=self._height + 1)[1:]
        for depth, (oracle, codec) in enumerate(zip(self._oracles, self._codecs), start=1):
            rows = levels == depth
            if rows.any():
                start, stop = self._stat_offsets[depth], self._stat_offsets[depth + 1]
                statistic[start:stop] = oracle.statistic(codec.decode(reports["payload"][rows]))
        return statistic

    def _simulate(self, values, rng):
        """Exact: a multinomial split of each leaf's users over the levels, then each oracle's simulate."""
        h = self._height
        leaf_counts = np.bincount(unit_bin_index(values, self.bins), minlength=self.bins)
        split = rng.multinomial(leaf_counts, np.full(h, 1.0 / h))  # (bins, h)
        statistic: np.ndarray = np.zeros(self.statistic_size, dtype=self.statistic_dtype)
        statistic[:h] = split.sum(axis=0)
        for depth, oracle in enumerate(self._oracles, start=1):
            node_counts = split[:, depth - 1].reshape(self.branching**depth, -1).sum(axis=1)
            items = np.repeat(np.arange(node_counts.size), node_counts)
            start, stop = self._stat_offsets[depth], self._stat_offsets[depth + 1]
            statistic[start:stop] = oracle._simulate(items, rng)  # items valid by construction: no re-validation
        return statistic

    def _check_statistic(self, statistic, n):
        """The level counts sum to ``n``; each level's part is one its oracle makes from that level's count."""
        counts = statistic[: self._height]
        if exact_sum(counts) != n:
            return f"the level counts sum to {exact_sum(counts)}, not n={n}"
        for depth, (oracle, count) in enumerate(zip(self._oracles, counts), start=1):
            start, stop = self._stat_offsets[depth], self._stat_offsets[depth + 1]
            problem = statistic_problem(oracle, statistic[start:stop], int(count))
            if problem is not None:
                return f"level {depth} ({oracle.name} with {int(count)} report(s)): {problem}"
        return None

    # ------------------------------------------------------------------ estimation
    def level_counts(self, aggregator: Aggregator) -> np.ndarray:
        """Number of reports of each level ``1 .. h``."""
        return np.asarray(aggregator.statistic[: self._height], dtype=np.int64)

    def level_frequencies(self, aggregator: Aggregator) -> list[np.ndarray]:
        """Each level's unbiased node frequencies (uniform for a level with no report)."""
        aggregator._check_protocol(self)
        out = []
        for depth, (oracle, count) in enumerate(zip(self._oracles, self.level_counts(aggregator)), start=1):
            if count == 0:
                out.append(np.full(oracle.domain_size, 1.0 / oracle.domain_size))
                continue
            start, stop = self._stat_offsets[depth], self._stat_offsets[depth + 1]
            inner = inner_aggregator(oracle, aggregator.statistic[start:stop], int(count))
            out.append(np.asarray(oracle.estimate(inner).frequencies))
        return out

    def consistent_tree(self, aggregator: Aggregator) -> list[np.ndarray]:
        """Hay et al.'s least-squares consistent tree (root = 1); levels ``0 .. h``, may be negative."""
        noisy = [np.ones(1)] + self.level_frequencies(aggregator)
        return hay_consistency(noisy, self.branching, root=1.0)

    def _linear_estimator(self, options: dict[str, Any]) -> Callable[[np.ndarray, int], np.ndarray] | None:
        """``details["consistent_leaves"]`` of a block of statistics: each row's level frequencies
        (:meth:`level_frequencies`), then Hay's consistent tree with root 1 (:meth:`consistent_tree`), a block at a
        time (the projection is linear and :func:`dpdist.postprocess.hay_consistency` works tree by tree along the
        last axis)."""

        def leaves(statistics: np.ndarray, n: int) -> np.ndarray:
            counts = np.asarray(statistics[:, : self._height], dtype=np.int64)
            noisy = [np.ones((len(statistics), 1))]
            for depth, oracle in enumerate(self._oracles, start=1):
                start, stop = self._stat_offsets[depth], self._stat_offsets[depth + 1]
                noisy.append(unbiased_rows(oracle, statistics[:, start:stop], counts[:, depth - 1]))
            return _consistent_tree(noisy, self.branching, 1.0)[-1]

        return leaves

    def _estimate(self, aggregator, *, postprocess: str = "norm-sub"):
        """Leaf masses of the consistent tree, made a distribution by ``postprocess``.

        Parameters
        ----------
        postprocess : {"norm-sub", "simplex", "clip-normalize"}
            Norm-Sub by default, as the paper's baseline.
        """
        postprocess = postprocess or "norm-sub"  # None: the default (estimate_options checked any other value)
        leaves = self.consistent_tree(aggregator)[-1]
        return self._distribution(
            _postprocess.apply(postprocess, leaves),
            aggregator=aggregator,
            postprocess=postprocess,
            consistent_leaves=leaves,
            level_counts=self.level_counts(aggregator),
        )

    # ------------------------------------------------------------------ channel
    @validate_params({}, relations=(VALUES_GIVEN,))
    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Exact ``P[i, y]``; outputs are level 1's oracle outputs, then level 2's, ...

        ``P[i, (l, y)] = (1/h) * channel_l[ancestor_l(values[i]), y]``.
        """
        leaves = unit_bin_index(self._check_values(values), self.bins)
        blocks = [
            oracle.channel(None)[self._ancestors(leaves, depth)] / self._height
            for depth, oracle in enumerate(self._oracles, start=1)
        ]
        return np.concatenate(blocks, axis=1)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        reports, _ = self.report_format.read(reports)
        levels = reports["level"]
        offset = 0
        index = np.full(reports.size, -1, dtype=np.int64)
        for depth, (oracle, codec) in enumerate(zip(self._oracles, self._codecs), start=1):
            rows = levels == depth
            if rows.any():
                index[rows] = offset + oracle.report_index(codec.decode(reports["payload"][rows]))
            offset += oracle.channel(None).shape[1]
        return index
