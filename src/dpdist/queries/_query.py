"""``dpdist.query(table, ...)``: several statistics of a table, per group, under one budget.

A :class:`Query` is built in steps that read no data (``group_by``, ``agg``), shows its plan before any data is read
(``explain``: each statistic's share and expected error at a stated n), and runs once (``release``): the columns are
read in one query (a missing value or key refused there), the whole budget is charged to the session, and each
statistic runs :func:`dpdist.frame.group_release` with its share (:mod:`dpdist.queries._plan`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._guarantee import PrivacyGuarantee, sequential
from .._validation import CENTRAL_EPSILON, Implies, Integer, Interval, Optional, check_param, validate_params
from ..errors import DPDistError, InvalidParameterError
from ..frame import group_release
from .._missing import missing_mask, missing_policy
from ..frame._groups import check_missing_key_rows
from ..frame._tables import Engine, _computing, _staging_backend, check_columns, open_frame
from ._plan import QueryPlan, plan_of
from ._result import QueryResult
from ._scale import cluster_bounded, cluster_of, kept_rows
from ._statistics import Statistic

if TYPE_CHECKING:
    from ..budget import BudgetSession

__all__ = ["Query", "query"]

#: the selection's share of the budget when the keys are private and ``selection_epsilon`` is not given
SELECTION_SHARE = 0.1
#: a constant column of zeros: the key of a query without ``group_by`` (one group, the whole table), and what a count
#: counts (its values are not read, only their number)
_ZEROS = "__dpdist_zeros__"


@dataclass(frozen=True)
class Query:
    """A query over one table: its privacy unit and budget, its groups and statistics (see :func:`query`)."""

    table: Any = field(repr=False)
    epsilon: float
    privacy_id: str | None = None
    max_contributions: int = 1
    max_groups: int = 1
    session: Any = field(default=None, repr=False)
    rng: Any = None
    missing: str | float = "refuse"
    by: tuple[str, ...] = ()
    keys: list | None = None
    selection: tuple[float, float] | None = None
    statistics: tuple[Statistic, ...] = ()
    key_names: dict = field(default_factory=dict)  # the key columns' names in the released table (SQL's AS)

    @validate_params({}, owner="Query.group_by", relations=(Implies(
        "selection_epsilon", (None,), "keys", None, why="it chooses private keys: give it with keys=None, or give the "
        "public keys alone", counterexample={"keys": ["north"], "selection_epsilon": 0.1}),))
    def group_by(self, *by: str, keys: list | None = None, selection_epsilon: float | None = None,
                 selection_delta: float = 1e-6) -> "Query":
        """Groups by the columns ``by``: the public ``keys`` (values, or tuples for several columns; every listed
        group is released, an empty one too), or, with ``keys=None``, groups chosen privately
        (``selection_epsilon``, default a tenth of the budget, and ``selection_delta``)."""
        if not by or not all(isinstance(name, str) for name in by):
            raise InvalidParameterError(f"Query.group_by takes the names of the key columns. Got {by!r} instead.")
        if keys is not None:  # without selection_epsilon: the table
            return dataclasses.replace(self, by=tuple(by), keys=list(keys), selection=None)
        chosen = self.epsilon * SELECTION_SHARE if selection_epsilon is None else selection_epsilon
        chosen = check_param("Query.group_by", "selection_epsilon", chosen,
                             Interval(0.0, self.epsilon, closed="neither"))
        delta = check_param("Query.group_by", "selection_delta", selection_delta, Interval(0.0, 1.0, closed="neither"))
        return dataclasses.replace(self, by=tuple(by), keys=None, selection=(float(chosen), float(delta)))

    def agg(self, *statistics: Statistic) -> "Query":
        """The statistics to release (:func:`dpdist.queries.count`, ``persons``, ``distinct``, ``sum``, ``mean``,
        ``quantiles``, ``histogram``, ``cdf``), each once per group."""
        for statistic in statistics:
            if not isinstance(statistic, Statistic):
                raise InvalidParameterError(f"Query.agg takes statistics (dpdist.queries.count(), quantiles(...), "
                                            f"...). Got {statistic!r:.80} instead.")
        if self.privacy_id is None and any(statistic.kind == "persons" for statistic in statistics):
            raise InvalidParameterError("Query.agg: persons() counts distinct persons; give the query the column of "
                                        "the persons' ids, privacy_id=..., or count rows with count().")
        labels = [statistic.label for statistic in (*self.statistics, *statistics)]
        if len(set(labels)) != len(labels):
            raise InvalidParameterError(f"Query.agg: each statistic once per column. Got {labels} (merge the "
                                        "quantiles of a column into one quantiles(...)).")
        return dataclasses.replace(self, statistics=(*self.statistics, *statistics))

    def plan(self) -> QueryPlan:
        """The split of the budget (public parameters only)."""
        if not self.statistics:
            raise InvalidParameterError("The query has no statistic: add some with .agg(count(), quantiles(...)).")
        if self.selection and self.by and all(statistic.kind == "distinct" for statistic in self.statistics):
            raise InvalidParameterError("Query.plan: private keys are chosen by the persons of each group, which "
                                        "distinct() does not keep; add count() or persons(), or give the keys.")
        unit = "record" if self.privacy_id is None else "person"
        return plan_of(self.statistics, self.epsilon, self.selection, unit, self.max_groups, self.max_contributions)

    def explain(self, n: int, *, repeats: int = 10) -> str:
        """The plan with each statistic's expected error at ``n`` rows per group, before any data is read."""
        return self.plan().describe(n) if repeats == 10 else _described(self.plan(), n, repeats)

    def release(self) -> QueryResult:
        """Check the table's schema, read the columns once (a missing value or key refused there), charge the
        session, release every statistic per group; the result in the table's engine."""
        plan = self.plan()
        table = self._checked()
        seeds = _seeds(self.rng, len(plan.statistics) + 1)  # the last: the bounding's
        bounding = None if seeds[-1] is None else int(seeds[-1].integers(0, 2**63))
        data = self._staged(table, bounding)  # missing values and keys refused here, before the charge
        staging = Engine(_staging_backend(), False)
        with _computing("dpdist.query", staging, [name for name in data if name != _ZEROS]):  # mixed value types
            staged = staging.frame(data)
        stated = PrivacyGuarantee(plan.epsilon, plan.selection[1] if plan.selection else 0.0, "add-remove",
                                  "central", unit=plan.unit)
        if self.session is not None:
            self.session.charge(stated, f"query of {[p.statistic.label for p in plan.statistics]} by {list(self.by)}")
        keys, results, guarantees = (self.keys if self.by else [0]), {}, []
        # the groups are chosen (keys=None) by the first statistic run: one on the rows kept, not deduplicated
        for index in sorted(range(len(seeds) - 1), key=lambda i: plan.statistics[i].statistic.kind == "distinct"):
            planned, seed, rows = plan.statistics[index], seeds[index], staged
            if planned.statistic.kind == "distinct":
                rows = staging.frame(_distinct_rows(data, str(planned.statistic.column), self.by, self.missing))
            grouped = self._grouped(rows, planned, keys, seed)
            keys = list(grouped.keys()) if keys is None else keys
            results[planned.statistic.label] = grouped.results
            guarantees.append(grouped.guarantee)
            if not keys:  # the selection chose no group: nothing is left to release, the charge bounds what was spent
                empty: dict[str, dict] = {planned.statistic.label: {} for planned in plan.statistics}
                return QueryResult(self.by, [], empty, stated, plan, table.engine, self.key_names)
        results = {planned.statistic.label: results[planned.statistic.label] for planned in plan.statistics}
        total = sequential(guarantees)
        if not total.covers(stated):
            raise DPDistError(f"query: spent {total.describe()}, not the {stated.describe()} planned (a bug).")
        return QueryResult(self.by, keys or [], results, total, plan, table.engine, self.key_names)

    def _checked(self):
        """The table, its key, id and value columns checked against its schema (no data read)."""
        owner = "dpdist.query"
        table = open_frame(owner, self.table)
        for argument, names in (("group_by", self.by), ("privacy_id", [self.privacy_id] if self.privacy_id else []),
                                ("column", [s.column for s in self.statistics if s.column])):
            if names:
                check_columns(owner, table, list(names), argument)
        return table

    def _staged(self, table, bounding: int | None) -> dict[str, np.ndarray]:
        """The columns the query needs, read in one query (with a column of zeros); with
        ``privacy_id`` only each person's rows kept (:mod:`dpdist.queries._scale`: on Dask and Spark, bounded on the cluster)."""
        needed = [*self.by, *([self.privacy_id] if self.privacy_id else [])]
        needed += [statistic.column for statistic in self.statistics if statistic.column is not None]
        columns = list(dict.fromkeys(needed)) or table.names[:1]
        unit = (self.max_contributions, self.max_groups)
        cluster = cluster_of(self.table) if self.privacy_id is not None else None
        if cluster is not None and self.privacy_id is not None:
            refused = [s.column for s in self.statistics if s.column] if self.missing == "refuse" else []
            rows = cluster_bounded(self.table, cluster, columns, self.privacy_id, self.by, self.keys, unit,
                                   list(dict.fromkeys(refused)), bounding)
            table = open_frame("dpdist.query", rows)
        table.read(tuple(columns))
        data = {name: table.values(name) for name in columns}
        if self.by:
            check_missing_key_rows("dpdist.query", table, self.by, "refuse", private=True)
        if isinstance(self.missing, str) and self.missing == "refuse":
            for name in dict.fromkeys(s.column for s in self.statistics if s.column is not None):
                missing_policy("dpdist.query", "refuse").apply(data[name], "dpdist.query", f"Column {name!r}",
                                                               private=True)
        if self.privacy_id is not None and cluster is None:
            kept = kept_rows(data[self.privacy_id], [data[name] for name in self.by], self.by, self.keys, unit,
                             bounding)
            data = {name: values[kept] for name, values in data.items()}
        data[_ZEROS] = np.zeros(len(next(iter(data.values()))), dtype=np.int64)
        return data

    def _grouped(self, staged: Any, planned, keys: list | None, seed: Any):
        statistic = planned.statistic
        function, args, kwargs = statistic.release()
        by = list(self.by) or [_ZEROS]
        counted = statistic.kind in ("count", "persons", "distinct")  # a count reads no value
        column = _ZEROS if counted else statistic.column
        unit: dict[str, Any] = {}
        if self.privacy_id is not None:
            unit = {"privacy_id": self.privacy_id, "max_groups": self.max_groups,
                    "max_contributions": self.max_contributions}
        groups: dict[str, Any] = {"groups": keys}
        if self.by and keys is None and self.selection is not None:
            groups = {"groups": None, "selection_epsilon": self.selection[0], "selection_delta": self.selection[1]}
        if statistic.kind == "persons":
            unit["max_contributions"] = 1  # one row per person and group: the count is of distinct persons
        missing: dict[str, Any] = {} if counted else {"missing": self.missing}
        return group_release(staged, column, by, function, *args, epsilon=planned.group_epsilon, rng=seed,
                             **groups, **unit, **missing, **kwargs)


