"""The WHERE clause of ``dpdist.sql``: typed against the table's schema, then one narwhals expression.

**Typed before it runs.**  Every node of the clause gets a type from the schema alone (a number, a string, a boolean,
or another type) before any engine evaluates anything, and is refused by name where the types do not fit: a column
that is not boolean used as a condition (``WHERE age``), a comparison of a string with a number (``name > 3``), an
order on a categorical (its order is each engine's own), a column the table does not have, or of another table
(``u.age``).  An engine therefore never meets a predicate it cannot evaluate, and its errors, whose messages may quote
the table's values, do not arise; a refusal depends on the statement and the schema, never on the data.

**One meaning on every engine.**  The predicate follows SQL's three-valued logic, with dpdist's missing values (null,
and NaN in a float column) as SQL's NULL: a comparison with a missing value is unknown, ``NOT`` of unknown is unknown,
``AND`` and ``OR`` are Kleene's, and a row is kept where its predicate is true.  Each condition compiles to two
expressions without nulls, where it is true and where it is false (``NOT`` swaps them), so pandas (whose NaN compares
false), Polars and DuckDB (whose NaN is the largest number) and the others keep the same rows.  Constants are folded
(``WHERE 1 = 1`` keeps every row, ``WHERE FALSE`` none); ``IN`` and ``BETWEEN`` are their comparisons; chains of
``AND`` and ``OR`` are read without recursion and built as balanced trees, however long.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import InvalidParameterError
from ..frame._tables import dtype_name

__all__ = ["number", "refused", "where_predicate"]

#: the comparisons of a WHERE, by sqlglot's node name: the operator, and whether it orders its operands
_COMPARED: dict[str, tuple[Callable[[Any, Any], Any], bool]] = {
    "EQ": (operator.eq, False), "NEQ": (operator.ne, False), "GT": (operator.gt, True), "GTE": (operator.ge, True),
    "LT": (operator.lt, True), "LTE": (operator.le, True)}
#: what a filter does, for the refusals
_GRAMMAR = ("a row filter compares columns and constants of one type (=, <>, <, <=, >, >=, IN, BETWEEN, IS NULL) and "
            "joins conditions with AND, OR, NOT")


def number(written: str, where: str) -> int | float:
    """A number literal of a statement as written: an int within 64 bits, or a finite float; refused by ``where``."""
    try:
        value: int | float = int(written) if written.isdigit() else float(written)
    except ValueError:
        raise refused(f"{where}: a number is written in decimal digits") from None
    if (isinstance(value, int) and value >= 2**63) or not math.isfinite(value):
        raise refused(f"{where}: numbers are 64-bit (integers below 2**63, finite floats)")
    return value


def refused(what: str) -> InvalidParameterError:
    """The refusal of a statement, in one line naming what is refused."""
    return InvalidParameterError(f"dpdist.sql refuses {what}.")


@dataclass(frozen=True)
class _Value:
    """A number, string or boolean of the WHERE clause: a constant, or an expression of the row's cells."""

    kind: str  # "number", "string", "boolean", or "other" (a column of another type: only IS NULL tests it)
    text: str  # as written, for refusals
    expression: Any = None  # the narwhals expression (None: a constant)
    constant: Any = None
    missing: Any = None  # where the value is missing (null or NaN), None for a constant
    ordered: bool = True  # whether <, >, BETWEEN order it (not a categorical's or a boolean's)
    dtype: str = ""

    def operand(self, nw: Any) -> Any:
        return self.expression if self.expression is not None else nw.lit(self.constant)


@dataclass(frozen=True)
class _Condition:
    """A condition: where it is true, and where it is false (each an expression without nulls, or a Python bool)."""

    true: Any
    false: Any


def _and(first: Any, second: Any) -> Any:
    if first is False or second is False:
        return False
    return second if first is True else first if second is True else first & second


def _or(first: Any, second: Any) -> Any:
    if first is True or second is True:
        return True
    return second if first is False else first if second is False else first | second


def _balanced(combine: Callable[[Any, Any], Any], parts: list) -> Any:
    """``parts`` combined pairwise, level by level: a tree of depth log2(len(parts)), not len(parts)."""
    while len(parts) > 1:
        parts = [combine(*parts[i:i + 2]) if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]


