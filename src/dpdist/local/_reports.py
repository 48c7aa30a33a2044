"""Helpers shared by protocols whose reports are item or bucket indices."""

from __future__ import annotations

import numpy as np

from ..errors import MalformedReportError

__all__ = ["smallest_unsigned_dtype", "check_item_reports"]


def smallest_unsigned_dtype(domain_size: int) -> np.dtype:
    """The narrowest unsigned integer dtype holding ``0 .. domain_size - 1``."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if domain_size - 1 <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


def check_item_reports(protocol, reports, domain_size: int, name: str = "reports"):
    """Read a 1-D batch of item reports; return it and the out-of-range mask."""
    array = np.asarray(reports)
    if array.ndim != 1 or not (np.issubdtype(array.dtype, np.integer) and array.dtype != np.bool_):
        raise MalformedReportError(
            f"{protocol.display_name} {name} must be a 1-D array of integers in [0, {domain_size}). "
            f"Got shape {array.shape} and dtype {array.dtype} instead."
        )
    out_of_range = (array < 0) | (array >= domain_size)
    return array, {"out_of_range": out_of_range}


#: bits of every byte value, most significant first (numpy.packbits order): shape (256, 8)
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.int64)
#: rows per chunk of :func:`count_packed_bits`, bounding its working memory to ~8 MiB
_COUNT_CHUNK_BYTES = 1 << 20
#: byte columns per block of :func:`count_packed_bits`: the (columns x 256) histogram stays at 8 MiB
_COUNT_BLOCK_COLUMNS = 1 << 12


def count_packed_bits(reports: np.ndarray, n_bits: int) -> np.ndarray:
    """Column sums of the bits of ``numpy.packbits`` rows: how many reports set each bit.

    Instead of unpacking n x d bits, count how often each byte value occurs in each
    byte column (one ``bincount``), then multiply that (columns x 256) histogram by
    the bits of each byte value: about 8x less memory traffic.  The columns go in
    blocks, so the histogram never holds more than ``_COUNT_BLOCK_COLUMNS`` x 256
    counts (it took 256 bytes per item of the domain at once).
    """
    n_rows, n_bytes = reports.shape
    counts = np.empty(n_bytes * 8, dtype=np.int64)
    for first in range(0, n_bytes, _COUNT_BLOCK_COLUMNS):
        block = reports[:, first : first + _COUNT_BLOCK_COLUMNS]
        width = block.shape[1]
        histogram = np.zeros(width * 256, dtype=np.int64)
        offsets = np.arange(width, dtype=np.intp) * 256
        chunk = max(1, _COUNT_CHUNK_BYTES // width)
        for start in range(0, n_rows, chunk):
            codes = block[start : start + chunk].astype(np.intp) + offsets
            histogram += np.bincount(codes.ravel(), minlength=width * 256)
        counts[8 * first : 8 * (first + width)] = (histogram.reshape(width, 256) @ _BYTE_BITS).ravel()
    return counts[:n_bits]


def check_packed_reports(protocol, reports, n_bits: int, *, what: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Read a batch of ``numpy.packbits`` rows of ``n_bits`` bits; return it and the padding-set mask.

    A batch of the wrong type or shape raises ``MalformedReportError``; rows whose
    padding bits (beyond ``n_bits``) are set are flagged, to be counted and dropped.
    """
    n_bytes = -(-n_bits // 8)
    array = np.asarray(reports)
    if array.ndim != 2 or array.dtype != np.uint8 or array.shape[1] != n_bytes:
        raise MalformedReportError(
            f"{protocol.display_name} reports must be a uint8 array of shape (n, {n_bytes}) "
            f"(d={n_bits} bits packed by numpy.packbits{what}). "
            f"Got shape {array.shape} and dtype {array.dtype} instead."
        )
    padding_mask = np.uint8((1 << (n_bytes * 8 - n_bits)) - 1)
    return array, (array[:, -1] & padding_mask) != 0 if array.shape[0] else np.zeros(0, bool)
