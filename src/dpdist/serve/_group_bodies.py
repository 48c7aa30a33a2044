"""Small request bodies decoded by the committer thread, as part of their group, instead of on the event loop.

A device's one-report batch took the event loop about 30-40 us to decode and
validate in the request's path (12 us alone: the rest was the loop's caches
taken by the committer's work between requests).  So :meth:`._service.Service.submit`
hands a small body (at most :data:`._service.INLINE_BODY_BYTES`) to the group
commit undecoded, as an :class:`~._group.Arrival` whose ``pending`` is a
:class:`PendingBody`; the committer decodes every such body of its group one
after the other, with the same :func:`._ingest.decode_body` (the one path: the
same checks, limits and refusals), just before the group's transaction.

A body that cannot be decoded (400 ``malformed_batch``, ``batch_id_mismatch``,
413 ``too_many_records``, ``too_many_rows``) is a refusal counted under its
campaign's ``refused_batches``, as before: its place in the group becomes the
:class:`~._group.Refused` that counts it (once per batch id and reason), and its
caller gets the decoding's refusal once the group committed.  Anything else a
decode raises (a bug) is its caller's alone (500), never the group's.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import zlib

import numpy as np

from .._io._binary import _config_of as config_of
from .._io._record_headers import RecordHeaders
from ..errors import MalformedReportError
from ..local import ReportBatch
from ._alike_records import read_alike
from ._campaigns import BATCH_ID
from ._group import Arrival, Refused
from .._wire._report_bound import aggregate_work, reports_within
from ._ingest import BINARY_KINDS, decode_body, media_type
from .._guard._refusals import InvalidRequest, NotFound, Refusal

__all__ = ["PendingBody", "aggregate_work", "batch_work", "decode_pending", "is_binary", "read_records", "settle", "COUNTED"]

#: refusals of a whole batch counted under its campaign's ``refused_batches`` (besides every 400; as the service's)
COUNTED = frozenset({"malformed_batch", "batch_id_mismatch", "too_many_records", "too_many_rows"})


#: the record headers this process read (one per config and shape, in practice)
HEADERS = RecordHeaders()


@dataclass(slots=True)
class PendingBody:
    """An arrival's body still to decode: against ``protocol``, within ``limits`` (``keep_reports``: its valid reports
    are kept raw, in the protocol's wire layout)."""

    protocol: Any
    body: bytes
    content_type: str
    limits: Any
    keep_reports: bool = False


def decode_pending(items: list) -> tuple[list, list, dict[int, BaseException]]:
    """Decode the pending bodies of ``items`` (in place: each :class:`~._group.Arrival` gets its batch).

    Returns the items to commit (a refused body's :class:`~._group.Refused` in its place; a body whose decoding
    failed otherwise is left out), where each of ``items`` went among them (None: left out), and, by position in
    ``items``, what its caller gets instead of the commit's outcome (:func:`settle`).
    """
    together = _validated_together(items)
    committed: list = []
    places: list = []
    refused: dict[int, BaseException] = {}
    for index, item in enumerate(items):
        pending = getattr(item, "pending", None)
        if pending is not None:
            try:
                _fill(item, pending, together[index] if index in together else _decoded(item, pending))
            except Refusal as refusal:
                refused[index] = refusal
                if not (refusal.code in COUNTED or isinstance(refusal, InvalidRequest)):
                    places.append(None)
                    continue
                named = item.batch_id if BATCH_ID.fullmatch(item.batch_id) else None
                item = Refused(item.campaign_id, refusal.code, named)
            except Exception as error:  # noqa: BLE001 - a bug: its caller's 500 (logged where it is raised), not the group's
                refused[index] = error
                places.append(None)
                continue
        places.append(len(committed))
        committed.append(item)
    return committed, places, refused


def settle(outcomes: list, places: list, refused: dict[int, BaseException]) -> list:
    """The outcome of each item from the ``outcomes`` of the items committed: a refused body's refusal once its
    :class:`~._group.Refused` was committed (counted, or its campaign gone: the refusal all the same), the
    commit's otherwise."""
    settled = [None if place is None else outcomes[place] for place in places]
    for index, refusal in refused.items():
        if settled[index] is None or isinstance(settled[index], NotFound):
            settled[index] = refusal
    return settled


