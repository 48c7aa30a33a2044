"""A relayed batch's frames (dpdist._wire._frames): messages after their lengths, a broken frame refused."""

from __future__ import annotations

import struct

import pytest

from dpdist._wire._frames import MAX_SEALED_BYTES, frame, unframe
from dpdist.errors import MalformedReportError


def test_messages_come_back_as_framed_and_a_broken_frame_is_refused():
    messages = [b"\x00" * 1079, b"", b"\x01short"]
    body = frame(messages)
    assert unframe(body) == messages and len(body) == sum(4 + len(message) for message in messages)
    with pytest.raises(MalformedReportError, match="past the end"):
        unframe(body[:-1])  # the last message's length claims bytes that are not there
    with pytest.raises(MalformedReportError, match="inside a length prefix"):
        unframe(body + b"\x00\x00")
    with pytest.raises(MalformedReportError, match="past the end"):
        unframe(struct.pack(">I", MAX_SEALED_BYTES + 1) + bytes(8))
    with pytest.raises(MalformedReportError, match="at most 2 messages"):
        unframe(body, max_messages=2)
