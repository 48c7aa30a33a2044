"""What a SELECT of ``dpdist.sql`` reads: the table of its FROM clause, its joins or a per-person subquery, and its
WHERE, as one frame of the private table's engine and the names its columns go by.

- ``FROM t``: a table of ``tables`` (private), by its name or an alias.
- ``JOIN r ON t.a = r.b [AND ...]`` or ``USING (a, ...)``, ``INNER`` or ``LEFT``: a table of ``public_tables``
  (public: its keys and columns are covered by no guarantee), or another private table of ``tables`` on the privacy
  id (:mod:`dpdist.queries._joins` states what each guarantees).  Columns both sides hold are named by their table
  (``t.region``, ``r.region``; unqualified they are refused as ambiguous), as SQL names them; ``USING`` merges its
  columns into the left's.
- ``FROM (SELECT <privacy_id>, ..., SUM(x) AS total FROM t [WHERE ...] GROUP BY <privacy_id>, ...)``: a **per-person
  subquery**.  Its GROUP BY holds the privacy id, so each of its rows is an aggregate of one person's rows (``SUM``,
  ``AVG``, ``MIN``, ``MAX``, ``COUNT(*)``, ``COUNT(c)`` of columns or expressions, computed in the table's engine,
  ``SUM`` and ``AVG`` in 64-bit floats, which no engine overflows, missing values left out as SQL does): adding or removing a person adds or removes that person's rows of it
  and no other's, a transformation of stability 1 in persons.  The outer query reads its rows with the privacy id
  carried through, bounds each person's rows (``max_contributions`` per group, ``max_groups``) and states its
  guarantee per person, as over any table.  Refused without ``privacy_id`` (per record, one aggregate row holds many
  records, whose number no bound covers), or when its GROUP BY lacks the privacy id (a row would aggregate several
  persons: one person's change would move rows of others).
- ``WHERE``: a per-row filter (:mod:`dpdist.queries._expressions`), in the table's engine, after the joins.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import InvalidParameterError
from ..frame._tables import computed, narwhals, open_frame
from ._expressions import RowCompiler, Scope, refused
from ._joins import in_engine, joined
from ._query import resolved

__all__ = ["Source", "read_from", "filtered"]

#: the aggregates of a per-person subquery, by sqlglot's node name: narwhals' reduction
_PER_PERSON = {"Sum": "sum", "Avg": "mean", "Min": "min", "Max": "max", "Count": "count"}


@dataclass
class Source:
    """One frame a statement reads, and the names its columns go by.

    Attributes
    ----------
    native : object
        The table as given (a frame, or a function returning one).
    scope : Scope
        Its columns' names (checked against a schema once :meth:`opened`).
    privacy_id : str or None
        The frame's column of persons' ids.
    bounds : dict
        The public bounds given, by name as written.
    frame : object
        The narwhals frame, once opened (joins, a subquery, WHERE or a derived column need it).
    changed : bool
        Whether the frame is no longer the table as given.
    """

    native: Any
    scope: Scope
    privacy_id: str | None
    bounds: dict
    frame: Any = None
    changed: bool = False
    engine: Any = None

    def opened(self) -> "Source":
        """This source with its frame open and its names checked against its schema (no data read)."""
        if self.frame is not None:
            return self
        table = open_frame("dpdist.sql", resolved(self.native))
        (qualifier,) = self.scope.qualifiers
        scope = Scope.of_table(table.schema, qualifier, self.bounds)
        return dataclasses.replace(self, scope=scope, frame=table.frame, engine=table.engine)

    def with_frame(self, frame: Any, scope: Scope | None = None) -> "Source":
        return dataclasses.replace(self, frame=frame, scope=scope or self.scope, changed=True)

    def computed(self, work: Callable[[], Any]) -> Any:
        """``work()``, the engine's work on the frame: its errors, whose messages may quote values, are refused naming
        the engine only, with nothing of them in the refusal's chain (:func:`dpdist.frame._tables.computed`)."""
        return computed("dpdist.sql", self.engine, None, work)

    def table(self) -> Any:
        """The table the query reads: the frame as its engine's own, or the table as given."""
        if not self.changed:
            return self.native
        return self.computed(self.frame.to_native)


def read_from(exp: Any, tree: Any, tables: Any, public: Any, privacy_id: Any, bounds: dict) -> Source:
    """The :class:`Source` of a SELECT's FROM clause and joins."""
    clause = tree.args.get("from_") or tree.args.get("from")
    node = None if clause is None else clause.this
    if isinstance(node, exp.Subquery):
        source = _per_person(exp, node, tables, public, privacy_id, bounds)
    else:
        native, qualifier, private = _table(exp, node, tables, public, "FROM")
        assert node is not None  # _table refuses a FROM without a table
        if not private:
            raise refused(f"FROM {node.sql()[:40]}, a public table: a query reads a private table of 'tables' "
                          "(join the public one to it)")
        source = Source(native, Scope.of_table(None, qualifier), _id_of(privacy_id, node.name), bounds)
    for join in tree.args.get("joins") or []:
        source = _joined(exp, source, join, tables, public, privacy_id)
    return source


