"""Report files: write batches (streaming, atomic) and read them back batch by batch.

Two formats, chosen by the file name when writing and by the leading bytes
when reading: Parquet (``.parquet``/``.pq``, see :mod:`._arrow`) and the dpdist
binary record stream (any other name, see :mod:`._binary`).
"""

from __future__ import annotations

import contextlib
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Collection, Iterator

import numpy as np

from .._rng import check_rng
from .._types import ArrayLike, PathLike, Seed
from ..errors import InvalidParameterError, MalformedReportError
from .._validation import Boolean, Optional, Options, validate_params
from ..local import ReportBatch
from ._arrow import (
    arrow_to_array,
    config_of_schema,
    file_id_of_schema,
    reports_to_arrow,
)
from ._atomic import atomic_writer
from ._pyarrow import require_pyarrow
from ._binary import (
    RECORD_MAGIC,
    _checked_for_writing,
    _protocol_of,
    encode_record,
    iter_headers,
    iter_records,
)
from ._identity import check_file_id, new_file_id

if TYPE_CHECKING:
    from ..local import LocalProtocol

__all__ = ["ReportWriter", "write_reports", "iter_report_batches", "read_reports", "count_reports", "file_format", "protocol_of_file",
           "FileSummary", "summarize_file", "LEADING_BYTES", "may_start_report_file"]

_PARQUET_MAGIC = b"PAR1"
#: the leading bytes that tell a report file's format (:func:`file_format`)
LEADING_BYTES = len(RECORD_MAGIC)
_PARQUET_SUFFIXES = (".parquet", ".pq")
ROW_GROUP_ROWS = 1 << 20
ROW_GROUP_BYTES = 32 << 20  # a reader holds about one row group: this bounds its memory


#: the format a report file is written in (None: from its suffix)
_FORMAT = Optional(Options(("parquet", "binary")))


def _format_for_writing(path: Path, format: str | None) -> str:
    if format is None:
        return "parquet" if path.suffix.lower() in _PARQUET_SUFFIXES else "binary"
    return format


def file_format(path) -> str:
    """``"parquet"`` or ``"binary"``, from the file's leading bytes."""

    try:
        with open(path, "rb") as handle:
            head = handle.read(LEADING_BYTES)
    except OSError as error:
        raise InvalidParameterError(f"The report file {str(path)!r} cannot be read ({error.strerror}).") from None
    if head.startswith(_PARQUET_MAGIC):
        return "parquet"
    if head == RECORD_MAGIC or not head:
        return "binary"
    raise MalformedReportError(f"{str(path)!r} is neither a Parquet file nor a dpdist report file (its first bytes are "
                               "not shown: they may be data, such as a CSV file given where reports belong).")


def may_start_report_file(head: bytes) -> bool:
    """Whether ``head``, a file's first bytes (however few have arrived), may start a report file :func:`file_format`
    reads: Parquet's magic or a dpdist report file's, or the beginning of either (an export checked as it arrives)."""
    head = head[:LEADING_BYTES]
    return (head.startswith(_PARQUET_MAGIC) or _PARQUET_MAGIC.startswith(head)
            or RECORD_MAGIC.startswith(head))


