"""Every DataFrame engine behind one layer, narwhals: which engine a frame is, its columns, its groups, new frames.

A frame is anything ``narwhals.from_native`` accepts: pandas, Polars (eager and lazy),
PyArrow, DuckDB relations, PySpark and Dask DataFrames, Ibis tables, Modin, cuDF,
SQLFrame.  Its columns are read by one path for all of them: the columns a function
needs are selected (for a lazy frame the engine computes only those) and collected into
this process, then turned into NumPy arrays.  New frames (reports, result tables) are
made in the caller's engine: an eager frame of the same library, or for a lazy input a
lazy frame of the same engine (a Polars LazyFrame, a DuckDB relation, a Spark DataFrame
of the same session, a Dask DataFrame, an Ibis table).

narwhals and the engines load only when a frame is passed (``import dpdist`` and
``import dpdist.frame`` load none of them; tests/package/test_import_graph.py, tests/frame/test_frame.py).
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._validation import Described, Items, Options, check_param
from ..errors import DPDistError, InvalidParameterError, InvalidValueTypeError, MissingDependencyError

__all__ = ["Engine", "Table", "computed", "open_frame", "check_columns", "check_frame", "dtype_name", "engine_of", "group_rows"]

def narwhals() -> Any:
    """``narwhals.stable.v2`` (the API narwhals keeps stable for libraries), or a refusal naming the extra."""
    try:
        import narwhals.stable.v2 as nw  # lazy: optional extra dpdist[frame]
    except ImportError:
        raise MissingDependencyError(
            "dpdist.frame needs narwhals: pip install 'dpdist[frame]' (or the 'pandas' or 'polars' extra)"
        ) from None
    return nw


@contextlib.contextmanager
def _calls(engine: str):
    """Around our narwhals calls on a frame of ``engine``: narwhals 2.x warns on every Dask frame that its Dask
    support will move to a separate package (not published when this was written), nothing a caller can act on.  The
    filter is the process's (``warnings`` has no other): set for Dask frames only, so another engine's calls touch
    no filter another thread relies on."""
    if engine != "dask":
        yield
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Dask support is moving out of Narwhals", category=FutureWarning)
        yield


@dataclass(frozen=True)
class Engine:
    """The engine a frame came from, and how a new frame is made in it.

    Attributes
    ----------
    name : str
        narwhals' name of the implementation: ``"pandas"``, ``"polars"``, ``"pyarrow"``, ``"duckdb"``,
        ``"pyspark"``, ``"dask"``, ``"ibis"``, ...
    lazy : bool
        Whether the input was a lazy frame (a new frame is then a lazy frame of the same engine).
    session : object
        The Spark session of a Spark-like frame (new frames are made in it), else None.
    """

    name: str
    lazy: bool
    session: Any = field(default=None, compare=False, repr=False)

    def frame(self, columns: dict[str, Any]) -> Any:
        """A frame of this engine from named columns (NumPy arrays, or lists of Python values)."""
        nw = narwhals()
        data = {name: (value.tolist() if isinstance(value, np.ndarray) and value.dtype == object else value)
                for name, value in columns.items()}
        if self.name in _SPARK_LIKE:
            data = {name: _signed(value) for name, value in data.items()}
        if self.name == "dask":
            return _dask_frame(data)
        if not self.lazy:
            return nw.from_dict(data, backend=self.name).to_native()
        staged = nw.from_dict(data, backend="polars" if self.name == "polars" else _staging_backend())
        with _calls(self.name):
            return staged.lazy(backend=self.name, session=self.session).to_native()


#: engines of Spark's SQL types, which have no unsigned integers
_SPARK_LIKE = ("pyspark", "pyspark[connect]", "sqlframe")


def _signed(value):
    """An unsigned integer array as the narrowest signed type that holds it (Spark has no unsigned types)."""
    if not isinstance(value, np.ndarray) or value.dtype.kind != "u":
        return value
    if value.dtype.itemsize < 8:
        return value.astype(np.dtype(f"i{2 * value.dtype.itemsize}"))
    if len(value) and value.max() > np.iinfo(np.int64).max:
        raise InvalidParameterError("A column of unsigned 64-bit integers above 2**63 - 1 cannot go to Spark (no "
                                    "unsigned types); write the reports to a file instead (dpdist.io.write_reports).")
    return value.astype(np.int64)


def _staging_backend() -> str:
    """An eager library to build a frame in before it goes to a lazy engine (pyarrow, which they all read)."""
    for name in ("pyarrow", "pandas", "polars"):
        try:
            __import__(name)  # lazy: optional engines, whichever is installed
        except ImportError:
            continue
        return name
    raise MissingDependencyError("dpdist.frame needs pyarrow, pandas or polars to make a frame of a lazy engine")


def _dask_frame(data: dict[str, Any]) -> Any:
    """A one-partition Dask DataFrame; byte cells stay bytes (Dask would otherwise turn object columns to strings)."""
    import dask.config  # lazy: the caller's engine (a Dask frame came in)
    import dask.dataframe as dd  # lazy: the caller's engine
    import pandas as pd  # lazy: Dask's partitions are pandas frames

    with dask.config.set({"dataframe.convert-string": False}):
        return dd.from_pandas(pd.DataFrame(data), npartitions=1)


@dataclass
class Table:
    """A frame given to dpdist.frame: its engine, and its columns read once into NumPy on first use."""

    engine: Engine
    frame: Any  # the narwhals DataFrame or LazyFrame (None for a table of arrays already read: of_arrays)
    names: list[str]
    owner: str = "dpdist.frame"  # the function the frame was given to, for its errors
    _read: dict[str, np.ndarray] = field(default_factory=dict)
    schema: dict[str, Any] = field(default_factory=dict)  # each column's narwhals dtype (public: no data read)
    _groups: dict[tuple, tuple] = field(default_factory=dict, repr=False)

    @classmethod
    def of_arrays(cls, engine: Engine, columns: dict[str, np.ndarray], owner: str) -> "Table":
        """A table of columns already read (NumPy arrays of one length, as :meth:`values` gives them): what a caller
        that staged its rows once passes to several releases, none of which reads a frame again."""
        return cls(engine, None, list(columns), owner, dict(columns))

    def read(self, columns: tuple[str, ...]) -> None:
        """Collect ``columns`` (only those) into this process, as NumPy arrays, in one query.

        The columns a function needs are read together: a lazy engine need not return rows in the same order
        (or, for a sample, the same rows) at each execution, so a key column read by one query and the value
        column by another could pair values with other rows' keys.
        """
        needed = [name for name in dict.fromkeys(columns) if name not in self._read]
        if not needed:
            return
        def read() -> dict[str, np.ndarray]:
            data = self.frame.select(needed)
            if self.engine.lazy:
                data = data.collect()
            return {name: _values(data.get_column(name)) for name in needed}

        self._read.update(computed(self.owner, self.engine, needed, read))

    def values(self, column: str) -> np.ndarray:
        """The column as a NumPy array: numbers as int64 (no missing value; uint64 for a UInt64 column holding 2**63 or
        more) or float64 (missing as NaN; an integer column with a missing value and one beyond 2**53, which a float
        would round into its neighbour, as Python ints and None), anything else (strings, categories, bytes) as an
        object array of Python values (missing as None)."""
        self.read((column,))
        return self._read[column]

    def groups(self, by: tuple[str, ...], *, keep_missing: bool = False) -> tuple[dict[Any, np.ndarray], int]:
        """``({key: positions}, rows with a missing key)``: the rows of each key present (a key is a value for one
        ``by`` column, a tuple for several; positions ascending).  A row with a missing key part (null, NaN) belongs
        to no group, or, with ``keep_missing``, to the group whose key has ``None`` there."""
        by = tuple(by)
        if (by, keep_missing) not in self._groups:  # several releases of one table group it once
            columns = [self.values(name) for name in by]
            self._groups[by, keep_missing] = (group_rows(columns, keep_missing=keep_missing),
                                              int(np.count_nonzero(self.missing_keys(by))))
        return self._groups[by, keep_missing]

    def missing_keys(self, by: tuple[str, ...]) -> np.ndarray:
        """Which rows have a missing part (null, NaN) in the key columns ``by``."""
        self.read(by)
        return np.logical_or.reduce([_missing(self._read[name]) for name in by])


def _values(series) -> np.ndarray:
    nw = narwhals()
    dtype = series.dtype
    if dtype.is_integer() or dtype == nw.Boolean:
        if series.null_count() == 0 and dtype == nw.UInt64:  # 2**63 and above: kept exact, not wrapped or refused
            values = np.asarray(_numbers(series), dtype=np.uint64)
            return values if values.size and values.max() >= 2**63 else values.astype(np.int64)
        if series.null_count() == 0:
            return np.asarray(_numbers(series.cast(nw.Int64)), dtype=np.int64)
        present = series.drop_nulls()
        if not len(present) or max(abs(int(present.min())), abs(int(present.max()))) < 2**53:  # exact as floats
            return np.asarray(_numbers(series.cast(nw.Float64)), dtype=np.float64)
        cells = np.fromiter(series.to_list(), dtype=object, count=len(series))  # beyond: Python ints, exactly
        cells[np.asarray(series.is_null().to_numpy(), dtype=bool)] = None
        return cells
    if dtype.is_float():
        return np.asarray(_numbers(series.cast(nw.Float64)), dtype=np.float64)
    if dtype in (nw.Categorical, nw.Enum):
        series = series.cast(nw.String)
    values = series.to_list()
    cells = np.fromiter(values, dtype=object, count=len(values))  # one cell per row, tuples and bytes included
    if series.null_count():  # missing as None, whatever the engine writes (pandas' strings: NaN)
        cells[np.asarray(series.is_null().to_numpy(), dtype=bool)] = None
    return cells


def _numbers(series) -> np.ndarray:
    """A series of numbers as NumPy: a PyArrow column without nulls through DLPack, the others by ``to_numpy``.
    PyArrow's own conversion imports pandas whenever pandas is installed (0.25 CPU-s with bytecode, 1.3 without), and
    ``dpdist query`` reads its files with PyArrow."""
    native = series.to_native()
    if type(native).__module__.startswith("pyarrow") and native.null_count == 0:
        try:
            return np.from_dlpack(native.combine_chunks())
        except TypeError:  # a type DLPack does not carry (PyArrow's ArrowTypeError)
            pass
    return series.to_numpy()


def _missing(values: np.ndarray) -> np.ndarray:
    if values.dtype == object:
        return values == None  # noqa: E711  (elementwise on an object array)
    if values.dtype.kind == "f":
        return np.isnan(values)
    return np.zeros(len(values), dtype=bool)


def _codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct values, each row's index among them)`` of present values (sorted when they can be)."""
    try:
        return np.unique(values, return_inverse=True)
    except TypeError:  # values of several types that do not sort together: first-seen order
        index: dict[Any, int] = {}
        inverse = np.fromiter((index.setdefault(value, len(index)) for value in values), dtype=np.int64, count=len(values))
        distinct = np.empty(len(index), dtype=object)
        distinct[:] = list(index)
        return distinct, inverse


