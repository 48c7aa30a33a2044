"""``dpdist.query(table, ...)``: several statistics of a table, per group, under one budget.

A :class:`Query` is built in steps that read no data (``join_public``, ``join_private``, ``group_by``, ``agg``), shows
its plan before any data is read (``explain``: each statistic's share and expected error at a stated n), and runs once
(``release``): the columns are read in one query (each row of a missing id or key left out, and of each statistic
the rows of a missing value: a query refuses no value), the whole budget is charged to the session, a minimum of persons per group (``min_persons``) withholds the groups whose noisy count of persons is
below it, and each statistic runs :func:`dpdist.frame.group_release` with its share (:mod:`dpdist.queries._plan`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .._guarantee import PrivacyGuarantee, sequential
from .._rng import check_rng
from .._validation import (CENTRAL_EPSILON, Implies, InstanceOf, Integer, Interval, Items, OneOf, Optional, Options,
                           RandomSource, Text, check_param, validate_params)
from ..errors import DPDistError, InvalidParameterError
from .._missing import missing_mask
from ..frame._central import release_groups
from ..frame._groups import _sorted_keys, check_groups
from ..frame._tables import Table, check_columns, dtype_name, open_frame
from ._aggregates import count, persons
from ._joins import HOW, in_engine, joined
from ._plan import PlannedStatistic, QueryPlan, plan_of
from ._result import QueryResult
from ._private_keys import shown_keys
from ._scale import Bounding, Chooser, cluster_bounded, cluster_of, kept_rows, warn_left_out
from ._values import check_keys, ids, kind_of, staged, texts
from ._statistics import Statistic

if TYPE_CHECKING:
    from ..budget import BudgetSession

__all__ = ["Query", "query", "resolved"]

#: the selection's share of the budget when the keys are private and ``selection_epsilon`` is not given
SELECTION_SHARE = 0.1
#: a constant column of zeros: the key of a query without ``group_by`` (one group, the whole table), and what a count
#: counts (its values are not read, only their number)
_ZEROS = "__dpdist_zeros__"


#: the key columns of a group-by, by name
_NAMES = Items(Text(), "the names of the key columns (strings), at least one", min_length=1)
#: what a query releases
_STATISTICS = Items(InstanceOf(Statistic, "a statistic (dpdist.queries.count(), quantiles(...), ...)"),
                    "statistics (dpdist.queries.count(), quantiles(...), ...)")


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
    missing: str | float = "drop"
    by: tuple[str, ...] = ()
    keys: list | None = None
    selection: tuple[float, float] | None = None
    statistics: tuple[Statistic, ...] = ()
    key_names: dict = field(default_factory=dict)  # the key columns' names in the released table (SQL's AS)
    delta: float = 0.0  # the statistics' (Gaussian vectors'); the selection's is its own
    method: str | None = None  # how private keys are chosen (None: the default of max_groups)
    threshold: tuple[int, float] | None = None  # (min_persons, its epsilon)
    having: Callable[[dict], Any] | None = field(default=None, repr=False)  # SQL's HAVING: a mask of released rows
    holder_notes: bool = True  # False: no warning leaves the query, whatever the data (:func:`query`)

    def join_public(self, table: Any, on: str | list[str] | dict[str, str], *, how: str = "inner") -> "Query":
        """The query's table joined to the public ``table`` (any frame narwhals reads) where the columns ``on`` are
        equal (names both tables hold, or ``{this table's column: the public table's}``); ``how="inner"`` keeps the
        rows that match, ``"left"`` every row.  The public table's keys and columns are covered by no guarantee;
        per record (no ``privacy_id``) its keys must be unique (:mod:`dpdist.queries._joins`)."""
        return self._joined("Query.join_public", table, on, how, None)

    def join_private(self, table: Any, on: str | list[str] | dict[str, str] | None = None, *, how: str = "inner",
                     privacy_id: str | None = None) -> "Query":
        """The query's table joined to another private ``table`` of the same persons on the privacy id (this query's
        ``privacy_id`` equal to ``table``'s ``privacy_id`` column, by default of the same name) and the columns
        ``on``: Tumult Analytics' ``join_private``.  Each person's rows are bounded after the join, so the guarantee
        is per person over both tables (:mod:`dpdist.queries._joins`)."""
        owner = "Query.join_private"
        if self.privacy_id is None:
            raise InvalidParameterError(f"{owner} refuses a join of two private tables without privacy_id: one "
                                        "record's rows would meet any number of the other table's; give the query "
                                        "privacy_id=..., the column of the persons' ids both tables hold.")
        theirs = self.privacy_id if privacy_id is None else privacy_id
        return self._joined(owner, table, on, how, (self.privacy_id, theirs))

    def _joined(self, owner: str, table: Any, on: Any, how: str, ids: tuple[str, str] | None) -> "Query":
        how = check_param(owner, "how", how, Options(HOW))
        pairs = list(on.items()) if isinstance(on, dict) else [(name, name) for name in (
            [] if on is None else [on] if isinstance(on, str) else list(on))]
        pairs = [*([ids] if ids is not None and ids not in pairs else []), *pairs]
        left = open_frame(owner, resolved(self.table))
        right = in_engine(owner, table, left.frame)
        theirs = list(right.collect_schema())
        for mine, other in pairs:
            if mine not in left.names or other not in theirs:
                raise InvalidParameterError(f"The 'on' argument of {owner} must name columns of both tables "
                                            f"({left.names!r:.100}; {theirs!r:.100}). Got {mine!r} = {other!r}.")
        if not pairs:
            raise InvalidParameterError(f"The 'on' argument of {owner} must name the columns to join on. Got none.")
        kept = {name: name for name in theirs if name not in {other for _, other in pairs}}
        clashes = sorted(set(kept) & set(left.names))
        if clashes:
            raise InvalidParameterError(f"{owner} refuses columns both tables hold outside the join, {clashes}: "
                                        "rename them in one table first.")
        unique = "table" if ids is None and self.privacy_id is None else None
        return dataclasses.replace(self, table=joined(owner, left.frame, right, pairs, how, kept,
                                                      [ids] if ids else [], unique).to_native())

    @validate_params({}, owner="Query.group_by", relations=tuple(Implies(
        name, (None,), "keys", None, why="it chooses private keys: give it with keys=None, or give the public keys alone",
        counterexample={"keys": ["north"], name: value}) for name, value in (("selection_epsilon", 0.1), ("selection", "mad"))))
    def group_by(self, *by: str, keys: list | None = None, selection_epsilon: float | None = None,
                 selection_delta: float = 1e-6, selection: str | None = None) -> "Query":
        """Groups by the columns ``by``: the public ``keys`` (values, or tuples for several columns; every listed
        group is released, an empty one too), or, with ``keys=None``, groups chosen privately
        (``selection_epsilon``, default a tenth of the budget, and ``selection_delta``; ``selection``, how: the
        methods of :func:`dpdist.frame.group_release`, by default truncated geometric thresholding with
        ``max_groups=1`` and the two-round weighted Gaussian with more)."""
        by = check_param("Query.group_by", "by", by, _NAMES)
        if keys is not None:  # without selection_epsilon or selection: the table
            return dataclasses.replace(self, by=tuple(by), keys=list(keys), selection=None)
        chosen = self.epsilon * SELECTION_SHARE if selection_epsilon is None else selection_epsilon
        chosen = check_param("Query.group_by", "selection_epsilon", chosen,
                             Interval(0.0, self.epsilon, closed="neither"))
        delta = check_param("Query.group_by", "selection_delta", selection_delta, Interval(0.0, 1.0, closed="neither"))
        if selection is not None:
            from ..central._partitions import SELECTIONS  # lazy: loads scipy (0.4-2 s)

            selection = check_param("Query.group_by", "selection", selection, Options(SELECTIONS))
        return dataclasses.replace(self, by=tuple(by), keys=None, selection=(float(chosen), float(delta)),
                                   method=selection)

    def agg(self, *statistics: Statistic) -> "Query":
        """The statistics to release (:func:`dpdist.queries.count`, ``count_if``, ``persons``, ``distinct``, ``sum``,
        ``mean``, ``variance``, ``stddev``, ``minimum``, ``maximum``, ``quantiles``, ``histogram``, ``cdf``), each once
        per group."""
        statistics = check_param("Query.agg", "statistics", statistics, _STATISTICS)
        if self.privacy_id is None and any(statistic.needs_privacy_id for statistic in statistics):
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
        if self.selection and self.by and not any(statistic.chooses_groups for statistic in self.statistics):
            raise InvalidParameterError("Query.plan: private keys are chosen by the persons of each group, which "
                                        "distinct() does not keep; add count() or persons(), or give the keys.")
        unit = "record" if self.privacy_id is None else "person"
        spent = (self.selection[0] if self.selection else 0.0) + (self.threshold[1] if self.threshold else 0.0)
        if spent >= self.epsilon:
            raise InvalidParameterError(f"Query.plan: the selection of the groups and the minimum of persons spend "
                                        f"{spent:g} of the budget {self.epsilon:g}, leaving none for the statistics; "
                                        "give them smaller epsilons.")
        _check_names(self.by, self.key_names, self.statistics)
        method = None
        if self.selection is not None:
            from ..central._partitions import selection_reason  # lazy: loads scipy (0.4-2 s)

            method = selection_reason(self.max_groups, self.method)
        return plan_of(self.statistics, self.epsilon, self.selection, unit, self.max_groups, self.max_contributions,
                       self.delta, self.threshold, method)

    def explain(self, n: int, *, repeats: int = 10) -> str:
        """The plan with each statistic's expected error at ``n`` rows per group, before any data is read."""
        return self.plan().describe(n) if repeats == 10 else _described(self.plan(), n, repeats)

    def release(self) -> QueryResult:
        """Check the table's schema, read the columns once (the rows of a missing id or key left out), charge the
        session, release every statistic per group (the rows of a missing value left out of it, or counted as
        ``missing``); the result in the table's engine.  Nothing before the release depends on the values: every
        refusal is of the arguments and the schema; with ``holder_notes=False`` no warning either."""
        with float_quiet(not self.holder_notes):
            return self._released()

    def _released(self) -> QueryResult:
        plan = self.plan()
        table, kinds = self._checked()
        count = len(plan.statistics)
        seeds = _seeds(self.rng, count + 3)  # one per statistic, then the bounding's, the threshold's, the keys'
        bounding = None if seeds[count] is None else int(seeds[count].integers(0, 2**63))
        data, left_out, shown = self._staged(table, bounding, kinds, self._chooser(plan, seeds[count + 2]))
        holes = {s.label: int(np.count_nonzero(missing_mask(data[str(s.column)]))) for s in self.statistics
                 if s.column is not None and not s.keeps_missing}
        if self.holder_notes:  # to the holder only
            warn_left_out(left_out, holes, self.missing, self.statistics, self.max_contributions, self.max_groups)
        stated = PrivacyGuarantee(plan.epsilon, (plan.selection[1] if plan.selection else 0.0) + plan.spent_delta,
                                  "add-remove", "central", unit=plan.unit)
        statement = None if self.session is None else self.session.charge(
            stated, f"query of {[p.statistic.label for p in plan.statistics]} by {list(self.by)}")
        staged = Table.of_arrays(table.engine, data, "dpdist.query")  # every statistic reads these arrays
        keys, results, guarantees = (self.keys if self.by else [0]), {}, []
        if shown is not None and plan.selection is not None:  # the private keys, of all the rows' pairs: public now
            from ..central._partitions import selection_guarantee  # lazy: loads scipy (0.4-2 s)

            keys = _sorted_keys(dict.fromkeys(shown.values()))
            guarantees.append(selection_guarantee(*plan.selection, plan.unit))
        if plan.threshold is not None:  # the groups of at least min_persons noisy persons (it may choose them)
            keys, guarantee = self._thresholded(table, data, plan, keys, seeds[count + 1])
            guarantees.append(guarantee)
        # the groups are chosen (keys=None) by the first statistic run: one whose rows hold every person kept
        for index in sorted(range(count), key=lambda i: not plan.statistics[i].statistic.chooses_groups):
            if keys is not None and not keys:  # no group chosen or left: nothing to release, the charge bounds it
                empty: dict[str, dict] = {planned.statistic.label: {} for planned in plan.statistics}
                return _accounted(QueryResult(self.by, [], empty, stated, plan, table.engine, self.key_names), statement)
            planned, seed = plan.statistics[index], seeds[index]
            rows = planned.statistic.staged_rows(self._valued(planned.statistic, data, kinds), self.by,
                                                 self.privacy_id, self.missing)
            grouped = self._grouped(staged if rows is data else Table.of_arrays(table.engine, rows, "dpdist.query"),
                                    planned, keys, seed)
            keys = list(grouped.keys()) if keys is None else keys
            results[planned.statistic.label] = grouped.results
            guarantees.append(grouped.guarantee)
        results = {planned.statistic.label: results[planned.statistic.label] for planned in plan.statistics}
        total = sequential(guarantees)
        if not total.covers(stated):
            raise DPDistError(f"query: spent {total.describe()}, not the {stated.describe()} planned (a bug).")
        released = QueryResult(self.by, keys or [], results, total, plan, table.engine, self.key_names)
        released = _accounted(released, statement)
        return released if self.having is None else released.kept(self.having(released.columns()))

    def _thresholded(self, table, data: dict, plan: QueryPlan, keys: list | None, seed: Any) -> tuple[list, Any]:
        """The groups whose noisy number of persons (a count of one row per person and group, at the threshold's
        epsilon) is at least ``min_persons``: a post-processing of that count, whose guarantee is returned with
        them (with ``keys=None`` it also chooses the groups, as the first statistic would)."""
        least, epsilon = plan.threshold  # type: ignore[misc]
        counted = persons() if self.privacy_id is not None else count()
        rows = counted.staged_rows(data, self.by, self.privacy_id, self.missing)
        grouped = self._grouped(Table.of_arrays(table.engine, rows, "dpdist.query"),
                                PlannedStatistic(counted, 0.0, epsilon, epsilon / self.max_groups), keys, seed)
        return [key for key, result in grouped.results.items() if result.count >= least], grouped.guarantee

    def _checked(self) -> tuple[Table, dict[str, str]]:
        """The table, its key, id and value columns checked against its schema and the public keys against their
        columns' types (no data read), and the kind of each column whose values are compared (:mod:`._values`)."""
        owner = "dpdist.query"
        table = open_frame(owner, resolved(self.table))
        for argument, names in (("group_by", self.by), ("privacy_id", [self.privacy_id] if self.privacy_id else []),
                                ("column", [s.column for s in self.statistics if s.column])):
            if names:
                check_columns(owner, table, list(names), argument)
        for statistic in self.statistics:  # typed against the schema, before any engine reads a value
            dtype = table.schema.get(str(statistic.column))
            fits = {"values": True, "booleans": dtype is not None and dtype.is_boolean(),
                    "numbers": dtype is not None and (dtype.is_numeric() or dtype.is_boolean())}[statistic.reads]
            if dtype is not None and not fits:
                what = "booleans" if statistic.reads == "booleans" else "numbers"
                raise InvalidParameterError(f"The 'column' argument of {statistic.kind} must name a column of {what}: "
                                            f"{statistic.written!r} holds {dtype_name(dtype)}.")
        compared = [*self.by, *([self.privacy_id] if self.privacy_id else []),
                    *(s.column for s in self.statistics if s.column and s.reads == "values")]
        kinds = {name: kind_of(table.schema[name]) for name in compared}
        if self.by and self.keys is not None:
            check_keys("Query.group_by", check_groups("Query.group_by", self.keys, self.by), self.by, kinds,
                       table.schema)
        return table, kinds

    def _chooser(self, plan: QueryPlan, seed: Any) -> Chooser | None:
        """The selection of private keys from all the rows' pairs, with ``privacy_id`` (without it each row is a
        person: the first statistic's group-by chooses them)."""
        if not (self.by and self.keys is None and self.privacy_id is not None) or plan.selection is None \
                or plan.method is None:
            return None
        (epsilon, delta), method = plan.selection, plan.method[0]
        rng = check_rng(seed, owner="dpdist.query")
        return lambda pairs: shown_keys(pairs, method, epsilon, delta, self.max_groups, rng)

    def _staged(self, table: Table, bounding: int | None, kinds: dict[str, str],
                choose: Chooser | None = None) -> tuple[dict[str, np.ndarray], Bounding, dict | None]:
        """The columns the query needs, read in one query (with a column of zeros) and compared as their kinds say,
        what was left out: the rows of a missing id or key, and with ``privacy_id`` each person's rows beyond the
        bounds (:mod:`dpdist.queries._scale`: on Dask and Spark, bounded on the cluster), and the private keys
        ``choose`` showed of all the rows, among which each person's rows are bounded."""
        needed = [*self.by, *([self.privacy_id] if self.privacy_id else [])]
        needed += [statistic.column for statistic in self.statistics if statistic.column is not None]
        columns = list(dict.fromkeys(needed)) or table.names[:1]
        unit = (self.max_contributions, self.max_groups)
        cluster = cluster_of(resolved(self.table)) if self.privacy_id is not None else None
        left_out, shown = Bounding(0), None
        if cluster is not None and self.privacy_id is not None:
            rows, left_out, shown = cluster_bounded(resolved(self.table), cluster, columns, self.privacy_id, self.by,
                                                    self.keys, unit, kinds, bounding, choose)
            table = open_frame("dpdist.query", rows)
        table.read(tuple(columns))
        data = {name: (ids if name == self.privacy_id else staged)(table.values(name), kinds[name]) if name in kinds
                else table.values(name) for name in columns}
        if self.privacy_id is not None and cluster is None:
            kept, left_out, shown = kept_rows(data[self.privacy_id], [data[name] for name in self.by],
                                              [kinds[name] for name in self.by], kinds[self.privacy_id], self.keys,
                                              unit, bounding, choose)
        else:  # a row whose key is missing is in no group (on a cluster: left out there)
            present = ~np.logical_or.reduce([missing_mask(data[name]) for name in self.by]) if self.by else None
            kept = np.arange(len(data[columns[0]])) if present is None else np.flatnonzero(present)
            left_out = dataclasses.replace(left_out, missing=left_out.missing + len(data[columns[0]]) - kept.size)
        data = {name: values[kept] for name, values in data.items()}
        data[_ZEROS] = np.zeros(kept.size, dtype=np.int64)
        return data, left_out, shown

    def _valued(self, statistic: Statistic, data: dict[str, np.ndarray], kinds: dict[str, str]) -> dict:
        """The rows ``statistic`` reads: those of a missing value of its column left out (``missing="drop"``, a
        per-row filter: 1-stable) or that value counted as ``missing``; as they are for a count of rows or a
        statistic that counts the present values itself (``COUNT(c)``)."""
        if statistic.column is None or statistic.keeps_missing:
            return data
        column = str(statistic.column)
        holes = missing_mask(data[column])
        if not holes.any():
            return data
        if self.missing == "drop":
            return {name: values[~holes] for name, values in data.items()}
        filled = data[column].copy()
        filled[holes] = texts(np.array([self.missing], dtype=object), "text")[0] if kinds.get(column) == "text" \
            else self.missing
        return {**data, column: filled}

    def _grouped(self, staged: Table, planned, keys: list | None, seed: Any):
        """One statistic's release per group, from the staged arrays (:func:`dpdist.frame._central.release_groups`)."""
        statistic = planned.statistic
        function, args, kwargs = statistic.release()
        by = self.by or (_ZEROS,)
        unit: dict[str, Any] = {}
        if self.privacy_id is not None:
            unit = {"privacy_id": self.privacy_id, "max_groups": self.max_groups,
                    "max_contributions": statistic.contributions(self.max_contributions)}
        groups: dict[str, Any] = {"groups": keys}
        if self.by and keys is None and self.selection is not None:  # per record: this group-by chooses them
            groups = {"groups": None, "selection_epsilon": self.selection[0], "selection_delta": self.selection[1],
                      "selection": self.method}
        column = _ZEROS if statistic.counts_rows else str(statistic.column)  # a count reads no value: zeros
        noise: dict[str, Any] = {"epsilon": planned.group_epsilon}
        if planned.noise == "gaussian":  # one vector over the groups at the statistic's (epsilon, delta)
            noise = {"epsilon": planned.epsilon, "noise": "gaussian", "noise_delta": planned.delta}
        return release_groups("dpdist.query", staged, column, by, function, args, rng=seed, **groups, **unit,
                              **noise, **kwargs)


