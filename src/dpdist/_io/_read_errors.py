"""One translation of data-file reader failures (pyarrow, csv, decoding) into :class:`MalformedDataError`."""

from __future__ import annotations

import csv
from contextlib import contextmanager
from pathlib import Path

from ..errors import DPDistError, InvalidValueTypeError, MalformedDataError

__all__ = ["data_file_errors"]


def _reader_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [csv.Error, UnicodeDecodeError, EOFError]
    try:
        import pyarrow  # lazy: optional extra (pyarrow)

        errors.append(pyarrow.ArrowException)
    except ImportError:
        pass
    return tuple(errors)


@contextmanager
def data_file_errors(path, kind: str, column: str | None = None):
    """Re-raise a reader's failure on ``path`` as one line naming the file and what was wrong.

    dpdist's own errors pass through; so do ``OSError`` (a missing or unreadable
    path is not a malformed file, the CLI reports it as such).  ``kind`` is
    "CSV" or "Parquet"; a cell of ``column`` that is not a number gives
    :class:`~dpdist.errors.InvalidValueTypeError` instead.
    """
    try:
        yield
    except DPDistError:
        raise
    except _reader_errors() as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if column is not None and "conversion error" in reason:
            raise InvalidValueTypeError(
                f"The column {column!r} of {str(Path(path))!r} must hold numbers: {reason}"
            ) from None
        raise MalformedDataError(f"The data file {str(Path(path))!r} is not a readable {kind} file: {reason}") from None
