"""Stream one column of a CSV or Parquet data file in chunks (bounded memory)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from ..errors import InvalidParameterError, InvalidValueTypeError
from ._read_errors import data_file_errors

__all__ = ["iter_column", "count_rows"]


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
    from ._arrow import require_pyarrow

    require_pyarrow("Reading Parquet files")
    import pyarrow.parquet as pq

    with data_file_errors(path, "Parquet"):
        return pq.ParquetFile(path).metadata.num_rows


def iter_column(path, column: str, *, chunk_rows: int = 1 << 20) -> Iterator[tuple[np.ndarray, int]]:
    """Yield ``(values, n_missing)`` per chunk: the column's non-null cells as a NumPy array.

    Integer columns stay integers (items of a categorical domain); floating columns
    stay float64.  Null cells are dropped and counted; other non-numbers raise
    :class:`~dpdist.errors.InvalidValueTypeError`, a file that cannot be parsed
    :class:`~dpdist.errors.MalformedDataError`.
    """
    with data_file_errors(path, "Parquet" if _kind(Path(path)) == "parquet" else "CSV", column):
        yield from _iter_column(path, column, chunk_rows)


def _iter_column(path, column, chunk_rows):
    from ._arrow import require_pyarrow

    pa = require_pyarrow("Reading CSV/Parquet data files")
    path = Path(path)
    if not path.is_file():
        raise InvalidParameterError(f"The data file must exist. Got {str(path)!r} instead.")
    if _kind(path) == "parquet":
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(path)
        if column not in parquet.schema_arrow.names:
            raise _missing(column, parquet.schema_arrow.names, path)
        batches = (batch.column(0) for batch in parquet.iter_batches(batch_size=chunk_rows, columns=[column]))
    else:
        import pyarrow.csv as csv

        delimiter = "\t" if ".tsv" in "".join(path.suffixes).lower() else ","
        parse = csv.ParseOptions(delimiter=delimiter)
        try:
            reader = csv.open_csv(
                path,
                read_options=csv.ReadOptions(block_size=1 << 24),
                parse_options=parse,
                # read as float64 whatever the first block looks like: pyarrow infers a column's
                # type from its first block and would fail on a later decimal; integral chunks
                # are turned back into items by the caller
                convert_options=csv.ConvertOptions(include_columns=[column], column_types={column: pa.float64()}),
            )
        except KeyError:  # pyarrow.ArrowKeyError: no such column
            names = csv.open_csv(path, read_options=csv.ReadOptions(block_size=1 << 16), parse_options=parse).schema.names
            raise _missing(column, names, path) from None
        batches = _csv_columns(reader, column, path, pa)
    for array in batches:
        kind = array.type
        if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_null(kind)):
            raise InvalidValueTypeError(
                f"The column {column!r} of {str(path)!r} must hold numbers. Got Arrow type {kind} instead."
            )
        n_missing = array.null_count
        values = array.drop_null().to_numpy(zero_copy_only=False)
        if pa.types.is_null(kind):
            values = np.zeros(0)
        yield values, n_missing


def _csv_columns(reader, column, path, pa):
    """The column of each CSV block; a cell that is not a number raises a dpdist error."""
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except pa.ArrowInvalid as error:
            if str(error).startswith("CSV parse error"):  # ragged rows, bad quoting: not a typing problem
                raise
            raise InvalidValueTypeError(
                f"The column {column!r} of {str(path)!r} must hold numbers. Reading it failed: {error}"
            ) from None
        yield batch.column(0)


def _missing(column, columns, path):
    return InvalidParameterError(
        f"The 'column' argument must be one of the columns of {str(path)!r}: {list(columns)}. Got {column!r} instead."
    )
