"""Stream one column of a CSV or Parquet data file in chunks (bounded memory)."""

from __future__ import annotations

import csv
import gzip
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from ..errors import InvalidParameterError, InvalidValueTypeError, MalformedDataError
from ._pyarrow import require_pyarrow
from ._read_errors import data_file_errors, non_number_error

__all__ = ["iter_column", "iter_columns", "count_rows", "csv_rows", "check_number_type", "missing_column_error"]

#: Bytes of CSV pyarrow reads per block (16 MiB); it would infer a column's type from the first one.
CSV_BLOCK_BYTES = 1 << 24


def _kind(path: Path) -> str:
    suffixes = "".join(path.suffixes).lower()
    if suffixes.endswith((".parquet", ".pq")):
        return "parquet"
    if ".csv" in suffixes or ".tsv" in suffixes or ".txt" in suffixes:
        return "csv"
    raise InvalidParameterError(f"The data file must be a .csv, .tsv or .parquet file. Got {str(path)!r} instead.")


def count_rows(path) -> int | None:
    """Rows of a Parquet file (from its metadata); ``None`` for CSV (unknown without a scan)."""
    path = Path(path)
    if _kind(path) != "parquet":
        return None

    require_pyarrow("Reading Parquet files")
    import pyarrow.parquet as pq  # lazy: optional extra (pyarrow)

    with data_file_errors(path, "Parquet"):
        return pq.ParquetFile(path).metadata.num_rows


def iter_column(path, column: str, *, text: bool = False, chunk_rows: int = 1 << 20) -> Iterator[tuple[np.ndarray, int]]:
    """Yield ``(values, n_missing)`` per chunk: the column's non-null cells as a NumPy array.

    Integer columns stay integers (items of a categorical domain); floating columns
    stay float64.  With ``text=True`` every cell is read as a string (labels of a
    categorical domain).  Null (and, for text, empty) cells are dropped and counted;
    other non-numbers raise :class:`~dpdist.errors.InvalidValueTypeError`, a file
    that cannot be parsed :class:`~dpdist.errors.MalformedDataError`.  CSV files are
    read with pyarrow when it is installed and with the standard library otherwise;
    Parquet needs pyarrow.
    """
    for (values,), n_missing in iter_columns(path, [column], text=[text], chunk_rows=chunk_rows):
        yield values, n_missing


def iter_columns(
    path, columns: Sequence[str], *, text: Sequence[bool], chunk_rows: int = 1 << 20
) -> Iterator[tuple[list[np.ndarray], int]]:
    """Yield ``(values, n_skipped)`` per chunk: the cells of ``columns`` on the rows where none is missing.

    The rows stay aligned: ``values[j][i]`` and ``values[m][i]`` are cells of one row, and a
    row with a missing cell in any of the columns is dropped from all of them and counted in
    ``n_skipped``.  ``text[j]`` reads column ``j`` as strings; the other columns are read
    as in :func:`iter_column`.  In the standard-library CSV reader, a row of fewer cells than
    the header is refused when several columns are read (pyarrow refuses it always).
    """
    numeric = [column for column, as_text in zip(columns, text) if not as_text]  # the columns a cell may fail to convert in
    with data_file_errors(path, "Parquet" if _kind(Path(path)) == "parquet" else "CSV", numeric):
        yield from _iter_columns(path, list(columns), list(text), chunk_rows)


def _iter_columns(path, columns, text, chunk_rows):
    path = Path(path)
    if not path.is_file():
        raise InvalidParameterError(f"The data file must exist. Got {str(path)!r} instead.")
    kind = _kind(path)
    if kind == "csv" and not _has_pyarrow():
        yield from _iter_csv_stdlib(path, columns, text=text, chunk_rows=chunk_rows)
        return

    pa = require_pyarrow("Reading CSV/Parquet data files")
    if kind == "parquet":
        import pyarrow.parquet as pq  # lazy: optional extra (pyarrow)

        parquet = pq.ParquetFile(path)
        for column in columns:
            if column not in parquet.schema_arrow.names:
                raise missing_column_error(column, parquet.schema_arrow.names, path)
        batches = parquet.iter_batches(batch_size=chunk_rows, columns=columns)
    else:
        batches = _csv_batches(path, columns, text, pa)
    for batch in batches:
        arrays = [batch.column(batch.schema.get_field_index(column)) for column in columns]
        yield _aligned_cells(arrays, columns, text, path, pa)


def _aligned_cells(arrays, columns, text, path, pa) -> tuple[list[np.ndarray], int]:
    """The cells of the rows where no array is null, as NumPy arrays, and how many rows were dropped."""
    keep = np.ones(len(arrays[0]) if arrays else 0, dtype=bool)
    for array, column, as_text in zip(arrays, columns, text):
        if not as_text:
            check_number_type(array.type, column, path, pa)
        if array.null_count:
            keep &= ~array.is_null().to_numpy(zero_copy_only=False)
    mask = pa.array(keep)
    values = []
    for array, as_text in zip(arrays, text):
        if pa.types.is_null(array.type):
            values.append(np.zeros(0, dtype=np.str_ if as_text else np.float64))
            continue
        if as_text:
            array = array.cast(pa.string())
        values.append(array.filter(mask).to_numpy(zero_copy_only=False))
    return values, int(keep.size - np.count_nonzero(keep))


