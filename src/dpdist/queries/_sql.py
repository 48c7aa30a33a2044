"""``dpdist.sql``: one SELECT, parsed by sqlglot, into the :class:`~dpdist.queries.Query` its expressions would build.

The SQL a query answers privately is a narrow one: ``SELECT <key columns>, <aggregates> FROM <one table>
[GROUP BY <key columns>]``.  The aggregates: ``COUNT(*)``, ``COUNT(DISTINCT c)``, ``SUM(c)``, ``AVG(c)`` (or
``MEAN``), ``QUANTILES(c, q1, q2, ...)`` (``QUANTILE(c, q)``, ``MEDIAN(c)``), ``HISTOGRAM(c, bins)`` and ``CDF(c)``;
the bounds of a column summed, averaged or ranked are public arguments (``bounds={"c": (lo, hi)}``), never read from
the data.  Everything else is refused in one line naming it and saying what to do instead: joins, subqueries and common table expressions, HAVING, ORDER BY,
LIMIT, DISTINCT, window functions, set operations, columns that are neither keys nor aggregated.
``COUNT(DISTINCT <privacy_id>)`` is the number of distinct persons (:func:`~dpdist.queries.persons`);
``COUNT(DISTINCT c)`` of another column the number of its distinct values (:func:`~dpdist.queries.distinct`).

``WHERE`` keeps the rows a predicate of the row's own cells holds for (comparisons of columns with constants, ``IN``,
``BETWEEN``, ``IS NULL``, ``AND``, ``OR``, ``NOT``), in the table's engine, before any bounding or release.  It keeps
the guarantee: a per-row filter is a stable transformation (each row is kept or left out by its own values, so
adding or removing one person's rows changes the filtered table by at most those rows), so the releases on the
filtered table state what they would on any table.  ``AS`` names a key column or a statistic in the released table
(:meth:`~dpdist.queries.Statistic.named`).
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, Callable

from ..errors import InvalidParameterError, MissingDependencyError
from ._query import Query, query
from ._statistics import Statistic, cdf, count, distinct, histogram, mean, persons, quantiles, sum

__all__ = ["sql"]

#: clauses of a SELECT refused, with what to do instead
_REFUSED = {
    "joins": "JOIN: a query reads one table; join the tables in their engine first (each person's rows stay bounded "
             "by privacy_id), then query the result",
    "having": "HAVING: a condition on private aggregates would tell which groups pass it; filter the released table",
    "order": "ORDER BY: sort the released table instead (its rows are the groups)",
    "limit": "LIMIT: keep the rows of the released table you want instead",
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


def _refuse(what: str) -> InvalidParameterError:
    return InvalidParameterError(f"dpdist.sql refuses {what}.")


def sql(statement: str, tables: dict[str, Any], *, epsilon: float, bounds: dict[str, tuple[float, float]] | None = None,
        keys: dict[str, list] | list | None = None, privacy_id: str | None = None,
        max_contributions: int | None = None, max_groups: int | None = None, selection_epsilon: float | None = None,
        selection_delta: float = 1e-6, session: Any = None, rng: Any = None) -> Query:
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
        several columns); ``None``: the groups are chosen privately (``selection_epsilon``, ``selection_delta``).
    epsilon, privacy_id, max_contributions, max_groups, session, rng
        As in :func:`dpdist.query`.
    """
    sqlglot, exp = _sqlglot()
    if not isinstance(statement, str):
        raise InvalidParameterError(f"The 'statement' argument of dpdist.sql must be a string. Got {statement!r:.80}.")
    tree = _parsed(sqlglot, exp, statement)
    table = _filtered(exp, tree, _table(exp, tree, tables))
    by = _group_columns(exp, tree)
    statistics, key_names = _aggregates(exp, tree, set(by), bounds or {}, privacy_id)
    built = query(table, epsilon=epsilon, privacy_id=privacy_id, max_contributions=max_contributions,
                  max_groups=max_groups, session=session, rng=rng)
    if by:
        public = _public_keys(by, keys)
        built = built.group_by(*by, keys=public, selection_epsilon=None if public is not None else selection_epsilon,
                               selection_delta=selection_delta)
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
    except sqlglot.errors.ParseError as error:
        first = (str(error).splitlines() or [""])[0][:200]
        raise InvalidParameterError(f"dpdist.sql could not parse the statement: {first}") from None
    if len(trees) != 1 or not isinstance(trees[0], exp.Select):
        kind = "several statements" if len(trees) != 1 else f"a {type(trees[0]).__name__.upper()} statement"
        raise _refuse(f"{kind}: give one SELECT ... FROM <table> [GROUP BY ...]")
    tree = trees[0]
    for clause, why in _REFUSED.items():
        if tree.args.get(clause):
            raise _refuse(why)
    if any(isinstance(node, exp.Window) for node in tree.find_all(exp.Window)):
        raise _refuse("window functions (OVER): release per group with GROUP BY instead")
    if any(node is not tree for node in tree.find_all(exp.Select)) or tree.find(exp.Subquery):
        raise _refuse("subqueries: give the table the subquery builds in 'tables' instead")
    return tree