class _Compiler:
    """The typing and compiling of one WHERE clause against one table's schema."""

    def __init__(self, exp: Any, nw: Any, schema: dict[str, Any], qualifiers: set[str]):
        self.exp, self.nw, self.schema, self.qualifiers = exp, nw, schema, qualifiers

    def condition(self, node: Any) -> _Condition:
        exp = self.exp
        node = self._unwrapped(node)
        if isinstance(node, (exp.And, exp.Or)):
            parts = [self.condition(part) for part in self._chain(node, type(node))]
            return self._all(parts) if isinstance(node, exp.And) else self._any(parts)
        if isinstance(node, exp.Not):  # a run of NOTs read without recursion, however long
            negations = 0
            while isinstance(node, exp.Not):
                self._only(node, "this")
                node, negations = self._unwrapped(node.this), negations + 1
            negated = self.condition(node)
            return negated if negations % 2 == 0 else _Condition(negated.false, negated.true)
        if isinstance(node, exp.Is):
            return self._is_null(node)
        if type(node).__name__ in _COMPARED:
            self._only(node, "this", "expression")
            return self._compared(type(node).__name__, self.value(node.this), self.value(node.expression), node)
        if isinstance(node, exp.In):
            return self._in(node)
        if isinstance(node, exp.Between):
            self._only(node, "this", "low", "high")
            value = self.value(node.this)
            return self._all([self._compared("GTE", value, self.value(node.args["low"]), node),
                              self._compared("LTE", value, self.value(node.args["high"]), node)])
        value = self.value(node)
        if value.kind != "boolean":
            what, other = {"number": ("numbers", "<> 0"), "string": ("strings", "<> ''")}.get(
                value.kind, (f"values of type {value.dtype}", "IS NOT NULL"))
            raise refused(f"WHERE ... {value.text[:60]} as a condition: a condition is true or false, and it holds "
                          f"{what}; compare it ({value.text[:40]} {other}, for instance)")
        if value.expression is None:
            return _Condition(bool(value.constant), not value.constant)
        present = ~value.missing
        return _Condition(present & value.expression, present & ~value.expression)

    def value(self, node: Any) -> _Value:
        exp = self.exp
        node = self._unwrapped(node)
        if isinstance(node, exp.Column):
            return self._column(node)
        if isinstance(node, exp.Literal):
            self._only(node, "this", "is_string")
            if node.is_string:
                return _Value("string", node.sql(), constant=node.name)
            return _Value("number", node.sql(), constant=number(node.name, f"WHERE ... {node.sql()[:60]}"))
        if isinstance(node, exp.Boolean):
            self._only(node, "this")
            return _Value("boolean", node.sql(), constant=bool(node.this), ordered=False)
        if isinstance(node, exp.Neg):
            self._only(node, "this")
            inner = self.value(node.this)
            if inner.kind != "number":
                raise refused(f"WHERE ... {node.sql()[:60]}: a minus sign goes before a number")
            if inner.expression is None:
                return _Value("number", node.sql(), constant=-inner.constant)
            return _Value("number", node.sql(), -inner.expression, missing=inner.missing, dtype=inner.dtype)
        if isinstance(node, exp.Null):
            raise refused(f"WHERE ... {node.parent.sql()[:60] if node.parent else 'NULL'}: a comparison with NULL "
                          "is never true in SQL; test a missing value with IS NULL or IS NOT NULL")
        raise refused(f"WHERE ... {node.sql()[:60]}: {_GRAMMAR}; compute other values in the table's engine first")

    def _column(self, node: Any) -> _Value:
        exp = self.exp
        self._only(node, "this", "table")
        if not isinstance(node.this, exp.Identifier):
            raise refused(f"WHERE ... {node.sql()[:60]}: name one column")
        if node.table and node.table not in self.qualifiers:
            raise refused(f"WHERE on {node.sql()[:60]}, a column of a table not in FROM: a query reads one table "
                          f"({', '.join(sorted(self.qualifiers))})")
        name = node.name
        if name not in self.schema:
            raise refused(f"WHERE on the column {name!r}, which the table does not have: filter on its columns "
                          f"{list(self.schema)!r:.160}")
        nw, dtype = self.nw, self.schema[name]
        column = nw.col(name)
        missing = column.is_null() | column.is_nan() if dtype.is_float() else column.is_null()
        if dtype.is_boolean():
            return _Value("boolean", name, column, missing=missing, ordered=False, dtype=dtype_name(dtype))
        if dtype.is_numeric():
            return _Value("number", name, column, missing=missing, dtype=dtype_name(dtype))
        if dtype == nw.String:
            return _Value("string", name, column, missing=missing, dtype=dtype_name(dtype))
        if isinstance(dtype, (nw.Categorical, nw.Enum)):
            return _Value("string", name, column, missing=missing, ordered=False, dtype=dtype_name(dtype))
        return _Value("other", name, column, missing=missing, ordered=False, dtype=dtype_name(dtype))

    def _compared(self, name: str, left: _Value, right: _Value, node: Any) -> _Condition:
        compare, orders = _COMPARED[name]
        kinds = {left.kind, right.kind}
        if len(kinds) != 1 or "other" in kinds:
            raise refused(f"WHERE ... {node.sql()[:80]}: {self._types(left, right)}; {_GRAMMAR} (a string in quotes, "
                          "a number without, TRUE or FALSE)")
        if orders and not (left.ordered and right.ordered):
            raise refused(f"WHERE ... {node.sql()[:80]}: {self._unordered(left, right)} compare with =, <>, IN or IS "
                          "NULL only; cast a categorical to strings in the table's engine to order it")
        if left.expression is None and right.expression is None:
            holds = bool(compare(left.constant, right.constant))
            return _Condition(holds, not holds)
        compared = compare(left.operand(self.nw), right.operand(self.nw))
        present = _and(True if left.missing is None else ~left.missing, True if right.missing is None else ~right.missing)
        return _Condition(_and(present, compared), _and(present, ~compared))

    def _in(self, node: Any) -> _Condition:
        """``IN``: one ``is_in`` of a string column's constant strings, else the equalities' ``OR``."""
        self._only(node, "this", "expressions")
        value = self.value(node.this)
        listed = [self.value(item) for item in node.expressions]
        if not listed:
            raise refused(f"WHERE ... {node.sql()[:80]}: IN lists one value or more")
        if value.kind == "string" and value.expression is not None and all(
                item.kind == "string" and item.expression is None for item in listed):
            present, found = ~value.missing, value.expression.is_in([item.constant for item in listed])
            return _Condition(present & found, present & ~found)
        return self._any([self._compared("EQ", value, item, node) for item in listed])

    def _is_null(self, node: Any) -> _Condition:
        self._only(node, "this", "expression")
        if not isinstance(node.expression, self.exp.Null):
            raise refused(f"WHERE ... {node.sql()[:60]}: IS tests NULL only (IS NULL, IS NOT NULL); compare a boolean "
                          "with = TRUE")
        value = self.value(node.this)
        if value.expression is None:
            return _Condition(False, True)
        return _Condition(value.missing, ~value.missing)

    @staticmethod
    def _all(parts: list[_Condition]) -> _Condition:
        return _Condition(_balanced(_and, [part.true for part in parts]), _balanced(_or, [part.false for part in parts]))

    @staticmethod
    def _any(parts: list[_Condition]) -> _Condition:
        return _Condition(_balanced(_or, [part.true for part in parts]), _balanced(_and, [part.false for part in parts]))

    def _chain(self, node: Any, kind: Any) -> list:
        """The operands of a chain of one connective (``a AND b AND c``), left to right, read without recursion."""
        operands: list = []
        pending: list = [node]
        while pending:
            current = self._unwrapped(pending.pop())
            if isinstance(current, kind):
                self._only(current, "this", "expression")
                pending += [current.expression, current.this]
            else:
                operands.append(current)
        return operands

    def _unwrapped(self, node: Any) -> Any:
        while isinstance(node, self.exp.Paren):
            self._only(node, "this")
            node = node.this
        return node

    @staticmethod
    def _only(node: Any, *allowed: str) -> None:
        """Refuses a node carrying a modifier the filter does not read (``BETWEEN SYMMETRIC``, ``IN UNNEST``, ...)."""
        extra = [key for key, value in node.args.items() if key not in allowed and value not in (None, False, [])]
        if extra:
            raise refused(f"WHERE ... {node.sql()[:60]}: {_GRAMMAR}")

    @staticmethod
    def _types(left: _Value, right: _Value) -> str:
        def typed(value: _Value) -> str:
            what = {"number": "a number", "string": "a string", "boolean": "a boolean"}.get(value.kind)
            return f"{value.text[:40]} is {what or 'of type ' + value.dtype}"
        return f"{typed(left)} and {typed(right)}"

    @staticmethod
    def _unordered(left: _Value, right: _Value) -> str:
        value = left if not left.ordered else right
        what = "booleans" if value.kind == "boolean" else f"categorical values ({value.text[:40]}: {value.dtype})"
        return what


def where_predicate(exp: Any, nw: Any, node: Any, schema: dict[str, Any], qualifiers: set[str]) -> Any:
    """Where the WHERE clause ``node`` keeps a row: a narwhals expression, or ``True`` (every row) or ``False`` (none)
    for a constant condition; refused by name where it does not type against ``schema`` (``{column: narwhals
    dtype}``).  ``qualifiers``: the names a column may be qualified with (the FROM table's name or alias)."""
    return _Compiler(exp, nw, schema, qualifiers).condition(node).true
