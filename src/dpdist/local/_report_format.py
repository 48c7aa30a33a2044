"""A protocol's declared report format, and the validated batch every ingest path adds.

Every local protocol's reports are a NumPy array with one row per user.  A
protocol *declares* what its rows are, as a value of one of a few kinds
(:mod:`dpdist.local._report_kinds`): items below a size (GRR, SW, ...), bit-packed
vectors with an optional exact weight (OUE, SS), integer rows with a limit per
column (OLH's seed and value, CMS's words), structured records (hierarchies,
HaarHRR) or the reports of an inner protocol (binning).  The declaration is
``protocol._report_format()``; ``protocol.report_format`` is that value bound
to the protocol, and it is the one owner of the wire:

* ``dtype``, ``row_shape`` (a batch has shape ``(n, *row_shape)``), ``value_columns``
  and ``describe()`` (the JSON description the file formats, the service and
  the JavaScript client read);
* ``read`` (the kind's own checks), ``check`` (``read``, then the protocol's
  small extra checks, :meth:`LocalProtocol._check_reports
  <dpdist.local.LocalProtocol._check_reports>`), ``select``, ``count`` and
  ``statistic`` (the sufficient statistic of valid rows: the protocol's
  ``_accumulate``);

The calls run one way: the format calls its protocol's report hooks
(:class:`ReportOwner`, what a protocol is to its format), and no hook calls the
format back within ``check``.
* ``validate``: the one way to turn reports into a :class:`ReportBatch` (the
  valid rows and the rejected counts by reason), which
  :meth:`Aggregator.add_batch <dpdist.local.Aggregator.add_batch>` adds;
* JSON rows in and out (``from_json_rows``, ``to_json_rows``) and ``fit``
  (values of another dtype, as read from a file, cast with their unrepresentable
  rows flagged).

``Aggregator.add``, the report files (:mod:`dpdist.io`), Dask
(:mod:`dpdist.distributed`) and the collection service all go through
``validate`` and ``add_batch``, so a report is checked by the same code
whichever way it arrives.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Protocol, TypeVar

import numpy as np

from ..errors import InvalidParameterError, MalformedReportError
from ._json_rows import json_rows, rows_from_json

__all__ = ["ReportFormat", "ReportBatch", "ReportOwner", "ON_INVALID", "smallest_unsigned_dtype", "fit_values"]

#: values of the ``on_invalid`` argument of ``validate`` and ``Aggregator.add``
ON_INVALID = ("count", "raise")


class ReportOwner(Protocol):
    """What a protocol is to the format it declares: its name to show, its config and its report hooks.

    :class:`~dpdist.local.LocalProtocol` implements these; the format is bound to one with
    :meth:`ReportFormat.bind` and calls them, never the other way round.
    """

    @property
    def display_name(self) -> str: ...

    def config(self) -> dict[str, Any]: ...

    def _check_reports(self, reports: Any, invalid: dict[str, np.ndarray]) -> dict[str, np.ndarray]: ...

    def _select_reports(self, reports: Any, keep: np.ndarray) -> Any: ...

    def _count_reports(self, reports: Any) -> int: ...

    def _accumulate(self, reports: Any) -> np.ndarray: ...


class _TakesBatches(Protocol):
    def add_batch(self, batch: ReportBatch) -> Any: ...


Sink = TypeVar("Sink", bound=_TakesBatches)


def smallest_unsigned_dtype(size: int) -> np.dtype:
    """The narrowest unsigned integer dtype holding ``0 .. size - 1``."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if size - 1 <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


