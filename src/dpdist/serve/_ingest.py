"""Read one HTTP batch body into validated reports of a campaign's protocol.

Two encodings:

``application/octet-stream``
    One or more dpdist binary report records (``src/dpdist/_io/_binary.py``,
    ``docs/how-to/run-a-campaign.md``): exactly what ``dpdist privatize`` writes and what
    ``dpdist.client`` and the JavaScript client send.  Each record is checked
    whole (magic, version, header, CRC-32 of the payload); records written under
    another config have all their rows rejected as ``other_config``.  A record's
    ``file_id``, when present, must equal the batch id: a report file uploaded
    as a batch keeps the no-file-twice rule of ``dpdist aggregate``.
``application/json``
    ``{"reports": [row, ...], "config": {...} (optional)}`` for small clients.
    A row is what ``ndarray.tolist()`` gives for one report of the protocol's
    format (an integer; a list of integers; an object of fields for structured
    formats), read by the format (``report_format.from_json_rows``): rows of the
    wrong shape are rejected as ``wrong_shape``, nulls as ``missing``,
    non-integers and unrepresentable integers as ``out_of_range``.

Rows are then checked with the protocol's own validator
(``protocol.validate_reports``, the one ingest path): invalid rows are rejected and
counted by reason, the valid rows of the batch are kept.

The work a body may cost is bounded before it is done (413, with the reason):
at most ``limits.max_records`` binary records (each costs a JSON header and a
decode: 15 MiB of one-report records took 3.4 s of CPU), at most
``limits.max_json_rows`` JSON rows (checked on the count of separators before
the JSON is parsed, then exactly), at most :data:`._limits.MAX_CHECKED_ROWS`
rows classified one by one in Python (rows with booleans, nulls or wrong
shapes; structured layouts), and at most :func:`max_batch_reports` reports, so
that counting them costs at most ``limits.max_batch_work`` element operations
(checked on the records' headers, before a payload is read).
"""

from __future__ import annotations

import io

from .._io._binary import _config_of, config_separators, decode_payload, read_header
from .._wire._report_bound import reports_within
from .. import _json
from ..errors import MalformedReportError
from ..local import ReportBatch
from ..local._json_rows import TooManyRowsToCheck
from ._limits import MAX_CHECKED_ROWS, Limits
from .._guard._refusals import InvalidRequest, TooLarge, UnsupportedMediaType

__all__ = ["decode_body", "max_batch_reports", "record_file_ids", "media_type", "DECODED_KINDS", "BINARY_KINDS"]


def decode_body(protocol, body: bytes, content_type: str, batch_id: str | None, limits=None) -> ReportBatch:
    """The validated batch of a request body (400 ``malformed_batch`` when it cannot be read at all).

    ``limits`` (a :class:`._limits.Limits`; default its defaults) bounds the records and rows (413).
    """
    limits = limits if limits is not None else _DEFAULT_LIMITS
    kind = media_type(content_type)
    try:
        if kind in BINARY_KINDS:
            return _decode_binary(protocol, body, batch_id, limits.max_records, max_batch_reports(protocol, limits))
        if kind == "application/json":
            return _decode_json(protocol, body, limits.max_json_rows, MAX_CHECKED_ROWS, max_batch_reports(protocol, limits))
    except MalformedReportError as error:
        raise InvalidRequest("malformed_batch", str(error)) from None
    raise UnsupportedMediaType(
        "unsupported_media_type",
        f"A batch must be sent as application/octet-stream (dpdist report records) or application/json. Got {content_type!r}.",
    )


_DEFAULT_LIMITS = Limits()
#: the media types of binary report records
BINARY_KINDS = ("application/octet-stream", "application/vnd.dpdist.reports")
#: the media types of the bodies :func:`decode_body` reads (any other: 415)
DECODED_KINDS = frozenset({*BINARY_KINDS, "application/json"})


def max_batch_reports(protocol, limits=None) -> int:
    """The most reports one batch of ``protocol`` may hold under ``limits.max_batch_work`` (default its default:
    :func:`dpdist._wire._report_bound.reports_within`).  The campaign's config answer states it."""
    limits = limits if limits is not None else _DEFAULT_LIMITS
    return reports_within(protocol, limits.max_batch_work)