def _table(exp: Any, tree: Any, tables: Any) -> Any:
    source = tree.args.get("from_") or tree.args.get("from")
    if source is None or not isinstance(source.this, exp.Table):
        raise _refuse("a SELECT without one table in FROM: name one of the tables given in 'tables'")
    name = source.this.name
    if not isinstance(tables, dict) or name not in tables:
        known = sorted(tables) if isinstance(tables, dict) else tables
        raise InvalidParameterError(f"The 'tables' argument of dpdist.sql must hold the table {name!r} of the FROM "
                                    f"clause. Got the tables {known!r:.100}.")
    return tables[name]


def _group_columns(exp: Any, tree: Any) -> list[str]:
    group = tree.args.get("group")
    expressions = list(group.expressions) if group else []
    for expression in expressions:
        if not isinstance(expression, exp.Column):
            raise _refuse(f"GROUP BY {expression.sql()[:60]}: group by columns; compute a derived key in the table's "
                          "engine first")
    return [expression.name for expression in expressions]


def _aggregates(exp: Any, tree: Any, keys: set[str], bounds: dict, privacy_id: str | None
                ) -> tuple[list[Statistic], dict[str, str]]:
    """The statistics selected, and the names ``AS`` gives the key columns."""
    statistics, key_names, names = [], {}, []
    for item in tree.expressions:
        alias = item.alias if isinstance(item, exp.Alias) else None
        item = item.this if isinstance(item, exp.Alias) else item
        names.append(alias)
        if isinstance(item, exp.Column):
            if item.name not in keys:
                raise _refuse(f"the column {item.name!r} outside an aggregate: select GROUP BY columns and aggregates")
            key_names.update({item.name: alias} if alias else {})
            continue
        statistic = _statistic(exp, item, bounds, privacy_id)
        statistics.append(statistic.named(alias) if alias else statistic)
    if not statistics:
        raise _refuse("a SELECT without an aggregate: select COUNT(*), COUNT(DISTINCT c), SUM, AVG, QUANTILES, HISTOGRAM or CDF")
    given = [name for name in names if name]
    if len(set(given)) != len(given) or set(given) & (keys - set(key_names)):
        raise _refuse(f"the aliases {given}: name each selected column once, apart from the other key columns")
    return statistics, key_names


