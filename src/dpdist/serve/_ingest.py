"""Read one HTTP batch body into validated reports of a campaign's protocol.

Two encodings:

``application/octet-stream``
    One or more dpdist binary report records (``src/dpdist/_io/_binary.py``,
    ``docs/deployment.md``): exactly what ``dpdist privatize`` writes and what
    ``dpdist.client`` and the JavaScript client send.  Each record is checked
    whole (magic, version, header, CRC-32 of the payload); records written under
    another config have all their rows rejected as ``other_config``.  A record's
    ``file_id``, when present, must equal the batch id: a report file uploaded
    as a batch keeps the no-file-twice rule of ``dpdist aggregate``.
``application/json``
    ``{"reports": [row, ...], "config": {...} (optional)}`` for small clients.
    A row is what ``ndarray.tolist()`` gives for one report of the protocol's
    layout (an integer; a list of integers; an object of fields for structured
    layouts).  Rows of the wrong shape are rejected as ``wrong_shape``, nulls as
    ``missing``, non-integers and unrepresentable integers as ``out_of_range``.

Rows are then checked with the protocol's own validator
(``protocol.report_format.validate``, the one ingest path): invalid rows are rejected and
counted by reason, the valid rows of the batch are kept.

The work a body may cost is bounded before it is done (413, with the reason):
at most ``limits.max_records`` binary records (each costs a JSON header and a
decode: 15 MiB of one-report records took 3.4 s of CPU), at most
``limits.max_json_rows`` JSON rows (checked on the count of separators before
the JSON is parsed, then exactly), and at most :data:`._limits.MAX_CHECKED_ROWS`
rows classified one by one in Python (rows with booleans, nulls or wrong
shapes; structured layouts).
"""

from __future__ import annotations

import io
import json

import numpy as np

from .._io._binary import decode_payload, read_header
from .. import _json
from ..errors import MalformedReportError
from ..local import ReportBatch
from ._refusals import InvalidRequest, TooLarge, UnsupportedMediaType

__all__ = ["decode_body", "record_file_ids"]


def decode_body(protocol, body: bytes, content_type: str, batch_id: str | None, limits=None) -> ReportBatch:
    """The validated batch of a request body (400 ``malformed_batch`` when it cannot be read at all).

    ``limits`` (a :class:`._limits.Limits`; default its defaults) bounds the records and rows (413).
    """
    from ._limits import MAX_CHECKED_ROWS, Limits

    limits = limits if limits is not None else Limits()
    kind = (content_type or "").split(";")[0].strip().lower()
    try:
        if kind in ("application/octet-stream", "application/vnd.dpdist.reports"):
            return _decode_binary(protocol, body, batch_id, limits.max_records)
        if kind == "application/json":
            return _decode_json(protocol, body, limits.max_json_rows, MAX_CHECKED_ROWS)
    except MalformedReportError as error:
        raise InvalidRequest("malformed_batch", str(error)) from None
    raise UnsupportedMediaType(
        "unsupported_media_type",
        f"A batch must be sent as application/octet-stream (dpdist report records) or application/json. Got {content_type!r}.",
    )


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


def _decode_binary(protocol, body: bytes, batch_id: str | None, max_records: int | None = None) -> ReportBatch:
    stream = io.BytesIO(body)
    batches = []
    while (header := read_header(stream, "batch")) is not None:
        _check_records(len(batches) + 1, max_records)
        if batch_id is not None and header["file_id"] is not None and header["file_id"] != batch_id:
            raise InvalidRequest(
                "batch_id_mismatch",
                f"A record of the batch carries file id {header['file_id']!r}, not the batch id {batch_id!r}; "
                "a report file is uploaded under its own file id.",
            )
        batches.append(decode_payload(protocol, header, stream.read(header["payload_bytes"]), "batch"))
    if not batches:
        raise MalformedReportError("batch: empty body, expected dpdist report records.")
    return _concatenate(protocol, batches)


def _concatenate(protocol, batches: list[ReportBatch]) -> ReportBatch:
    if len(batches) == 1:
        return batches[0]
    rejected: dict[str, int] = {}
    for batch in batches:
        for reason, count in batch.rejected.items():
            rejected[reason] = rejected.get(reason, 0) + count
    return ReportBatch(
        np.concatenate([batch.reports for batch in batches]),
        protocol.config(),
        rejected,
        sum(batch.n_read for batch in batches),
        sum(batch.n_rejected_rows for batch in batches),
    )


def _values_per_row(protocol) -> int:
    """JSON values and separators one well-formed row of the protocol's layout can hold, at most."""
    layout = protocol.report_format
    if not layout.dtype.names:
        return int(np.prod(layout.row_shape, dtype=np.int64)) + 1
    total = 1
    for name in layout.dtype.names:
        _, shape = _field_layout(layout.dtype.fields[name][0])
        total += int(np.prod(shape, dtype=np.int64)) + 1
    return total


