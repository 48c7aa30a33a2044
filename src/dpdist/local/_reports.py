"""The statistic of bit-packed reports (OUE, SUE, SS, L-OSUE): how many reports set each bit.

The format of such reports is :class:`~dpdist.local._report_kinds.PackedBitReports`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["count_packed_bits"]


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