def fit_values(raw: Any, base: Any) -> tuple[np.ndarray, np.ndarray]:
    """``raw`` cast to ``base`` entry by entry, and the mask of entries that do not fit.

    An entry does not fit when it is outside ``base``'s range, not integral, or
    NaN (for an integer ``base``); it is set to 0.  Used by every reader of
    reports written with another dtype (binary records, Arrow columns, JSON rows).
    """
    raw = np.asarray(raw)
    base = np.dtype(base)
    if raw.dtype == base or not np.issubdtype(base, np.integer):
        return raw.astype(base, copy=False), np.zeros(raw.shape, dtype=bool)
    info = np.iinfo(base)
    if np.issubdtype(raw.dtype, np.floating):
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(raw) | (raw != np.floor(raw)) | (raw < info.min) | (raw > info.max)
    elif raw.dtype == np.uint64:
        bad = raw > np.uint64(info.max)
    elif np.issubdtype(raw.dtype, np.integer) or raw.dtype == np.bool_:
        wide = raw.astype(np.int64)
        bad = (wide < info.min) | (wide > info.max)
    else:
        raise MalformedReportError(f"Values of dtype {raw.dtype} cannot be read as {base}.")
    return np.where(bad, 0, raw).astype(base), bad


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

    def add_to(self, aggregator: Sink) -> Sink:
        """``aggregator.add_batch(self)``; return the aggregator."""
        aggregator.add_batch(self)
        return aggregator

    @classmethod
    def concatenate(cls, batches: Iterable["ReportBatch"], report_format: "ReportFormat") -> "ReportBatch":
        """One batch holding the valid reports of ``batches`` (checked against ``report_format``)."""
        batches = list(batches)
        config = report_format.protocol.config()
        if any(batch.config != config for batch in batches):
            raise InvalidParameterError("ReportBatch.concatenate needs batches of the format's config.")
        if not batches:
            return cls(report_format.empty(0), config)
        if len(batches) == 1:
            return batches[0]
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
    """The declared format of one protocol's reports (see the module docstring).

    Get it as ``protocol.report_format``.  This base class is the format of a
    protocol that declares none: it has no wire format (``dtype`` raises
    :class:`~dpdist.errors.MalformedReportError`) and reads no batch.  The kinds of
    :mod:`dpdist.local._report_kinds` are its subclasses.
    """

    #: the kind's name in :meth:`describe`
    kind: ClassVar[str] = "undeclared"

    def __init__(self, dtype: Any = None, row_shape: tuple[int, ...] = ()) -> None:
        try:
            self._dtype = None if dtype is None else np.dtype(dtype)
        except TypeError:  # e.g. ReportFormat(protocol), which made a protocol's format before declarations
            raise InvalidParameterError(
                f"The 'dtype' of a ReportFormat must be a NumPy dtype (a protocol's format is protocol.report_format). "
                f"Got {dtype!r}."
            ) from None
        self._row_shape = tuple(int(size) for size in row_shape)
        self._protocol: ReportOwner | None = None

    # ------------------------------------------------------------------ the declared value
    @property
    def dtype(self) -> np.dtype:
        """The dtype of a batch of reports (as written to files)."""
        if self._dtype is None:
            raise MalformedReportError(
                f"{self._owner} declares no report format (LocalProtocol._report_format); its reports have no wire format."
            )
        return self._dtype

    @property
    def row_shape(self) -> tuple[int, ...]:
        """The shape of one report: a batch of ``n`` has shape ``(n, *row_shape)``."""
        self.dtype  # noqa: B018  (an undeclared format has no shape either)
        return self._row_shape

    @property
    def row_bytes(self) -> int:
        """Bytes of one report on the wire."""
        return self.dtype.itemsize * int(np.prod(self.row_shape, dtype=np.int64))

    def value_columns(self) -> list[tuple[str | None, np.dtype, tuple[int, ...]]]:
        """``(field name, base dtype, per-row shape)`` of each column: one unnamed column for plain reports,
        one per field for structured ones (Arrow columns and JSON objects follow them)."""
        if self.dtype.names is None:
            return [(None, self.dtype, self.row_shape)]
        columns: list[tuple[str | None, np.dtype, tuple[int, ...]]] = []
        for name in self.dtype.names:
            sub = self.dtype[name]
            columns.append((name, sub.base, tuple(sub.shape)))
        return columns

    def describe(self) -> dict[str, Any]:
        """The format as JSON-safe data: ``kind``, ``dtype`` (NumPy descr, as in record headers),
        ``row_shape`` and the kind's parameters (what a client of another language reads)."""
        return {
            "kind": self.kind,
            "dtype": np.lib.format.dtype_to_descr(self.dtype),
            "row_shape": list(self.row_shape),
            **self._parameters(),
        }

    def _parameters(self) -> dict[str, Any]:
        return {}

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> str:
        return json.dumps(self.describe() if self._dtype is not None else {"kind": self.kind}, sort_keys=True)

    def __repr__(self) -> str:
        if self._dtype is None:
            return f"ReportFormat({self._owner!r}, undeclared)"
        parameters = ", ".join(f"{key}={value!r}" for key, value in self._parameters().items())
        return f"{type(self).__name__}({parameters}{', ' if parameters else ''}dtype={self.dtype}, row_shape={self.row_shape})"

    # ------------------------------------------------------------------ the protocol it is bound to
    def bind(self, protocol: ReportOwner) -> "ReportFormat":
        """This format, bound to ``protocol`` (whose extra checks, statistic and config it uses)."""
        bound = copy.copy(self)
        bound._protocol = protocol
        return bound

    @property
    def protocol(self) -> ReportOwner:
        if self._protocol is None:
            raise InvalidParameterError(f"{self!r} is not bound to a protocol: use protocol.report_format.")
        return self._protocol

    @property
    def _owner(self) -> str:
        return self._protocol.display_name if self._protocol is not None else type(self).__name__

    # ------------------------------------------------------------------ rows
    def read(self, reports: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The kind's own checks: the batch as an array of the format and, by reason, the masks of its invalid rows.

        Raises :class:`~dpdist.errors.MalformedReportError` when the batch as a
        whole cannot be read (wrong type, number of dimensions, width or dtype).
        """
        self.dtype  # noqa: B018  (raises: an undeclared format reads nothing)
        raise NotImplementedError  # pragma: no cover - every kind overrides read

    def check(self, reports: Any) -> tuple[Any, dict[str, np.ndarray]]:
        """Read a batch: the batch in the protocol's format and, by reason, a mask of its invalid rows
        (:meth:`read`, then the protocol's own checks).

        Raises :class:`~dpdist.errors.MalformedReportError` when the batch as a
        whole cannot be read (wrong type, number of dimensions, width or dtype).
        """
        reports, invalid = self.read(reports)
        return reports, self.protocol._check_reports(reports, invalid)

    def count(self, reports: Any) -> int:
        """Number of reports (rows) in a batch."""
        return int(self.protocol._count_reports(reports))

    def select(self, reports: Any, keep: np.ndarray) -> Any:
        """The reports at the rows where the boolean mask ``keep`` is true."""
        return self.protocol._select_reports(reports, keep)

    def statistic(self, reports: Any) -> np.ndarray:
        """The sufficient statistic of a batch of *valid* reports (shape ``(statistic_size,)``).

        The reports are not checked: pass ``ReportBatch.reports`` or rows that
        :meth:`check` did not flag.  Summing it over batches gives the
        aggregator's statistic.
        """
        return self.protocol._accumulate(reports)

    def empty(self, n: int = 0) -> np.ndarray:
        """``n`` zero rows of the format (placeholders; not necessarily valid reports)."""
        return np.zeros((n, *self.row_shape), dtype=self.dtype)

    def fit(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Plain reports of another numeric dtype as this format's dtype, and the mask of rows that do not fit."""
        if self.dtype.names is not None:
            raise MalformedReportError(f"{self._owner} reports are structured ({self.dtype}); got dtype {values.dtype}.")
        cast, bad = fit_values(values, self.dtype)
        return cast, np.asarray(bad.reshape(bad.shape[0], int(np.prod(bad.shape[1:], dtype=np.int64))).any(axis=1))

    # ------------------------------------------------------------------ JSON rows
    def to_json_rows(self, reports: Any) -> list:
        """Reports as the rows of a JSON batch (``ndarray.tolist()``; structured rows as ``{field: value}``)."""
        return json_rows(reports)

    def from_json_rows(
        self, rows: list, *, booleans: bool = True, max_checked_rows: int | None = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """JSON rows as an array of the format, and the masks of the rows that could not be read.

        Rows of the wrong shape are ``wrong_shape``, nulls ``missing``, non-integers
        and unrepresentable integers ``out_of_range``; the rest is left to
        :meth:`validate`.  ``booleans=False`` says the rows hold no JSON booleans
        (which NumPy would read as 0 and 1): well-formed rows are then read in one
        vectorized conversion.  At most ``max_checked_rows`` rows are classified one
        by one (:class:`~dpdist.local._json_rows.TooManyRowsToCheck` otherwise).
        """
        return rows_from_json(self, rows, booleans=booleans, max_checked_rows=max_checked_rows)

    def json_values_per_row(self) -> int:
        """JSON values and separators one well-formed row can hold, at most (bounds a body before parsing)."""
        return sum(int(np.prod(shape, dtype=np.int64)) + 1 for _, _, shape in self.value_columns()) + (
            1 if self.dtype.names is not None else 0
        )

    # ------------------------------------------------------------------ batches
    def validate(self, reports: Any, *, invalid: dict[str, np.ndarray] | None = None, on_invalid: str = "count") -> ReportBatch:
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
        invalid = invalid or {}
        reasons = [*invalid.items()]
        if invalid:  # rows found bad while decoding are not counted again under the protocol's reasons
            decoded_bad = np.zeros(n, dtype=bool)
            for mask in invalid.values():
                decoded_bad |= mask
            reasons += [(reason, mask & ~decoded_bad) for reason, mask in protocol_invalid.items()]
        else:
            reasons += protocol_invalid.items()
        rejected: dict[str, int] = {}
        bad = None  # made at the first invalid row (most batches have none)
        for reason, mask in reasons:  # one reason per row: the first that flags it (the kind's before the protocol's)
            if bad is not None:
                mask = mask & ~bad
            number = int(np.count_nonzero(mask))
            if number:
                rejected[reason] = rejected.get(reason, 0) + number
                if bad is None:
                    bad = np.zeros(n, dtype=bool)
                bad |= mask
        n_bad = 0 if bad is None else int(np.count_nonzero(bad))
        first = int(np.argmax(bad)) if bad is not None and n_bad else None
        if n_bad and on_invalid == "raise":
            raise MalformedReportError(
                f"{self.protocol.display_name} reports: {n_bad} invalid report(s) ({rejected}); "
                f"the first is at row {first}."
            )
        if bad is not None and n_bad:
            reports = self.select(reports, ~bad)
        return ReportBatch(reports, self.protocol.config(), rejected, n, n_bad, first)

    def rejected(self, n: int, reason: str) -> ReportBatch:
        """A batch whose ``n`` rows are all rejected for ``reason`` (e.g. written under another config)."""
        n = int(n)
        return ReportBatch(self.empty(0), self.protocol.config(), {reason: n} if n else {}, n, n, 0 if n else None)
