"""A body of exactly one report record, its header read once per shape of header (a memo of :func:`._binary.read_header`).

A population's devices send the same record header over and over: the same
config, dtype, shape and payload size; only the payload's ``crc32`` and the
``file_id`` (the batch id) differ.  :class:`RecordHeaders` keeps the headers that
:func:`._binary.read_header` read and checked, keyed by their bytes with those two
values cut out, so that the next record whose header differs from one of them in
those values only is read without JSON: its ``crc32`` and ``file_id`` are the
digits and hex digits found where the known header had its own.

Exactly what :func:`~._binary.read_header` gives:

* a header is remembered only after :func:`~._binary.read_header` accepted it, and
  only if its key names each of ``"crc32"`` and ``"file_id"`` at most once and the
  values cut out are what the JSON parse found at the top level (a key nested in
  the config, or a value of another form, is never cut out: such headers are read
  in full every time);
* a value is cut out only where it is a whole JSON token of the plain form (digits
  without a leading zero, at most ten, followed by ``,`` or ``}``; 32 lower-case hex
  digits between quotes), so two headers with one key differ only in those values,
  at the same place;
* the key holds everything else byte for byte (config, dtype, shape, payload
  size, whitespace and key order).

Whether a header is known says only that a record of the same config, dtype and
shape came before (nothing of its reports: the CRC and the file id are cut out),
so the time a body takes to read tells nothing about another device's reports.
At most :data:`MAX_HEADERS` headers of at most :data:`MAX_HEADER_BYTES` bytes are
kept (then forgotten all at once): a stream of headers all different is read in
full, as without the memo.
"""

from __future__ import annotations

import re
import threading
from typing import BinaryIO, cast

from ._binary import _PREFIX, RECORD_MAGIC, RECORD_VERSION, read_header

__all__ = ["RecordHeaders", "MAX_HEADERS", "MAX_HEADER_BYTES", "value_spans"]

#: headers remembered at most (a process serves a few configs)
MAX_HEADERS = 64
#: the longest header remembered (a one-report record of a config with a few hundred labels)
MAX_HEADER_BYTES = 4096
_CRC = re.compile(rb'"crc32": ?(0|[1-9][0-9]{0,9})(?=[,}])')
_FILE_ID = re.compile(rb'"file_id": ?"([0-9a-f]{32})"')
_LEADING = _PREFIX.pack(RECORD_MAGIC, RECORD_VERSION, 0)[: _PREFIX.size - 4]


class _Stream:
    """What :func:`~._binary.read_header` reads: ``read(n)`` from a bytes object, without copying the body."""

    __slots__ = ("data", "at")

    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def read(self, size: int) -> bytes:
        start, self.at = self.at, self.at + size
        return self.data[start : self.at]


class RecordHeaders:
    """The headers of single-record bodies read so far (see the module); thread-safe."""

    def __init__(self):
        self._known: dict[bytes, dict] = {}
        self._lock = threading.Lock()

    def one_record(self, body: bytes, source: str = "batch") -> tuple[dict, bytes] | None:
        """``(header, payload)`` if ``body`` is one record whose whole length its header accounts for (the header as
        :func:`~._binary.read_header` gives it); None if it is anything else (several records, trailing or missing
        bytes: for :func:`~._binary.read_header`'s reader to refuse or read).  Raises what
        :func:`~._binary.read_header` raises."""
        if len(body) < _PREFIX.size or body[: _PREFIX.size - 4] != _LEADING:
            return None
        length = int.from_bytes(body[_PREFIX.size - 4 : _PREFIX.size], "little")
        end = _PREFIX.size + length
        raw = body[_PREFIX.size : end] if length <= MAX_HEADER_BYTES else b""
        cut = _cut(raw) if raw and len(raw) == length else None
        if cut is not None:
            template = self._known.get(cut[0])
            if template is not None:
                return _whole(body, end, {**template, "crc32": cut[1], "file_id": cut[2]})
        header = read_header(cast(BinaryIO, _Stream(body)), source)  # a read(n) is all read_header uses
        if header is None:
            return None
        if cut is not None and header["crc32"] == cut[1] and header["file_id"] == cut[2]:
            self._remember(cut[0], header)
        return _whole(body, end, header)

    def _remember(self, key: bytes, header: dict) -> None:
        template = {name: value for name, value in header.items() if name not in ("crc32", "file_id")}
        with self._lock:
            if len(self._known) >= MAX_HEADERS:
                self._known.clear()
            self._known[key] = template


def _whole(body: bytes, end: int, header: dict) -> tuple[dict, bytes] | None:
    """The header and payload of a body that is exactly one record (else None)."""
    if len(body) != end + header["payload_bytes"]:
        return None
    return header, body[end:]


def value_spans(raw: bytes) -> tuple[tuple[int, int] | None, tuple[int, int] | None] | None:
    """Where the ``crc32`` and ``file_id`` values of the header ``raw`` are (each ``(start, end)`` in ``raw``, None where
    the key is absent); None when a key occurs more than once or its value is not of the plain form, and None for a
    header holding a backslash anywhere (a JSON escape can spell a key, ``"crc\\u0033\\u0032"``, that the parse reads
    as ``crc32`` and ``find`` does not see: such a header is read in full every time).  Each key is found once
    (``find``, then its pattern matched where it begins: the only place it can match)."""
    if b"\\" in raw:
        return None
    spans: list[tuple[int, int] | None] = []
    for key, pattern in ((b'"crc32"', _CRC), (b'"file_id"', _FILE_ID)):
        at = raw.find(key)
        if at < 0:
            spans.append(None)
            continue
        found = pattern.match(raw, at) if raw.find(key, at + len(key)) < 0 else None
        if found is None:
            return None
        spans.append(found.span(1))
    return spans[0], spans[1]


def _cut(raw: bytes) -> tuple[bytes, int | None, str | None] | None:
    """``raw`` with its ``crc32`` and ``file_id`` values cut out, and those values (None where a key is absent); None
    when a key occurs more than once or not in the plain form (such a header is not remembered)."""
    spans = value_spans(raw)
    if spans is None:
        return None
    crc_span, id_span = spans
    crc = None if crc_span is None else int(raw[crc_span[0] : crc_span[1]])
    file_id = None if id_span is None else raw[id_span[0] : id_span[1]].decode()
    pieces, start = [], 0
    for begin, end in sorted(span for span in spans if span is not None):
        pieces.append(raw[start:begin])
        start = end
    pieces.append(raw[start:])
    return b"".join(pieces), crc, file_id
