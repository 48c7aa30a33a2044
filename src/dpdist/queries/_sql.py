"""``dpdist.sql``: one SELECT, parsed by sqlglot, into the :class:`~dpdist.queries.Query` its expressions would build.

The SQL a query answers privately is a narrow one: ``SELECT <key columns>, <aggregates> FROM <one table>
[GROUP BY <key columns>]``.  The aggregates are the registry's (:mod:`dpdist.queries._statistics`), each call read
into a :class:`~dpdist.queries._statistics.SqlCall` and given to the aggregates one of whose ``sql_forms`` bears its
name (``COUNT(*)``, ``SUM(c)``, ``QUANTILES(c, q, ...)``, ...); the bounds of a column summed, averaged or ranked are
public arguments (``bounds={"c": (lo, hi)}``), never read from the data.  Everything else is refused in one line naming it and saying what to do instead: joins, subqueries and
common table expressions, HAVING, ORDER BY, LIMIT, DISTINCT, TABLESAMPLE, window functions, set operations, columns
that are neither keys nor aggregated, columns of another table (``u.age``).  The SELECT's clauses are read from a
list of those understood, so a clause sqlglot parses and this module does not read is refused, never ignored.
``COUNT(DISTINCT <privacy_id>)`` is the number of distinct persons (:func:`~dpdist.queries.persons`);
``COUNT(DISTINCT c)`` of another column the number of its distinct values (:func:`~dpdist.queries.distinct`).

``WHERE`` keeps the rows a condition on the row's own cells holds for (comparisons of columns and constants, ``IN``,
``BETWEEN``, ``IS NULL``, ``AND``, ``OR``, ``NOT``), in the table's engine, before any bounding or release; it is
typed against the table's schema first and means the same on every engine (:mod:`dpdist.queries._where`).  It keeps
the guarantee: a per-row filter is a stable transformation (each row is kept or left out by its own values, so
adding or removing one person's rows changes the filtered table by at most those rows), so the releases on the
filtered table state what they would on any table.  ``AS`` names a key column or a statistic in the released table
(:meth:`~dpdist.queries.Statistic.named`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import InvalidParameterError, MissingDependencyError
from ._query import Query, query
from ._where import number, refused, where_predicate
from ._statistics import SqlCall, Statistic, aggregates_named, sql_forms

__all__ = ["sql"]

#: the parts of a SELECT a query reads; any other is refused, by the reason below or by its name
_READ = ("expressions", "from_", "where", "group")
#: why some clauses of a SELECT are refused, and what to do instead
_REFUSED = {
    "joins": "JOIN: a query reads one table; join the tables in their engine first (each person's rows stay bounded "
             "by privacy_id), then query the result",
    "having": "HAVING: a condition on private aggregates would tell which groups pass it; filter the released table",
    "order": "ORDER BY: sort the released table instead (its rows are the groups)",
    "limit": "LIMIT: keep the rows of the released table you want instead",
    "offset": "OFFSET: keep the rows of the released table you want instead",
    "distinct": "DISTINCT: not supported; a group-by of the key columns gives one row per group",
    "with_": "WITH (a common table expression): give the table it builds in 'tables' instead",
    "qualify": "QUALIFY: window functions are not supported",
    "sample": "TABLESAMPLE: the engine's sample is drawn by its own random numbers, which no guarantee covers; sample "
              "the table in its engine first and query the sample",
}


def _sqlglot() -> Any:
    try:
        import sqlglot  # lazy: optional extra dpdist[query]
        from sqlglot import expressions
    except ImportError:
        raise MissingDependencyError("dpdist.sql needs sqlglot: pip install 'dpdist[query]'") from None
    return sqlglot, expressions


def sql(statement: str, tables: dict[str, Any], *, epsilon: float, bounds: dict[str, tuple[float, float]] | None = None,
        keys: dict[str, list] | list | None = None, privacy_id: str | None = None,
        max_contributions: int | None = None, max_groups: int | None = None, selection_epsilon: float | None = None,
        selection_delta: float = 1e-6, selection: str | None = None, delta: float | None = None, session: Any = None,
        rng: Any = None) -> Query:
    """The :class:`~dpdist.queries.Query` of one SELECT (``.explain(n=...)`` shows its plan, ``.release()`` runs it).

    >>> dpdist.sql("SELECT region, QUANTILES(income, 0.1, 0.5, 0.9), COUNT(*) FROM t GROUP BY region",  # doctest: +SKIP
    ...            tables={"t": df}, epsilon=1.0, bounds={"income": (0, 300_000)},
    ...            keys={"region": ["north", "south"]}).release().table()

    Parameters
    ----------
    statement : str
        One SELECT (the module docstring says which).
    tables : dict
        ``{name: frame}``: the table the FROM clause names (any frame narwhals reads).
    bounds : dict
        ``{column: (lo, hi)}`` of every column aggregated (public).
    keys : dict or list, optional
        The public keys of the GROUP BY: ``{column: [values]}`` for one key column, or a list of values (tuples for
        several columns); ``None``: the groups are chosen privately (``selection_epsilon``, ``selection_delta``,
        ``selection``: as in :meth:`dpdist.queries.Query.group_by`).
    epsilon, privacy_id, max_contributions, max_groups, delta, session, rng
        As in :func:`dpdist.query` (``delta``: counts, sums, means and histograms as one Gaussian vector over the
        groups where the plan finds it more accurate).
    """
    sqlglot, exp = _sqlglot()
    if not isinstance(statement, str):
        raise InvalidParameterError(f"The 'statement' argument of dpdist.sql must be a string. Got {statement!r:.80}.")
    tree = _parsed(sqlglot, exp, statement)
    table, qualifiers = _table(exp, tree, tables)
    table = _filtered(exp, tree, table, qualifiers)
    by = _group_columns(exp, tree, qualifiers)
    statistics, key_names = _aggregates(exp, tree, by, qualifiers, bounds or {}, privacy_id)
    built = query(table, epsilon=epsilon, privacy_id=privacy_id, max_contributions=max_contributions,
                  max_groups=max_groups, session=session, rng=rng, delta=delta)
    if by:
        public = _public_keys(by, keys)
        built = built.group_by(*by, keys=public, selection_epsilon=None if public is not None else selection_epsilon,
                               selection_delta=selection_delta, selection=None if public is not None else selection)
    return dataclasses.replace(built.agg(*statistics), key_names=key_names)


def _public_keys(by: list[str], keys: Any) -> list | None:
    """The keys of the GROUP BY columns ``by`` as :meth:`Query.group_by` takes them."""
    if not isinstance(keys, dict):
        return None if keys is None else list(keys)
    if len(by) != 1 or by[0] not in keys:
        raise InvalidParameterError(f"The 'keys' argument of dpdist.sql must list the keys of {by}: "
                                    f"{{{by[0]!r}: [...]}} for one key column, or a list of tuples. Got {keys!r:.100}.")
    return list(keys[by[0]])


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
                                                f"[GROUP BY ...]"))
    if any(isinstance(node, exp.Window) for node in tree.find_all(exp.Window)):
        raise refused("window functions (OVER): release per group with GROUP BY instead")
    if any(node is not tree for node in tree.find_all(exp.Select)) or tree.find(exp.Subquery):
        raise refused("subqueries: give the table the subquery builds in 'tables' instead")
    return tree


def _table(exp: Any, tree: Any, tables: Any) -> tuple[Any, set[str]]:
    """The table of the FROM clause, and the names its columns may be qualified with (its alias, else its name)."""
    source = tree.args.get("from_") or tree.args.get("from")
    if source is None or not isinstance(source.this, exp.Table) or not isinstance(source.this.this, exp.Identifier):
        raise refused("a SELECT without one table in FROM: name one of the tables given in 'tables'")
    table = source.this
    alias = table.args.get("alias")
    for part, value in table.args.items():
        if part not in ("this", "alias") and value not in (None, False, []):
            raise refused(_REFUSED.get(part, f"FROM {table.sql()[:60]}: name one of the tables given in 'tables', "
                                             "with an alias or none"))
    if alias is not None and [part for part, value in alias.args.items() if part != "this" and value]:
        raise refused(f"FROM {table.sql()[:60]}: an alias names the table, not its columns")
    name = table.name
    if not isinstance(tables, dict) or name not in tables:
        known = sorted(tables) if isinstance(tables, dict) else tables
        raise InvalidParameterError(f"The 'tables' argument of dpdist.sql must hold the table {name!r} of the FROM "
                                    f"clause. Got the tables {known!r:.100}.")
    return tables[name], {table.alias} if table.alias else {name}


def _column(exp: Any, node: Any, qualifiers: set[str], where: str) -> str:
    """The name of the column ``node``, qualified by the FROM table or not at all; else a refusal naming it."""
    extra = [part for part, value in node.args.items() if part not in ("this", "table") and value]
    if not isinstance(node.this, exp.Identifier) or extra:
        raise refused(f"{where} {node.sql()[:60]}: name a column of the table")
    if node.table and node.table not in qualifiers:
        raise refused(f"{where} {node.sql()[:60]}, a column of a table not in FROM: a query reads one table "
                      f"({', '.join(sorted(qualifiers))})")
    return node.name


def _group_columns(exp: Any, tree: Any, qualifiers: set[str]) -> list[str]:
    group = tree.args.get("group")
    if group is None:
        return []
    if [part for part, value in group.args.items() if part != "expressions" and value]:
        raise refused(f"{group.sql()[:60]}: group by columns (no ROLLUP, CUBE or GROUPING SETS)")
    for expression in group.expressions:
        if not isinstance(expression, exp.Column):
            raise refused(f"GROUP BY {expression.sql()[:60]}: group by columns; compute a derived key in the table's "
                          "engine first")
    return [_column(exp, expression, qualifiers, "GROUP BY") for expression in group.expressions]


def _aggregates(exp: Any, tree: Any, by: list[str], qualifiers: set[str], bounds: dict, privacy_id: str | None
                ) -> tuple[list[Statistic], dict[str, str]]:
    """The statistics selected, and the names ``AS`` gives the key columns."""
    statistics, key_names, names, keys = [], {}, [], set(by)
    for item in tree.expressions:
        alias = item.alias if isinstance(item, exp.Alias) else None
        item = item.this if isinstance(item, exp.Alias) else item
        names.append(alias)
        if isinstance(item, exp.Column):
            name = _column(exp, item, qualifiers, "SELECT")
            if name not in keys:
                raise refused(f"the column {name!r} outside an aggregate: select GROUP BY columns and aggregates")
            key_names.update({name: alias} if alias else {})
            continue
        statistic = _statistic(exp, item, qualifiers, bounds, privacy_id)
        statistics.append(statistic.named(alias) if alias else statistic)
    if not statistics:
        raise refused(f"a SELECT without an aggregate: select {sql_forms()}")
    given = [name for name in names if name]
    if len(set(given)) != len(given) or set(given) & (keys - set(key_names)):
        raise refused(f"the aliases {given}: name each selected column once, apart from the other key columns")
    return statistics, key_names


def _arguments(exp: Any, item: Any) -> list:
    """A function's arguments in the order sqlglot declares them (its flags, such as COUNT's, left out)."""
    if isinstance(item, exp.Anonymous):
        return list(item.expressions)
    found = []
    for part in item.arg_types:
        value = item.args.get(part)
        found += [one for one in (value if isinstance(value, list) else [value]) if isinstance(one, exp.Expression)]
    return found


def _statistic(exp: Any, item: Any, qualifiers: set[str], bounds: dict, privacy_id: str | None) -> Statistic:
    """The statistic of one aggregate of the SELECT: the first registered aggregate one of whose forms it is."""
    if not isinstance(item, exp.Func):
        raise refused(f"{item.sql()[:80]}: select GROUP BY columns and aggregates ({sql_forms()})")
    call = _call(exp, item, qualifiers, bounds, privacy_id)
    kinds = aggregates_named(call.name)
    for kind in kinds:
        statistic = kind.from_sql(call)
        if statistic is not None:
            return statistic
    if kinds:
        several = len([form for kind in kinds for form in kind.sql_forms]) > 1
        raise refused(f"{call.text}: its form{'s are' if several else ' is'} {sql_forms(kinds)}")
    raise refused(f"{call.text}: the aggregates are {sql_forms()}, of a column c")


def _call(exp: Any, item: Any, qualifiers: set[str], bounds: dict, privacy_id: str | None) -> SqlCall:
    """The aggregate call ``item`` as the registry reads it: one column (or ``*``) and numbers, ``DISTINCT`` or not."""
    text = item.sql()[:80]
    name = item.name.upper() if isinstance(item, exp.Anonymous) else item.sql_name().upper()
    arguments, distinct = _arguments(exp, item), False
    if len(arguments) == 1 and isinstance(arguments[0], exp.Distinct):
        arguments, distinct = list(arguments[0].expressions), True
    column, numbers, star = None, [], False
    for argument in arguments:
        if isinstance(argument, exp.Column) and column is None:
            column = _column(exp, argument, qualifiers, f"{name}(")
        elif isinstance(argument, exp.Star) and not star:
            star = True
        elif isinstance(argument, exp.Literal) and not argument.is_string:
            numbers.append(number(argument.name, text))
        elif isinstance(argument, exp.Neg) and isinstance(argument.this, exp.Literal) and not argument.this.is_string:
            numbers.append(-number(argument.this.name, text))
        else:
            raise refused(f"{text}: an aggregate's arguments are one column (or *) and numbers")
    return SqlCall(name, text, column, tuple(numbers), star, distinct, privacy_id, bounds)


def _filtered(exp: Any, tree: Any, table: Any, qualifiers: set[str]) -> Any:
    """``table`` filtered by the WHERE clause in its own engine (:mod:`dpdist.queries._where`), or ``table`` without
    one; the clause typed against the table's schema before the engine evaluates anything."""
    where = tree.args.get("where")
    if where is None:
        return table
    from ..frame._tables import _calls, _computing, narwhals, open_frame  # lazy: narwhals, optional extra

    opened = open_frame("dpdist.sql", table)
    keep = where_predicate(exp, narwhals(), where.this, opened.schema, qualifiers)
    if keep is True:
        return table
    with _calls(opened.engine.name), _computing("dpdist.sql", opened.engine, list(opened.schema)):
        return (opened.frame.head(0) if keep is False else opened.frame.filter(keep)).to_native()
