"""A relayed batch's body, as the relay delivers it to the collector: sealed reports one after another, each after its
length (4 bytes, big-endian), each an RFC 9458 request (:mod:`._ohttp_report`) or, from a device of an earlier version,
a report in dpdist's deprecated envelope (:mod:`._envelope`), its Privacy Pass token first when the campaign takes
tokens."""

from __future__ import annotations

import struct

from ..errors import MalformedReportError

__all__ = ["MAX_SEALED_BYTES", "frame", "unframe"]

#: largest sealed report a relay accepts (one device's submission; bodies larger than this go in several)
MAX_SEALED_BYTES = 1 << 20


def frame(messages) -> bytes:
    """Sealed messages as one relayed-batch body: each after its 4-byte length."""
    return b"".join(struct.pack(">I", len(message)) + message for message in messages)


def unframe(body: bytes, max_messages: int | None = None) -> list[bytes]:
    """The sealed messages of a relayed-batch body (:class:`MalformedReportError` if the framing is broken)."""
    messages, offset = [], 0
    while offset < len(body):
        if offset + 4 > len(body):
            raise MalformedReportError("A relayed batch ends inside a length prefix.")
        (length,) = struct.unpack(">I", body[offset : offset + 4])
        if length > MAX_SEALED_BYTES or offset + 4 + length > len(body):
            raise MalformedReportError(f"A relayed batch's message at byte {offset} claims {length} bytes past the end.")
        messages.append(body[offset + 4 : offset + 4 + length])
        offset += 4 + length
        if max_messages is not None and len(messages) > max_messages:
            raise MalformedReportError(f"A relayed batch holds at most {max_messages} messages.")
    return messages