def batch_work(item) -> int:
    """What counting the reports of ``item`` (an :class:`~._group.Arrival` or a :class:`~._group.Refused`) costs the
    committer, at most, in element operations: its campaign's aggregate (:func:`aggregate_work`: a group builds and
    encodes one for each campaign it counts, 64 MB for GRR at d = 8*10^6) and its reports (for a body still to decode, as many as its bytes
    could hold, at most :func:`._ingest.max_batch_reports`: more is refused unread) x the protocol's
    ``aggregation_work``."""
    pending = getattr(item, "pending", None)
    if pending is None:
        return getattr(item, "work", 0)
    body = pending.body
    row_bytes, per_report, most, aggregate = _work_terms(pending.protocol, pending.limits.max_batch_work)
    content_type = pending.content_type  # (the committer asks this of every batch: a binary one's type not parsed)
    if content_type != "application/octet-stream" and media_type(content_type) == "application/json":
        rows = body.count(b",") + 1  # a row is one value at least, separated from the next by a comma
    else:
        rows = len(body) // row_bytes
    return aggregate + min(rows, most) * per_report


#: (protocol, max_batch_work) -> the protocol and :func:`_work_terms` (the committer asks them of every batch)
_TERMS: dict[tuple[int, int], tuple] = {}


def _work_terms(protocol, max_batch_work: int) -> tuple[int, int, int, int]:
    """A report's bytes, its ``aggregation_work``, the most reports a batch holds and :func:`aggregate_work`, computed
    once per protocol (about 10 us a batch otherwise, a quarter of the committer's work a one-report batch)."""
    key = (id(protocol), max_batch_work)
    known = _TERMS.get(key)
    if known is None or known[0] is not protocol:
        if len(_TERMS) > 256:
            _TERMS.clear()
        terms = (max(1, protocol.report_format.row_bytes), protocol.aggregation_work,
                 reports_within(protocol, max_batch_work), aggregate_work(protocol))
        known = _TERMS[key] = (protocol, terms)
    return known[1]


def _decoded(item: Arrival, pending: PendingBody) -> ReportBatch:
    """``item``'s body decoded and validated alone (:func:`._ingest.decode_body`: its refusal raised)."""
    return decode_body(pending.protocol, pending.body, pending.content_type, item.batch_id, pending.limits)


def _fill(item: Arrival, pending: PendingBody, batch: ReportBatch) -> None:
    """``item``'s batch, its counts and the raw reports kept."""
    item.pending = None  # the body is decoded once, whatever happens
    report_format = pending.protocol.report_format
    item.batch, item.accepted, item.n_read = batch, report_format.count(batch.reports), batch.n_read
    if pending.keep_reports:
        item.raw = np.ascontiguousarray(batch.reports, dtype=report_format.dtype).tobytes()


# ---------------------------------------------------------------------- one validation for a group's records
def _validated_together(items: list) -> dict[int, ReportBatch]:
    """The batches of the group's bodies that are one valid record each, found by validating the reports of all the
    bodies of one protocol at once (``ReportFormat.validate``, the one check of every report); by position.

    A body qualifies when :func:`._ingest.decode_body` would read it as one record and find nothing wrong before the
    protocol's check (its header known or read by :data:`HEADERS`; its file id the batch id; its CRC-32; the
    campaign's config, row shape and dtype).  When the reports of the bodies of one protocol are all valid, each
    body's batch is its rows of the result (what validating it alone gives: the checks are row by row); otherwise,
    and for every other body, each is decoded alone, as :func:`._ingest.decode_body` does, refusals included.
    """
    found: dict[int, list] = {}  # id(protocol) -> [what its bodies are checked against, [(index, header, payload)]]
    for index, item in enumerate(items):
        pending = getattr(item, "pending", None)
        if pending is None or not is_binary(pending):
            continue
        known = found.get(id(pending.protocol))
        if known is None:
            known = found[id(pending.protocol)] = [_against(pending.protocol, pending.limits.max_batch_work), []]
        known[1].append((index, item, pending.body))
    together: dict[int, ReportBatch] = {}
    for against, entries in found.values():
        together.update(_split(against[0], _read(entries, against)[0]))
    return together