def _check_names(by: tuple[str, ...], key_names: dict, statistics: tuple[Statistic, ...]) -> None:
    """Refuses two columns of the released table of one name (a key's, a statistic's cell, SQL's ``AS``): one would
    hide the other in the table, whatever was charged for it.  Public: the names alone."""
    owners: dict[str, set[str]] = {}
    for name in by:
        owners.setdefault(key_names.get(name, name), set()).add(f"the key {name!r}")
    for statistic in statistics:
        for cell in statistic.cell_names():  # every interval's "level" is one column, shared
            owners.setdefault(cell, set()).add("the intervals' level" if cell == "level" else statistic.label)
    clashes = {cell: sorted(who) for cell, who in owners.items() if len(who) > 1}
    if clashes:
        raise InvalidParameterError(f"Query.plan refuses two columns of one name in the released table: {clashes} "
                                    f"(rename one: AS in SQL, .named(...) in Python).")


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
#: what a missing value of a statistic's column is: its row left out of the statistic, or that number (never refused)
_MISSING = OneOf((Options(("drop",)), Interval(-math.inf, math.inf, closed="neither")),
                 "'drop' (the default: a row whose value is missing is left out of that statistic) or a finite number "
                 "(each missing value counted as it); a query refuses no value")


@validate_params({"epsilon": CENTRAL_EPSILON, "max_contributions": _ROWS, "max_groups": _ROWS,
                  "delta": Optional(Interval(0.0, 1.0, closed="neither")), "rng": RandomSource(),
                  "missing": _MISSING}, owner="dpdist.query",
                 relations=(
    *(Implies("privacy_id", None, bound, None, why="it bounds each person's rows: give the column of the persons' ids",
              counterexample={bound: 2}) for bound in ("max_contributions", "max_groups")),
    Implies("max_contributions", None, "privacy_id", None, why="the rows kept per person and group, an int >= 1",
            counterexample={"privacy_id": "person"}),
))
def query(table: Any, *, epsilon: float, privacy_id: str | None = None, max_contributions: int | None = None,
          max_groups: int | None = None, session: BudgetSession | None = None, rng: Any = None,
          missing: str | float = "drop", delta: float | None = None, min_persons: int | None = None,
          min_persons_epsilon: float | None = None, holder_notes: bool = True) -> Query:
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
    missing : "drop" or float
        A missing value (null, NaN) of a statistic's column: its row left out of that statistic (``"drop"``, the
        default) or the value counted as that number.  A row whose id or key is missing is left out of every
        statistic.  A query refuses no value: what it does is a function of its arguments and the table's schema
        alone (a refusal that depended on one row would tell that row); the holder of the data is told how many rows
        were left out in a :class:`~dpdist.errors.MissingValuesWarning`, which no release carries.
    delta : float, optional
        The statistics' delta (besides a private selection's): counts, sums, means and histograms may then be
        released as one Gaussian vector over the groups, where the plan finds it more accurate than Laplace noise per
        group (with many groups per person: :mod:`dpdist.queries._plan`).  Without it every statistic is pure.
    min_persons : int, optional
        A minimum of persons per released group (BigQuery's aggregation threshold, PipelineDP's
        ``min_privacy_units_per_group``): a noisy count of each group's persons (rows, without ``privacy_id``) is
        released at ``min_persons_epsilon`` (default a tenth of ``epsilon``, charged with the rest), and the groups
        whose noisy count is below ``min_persons`` are withheld, every statistic of them.  The threshold is on the
        noisy count (a post-processing of it): a group of fewer persons passes now and then, one of more is withheld
        now and then, as the count's noise says; the guarantee is the query's.
    holder_notes : bool
        Whether the caller is told what the query left out, in a :class:`~dpdist.errors.MissingValuesWarning` and a
        :class:`~dpdist.errors.ContributionBoundWarning` (default True: the caller is the holder of the data, who may
        know).  Their numbers, and whether they come at all, are statistics of the data without noise: where the caller
        is an analyst who is not the holder, give False, and no warning of any kind leaves the query's release (its
        presence and content the same on every table): the notes are not made, nor NumPy's floating-point warnings
        (:func:`float_quiet`); no warning filter is touched, so a query in another thread keeps its own notes.
    """
    k, m = (1 if bound is None else int(bound) for bound in (max_contributions, max_groups))  # the table's ints
    threshold = None
    if min_persons is not None or min_persons_epsilon is not None:
        least = check_param("dpdist.query", "min_persons", min_persons, Integer(low=1, high=2**31 - 1))
        spent = epsilon * SELECTION_SHARE if min_persons_epsilon is None else min_persons_epsilon
        threshold = (int(least), float(check_param("dpdist.query", "min_persons_epsilon", spent,
                                                   Interval(0.0, float(epsilon), closed="neither"))))
    notes = check_param("dpdist.query", "holder_notes", holder_notes, Options((True, False)))
    if session is not None:  # before any data is read: a seeded query is private in a reproducible session only
        session.refuse_seeded(rng, "dpdist.query")
    return Query(table, float(epsilon), privacy_id, k, m, session, rng, missing, delta=float(delta or 0.0),
                 threshold=threshold, holder_notes=bool(notes))


def float_quiet(quiet: bool) -> contextlib.AbstractContextManager:
    """Where ``quiet`` (no holder notes), NumPy makes no floating-point warning in the block (an overflow, an invalid
    value met in a cast: its presence may depend on the values).  NumPy's error state is this thread's (a context
    variable): no warning filter is touched, so another thread's warnings and the caller's own are not lost.  The
    holder's notes are not made at all (``Query.holder_notes``)."""
    return np.errstate(all="ignore") if quiet else contextlib.nullcontext()


def resolved(table: Any) -> Any:
    """A table given as a function returning it (``dpdist query``'s files: read when the query needs them) called;
    any other table as it is."""
    deferred = isinstance(table, functools.partial) or inspect.isfunction(table) or inspect.ismethod(table)
    return table() if deferred else table


def _accounted(result: QueryResult, statement: Any) -> QueryResult:
    """``result`` with the session's account after its charge in its guarantee, as :meth:`BudgetSession.release` gives
    it (``statement`` None: charged to no session)."""
    if statement is None:
        return result
    from ..budget import with_statement  # lazy: loads scipy (0.4-2 s)

    return with_statement(result, statement)