def group_rows(columns: list[np.ndarray], *, keep_missing: bool = False) -> dict[Any, np.ndarray]:
    """``{key: row positions}`` of the key columns ``columns`` (NumPy arrays of one frame): each column is factorized,
    the rows' codes grouped (vectorized; no loop over rows).  Rows with a missing key part are left out, or with
    ``keep_missing`` grouped under ``None`` in that part."""
    rows = len(columns[0])
    present = np.ones(rows, dtype=bool)
    for values in columns:
        present &= ~_missing(values)
    kept = np.arange(rows) if keep_missing else np.flatnonzero(present)
    if not len(kept):
        return {}
    distinct, codes = zip(*(_codes_with_missing(values[kept]) for values in columns))
    keys, group = np.unique(np.column_stack(codes), axis=0, return_inverse=True)
    group = group.reshape(-1)
    order = np.argsort(group, kind="stable")
    bounds = np.cumsum(np.bincount(group, minlength=len(keys)))[:-1]
    positions = np.split(kept[order], bounds)
    found = {}
    for key_codes, where in zip(keys, positions):
        key = tuple(_python(values[code]) for values, code in zip(distinct, key_codes))
        found[key if len(columns) > 1 else key[0]] = where.astype(np.int64)
    return found


def _codes_with_missing(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_codes` of the present values, a missing one (null, NaN) coded as one more distinct value, ``None``."""
    missing = _missing(values)
    if not missing.any():
        return _codes(values)
    distinct, inverse = _codes(values[~missing])
    codes = np.full(len(values), len(distinct), dtype=np.int64)
    codes[~missing] = inverse
    with_none = np.empty(len(distinct) + 1, dtype=object)
    with_none[:-1], with_none[-1] = list(distinct), None
    return with_none, codes


def _python(value):
    """A NumPy scalar as the Python value (keys print and compare as the user typed them)."""
    return value.item() if isinstance(value, np.generic) else value


def engine_of(owner: str, frame: Any, argument: str = "frame") -> tuple[Engine, Any]:
    """``(engine, narwhals frame)`` of a native frame; anything narwhals does not take as a frame is refused by name."""
    nw = narwhals()
    module, name = type(frame).__module__.split(".")[0], type(frame).__name__
    try:
        with _calls(module):
            wrapped = nw.from_native(frame)
    except TypeError:
        hint = " (pass the DataFrame and the column's name)" if name == "Series" else ""
        raise InvalidValueTypeError(
            f"The {argument!r} argument of {owner} must be a DataFrame of an engine narwhals reads (pandas, Polars, "
            f"PyArrow, DuckDB, PySpark, Dask, Ibis, ...){hint}. Got {module}.{name} instead."
        ) from None
    lazy = isinstance(wrapped, nw.LazyFrame)
    # a Spark-like frame's session (PySpark: sparkSession; SQLFrame: session): new frames are made in it
    session = (getattr(frame, "sparkSession", None) or getattr(frame, "session", None)) if lazy else None
    return Engine(str(wrapped.implementation.value), lazy, session), wrapped


def open_frame(owner: str, frame: Any) -> Table:
    """The :class:`Table` of a native frame (its columns' names read from its schema, no data yet)."""
    engine, wrapped = engine_of(owner, frame)
    schema = computed(owner, engine, None, lambda: _declared(engine, wrapped, dict(wrapped.collect_schema())))
    return Table(engine, wrapped, list(schema), owner, schema=schema)


def _declared(engine: Engine, frame: Any, schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each column of Python objects (pandas' ``object`` dtype, whatever it holds) as ``Object``:
    narwhals names one ``String`` when its first 100 values are strings, a type that would depend on the values."""
    if engine.name not in ("pandas", "modin", "cudf", "dask"):
        return schema
    dtypes = frame.to_native().dtypes
    nw = narwhals()
    return {name: nw.Object() if str(dtypes.get(name, "")) == "object" else dtype for name, dtype in schema.items()}


def computed(owner: str, engine: Engine, columns: list[str] | None, work: Callable[[], Any]) -> Any:
    """``work()``, the engine's computing of a frame (its schema, its columns, a filter): an error of the engine (a lazy
    frame's failing cast, a file gone, a query that does not run) is refused as the ``frame`` argument, naming its type
    only.  An engine's message may quote the table's values (``Could not convert string 'x' to BOOL``), so the refusal
    is raised outside the ``except`` block: neither its ``__context__`` nor its ``__cause__`` holds the engine's error,
    and a crash reporter walking the chain finds nothing of the data.  dpdist's own errors and a lack of memory go
    through as they are."""
    try:
        with _calls(engine.name):
            return work()
    except (DPDistError, MemoryError):
        raise
    except Exception as error:
        failed = type(error).__name__
    what = "its schema" if columns is None else f"the column(s) {columns}"
    raise InvalidParameterError(
        f"The 'frame' argument of {owner} could not be computed by its engine ({engine.name}) to read {what}: a "
        f"{failed}, whose message is not repeated here since an engine's message may quote the table's values (run "
        "the frame in its engine to see it)")


def dtype_name(dtype: Any) -> str:
    """A column's dtype by name alone (``Enum``, ``Datetime``): its parameters may be the column's values (an Enum's or
    a Categorical's categories), which no message quotes."""
    return type(dtype).__name__ if not isinstance(dtype, type) else dtype.__name__


def check_columns(owner: str, table: Table, names, argument: str = "column") -> tuple[str, ...]:
    """``names`` (one name or a list of names) as a tuple, each a column of the frame."""
    column = Described(Options(tuple(table.names)), f"a column of the frame: {table.names}")
    if isinstance(names, str):
        return (check_param(owner, argument, names, column),)
    return check_param(owner, argument, names, Items(column, f"columns of the frame, at least one: {table.names}",
                                                     min_length=1))


def check_frame(owner: str, frame, column: str, by=None) -> tuple[Table, str, tuple[str, ...]]:
    """The checks every function of :mod:`dpdist.frame` starts with: ``(table, column, by columns)``."""
    table = open_frame(owner, frame)
    (column,) = check_columns(owner, table, column)
    return table, column, (() if by is None else check_columns(owner, table, by, "by"))