def filtered(exp: Any, where: Any, source: Source) -> Source:
    """``source`` filtered by a WHERE clause in its own engine (typed against its schema first), or as it is without
    one."""
    if where is None:
        return source
    source = source.opened()
    keep = RowCompiler(exp, narwhals(), source.scope, "WHERE").predicate(where.this)
    if keep is True:
        return source
    if keep is False:  # false on every row: a filter of the rows' length (head(0) after a sort fails on Dask)
        first = narwhals().col(next(iter(source.scope.schema or {})))
        keep = first.is_null() & ~first.is_null()
    return source.with_frame(source.computed(lambda: source.frame.filter(keep)))


def _id_of(privacy_id: Any, table: str) -> str | None:
    """The column of persons' ids of ``table``: ``privacy_id`` (one name for every table, or ``{table: column}``)."""
    return privacy_id.get(table) if isinstance(privacy_id, dict) else privacy_id


def _table(exp: Any, node: Any, tables: Any, public: Any, where: str) -> tuple[Any, str, bool]:
    """``(table, the name its columns are qualified by, whether it is private)`` of a table named in FROM or JOIN."""
    if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
        raise refused(f"{where} {node.sql()[:60] if node is not None else ''}: name a table of 'tables' (or of "
                      "'public_tables' in a JOIN)")
    alias = node.args.get("alias")
    for part, value in node.args.items():
        if part not in ("this", "alias") and value not in (None, False, []):
            raise refused("TABLESAMPLE: the engine's sample is drawn by its own random numbers, which no guarantee "
                          "covers; sample the table in its engine first and query the sample" if part == "sample" else
                          f"{where} {node.sql()[:60]}: name one of the tables given in 'tables', with an alias or none")
    if alias is not None and [part for part, value in alias.args.items() if part != "this" and value]:
        raise refused(f"{where} {node.sql()[:60]}: an alias names the table, not its columns")
    name = node.name
    tables, public = (given if isinstance(given, dict) else {} for given in (tables, public))
    if name in tables and name in public:
        raise refused(f"{where} {name}, a name of 'tables' and of 'public_tables': name each table once")
    if name not in tables and name not in public:
        raise InvalidParameterError(f"The 'tables' argument of dpdist.sql must hold the table {name!r} of the "
                                    f"{where} clause. Got the tables {sorted(tables) + sorted(public)!r:.100}.")
    return (tables[name], node.alias or name, True) if name in tables else (public[name], node.alias or name, False)


def _joined(exp: Any, source: Source, join: Any, tables: Any, public: Any, privacy_id: Any) -> Source:
    """``source`` joined to the table of one JOIN (:mod:`dpdist.queries._joins`)."""
    side, kind = (str(join.args.get(part) or "").upper() for part in ("side", "kind"))
    extra = [part for part, value in join.args.items() if part not in ("this", "on", "side", "kind", "using") and value]
    if extra or side not in ("", "LEFT") or kind not in ("", "INNER", "OUTER") or (kind == "OUTER" and not side):
        raise refused(f"{' '.join(filter(None, (side, kind))) or join.sql()[:30]} JOIN: a query joins its private "
                      "table (on the left) to another with INNER JOIN or LEFT JOIN only; write RIGHT JOIN the other "
                      "way round")
    native, qualifier, private = _table(exp, join.this, tables, public, "JOIN")
    if qualifier in source.scope.qualifiers:
        raise refused(f"JOIN {join.this.sql()[:40]}: a second table named {qualifier!r}; give it an alias")
    source = source.opened()
    right = source.computed(lambda: in_engine("dpdist.sql", resolved(native), source.frame))
    scope = Scope.of_table(dict(right.collect_schema()), qualifier)
    pairs, merged = _pairs(exp, join, source.scope, scope)
    if private:
        theirs = _id_of(privacy_id, join.this.name)
        if source.privacy_id is None or theirs is None:
            raise refused(f"JOIN {join.this.sql()[:40]}, a private table, without privacy_id: one record's rows "
                          "would meet any number of the other table's; give privacy_id, the column of the persons' "
                          "ids both tables hold, and join on it")
        if (source.privacy_id, theirs) not in pairs:
            raise refused(f"JOIN {join.this.sql()[:40]} of two private tables not on the persons' ids: a person's "
                          f"rows would meet other persons' rows; join on {source.privacy_id} = {qualifier}.{theirs} "
                          "(and any other columns)")
    exact = [(source.privacy_id, _id_of(privacy_id, join.this.name))] if private else []
    unique = qualifier if not private and source.privacy_id is None else None
    return _with_joined(source, right, scope, qualifier, pairs, merged, "left" if side == "LEFT" else "inner", exact,
                        unique)


