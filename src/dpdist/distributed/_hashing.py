r"""Persons' ids as keyed 64-bit hashes: SipHash-2-4, vectorized over the ids.

A cluster bounds each person's rows in many partitions at once, so a person must be known by the
same key everywhere, whatever the type of their id.  Each id is hashed with SipHash-2-4 (Aumasson &
Bernstein, "SipHash: a fast short-input PRF", INDOCRYPT 2012: a pseudorandom function of a 128-bit
key) under a secret key (a salt): the hashes that travel between workers and sit in the states are
neither the ids nor a function of them anyone without the key can compute or invert by trying ids.
Two persons whose hashes collide (probability about :math:`P^2/2^{65}` for :math:`P` persons) are
bounded as one: fewer of their rows are kept, and the guarantee holds (each person is inside one unit
of at most ``max_contributions`` rows).

The ids are encoded as bytes before hashing, so that two ids are one key exactly when
:mod:`dpdist._ids` has them one person (equal values of one kind), whatever the dtype of their block:
a number by its exact value (an integer of any dtype, or an integral float, so that ``1``, ``1.0`` and
``np.uint64(1)`` are one person, in ``[-2**63, 2**63)`` as its 8 bytes, little-endian two's complement,
in ``[2**63, 2**64)`` as 16 bytes; another float as its IEEE-754 bits and a tag byte, 9 bytes, ``-0.0``
as ``0.0``); a string as UTF-8 (a lone surrogate as its three bytes, ``surrogatepass``: every string has one
encoding); bytes as themselves (trailing NULs included: ``"a\x00"`` is not ``"a"``).  Kinds are not mixed:
an object block holding ``1`` and ``"1"`` is refused here, and blocks of two kinds when their states merge
(:meth:`~dpdist.distributed._reservoirs.Reservoir.merge_all`); dates are refused (no one encoding
across units).  The
hash is computed on every row at once, one 8-byte word of the messages at a time (NumPy's ``uint64``
arithmetic wraps as SipHash's does); ``tests/distributed`` checks it against pandas' SipHash (C) and the
reference vectors of the paper.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._ids import dtype_kind, id_kind, type_label
from ..errors import InvalidValueTypeError

__all__ = ["siphash24", "hash_ids", "words", "block_kind", "HASHED"]

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)
_INIT = (0x736F6D6570736575, 0x646F72616E646F6D, 0x6C7967656E657261, 0x7465646279746573)


_SHIFTS = {bits: (np.uint64(bits), np.uint64(64 - bits)) for bits in (13, 16, 17, 21, 32)}


def _rotl(x: np.ndarray, bits: int, scratch: np.ndarray) -> None:
    """``x`` rotated left by ``bits``, in place (``scratch``: an array of x's shape)."""
    left, right = _SHIFTS[bits]
    np.right_shift(x, right, out=scratch)
    np.left_shift(x, left, out=x)
    np.bitwise_or(x, scratch, out=x)


def _round(v0, v1, v2, v3, scratch) -> None:
    """One SipRound on arrays of states, in place."""
    v0 += v1
    _rotl(v1, 13, scratch)
    v1 ^= v0
    _rotl(v0, 32, scratch)
    v2 += v3
    _rotl(v3, 16, scratch)
    v3 ^= v2
    v0 += v3
    _rotl(v3, 21, scratch)
    v3 ^= v0
    v2 += v1
    _rotl(v1, 17, scratch)
    v1 ^= v2
    _rotl(v2, 32, scratch)


def siphash24(key: bytes, messages: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """SipHash-2-4 under the 16-byte ``key`` of every row of ``messages`` (a 2-D uint8 array, rows zero-padded to a
    multiple of 8 bytes and at least 8 more than ``lengths``), each of ``lengths[i]`` bytes (uint64 hashes)."""
    if len(key) != 16:
        raise ValueError("SipHash needs a 16-byte key")
    k0 = np.uint64(int.from_bytes(key[:8], "little"))
    k1 = np.uint64(int.from_bytes(key[8:], "little"))
    rows = messages.shape[0]
    state = [np.full(rows, np.uint64(init)) ^ k for init, k in zip(_INIT, (k0, k1, k0, k1))]
    lengths = np.asarray(lengths, dtype=np.uint64)
    full = lengths // np.uint64(8)
    packed = np.ascontiguousarray(messages).view("<u8")  # (rows, width / 8) words, little-endian
    scratch = np.empty(rows, dtype=np.uint64)
    tail = (lengths & np.uint64(0xFF)) << np.uint64(56)
    with np.errstate(over="ignore"):
        for block in range(int(full.max(initial=0)) + 1):
            word = np.where(full == np.uint64(block), packed[:, block] | tail, packed[:, block])
            active = full >= np.uint64(block)
            every = bool(active.all())
            v0, v1, v2, v3 = state if every else [part.copy() for part in state]
            v3 ^= word
            _round(v0, v1, v2, v3, scratch)
            _round(v0, v1, v2, v3, scratch)
            v0 ^= word
            state = [v0, v1, v2, v3] if every else [np.where(active, new, old) for new, old in zip((v0, v1, v2, v3), state)]
        v0, v1, v2, v3 = state
        v2 ^= np.uint64(0xFF)
        for _ in range(4):
            _round(v0, v1, v2, v3, scratch)
    return v0 ^ v1 ^ v2 ^ v3


def words(ids: Any, name: str = "privacy_id") -> tuple[np.ndarray, np.ndarray]:
    """``(messages, lengths)``: the ids encoded as bytes (the module docstring), zero-padded rows of whole words.

    Ids of several kinds in one array (an object column holding ``1`` and ``"1"``), dates and ids of no hashable
    kind are refused (:class:`~dpdist.errors.InvalidValueTypeError`, naming ``privacy_id`` and the types)."""
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise InvalidValueTypeError(f"The {name!r} ids must be a 1-D array. Got an array of shape {ids.shape}.")
    kind = block_kind(ids, name)
    if ids.size == 0:
        return np.zeros((0, 8), dtype=np.uint8), np.zeros(0, dtype=np.int64)
    if kind == "number":
        return _padded(*(_numbers(ids) if ids.dtype != object else _object_numbers(ids)))
    if ids.dtype == object:  # each id's own bytes: NumPy's str and bytes arrays strip trailing NULs
        values = ids.tolist()
        return _exact(values if kind == "bytes" else [value.encode("utf-8", "surrogatepass") for value in values])
    if kind == "string":
        return _strings(np.char.encode(ids, "utf-8", "surrogatepass"))
    return _strings(ids.astype(bytes))


def block_kind(ids: np.ndarray, name: str = "privacy_id") -> str | None:
    """The kind of a block's ids (:mod:`dpdist._ids`): ``"number"``, ``"string"`` or ``"bytes"``; ``None`` for an
    empty block (no person, nothing to agree with).  Two kinds in one block, or another kind, are refused."""
    if ids.size == 0:
        return None
    kind = dtype_kind(ids)
    if kind is None:  # an object column: its ids decide
        kinds = {id_kind(kind) for kind in set(map(type, ids.tolist()))}  # each type once: a block has few
        if len(kinds) > 1:
            raise InvalidValueTypeError(f"The {name!r} ids of a block must be of one kind: {HASHED}. Got "
                                        f"{type_label(ids)}: ids of several kinds are not converted (1 and '1' would "
                                        "be one person or two by accident).")
        kind = kinds.pop()
    if kind in ("datetime", "date", "timedelta"):
        raise InvalidValueTypeError(f"The {name!r} ids of a block must be {HASHED}. Got {type_label(ids)}: dates "
                                    "have no one encoding across units on a cluster; give them as integers of one unit "
                                    "(e.g. .astype('datetime64[ns]').astype('int64')) or as ISO strings.")
    if kind not in ("number", "string", "bytes"):
        raise InvalidValueTypeError(f"The {name!r} ids of a block must be {HASHED}. Got {type_label(ids)}: cast "
                                    "them to one of these (e.g. .astype(str)).")
    return kind


#: the kinds of ids a cluster hashes
HASHED = "numbers (integers and floats, compared by value: 1 and 1.0 are one person), strings or bytes"

_FLOAT_TAG = 0x66  # the 9th byte of a float that is no integer: never the 8 bytes of an integer


def _numbers(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Numbers by exact value: an integer in [-2**63, 2**63) (an integral float too) as its 8 bytes little-endian;
    one in [2**63, 2**64) as 16 bytes (its uint64 and 8 zeros); any other float as its IEEE-754 bits and a tag byte
    (9 bytes; ``-0.0`` as ``0.0``)."""
    rows = ids.size
    matrix = np.zeros((rows, 16), dtype=np.uint8)
    lengths = np.full(rows, 8, dtype=np.int64)
    if ids.dtype.kind in "ib":
        matrix[:, :8] = ids.astype("<i8").view(np.uint8).reshape(-1, 8)
        return matrix, lengths
    if ids.dtype.kind == "u":
        matrix[:, :8] = ids.astype("<u8").view(np.uint8).reshape(-1, 8)
        lengths[ids.astype(np.uint64) >= np.uint64(2**63)] = 16
        return matrix, lengths
    values = ids.astype(np.float64) + 0.0  # -0.0 as 0.0
    with np.errstate(invalid="ignore"):
        integral = np.isfinite(values) & (values == np.floor(values))
    low = integral & (values >= -(2.0**63)) & (values < 2.0**63)
    high = integral & (values >= 2.0**63) & (values < 2.0**64)
    other = ~(low | high)
    matrix[low, :8] = values[low].astype("<i8").view(np.uint8).reshape(-1, 8)
    matrix[high, :8] = values[high].astype("<u8").view(np.uint8).reshape(-1, 8)
    matrix[other, :8] = values[other].astype("<f8").view(np.uint8).reshape(-1, 8)
    matrix[other, 8] = _FLOAT_TAG
    lengths[high], lengths[other] = 16, 9
    return matrix, lengths


def _object_numbers(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Python numbers (ints, floats, bools, NumPy scalars) in an object column, encoded as :func:`_numbers` encodes
    them, value by value (ints never rounded through float64)."""
    values = [value.item() if isinstance(value, np.generic) else value for value in ids.tolist()]
    whole = np.array([isinstance(value, int) for value in values], dtype=bool)
    integers = [int(value) for value in values if isinstance(value, int)]
    if any(not -(2**63) <= value < 2**64 for value in integers):
        raise InvalidValueTypeError("The 'privacy_id' ids of a block must be integers in [-2**63, 2**64) on a cluster. "
                                    "Got a larger one: give such ids as strings.")
    small = np.array([value < 2**63 for value in integers], dtype=bool)
    matrix = np.zeros((ids.size, 16), dtype=np.uint8)
    lengths = np.zeros(ids.size, dtype=np.int64)
    parts = ((np.flatnonzero(whole)[small], np.array([v for v in integers if v < 2**63], dtype=np.int64)),
             (np.flatnonzero(whole)[~small], np.array([v for v in integers if v >= 2**63], dtype=np.uint64)),
             (np.flatnonzero(~whole), np.array([float(v) for v in values if not isinstance(v, int)], dtype=np.float64)))
    for rows, typed in parts:
        matrix[rows], lengths[rows] = _numbers(typed)
    return matrix, lengths


def _strings(encoded: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bytes (an ``S`` array) as themselves."""
    width = encoded.dtype.itemsize
    matrix = encoded.view(np.uint8).reshape(-1, width) if width else np.zeros((encoded.size, 1), np.uint8)
    return _padded(matrix, np.char.str_len(encoded))


def _exact(encoded: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Byte strings as themselves, each its own length (trailing NULs included), laid out as :func:`_padded` lays
    out :func:`_strings`' (the same messages for the same bytes)."""
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    flat = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    rows = np.repeat(np.arange(len(encoded)), lengths)
    columns = np.arange(flat.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    matrix = np.zeros((len(encoded), int(lengths.max(initial=0)) + 1), dtype=np.uint8)
    matrix[rows, columns] = flat
    return _padded(matrix, lengths)


def _padded(matrix: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``matrix`` widened with zeros to a multiple of 8 bytes, at least 8 more than the longest message."""
    width = (int(np.max(lengths, initial=0)) // 8 + 1) * 8
    padded = np.zeros((matrix.shape[0], width), dtype=np.uint8)
    used = min(matrix.shape[1], width)
    padded[:, :used] = matrix[:, :used]
    return padded, np.asarray(lengths, dtype=np.int64)


def hash_ids(ids: Any, key: bytes, name: str = "privacy_id") -> np.ndarray:
    """Each id's keyed 64-bit hash (uint64); ``name`` is what a refusal calls the ids."""
    messages, lengths = words(ids, name)
    if messages.shape[0] == 0:
        return np.zeros(0, dtype=np.uint64)
    return siphash24(key, messages, lengths)
