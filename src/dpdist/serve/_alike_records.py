"""The one-record bodies of a group that differ only in their report, ``crc32`` and ``file_id``, read at once.

A population's devices send one-report bodies that are the same bytes but for
the report, its CRC-32 and the batch id: the same length and the same header
(config, dtype, shape, payload size).  The committer read each body's header on
its own (:mod:`dpdist._io._record_headers`, about 5 us a body of Python); here,
per length, the first body of a group is checked as any body is (``plain``: the
check of one body of :mod:`._group_bodies`), the places of its ``crc32`` and
``file_id`` values found (:func:`~dpdist._io._record_headers.value_spans`), and
every other body of that length compared with it piece by piece (``bytes.startswith`` at the
first body's offsets: no copy of the fixed bytes, no array; numpy's fixed cost per call was most of a
group's decoding at 16 connections, 119 us a group of 14).

A body whose bytes are the first's everywhere but in those two values and its
payload has the first's header text with its own values in the same places: the
same JSON but for them, so it passes every check the first passed (magic,
version, header length, config, dtype, shape, payload size).  What the first
body's check found holds for every later group checked against the same
protocol and limits (``memo``: what ``plain`` checks against): its pieces are
kept (:data:`TEMPLATES`, per ``memo`` and length), and a later group's bodies of
that length, the first included, are compared with them (reading the first
body's header and the places of its values in every group was about 4 % of the
committer's group of 14, docs/reference/benchmarks/service.md, "Tenth round").  Its own values
are checked as the one-body check checks them: the ``crc32`` digits (of the
plain form: no leading zero) must be the CRC-32 of its payload, the ``file_id``
must be the batch id (32 lower-case hex digits).  Every body that differs
elsewhere or fails one of these is left to the one-body check, which reads it,
refuses it or leaves it to be decoded alone: what a body gets does not change.
"""

from __future__ import annotations

import re
import zlib
from typing import Any, Callable, NamedTuple

from .._io._binary import _PREFIX
from .._io._record_headers import value_spans

__all__ = ["read_alike", "MIN_ALIKE", "MAX_ALIKE_BYTES", "TEMPLATES"]

#: bodies of one length at least, for them to be compared at once (fewer: each is checked on its own)
MIN_ALIKE = 2
#: the longest body compared at once: any the committer decodes (``_service.INLINE_BODY_BYTES``).  A body is compared
#: by its header's bytes only (its payload is sliced once, as the one-body check slices it): a batch of 10^4 one-byte
#: reports read alone cost the committer 8 us, a tenth of its Python a batch (docs/reference/benchmarks/service.md, "Fifteenth round")
MAX_ALIKE_BYTES = 64 << 10
_NO_ID = b"\x00" * 32  # what a batch id that is not 32 ASCII characters is compared as: never a hex digit
_HEX_ID = re.compile(rb"[0-9a-f]{32}")
_ZERO = ord("0")


class Template(NamedTuple):
    """What a body that passed the one-body check gives the bodies of its length compared with it: its ``reports``, where
    its payload starts, its bytes outside its two values up to the payload (``pieces``: (where, bytes)) and the spans
    of its ``crc32`` and ``file_id`` values (None: absent); ``owner``: what it was checked against (kept: an ``id`` is
    reused once its object is gone)."""

    owner: Any
    reports: int
    start: int
    pieces: list
    crc_span: tuple[int, int] | None
    id_span: tuple[int, int] | None


#: the templates of the bodies checked, by (``id`` of what they were checked against, length): a later group's bodies
#: of that length are compared with its template (cleared past 256: one per protocol, limits and body length in use)
TEMPLATES: dict[tuple[int, int], Template] = {}


def read_alike(entries: list, plain: Callable[[Any, bytes], Any], memo: Any = None) -> tuple[list, list]:
    """``entries``: ``(index, item, body)`` of one protocol's binary bodies; ``plain(item, body)``: the check of one
    body (its ``(header, payload)`` or None); ``memo``: what ``plain`` checks against (the same object gives every body
    the same verdict), whose templates later calls reuse (None: none kept).  The records read, ``(index, reports,
    payload)``, and the entries left to be checked one by one."""
    by_length: dict[int, list] = {}
    for entry in entries:
        by_length.setdefault(len(entry[2]), []).append(entry)
    read: list = []
    left: list = []
    for length, members in by_length.items():
        if length > MAX_ALIKE_BYTES:
            left += members
            continue
        template = _remembered(memo, length)
        if template is None:
            if len(members) < MIN_ALIKE:
                left += members
                continue
            template = _template(members[0], plain, memo)
            if template is None:
                left += members
                continue
            read.append((members[0][0], template.reports, members[0][2][template.start :]))
            members = members[1:]
            _remember(length, template)
        _read_length(members, template, read, left)
    return read, left