def _with_joined(source: Source, right: Any, scope: Scope, qualifier: str, pairs: list, merged: set, how: str,
                 exact: list, unique: str | None) -> Source:
    """The source of the join: the right's columns kept under their names (``<table>_<name>`` where the left holds
    the name), the columns USING merges under the left's."""
    left_schema, names = dict(source.scope.schema or {}), dict(source.scope.names or {})
    right_schema: dict = scope.schema or {}
    kept: dict[str, str] = {}
    for name in right_schema:
        if name in merged:
            names[(qualifier, name)] = next(mine for mine, theirs in pairs if theirs == name)
            continue
        new = name
        while new in left_schema or new in kept.values():
            new = f"{qualifier}_{new}"
        kept[name] = new
        names[(qualifier, name)] = new
        names[(None, name)] = None if (None, name) in names else new
    frame = source.computed(lambda: joined("dpdist.sql", source.frame, right, pairs, how, kept, exact,
                                                         unique))
    schema = {**left_schema, **{new: right_schema[name] for name, new in kept.items()}}
    bounds = dict(source.scope.bounds)
    for name, new in kept.items():
        given = source.bounds.get(f"{qualifier}.{name}", source.bounds.get(name))
        if given is not None:
            bounds[new] = given
    return source.with_frame(frame, Scope(schema, names, (*source.scope.qualifiers, qualifier), bounds))


def _pairs(exp: Any, join: Any, left: Scope, right: Scope) -> tuple[list[tuple[str, str]], set]:
    """The join's equal columns ``[(left column, right column)]`` and the right's columns USING merges."""
    using = join.args.get("using")
    if using:
        names = [part.name for part in using]
        return [(left.resolve(None, name, "JOIN ... USING", name), right.resolve(None, name, "JOIN ... USING", name))
                for name in names], set(names)
    condition = join.args.get("on")
    if condition is None:
        raise refused(f"JOIN {join.this.sql()[:40]} without ON or USING (a cross join): join on equal columns")
    compiler, pairs = RowCompiler(exp, None, left, "JOIN ... ON"), []
    for part in compiler._chain(condition, exp.And):
        columns = [compiler._unwrapped(side) for side in (part.this, part.expression)] if isinstance(part, exp.EQ) \
            else []
        if len(columns) != 2 or not all(isinstance(column, exp.Column) for column in columns):
            raise refused(f"JOIN ... ON {part.sql()[:60]}: a join's condition is equalities of columns of the two "
                          "tables (t.a = r.b AND ...); filter with WHERE")
        sides = dict(_side(column, left, right) for column in columns)
        if set(sides) != {"left", "right"}:
            raise refused(f"JOIN ... ON {part.sql()[:60]}: each equality compares a column of the joined table with "
                          "one of the tables before it")
        pairs.append((sides["left"], sides["right"]))
    return pairs, set()


def _side(column: Any, left: Scope, right: Scope) -> tuple[str, str]:
    """``("left" or "right", its column)`` of a column of a join's condition (qualified, or held by one side)."""
    (qualifier,) = right.qualifiers
    theirs = column.table == qualifier or (not column.table and (None, column.name) in (right.names or {}) and
                                           (None, column.name) not in (left.names or {}))
    if theirs:
        return "right", right.resolve(None, column.name, "JOIN ... ON", column.sql())
    return "left", left.resolve(column.table or None, column.name, "JOIN ... ON", column.sql())


