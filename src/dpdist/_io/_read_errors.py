"""One translation of data-file reader failures (pyarrow, csv, decoding) into :class:`MalformedDataError`.

No message quotes a cell or a row of the file: an error is printed and logged, and the data are private (a
message such as ``invalid value 'Alice Smith'`` would print one).  A cell that is not a number is named by its column and its line
(:func:`not_a_number`), a ragged row by its line and its width.
"""

from __future__ import annotations

import csv
import gzip
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Sequence

from ..errors import DPDistError, InvalidValueTypeError, MalformedDataError

__all__ = ["data_file_errors", "not_a_number", "non_number_error", "first_non_number", "is_number", "delimiter_of"]

#: a CSV cell some reader takes as a missing number (dpdist's and pyarrow's null values, lower-cased and stripped)
MISSING_NUMBER = {"", "na", "nan", "-nan", "null", "none", "n/a", "#n/a", "#n/a n/a", "#na", "<na>", "-1.#ind",
                  "-1.#qnan", "1.#ind", "1.#qnan"}


def _reader_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [csv.Error, UnicodeDecodeError, EOFError]
    try:
        import pyarrow  # lazy: optional extra (pyarrow)

        errors.append(pyarrow.ArrowException)
    except ImportError:
        pass
    return tuple(errors)


@contextmanager
def data_file_errors(path, kind: str, column: str | Sequence[str] | None = None):
    """Re-raise a reader's failure on ``path`` as one line naming the file and what was wrong, no cell of it quoted.

    dpdist's own errors pass through; so do ``OSError`` (a missing or unreadable
    path is not a malformed file, the CLI reports it as such).  ``kind`` is
    "CSV" or "Parquet"; a cell of ``column`` (or of one of the columns, a sequence) that is not a number gives
    :class:`~dpdist.errors.InvalidValueTypeError` instead, naming the column and the line.
    """
    columns = [column] if isinstance(column, str) else list(column or ())
    try:
        yield
    except DPDistError:
        raise
    except _reader_errors() as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if columns and "conversion error" in reason:  # several columns: pyarrow's reason quotes the cell
            raise non_number_error(path, columns) from None
        raise MalformedDataError(f"The data file {str(Path(path))!r} is not a readable {kind} file: "
                                 f"{_without_cells(reason, path)}") from None


def not_a_number(path, column: str, where: str | int | None = None) -> InvalidValueTypeError:
    """The error of a cell of ``column`` that is not a number, at ``where`` (a line of a CSV file, or ``"row N"``),
    its value not shown."""
    at = "" if where is None else f" on line {where}" if isinstance(where, int) else f" in {where}"
    return InvalidValueTypeError(
        f"The column {column!r} of {str(Path(path))!r} must hold numbers. Got a cell that is not a number{at} "
        "(its value is not shown: it is data)."
    )


def non_number_error(path, columns: Sequence[str]) -> InvalidValueTypeError:
    """:func:`not_a_number` of the first cell of ``columns`` of the CSV file ``path`` that is not a number, by its
    column and line (:func:`first_non_number`); by the column alone (the columns, when several) if none is found."""
    found = first_non_number(path, columns)
    if found is not None:
        return not_a_number(path, *found)
    return not_a_number(path, columns[0] if len(columns) == 1 else f"{list(columns)}")


def delimiter_of(path) -> str:
    """The delimiter of a CSV file: a tab for ``.tsv`` (``.tsv.gz``), else a comma."""
    return "\t" if ".tsv" in "".join(Path(path).suffixes).lower() else ","


def _rows(path):
    """A csv reader of ``path`` (through gzip for ``.gz``) and its file handle."""
    opener = gzip.open if Path(path).suffix.lower() == ".gz" else open
    handle = opener(path, "rt", newline="")
    return csv.reader(handle, delimiter=delimiter_of(path)), handle


def first_non_number(path, columns: Sequence[str],
                     missing: Callable[[str], bool] = lambda cell: cell.strip().lower() in MISSING_NUMBER,
                     ) -> tuple[str, int] | None:
    """``(column, line)`` of the first cell of ``columns`` of a CSV file that is neither a number nor missing, or
    ``None`` (read again with the standard library, on the error's path only: pyarrow's message quotes the cell)."""
    try:
        reader, handle = _rows(path)
        with handle:
            header: list[str] = next(reader, [])
            indices = [(column, header.index(column)) for column in columns if column in header]
            for row in reader:
                for column, index in indices:
                    if index < len(row) and not missing(row[index]) and not is_number(row[index]):
                        return column, reader.line_num
    except (OSError, csv.Error, UnicodeDecodeError, EOFError):
        return None
    return None


def is_number(value) -> bool:
    """Whether ``float(value)`` reads ``value`` (a CSV cell, or a value of a Parquet column)."""
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _without_cells(reason: str, path) -> str:
    """A reader's reason without the cells it quotes: pyarrow's ``CSV parse error: Expected 2 columns, got 3: 40,Bob``
    ends with the row."""
    if "conversion error" in reason:  # pyarrow's "CSV conversion error to double: invalid value '<the cell>'"
        return "a cell could not be read as its column's type (its value is not shown: it is data)"
    if not reason.startswith("CSV parse error"):
        return reason
    width = re.search(r"Expected (\d+) columns, got (\d+)", reason)
    if width is None:
        return "CSV parse error (the row is not shown: it is data)"
    line = _ragged_line(path)
    at = "" if line is None else f" on line {line}"
    return (f"CSV parse error: expected {width.group(1)} columns, got {width.group(2)}{at} (the row is not shown: it "
            "is data)")


def _ragged_line(path) -> int | None:
    """The line of the first non-blank row of a CSV file with another number of cells than its header."""
    try:
        reader, handle = _rows(path)
        with handle:
            width = len(next(reader, []))
            return next((reader.line_num for row in reader if row and len(row) != width), None)
    except (OSError, csv.Error, UnicodeDecodeError, EOFError):
        return None
