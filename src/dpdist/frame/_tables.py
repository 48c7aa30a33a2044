"""pandas and Polars behind one small interface: which library a frame is, its columns, its groups, new frames.

Neither library is imported unless the caller passes one of its frames (``import
dpdist`` and ``import dpdist.frame`` import neither; tests/test_import_graph.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import (
    InvalidParameterError,
    InvalidValueTypeError,
    MissingDependencyError,
)

__all__ = ["library_of", "column_values", "group_rows", "new_frame", "check_columns", "check_frame"]

LIBRARIES = ("pandas", "polars")


def library_of(owner: str, frame) -> str:
    """``"pandas"`` or ``"polars"``; anything else (a Series, a LazyFrame, a dict) is refused by name."""
    module = type(frame).__module__.split(".")[0]
    name = type(frame).__name__
    if module in LIBRARIES and name == "DataFrame":
        return module
    hint = ""
    if module == "polars" and name == "LazyFrame":
        hint = " (collect() a LazyFrame first)"
    elif name == "Series":
        hint = " (pass the DataFrame and the column's name)"
    raise InvalidValueTypeError(
        f"The 'frame' argument of {owner} must be a pandas or Polars DataFrame{hint}. Got {module}.{name} instead."
    )


def check_columns(owner: str, frame, library: str, names, argument: str = "column") -> tuple[str, ...]:
    """``names`` (one name or a list of names) as a tuple, each a column of ``frame``."""
    names = (names,) if isinstance(names, str) else tuple(names) if isinstance(names, (list, tuple)) else (names,)
    columns = list(frame.columns)
    for name in names:
        if not isinstance(name, str) or name not in columns:
            raise InvalidParameterError(
                f"The {argument!r} argument of {owner} must name columns of the frame: {columns}. Got {name!r} instead."
            )
    if not names:
        raise InvalidParameterError(f"The {argument!r} argument of {owner} must name at least one column. Got none.")
    return names


def check_frame(owner: str, frame, column: str, by=None) -> tuple[str, str, tuple[str, ...]]:
    """The checks every function of :mod:`dpdist.frame` starts with: ``(library, column, by columns)``."""
    library = library_of(owner, frame)
    (column,) = check_columns(owner, frame, library, column)
    return library, column, (() if by is None else check_columns(owner, frame, library, by, "by"))


def column_values(frame, library: str, column: str) -> np.ndarray:
    """The column as a NumPy array: numbers as int64 (no missing value) or float64 (missing as NaN), anything
    else (strings, categories) as an object array of Python values (missing as None)."""
    if library == "pandas":
        return _pandas_values(frame[column])
    return _polars_values(frame.get_column(column))


def _pandas_values(series) -> np.ndarray:
    import pandas as pd  # lazy: optional extra dpdist[pandas]

    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_integer_dtype(dtype):
        if not series.isna().any():
            return series.to_numpy(dtype=np.int64)
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    if pd.api.types.is_float_dtype(dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    return series.astype(object).where(series.notna(), None).to_numpy(dtype=object)


def _polars_values(series) -> np.ndarray:
    import polars as pl  # lazy: optional extra dpdist[polars]

    dtype = series.dtype
    if dtype.is_integer() or dtype == pl.Boolean:
        if series.null_count() == 0:
            return series.cast(pl.Int64).to_numpy()
        return series.cast(pl.Float64).to_numpy()
    if dtype.is_float():
        return series.cast(pl.Float64).fill_null(float("nan")).to_numpy()
    return np.array(series.cast(pl.String).to_list() if dtype in (pl.Categorical, pl.Enum) else series.to_list(),
                    dtype=object)


def group_rows(frame, library: str, by: tuple[str, ...]) -> dict[Any, np.ndarray]:
    """The rows of each key present in ``frame``: ``{key: positions}`` (a key is a value for one ``by``
    column, a tuple for several); rows with a missing key belong to no group."""
    if library == "pandas":
        grouped = frame.groupby(by[0] if len(by) == 1 else list(by), sort=False, dropna=True)
        return {key: np.asarray(rows, dtype=np.int64) for key, rows in grouped.indices.items()}
    import polars as pl  # lazy: optional extra dpdist[polars]

    index = "__dpdist_row__"
    grouped = frame.with_row_index(index).drop_nulls(list(by)).group_by(list(by)).agg(pl.col(index))
    keys = grouped.select(list(by)).rows()
    rows = grouped.get_column(index).to_list()
    return {(key if len(by) > 1 else key[0]): np.asarray(positions, dtype=np.int64) for key, positions in zip(keys, rows)}


def new_frame(library: str, columns: dict[str, Any]):
    """A DataFrame of ``library`` from named columns (arrays, or lists of Python values)."""
    if library == "pandas":
        try:
            import pandas as pd  # lazy: optional extra dpdist[pandas]
        except ImportError as error:  # pragma: no cover - a pandas frame came in, so pandas is there
            raise MissingDependencyError("dpdist.frame needs pandas: pip install 'dpdist[pandas]'") from error
        return pd.DataFrame(columns)
    import polars as pl  # lazy: optional extra dpdist[polars]

    return pl.DataFrame({name: (list(value) if isinstance(value, np.ndarray) and value.dtype == object else value)
                         for name, value in columns.items()})
