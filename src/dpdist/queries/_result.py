"""A query's result: one row per group, each statistic's cells with their intervals, in the caller's engine."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._guarantee import PrivacyGuarantee
from ._plan import QueryPlan

__all__ = ["QueryResult"]


@dataclass(frozen=True, repr=False)
class QueryResult:
    """What a query released.

    Attributes
    ----------
    by : tuple of str
        The key columns (empty for a query without ``group_by``).
    keys : list
        The groups released, in order: the public keys given, or those chosen privately (``[0]``, the whole table,
        without ``group_by``).
    results : dict
        ``{statistic label: {key: release}}``: each group's ``dpdist.central`` result (intervals, details, JSON).
    guarantee : PrivacyGuarantee
        What the whole query states: the selection (private keys) and every statistic, composed sequentially.
    plan : QueryPlan
        How the budget was split.
    key_names : dict
        The key columns' names in the table, where they are not their own (SQL's ``AS``).
    """

    by: tuple[str, ...]
    keys: list
    results: dict[str, dict[Any, Any]]
    guarantee: PrivacyGuarantee
    plan: QueryPlan
    engine: Any
    key_names: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        return (f"QueryResult(by={self.by!r}, groups={len(self.keys)}, statistics={list(self.results)}, "
                f"guarantee={self.guarantee.describe()!r})")

    def columns(self) -> dict[str, list]:
        """The table's columns: the keys, then each statistic's cells (value, ``low``, ``high``) and ``level``; with
        no group, the same columns and no row (a table of every engine)."""
        if not self.keys:
            return {name: [] for name in self.names()}
        rows = []
        for key in self.keys:
            parts = key if len(self.by) > 1 else (key,)
            row: dict[str, Any] = dict(zip((self.key_names.get(name, name) for name in self.by), parts))
            for planned in self.plan.statistics:
                row.update(planned.statistic.cells(self.results[planned.statistic.label][key]))
            rows.append(row)
        names = list(dict.fromkeys(name for row in rows for name in row))
        return {name: [row.get(name) for row in rows] for name in names}

    def names(self) -> list[str]:
        """The table's columns' names, from the public arguments alone (:meth:`Statistic.cell_names`)."""
        keys = [self.key_names.get(name, name) for name in self.by]
        return list(dict.fromkeys([*keys, *(name for planned in self.plan.statistics
                                            for name in planned.statistic.cell_names())]))

    def kept(self, rows: Any) -> "QueryResult":
        """This result with only the groups of the rows ``rows`` (a boolean per row of :meth:`columns`) marks: SQL's
        ``HAVING`` on released values, a post-processing (the guarantee is unchanged)."""
        keep = np.asarray(rows, dtype=bool)
        keys = [key for key, kept in zip(self.keys, keep) if kept]
        results = {label: {key: groups[key] for key in keys} for label, groups in self.results.items()}
        return replace(self, keys=keys, results=results)

    def table(self) -> Any:
        """One row per group, a DataFrame of the engine of the queried table (lazy for a lazy one)."""
        return self.engine.frame(self.columns())

    def describe(self) -> str:
        """The plan as run and the guarantee of the whole query."""
        return f"{self.plan.describe()}\nguarantee: {self.guarantee.describe()}"
