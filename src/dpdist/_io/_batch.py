"""What a protocol's reports look like on the wire, and a validated batch read back.

Every local protocol's reports are a NumPy array with one row per user: a
1-D integer array (GRR, SW, ...), a 2-D ``uint8`` array of bit-packed vectors
(OUE, SUE, SS), a 2-D integer array (OLH: seed and hashed value) or a 1-D
structured array (hierarchies, HaarHRR).  :func:`report_layout` finds the dtype
and row shape of a protocol generically, by privatizing one in-domain value, so
a new registered protocol needs no code here.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import IncompatibleStateError, MalformedReportError

__all__ = ["ReportLayout", "ReportBatch", "report_layout", "validated_batch", "rejected_batch"]


@dataclass(frozen=True)
class ReportLayout:
    """Dtype and per-row shape of a protocol's reports (``shape = (n, *row_shape)``)."""

    dtype: np.dtype
    row_shape: tuple[int, ...]

    def empty(self, n: int = 0) -> np.ndarray:
        return np.zeros((n, *self.row_shape), dtype=self.dtype)


def report_layout(protocol) -> ReportLayout:
    """The :class:`ReportLayout` of ``protocol`` (cached by config)."""
    return _layout_of_config(json.dumps(protocol.config(), sort_keys=True), protocol)


@functools.lru_cache(maxsize=128)
def _layout_of_config(config_key: str, protocol) -> ReportLayout:
    if protocol.tags.kind == "frequency":
        sample = np.zeros(1, dtype=np.int64)
    else:
        sample = np.array([float(getattr(protocol, "bounds", (0.0, 1.0))[0])])
    reports, _ = protocol._validate_reports(protocol.privatize(sample, rng=0))
    reports = np.asarray(reports)
    if reports.dtype.hasobject:
        raise MalformedReportError(f"{protocol.display_name} reports hold Python objects; they have no wire format.")
    return ReportLayout(reports.dtype, tuple(reports.shape[1:]))


@dataclass(frozen=True)
class ReportBatch:
    """The valid reports of one batch read from the wire, and what was rejected.

    Attributes
    ----------
    reports : ndarray
        The valid reports, in the protocol's format (ready for ``Aggregator.add``).
    config : dict
        Config of the protocol the reports are checked against.
    rejected : dict[str, int]
        Rejected rows by reason (``"other_config"``, ``"wrong_shape"``,
        ``"missing"``, ``"out_of_range"`` or the protocol's own reasons).
    n_read : int
        Rows read, valid or not.
    n_rejected_rows : int
        Rows rejected (a row may count under several reasons in ``rejected``).
    """

    reports: np.ndarray
    config: dict[str, Any]
    rejected: dict[str, int] = field(default_factory=dict)
    n_read: int = 0
    n_rejected_rows: int = 0

    @property
    def n_valid(self) -> int:
        return self.n_read - self.n_rejected_rows

    def add_to(self, aggregator):
        """Add the (already validated) reports and the rejected counts to ``aggregator``; return it."""
        if aggregator.config != self.config:
            raise IncompatibleStateError(
                f"The batch's config {self.config} differs from the aggregator's config {aggregator.config}."
            )
        protocol = aggregator.protocol
        count = protocol._count_reports(self.reports)
        if count:
            aggregator._add_statistic(protocol._accumulate(self.reports), count)
        for reason, number in self.rejected.items():
            aggregator.rejected[reason] = aggregator.rejected.get(reason, 0) + number
        return aggregator


def validated_batch(protocol, array: np.ndarray, invalid: dict[str, np.ndarray] | None = None) -> ReportBatch:
    """Validate ``array`` with the protocol's own checks; keep the valid rows.

    ``invalid`` holds rows already found bad while decoding (wrong shape,
    missing, not representable); those rows hold placeholder zeros and are
    not counted again under the protocol's reasons.
    """
    n = array.shape[0]
    decoded_bad = np.zeros(n, dtype=bool)
    for mask in (invalid or {}).values():
        decoded_bad |= mask
    reports, protocol_invalid = protocol._validate_reports(array)
    rejected: dict[str, int] = {}
    bad = decoded_bad.copy()
    for reason, mask in [*(invalid or {}).items(), *((r, m & ~decoded_bad) for r, m in protocol_invalid.items())]:
        count = int(np.count_nonzero(mask))
        if count:
            rejected[reason] = rejected.get(reason, 0) + count
            bad |= mask
    if bad.any():
        reports = protocol._select_reports(reports, ~bad)
    return ReportBatch(reports, protocol.config(), rejected, n, int(np.count_nonzero(bad)))


def rejected_batch(protocol, n: int, reason: str) -> ReportBatch:
    """A batch whose ``n`` rows are all rejected for ``reason`` (e.g. written under another config)."""
    rejected = {reason: int(n)} if n else {}
    return ReportBatch(report_layout(protocol).empty(0), protocol.config(), rejected, int(n), int(n))
