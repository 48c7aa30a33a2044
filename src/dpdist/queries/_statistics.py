"""The statistics a query selects: which ``dpdist.central`` release each runs, on which column, with what weight.

Each builder (:func:`count`, :func:`persons`, :func:`distinct`, :func:`sum`, :func:`mean`, :func:`quantiles`,
:func:`histogram`, :func:`cdf`) checks its public arguments when it is called (a bad one is refused by name
before any table is read) and returns a :class:`Statistic`; the query gives it its share of the budget (``weight``
over the weights of all the query's statistics) and runs its release once per group
(:func:`dpdist.frame.group_release`).
"""

from __future__ import annotations

import builtins
import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from .._validation import Bounds, Integer, Interval, check_param
from ..errors import InvalidParameterError

__all__ = ["Statistic", "count", "persons", "distinct", "sum", "mean", "quantiles", "histogram", "cdf", "WEIGHT"]

#: ``weight``: a finite float > 0 (the statistic's share of the budget is its weight over the query's total)
WEIGHT = Interval(0.0, math.inf, closed="neither")


@dataclass(frozen=True)
class Statistic:
    """One statistic of a query.

    Attributes
    ----------
    kind : str
        ``"count"``, ``"persons"``, ``"distinct"``, ``"sum"``, ``"mean"``, ``"quantiles"``, ``"histogram"`` or ``"cdf"``.
    column : str or None
        The column released (``None`` for :func:`count`, which counts rows).
    options : dict
        The release's public arguments (``bounds``, ``q``, ``bins``).
    weight : float
        Its share of the budget, relative to the query's other statistics.
    name : str or None
        Its name in the released table (:meth:`named`), else ``kind`` and ``column`` name its cells.
    """

    kind: str
    column: str | None
    options: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0
    name: str | None = None

    @property
    def label(self) -> str:
        """``kind(column)``, or ``count()``: the name of the statistic in a plan and in errors."""
        return f"{self.kind}({self.column or ''})"

    def release(self) -> tuple[Callable[..., Any], tuple, dict[str, Any]]:
        """``(function, args after the data, keyword arguments)`` of its ``dpdist.central`` release, budget aside."""
        from .. import central  # lazy: loads scipy (0.4-2 s)

        options = dict(self.options)
        if self.kind == "quantiles":
            return central.quantiles, (), {"q": options["q"], "bounds": options["bounds"]}
        if self.kind == "histogram":
            return central.histogram_queries, (), {"bounds": options["bounds"], "bins": options["bins"],
                                                   "neighbouring": "add-remove"}
        functions: dict[str, Callable[..., Any]] = {"count": central.count, "persons": central.count,
                                                    "distinct": central.count,
                                                    "sum": central.sum, "mean": central.mean,
                                                    "cdf": central.cdf}
        return functions[self.kind], (), options

    def weighted(self, weight: Any) -> "Statistic":
        """This statistic with another ``weight``."""
        return replace(self, weight=check_param(f"{self.kind}", "weight", weight, WEIGHT))

    def named(self, name: str) -> "Statistic":
        """This statistic named ``name`` in the released table (SQL's ``AS``): a count's, sum's or mean's cell is
        ``name`` (its interval ``name low``, ``name high``); the cells of quantiles, a CDF or a histogram read
        ``name`` where they would read the column's name (``name 0.5 quantile``)."""
        if not isinstance(name, str) or not name.strip():
            raise InvalidParameterError(f"The 'name' argument of Statistic.named must be a non-empty string. "
                                        f"Got {name!r:.80} instead.")
        return replace(self, name=name)

    @property
    def stem(self) -> str:
        """What its cells' names start with, which :meth:`named` replaces."""
        stems = {"count": "count", "persons": "count", "distinct": f"{self.column} distinct",
                 "sum": f"{self.column} sum", "mean": f"{self.column} mean"}
        return stems.get(self.kind, f"{self.column}")


def _column(owner: str, column: Any) -> str:
    if not isinstance(column, str) or not column:
        raise InvalidParameterError(f"The 'column' argument of {owner} must be the name of a column (a string). "
                                    f"Got {column!r} instead.")
    return column


