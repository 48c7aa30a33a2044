"""Binary HTTP messages (RFC 9292): the requests and responses that Oblivious HTTP carries.

No maintained Python codec of RFC 9292 was found on PyPI, so this is a small one, tested byte for byte on
the RFC's examples (section 5) and against an implementation we did not write (npm ``bhttp-js``,
``tests/ohttp/test_bhttp.py``).  It reads both framings (known length, indicators 0 and 1; indeterminate
length, 2 and 3), truncation and zero padding (section 3.8), informational responses (section 3.5.1), and
writes the known-length framing.  Every length and number is a QUIC variable-length integer (RFC 9000,
section 16).

A message that breaks the format is refused, never guessed at (section 4): an unknown framing indicator, a
length past the end, a non-zero padding byte, a truncation inside a section, a field name with a byte HTTP
does not allow or an upper-case letter, a field value with NUL, CR or LF or surrounding white space (RFC 9113,
section 8.2.1), a pseudo-field (``:method``, ``:path``, ...), a final status outside 200-599.  The decoder
stops at ``max_bytes`` of content and ``max_fields`` field lines, so a message cannot make it hold more than
it was given.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..errors import MalformedReportError

__all__ = ["Request", "Response", "decode_request", "decode_response", "encode_request", "encode_response",
           "read_varint", "write_varint"]

#: field lines a decoded message may hold, header and trailer sections together
MAX_FIELDS = 256
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9a-z]+")  # RFC 9110 section 5.1, lower case (RFC 9113 section 8.2.1)
_BAD_VALUE = re.compile(rb"[\x00\r\n]")
#: names joined by LF: each an HTTP token (:data:`_TOKEN`); values joined by LF: a NUL or CR, or white space at an end
_TOKENS = re.compile(rb"[!#$%&'*+\-.^_`|~0-9a-z]+(?:\n[!#$%&'*+\-.^_`|~0-9a-z]+)*")
_BAD_VALUES = re.compile(rb"[\x00\r]|^[ \t]|[ \t]$", re.M)
_METHOD = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")

Fields = tuple[tuple[bytes, bytes], ...]


class Request(NamedTuple):
    """A request's control data (method, scheme, authority, path), header fields, content and trailer fields (a named
    tuple: made at a third of a frozen dataclass's cost, one per request the gateway serves)."""

    method: str
    scheme: str
    authority: str
    path: str
    headers: Fields = ()
    content: bytes = b""
    trailers: Fields = ()

    def header(self, name: str) -> str | None:
        """The value of the first header field ``name`` (lower case), as text, or None."""
        wanted = name.encode("ascii")
        return next((value.decode("latin-1") for key, value in self.headers if key == wanted), None)


class Response(NamedTuple):
    """A final response (status 200-599) with its header fields, content and trailer fields, after any informational
    responses (``informational``: ``(status, headers)`` pairs, status 100-199)."""

    status: int
    headers: Fields = ()
    content: bytes = b""
    trailers: Fields = ()
    informational: tuple[tuple[int, Fields], ...] = ()


#: the varints of one byte (0-63), made once
_ONE_BYTE = [bytes([value]) for value in range(0x40)]
#: lengths under this are read and written here without a call (one or two bytes)
_SHORT = 1 << 10


def write_varint(value: int) -> bytes:
    """``value`` as a QUIC variable-length integer on the fewest bytes (RFC 9000, section 16)."""
    if 0 <= value < 0x40:
        return _ONE_BYTE[value]
    if value < 0x4000:
        return (value | 0x4000).to_bytes(2, "big")
    if value < 0x40000000:
        return (value | 0x80000000).to_bytes(4, "big")
    if value < 0x4000000000000000:
        return (value | 0xC000000000000000).to_bytes(8, "big")
    raise MalformedReportError(f"{value} does not fit a QUIC variable-length integer (at most 2^62 - 1).")


