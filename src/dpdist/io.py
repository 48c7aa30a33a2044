"""Report files and durable aggregator state for deployments.

The one public entry to files: client side, batches of reports are written to Parquet or to a compact binary
record stream, both embedding the protocol config (``write_reports`` in a
uniformly random order; a stream of batches through ``ReportShuffler`` first); server side they are read
back batch by batch, every row validated (rows of the wrong shape, out of
range or from another config are rejected and counted by reason, the valid
rows are kept), and added to an aggregator whose state is saved atomically
(:func:`save_state`, :func:`load_state`).  A device's privacy ledger is kept in a file
the same way (:func:`open_ledger`).  Nothing below this layer writes a file.

>>> from dpdist import io, local
>>> proto = local.make("oue", epsilon=1.0, domain_size=64)
>>> io.write_reports("reports.parquet", proto, proto.privatize([1, 2, 3], rng=0))  # doctest: +SKIP
>>> batch = io.read_reports("reports.parquet", proto)                              # doctest: +SKIP
>>> agg = proto.aggregator().add_batch(batch); io.save_state("state.bin", agg)   # doctest: +SKIP
>>> io.load_state("state.bin", proto).aggregator == agg                           # doctest: +SKIP
True
"""

from ._io._arrow import reports_from_arrow, reports_to_arrow
from ._io._binary import decode_record, encode_record
from ._io._files import ReportWriter, count_reports, iter_report_batches, protocol_of_file, read_reports, write_reports
from ._io._dedupe import file_identities
from ._io._identity import file_fingerprint, new_file_id
from ._io._ledger_file import open_ledger, read_ledger, save_ledger
from ._io._shuffle import ReportShuffler
from ._io._state import SavedState, journal_path, load_state, record_ingested, save_state
from .local import LocalProtocol, ReportBatch, ReportFormat

#: the old name of :class:`dpdist.local.ReportFormat` (``protocol.report_format``)
ReportLayout = ReportFormat


def report_layout(protocol: LocalProtocol) -> ReportFormat:
    """``protocol.report_format`` (dtype, row shape, validate, select, count), the old way to get it."""
    return protocol.report_format


__all__ = [
    "ReportBatch",
    "ReportLayout",
    "ReportWriter",
    "ReportShuffler",
    "SavedState",
    "report_layout",
    "encode_record",
    "decode_record",
    "reports_to_arrow",
    "reports_from_arrow",
    "write_reports",
    "read_reports",
    "iter_report_batches",
    "count_reports",
    "protocol_of_file",
    "save_state",
    "load_state",
    "record_ingested",
    "journal_path",
    "open_ledger",
    "read_ledger",
    "save_ledger",
    "file_fingerprint",
    "file_identities",
    "new_file_id",
]
