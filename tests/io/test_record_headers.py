"""The record-header memo (``_io/_record_headers``) gives exactly what ``read_header`` gives, however the header is
written: the same header, the same refusal, or None for a body that is not one record."""

from __future__ import annotations

import io as _io
import json
import struct

from dpdist._io._binary import RECORD_MAGIC, RECORD_VERSION, read_header
from dpdist._io._record_headers import RecordHeaders
from dpdist.errors import MalformedReportError


def _raw_record(header: dict | bytes, payload: bytes) -> bytes:
    """A record with exactly this header (a dict dumped as Python does, or bytes as given)."""
    raw = header if isinstance(header, bytes) else json.dumps(header, sort_keys=True).encode()
    return struct.pack("<8sHI", RECORD_MAGIC, RECORD_VERSION, len(raw)) + raw + payload


HEADERS = [
    b'{"config": {"domain_size": 8}, "crc32": 17, "dtype": "|u1", "payload_bytes": 1, "shape": [1]}',
    b'{"config": {"domain_size": 8}, "crc32":17,"dtype": "|u1", "payload_bytes": 1, "shape": [1]}',
    b'{"crc32": 17, "config": {"domain_size": 8, "crc32": 3}, "dtype": "|u1", "payload_bytes": 1, "shape": [1]}',
    b'{"config": {"domain_size": 8, "crc32": 3}, "dtype": "|u1", "payload_bytes": 1, "shape": [1]}',
    b'{"config": {"domain_size": 8}, "crc32": 017, "dtype": "|u1", "payload_bytes": 1, "shape": [1]}',
    b'{"config": {"domain_size": 8}, "crc32": 17.0, "dtype": "|u1", "payload_bytes": 1, "shape": [1]}',
    b'{"config": {"domain_size": 8}, "crc32": "17", "dtype": "|u1", "payload_bytes": 1, "shape": [1]}',
    b'{"config": {"labels": ["\\"crc32\\": 5"]}, "crc32": 17, "dtype": "|u1", "payload_bytes": 1, "shape": [1]}',
    b'{"config": {"domain_size": 8}, "crc32": 17, "dtype": "|u1", "file_id": "' + b"ab" * 16 + b'", "payload_bytes": 1,'
    b' "shape": [1]}',
    b'{"config": {"f": {"file_id": "' + b"cd" * 16 + b'"}}, "crc32": 17, "dtype": "|u1", "payload_bytes": 1, "shape": [1]}',
    b'{"config": {"domain_size": 8}, "crc32": 17, "dtype": "|u1", "file_id": "' + b"AB" * 16 + b'", "payload_bytes": 1,'
    b' "shape": [1]}',
    b'{"config": {"domain_size": 8}, "crc32": 17, "dtype": "|u1", "payload_bytes": 2, "shape": [1]}',
    b'{"config": 8, "crc32": 17, "dtype": "|u1", "payload_bytes": 1, "shape": [1]}',
    b'{"crc32": 17, "config": {"domain_size": 8}, "dtype": "|u1", "payload_bytes": 1, "shape": [1], "crc32": 17}',
    b'{"crc32": 99, "config": {"domain_size": 8}, "dtype": "|u1", "payload_bytes": 1, "shape": [1], "crc32": 17}',
]


def _variants(raw: bytes):
    """``raw`` and the same header with other CRC digits and another file id (what the memo cuts out)."""
    yield raw
    yield raw.replace(b'"crc32": 17', b'"crc32": 4294967295').replace(b'"crc32":17', b'"crc32":0')
    yield raw.replace(b"ab" * 16, b"ef" * 16).replace(b"cd" * 16, b"01" * 16).replace(b": 3}", b": 4}")


def _read(raw: bytes):
    body = _raw_record(raw, b"\x01")
    try:
        header = read_header(_io.BytesIO(body), "batch")
    except MalformedReportError as error:
        return "error", str(error)
    return ("one", header) if len(body) == len(raw) + 14 + header["payload_bytes"] else ("other", header)


def test_the_header_memo_reads_every_header_as_read_header_does():
    memo = RecordHeaders()
    for _ in range(2):
        for raw in HEADERS:
            for variant in _variants(raw):
                expected = _read(variant)
                try:
                    got = memo.one_record(_raw_record(variant, b"\x01"))
                except MalformedReportError as error:
                    assert expected == ("error", str(error)), variant
                    continue
                if expected[0] == "one":
                    assert got is not None and got[0] == expected[1] and got[1] == b"\x01", variant
                else:
                    assert got is None, variant
    # the plain forms: with and without a space, a file id (a header holding a backslash, such as the key quoted in a
    # label, is read in full every time: an escape can spell a key that find does not see)
    assert len(memo._known) == 3
