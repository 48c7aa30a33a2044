"""The one-record bodies of a group that differ only in their report, ``crc32`` and ``file_id``, read at once.

A population's devices send one-report bodies that are the same bytes but for
the report, its CRC-32 and the batch id: the same length and the same header
(config, dtype, shape, payload size).  The committer read each body's header on
its own (:mod:`dpdist._io._record_headers`, about 5 us a body of Python); here,
per length, the first body of a group is checked as any body is (``plain``: the
check of one body of :mod:`._group_bodies`), the places of its ``crc32`` and
``file_id`` values found (:func:`~dpdist._io._record_headers.value_spans`), and
every other body of that length compared with it at once (numpy).

A body whose bytes are the first's everywhere but in those two values and its
payload has the first's header text with its own values in the same places: the
same JSON but for them, so it passes every check the first passed (magic,
version, header length, config, dtype, shape, payload size).  Its own values
are checked as the one-body check checks them: the ``crc32`` digits (of the
plain form: no leading zero) must be the CRC-32 of its payload, the ``file_id``
must be the batch id (32 lower-case hex digits).  Every body that differs
elsewhere or fails one of these is left to the one-body check, which reads it,
refuses it or leaves it to be decoded alone: what a body gets does not change.
"""

from __future__ import annotations

import zlib
from itertools import repeat
from typing import Any, Callable

import numpy as np

from .._io._binary import _PREFIX
from .._io._record_headers import value_spans

__all__ = ["read_alike", "MIN_ALIKE", "MAX_ALIKE_BYTES"]

#: bodies of one length at least, for them to be compared at once (fewer: each is checked on its own)
MIN_ALIKE = 4
#: the longest body compared at once (a few reports; longer ones are checked on their own, their header read once for
#: many reports): the copies made to compare a group's bodies stay a few MiB
MAX_ALIKE_BYTES = 4096
_NO_ID = b"\x00" * 32  # what a batch id that is not 32 ASCII characters is compared as: never a hex digit


def read_alike(entries: list, plain: Callable[[Any, bytes], Any]) -> tuple[list, list]:
    """``entries``: ``(index, item, body)`` of one protocol's binary bodies; ``plain(item, body)``: the check of one
    body (its ``(header, payload)`` or None).  The records read, ``(index, reports, payload)``, and the entries left to
    be checked one by one."""
    by_length: dict[int, list] = {}
    for entry in entries:
        by_length.setdefault(len(entry[2]), []).append(entry)
    read: list = []
    left: list = []
    for length, members in by_length.items():
        if len(members) < MIN_ALIKE or length > MAX_ALIKE_BYTES:
            left += members
        else:
            _read_length(members, plain, read, left)
    return read, left


def _read_length(members: list, plain: Callable[[Any, bytes], Any], read: list, left: list) -> None:
    """The bodies ``members`` (all of one length): the first checked alone, the others against it (see the module)."""
    index, item, body = members[0]
    record = plain(item, body)
    spans = value_spans(body[_PREFIX.size : len(body) - len(record[1])]) if record is not None else None
    if record is None or spans is None:
        left += members
        return
    header, payload = record
    if not _spans_hold(body[_PREFIX.size :], spans, header):  # a key nested in the config, not the header's own
        left += members
        return
    read.append((index, header["shape"][0], payload))
    rest, start = members[1:], len(body) - len(payload)
    rows = np.frombuffer(b"".join(member[2] for member in rest), np.uint8).reshape(len(rest), len(body))
    fixed = np.ones(len(body), bool)
    fixed[start:] = False
    good = np.ones(len(rest), bool)
    crc_span, id_span = ((None if span is None else (span[0] + _PREFIX.size, span[1] + _PREFIX.size)) for span in spans)
    crcs: Any = repeat(None)
    if crc_span is not None:
        fixed[crc_span[0] : crc_span[1]] = False
        digits = rows[:, crc_span[0] : crc_span[1]].astype(np.int64) - ord("0")
        good &= ((digits >= 0) & (digits <= 9)).all(axis=1)
        if digits.shape[1] > 1:
            good &= digits[:, 0] != 0  # a leading zero is not the plain form (not JSON): left to the one-body check
        crcs = (digits * 10 ** np.arange(digits.shape[1] - 1, -1, -1, dtype=np.int64)).sum(axis=1).tolist()
    if id_span is not None:
        fixed[id_span[0] : id_span[1]] = False
        ids = np.frombuffer(b"".join(_id_bytes(member[1].batch_id) for member in rest), np.uint8).reshape(len(rest), -1)
        hexadecimal = ((ids >= ord("0")) & (ids <= ord("9"))) | ((ids >= ord("a")) & (ids <= ord("f")))
        good &= hexadecimal.all(axis=1) & (rows[:, id_span[0] : id_span[1]] == ids).all(axis=1)
    good &= (rows[:, fixed] == np.frombuffer(body, np.uint8)[fixed]).all(axis=1)
    size = header["shape"][0]
    for member, alike, crc in zip(rest, good.tolist(), crcs):
        own = member[2][start:]
        if alike and (crc is None or zlib.crc32(own) == crc):
            read.append((member[0], size, own))
        else:
            left.append(member)


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