def _bounds(owner: str, bounds: Any) -> tuple[float, float]:
    return tuple(float(value) for value in check_param(owner, "bounds", bounds, Bounds()))  # type: ignore[return-value]


def count(*, weight: float = 1.0) -> Statistic:
    """The number of rows per group (per person: of the rows kept), :func:`dpdist.central.count`."""
    return Statistic("count", None, {}, check_param("count", "weight", weight, WEIGHT))


def persons(*, weight: float = 1.0) -> Statistic:
    """The number of distinct persons per group (SQL's ``COUNT(DISTINCT <privacy_id>)``): a
    :func:`dpdist.central.count` of the rows kept when each person keeps one row per group, so one person changes
    it by at most one in each of their ``max_groups`` groups.  It needs the query's ``privacy_id``."""
    return Statistic("persons", None, {}, check_param("persons", "weight", weight, WEIGHT))


def distinct(column: str, *, weight: float = 1.0) -> Statistic:
    """The number of distinct values of ``column`` per group (SQL's ``COUNT(DISTINCT column)``): a
    :func:`dpdist.central.count` of the rows kept, deduplicated by value in each group.  Adding or removing a row
    adds or removes at most one distinct value, so one person of ``max_contributions`` rows per group changes it by
    at most ``max_contributions``, as a count; its noise is a count's.  Values compare as given (numbers by value,
    strings as written); a missing value is what the query's ``missing`` says (refused, left out, or that value)."""
    return Statistic("distinct", _column("distinct", column), {}, check_param("distinct", "weight", weight, WEIGHT))


def sum(column: str, bounds: tuple[float, float], *, weight: float = 1.0) -> Statistic:
    """The sum of ``column`` clipped to ``bounds`` per group, :func:`dpdist.central.sum`."""
    return Statistic("sum", _column("sum", column), {"bounds": _bounds("sum", bounds)},
                     check_param("sum", "weight", weight, WEIGHT))


def mean(column: str, bounds: tuple[float, float], *, weight: float = 1.0) -> Statistic:
    """The mean of ``column`` clipped to ``bounds`` per group, :func:`dpdist.central.mean`."""
    return Statistic("mean", _column("mean", column), {"bounds": _bounds("mean", bounds)},
                     check_param("mean", "weight", weight, WEIGHT))


def quantiles(column: str, q: Any, bounds: tuple[float, float], *, weight: float = 1.0) -> Statistic:
    """The quantiles ``q`` (each in (0, 1)) of ``column`` per group, all from one :func:`dpdist.central.quantiles`
    release (its tree: many quantiles cost the budget of one)."""
    levels = np.atleast_1d(np.asarray(q, dtype=object))
    if levels.ndim != 1 or not levels.size or not builtins.all(
            isinstance(level, (int, float)) and not isinstance(level, bool) and 0 < level < 1 for level in levels):
        raise InvalidParameterError(f"The 'q' argument of quantiles must be one or more numbers in (0, 1). "
                                    f"Got {q!r} instead.")
    return Statistic("quantiles", _column("quantiles", column),
                     {"q": tuple(float(level) for level in levels), "bounds": _bounds("quantiles", bounds)},
                     check_param("quantiles", "weight", weight, WEIGHT))


def histogram(column: str, bins: int, bounds: tuple[float, float], *, weight: float = 1.0) -> Statistic:
    """The shares of ``bins`` equal-width bins of ``bounds`` per group, :func:`dpdist.central.histogram_queries`
    (under add/remove neighbours: the group's size stays private)."""
    return Statistic("histogram", _column("histogram", column),
                     {"bins": check_param("histogram", "bins", bins, Integer(low=1, high=2**16)),
                      "bounds": _bounds("histogram", bounds)}, check_param("histogram", "weight", weight, WEIGHT))


def cdf(column: str, bounds: tuple[float, float], *, weight: float = 1.0) -> Statistic:
    """The CDF of ``column`` per group, :func:`dpdist.central.cdf` (its median, mean and spread in the table)."""
    return Statistic("cdf", _column("cdf", column), {"bounds": _bounds("cdf", bounds)},
                     check_param("cdf", "weight", weight, WEIGHT))
