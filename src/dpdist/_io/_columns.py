"""Stream one column of a CSV or Parquet data file in chunks (bounded memory)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

from ..errors import InvalidParameterError, InvalidValueTypeError
from ._read_errors import data_file_errors

__all__ = ["iter_column", "count_rows", "csv_rows", "missing_column_error"]


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
    with data_file_errors(path, "Parquet" if _kind(Path(path)) == "parquet" else "CSV", column):
        yield from _iter_column(path, column, text, chunk_rows)


def _iter_column(path, column, text, chunk_rows):
    path = Path(path)
    if not path.is_file():
        raise InvalidParameterError(f"The data file must exist. Got {str(path)!r} instead.")
    kind = _kind(path)
    if kind == "csv" and not _has_pyarrow():
        yield from _iter_csv_stdlib(path, column, text=text, chunk_rows=chunk_rows)
        return
    from ._arrow import require_pyarrow

    pa = require_pyarrow("Reading CSV/Parquet data files")
    if kind == "parquet":
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(path)
        if column not in parquet.schema_arrow.names:
            raise missing_column_error(column, parquet.schema_arrow.names, path)
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
                convert_options=csv.ConvertOptions(
                    include_columns=[column],
                    column_types={column: pa.string() if text else pa.float64()},
                    strings_can_be_null=True,
                ),
            )
        except KeyError:  # pyarrow.ArrowKeyError: no such column
            names = csv.open_csv(path, read_options=csv.ReadOptions(block_size=1 << 16), parse_options=parse).schema.names
            raise missing_column_error(column, names, path) from None
        batches = _csv_columns(reader, column, path, pa)
    for array in batches:
        kind = array.type
        if text and not pa.types.is_null(kind):
            array = array.cast(pa.string())
        elif not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_null(kind)):
            raise InvalidValueTypeError(
                f"The column {column!r} of {str(path)!r} must hold numbers. Got Arrow type {kind} instead."
            )
        n_missing = array.null_count
        values = array.drop_null().to_numpy(zero_copy_only=False)
        if pa.types.is_null(kind):
            values = np.zeros(0, dtype=np.str_ if text else np.float64)
        yield values, n_missing


_MISSING_CELLS = {"", "na", "nan", "null", "none"}


def _has_pyarrow() -> bool:
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return False
    return True


@contextmanager
def csv_rows(path: Path, column: str, delimiter: str) -> Iterator[tuple[Iterator[list[str]], int]]:
    """The rows below the header of a CSV file and the index of ``column`` in them (standard library).

    A ``.gz`` file is read through gzip; a ``column`` the header lacks is refused.
    """
    import csv
    import gzip

    opener = gzip.open if path.suffix.lower() == ".gz" else open
    with opener(path, "rt", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        header = next(reader, [])
        if column not in header:
            raise missing_column_error(column, header, path)
        yield reader, header.index(column)


def _iter_csv_stdlib(path: Path, column: str, *, text: bool, chunk_rows: int):
    """The pure-Python reader of a CSV column (no pyarrow), chunk by chunk."""
    delimiter = "\t" if ".tsv" in "".join(path.suffixes).lower() else ","
    with csv_rows(path, column, delimiter) as (reader, index):
        while True:
            cells = [row[index] if len(row) > index else "" for _, row in zip(range(chunk_rows), reader)]
            if not cells:
                return
            if text:
                kept = [cell for cell in cells if cell != ""]
                yield np.array(kept, dtype=np.str_), len(cells) - len(kept)
                continue
            kept = [cell for cell in cells if cell.strip().lower() not in _MISSING_CELLS]
            try:
                values = np.array(kept, dtype=np.float64)
            except ValueError:
                bad = next(cell for cell in kept if not _is_number(cell))
                raise InvalidValueTypeError(
                    f"The column {column!r} of {str(path)!r} must hold numbers. Got the cell {bad!r}."
                ) from None
            yield values, len(cells) - len(kept)


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


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


def missing_column_error(column, columns, path) -> InvalidParameterError:
    """The error naming a ``column`` that the file ``path`` lacks, and the ``columns`` it has."""
    return InvalidParameterError(
        f"The 'column' argument must be one of the columns of {str(path)!r}: {list(columns)}. Got {column!r} instead."
    )