def read_records(entries: list, protocol, max_batch_work: int) -> tuple[list, int]:
    """``entries``: ``(index, item, body)`` of binary bodies (:func:`is_binary`) of ``protocol`` under
    ``max_batch_work``.  Those that are one record passing every check before the protocol's, ``(index, reports,
    payload)`` (those alike read at once, :func:`._alike_records.read_alike`; the others each alone), and how many are
    not (each to be decoded alone: :func:`._ingest.decode_body` says why)."""
    return _read(entries, _against(protocol, max_batch_work))


def _read(entries: list, against: tuple) -> tuple[list, int]:
    records, left = read_alike(entries, functools.partial(_plain_record, against=against), memo=against)
    failed = 0
    for index, item, body in left:  # each on its own
        record = _plain_record(item, body, against)
        if record is None:
            failed += 1
        else:
            records.append((index, record[0]["shape"][0], record[1]))
    return records, failed


#: (protocol, max_batch_work) -> what a body of that protocol is checked against (:func:`_against`)
_AGAINST: dict[tuple[int, int], tuple] = {}


def _against(protocol, max_batch_work: int) -> tuple:
    """What :func:`_plain_record` checks a body of ``protocol`` against (the protocol, its dtype, row shape and config,
    the most reports a batch holds under ``max_batch_work``): one object per protocol and limit, so that the templates
    of :func:`._alike_records.read_alike` found in one group serve the next."""
    key = (id(protocol), max_batch_work)
    known = _AGAINST.get(key)
    if known is None or known[0] is not protocol:
        if len(_AGAINST) > 256:
            _AGAINST.clear()
        layout = protocol.report_format
        known = _AGAINST[key] = (protocol, layout.dtype, layout.row_shape, config_of(protocol),
                                 _work_terms(protocol, max_batch_work)[2])
    return known


def is_binary(pending: PendingBody) -> bool:
    """Whether ``pending`` is binary report records that :func:`._ingest.decode_body` reads without a record limit
    in the way."""
    kind = pending.content_type
    max_records = pending.limits.max_records
    return (kind in BINARY_KINDS or media_type(kind) in BINARY_KINDS) and (max_records is None or max_records >= 1)


def _plain_record(item: Arrival, body: bytes, against: tuple) -> tuple[dict, bytes] | None:
    """The header and payload of ``body`` if it is one record that passes every check before the protocol's
    (``against``: the protocol, its dtype, row shape, config and most reports a batch holds), else None."""
    try:
        record = HEADERS.one_record(body)
    except MalformedReportError:
        return None  # refused by decode_body, alone
    if record is None:
        return None
    header, payload = record
    _, dtype, row_shape, config, max_reports = against
    if (header["shape"][0] > max_reports or (header["file_id"] is not None and header["file_id"] != item.batch_id)
            or (header["crc32"] is not None and zlib.crc32(payload) != header["crc32"])
            or header["dtype"] != dtype or tuple(header["shape"][1:]) != row_shape or header["config"] != config):
        return None
    return header, payload


def _split(protocol, records: list) -> dict[int, ReportBatch]:
    """Validate the reports of ``records`` (``(index, reports, payload)``) at once; each one's batch if all are valid."""
    layout = protocol.report_format
    sizes = [size for _, size, _ in records]
    reports = np.frombuffer(b"".join(payload for _, _, payload in records), dtype=layout.dtype)
    batch = protocol.validate_reports(reports.reshape((sum(sizes), *layout.row_shape)))
    if batch.n_rejected_rows or batch.rejected or not isinstance(batch.reports, np.ndarray):
        return {}  # some report is not valid: each body is decoded alone (its own counts)
    return {index: part for (index, _, _), part in zip(records, _parts(batch, sizes))}


def _parts(batch: ReportBatch, sizes: list[int]) -> list[ReportBatch]:
    """``batch`` (every row valid) cut into consecutive batches of ``sizes`` rows: each what validating its rows alone
    gives, ``ReportBatch(rows, config, {}, size, 0, None)``.  Made without the frozen dataclass's ``__init__`` (one
    ``object.__setattr__`` a field: 2.3 us a batch, about 1 this way, one batch per body of a group): the same fields
    in the same instance dict, still frozen."""
    parts, start, reports, config = [], 0, batch.reports, batch.config
    for size in sizes:
        part = object.__new__(ReportBatch)
        part.__dict__.update(reports=reports[start : start + size], config=config, rejected={}, n_read=size,
                             n_rejected_rows=0, first_invalid_row=None)
        parts.append(part)
        start += size
    return parts