def _distinct_rows(data: dict[str, np.ndarray], column: str, by: tuple[str, ...], missing: Any) -> dict:
    """The rows kept that are each the first of its group and value of ``column``: their count is the number of
    distinct values.  Deduplicating is 1-stable (a row added or removed adds or removes at most one distinct value),
    so a person's ``max_contributions`` rows per group move it by at most as many, a count's sensitivity; each value
    keeps the id of its first row (at most ``max_contributions`` per person and group still).  A missing value is
    left out with ``missing="drop"``, or is the value ``missing`` (refused before by default)."""
    values, rows = data[column], np.arange(data[_ZEROS].size)
    policy = missing_policy("dpdist.query", missing)
    what = f"Column {column!r}"
    if policy.how == "drop":
        rows = policy.apply(rows, "dpdist.query", what, mask=missing_mask(values), private=True)
    elif policy.how == "value":
        values = policy.apply(values, "dpdist.query", what, private=True)
    codes = np.stack([_codes(data[name][rows]) for name in by] + [_codes(values[rows])])
    first = np.sort(np.unique(codes, axis=1, return_index=True)[1])
    return {name: array[rows[first]] for name, array in data.items()}


def _codes(values: np.ndarray) -> np.ndarray:
    """Each value's index among the column's distinct values (numbers by value, strings as written)."""
    try:
        return np.unique(values, return_inverse=True)[1].reshape(-1)
    except TypeError:  # an object column of several types, which do not sort together: 1 and "1" stay two values
        return _codes(np.array([f"{type(value).__name__}:{value!r}" for value in values]))