def _csv_batches(path, columns, text, pa):
    """The record batches of ``columns`` of a CSV file, read with pyarrow (text columns as strings, others float64)."""
    import pyarrow.csv as csv  # lazy: optional extra (pyarrow)

    delimiter = "\t" if ".tsv" in "".join(path.suffixes).lower() else ","
    parse = csv.ParseOptions(delimiter=delimiter)
    try:
        reader = csv.open_csv(
            path,
            read_options=csv.ReadOptions(block_size=CSV_BLOCK_BYTES),
            parse_options=parse,
            # read as float64 whatever the first block looks like: pyarrow infers a column's
            # type from its first block and would fail on a later decimal; integral chunks
            # are turned back into items by the caller
            convert_options=csv.ConvertOptions(
                include_columns=columns,
                column_types={column: pa.string() if as_text else pa.float64() for column, as_text in zip(columns, text)},
                strings_can_be_null=True,
            ),
        )
    except KeyError:  # pyarrow.ArrowKeyError: no such column
        names = csv.open_csv(path, read_options=csv.ReadOptions(block_size=1 << 16), parse_options=parse).schema.names
        raise missing_column_error(next(c for c in columns if c not in names), names, path) from None
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except pa.ArrowInvalid as error:
            if str(error).startswith("CSV parse error"):  # ragged rows, bad quoting: not a typing problem
                raise
            # pyarrow's message quotes the cell: not shown
            raise non_number_error(path, [column for column, as_text in zip(columns, text) if not as_text]) from None
        yield batch


_MISSING_CELLS = {"", "na", "nan", "null", "none"}


def _has_pyarrow() -> bool:
    try:
        import pyarrow.csv  # noqa: F401  # lazy: optional extra (pyarrow)
    except ImportError:
        return False
    return True


@contextmanager
def csv_rows(path: Path, column: str, delimiter: str) -> Iterator[tuple[Iterator[list[str]], int]]:
    """The rows below the header of a CSV file and the index of ``column`` in them (standard library).

    A ``.gz`` file is read through gzip; a ``column`` the header lacks is refused.
    """
    with _csv_table(path, [column], delimiter) as (reader, indices, _):
        yield reader, indices[0]


@contextmanager
def _csv_table(path: Path, columns, delimiter: str) -> Iterator[tuple[Iterator[list[str]], list[int], int]]:
    """The rows below the header, the index of each of ``columns`` and the header's width (standard library)."""

    opener = gzip.open if path.suffix.lower() == ".gz" else open
    with opener(path, "rt", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        header = next(reader, [])
        for column in columns:
            if column not in header:
                raise missing_column_error(column, header, path)
        yield reader, [header.index(column) for column in columns], len(header)


def _iter_csv_stdlib(path: Path, columns: list[str], *, text: list[bool], chunk_rows: int):
    """The pure-Python reader of CSV columns (no pyarrow), chunk by chunk, rows aligned as in :func:`iter_columns`."""
    delimiter = "\t" if ".tsv" in "".join(path.suffixes).lower() else ","
    with _csv_table(path, columns, delimiter) as (reader, indices, width):
        line = 1
        while True:
            rows = [row for _, row in zip(range(chunk_rows), reader)]
            if not rows:
                return
            read = len(rows)
            if len(columns) > 1:
                rows = _complete_rows(rows, width, line, path)
            line += read
            cells = [[row[index] if len(row) > index else "" for row in rows] for index in indices]
            keep = np.ones(len(rows), dtype=bool)
            for column_cells, as_text in zip(cells, text):
                keep &= np.array([not _missing(cell, as_text) for cell in column_cells], dtype=bool)
            values = [_csv_cells([cell for cell, kept in zip(column_cells, keep) if kept], column, as_text, path)
                      for column_cells, column, as_text in zip(cells, columns, text)]
            yield values, int(keep.size - np.count_nonzero(keep))


def _missing(cell: str, as_text: bool) -> bool:
    """A missing cell: empty (text), or empty, NA, NaN, null or none (numbers)."""
    return cell == "" if as_text else cell.strip().lower() in _MISSING_CELLS


def _complete_rows(rows: list[list[str]], width: int, line: int, path: Path) -> list[list[str]]:
    """``rows`` without blank lines; a row of another width than the header is refused (its cells would not align)."""
    kept = []
    for offset, row in enumerate(rows, start=line + 1):
        if not row:
            continue
        if len(row) != width:
            raise MalformedDataError(
                f"The data file {str(path)!r} must have as many cells on every row as its header ({width}). "
                f"Got {len(row)} on line {offset}."
            )
        kept.append(row)
    return kept


def _csv_cells(cells: list[str], column: str, as_text: bool, path: Path) -> np.ndarray:
    if as_text:
        return np.array(cells, dtype=np.str_)
    try:
        return np.array(cells, dtype=np.float64)
    except ValueError:
        raise non_number_error(path, [column]) from None


def check_number_type(kind, column: str, path, pa) -> None:
    """Refuse the column ``column`` of ``path`` unless its Arrow type ``kind`` holds numbers (integers, floats, or only
    nulls): a boolean would be read as 0 and 1, a timestamp as epoch microseconds."""
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_null(kind)):
        raise InvalidValueTypeError(
            f"The column {column!r} of {str(path)!r} must hold numbers. Got Arrow type {kind} instead."
        )


def missing_column_error(column, columns, path) -> InvalidParameterError:
    """The error naming a ``column`` that the file ``path`` lacks, and the ``columns`` it has."""
    return InvalidParameterError(
        f"The 'column' argument must be one of the columns of {str(path)!r}: {list(columns)}. Got {column!r} instead."
    )