def read_varint(data: bytes, offset: int) -> tuple[int, int]:
    """The QUIC variable-length integer at ``offset`` and the offset after it (:class:`MalformedReportError` past the end)."""
    if offset >= len(data):
        raise MalformedReportError(f"A Binary HTTP message ends at byte {offset}, inside a length or a number.")
    size = 1 << (data[offset] >> 6)
    if offset + size > len(data):
        raise MalformedReportError(f"A Binary HTTP message ends inside the {size}-byte integer at byte {offset}.")
    value = int.from_bytes(data[offset : offset + size], "big") & ((1 << (8 * size - 2)) - 1)
    return value, offset + size


_SHORT_VARINTS = [write_varint(value) for value in range(_SHORT)]


class _Reader:
    """The cursor of one message being decoded, with its limits."""

    def __init__(self, data: bytes, max_bytes: int, max_fields: int):
        self.data, self.offset, self.max_bytes, self.fields_left = bytes(data), 0, max_bytes, max_fields

    def at_end(self) -> bool:
        """Whether nothing but zero padding is left (a truncated message: its remaining parts are empty); the rest is
        counted in place, not copied (it holds the content: a whole batch)."""
        data, offset = self.data, self.offset
        if offset < len(data) and data[offset] or data.count(0, offset) != len(data) - offset:
            return False
        self.offset = len(data)
        return True

    def varint(self) -> int:
        data, offset = self.data, self.offset
        if offset < len(data) and data[offset] < 0x40:  # one byte, as most lengths are: no call
            self.offset = offset + 1
            return data[offset]
        value, self.offset = read_varint(data, offset)
        return value

    def take(self, length: int, what: str) -> bytes:
        if length > self.max_bytes or self.offset + length > len(self.data):
            raise MalformedReportError(f"A Binary HTTP message's {what} claims {length} bytes past its end (or its limit).")
        chunk = self.data[self.offset : self.offset + length]
        self.offset += length
        return chunk

    def prefixed(self, what: str) -> bytes:
        """The bytes after their length at the cursor (``take(varint())`` in one call: a request holds nine)."""
        data, offset = self.data, self.offset
        if offset < len(data) and data[offset] < 0x40:
            length, offset = data[offset], offset + 1
        else:
            length, offset = read_varint(data, offset)
        end = offset + length
        if length > self.max_bytes or end > len(data):
            raise MalformedReportError(f"A Binary HTTP message's {what} claims {length} bytes past its end (or its limit).")
        self.offset = end
        return data[offset:end]

    def field_line(self, name_length: int) -> tuple[bytes, bytes]:
        self.fields_left -= 1
        if self.fields_left < 0:
            raise MalformedReportError("A Binary HTTP message holds more field lines than this reader accepts.")
        name = self.take(name_length, "field name")
        value = self.prefixed("field value")
        return _checked_field(name, value)

    def known_section(self) -> Fields:
        if self.at_end():
            return ()
        end = self.varint()
        if end > self.max_bytes or self.offset + end > len(self.data):
            raise MalformedReportError(f"A Binary HTTP field section claims {end} bytes past the message's end.")
        end += self.offset
        lines = []
        while self.offset < end:
            name_length = self.varint()
            if name_length == 0:
                raise MalformedReportError("A Binary HTTP field line has an empty name.")
            lines.append(self.field_line(name_length))
        if self.offset != end:
            raise MalformedReportError("A Binary HTTP field line runs past the end of its section.")
        return tuple(lines)

    def indeterminate_section(self) -> Fields:
        if self.at_end():
            return ()
        lines = []
        while (name_length := self.varint()) != 0:
            lines.append(self.field_line(name_length))
        return tuple(lines)

    def known_content(self) -> bytes:
        return b"" if self.at_end() else self.prefixed("content")

    def indeterminate_content(self) -> bytes:
        if self.at_end():
            return b""
        chunks, total = [], 0
        while (length := self.varint()) != 0:
            total += length
            if total > self.max_bytes:
                raise MalformedReportError("A Binary HTTP message's content is larger than this reader accepts.")
            chunks.append(self.take(length, "content chunk"))
        return b"".join(chunks)

    def padding(self) -> None:
        if self.data.count(0, self.offset) != len(self.data) - self.offset:
            raise MalformedReportError("A Binary HTTP message has bytes after its trailer section that are not zero padding.")