def _per_person(exp: Any, node: Any, tables: Any, public: Any, privacy_id: Any, bounds: dict) -> Source:
    """The source of a per-person subquery (the module docstring): its rows, one per person and group of its GROUP
    BY, sorted by them."""
    inner, qualifier = node.this, node.alias or "subquery"
    extra = [part for part, value in (inner.args.items() if isinstance(inner, exp.Select) else [("this", 1)])
             if part not in ("expressions", "from_", "where", "group", "joins") and value]
    if extra or [part for part, value in node.args.items() if part not in ("this", "alias") and value]:
        raise refused(f"a subquery with {extra or 'modifiers'}: a per-person subquery is SELECT ... FROM ... [WHERE "
                      "...] GROUP BY <privacy_id>, ...")
    if privacy_id is None:
        raise refused("a subquery without privacy_id: per record, one of its rows would hold many records, whose "
                      "number no bound covers; give privacy_id and GROUP BY it in the subquery (a per-person one)")
    source = filtered(exp, inner.args.get("where"), read_from(exp, inner, tables, public, privacy_id, {})).opened()
    group = inner.args.get("group")
    keys = [source.scope.resolve(part.table or None, part.name, "GROUP BY", part.sql()) if isinstance(part, exp.Column)
            else None for part in (group.expressions if group is not None else [])]
    if None in keys or source.privacy_id not in keys:
        grouped = ", ".join(part.sql() for part in group.expressions)[:60] if group is not None else "nothing"
        raise refused(f"a subquery grouped by {grouped}: a per-person "
                      f"subquery groups by columns, the privacy id {source.privacy_id!r} among them, so each of its "
                      "rows is one person's (a row of several persons would move with each of them)")
    nw, compiler = narwhals(), RowCompiler(exp, narwhals(), source.scope, "subquery")
    outputs: dict[str, str] = {}
    inputs: dict[str, Any] = {}
    reductions: list[tuple] = []
    for item in inner.expressions:
        alias, part = (item.alias, item.this) if isinstance(item, exp.Alias) else (None, item)
        if isinstance(part, exp.Column):
            column = source.scope.resolve(part.table or None, part.name, "subquery", part.sql())
            if column not in keys:
                raise refused(f"the subquery's column {part.sql()[:40]} outside an aggregate: select its GROUP BY "
                              "columns and aggregates")
            outputs[column] = alias or part.name
            continue
        reductions.append(_reduction(exp, nw, compiler, part, alias, inputs))
    outputs.setdefault(str(source.privacy_id), str(source.privacy_id))  # the privacy unit is carried through
    return _aggregated(nw, source, keys, outputs, inputs, reductions, qualifier, bounds)


def _reduction(exp: Any, nw: Any, compiler: RowCompiler, part: Any, alias: str | None, inputs: dict) -> tuple:
    """``(output name, narwhals reduction, its input column or None)`` of one aggregate of a per-person subquery."""
    name = type(part).__name__
    if name not in _PER_PERSON or not alias:
        raise refused(f"the subquery's {part.sql()[:60]}{'' if alias else ' without AS'}: a per-person subquery "
                      "selects its GROUP BY columns and SUM, AVG, MIN, MAX, COUNT(*) or COUNT(c), each named by AS")
    argument = part.this
    if name == "Count" and isinstance(argument, exp.Star):
        return alias, nw.len(), None
    if isinstance(argument, exp.Distinct) or [key for key, value in part.args.items() if key not in ("this",
                                                                                                     "big_int") and value]:
        raise refused(f"the subquery's {part.sql()[:60]}: of one column or expression, without DISTINCT")
    value = compiler.value(argument)
    if name != "Count" and value.kind != "number":
        raise refused(f"the subquery's {part.sql()[:60]}: {name.upper()} takes numbers; {value.text[:40]} is not one")
    column = f"__dpdist_in_{len(inputs)}"
    # a sum in 64-bit floats, which no engine overflows (Ibis' sum of integers beyond 2**63 fails: one person decides)
    computed = compiler.floats(value) if name in ("Sum", "Avg") and value.kind == "number" else compiler.column(value)
    inputs[column] = computed if value.expression is None else \
        nw.when(value.present).then(computed)  # NaN left out as NULL, on every engine
    return alias, getattr(nw.col(column), _PER_PERSON[name])(), column


def _aggregated(nw: Any, source: Source, keys: list, outputs: dict, inputs: dict, reductions: list, qualifier: str,
                bounds: dict) -> Source:
    """The per-person subquery's frame: one row per group of ``keys``, its reductions (a sum of no value missing,
    as SQL's), sorted by its keys."""
    present = {f"__dpdist_n_{index}": nw.col(column).count() for index, (_, _, column) in enumerate(reductions)
               if column is not None}
    aggregations = [reduction.alias(alias) for alias, reduction, _ in reductions]
    def reduced() -> tuple[Any, dict]:
        frame = source.frame.with_columns(**inputs) if inputs else source.frame
        frame = frame.group_by(*keys).agg(*aggregations, *(value.alias(name) for name, value in present.items()))
        fixed = [nw.when(nw.col(f"__dpdist_n_{index}") > 0).then(nw.col(alias)).alias(alias)
                 for index, (alias, _, column) in enumerate(reductions) if column is not None]
        frame = (frame.with_columns(*fixed) if fixed else frame).select(
            *(nw.col(column).alias(name) for column, name in outputs.items()), *(alias for alias, _, _ in reductions))
        frame = frame.sort(*outputs.values(), nulls_last=True)
        return frame, dict(frame.collect_schema())

    frame, schema = source.computed(reduced)
    names = list(outputs.values()) + [alias for alias, _, _ in reductions]
    if len(set(names)) != len(names):
        raise refused(f"the subquery's names {names}: name each of its columns once")
    scope = Scope.of_table(schema, qualifier, bounds)
    return dataclasses.replace(source, scope=scope, privacy_id=outputs[source.privacy_id], bounds=bounds,
                               frame=frame, changed=True)
