"""The aggregates a query releases, one class each (the contract: :mod:`dpdist.queries._statistics`), and their
builders.

Each builder (:func:`count`, :func:`count_if`, :func:`persons`, :func:`distinct`, :func:`sum`, :func:`mean`,
:func:`variance`, :func:`stddev`, :func:`minimum`, :func:`maximum`, :func:`quantiles`, :func:`histogram`, :func:`cdf`)
checks its public arguments when it is called (a bad one is refused by name before any
table is read) and returns its aggregate; the query gives it its share of the budget (``weight`` over the weights of
all the query's statistics) and runs its release once per group (:func:`dpdist.frame.group_release`'s array core).
A new aggregate is a new class here and its builder (the contract's docstring says what it carries).
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Callable, ClassVar

import numpy as np

from .._missing import missing_mask
from .._validation import Bounds, Described, Integer, Options, Probabilities, Text, check_param
from ._statistics import WEIGHT, SqlCall, Statistic, laplace_sd

__all__ = ["count", "count_if", "persons", "distinct", "sum", "mean", "variance", "stddev", "minimum", "maximum",
           "quantiles", "histogram", "cdf"]


def _central(name: str) -> Callable[..., Any]:
    from .. import central  # lazy: loads scipy (0.4-2 s)

    return getattr(central, name)


class Count(Statistic):
    """The number of rows per group (per person: of the rows kept), or of those whose ``column`` holds a value (SQL's
    ``COUNT(c)``: a per-row filter, then the count), :func:`dpdist.central.count`."""

    kind = "count"
    sql_forms: ClassVar[tuple[str, ...]] = ("COUNT(*)", "COUNT(c)")
    counts_rows = True
    gaussian = "count"
    reads = "values"
    keeps_missing = True

    @property
    def stem(self) -> str:
        return "count" if self.column is None else f"{self.written} count"

    def staged_rows(self, data, by, privacy_id, missing):
        """The rows kept (those whose column holds a value, for ``COUNT(c)``)."""
        return data if self.column is None else _rows_where(data, ~missing_mask(data[str(self.column)]))

    def release(self):
        return _central("count"), (), {}

    def expected(self, epsilon, n, rows_per_person, repeats):
        return {"metric": "count standard deviation", "error": laplace_sd(epsilon / rows_per_person)}

    def cell_name(self, name: str) -> str:
        return name.replace("count", self.stem, 1)

    @classmethod
    def from_sql(cls, call: SqlCall):
        one = call.column is None and call.numbers == (1,)
        if not call.distinct and (call.star or one):
            return count()
        column = call.of_column((0, 0))
        return None if column is None else count(column)


class CountIf(Count):
    """The number of rows per group whose boolean ``column`` is true (BigQuery's ``COUNTIF(condition)``: a per-row
    filter, then the count), :func:`dpdist.central.count`."""

    kind = "count_if"
    sql_forms = ("COUNTIF(condition)",)
    reads = "booleans"
    argument = "truth"

    def staged_rows(self, data, by, privacy_id, missing):
        """The rows kept whose column is true (missing: not counted)."""
        return _rows_where(data, np.asarray(data[str(self.column)] == True, dtype=bool))  # noqa: E712

    @classmethod
    def from_sql(cls, call: SqlCall):
        column = call.of_column((0, 0))
        return None if column is None else count_if(column)


class Persons(Count):
    """The number of distinct persons per group: a count of one row per person and group."""

    kind = "persons"
    sql_forms = ("COUNT(DISTINCT <privacy_id>)",)
    needs_privacy_id = True
    keeps_missing = False

    @property
    def stem(self) -> str:
        return "persons"

    def staged_rows(self, data, by, privacy_id, missing):
        """One row of each (person, group): the count of them is the number of persons of each group."""
        from ..central._contributions import person_codes  # lazy: loads scipy (0.4-2 s)

        ids = data[str(privacy_id)]
        codes = np.stack([_codes(data[name]) for name in by] + [person_codes("dpdist.query", ids, ids.size)])
        return _first_rows(data, np.arange(ids.size), codes)

    def contributions(self, max_contributions: int) -> int:
        return 1  # one row per person and group: the count is of distinct persons

    def left_out(self, rows: int, groups: int | None) -> int | None:
        return groups  # a person left out of a group is one person fewer in its count

    @classmethod
    def from_sql(cls, call: SqlCall):
        column = _distinct_column(call)
        return persons() if column is not None and column == call.privacy_id else None


class Distinct(Count):
    """The number of distinct values of a column per group: a count of the rows kept, deduplicated by value."""

    kind = "distinct"
    sql_forms = ("COUNT(DISTINCT c)", "APPROX_COUNT_DISTINCT(c)")
    chooses_groups = False
    keeps_missing = False

    @property
    def stem(self) -> str:
        return f"{self.written} distinct"

    def staged_rows(self, data, by, privacy_id, missing):
        """The rows kept that are each the first of its group and value: their count is the number of distinct
        values.  Deduplicating is 1-stable (a row added or removed adds or removes at most one distinct value), so a
        person's ``max_contributions`` rows per group move it by at most as many, a count's sensitivity; each value
        keeps the id of its first row (at most ``max_contributions`` per person and group still).  The values are
        compared as the query stages them (:mod:`~dpdist.queries._values`: each row's on its own), a missing one
        already left out or counted as the query's ``missing``."""
        rows = np.arange(len(data[str(self.column)]))
        return _first_rows(data, rows, np.stack([_codes(data[name]) for name in (*by, str(self.column))]))

    @classmethod
    def from_sql(cls, call: SqlCall):
        column = _distinct_column(call)
        return distinct(column) if column is not None and column != call.privacy_id else None


class Sum(Statistic):
    """The sum of a column clipped to its bounds per group, :func:`dpdist.central.sum`."""

    kind = "sum"
    sql_forms = ("SUM(c)",)
    gaussian = "sum"

    @property
    def stem(self) -> str:
        return f"{self.written} sum"

    def release(self):
        return _central("sum"), (), dict(self.options)

    def expected(self, epsilon, n, rows_per_person, repeats):
        bound = max(map(abs, self.options["bounds"]))
        return {"metric": "sum standard deviation", "error": math.sqrt(2) * bound / (epsilon / rows_per_person)}

    def value_sensitivity(self) -> float:
        return max(map(abs, self.options["bounds"]))

    @classmethod
    def from_sql(cls, call: SqlCall):
        column = call.of_column((0, 0))
        return None if column is None else sum(column, call.bounds(column))


class Mean(Statistic):
    """The mean of a column clipped to its bounds per group, :func:`dpdist.central.mean`."""

    kind = "mean"
    sql_forms = ("AVG(c)", "MEAN(c)")
    gaussian = "mean"
    laplace_parts = 2

    @property
    def stem(self) -> str:
        return f"{self.written} mean"

    def release(self):
        return _central("mean"), (), dict(self.options)

    def expected(self, epsilon, n, rows_per_person, repeats):
        """At its worst, a mean at a bound: the noisy sum's and the noisy count's halves of the budget."""
        record, (low, high) = epsilon / rows_per_person, self.options["bounds"]
        radius = (high - low) / 2
        spread = math.sqrt(2 * (radius / (record / 2)) ** 2 + radius**2 * laplace_sd(record / 2) ** 2) / n
        return {"metric": "mean standard deviation (at most)", "error": spread}

    def value_sensitivity(self) -> float:
        low, high = self.options["bounds"]
        return (high - low) / 2  # the centred sum's, of the noisy sum over the noisy count

    def gaussian_expected(self, epsilon, delta, n, max_groups, rows_per_person):
        """At its worst, a mean at a bound: its centred sum's noise and its count's, over ``n``."""
        _, centred = self.noise_sds(epsilon, delta, max_groups, rows_per_person)
        return {"metric": "mean standard deviation (at most, Gaussian)",
                "error": math.sqrt(2) * centred / n}  # the count's noise is the centred sum's over the radius

    @classmethod
    def from_sql(cls, call: SqlCall):
        column = call.of_column((0, 0))
        return None if column is None else mean(column, call.bounds(column))


class Variance(Statistic):
    """The variance of a column clipped to its bounds per group, :func:`dpdist.central.variance` (``ddof=1``: the
    sample variance, SQL's ``VARIANCE`` and ``VAR_SAMP``; 0: ``VAR_POP``)."""

    kind = "variance"
    sql_forms = ("VARIANCE(c)", "VAR_SAMP(c)", "VAR_POP(c)")

    @property
    def stem(self) -> str:
        return f"{self.written} {self.kind}"

    def release(self):
        return _central("variance"), (), dict(self.options)

    def expected(self, epsilon, n, rows_per_person, repeats):
        """At its worst (a mean at a bound): the delta method over the three noisy sums, each at a third."""
        third, (low, high) = epsilon / rows_per_person / 3, self.options["bounds"]
        radius = (high - low) / 2
        squares, total = math.sqrt(2) * radius**2 / third, math.sqrt(2) * radius / third
        spread = math.sqrt(squares**2 + (2 * radius * total) ** 2 + (radius**2 * laplace_sd(third)) ** 2) / n
        return {"metric": "variance standard deviation (at most)", "error": spread}

    @classmethod
    def from_sql(cls, call: SqlCall):
        column = call.of_column((0, 0))
        ddof = 0 if call.name.endswith("_POP") else 1
        builder = stddev if cls.kind == "stddev" else variance
        return None if column is None else builder(column, call.bounds(column), ddof=ddof)


class Stddev(Variance):
    """The standard deviation of a column clipped to its bounds per group: the square root of
    :func:`dpdist.central.variance`'s release and of its interval's ends (post-processing)."""

    kind = "stddev"
    sql_forms = ("STDDEV(c)", "STDDEV_SAMP(c)", "STDDEV_POP(c)")

    def cells(self, result):
        return {name: (math.sqrt(value) if name != "level" else value) for name, value in super().cells(result).items()}

    def cell_name(self, name: str) -> str:
        return f"{self.written} {name.replace('variance', 'stddev')}"

    def expected(self, epsilon, n, rows_per_person, repeats):
        """At most the square root of the variance's (|sqrt a - sqrt b| <= sqrt |a - b|, and Jensen)."""
        variance_error = super().expected(epsilon, n, rows_per_person, repeats)["error"]
        return {"metric": "standard deviation's mean absolute error (at most)", "error": math.sqrt(variance_error)}


class Minimum(Statistic):
    """The smallest value of a column per group, :func:`dpdist.central.minimum` (the exponential mechanism at rank 0:
    a value with few rows below it, between the bound and the smallest value more often than not)."""

    kind = "min"
    sql_forms = ("MIN(c)",)

    @property
    def stem(self) -> str:
        return f"{self.written} {self.kind}"

    def release(self):
        return _central("minimum" if self.kind == "min" else "maximum"), (), dict(self.options)

    def expected(self, epsilon, n, rows_per_person, repeats):
        """The rows beyond the value released, at most, with probability 0.95 (over ``n``): a rank, from public
        parameters (:mod:`dpdist.central.extremes`)."""
        ranks = 2 * (math.log(2**32 + 1) + math.log(20)) / (epsilon / rows_per_person)
        return {"metric": "share of the rows beyond it (95% bound)", "error": builtins.min(ranks / n, 1.0)}

    def cells(self, result):
        return self.renamed({self.stem: float(result.values[0])})

    @classmethod
    def from_sql(cls, call: SqlCall):
        column = call.of_column((0, 0))
        return None if column is None else (minimum if cls.kind == "min" else maximum)(column, call.bounds(column))


class Maximum(Minimum):
    """The largest value of a column per group, :func:`dpdist.central.maximum` (at rank n)."""

    kind = "max"
    sql_forms = ("MAX(c)",)


class Quantiles(Statistic):
    """Quantiles of a column per group, all from one :func:`dpdist.central.quantiles` release (BigQuery's
    ``APPROX_QUANTILES(c, n)``: the n - 1 inner quantiles at 1/n, 2/n, ...; its two ends are ``MIN`` and ``MAX``)."""

    kind = "quantiles"
    sql_forms = ("QUANTILES(c, q, ...)", "QUANTILE(c, q)", "MEDIAN(c)", "PERCENTILE_CONT(c, q)",
                 "PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY c)", "PERCENTILE_DISC(c, q)", "APPROX_QUANTILES(c, n)")

    def release(self):
        return _central("quantiles"), (), {"q": self.options["q"], "bounds": self.options["bounds"]}

    def value_cell(self) -> str | None:
        """The cell of its one quantile (None for several)."""
        levels = self.options["q"]
        return self.renamed({f"{self.written} {levels[0]:g} quantile": 0.0}).popitem()[0] if len(levels) == 1 else None

    def expected(self, epsilon, n, rows_per_person, repeats):
        return self.simulated(epsilon, n, rows_per_person, repeats, "quantile_mae")

    @classmethod
    def from_sql(cls, call: SqlCall):
        shapes = {"QUANTILES": (1, 999), "QUANTILE": (1, 1), "MEDIAN": (0, 0), "PERCENTILE_CONT": (1, 1),
                  "PERCENTILE_DISC": (1, 1), "APPROX_QUANTILES": (1, 1)}
        column = call.of_column(shapes[call.name])
        if column is None:
            return None
        levels = list(call.numbers) or [0.5]
        if call.name == "APPROX_QUANTILES":
            parts = check_param("APPROX_QUANTILES", "number of quantiles", levels[0], Integer(low=2, high=1000))
            levels = [index / parts for index in range(1, parts)]
        return quantiles(column, levels, call.bounds(column))


class Histogram(Statistic):
    """The shares of equal-width bins of a column's bounds per group, :func:`dpdist.central.histogram_queries`."""

    kind = "histogram"
    sql_forms = ("HISTOGRAM(c, bins)",)
    gaussian = "histogram"

    def release(self):
        return _central("histogram_queries"), (), {"bounds": self.options["bounds"], "bins": self.options["bins"],
                                                   "neighbouring": "add-remove"}

    def value_cell(self) -> None:
        return None

    def cells(self, result):
        edges, shares = np.asarray(result.edges), np.asarray(result.probabilities)
        return self.renamed({f"{self.written} share [{low:g}, {high:g})": float(share)
                             for low, high, share in zip(edges[:-1], edges[1:], shares)})

    @classmethod
    def from_sql(cls, call: SqlCall):
        column = call.of_column((1, 1))
        return None if column is None else histogram(column, call.numbers[0], call.bounds(column))


class Cdf(Statistic):
    """The CDF of a column per group, :func:`dpdist.central.cdf` (its median, mean and spread in the table)."""

    kind = "cdf"
    sql_forms = ("CDF(c)",)

    def release(self):
        return _central("cdf"), (), dict(self.options)

    def value_cell(self) -> None:
        return None

    def cell_name(self, name: str) -> str:
        return f"{self.written} cdf {name}"

    @classmethod
    def from_sql(cls, call: SqlCall):
        column = call.of_column((0, 0))
        return None if column is None else cdf(column, call.bounds(column))


def _codes(values: np.ndarray) -> np.ndarray:
    """Each value's index among the column's distinct values (the values as the query stages them: numbers, or
    strings, :mod:`~dpdist.queries._values`)."""
    return np.unique(values, return_inverse=True)[1].reshape(-1)


def _rows_where(data: dict[str, np.ndarray], keep: np.ndarray) -> dict[str, np.ndarray]:
    return {name: array[keep] for name, array in data.items()}


def _distinct_column(call: SqlCall) -> str | None:
    """The column of ``COUNT(DISTINCT c)`` or ``APPROX_COUNT_DISTINCT(c)``."""
    return call.of_column((0, 0)) if call.name == "APPROX_DISTINCT" else call.of_distinct()


def _first_rows(data: dict[str, np.ndarray], rows: np.ndarray, codes: np.ndarray) -> dict[str, np.ndarray]:
    """The rows ``rows`` of ``data`` that are each the first of their codes' column (``codes``: one row per code)."""
    first = np.sort(np.unique(codes, axis=1, return_index=True)[1]) if rows.size else rows
    return {name: array[rows[first]] for name, array in data.items()}


#: a column, by its name
_COLUMN = Described(Text(), "the name of a column (a non-empty string)")


def _column(owner: str, column: Any) -> str:
    return check_param(owner, "column", column, _COLUMN)


def _bounds(owner: str, bounds: Any) -> tuple[float, float]:
    return tuple(float(value) for value in check_param(owner, "bounds", bounds, Bounds()))  # type: ignore[return-value]


def _weight(owner: str, weight: Any) -> float:
    return check_param(owner, "weight", weight, WEIGHT)


def count(column: str | None = None, *, weight: float = 1.0) -> Statistic:
    """The number of rows per group (per person: of the rows kept), :func:`dpdist.central.count`; with ``column``,
    of the rows whose ``column`` holds a value (SQL's ``COUNT(column)``; a missing value is not counted, never
    refused)."""
    return Count(None if column is None else _column("count", column), {}, _weight("count", weight))


def count_if(column: str, *, weight: float = 1.0) -> Statistic:
    """The number of rows per group whose boolean ``column`` is true (BigQuery's ``COUNTIF``): a per-row filter, then
    :func:`dpdist.central.count` (missing: not counted)."""
    return CountIf(_column("count_if", column), {}, _weight("count_if", weight))


def persons(*, weight: float = 1.0) -> Statistic:
    """The number of distinct persons per group (SQL's ``COUNT(DISTINCT <privacy_id>)``): a
    :func:`dpdist.central.count` of the rows kept when each person keeps one row per group, so one person changes
    it by at most one in each of their ``max_groups`` groups.  It needs the query's ``privacy_id``."""
    return Persons(None, {}, _weight("persons", weight))


def distinct(column: str, *, weight: float = 1.0) -> Statistic:
    """The number of distinct values of ``column`` per group (SQL's ``COUNT(DISTINCT column)``): a
    :func:`dpdist.central.count` of the rows kept, deduplicated by value in each group.  Adding or removing a row
    adds or removes at most one distinct value, so one person of ``max_contributions`` rows per group changes it by
    at most ``max_contributions``, as a count; its noise is a count's.  Values compare as given (numbers by value,
    strings as written); a missing value is what the query's ``missing`` says (refused, left out, or that value)."""
    return Distinct(_column("distinct", column), {}, _weight("distinct", weight))


def sum(column: str, bounds: tuple[float, float], *, weight: float = 1.0) -> Statistic:
    """The sum of ``column`` clipped to ``bounds`` per group, :func:`dpdist.central.sum`."""
    return Sum(_column("sum", column), {"bounds": _bounds("sum", bounds)}, _weight("sum", weight))


def mean(column: str, bounds: tuple[float, float], *, weight: float = 1.0) -> Statistic:
    """The mean of ``column`` clipped to ``bounds`` per group, :func:`dpdist.central.mean`."""
    return Mean(_column("mean", column), {"bounds": _bounds("mean", bounds)}, _weight("mean", weight))


def variance(column: str, bounds: tuple[float, float], *, ddof: int = 0, weight: float = 1.0) -> Statistic:
    """The variance of ``column`` clipped to ``bounds`` per group, :func:`dpdist.central.variance` (``ddof=0``: the
    population variance, as NumPy's; 1: the sample variance, SQL's ``VARIANCE``)."""
    return Variance(_column("variance", column), {"bounds": _bounds("variance", bounds),
                                                  "ddof": check_param("variance", "ddof", ddof, Options((0, 1)))},
                    _weight("variance", weight))


def stddev(column: str, bounds: tuple[float, float], *, ddof: int = 0, weight: float = 1.0) -> Statistic:
    """The standard deviation of ``column`` clipped to ``bounds`` per group: the square root of :func:`variance`'s
    release and of its interval (post-processing)."""
    return Stddev(_column("stddev", column), {"bounds": _bounds("stddev", bounds),
                                              "ddof": check_param("stddev", "ddof", ddof, Options((0, 1)))},
                  _weight("stddev", weight))


def minimum(column: str, bounds: tuple[float, float], *, weight: float = 1.0) -> Statistic:
    """The smallest value of ``column`` per group, :func:`dpdist.central.minimum` (SQL's ``MIN``): a value with few
    rows below it, as close to the smallest value as the lower bound is (most often between them)."""
    return Minimum(_column("minimum", column), {"bounds": _bounds("minimum", bounds)}, _weight("minimum", weight))


def maximum(column: str, bounds: tuple[float, float], *, weight: float = 1.0) -> Statistic:
    """The largest value of ``column`` per group, :func:`dpdist.central.maximum` (SQL's ``MAX``), as
    :func:`minimum`."""
    return Maximum(_column("maximum", column), {"bounds": _bounds("maximum", bounds)}, _weight("maximum", weight))


def quantiles(column: str, q: Any, bounds: tuple[float, float], *, weight: float = 1.0) -> Statistic:
    """The quantiles ``q`` (each in (0, 1)) of ``column`` per group, all from one :func:`dpdist.central.quantiles`
    release (its tree: many quantiles cost the budget of one)."""
    levels = check_param("quantiles", "q", q, Probabilities(closed=False))
    return Quantiles(_column("quantiles", column), {"q": tuple(float(level) for level in levels),
                                                    "bounds": _bounds("quantiles", bounds)}, _weight("quantiles", weight))


def histogram(column: str, bins: int, bounds: tuple[float, float], *, weight: float = 1.0) -> Statistic:
    """The shares of ``bins`` equal-width bins of ``bounds`` per group, :func:`dpdist.central.histogram_queries`
    (under add/remove neighbours: the group's size stays private)."""
    return Histogram(_column("histogram", column),
                     {"bins": check_param("histogram", "bins", bins, Integer(low=1, high=2**16)),
                      "bounds": _bounds("histogram", bounds)}, _weight("histogram", weight))


def cdf(column: str, bounds: tuple[float, float], *, weight: float = 1.0) -> Statistic:
    """The CDF of ``column`` per group, :func:`dpdist.central.cdf` (its median, mean and spread in the table)."""
    return Cdf(_column("cdf", column), {"bounds": _bounds("cdf", bounds)}, _weight("cdf", weight))