def _checked_field(name: bytes, value: bytes) -> tuple[bytes, bytes]:
    """A field line as RFC 9292 section 3.6 allows it (RFC 9113 section 8.2.1's rules for names and values)."""
    if name.startswith(b":"):
        raise MalformedReportError(f"A Binary HTTP message carries the pseudo-field {name[:64]!r}: its control data is not a field.")
    if not _TOKEN.fullmatch(name):
        raise MalformedReportError(f"A Binary HTTP field name must be a lower-case HTTP token. Got {name[:64]!r}.")
    if _BAD_VALUE.search(value) or value[:1] in (b" ", b"\t") or value[-1:] in (b" ", b"\t"):
        raise MalformedReportError(f"The Binary HTTP field {name.decode()!r} has a value with NUL, CR, LF or surrounding "
                                   "white space.")
    return name, value


def _text(raw: bytes, what: str) -> str:
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        raise MalformedReportError(f"A Binary HTTP request's {what} is not ASCII.") from None


def decode_request(data: bytes, *, max_bytes: int = 1 << 24, max_fields: int = MAX_FIELDS) -> Request:
    """The request encoded in ``data`` (either framing; :class:`MalformedReportError` for anything else)."""
    if len(data) <= max_bytes:  # the usual request, read in one go
        usual = _usual_request(bytes(data), max_fields)
        if usual is not None:
            return usual
    return _read_request(data, max_bytes, max_fields)


def _read_request(data: bytes, max_bytes: int, max_fields: int) -> Request:
    """:func:`decode_request` by the general reader (:class:`_Reader`): any framing, every refusal by name."""
    reader = _Reader(data, max_bytes, max_fields)
    framing = reader.varint()
    if framing not in (0, 2):
        raise MalformedReportError(f"A Binary HTTP request starts with framing indicator 0 or 2. Got {framing}.")
    method, scheme, authority, path = [_text(reader.prefixed(what), what)
                                       for what in ("method", "scheme", "authority", "path")]
    if not _METHOD.fullmatch(method.encode()) or scheme not in ("http", "https") or not path.startswith("/"):
        raise MalformedReportError(f"A Binary HTTP request's control data is not a method, an http(s) scheme and an "
                                   f"absolute path. Got {method!r:.40} {scheme!r:.20} {path!r:.80}.")
    known = framing == 0
    headers = reader.known_section() if known else reader.indeterminate_section()
    content = reader.known_content() if known else reader.indeterminate_content()
    trailers = reader.known_section() if known else reader.indeterminate_section()
    reader.padding()
    return Request(method, scheme, authority, path, headers, content, trailers)