def _too_many_reports(limit: int, protocol) -> TooLarge:
    return TooLarge(
        "too_many_rows",
        f"A batch of this campaign holds at most {limit} reports: counting one {protocol.name} report costs the "
        f"collector {protocol.aggregation_work} operations, a batch at most --max-batch-work of them. Send fewer "
        "reports per batch (the campaign's config answer says how many: max_batch_reports).",
    )


def media_type(content_type: str | None) -> str:
    """The media type of a ``Content-Type`` header's value, lower-case, without its parameters."""
    return (content_type or "").split(";")[0].strip().lower()


def record_file_ids(body: bytes, max_records: int | None = None) -> list[str | None]:
    """The ``file_id`` of every record of a binary body (``None`` for records without one)."""
    stream = io.BytesIO(body)
    ids = []
    try:
        while (header := read_header(stream, "batch")) is not None:
            ids.append(header["file_id"])
            _check_records(len(ids), max_records)
            stream.seek(header["payload_bytes"], 1)
    except MalformedReportError as error:
        raise InvalidRequest("malformed_batch", str(error)) from None
    return ids


def _check_records(count: int, max_records: int | None) -> None:
    if max_records is not None and count > max_records:
        raise TooLarge(
            "too_many_records",
            f"A batch holds at most {max_records} report records (--max-records); this one holds more. Send the "
            "reports as one record per batch (io.encode_record of all of them), or in several batches.",
        )


def _decode_binary(protocol, body: bytes, batch_id: str | None, max_records: int | None = None,
                   max_reports: int | None = None) -> ReportBatch:
    stream = io.BytesIO(body)
    batches: list[ReportBatch] = []
    reports = 0
    while (header := read_header(stream, "batch")) is not None:
        _check_records(len(batches) + 1, max_records)
        reports += header["shape"][0]
        if max_reports is not None and reports > max_reports:
            raise _too_many_reports(max_reports, protocol)
        if batch_id is not None and header["file_id"] is not None and header["file_id"] != batch_id:
            raise InvalidRequest(
                "batch_id_mismatch",
                f"A record of the batch carries file id {header['file_id']!r}, not the batch id {batch_id!r}; "
                "a report file is uploaded under its own file id.",
            )
        batches.append(decode_payload(protocol, header, stream.read(header["payload_bytes"]), "batch"))
    if not batches:
        raise MalformedReportError("batch: empty body, expected dpdist report records.")
    if len(batches) == 1:  # decode_payload's batch is of the protocol's config: what concatenate returns for one
        return batches[0]
    return ReportBatch.concatenate(batches, protocol.report_format, protocol.config())


def _too_many_rows(limit: int, what: str) -> TooLarge:
    return TooLarge(
        "too_many_rows",
        f"A JSON batch holds at most {limit} {what}; send fewer rows per batch, or send binary report records "
        "(application/octet-stream).",
    )


def _decode_json(protocol, body: bytes, max_rows: int | None = None, max_checked_rows: int | None = None,
                 max_reports: int | None = None) -> ReportBatch:
    layout = protocol.report_format
    if max_rows is not None:
        # every row adds at least one separator: far more separators than max_rows rows can hold is refused unparsed
        separators = max_rows * layout.json_values_per_row() + config_separators(protocol) + 64
        if body.count(b",") > separators:
            raise _too_many_rows(max_rows, "rows (--max-json-rows)")
    try:
        document = _json.loads(body)
    except (UnicodeDecodeError, ValueError) as error:
        raise MalformedReportError(f"batch: not valid JSON ({error}).") from None
    if not isinstance(document, dict) or not isinstance(document.get("reports"), list):
        raise MalformedReportError('batch: a JSON batch must be an object {"reports": [...]}.')
    rows = document["reports"]
    if max_rows is not None and len(rows) > max_rows:
        raise _too_many_rows(max_rows, "rows (--max-json-rows)")
    if max_reports is not None and len(rows) > max_reports:
        raise _too_many_reports(max_reports, protocol)
    if "config" in document and document["config"] != _config_of(protocol):
        return layout.rejected(len(rows), "other_config", protocol.config())
    try:
        # JSON true/false become 1/0 in a NumPy integer array: a body holding either is read row by row
        array, invalid = layout.from_json_rows(
            rows, booleans=b"true" in body or b"false" in body, max_checked_rows=max_checked_rows
        )
    except TooManyRowsToCheck as error:
        raise _too_many_rows(error.limit, error.what) from None
    return protocol.validate_reports(array, invalid=invalid)