def _described(plan: QueryPlan, n: int, repeats: int) -> str:
    rows = plan.expected(n, repeats=repeats)
    return "\n".join([plan.describe().splitlines()[0], *(f"  {row}" for row in rows)])


def _seeds(rng: Any, count: int) -> list:
    """Each statistic's generator: the CSPRNG (``None``) without a seed, else independent children of it."""
    if rng is None:
        return [None] * count
    root = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    return [np.random.default_rng(child) for child in
            np.random.SeedSequence(root.integers(0, 2**63, size=4).tolist()).spawn(count)]


#: the rows kept per person and group, or the groups per person
_ROWS = Optional(Integer(low=1, high=2**31 - 1))


@validate_params({"epsilon": CENTRAL_EPSILON, "max_contributions": _ROWS, "max_groups": _ROWS}, owner="dpdist.query",
                 relations=(
    *(Implies("privacy_id", None, bound, None, why="it bounds each person's rows: give the column of the persons' ids",
              counterexample={bound: 2}) for bound in ("max_contributions", "max_groups")),
    Implies("max_contributions", None, "privacy_id", None, why="the rows kept per person and group, an int >= 1",
            counterexample={"privacy_id": "person"}),
))
def query(table: Any, *, epsilon: float, privacy_id: str | None = None, max_contributions: int | None = None,
          max_groups: int | None = None, session: BudgetSession | None = None, rng: Any = None,
          missing: str | float = "refuse") -> Query:
    """A query over ``table`` (any frame narwhals reads: pandas, Polars eager or lazy, PyArrow, DuckDB, ...) under
    one budget ``epsilon``.

    >>> from dpdist.queries import count, quantiles            # doctest: +SKIP
    >>> result = (dpdist.query(df, epsilon=1.0, privacy_id="person", max_contributions=1)   # doctest: +SKIP
    ...           .group_by("region", keys=["north", "south"])
    ...           .agg(quantiles("income", [0.1, 0.5, 0.9], bounds=(0, 300_000)), count())
    ...           .release())
    >>> result.table()                                          # doctest: +SKIP

    Parameters
    ----------
    epsilon : float
        The whole query's budget: per person with ``privacy_id``, else per record (add/remove neighbours).
    privacy_id : str, optional
        The column of the persons' ids: each person keeps at most ``max_groups`` groups (default 1) and
        ``max_contributions`` rows in each (required with it), uniformly random choices.
    session : BudgetSession, optional
        Charged with the whole query before any data is read.
    rng : seed, optional
        Seeded releases for tests only; without it every noise comes from the CSPRNG.
    missing : {"refuse", "drop"} or float
        A missing value of an aggregated column: refused (the default, before any release), left out (``"drop"``),
        or counted as that number (:mod:`dpdist._missing`); a missing key is refused.
    """
    k, m = (1 if bound is None else int(bound) for bound in (max_contributions, max_groups))  # the table's ints
    return Query(table, float(epsilon), privacy_id, k, m, session, rng, missing)
