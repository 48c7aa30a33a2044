"""The zero padding of a Binary HTTP request before it is encapsulated (RFC 9292 section 3.8): a length of public things.

Every dpdist client pads the Binary HTTP request it encapsulates (to the collector's gateway through a
standard Oblivious HTTP relay, :mod:`dpdist.client._oblivious_transport`, or to a relayed campaign's key through
dpdist's relay, :mod:`dpdist._wire._ohttp_report`) to :func:`padded_length`: a power of two, at least
:data:`MIN_PADDED_BYTES`, of its length as if every record's CRC-32 (written in decimal in the record's
header) had all 10 digits, so neither the reports nor their checksum change it, only the batch's size
(unpadded, a one-report GRR batch's length named report 38 over 100 items).
"""

from __future__ import annotations

import json
import struct

from .._io._binary import RECORD_MAGIC

__all__ = ["MIN_PADDED_BYTES", "padded_length"]

#: the smallest padded inner request: a campaign's config request and a batch of a few reports all pad to it
MIN_PADDED_BYTES = 1024
_RECORD_PREFIX = struct.Struct("<8sHI")  # magic, version, header length (dpdist._io._binary)
_CRC_DIGITS = 10  # the most decimal digits of a CRC-32 (2^32 - 1)


def _crc_slack(body: bytes) -> int:
    """The digits the CRC-32s of the records in ``body`` (dpdist's binary records, else 0) lack to 10: what the padding
    adds so that the checksums, functions of the reports, do not move the padded length."""
    slack, offset = 0, 0
    while body[offset : offset + len(RECORD_MAGIC)] == RECORD_MAGIC and offset + _RECORD_PREFIX.size <= len(body):
        _, _, header_bytes = _RECORD_PREFIX.unpack_from(body, offset)
        start = offset + _RECORD_PREFIX.size
        try:
            header = json.loads(body[start : start + header_bytes])
            crc, payload_bytes = header.get("crc32"), int(header["payload_bytes"])
        except (ValueError, TypeError, KeyError, AttributeError):  # not a record after all: nothing to even out
            return slack
        if isinstance(crc, int) and crc >= 0:
            slack += _CRC_DIGITS - len(str(crc))
        offset = start + header_bytes + payload_bytes
    return slack


def padded_length(message: bytes, body: bytes) -> int:
    """The length a Binary HTTP ``message`` (carrying ``body``) is zero-padded to before it is encapsulated: the next
    power of two, at least :data:`MIN_PADDED_BYTES`, of its length with every record's CRC-32 counted at 10 digits."""
    public = len(message) + _crc_slack(bytes(body))
    return max(MIN_PADDED_BYTES, 1 << (public - 1).bit_length())


