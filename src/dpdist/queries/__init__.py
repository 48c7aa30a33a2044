"""Queries: several statistics of a table, per group, under one budget, as expressions or as SQL.

>>> from dpdist.queries import count, histogram, quantiles                # doctest: +SKIP
>>> q = (dpdist.query(df, epsilon=1.0).group_by("region", keys=regions)  # doctest: +SKIP
...      .agg(quantiles("income", [0.1, 0.5, 0.9], bounds=(0, 300_000)), histogram("age", 8, (0, 80)), count()))
>>> print(q.explain(n=5_000))                                             # doctest: +SKIP
>>> q.release().table()                                                   # doctest: +SKIP

A query runs over any frame narwhals reads and returns its table in that engine; its budget is split across its
statistics by a rule it shows (:mod:`dpdist.queries._plan`: equal shares by default, ``weight=`` to change them);
each statistic is a ``dpdist.central`` release per group (:func:`dpdist.frame.group_release`).  ``dpdist.sql`` builds
the same query from one SELECT.  See ``docs/how-to/queries.md``.
"""

from ._plan import QueryPlan
from ._query import Query, query
from ._result import QueryResult
from ._sql import sql
from ._aggregates import (cdf, count, count_if, distinct, histogram, maximum, mean, minimum, persons, quantiles, stddev,
                          sum, variance)
from ._statistics import Statistic

__all__ = ["query", "sql", "Query", "QueryPlan", "QueryResult", "Statistic", "count", "count_if", "persons", "distinct",
           "sum", "mean", "variance", "stddev", "minimum", "maximum", "quantiles", "histogram", "cdf"]
