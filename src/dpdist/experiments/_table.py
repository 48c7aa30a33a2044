"""A small tidy table (list of rows) with CSV / Parquet output and per-group summaries.

The runner's results are two tables: ``raw`` (one row per cell and metric: dataset,
method, the grid parameters, repeat, metric, value) and ``summary`` (one row per
dataset, method, grid point and metric: mean, std, se, count).  pandas is not needed;
:meth:`ResultsTable.to_pandas` converts when it is installed.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from .._types import PathLike
from ..errors import InvalidParameterError
from .._io._atomic import atomic_path

__all__ = ["ResultsTable", "summarize", "STAT_COLUMNS"]

#: The statistics columns :func:`summarize` appends to the setting columns, in this order:
#: the mean, standard deviation (ddof 1) and standard error of the values, their count, the
#: failed cells, and the mean and standard deviation (ddof 1) of the values' natural logarithms
#: (``log_mean``, ``log_std``; NaN unless every value is positive), which the one-sample checks
#: against a computed constant test (:func:`~dpdist.experiments.one_sample_p_values`).
STAT_COLUMNS = ("mean", "std", "se", "count", "failed", "log_mean", "log_std")


class ResultsTable:
    """Rows (dicts) with a fixed column order."""

    def __init__(self, rows: Iterable[dict], columns: list[str] | None = None):
        self.rows = [dict(row) for row in rows]
        if columns is None:
            columns = []
            for row in self.rows:
                columns.extend(key for key in row if key not in columns)
        self.columns = list(columns)

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __eq__(self, other):
        """Same columns and rows; NaN equals NaN (a std over one repeat is NaN)."""
        if not isinstance(other, ResultsTable) or self.columns != other.columns or len(self) != len(other):
            return False
        return all(
            _same(mine.get(column), theirs.get(column))
            for mine, theirs in zip(self.rows, other.rows)
            for column in self.columns
        )

    def __repr__(self):
        return f"ResultsTable({len(self.rows)} rows, columns={self.columns})"

    # ------------------------------------------------------------------ queries
    def select(self, **criteria: Any) -> "ResultsTable":
        """Rows whose column equals the value (or is in it, for a list/tuple/set)."""
        rows = self.rows
        for key, wanted in criteria.items():  # one criterion at a time over the rows left (a claim check's hot loop)
            if isinstance(wanted, (list, tuple, set, frozenset)):
                rows = [row for row in rows if row.get(key) in wanted]
            else:
                rows = [row for row in rows if not row.get(key) != wanted]
        return ResultsTable(rows, self.columns)

    def column(self, name: str) -> np.ndarray:
        if name not in self.columns:
            raise InvalidParameterError(f"The table has no column {name!r}; columns are {self.columns}.")
        return np.array([row.get(name) for row in self.rows])

    def unique(self, name: str) -> list:
        """Distinct values of a column, in order of first appearance."""
        seen = []
        for row in self.rows:
            if row.get(name) not in seen:
                seen.append(row.get(name))
        return seen

    def one(self, **criteria: Any) -> dict:
        """The single row matching ``criteria``."""
        rows = self.select(**criteria).rows
        if len(rows) != 1:
            raise InvalidParameterError(f"Expected one row matching {criteria}, found {len(rows)}.")
        return rows[0]

    # ------------------------------------------------------------------ output
    def to_csv(self, path: PathLike) -> Path:
        """Write CSV, replacing ``path`` whole (never left half-written)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as temporary, temporary.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(self.columns)
            for row in self.rows:
                writer.writerow([_cell_text(row.get(column)) for column in self.columns])
        return path

    def to_parquet(self, path: PathLike) -> Path | None:
        """Write Parquet (needs pyarrow); returns None when pyarrow is missing."""
        try:
            import pyarrow as pa  # lazy: optional extra (pyarrow)
            import pyarrow.parquet as pq  # lazy: optional extra (pyarrow)
        except ImportError:
            return None
        path = Path(path)
        data = {column: [_parquet_value(row.get(column)) for row in self.rows] for column in self.columns}
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as temporary:
            pq.write_table(pa.table(data), temporary)
        return path

    def to_pandas(self) -> Any:
        import pandas  # lazy: optional extra dpdist[pandas]

        return pandas.DataFrame(self.rows, columns=self.columns)

    def to_markdown(self, columns: list[str] | None = None, max_rows: int = 200, digits: int = 4) -> str:
        columns = columns or self.columns
        lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        for row in self.rows[:max_rows]:
            lines.append("| " + " | ".join(_short(row.get(column), digits) for column in columns) + " |")
        if len(self.rows) > max_rows:
            lines.append(f"\n({len(self.rows) - max_rows} more rows in the CSV file)")
        return "\n".join(lines)

    @classmethod
    def read_csv(cls, path: PathLike) -> "ResultsTable":
        with Path(path).open(newline="") as handle:
            reader = csv.reader(handle)
            columns = next(reader)
            rows = [dict(zip(columns, (_parse_text(text) for text in values))) for values in reader]
        return cls(rows, columns)


def _same(first, second) -> bool:
    if isinstance(first, float) and isinstance(second, float) and math.isnan(first) and math.isnan(second):
        return True
    return first == second


def _cell_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value)
    return str(value)


def _parse_text(text: str) -> Any:
    if text == "":
        return None
    for parse in (int, float):
        try:
            return parse(text)
        except ValueError:
            pass
    return text


def _parquet_value(value):
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value)
    return value


def _short(value, digits) -> str:
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return "" if value is None else str(value)


def summarize(raw: ResultsTable, group_columns: list[str]) -> ResultsTable:
    """Mean, standard deviation (ddof 1), standard error and count of ``value`` per group, and
    the mean and standard deviation of its logarithm (``log_mean``, ``log_std``).

    Groups keep the order of their first row; NaN values (a failed metric) are counted in
    ``failed`` and left out of the statistics.  The log statistics are NaN when a value is not
    positive (``log_std`` also with fewer than 2 values).
    """
    groups: dict[tuple, list[float]] = {}
    for row in raw.rows:
        groups.setdefault(tuple(row.get(column) for column in group_columns), []).append(row["value"])
    rows = []
    for key, values in groups.items():
        array = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        finite = array[np.isfinite(array)]
        count = int(finite.size)
        mean = float(finite.mean()) if count else math.nan
        std = float(finite.std(ddof=1)) if count > 1 else math.nan
        se = std / math.sqrt(count) if count > 1 else math.nan
        positive = count > 0 and bool((finite > 0).all())
        logs = np.log(finite) if positive else None
        log_mean = float(logs.mean()) if logs is not None else math.nan
        log_std = float(logs.std(ddof=1)) if logs is not None and count > 1 else math.nan
        row = dict(zip(group_columns, key))
        row.update(mean=mean, std=std, se=se, count=count, failed=int(array.size - count), log_mean=log_mean,
                   log_std=log_std)
        rows.append(row)
    return ResultsTable(rows, group_columns + list(STAT_COLUMNS))
