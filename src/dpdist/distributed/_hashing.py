r"""Persons' ids as keyed 64-bit hashes: SipHash-2-4, vectorized over the ids.

A cluster bounds each person's rows in many partitions at once, so a person must be known by the
same key everywhere, whatever the type of their id.  Each id is hashed with SipHash-2-4 (Aumasson &
Bernstein, "SipHash: a fast short-input PRF", INDOCRYPT 2012: a pseudorandom function of a 128-bit
key) under a secret key (a salt): the hashes that travel between workers and sit in the states are
neither the ids nor a function of them anyone without the key can compute or invert by trying ids.
Two persons whose hashes collide (probability about :math:`P^2/2^{65}` for :math:`P` persons) are
bounded as one: fewer of their rows are kept, and the guarantee holds (each person is inside one unit
of at most ``max_contributions`` rows).

The ids are encoded as bytes before hashing: an integer (or an integral float, so that ``1.0`` and
``1`` are one person, as :func:`numpy.unique` has them) as its 8 bytes, little-endian two's complement;
another float as its IEEE-754 bits (``-0.0`` as ``0.0``); a string as UTF-8; bytes as themselves.  The
hash is computed on every row at once, one 8-byte word of the messages at a time (NumPy's ``uint64``
arithmetic wraps as SipHash's does); ``tests/distributed`` checks it against pandas' SipHash (C) and the
reference vectors of the paper.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidValueTypeError

__all__ = ["siphash24", "hash_ids", "words"]

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


def words(ids: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(messages, lengths)``: the ids encoded as bytes (the module docstring), zero-padded rows of whole words."""
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise InvalidValueTypeError(f"The ids must be a 1-D array. Got an array of shape {ids.shape}.")
    if ids.dtype.kind in "iub":
        return _padded(ids.astype("<i8").view(np.uint8).reshape(-1, 8), np.full(ids.size, 8))
    if ids.dtype.kind == "f":
        values = ids.astype(np.float64) + 0.0  # -0.0 as 0.0
        integral = (values == np.floor(values)) & (np.abs(values) < 2.0**63)
        as_int = np.where(integral, values, 0).astype("<i8").view(np.uint8).reshape(-1, 8)
        as_float = values.astype("<f8").view(np.uint8).reshape(-1, 8)
        return _padded(np.where(integral[:, None], as_int, as_float), np.full(ids.size, 8))
    if ids.dtype.kind == "O" and ids.size and not isinstance(ids[0], (str, bytes)):
        try:  # numbers in an object column (a pandas column with None refused before): as their numeric dtype
            return words(np.array(ids.tolist()))
        except (TypeError, ValueError):
            raise InvalidValueTypeError("The ids must be integers, floats, strings or bytes, of one type.") from None
    if ids.dtype.kind in "OU":
        try:
            encoded = np.char.encode(ids.astype(str), "utf-8") if ids.dtype.kind == "U" or \
                isinstance(ids[0], str) else ids.astype(bytes)
        except (TypeError, ValueError, UnicodeError):
            raise InvalidValueTypeError("The ids must be integers, floats, strings or bytes, of one type.") from None
        ids = encoded
    if ids.dtype.kind == "S":
        width = ids.dtype.itemsize
        matrix = ids.view(np.uint8).reshape(-1, width) if ids.size else np.zeros((0, max(width, 1)), np.uint8)
        return _padded(matrix, np.char.str_len(ids) if ids.size else np.zeros(0, dtype=np.int64))
    raise InvalidValueTypeError(f"The ids must be integers, floats, strings or bytes. Got dtype {ids.dtype}.")


def _padded(matrix: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``matrix`` widened with zeros to a multiple of 8 bytes, at least 8 more than the longest message."""
    width = (int(np.max(lengths, initial=0)) // 8 + 1) * 8
    padded = np.zeros((matrix.shape[0], width), dtype=np.uint8)
    used = min(matrix.shape[1], width)
    padded[:, :used] = matrix[:, :used]
    return padded, np.asarray(lengths, dtype=np.int64)


def hash_ids(ids: Any, key: bytes) -> np.ndarray:
    """Each id's keyed 64-bit hash (uint64)."""
    messages, lengths = words(ids)
    if messages.shape[0] == 0:
        return np.zeros(0, dtype=np.uint64)
    return siphash24(key, messages, lengths)
