"""pyarrow, an optional extra: imported where a file needs it, or refused saying how to install it."""

from __future__ import annotations

from ..errors import DatasetUnavailableError

__all__ = ["require_pyarrow"]


def require_pyarrow(feature: str = "Arrow/Parquet report files"):
    """Import pyarrow or raise :class:`~dpdist.errors.DatasetUnavailableError` saying how to install it."""
    try:
        import pyarrow  # lazy: optional extra (pyarrow)
        import pyarrow.compute  # noqa: F401  # lazy: optional extra (pyarrow)
        import pyarrow.parquet  # noqa: F401  # lazy: optional extra (pyarrow)
    except ImportError:
        raise DatasetUnavailableError(
            f"{feature} need the 'pyarrow' package: install dpdist[deploy] (or dpdist[data])."
        ) from None
    return pyarrow
