"""``dpdist.sql``: one SELECT, parsed by sqlglot, into the :class:`~dpdist.queries.Query` its expressions would build.

The SQL a query answers privately: ``SELECT <keys>, <aggregates> FROM <table> [JOIN ...] [WHERE ...] [GROUP BY
<keys>] [HAVING ...]``.

- **What it reads** (:mod:`dpdist.queries._sources`): a private table of ``tables``, joined to public tables
  (``public_tables``) or to another private table on the privacy id, or a per-person subquery; ``WHERE`` keeps the
  rows a condition holds for, in the table's engine, before any bounding or release.
- **Keys**: columns, or expressions of them (``GROUP BY FLOOR(age / 10)``, a ``CASE`` of bins; by the expression or
  its alias), computed in the table's engine (:mod:`dpdist.queries._expressions`: typed first, per-row maps).
- **Aggregates**: the registry's (:mod:`dpdist.queries._statistics`), each call read into a
  :class:`~dpdist.queries._statistics.SqlCall` and given to the aggregates one of whose ``sql_forms`` bears one of its
  names (``COUNT(*)``, ``SUM(c)``, ``PERCENTILE_CONT(c, q)``, ...); the argument may be an expression
  (``SUM(income * 0.1)``, ``COUNTIF(age > 30)``), a column derived for it in the table's engine.  The bounds of a
  column summed, averaged or ranked are public arguments (``bounds={"c": (lo, hi)}``), never read from the data; an
  expression's are given under its alias or as written, or worked out from its columns' bounds.
- **HAVING** keeps the released groups whose released values (the noisy cells of the aggregates it names, which the
  SELECT releases) meet its condition: a post-processing of the release, so the guarantee is unchanged (a group of
  true count 99 may pass ``HAVING COUNT(*) >= 100`` on its noisy count, as any reader of the table could check).
- ``AS`` names a key column or a statistic in the released table (:meth:`~dpdist.queries.Statistic.named`).

Everything else is refused in one line naming it and saying what to do instead: ORDER BY, LIMIT, DISTINCT, window
functions, set operations, common table expressions, subqueries other than a per-person one, arithmetic on
aggregates, columns that are neither keys nor aggregated.  The SELECT's clauses are read from a list of those
understood, so a clause sqlglot parses and this module does not read is refused, never ignored.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidParameterError, MissingDependencyError
from ..frame._tables import _staging_backend, narwhals
from ._expressions import RowCompiler, Scope, Value, number, refused
from ._query import Query, float_quiet, query
from ._sources import Source, filtered, read_from
from ._statistics import SqlCall, Statistic, aggregates_named, sql_forms

__all__ = ["sql"]

#: the parts of a SELECT a query reads; any other is refused, by the reason below or by its name
_READ = ("expressions", "from_", "where", "group", "joins", "having")
#: why some clauses of a SELECT are refused, and what to do instead
_REFUSED = {
    "order": "ORDER BY: sort the released table instead (its rows are the groups)",
    "limit": "LIMIT: keep the rows of the released table you want instead",
    "offset": "OFFSET: keep the rows of the released table you want instead",
    "distinct": "DISTINCT: not supported; a group-by of the key columns gives one row per group",
    "with_": "WITH (a common table expression): give the table it builds in 'tables' instead",
    "qualify": "QUALIFY: window functions are not supported",
}


def _sqlglot() -> Any:
    try:
        import sqlglot  # lazy: optional extra dpdist[query]
        from sqlglot import expressions
    except ImportError:
        raise MissingDependencyError("dpdist.sql needs sqlglot: pip install 'dpdist[query]'") from None
    return sqlglot, expressions


def sql(statement: str, tables: dict[str, Any], *, epsilon: float, bounds: dict[str, tuple[float, float]] | None = None,
        keys: dict[str, list] | list | None = None, privacy_id: str | dict[str, str] | None = None,
        max_contributions: int | None = None, max_groups: int | None = None, selection_epsilon: float | None = None,
        selection_delta: float = 1e-6, selection: str | None = None, delta: float | None = None, session: Any = None,
        rng: Any = None, public_tables: dict[str, Any] | None = None, missing: str | float = "drop",
        min_persons: int | None = None, min_persons_epsilon: float | None = None, holder_notes: bool = True) -> Query:
    """The :class:`~dpdist.queries.Query` of one SELECT (``.explain(n=...)`` shows its plan, ``.release()`` runs it).

    >>> dpdist.sql("SELECT region, QUANTILES(income, 0.1, 0.5, 0.9), COUNT(*) FROM t GROUP BY region",  # doctest: +SKIP
    ...            tables={"t": df}, epsilon=1.0, bounds={"income": (0, 300_000)},
    ...            keys={"region": ["north", "south"]}).release().table()

    Parameters
    ----------
    statement : str
        One SELECT (the module docstring says which).
    tables : dict
        ``{name: frame}``: the private tables the statement names (any frame narwhals reads; or a function returning
        one, called only when the statement needs the table).
    public_tables : dict, optional
        ``{name: frame}``: public tables it may join to (any engine's; read whole, covered by no guarantee).
    bounds : dict
        ``{column: (lo, hi)}`` of every column (or expression, by its alias or as written) aggregated (public).
    keys : dict or list, optional
        The public keys of the GROUP BY: ``{column: [values]}`` for one key (its name or alias in the SELECT), or a
        list of values (tuples for several keys); ``None``: the groups are chosen privately (``selection_epsilon``,
        ``selection_delta``, ``selection``: as in :meth:`dpdist.queries.Query.group_by`).
    privacy_id : str or dict, optional
        The column of the persons' ids (``{table: column}`` where the tables name it differently).
    epsilon, max_contributions, max_groups, delta, session, rng, missing, min_persons, min_persons_epsilon
        As in :func:`dpdist.query` (``delta``: counts, sums, means and histograms as one Gaussian vector over the
        groups where the plan finds it more accurate).
    holder_notes : bool
        As in :func:`dpdist.query`; with False no warning leaves the building of the query either (an engine computing
        a join or a ``WHERE`` of an eager frame may warn of a value).
    """
    with float_quiet(holder_notes is False):  # no value an eager engine meets while it builds warns
        sqlglot, exp = _sqlglot()
        if not isinstance(statement, str):
            raise InvalidParameterError("The 'statement' argument of dpdist.sql must be a string. "
                                        f"Got {statement!r:.80}.")
        tree = _parsed(sqlglot, exp, statement)
        given = bounds if isinstance(bounds, dict) else {}
        source = filtered(exp, tree.args.get("where"), read_from(exp, tree, tables, public_tables, privacy_id,
                                                                 given))
        select = _Select(exp, source, given).read(tree)
        if keys is not None and not isinstance(keys, dict) and not select.by:  # a dict may declare a table's keys
            raise InvalidParameterError(f"The 'keys' argument of dpdist.sql lists the keys of a GROUP BY, and the "
                                        f"statement has none. Got {keys!r:.100}.")
        built = query(select.source.table(), epsilon=epsilon, privacy_id=select.source.privacy_id,
                      max_contributions=max_contributions, max_groups=max_groups, session=session, rng=rng,
                      missing=missing, delta=delta, min_persons=min_persons, min_persons_epsilon=min_persons_epsilon,
                      holder_notes=holder_notes)
        if select.by:
            public = _public_keys(select.by, [select.key_names.get(name, name) for name in select.by], keys)
            built = built.group_by(*select.by, keys=public, selection_epsilon=None if public is not None else
                                   selection_epsilon, selection_delta=selection_delta,
                                   selection=None if public is not None else selection)
        built = dataclasses.replace(built.agg(*select.statistics), key_names=select.key_names)
        having = tree.args.get("having")
        return built if having is None else dataclasses.replace(built, having=select.having(having.this))


def _public_keys(columns: list[str], shown: list[str], keys: Any) -> list | None:
    """The keys of the GROUP BY (``columns``, which the released table names ``shown``) as :meth:`Query.group_by`
    takes them."""
    if not isinstance(keys, dict):
        return None if keys is None else list(keys)
    named = [name for name in (shown[0], columns[0]) if name in keys] if len(columns) == 1 else []
    if not named:
        raise InvalidParameterError(f"The 'keys' argument of dpdist.sql must list the keys of {shown}: "
                                    f"{{{shown[0]!r}: [...]}} for one key, or a list of tuples. Got {keys!r:.100}.")
    return list(keys[named[0]])


def _parsed(sqlglot: Any, exp: Any, statement: str) -> Any:
    try:
        trees = sqlglot.parse(statement)
    except sqlglot.errors.SqlglotError as error:
        first = (str(error).splitlines() or [""])[0][:200]
        raise InvalidParameterError(f"dpdist.sql could not parse the statement: {first}") from None
    except RecursionError:  # sqlglot's parser recurses once per level of parentheses (about 40 at most)
        raise refused("a statement nested more deeply than sqlglot's parser reads (parentheses or NOTs within one "
                      "another): write it with fewer levels") from None
    if len(trees) != 1 or not isinstance(trees[0], exp.Select):
        kind = "several statements" if len(trees) != 1 else f"a {type(trees[0]).__name__.upper()} statement"
        raise refused(f"{kind}: give one SELECT ... FROM <table> [GROUP BY ...]")
    tree = trees[0]
    for clause, value in tree.args.items():
        if clause not in _READ and value not in (None, False, []):
            written = value.sql() if isinstance(value, exp.Expression) else clause.strip("_").upper()
            raise refused(_REFUSED.get(clause, f"{written[:60]}: a query is SELECT ... FROM <table> [WHERE ...] "
                                                f"[GROUP BY ...] [HAVING ...]"))
    if any((node.alias if isinstance(node, exp.Alias) else node.name) == "" for node in tree.find_all(exp.Alias,
                                                                                                       exp.TableAlias)):
        raise refused('AS "", an empty name: name a column or table with one character or more')
    if any(isinstance(node, exp.Window) for node in tree.find_all(exp.Window)):
        raise refused("window functions (OVER): release per group with GROUP BY instead")
    allowed, node = {id(tree)}, tree
    while isinstance(getattr(node.args.get("from_"), "this", None), exp.Subquery):  # per-person subqueries in FROM
        node = node.args["from_"].this
        allowed |= {id(node), id(node.this)}
        node = node.this
    if any(id(found) not in allowed for found in tree.find_all(exp.Select, exp.Subquery)):
        raise refused("subqueries other than a per-person one in FROM: give the table the subquery builds in "
                      "'tables' instead")
    return tree


@dataclass
class _Select:
    """The keys and aggregates of one SELECT over ``source``, and the columns derived for them."""

    exp: Any
    source: Source
    bounds: dict
    by: list[str] = field(default_factory=list)
    key_names: dict[str, str] = field(default_factory=dict)
    statistics: list[Statistic] = field(default_factory=list)
    derived: dict[str, Any] = field(default_factory=dict)  # {column: narwhals expression} added to the frame
    values: dict[tuple[str, str], tuple[str, Value]] = field(default_factory=dict)  # {(mode, as written): (column, value)}
    written: dict[int, str] = field(default_factory=dict)  # {statistic's index: its aggregate as written}

    def read(self, tree: Any) -> "_Select":
        items = [(item.alias if isinstance(item, self.exp.Alias) else None,
                  item.this if isinstance(item, self.exp.Alias) else item) for item in tree.expressions]
        self._groups(tree.args.get("group"), items)
        for alias, item in items:
            if self._aggregate(item):
                statistic = self._statistic(item, alias)
                self.written[len(self.statistics)] = item.sql()
                self.statistics.append(statistic.named(alias) if alias else statistic)
            else:
                self._selected_key(item, alias)
        if not self.statistics:
            raise refused(f"a SELECT without an aggregate: select {sql_forms()}")
        given = [alias for alias, _ in items if alias]
        keys = {self.key_names.get(name, name) for name in self.by} - set(self.key_names.values())
        if len(set(given)) != len(given) or set(given) & keys:
            raise refused(f"the aliases {given}: name each selected column once, apart from the other key columns")
        if self.derived:
            source = self.source
            self.source = source.with_frame(source.computed(lambda: source.frame.with_columns(**self.derived)))
        return self

    def _aggregate(self, item: Any) -> bool:
        """Whether a selected item is an aggregate call (of the registry's names, or another aggregate of SQL's)."""
        exp = self.exp
        if isinstance(item, (exp.AggFunc, exp.WithinGroup, exp.Anonymous)):
            return True
        return isinstance(item, exp.Func) and bool(aggregates_named(_names(exp, item)))

    def _compiler(self, clause: str) -> RowCompiler:
        self.source = self.source.opened()
        return RowCompiler(self.exp, narwhals(), self.source.scope, clause)

    def _derived(self, node: Any, clause: str, mode: str) -> tuple[str, Value]:
        """The column derived for the expression ``node`` (one per expression as written and ``mode``), and its value:
        ``mode`` "key" its value; "value" an aggregate's argument (a condition as 1, 0 or missing); "truth" a
        condition, true where it holds and false elsewhere (unknown included)."""
        text = node.sql()
        if (mode, text) not in self.values:
            if node.find(self.exp.AggFunc):
                raise refused(f"{clause} ... {text[:60]}: arithmetic on an aggregate; release the aggregate and compute "
                              "from the released table (a post-processing)")
            compiler = self._compiler(clause)
            if mode == "truth":
                true = compiler.condition(node).true
                value = Value("boolean", text, compiler.nw.lit(true) if isinstance(true, bool) else true)
                expression = value.expression
            else:
                value = compiler.value(node)
                if mode == "value" and value.kind == "boolean":  # a condition summed or averaged: 1, 0 or missing
                    value = compiler.numeric(value)
                expression = compiler.column(value)
            column = f"__dpdist_{mode}_{len(self.values)}"
            self.derived[column] = expression
            self.values[mode, text] = (column, value)
        return self.values[mode, text]

    def _groups(self, group: Any, items: list) -> None:
        """The GROUP BY's keys: columns, or expressions (or the alias of a selected expression)."""
        if group is None:
            return
        if [part for part, value in group.args.items() if part != "expressions" and value]:
            raise refused(f"{group.sql()[:60]}: group by columns or expressions (no ROLLUP, CUBE or GROUPING SETS)")
        aliases = {alias: item for alias, item in items if alias and not self._aggregate(item)}
        for part in group.expressions:
            if isinstance(part, (self.exp.Rollup, self.exp.Cube, self.exp.GroupingSets)):
                raise refused(f"{part.sql()[:60]}: group by columns or expressions (no ROLLUP, CUBE or GROUPING SETS)")
            if isinstance(part, self.exp.Literal):
                raise refused(f"GROUP BY {part.sql()[:20]}: group by columns or expressions, by name (not by position)")
            if isinstance(part, self.exp.Column) and not (not part.table and part.name in aliases and
                                                          not self._holds(part.name)):
                self.by.append(self.source.scope.resolve(part.table or None, part.name, "GROUP BY", part.sql()))
                continue
            node = aliases[part.name] if isinstance(part, self.exp.Column) else part
            column, _ = self._derived(node, "GROUP BY", "key")
            shown = next((alias for alias, item in items if alias and item.sql() == node.sql()), node.sql())
            self.by.append(column)
            self.key_names[column] = shown

    def _holds(self, name: str) -> bool:
        """Whether the tables hold a column ``name`` (an alias of the SELECT does not hide a column)."""
        self.source = self.source.opened()
        return (None, name) in (self.source.scope.names or {})

    def _selected_key(self, item: Any, alias: str | None) -> None:
        """A selected item that is no aggregate: a key column, or a key's expression (or its alias)."""
        exp = self.exp
        if isinstance(item, exp.Column):
            if not item.table and item.name in self.key_names.values():
                return
            column = self.source.scope.resolve(item.table or None, item.name, "SELECT", item.sql())
            if column in self.by:
                self.key_names.update({column: alias} if alias else {})
                return
            raise refused(f"the column {item.name!r} outside an aggregate: select GROUP BY columns and aggregates")
        derived = self.values.get(("key", item.sql()))
        if derived is None or derived[0] not in self.by:
            raise refused(f"{item.sql()[:80]} outside an aggregate: select GROUP BY columns or expressions and "
                          f"aggregates ({sql_forms()})")

    def _statistic(self, item: Any, alias: str | None) -> Statistic:
        """The statistic of one aggregate: the first registered aggregate one of whose forms it is."""
        call = self._call(item, alias)
        kinds = aggregates_named(call.names)
        for kind in kinds:  # _call refused a name no aggregate bears
            statistic = kind.from_sql(call)
            if statistic is not None:
                return dataclasses.replace(statistic, title=call.written) if call.written else statistic
        several = len([form for kind in kinds for form in kind.sql_forms]) > 1
        raise refused(f"{call.text}: its form{'s are' if several else ' is'} {sql_forms(kinds)}")

    def _call(self, item: Any, alias: str | None) -> SqlCall:
        """An aggregate call as the registry reads it: a column, an expression (a column derived for it) or ``*``, and
        numbers, ``DISTINCT`` or not."""
        exp, text = self.exp, item.sql()[:80]
        arguments, item, descending = _arguments(exp, item)
        names, distinct = _names(exp, item), False
        kinds = aggregates_named(names)
        if not kinds:
            raise refused(f"{text}: the aggregates are {sql_forms()}, of a column c")
        if len(arguments) == 1 and isinstance(arguments[0], exp.Distinct):
            arguments, distinct = list(arguments[0].expressions), True
            if not any("DISTINCT" in form for kind in kinds for form in kind.sql_forms):
                raise refused(f"{text}: its form{'s are' if len(kinds) > 1 else ' is'} {sql_forms(kinds)}")
        column = written = None
        numbers, star, given = [], False, {}
        for argument in arguments:
            literal = argument.this if isinstance(argument, exp.Neg) else argument
            if isinstance(literal, exp.Literal) and not literal.is_string:
                numbers.append((-1 if literal is not argument else 1) * number(literal.name, text))
            elif isinstance(argument, exp.Star) and not star:
                star = True
            elif column is None and not isinstance(argument, (exp.Star, exp.Literal, exp.Distinct)):
                truth = any(kind.argument == "truth" for kind in kinds)
                column, written, bounds = self._argument(argument, alias, names[0], "truth" if truth else "value")
                given = {column: bounds} if bounds is not None else {}
            else:
                raise refused(f"{text}: an aggregate's arguments are one column or expression (or *) and numbers")
        if descending:
            numbers = [1 - level for level in numbers]
        return SqlCall(names[0], text, column, tuple(numbers), star, distinct, self.source.privacy_id, given,
                       names=tuple(names), written=written)

    def _argument(self, node: Any, alias: str | None, name: str, mode: str) -> tuple[str, str | None, Any]:
        """``(column, as written where it is an expression, its bounds or None)`` of an aggregate's argument."""
        if isinstance(node, self.exp.Column) and mode == "value":
            column = self.source.scope.resolve(node.table or None, node.name, f"{name}(...) on", node.sql())
            found = self.bounds.get(node.sql(), self.bounds.get(node.name, self.source.scope.bounds.get(column)))
            return column, (node.sql() if column != node.name else None), found
        column, value = self._derived(node, "SELECT", mode)
        text = node.sql()
        found = self.bounds.get(alias, self.bounds.get(text)) if alias else self.bounds.get(text)
        if found is None and value.low is not None and value.high is not None:
            found = (value.low, value.high)  # interval arithmetic over its columns' public bounds
        return column, text, found

    def having(self, condition: Any) -> Any:
        """HAVING as a function of the released table's columns: which of its rows to keep."""
        return _having(self, condition)


def _dtype(nw: Any, value: Value) -> Any:
    """The narwhals type of a derived column of ``value``."""
    if value.kind == "number":
        return nw.Int64 if value.integer else nw.Float64
    return nw.String if value.kind == "string" else nw.Boolean


def _names(exp: Any, item: Any) -> list[str]:
    """A function's spellings, upper case, sqlglot's first spelling first."""
    if isinstance(item, exp.Anonymous):
        return [item.name.upper()]
    return [name.upper() for name in type(item).sql_names()] or [item.sql_name().upper()]


def _arguments(exp: Any, item: Any) -> tuple[list, Any, bool]:
    """A function's arguments in the order sqlglot declares them (its flags, such as COUNT's, left out), the function,
    and whether its order is descending (``PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY c [DESC])`` is read as
    ``PERCENTILE_CONT(c, q)``, its ``DESC`` as ``1 - q``)."""
    if isinstance(item, exp.WithinGroup):
        order, inner = item.expression, item.this
        if not isinstance(order, exp.Order) or len(order.expressions) != 1 or not isinstance(inner, exp.Func) or \
                [part for part, value in order.args.items() if part != "expressions" and value]:
            raise refused(f"{item.sql()[:80]}: WITHIN GROUP orders by one column or expression")
        ordered = order.expressions[0]
        return [ordered.this, *_arguments(exp, inner)[0]], inner, bool(ordered.args.get("desc"))
    if isinstance(item, exp.Anonymous):
        return list(item.expressions), item, False
    found = []
    for part in item.arg_types:
        value = item.args.get(part)
        found += [one for one in (value if isinstance(value, list) else [value]) if isinstance(one, exp.Expression)]
    return found, item, False


def _having(select: _Select, condition: Any) -> Any:
    """HAVING compiled against the released table: each aggregate it names is the released cell of that aggregate of
    the SELECT (refused where the SELECT does not release it, or releases several cells of it)."""
    exp, nw = select.exp, narwhals()
    texts = {text: select.statistics[index] for index, text in select.written.items()}
    named = {statistic.name: statistic for statistic in select.statistics if statistic.name}
    cells: dict[str, str] = {}  # {placeholder column: the released table's cell}

    def cell(statistic: Statistic, written: str) -> Any:
        name = statistic.value_cell()
        if name is None:
            raise refused(f"HAVING on {written[:60]}, which releases several cells: compare one value (a QUANTILE(c, "
                          "q), a COUNT, a SUM, ...)")
        placeholder = f"__dpdist_cell_{len(cells)}"
        cells[placeholder] = name
        return exp.column(placeholder)

    def replaced(node: Any) -> Any:
        if isinstance(node, exp.Func) and select._aggregate(node):
            if node.sql() not in texts:
                raise refused(f"HAVING on {node.sql()[:60]}, which the SELECT does not release: HAVING compares "
                              "released values; select it too")
            return cell(texts[node.sql()], node.sql())
        if isinstance(node, exp.Column) and not node.table and node.name in named:
            return cell(named[node.name], node.name)
        return node

    condition = condition.transform(replaced)
    scope_schema = {placeholder: nw.Float64 for placeholder in cells}
    keys = {select.key_names.get(column, column): column for column in select.by}
    source = select.source.opened()
    types = {column: value for column, value in select.values.values()}
    for shown, column in keys.items():  # a key's type: its column's, or its expression's
        scope_schema[shown] = (source.scope.schema or {}).get(column) or _dtype(nw, types[column])
    names: dict[tuple, str | None] = {(None, name): name for name in scope_schema}
    keep = RowCompiler(exp, nw, Scope(scope_schema, names, source.scope.qualifiers), "HAVING").predicate(condition)

    def rows(columns: dict) -> Any:
        size = len(next(iter(columns.values()), []))
        if not size or isinstance(keep, bool):
            return [keep] * size if size else []
        data = {**{placeholder: columns[name] for placeholder, name in cells.items()},
                **{shown: columns[shown] for shown in keys}}
        frame = nw.from_dict(data, backend=_staging_backend())
        return frame.select(keep.alias("__dpdist_keep"))["__dpdist_keep"].to_list()

    return rows
