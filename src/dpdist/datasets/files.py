"""Any numerical column of a user's CSV or Parquet file as a :class:`Dataset`.

CSV files are read with ``pyarrow.csv`` when pyarrow is installed (the ``dpdist[data]``
extra) and with the standard library otherwise; Parquet needs pyarrow.  Empty and
``NA``/``NaN`` cells are dropped.

Bounds computed from the data (``bounds=None``) are *not* differentially private: they
reveal the minimum and the maximum.  Pass public bounds for a private collection.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._io._columns import check_number_type, csv_rows
from .._io._columns import missing_column_error as _missing_column
from .._io._read_errors import data_file_errors, is_number, non_number_error, not_a_number
from .._types import FloatBounds, PathLike
from .._validation import Bounds, ExistingFile, Options, check_param, validate_params
from ..errors import (
    DatasetUnavailableError,
    InvalidValueTypeError,
    OutOfDomainError,
)
from ._dataset import Dataset

__all__ = ["from_file", "read_column"]

_MISSING = {"", "na", "nan", "null", "none"}


#: the data files read_column and read_ids read: Parquet by the name's ending, CSV (or TSV, or text) by a suffix
DATA_FILE = ExistingFile("the path of an existing .csv, .tsv, .txt or .parquet file (.csv.gz too)",
                         endings=(".parquet", ".pq"), containing=(".csv", ".tsv", ".txt"))


@validate_params({"path": DATA_FILE, "infinite": Options(("raise", "keep")), "empty": Options(("drop", "keep"))},
                 owner="read_column")
def read_column(path: PathLike, column: str, *, infinite: str = "raise", empty: str = "drop") -> np.ndarray:
    """The finite values of ``column`` of a ``.csv`` (or ``.csv.gz``) or ``.parquet`` file, as float64.

    Empty cells are missing values: dropped (``empty="drop"``), or kept as NaN (``empty="keep"``: ``dpdist
    release`` applies its ``--missing`` policy to them).  ``infinite="raise"`` refuses infinite
    values; ``infinite="keep"`` returns them (``dpdist release`` clips them into its bounds:
    a refusal would depend on the private data).
    """
    path = Path(path)  # an existing file, Parquet or CSV by its name: the table
    suffixes = "".join(path.suffixes).lower()
    if suffixes.endswith(DATA_FILE.endings):
        with data_file_errors(path, "Parquet"):
            values = _read_parquet(path, column)
    else:
        with data_file_errors(path, "CSV"):
            values = _read_csv(path, column, delimiter="\t" if ".tsv" in suffixes else ",")
    is_infinite = np.isinf(values)
    if infinite == "raise" and is_infinite.any():
        raise OutOfDomainError(
            f"The column {column!r} of {str(path)!r} must hold finite numbers. "
            f"Got {int(is_infinite.sum())} infinite value(s)."
        )
    return values if empty == "keep" else values[~np.isnan(values)]  # empty cells (NaN) are missing values


def _as_float(values, column, path, *, csv_file: bool = False) -> np.ndarray:
    """``values`` as float64; a cell that is not a number refused by its column and its line (a CSV file) or row
    (a Parquet file), never by its value (data)."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        if csv_file:
            raise non_number_error(path, [column]) from None
        row = next((index for index, value in enumerate(values) if not is_number(value)), None)
        raise not_a_number(path, column, None if row is None else f"row {row + 1}") from None


def _read_parquet(path, column):
    try:
        import pyarrow.parquet as pq  # lazy: optional extra (pyarrow)
    except ImportError:
        raise DatasetUnavailableError(
            "Reading Parquet files needs the package 'pyarrow'. Install it with: pip install 'dpdist[data]'."
        ) from None
    import pyarrow as pa  # lazy: optional extra (pyarrow)

    schema = pq.read_schema(path)
    if column not in schema.names:
        raise _missing_column(column, schema.names, path)
    check_number_type(schema.field(column).type, column, path, pa)  # numbers only, as iter_column reads them
    array = pq.read_table(path, columns=[column]).column(column).to_numpy(zero_copy_only=False)
    return _as_float(array, column, path)


