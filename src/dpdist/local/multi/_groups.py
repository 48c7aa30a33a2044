"""Users sampled into groups, each reporting through its group's protocol: the reports and their statistic.

SMP (a group per attribute), CALM (a group per marginal) and the grids of HDG/TDG
(a group per grid) share one design: each user draws a group uniformly at random,
independently of their record, and reports the group's index with their group value
(an attribute's value, a marginal's cell, a grid's cell) randomized by the group's
protocol at the whole budget.  :class:`SampledGroups` owns what follows from it:

* the report format: records with fields ``<index field>`` (the group, in the narrowest unsigned integer)
  and ``payload`` (the group protocol's report as little-endian bytes, zero-padded to the
  widest group, :class:`~dpdist.local.numerical._composite.ReportCodec`);
* privatize, check, accumulate, simulate (exact: the groups drawn, then each group
  protocol's simulate) and the channel index;
* the statistic: the count of each group's reports, then each group protocol's statistic.

The owner maps records to group values (``values_of(records, group)``).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .._report_format import smallest_unsigned_dtype
from .._report_kinds import Field, RecordReports
from .._state_validation import exact_sum, statistic_problem
from ..numerical._composite import ReportCodec
from ._sampling import sample_groups

__all__ = ["SampledGroups", "client_entry"]


def client_entry(name: str, inner) -> dict:
    """A part's randomizer as a client derives it (an attribute's or a group's): name, protocol, budget, report
    format and design constants; the JavaScript client refuses a view whose entry differs from its own."""
    return {
        "name": name,
        "protocol": inner.name,
        "epsilon": inner.epsilon,
        "format": inner.report_format.describe(),
        "design": inner._client_design(),
    }


class SampledGroups:
    """The reports of users sampled into ``len(inners)`` groups (see the module docstring).

    Parameters
    ----------
    inners : sequence of LocalProtocol
        Each group's protocol.
    field : str
        The name of the index field (``"attribute"``, ``"marginal"``, ``"grid"``).
    names : sequence of str
        Each group's name, prefixed to its protocol's reasons for rejected rows.
    """

    def __init__(self, inners: Sequence, field: str, names: Sequence[str]):
        self.inners = tuple(inners)
        self.field = field
        self.names = tuple(names)
        self.codecs = tuple(ReportCodec(inner) for inner in self.inners)
        self.width = max(codec.width for codec in self.codecs)
        sizes = [len(self.inners)] + [inner.statistic_size for inner in self.inners]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    def client_design(self) -> list[dict]:
        """Each group's entry of the client view's design (:func:`client_entry`), in report order."""
        return [client_entry(name, inner) for name, inner in zip(self.names, self.inners)]

    @property
    def count(self) -> int:
        return len(self.inners)

    @property
    def statistic_size(self) -> int:
        return int(self.offsets[-1])

    @property
    def statistic_dtype(self):
        dtypes = {np.dtype(inner.statistic_dtype) for inner in self.inners}
        return np.float64 if np.dtype(np.float64) in dtypes else np.int64

    def part(self, statistic: np.ndarray, group: int) -> np.ndarray:
        """Group ``group``'s protocol statistic."""
        return statistic[self.offsets[group + 1] : self.offsets[group + 2]]

    def counts(self, statistic: np.ndarray) -> np.ndarray:
        """The number of reports of each group."""
        return np.asarray(statistic[: self.count], dtype=np.int64)

    def report_format(self) -> RecordReports:
        dtype = smallest_unsigned_dtype(self.count)  # past 65,536 groups (calm of many attributes): uint32, not a wrap
        return RecordReports([
            Field(self.field, dtype, low=0, high=self.count, reason=f"{self.field}_out_of_range"),
            Field("payload", np.uint8, (self.width,)),
        ])

    # ------------------------------------------------------------------ client
    def privatize(self, records: np.ndarray, values_of: Callable, reports: np.ndarray, rng) -> np.ndarray:
        """Fill ``reports`` (empty, one row per record) with each record's group and randomized group value."""
        chosen = sample_groups(records.shape[0], self.count, rng)
        reports[self.field] = chosen
        for group, (inner, codec) in enumerate(zip(self.inners, self.codecs)):
            rows = np.flatnonzero(chosen == group)
            if rows.size:
                randomized = inner._privatize(values_of(records[rows], group), rng)
                reports["payload"][rows] = codec.encode(randomized, self.width)
        return reports

    def simulate(self, records: np.ndarray, values_of: Callable, rng) -> np.ndarray:
        """Exact: each record's group drawn as in :meth:`privatize`, then each group protocol's simulate."""
        chosen = sample_groups(records.shape[0], self.count, rng)
        statistic = np.zeros(self.statistic_size, dtype=self.statistic_dtype)
        statistic[: self.count] = np.bincount(chosen, minlength=self.count)
        for group, inner in enumerate(self.inners):
            statistic[self.offsets[group + 1] : self.offsets[group + 2]] = inner._simulate(
                values_of(records[chosen == group], group), rng
            )
        return statistic

    def simulate_groups(self, group_values: Sequence[np.ndarray], rng) -> np.ndarray:
        """The statistic of reports whose group values are given per group (a parametric bootstrap's draw)."""
        statistic = np.zeros(self.statistic_size, dtype=self.statistic_dtype)
        for group, (inner, values) in enumerate(zip(self.inners, group_values)):
            statistic[group] = len(values)
            statistic[self.offsets[group + 1] : self.offsets[group + 2]] = inner._simulate(values, rng)
        return statistic

    # ------------------------------------------------------------------ server
    def check(self, reports: np.ndarray, invalid: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Each payload checked by its group's protocol (reasons ``"<group>.<reason>"``), padding zero."""
        chosen = reports[self.field]
        padding = np.zeros(reports.shape[0], dtype=bool)
        for group, (name, inner, codec) in enumerate(zip(self.names, self.inners, self.codecs)):
            rows = np.flatnonzero(chosen == group)
            if not rows.size:
                continue
            payload = reports["payload"][rows]
            padding[rows] = codec.padding_set(payload)
            _, inner_invalid = inner.check_reports(codec.decode(payload))
            for reason, mask in inner_invalid.items():
                target = invalid.setdefault(f"{name}.{reason}", np.zeros(reports.shape[0], dtype=bool))
                target[rows[mask]] = True
        invalid["padding_bytes_set"] = padding
        return invalid

    def accumulate(self, reports: np.ndarray) -> np.ndarray:
        statistic = np.zeros(self.statistic_size, dtype=self.statistic_dtype)
        chosen = reports[self.field]
        statistic[: self.count] = np.bincount(chosen, minlength=self.count)[: self.count]
        for group, (inner, codec) in enumerate(zip(self.inners, self.codecs)):
            rows = chosen == group
            if rows.any():
                statistic[self.offsets[group + 1] : self.offsets[group + 2]] = inner.statistic(
                    codec.decode(reports["payload"][rows])
                )
        return statistic

    def statistic_problem(self, statistic: np.ndarray, n: int) -> str | None:
        """Why ``statistic`` cannot come from ``n`` reports (None if it can)."""
        counts = statistic[: self.count]
        if exact_sum(counts) != n:
            return f"the {self.field} counts sum to {exact_sum(counts)}, not n={n}"
        for group, (name, inner) in enumerate(zip(self.names, self.inners)):
            problem = statistic_problem(inner, self.part(statistic, group), int(counts[group]))
            if problem is not None:
                return f"{self.field} {name!r} ({inner.name}): {problem}"
        return None

    def report_index(self, reports: np.ndarray, output_counts: Sequence[int]) -> np.ndarray:
        """Each report's column in the channel (the groups' outputs one after another)."""
        chosen = reports[self.field]
        index = np.full(reports.shape[0], -1, dtype=np.int64)
        offset = 0
        for group, (inner, codec, outputs) in enumerate(zip(self.inners, self.codecs, output_counts)):
            rows = chosen == group
            if rows.any():
                index[rows] = offset + inner.report_index(codec.decode(reports["payload"][rows]))
            offset += outputs
        return index
