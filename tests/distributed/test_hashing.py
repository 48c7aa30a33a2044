"""The keyed hash of the ids (``distributed/_hashing.py``): SipHash-2-4, vectorized, as the paper and pandas compute it."""

from __future__ import annotations

import numpy as np
import pytest

from dpdist.distributed._hashing import hash_ids, siphash24

pd_hashing = pytest.importorskip("pandas._libs.hashing")


def test_the_hash_is_siphash_2_4_as_the_paper_and_pandas_compute_it():
    # the paper's reference vectors (key 00..0f; messages 00..0e of 0 and 15 bytes)
    messages = np.zeros((2, 16), dtype=np.uint8)
    messages[1, :15] = np.arange(15)
    assert siphash24(bytes(range(16)), messages, np.array([0, 15])).tolist() == [0x726FDB47DD0E0E31, 0xA129CA6149BE45E5]
    key = b"salt of one run!"
    words = np.array(["", "a", "seven77", "eight888", "nine99999", "é漢字", "x" * 41], dtype=object)
    np.testing.assert_array_equal(hash_ids(words, key), pd_hashing.hash_object_array(words, key.decode(), "utf8"))
    numbers = np.array([0, 1, -1, 2**62, -(2**63)], dtype=np.int64)
    as_bytes = np.array([int(v).to_bytes(8, "little", signed=True) for v in numbers], dtype=object)
    np.testing.assert_array_equal(hash_ids(numbers, key), pd_hashing.hash_object_array(as_bytes, key.decode(), "utf8"))
    # one person, one hash, whatever the column's type: an integral float is the integer, a U array the strings
    np.testing.assert_array_equal(hash_ids(np.array([3.0, -0.0]), key), hash_ids(np.array([3, 0]), key))
    np.testing.assert_array_equal(hash_ids(np.array(["ab", "c"]), key), hash_ids(np.array(["ab", "c"], object), key))
    assert hash_ids(np.array([3]), key) != hash_ids(np.array([3]), b"another salt!!!!")