def _too_many_rows(limit: int, what: str) -> TooLarge:
    return TooLarge(
        "too_many_rows",
        f"A JSON batch holds at most {limit} {what}; send fewer rows per batch, or send binary report records "
        "(application/octet-stream).",
    )


def _decode_json(protocol, body: bytes, max_rows: int | None = None, max_checked_rows: int | None = None) -> ReportBatch:
    if max_rows is not None:
        # every row adds at least one separator: far more separators than max_rows rows can hold is refused unparsed
        separators = max_rows * _values_per_row(protocol) + json.dumps(protocol.config()).count(",") + 64
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
    if "config" in document and document["config"] != protocol.config():
        return protocol.report_format.rejected(len(rows), "other_config")
    layout = protocol.report_format
    if layout.dtype.names:
        if max_checked_rows is not None and len(rows) > max_checked_rows:
            raise _too_many_rows(max_checked_rows, f"rows of {protocol.name}'s structured reports (each checked on its own)")
        array, invalid = _structured_rows(rows, layout)
    else:
        # JSON true/false become 1/0 in a NumPy integer array: a body holding either is classified row by row
        array, invalid = _plain_rows(rows, layout, fast=b"true" not in body and b"false" not in body, max_slow=max_checked_rows)
    return protocol.report_format.validate(array, invalid=invalid)


def _plain_rows(rows: list, layout, fast: bool = True, max_slow: int | None = None):
    """Rows of integers (scalars or nested lists): one vectorized conversion when every row is well formed.

    ``fast=False`` skips the vectorized conversion (the caller knows the rows may hold
    booleans, which NumPy would silently count as 0 and 1): every row is classified.
    A batch that needs classifying row by row is refused (413) above ``max_slow`` rows.
    """
    n = len(rows)
    info = np.iinfo(layout.dtype)
    try:
        wide = np.array(rows, dtype=object if n == 0 else None) if fast else None
    except (ValueError, TypeError):
        wide = None
    if wide is not None and n and wide.dtype.kind in "iu" and wide.shape[1:] == layout.row_shape:
        bad = ((wide < info.min) | (wide > info.max)).reshape(n, -1).any(axis=1)
        array = np.where(bad.reshape((n,) + (1,) * len(layout.row_shape)), 0, wide).astype(layout.dtype)
        return array, {"out_of_range": bad}
    if max_slow is not None and n > max_slow:
        raise _too_many_rows(
            max_slow, "rows that need checking one by one (rows with booleans, nulls, non-integers or another shape)"
        )
    # slow path, only for batches with malformed rows: classify each row
    array = layout.empty(n)
    masks = {reason: np.zeros(n, dtype=bool) for reason in ("missing", "wrong_shape", "out_of_range")}
    for index, row in enumerate(rows):
        reason = _row_problem(row, layout.row_shape, info)
        if reason is None:
            array[index] = row
        else:
            masks[reason][index] = True
    return array, masks


def _row_problem(row, row_shape: tuple, info) -> str | None:
    if row is None:
        return "missing"
    if not row_shape:
        if isinstance(row, list):
            return "wrong_shape"
        if isinstance(row, bool) or not isinstance(row, int):
            return "out_of_range"
        return None if info.min <= row <= info.max else "out_of_range"
    if not isinstance(row, list) or len(row) != row_shape[0]:
        return "wrong_shape"
    problems = [_row_problem(item, row_shape[1:], info) for item in row]
    for reason in ("missing", "wrong_shape", "out_of_range"):
        if reason in problems:
            return reason
    return None


def _structured_rows(rows: list, layout):
    """Rows of objects ``{field: value}`` for structured layouts (hierarchies, HaarHRR)."""
    n = len(rows)
    array = layout.empty(n)
    masks = {reason: np.zeros(n, dtype=bool) for reason in ("missing", "wrong_shape", "out_of_range")}
    names = layout.dtype.names
    for index, row in enumerate(rows):
        if row is None:
            masks["missing"][index] = True
            continue
        if not isinstance(row, dict) or set(row) != set(names):
            masks["wrong_shape"][index] = True
            continue
        problem = None
        for name in names:
            base, shape = _field_layout(layout.dtype.fields[name][0])
            problem = _row_problem(row[name], shape, np.iinfo(base))
            if problem:
                break
        if problem:
            masks[problem][index] = True
        else:
            array[index] = tuple(row[name] for name in names)
    return array, masks


def _field_layout(field_dtype: np.dtype):
    """Base integer dtype and shape of one field of a structured layout."""
    if field_dtype.subdtype is not None:
        return field_dtype.subdtype[0], field_dtype.subdtype[1]
    return field_dtype, ()