def _statistic(exp: Any, item: Any, bounds: dict, privacy_id: str | None) -> Statistic:
    name = (item.name if isinstance(item, exp.Anonymous) else item.key).upper()
    arguments = list(item.expressions) if isinstance(item, exp.Anonymous) else [item.this, *item.expressions]
    if isinstance(item, exp.Count) and isinstance(item.this, exp.Distinct):
        counted = item.this.expressions
        if len(counted) != 1 or not isinstance(counted[0], exp.Column):
            raise _refuse(f"{item.sql()[:80]}: a distinct count is of one column, COUNT(DISTINCT c)")
        return persons() if counted[0].name == privacy_id else distinct(counted[0].name)
    if isinstance(item, exp.Count):
        if not isinstance(item.this, exp.Star) and not (isinstance(item.this, exp.Literal) and item.this.name == "1"):
            raise _refuse(f"{item.sql()}: count rows with COUNT(*) (a count of one column's values is not supported)")
        return count()
    builders: dict[str, Callable[..., Statistic]] = {
        "SUM": lambda c, rest: sum(c, _bounds(c, bounds)), "AVG": lambda c, rest: mean(c, _bounds(c, bounds)),
        "MEAN": lambda c, rest: mean(c, _bounds(c, bounds)), "CDF": lambda c, rest: cdf(c, _bounds(c, bounds)),
        "MEDIAN": lambda c, rest: quantiles(c, [0.5], _bounds(c, bounds)),
        "QUANTILES": lambda c, rest: quantiles(c, rest, _bounds(c, bounds)),
        "QUANTILE": lambda c, rest: quantiles(c, rest, _bounds(c, bounds)),
        "HISTOGRAM": lambda c, rest: histogram(c, int(rest[0]) if rest else 0, _bounds(c, bounds))}
    if name not in builders or not arguments or not isinstance(arguments[0], exp.Column):
        raise _refuse(f"{item.sql()[:80]}: the aggregates are COUNT(*), COUNT(DISTINCT c), SUM(c), AVG(c), QUANTILES(c, q, ...), "
                      "MEDIAN(c), HISTOGRAM(c, bins) and CDF(c) of a column c")
    rest = []
    for argument in arguments[1:]:
        if not isinstance(argument, exp.Literal) or argument.is_string:
            raise _refuse(f"{item.sql()[:80]}: its arguments after the column must be numbers")
        rest.append(float(argument.name))
    return builders[name](arguments[0].name, rest)


def _bounds(column: str, bounds: dict) -> tuple[float, float]:
    if not isinstance(bounds, dict) or column not in bounds:
        raise InvalidParameterError(f"The 'bounds' argument of dpdist.sql must give the public bounds of the column "
                                    f"{column!r} (bounds={{{column!r}: (lo, hi)}}). Got {bounds!r:.100}.")
    return bounds[column]


#: the comparisons a WHERE may make, as narwhals operators
_COMPARED = {"EQ": operator.eq, "NEQ": operator.ne, "GT": operator.gt, "GTE": operator.ge, "LT": operator.lt,
             "LTE": operator.le}


def _filtered(exp: Any, tree: Any, table: Any) -> Any:
    """``table`` filtered by the WHERE clause in its own engine (narwhals), or ``table`` without one."""
    where = tree.args.get("where")
    if where is None:
        return table
    import narwhals as nw  # lazy: optional extra dpdist[query]

    frame = nw.from_native(table)
    return frame.filter(_predicate(exp, nw, where.this, set(frame.collect_schema().names()))).to_native()


def _predicate(exp: Any, nw: Any, node: Any, names: set[str]) -> Any:
    """The narwhals expression (or constant) of one node of a WHERE clause, or a refusal naming the node."""
    def part(child: Any) -> Any:
        return _predicate(exp, nw, child, names)

    kind = type(node).__name__
    if isinstance(node, exp.Column):
        if node.name not in names:
            raise _refuse(f"WHERE on the column {node.name!r}, which the table does not have: filter on its columns "
                          f"{sorted(names)!r:.120}")
        return nw.col(node.name)
    if isinstance(node, exp.Literal):
        return node.name if node.is_string else float(node.name) if any(c in node.name for c in ".eE") \
            else int(node.name)
    if isinstance(node, (exp.Paren, exp.Neg)):
        return part(node.this) if isinstance(node, exp.Paren) else -part(node.this)
    if isinstance(node, exp.Boolean):
        return node.this
    if kind in _COMPARED:
        return _COMPARED[kind](part(node.this), part(node.expression))
    if isinstance(node, (exp.And, exp.Or)):
        return (operator.and_ if isinstance(node, exp.And) else operator.or_)(part(node.this), part(node.expression))
    if isinstance(node, exp.Not):
        return ~part(node.this)
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        return part(node.this).is_null()
    if isinstance(node, exp.In) and not node.args.get("query"):
        return part(node.this).is_in([part(value) for value in node.expressions])
    if isinstance(node, exp.Between):
        return part(node.this).is_between(part(node.args["low"]), part(node.args["high"]), closed="both")
    raise _refuse(f"WHERE ... {node.sql()[:60]}: a row filter compares columns with constants (=, <>, <, <=, >, "
                  ">=, IN, BETWEEN, IS NULL, AND, OR, NOT); compute other conditions in the table's engine first")
