"""A query's result: one row per group, each statistic's cells with their intervals, in the caller's engine."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._guarantee import PrivacyGuarantee
from ._plan import QueryPlan
from ._statistics import Statistic

__all__ = ["QueryResult", "cells"]


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
        """The table's columns: the keys, then each statistic's cells (value, ``low``, ``high``) and ``level``."""
        rows = []
        for key in self.keys:
            parts = key if len(self.by) > 1 else (key,)
            row: dict[str, Any] = dict(zip((self.key_names.get(name, name) for name in self.by), parts))
            for planned in self.plan.statistics:
                row.update(_renamed(planned.statistic, cells(planned.statistic, self.results[planned.statistic.label][key])))
            rows.append(row)
        names = list(dict.fromkeys(name for row in rows for name in row))
        return {name: [row.get(name) for row in rows] for name in names}

    def table(self) -> Any:
        """One row per group, a DataFrame of the engine of the queried table (lazy for a lazy one)."""
        return self.engine.frame(self.columns())

    def describe(self) -> str:
        """The plan as run and the guarantee of the whole query."""
        return f"{self.plan.describe()}\nguarantee: {self.guarantee.describe()}"


def cells(statistic: Statistic, result: Any) -> dict[str, float]:
    """A group's cells of one statistic: its numbers with their interval ends, named after the column."""
    prefix = "" if statistic.column is None else f"{statistic.column} "
    if statistic.kind == "histogram":
        edges, shares = np.asarray(result.edges), np.asarray(result.probabilities)
        return {f"{prefix}share [{low:g}, {high:g})": float(share)
                for low, high, share in zip(edges[:-1], edges[1:], shares)}
    row = result.summary_row()
    if statistic.kind == "cdf":
        return {f"{prefix}cdf {name}": float(value) for name, value in row.items()}
    level = {"level": float(row["level"])} if "level" in row else {}
    if statistic.kind == "distinct":  # "count low" -> "city distinct low"
        row = {name.replace("count", statistic.stem, 1): value for name, value in row.items()}
    named = {(name if statistic.kind in ("count", "persons", "distinct") else f"{prefix}{name}"): float(value)
             for name, value in row.items() if name != "level"}
    return {**named, **level}


def _renamed(statistic: Statistic, row: dict[str, float]) -> dict[str, float]:
    """A statistic's cells, under its name (:meth:`~dpdist.queries.Statistic.named`) when it has one."""
    alias = statistic.name or ("persons" if statistic.kind == "persons" else None)
    if alias is None:
        return row
    stem = statistic.stem
    return {(alias + name[len(stem):] if name.startswith(stem) else name): value for name, value in row.items()}