class ReportWriter:
    """Stream batches of reports into one file, published atomically on :meth:`close`.

    Use as a context manager; if the block raises, the destination is left untouched.
    Rows are written in the order given: to write reports made from values whose
    order may say something about them (sorted, grouped, in time order), pass them
    through :class:`~dpdist.io.ReportShuffler` first, as ``dpdist privatize`` does
    (:func:`write_reports` shuffles its one batch itself).

    >>> with ReportWriter("reports.parquet", protocol) as writer:   # doctest: +SKIP
    ...     for chunk in chunks:
    ...         writer.write(protocol.privatize(chunk))
    """

    @validate_params({"format": _FORMAT})
    def __init__(self, path: PathLike, protocol: LocalProtocol, *, format: str | None = None, file_id: str | None = None):
        self.path = Path(path)
        self.protocol = protocol
        self.format = _format_for_writing(self.path, format)
        self.file_id = new_file_id() if file_id is None else check_file_id(file_id, "ReportWriter")
        self.n_written = 0
        self._context: contextlib.AbstractContextManager[IO[bytes]] | None = None  # the atomic write, while open
        self._parquet: Any = None  # pyarrow.parquet.ParquetWriter, from the first row group on
        self._pending: list = []
        self._pending_rows = 0
        self._reports_crc32 = 0  # CRC-32 of every written report's canonical bytes (Parquet footer)
        layout = protocol.report_format
        row_bytes = layout.dtype.itemsize * int(np.prod(layout.row_shape, dtype=np.int64))
        self._row_group_rows = max(1024, min(ROW_GROUP_ROWS, ROW_GROUP_BYTES // row_bytes))

    def __enter__(self) -> ReportWriter:
        self._context = atomic_writer(self.path)
        self._handle = self._context.__enter__()
        if self.format == "parquet":
            require_pyarrow()
        return self

    def write(self, reports: ArrayLike) -> None:
        """Append a batch (validated: every report must be valid)."""
        if self.format == "binary":
            reports = np.asarray(reports)
            for start in range(0, max(1, reports.shape[0]), self._row_group_rows):  # bounded records
                self._handle.write(
                    encode_record(self.protocol, reports[start : start + self._row_group_rows], self.file_id)
                )
            self.n_written += int(reports.shape[0])
            return

        table = reports_to_arrow(self.protocol, reports, self.file_id)
        self._reports_crc32 = reports_checksum(self.protocol, reports, self._reports_crc32)
        self._pending.append(table)
        self._pending_rows += table.num_rows
        self.n_written += table.num_rows
        if self._pending_rows >= self._row_group_rows:
            self._flush_parquet()

    def _flush_parquet(self) -> None:
        """Write the buffered tables as one row group (large row groups keep Parquet's overhead small)."""
        import pyarrow as pa  # lazy: optional extra (pyarrow)
        import pyarrow.parquet as pq  # lazy: optional extra (pyarrow)


        if not self._pending:  # no batch: an empty table still carries the schema and config
            self._pending = [reports_to_arrow(self.protocol, self.protocol.report_format.empty(0), self.file_id)]
        table = pa.concat_tables(self._pending)
        self._pending, self._pending_rows = [], 0
        if self._parquet is None:
            # dictionary/RLE suits small integer reports; bit-packed bytes only gain from zstd
            scalar_columns = [f.name for f in table.schema if not pa.types.is_fixed_size_binary(f.type)]
            self._parquet = pq.ParquetWriter(
                self._handle,
                table.schema,
                compression="zstd",
                use_dictionary=scalar_columns,  # pyright: ignore[reportArgumentType]  (pyarrow takes column names too; its stubs say bool)
                write_page_checksum=True,  # readers verify every page's CRC-32
            )
        self._parquet.write_table(table, row_group_size=self._row_group_rows)

    def __exit__(self, kind, value, traceback):
        if self.format == "parquet" and value is None:
            if self._pending or self._parquet is None:
                self._flush_parquet()
            writer: Any = self._parquet  # made by the flush
            writer.add_key_value_metadata(
                {"dpdist.reports_crc32": str(self._reports_crc32), "dpdist.reports_rows": str(self.n_written)}
            )
            writer.close()
        elif self._parquet is not None:  # failed run: close the writer before its temp file is removed
            with contextlib.suppress(Exception):
                self._parquet.close()
        assert self._context is not None, "ReportWriter is used as a context manager"
        return self._context.__exit__(kind, value, traceback)


@validate_params({"format": _FORMAT, "shuffle": Boolean()})
def write_reports(path: PathLike, protocol: LocalProtocol, reports: ArrayLike, *, format: str | None = None,
                  file_id: str | None = None, shuffle: bool = True, rng: Seed = None) -> None:
    """Write one batch of reports to ``path`` (Parquet for ``.parquet``/``.pq``, else dpdist binary).

    The reports are validated first (all must be valid); the file embeds the
    protocol config and a random file id (or ``file_id``), and is replaced atomically.

    Parameters
    ----------
    shuffle : bool
        Write the reports in a uniformly random order (default), so that a report's
        position in the file says nothing about the position of its value (the
        reports of ``protocol.privatize(values)`` are in the order of ``values``,
        which may be sorted). ``False`` writes them in the order given.
    rng : None, int, SeedSequence or Generator
        The order's randomness: ``None`` (default) is the CSPRNG; a seed only for
        reproducible research files (see :func:`dpdist._rng.check_rng`).
    """
    if shuffle:
        order = check_rng(rng, owner="write_reports")
        reports = _checked_for_writing(protocol, reports)  # first: an invalid row is named by its given position
        reports = reports[order.permutation(len(reports))]
    with ReportWriter(path, protocol, format=format, file_id=file_id) as writer:
        writer.write(reports)


def iter_report_batches(
    path: PathLike, protocol: LocalProtocol | None = None, *, batch_rows: int = 1 << 18, skip_file_ids: Collection[str] = frozenset()
) -> Iterator[ReportBatch]:
    """Read a report file batch by batch (bounded memory), validating each batch.

    Parameters
    ----------
    path : str or Path
    protocol : LocalProtocol, optional
        Check the reports against this protocol (rows written under another
        config are rejected as ``"other_config"``); ``None`` uses the file's config.
    batch_rows : int
        Rows per batch for Parquet files (binary files yield their records).
    skip_file_ids : set of str
        File ids (32 hex digits) whose records are passed over: a binary file made
        by concatenating files carries each one's id in its records.  A Parquet
        file carries one id; pass it here and the file yields nothing.
    """
    source = str(path)
    if file_format(path) == "binary":
        with open(path, "rb") as handle:
            yield from iter_records(handle, protocol, source, skip_file_ids=skip_file_ids)
        return
    if skip_file_ids and _parquet_file_id(path) in skip_file_ids:
        return
    yield from _iter_parquet_batches(path, protocol, batch_rows, source)


def _parquet_file_id(path) -> str | None:
    require_pyarrow()
    import pyarrow.parquet as pq  # lazy: optional extra (pyarrow)

    return file_id_of_schema(_parquet_call(pq.read_schema, path), str(path))


def _iter_parquet_batches(path, protocol, batch_rows: int, source: str) -> Iterator[ReportBatch]:
    """Parquet batches, with every page CRC verified and the footer's reports checksum checked at the end.

    Any failure of pyarrow on a damaged file becomes :class:`MalformedReportError`.
    """

    pa = require_pyarrow()
    import pyarrow.parquet as pq  # lazy: optional extra (pyarrow)

    try:
        # no pre-buffering (it reads ahead over the whole file) and one thread: memory stays at about
        # one row group (ReportWriter bounds them to ROW_GROUP_BYTES); parallelism comes from Dask
        parquet = pq.ParquetFile(path, pre_buffer=False, page_checksum_verification=True)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise MalformedReportError(f"{source}: unreadable Parquet file ({error}).") from None
    with parquet:
        schema = parquet.schema_arrow
        config = config_of_schema(schema, source)
        if protocol is None:
            if config is None:
                raise MalformedReportError(f"{source}: no dpdist config in the Parquet metadata; pass the protocol.")
            protocol = _protocol_of(config, source)
        footer = parquet.metadata.metadata or {}
        expected = footer.get(b"dpdist.reports_crc32")
        checked = expected is not None and config == protocol.config()
        crc, rows = 0, 0
        batches = parquet.iter_batches(batch_size=batch_rows, use_threads=False)
        while True:
            try:
                record_batch = next(batches, None)
                if record_batch is None:
                    break
                table = pa.Table.from_batches([record_batch]).replace_schema_metadata(schema.metadata)
                if config is not None and config != protocol.config():
                    yield protocol.report_format.rejected(table.num_rows, "other_config", protocol.config())
                    continue
                array, invalid = arrow_to_array(table, protocol, source)
            except (pa.ArrowException, OSError, ValueError, IndexError, TypeError) as error:
                if isinstance(error, MalformedReportError):
                    raise
                raise MalformedReportError(f"{source}: corrupted or unreadable Parquet data ({error}).") from None
            if checked:
                crc = reports_checksum(protocol, array, crc, validate=False)
                rows += table.num_rows
            yield protocol.validate_reports(array, invalid=invalid)
        if checked and (str(crc).encode() != expected or str(rows).encode() != footer.get(b"dpdist.reports_rows")):
            raise MalformedReportError(
                f"{source}: the reports do not match the file's checksum (the file is corrupted)."
            )


def reports_checksum(protocol, reports, crc: int = 0, *, validate: bool = True) -> int:
    """Running CRC-32 of reports in the protocol's canonical layout (C order, the layout's dtype)."""

    if validate:
        reports = _checked_for_writing(protocol, reports)
    array = np.ascontiguousarray(reports, dtype=protocol.report_format.dtype)
    return zlib.crc32(array.tobytes(), crc)


def read_reports(path: PathLike, protocol: LocalProtocol | None = None) -> ReportBatch:
    """The whole file as one :class:`ReportBatch` (valid reports concatenated, rejections summed)."""
    protocol = protocol if protocol is not None else protocol_of_file(path)
    return ReportBatch.concatenate(iter_report_batches(path, protocol), protocol.report_format, protocol.config())


@dataclass(frozen=True)
class FileSummary:
    """What a report file says about itself, read in one pass over its record headers (binary) or its
    Parquet footer; no report is read.  :func:`summarize_file` makes one.

    Attributes
    ----------
    path : str
    format : {"binary", "parquet"}
    record_ids : tuple of (str or None)
        The file id of each binary record, in order (one entry for a Parquet file); ``None`` for
        a record written before file ids.
    record_rows : tuple of int
        The reports of each record (of the Parquet file).
    """

    path: str
    format: str
    record_ids: tuple[str | None, ...]
    record_rows: tuple[int, ...]
    first_config: dict | None = None
    parquet_schema: Any = None

    @property
    def rows(self) -> int:
        """All the file's reports."""
        return sum(self.record_rows)

    def rows_except(self, skip_file_ids: Collection[str] = frozenset()) -> int:
        """The reports of the records whose file id is not in ``skip_file_ids``."""
        return sum(rows for file_id, rows in zip(self.record_ids, self.record_rows) if file_id not in skip_file_ids)

    def config(self) -> dict | None:
        """The embedded config (the first record's, or the Parquet metadata's); ``None`` if there is none."""
        if self.format == "binary":
            return self.first_config

        return config_of_schema(self.parquet_schema, self.path)

    def protocol(self) -> LocalProtocol:
        """The protocol whose config the file embeds."""

        config = self.config()
        if config is None:
            where = "empty report file, so no config" if self.format == "binary" else "no dpdist config in the Parquet metadata"
            raise MalformedReportError(f"{self.path}: {where}; pass the protocol.")
        return _protocol_of(config, self.path)


def summarize_file(path: PathLike) -> FileSummary:
    """Read a report file's record headers (binary) or footer (Parquet) once: ids, rows and config."""
    source = str(path)
    if file_format(path) == "binary":
        ids, rows, first_config = [], [], None
        with open(path, "rb") as handle:
            for header in iter_headers(handle, source):
                ids.append(header["file_id"])
                rows.append(header["shape"][0])
                first_config = header["config"] if first_config is None else first_config
        return FileSummary(source, "binary", tuple(ids), tuple(rows), first_config=first_config)

    require_pyarrow()
    import pyarrow.parquet as pq  # lazy: optional extra (pyarrow)

    def footer(name):
        with pq.ParquetFile(name) as parquet:
            return parquet.schema_arrow, parquet.metadata.num_rows

    schema, rows = _parquet_call(footer, path)
    return FileSummary(source, "parquet", (file_id_of_schema(schema, source),), (rows,), parquet_schema=schema)


def protocol_of_file(path: PathLike) -> LocalProtocol:
    """The protocol whose config a report file embeds (its first record, or the Parquet metadata)."""
    return summarize_file(path).protocol()


def count_reports(path: PathLike, *, skip_file_ids: Collection[str] = frozenset()) -> int:
    """Rows in a report file (but those of ``skip_file_ids``), from its metadata or record headers."""
    return summarize_file(path).rows_except(skip_file_ids)


def _parquet_call(function, path):
    """``function(path)``, with pyarrow's failures on a damaged file turned into :class:`MalformedReportError`."""
    import pyarrow as pa  # lazy: optional extra (pyarrow)

    try:
        return function(path)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise MalformedReportError(f"{str(path)}: unreadable Parquet file ({error}).") from None
