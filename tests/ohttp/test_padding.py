"""The zero padding of Binary HTTP requests (dpdist._ohttp._padding): a length of public things only."""

from __future__ import annotations

import json

import numpy as np

from dpdist import local
from dpdist.io import encode_record
from dpdist._ohttp._padding import MIN_PADDED_BYTES, padded_length


def _crc_digits(record: bytes) -> int:
    return len(str(json.loads(record[14 : 14 + int.from_bytes(record[10:14], "little")])["crc32"]))


def test_records_whose_checksums_differ_in_width_pad_to_one_length():
    protocol = local.from_config({"protocol": "grr", "epsilon": 1.0, "domain_size": 100})
    records = {value: encode_record(protocol, np.array([value]), "f" * 32) for value in range(100)}
    assert len({_crc_digits(record) for record in records.values()}) > 1  # unpadded, their lengths differ
    for extra in (0, 1000, 3000):  # around the powers of two
        lengths = {padded_length(bytes(extra) + record, record) for record in records.values()}
        assert len(lengths) == 1, (extra, lengths)
        (length,) = lengths
        assert length >= MIN_PADDED_BYTES and length & (length - 1) == 0
        assert all(length >= extra + len(record) for record in records.values())


def test_a_body_that_is_not_records_pads_by_its_length():
    assert padded_length(b"x" * 10, b"{}") == MIN_PADDED_BYTES
    assert padded_length(b"x" * 1025, b"{}") == 2048
