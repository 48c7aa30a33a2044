"""A protocol's declared report format, and the validated batch every ingest path adds.

Every local protocol's reports are a NumPy array with one row per user: a 1-D
integer array (GRR, SW, ...), a 2-D ``uint8`` array of bit-packed vectors (OUE,
SUE, SS), a 2-D integer array (OLH: seed and hashed value) or a 1-D structured
array (hierarchies, HaarHRR).  ``protocol.report_format`` states it as a value:

* ``dtype`` and ``row_shape`` (a batch has shape ``(n, *row_shape)``), found
  generically by privatizing one in-domain value, so a new protocol needs no
  code here;
* ``check`` (read a batch, flag each invalid row by reason), ``select`` (rows
  of a batch), ``count`` (rows of a batch) and ``statistic`` (the sufficient
  statistic of valid rows), which call the protocol's hooks
  ``_validate_reports``, ``_select_reports``, ``_count_reports`` and
  ``_accumulate`` -- protocol authors implement those, everyone else calls
  the format;
* ``validate``: the one way to turn reports into a :class:`ReportBatch` (the
  valid rows and the rejected counts by reason), which
  :meth:`Aggregator.add_batch <dpdist.local.Aggregator.add_batch>` adds.

``Aggregator.add``, the report files (:mod:`dpdist.io`), Dask
(:mod:`dpdist.distributed`) and the collection service all go through
``validate`` and ``add_batch``, so a report is checked by the same code
whichever way it arrives.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from ..errors import InvalidParameterError, MalformedReportError
from .._types import ArrayLike

if TYPE_CHECKING:
    from ._aggregator import Aggregator
    from ._protocol import LocalProtocol

__all__ = ["ReportFormat", "ReportBatch", "ON_INVALID"]

#: values of the ``on_invalid`` argument of ``validate`` and ``Aggregator.add``
ON_INVALID = ("count", "raise")


@dataclass(frozen=True)
class ReportBatch:
    """The valid reports of one batch, and what was rejected.

    Made by :meth:`ReportFormat.validate`; added by :meth:`Aggregator.add_batch
    <dpdist.local.Aggregator.add_batch>` (or :meth:`add_to`).

    Attributes
    ----------
    reports : ndarray
        The valid reports, in the protocol's format.
    config : dict
        Config of the protocol the reports were checked against.
    rejected : dict[str, int]
        Rejected rows by reason (``"out_of_range"``, ``"other_config"``,
        ``"wrong_shape"``, ``"missing"`` or the protocol's own reasons).
    n_read : int
        Rows read, valid or not.
    n_rejected_rows : int
        Rows rejected (a row may count under several reasons in ``rejected``).
    first_invalid_row : int or None
        Index (among the rows read) of the first rejected row.
    """

    reports: Any
    config: dict[str, Any]
    rejected: dict[str, int] = field(default_factory=dict)
    n_read: int = 0
    n_rejected_rows: int = 0
    first_invalid_row: int | None = None

    @property
    def n_valid(self) -> int:
        return self.n_read - self.n_rejected_rows

    def add_to(self, aggregator: Aggregator) -> Aggregator:
        """``aggregator.add_batch(self)``; return the aggregator."""
        return aggregator.add_batch(self)

    @classmethod
    def concatenate(cls, batches: Iterable["ReportBatch"], report_format: "ReportFormat") -> "ReportBatch":
        """One batch holding the valid reports of ``batches`` (checked against ``report_format``)."""
        batches = list(batches)
        config = report_format.protocol.config()
        if any(batch.config != config for batch in batches):
            raise InvalidParameterError("ReportBatch.concatenate needs batches of the format's config.")
        if not batches:
            return cls(report_format.empty(0), config)
        rejected: dict[str, int] = {}
        first = None
        offset = 0
        for batch in batches:
            for reason, count in batch.rejected.items():
                rejected[reason] = rejected.get(reason, 0) + count
            if first is None and batch.first_invalid_row is not None:
                first = offset + batch.first_invalid_row
            offset += batch.n_read
        return cls(
            np.concatenate([batch.reports for batch in batches]),
            config,
            rejected,
            offset,
            sum(batch.n_rejected_rows for batch in batches),
            first,
        )


class ReportFormat:
    """The report format of one protocol (see the module docstring).

    Get it as ``protocol.report_format``; it is cached on the protocol.
    """

    def __init__(self, protocol: "LocalProtocol"):
        self.protocol = protocol
        self._layout: tuple[np.dtype, tuple[int, ...]] | None = None

    # ------------------------------------------------------------------ layout
    @property
    def dtype(self) -> np.dtype:
        """The dtype of a batch of reports (as written to files)."""
        return self._find_layout()[0]

    @property
    def row_shape(self) -> tuple[int, ...]:
        """The shape of one report: a batch of ``n`` has shape ``(n, *row_shape)``."""
        return self._find_layout()[1]

    def empty(self, n: int = 0) -> np.ndarray:
        """``n`` zero rows of the format (placeholders; not necessarily valid reports)."""
        return np.zeros((n, *self.row_shape), dtype=self.dtype)

    def _find_layout(self) -> tuple[np.dtype, tuple[int, ...]]:
        if self._layout is None:
            config_key = json.dumps(self.protocol.config(), sort_keys=True)
            self._layout = _layout_of_config(config_key, self.protocol)
        return self._layout

    # ------------------------------------------------------------------ rows
    def check(self, reports: ArrayLike) -> tuple[Any, dict[str, np.ndarray]]:
        """Read a batch: the batch in the protocol's format and, by reason, a mask of its invalid rows.

        Raises :class:`~dpdist.errors.MalformedReportError` when the batch as a
        whole cannot be read (wrong type, number of dimensions, width or dtype).
        """
        return self.protocol._validate_reports(reports)

    def count(self, reports: ArrayLike) -> int:
        """Number of reports (rows) in a batch."""
        return int(self.protocol._count_reports(reports))

    def select(self, reports: Any, keep: np.ndarray) -> np.ndarray:
        """The reports at the rows where the boolean mask ``keep`` is true."""
        return self.protocol._select_reports(reports, keep)

    def statistic(self, reports: np.ndarray) -> np.ndarray:
        """The sufficient statistic of a batch of *valid* reports (shape ``(statistic_size,)``).

        The reports are not checked: pass ``ReportBatch.reports`` or rows that
        :meth:`check` did not flag.  Summing it over batches gives the
        aggregator's statistic.
        """
        return self.protocol._accumulate(reports)

    # ------------------------------------------------------------------ batches
    def validate(self, reports: ArrayLike, *, invalid: dict[str, np.ndarray] | None = None, on_invalid: str = "count") -> ReportBatch:
        """Check every row of ``reports``; keep the valid ones, count the others by reason.

        Parameters
        ----------
        reports
            A batch in the protocol's format.
        invalid : dict[str, ndarray], optional
            Rows already found bad while decoding the batch from a file (wrong
            shape, missing, not representable), by reason; those rows hold
            placeholders and are not counted again under the protocol's reasons.
        on_invalid : {"count", "raise"}
            Count invalid rows in ``rejected`` (default) or raise
            :class:`~dpdist.errors.MalformedReportError` naming the first one.
        """
        if on_invalid not in ON_INVALID:
            raise InvalidParameterError(
                f"The 'on_invalid' parameter must be 'count' or 'raise'. Got {on_invalid!r} instead."
            )
        reports, protocol_invalid = self.check(reports)
        n = self.count(reports)
        decoded_bad = np.zeros(n, dtype=bool)
        for mask in (invalid or {}).values():
            decoded_bad |= mask
        rejected: dict[str, int] = {}
        bad = decoded_bad.copy()
        reasons = [*(invalid or {}).items(), *((reason, mask & ~decoded_bad) for reason, mask in protocol_invalid.items())]
        for reason, mask in reasons:
            number = int(np.count_nonzero(mask))
            if number:
                rejected[reason] = rejected.get(reason, 0) + number
                bad |= mask
        n_bad = int(np.count_nonzero(bad))
        first = int(np.argmax(bad)) if n_bad else None
        if n_bad and on_invalid == "raise":
            raise MalformedReportError(
                f"{self.protocol.display_name} reports: {n_bad} invalid report(s) ({rejected}); "
                f"the first is at row {first}."
            )
        if n_bad:
            reports = self.select(reports, ~bad)
        return ReportBatch(reports, self.protocol.config(), rejected, n, n_bad, first)

    def rejected(self, n: int, reason: str) -> ReportBatch:
        """A batch whose ``n`` rows are all rejected for ``reason`` (e.g. written under another config)."""
        n = int(n)
        return ReportBatch(self.empty(0), self.protocol.config(), {reason: n} if n else {}, n, n, 0 if n else None)

    def __repr__(self):
        return f"ReportFormat({self.protocol.name!r}, dtype={self.dtype}, row_shape={self.row_shape})"


@functools.lru_cache(maxsize=128)
def _layout_of_config(config_key: str, protocol: "LocalProtocol") -> tuple[np.dtype, tuple[int, ...]]:
    """Dtype and row shape of one privatized in-domain value (cached by config, as protocols
    compare and hash by config: every file reader rebuilds the protocol from its config)."""
    if protocol.tags.takes_items:
        sample = np.zeros(1, dtype=np.int64)
    else:
        sample = np.array([float(getattr(protocol, "bounds", (0.0, 1.0))[0])])
    # the randomizer itself (privatize would warn that a memoized protocol's values are new users)
    reports, _ = protocol.report_format.check(protocol._privatize(protocol._check_values(sample), np.random.default_rng(0)))
    reports = np.asarray(reports)
    if reports.dtype.hasobject:
        raise MalformedReportError(f"{protocol.display_name} reports hold Python objects; they have no wire format.")
    return reports.dtype, tuple(reports.shape[1:])
