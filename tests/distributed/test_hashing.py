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


def test_blocks_of_any_numeric_dtype_group_rows_into_persons_as_the_one_process_path_does():
    """The hashes of blocks cast to different numeric dtypes split the rows into persons exactly as
    ``person_codes`` of all the rows in one process does (numbers by exact value), for 200 seeded cuts."""
    from dpdist.central._contributions import person_codes

    rng = np.random.default_rng(65)
    pool = [0, 1, 2, 7, 255, 2**31, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, -1, -(2**63)]
    casts = [np.int64, np.uint64, np.float64, np.int8, np.float32, object]
    key = b"salt of one run!"
    for _ in range(200):
        values = [pool[i] for i in rng.integers(0, len(pool), 12)]
        blocks, start = [], 0
        for stop in sorted(rng.choice(np.arange(1, 12), 2, replace=False).tolist()) + [12]:
            cast, part = casts[rng.integers(len(casts))], values[start:stop]
            start = stop
            try:
                block = np.array(part, dtype=cast) if cast is not object else np.array(
                    [float(v) if rng.random() < 0.5 and float(v) == v else v for v in part], dtype=object)
            except OverflowError:
                continue
            if cast in (np.int8, np.float32) and not all(block.astype(object)[i] == part[i] for i in range(len(part))):
                continue  # a cast that changed a value: another id, not the same person in another dtype
            blocks.append(block)
        if not blocks:
            continue
        hashes = np.concatenate([hash_ids(block, key) for block in blocks])
        together = [v.item() if isinstance(v, np.generic) else v for block in blocks for v in block.tolist()]
        codes = person_codes("f", np.array(together, dtype=object), len(together))
        same_hash = hashes[:, None] == hashes[None, :]
        same_person = codes[:, None] == codes[None, :]
        np.testing.assert_array_equal(same_hash, same_person)


def test_strings_and_bytes_are_hashed_as_written_trailing_nuls_and_lone_surrogates_included():
    """A cluster's object block hashed ``"a\\x00"`` as ``"a"`` (NumPy's str
    arrays strip trailing NULs) while one process kept them apart, and a lone surrogate raised a raw
    UnicodeEncodeError. Now both paths have them as written (the surrogate as its ``surrogatepass`` bytes), and a
    string's hash is the same in an object block and a str block."""
    from dpdist.central._contributions import person_codes

    key = b"salt of one run!"
    plain = ["alice", "b", "", "été", "a" * 40]
    np.testing.assert_array_equal(hash_ids(np.array(plain, dtype=object), key), hash_ids(np.array(plain), key))
    np.testing.assert_array_equal(hash_ids(np.array([b"x", b""], dtype=object), key), hash_ids(np.array([b"x", b""]), key))
    for ids in (["a\x00", "a", "a\x00\x00", "\ud800", "\ud800", "a"], [b"a\x00", b"a", b"a"]):
        hashes = hash_ids(np.array(ids, dtype=object), key)
        for given in (ids, np.array(ids, dtype=object)):  # a list and an object array: the same persons
            codes = person_codes("f", given, len(ids))
            np.testing.assert_array_equal(hashes[:, None] == hashes[None, :], codes[:, None] == codes[None, :])
        assert len(set(hashes.tolist())) == len(set(ids))
