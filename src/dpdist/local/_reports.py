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