def _remembered(memo: Any, length: int) -> Template | None:
    template = None if memo is None else TEMPLATES.get((id(memo), length))
    return template if template is not None and template.owner is memo else None


def _remember(length: int, template: Template) -> None:
    if template.owner is not None:
        if len(TEMPLATES) > 256:
            TEMPLATES.clear()
        TEMPLATES[(id(template.owner), length)] = template


def _template(first: tuple, plain: Callable[[Any, bytes], Any], memo: Any) -> Template | None:
    """The template of the body of ``first`` (``(index, item, body)``), checked alone against ``memo``; None if it fails
    the check or its values cannot be told apart from the rest of its header (see the module)."""
    _, item, body = first
    record = plain(item, body)
    spans = value_spans(body[_PREFIX.size : len(body) - len(record[1])]) if record is not None else None
    if record is None or spans is None:
        return None
    header, payload = record
    if not _spans_hold(body[_PREFIX.size :], spans, header):  # a key nested in the config, not the header's own
        return None
    start = len(body) - len(payload)
    crc_span, id_span = ((None if span is None else (span[0] + _PREFIX.size, span[1] + _PREFIX.size)) for span in spans)
    pieces, at = [], 0  # the first body's bytes outside its two values, up to its payload: (where, bytes)
    for begin, end in sorted(span for span in (crc_span, id_span) if span is not None):
        pieces.append((at, body[at:begin]))
        at = end
    pieces.append((at, body[at:start]))
    return Template(memo, header["shape"][0], start, pieces, crc_span, id_span)


def _read_length(members: list, template: Template, read: list, left: list) -> None:
    """The bodies ``members`` (all of the template's length) compared with ``template`` (see the module)."""
    size, pieces, crc_span, id_span, start = template.reports, template.pieces, template.crc_span, template.id_span, template.start
    for member in members:
        own = _alike_payload(member[2], member[1].batch_id, pieces, crc_span, id_span, start)
        if own is None:
            left.append(member)
        else:
            read.append((member[0], size, own))


def _alike_payload(body: bytes, batch_id: str, pieces: list, crc_span, id_span, start: int) -> bytes | None:
    """The payload of ``body`` (the first's length) if it holds the first body's ``pieces`` and, at the spans, a
    ``crc32`` of the plain form that is its payload's CRC-32 and a ``file_id`` that is ``batch_id`` (32 lower-case hex
    digits); else None (left to the one-body check)."""
    for at, piece in pieces:  # (a loop, not all() of a generator: 1 us a body less)
        if not body.startswith(piece, at):
            return None
    if id_span is not None:
        spelled = _id_bytes(batch_id)
        if body[id_span[0] : id_span[1]] != spelled or _HEX_ID.fullmatch(spelled) is None:
            return None
    payload = body[start:]
    if crc_span is not None:
        digits = body[crc_span[0] : crc_span[1]]
        if not digits.isdigit() or (len(digits) > 1 and digits[0] == _ZERO) or zlib.crc32(payload) != int(digits):
            return None  # a leading zero is not the plain form (not JSON): left to the one-body check
    return payload


def _spans_hold(raw: bytes, spans: tuple, header: dict) -> bool:
    """Whether the values at ``spans`` of the header bytes ``raw`` are the ``crc32`` and ``file_id`` the JSON parse of
    the header found at its top level (both absent where a span is None)."""
    crc_span, id_span = spans
    crc = None if crc_span is None else int(raw[crc_span[0] : crc_span[1]])
    file_id = None if id_span is None else raw[id_span[0] : id_span[1]].decode("ascii")
    return header.get("crc32") == crc and header.get("file_id") == file_id


def _id_bytes(batch_id: str) -> bytes:
    """A batch id as the bytes a record's ``file_id`` value holds when it is that id (32 ASCII characters)."""
    raw = batch_id.encode("utf-8", "replace")
    return raw if len(raw) == 32 else _NO_ID