def _read_csv(path, column, delimiter):
    try:
        import pyarrow.csv as pa_csv  # lazy: optional extra (pyarrow)
    except ImportError:
        return _read_csv_stdlib(path, column, delimiter)
    import pyarrow as pa  # lazy: optional extra (pyarrow)

    with pa_csv.open_csv(path, parse_options=pa_csv.ParseOptions(delimiter=delimiter)) as reader:
        names = reader.schema.names
    if column not in names:
        raise _missing_column(column, names, path)
    options = pa_csv.ConvertOptions(
        include_columns=[column],
        column_types={column: pa.float64()},
        null_values=["", "NA", "NaN", "nan", "null", "NULL", "None"],
    )
    try:
        table = pa_csv.read_csv(path, parse_options=pa_csv.ParseOptions(delimiter=delimiter), convert_options=options)
    except pa.ArrowInvalid as error:
        if str(error).startswith("CSV parse error"):  # ragged rows, bad quoting: not a typing problem
            raise
        raise non_number_error(path, [column]) from None
    return table.column(column).to_numpy(zero_copy_only=False).astype(np.float64)


def _read_csv_stdlib(path, column, delimiter):
    with csv_rows(path, column, delimiter) as (reader, index):
        cells = [row[index] for row in reader if len(row) > index]
    # an empty cell is NaN (a missing value, dropped by read_column's empty="drop"): the rows stay aligned with the
    # file's other columns (read_ids)
    cells = ["nan" if cell.strip().lower() in _MISSING else cell for cell in cells]
    return _as_float(cells, column, path, csv_file=True)


@validate_params({"path": ExistingFile()}, owner="read_ids")
def read_ids(path: PathLike, column: str) -> np.ndarray:
    """The cells of ``column`` of a ``.csv``/``.tsv`` or ``.parquet`` file as ids, one per row, aligned with
    :func:`read_column` ``(..., empty="keep")``: integers or strings as the file holds them (a CSV cell is its text,
    exactly: ``"NA"``, ``"null"`` or ``" a"`` are ids), an empty cell ``None`` (a missing id, which a release refuses
    by name); a blank line of a CSV file is no row, as for the values."""
    path = Path(path)  # an existing file: the table
    suffixes = "".join(path.suffixes).lower()
    if suffixes.endswith((".parquet", ".pq")):
        with data_file_errors(path, "Parquet"):
            import pyarrow.parquet as pq  # lazy: optional extra (pyarrow); read_column has refused without it

            if column not in pq.read_schema(path).names:
                raise _missing_column(column, pq.read_schema(path).names, path)
            cells = pq.read_table(path, columns=[column]).column(column).to_pylist()
    else:
        with data_file_errors(path, "CSV"), csv_rows(path, column, "\t" if ".tsv" in suffixes else ",") as (reader, at):
            # a cell's text exactly ("NA", "null", " a" are ids); an empty cell a missing id; a blank line no row (as
            # read_column skips it: the ids stay aligned with the values)
            cells = [row[at] if len(row) > at and row[at] != "" else None for row in reader if row]
    ids = np.empty(len(cells), dtype=object)
    ids[:] = cells
    return ids


def from_file(path: PathLike, column: str, *, bounds: FloatBounds | None = None, name: str | None = None) -> Dataset:
    """A numerical dataset from one column of a CSV or Parquet file.

    Parameters
    ----------
    path : str or Path
        A ``.csv``, ``.tsv`` or ``.parquet`` file.
    column : str
        Column name; its non-missing cells must be numbers.
    bounds : (float, float), optional
        Public bounds; every value must lie inside.  ``None`` uses the data's minimum
        and maximum (not private).
    name : str, optional
        Dataset name (default ``"<file stem>:<column>"``).
    """
    values = read_column(path, column)
    if values.size == 0:
        raise InvalidValueTypeError(f"The column {column!r} of {str(path)!r} holds no numeric value.")
    if bounds is None:
        low, high = float(values.min()), float(values.max())
        if low == high:
            low, high = low - 0.5, high + 0.5
        bounds = (low, high)
    else:
        checked: tuple[float, float] = check_param("datasets.from_file", "bounds", bounds, Bounds())
        bounds = checked
        outside = (values < checked[0]) | (values > checked[1])
        if outside.any():
            raise OutOfDomainError(
                f"The column {column!r} of {str(path)!r} must lie in bounds [{bounds[0]:g}, {bounds[1]:g}]. "
                f"Got {int(outside.sum())} value(s) outside (not shown: they are data)."
            )
    values.setflags(write=False)

    def draw(n, rng):
        return values.copy() if n is None else values[rng.choice(values.size, size=n, replace=False)]

    return Dataset(
        name=name or f"{Path(path).stem}:{column}",
        description=f"column {column!r} of {Path(path).name}",
        kind="numerical",
        size=int(values.size),
        bounds=bounds,
        draw=draw,
        license="user data",
        source=str(path),
        synthetic=False,
    )