def _usual_request(data: bytes, max_fields: int) -> Request | None:
    """The request in ``data`` (known-length framing, no longer than the reader's ``max_bytes``) as :class:`_Reader`
    reads it, when it is the usual one: its control data and header fields under 2^14 bytes each, its content not empty,
    its trailer section empty or truncated and zero padding after it, nothing refused.  Else None (the reader then
    decides): a device's request in about a third of the reader's calls."""
    if data[:1] != b"\x00":
        return None
    parts: list[bytes] = []
    offset = 1
    try:
        for _ in range(6):  # method, scheme, authority, path, the header section, the content
            first = data[offset]
            if first < 0x40:
                length, offset = first, offset + 1
            elif first < 0x80:
                length, offset = (first & 0x3F) << 8 | data[offset + 1], offset + 2
            else:
                length, offset = read_varint(data, offset)
            if not length and len(parts) >= 4:  # an empty section or content, or a truncation: the reader's
                return None
            parts.append(data[offset : offset + length])
            offset += length
    except (IndexError, MalformedReportError):
        return None
    if offset > len(data) or data.count(0, offset) != len(data) - offset:
        return None
    method, scheme, authority, path, section, content = parts
    names, values, at = [], [], 0
    while at < len(section):
        length = section[at]
        if not 0 < length < 0x40:
            return None
        names.append(section[at + 1 : at + 1 + length])
        at += 1 + length
        first = section[at] if at < len(section) else 0x80
        if first < 0x40:
            length, at = first, at + 1
        elif first < 0x80 and at + 1 < len(section):
            length, at = (first & 0x3F) << 8 | section[at + 1], at + 2
        else:
            return None
        values.append(section[at : at + length])
        at += length
    named, joined = b"\n".join(names), b"\n".join(values)  # an LF of a name or value of its own: counted
    if (at != len(section) or len(names) > max_fields or not _TOKENS.fullmatch(named) or _BAD_VALUES.search(joined)
            or named.count(b"\n") + joined.count(b"\n") != 2 * len(values) - 2 or not _METHOD.fullmatch(method)
            or scheme not in (b"http", b"https") or path[:1] != b"/" or not authority.isascii() or not path.isascii()):
        return None
    return Request(method.decode("ascii"), scheme.decode("ascii"), authority.decode("ascii"), path.decode("ascii"),
                   tuple(zip(names, values)), content)


def decode_response(data: bytes, *, max_bytes: int = 1 << 24, max_fields: int = MAX_FIELDS) -> Response:
    """The response encoded in ``data`` (either framing; :class:`MalformedReportError` for anything else)."""
    reader = _Reader(data, max_bytes, max_fields)
    framing = reader.varint()
    if framing not in (1, 3):
        raise MalformedReportError(f"A Binary HTTP response starts with framing indicator 1 or 3. Got {framing}.")
    known = framing == 1
    informational = []
    while True:
        status = reader.varint()
        if not 100 <= status <= 599:
            raise MalformedReportError(f"A Binary HTTP response's status must be 100-599. Got {status}.")
        headers = reader.known_section() if known else reader.indeterminate_section()
        if status >= 200:
            break
        informational.append((status, headers))
    content = reader.known_content() if known else reader.indeterminate_content()
    trailers = reader.known_section() if known else reader.indeterminate_section()
    reader.padding()
    return Response(status, headers, content, trailers, tuple(informational))


def _section(fields: Fields) -> bytes:
    try:  # the lengths of one or two bytes from a table: a call each costs as much as the rest of a line
        lines = b"".join([_SHORT_VARINTS[len(name)] + name + _SHORT_VARINTS[len(value)] + value for name, value in fields])
    except IndexError:  # a name or value of _SHORT bytes or more
        lines = b"".join([write_varint(len(name)) + name + write_varint(len(value)) + value for name, value in fields])
    return write_varint(len(lines)) + lines


def _prefixed(raw: bytes) -> bytes:
    return write_varint(len(raw)) + raw


def encode_request(request: Request) -> bytes:
    """``request`` in the known-length framing, with its trailer section written even when empty (as RFC 9292's
    Figure 8 does)."""
    control = b"".join(_prefixed(part.encode("ascii")) for part in (request.method, request.scheme, request.authority,
                                                                     request.path))
    for name, value in (*request.headers, *request.trailers):
        _checked_field(name, value)
    return (write_varint(0) + control + _section(request.headers) + _prefixed(request.content)
            + _section(request.trailers))


def encode_response(response: Response) -> bytes:
    """``response`` in the known-length framing (informational responses first), trailer section written even when
    empty."""
    if not 200 <= response.status <= 599:
        raise MalformedReportError(f"A final response's status is 200-599. Got {response.status}.")
    informational = b"".join([write_varint(status) + _section(headers) for status, headers in response.informational])
    return (b"\x01" + informational + write_varint(response.status) + _section(response.headers)
            + _prefixed(response.content) + _section(response.trailers))
