"""The bytes of a statistic in the database: whole (a campaign part) or as a compact change (a log row).

A part holds its statistic as the raw little-endian bytes of the protocol's
statistic dtype.  A row of the ingest log holds what one group commit added,
which is usually small: a group of one GRR report over 10^5 items changes one
count.  :func:`encode_delta` stores it in the smallest of three forms (a leading
byte says which): ``Z`` nothing (all zero), ``D`` dense, ``S`` sparse (int32
indices and values); integer values in the narrowest signed integer type that
holds them.  :func:`decode_delta` is its inverse, exactly.
"""

from __future__ import annotations

import numpy as np

__all__ = ["statistic_bytes", "statistic_from_bytes", "encode_delta", "decode_delta"]

_INTEGERS: tuple[np.dtype, ...] = (np.dtype("<i1"), np.dtype("<i2"), np.dtype("<i4"), np.dtype("<i8"))
#: each of :data:`_INTEGERS` with its least and greatest value (``np.iinfo`` once, not per group)
_RANGES = tuple((dtype, int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)) for dtype in _INTEGERS)


def statistic_bytes(statistic: np.ndarray) -> bytes:
    """The raw little-endian bytes of ``statistic`` in its own dtype."""
    return np.ascontiguousarray(statistic, dtype=statistic.dtype.newbyteorder("<")).tobytes()


def statistic_from_bytes(payload, dtype: str, size: int) -> np.ndarray:
    """The statistic stored as :func:`statistic_bytes` (``dtype`` as stored, e.g. ``'<i8'``); zeros for None."""
    native = np.dtype(dtype).newbyteorder("=")
    if payload is None:
        return np.zeros(size, dtype=native)
    return np.frombuffer(bytes(payload), dtype=np.dtype(dtype)).astype(native)


def _narrow(values: np.ndarray) -> tuple[int, np.ndarray]:
    """The narrowest signed integer type holding ``values``: its code and the values in it."""
    if values.size == 0:
        return 0, values.astype(_INTEGERS[0])
    low, high = int(values.min()), int(values.max())
    for code, (dtype, least, most) in enumerate(_RANGES):
        if least <= low and high <= most:
            return code, values.astype(dtype)
    raise OverflowError("a statistic change does not fit in int64")  # pragma: no cover - int64 statistics


def encode_delta(delta: np.ndarray) -> bytes | None:
    """``delta`` (the protocol's statistic dtype) in its smallest stored form; None when it is all zero."""
    nonzero = np.flatnonzero(delta)
    if nonzero.size == 0:
        return None
    if delta.dtype.kind not in "iu":  # float statistics: the raw values
        return b"F" + statistic_bytes(delta.astype(np.float64))
    if nonzero.size * 5 < delta.size:
        code, values = _narrow(delta[nonzero])
        return b"S" + bytes([code]) + nonzero.astype("<i4").tobytes() + values.tobytes()
    code, values = _narrow(delta)
    return b"D" + bytes([code]) + values.tobytes()


def decode_delta(payload, dtype: str, size: int) -> np.ndarray:
    """The statistic change stored by :func:`encode_delta`, as ``dtype`` (native order), of length ``size``."""
    native = np.dtype(dtype).newbyteorder("=")
    out = np.zeros(size, dtype=native)
    if payload is None:
        return out
    payload = bytes(payload)
    form = payload[:1]
    if form == b"F":
        out[:] = np.frombuffer(payload[1:], dtype="<f8")
        return out
    kind = _INTEGERS[payload[1]]
    body = payload[2:]
    if form == b"D":
        out[:] = np.frombuffer(body, dtype=kind)
        return out
    if form != b"S":
        raise ValueError(f"unknown stored statistic change form {form!r}")
    count = len(body) // (4 + kind.itemsize)
    indices = np.frombuffer(body[: 4 * count], dtype="<i4")
    out[indices] = np.frombuffer(body[4 * count :], dtype=kind)
    return out
