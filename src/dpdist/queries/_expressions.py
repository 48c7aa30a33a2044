"""The row expressions of ``dpdist.sql`` (WHERE's conditions, derived keys, aggregates' arguments): typed against the
schema, then narwhals expressions run in the table's own engine.

**Typed before they run.**  Every node gets a type from the schema alone (a number, a string, a boolean, or another
type) before any engine evaluates anything, and is refused by name where the types do not fit: a column that is not
boolean used as a condition (``WHERE age``), a comparison of a string with a number (``name > 3``), arithmetic on a
string, an order on a categorical (its order is each engine's own), branches of a ``CASE`` of several types, a column
the tables do not have, or of a table not in FROM (``u.age``).  An engine therefore never meets an expression it
cannot evaluate, and its errors, whose messages may quote the table's values, do not arise; a refusal depends on the
statement and the schema, never on the data.

**Values.**  Columns and constants, arithmetic (``+ - * /``), ``FLOOR``, ``CEIL``, ``ROUND(x[, digits])``, ``ABS``,
``LEAST``, ``GREATEST``, ``CASE WHEN ... THEN ... [ELSE ...] END`` (and ``CASE x WHEN v THEN ...``), ``IF(c, a, b)``,
and a condition as a boolean.  Each is a per-row map: a row's value depends on that row's cells alone, so adding or
removing a person's rows changes the derived column in those rows only (stability 1), and a release over it states what
it would over any column.  A column narrower than 64 bits (float32, int8 to int32) is read as a 64-bit float, exactly,
before anything compares or computes with it (Polars compares a float32 column with ``0.1`` in 32 bits, pandas and DuckDB in
64).  Numbers are computed in 64-bit floats on every engine (no integer overflows; an integer beyond :math:`2^{53}`
rounds to its nearest float on every engine, PyArrow included: :func:`as_float`; an integer compared with a float is
compared as a float, as SQL does; ``FLOOR`` and ``CEIL`` leave a float beyond :math:`2^{52}` as it is; a division by a
constant is computed alike everywhere, exact for an integer quotient, where Polars' own is a last bit off); ``x / 0`` is
missing (as BigQuery's ``SAFE_DIVIDE``; no engine divides by 0), as is any arithmetic with a missing operand; ``FLOOR``,
``CEIL``, ``ROUND(x)`` and integer arithmetic give integers (exact below :math:`2^{53}`; missing beyond); ``ROUND``
rounds half away from zero, as SQL does (pandas' own rounds half to even).

**Ranges.**  With the public bounds of its columns, a number's range is worked out by interval arithmetic (``income *
0.1`` over ``income`` in (0, 300,000) is (0, 30,000)): the bounds of an aggregate of an expression where none are given
for it.  They come from public parameters alone.

**One meaning on every engine.**  Conditions follow SQL's three-valued logic, with dpdist's missing values (null, and
NaN in a float column) as SQL's NULL: a comparison with a missing value is unknown, ``NOT`` of unknown is unknown,
``AND`` and ``OR`` are Kleene's, and a row is kept where its condition is true.  Each condition compiles to two
expressions without nulls, where it is true and where it is false (``NOT`` swaps them), so pandas (whose NaN compares
false), Polars and DuckDB (whose NaN is the largest number) and the others keep the same rows.  Constants are folded
(``WHERE 1 = 1`` keeps every row, ``WHERE FALSE`` none); ``BETWEEN`` is its comparisons, ``IN`` of constants one
membership test per row, meaning what its equalities would (an integer column's exactly); chains of
``AND`` and ``OR`` are read without recursion and built as balanced trees, however long.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from ..errors import InvalidParameterError
from ..frame._tables import dtype_name

__all__ = ["number", "refused", "as_float", "Scope", "Value", "RowCompiler"]

#: the comparisons, by sqlglot's node name: the operator, and whether it orders its operands
_COMPARED: dict[str, tuple[Callable[[Any, Any], Any], bool]] = {
    "EQ": (operator.eq, False), "NEQ": (operator.ne, False), "GT": (operator.gt, True), "GTE": (operator.ge, True),
    "LT": (operator.lt, True), "LTE": (operator.le, True)}
#: the arithmetic, by sqlglot's node name
_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {"Add": operator.add, "Sub": operator.sub, "Mul": operator.mul,
                                                     "Div": operator.truediv}
#: the node names of conditions (a condition where a value is wanted is a boolean)
_CONDITIONS = ("And", "Or", "Not", "Is", "In", "Between", *_COMPARED)
#: what an expression may be, for the refusals
_GRAMMAR = ("a condition compares values of one type (=, <>, <, <=, >, >=, IN, BETWEEN, IS NULL) and joins conditions "
            "with AND, OR, NOT; a value is a column, a constant, arithmetic (+, -, *, /), FLOOR, CEIL, ROUND, ABS, "
            "LEAST, GREATEST, CASE WHEN or IF of them")
#: integers computed in floats are exact below this
_EXACT = 2.0**53
#: the number types an expression reads as 64-bit floats (exactly): Polars compares a Float32 column with a constant
#: in 32 bits (``x = 0.1`` true where ``x`` is ``float32(0.1)``), pandas and DuckDB in 64.  A cast to floats never
#: fails (Dask's cast of a nullable integer column to integers fails on a missing value: a refusal one row decides)
_WIDE = {name: "Float64" for name in ("Float32", "Float16", *(f"{sign}Int{bits}" for sign in ("", "U")
                                                                for bits in (8, 16, 32)))}
#: the integers an integer column of each 64-bit type holds, ``[low, high)``: an IN's constants outside match nothing
_WHOLE = {"Int64": (-2**63, 2**63), "UInt64": (0, 2**64)}
#: the deepest a value may nest (``a + b + c`` is two levels): an engine evaluates an expression by recursion
DEPTH = 64


def as_float(nw: Any, expression: Any, dtype: Any) -> Any:
    """``expression``, of the narwhals number type ``dtype``, as 64-bit floats on every engine whatever its values: an
    integer beyond :math:`2^{53}` rounds to the nearest float, as every engine's conversion rounds it.  PyArrow's cast
    checks the range (it refuses the column when one value is beyond :math:`2^{53}`: a failure one row decides), so a
    64-bit integer is divided by the integer 1 instead, a division every engine computes in floats (PyArrow converting
    its operands unchecked), and exact."""
    name = dtype if isinstance(dtype, str) else dtype_name(dtype)
    if name == "Float64":
        return expression
    return expression / nw.lit(1) if name in _WHOLE else expression.cast(nw.Float64)


def number(written: str, where: str) -> int | float:
    """A number literal of a statement as written: an int within 64 bits, or a finite float; refused by ``where``."""
    try:
        value: int | float = int(written) if written.isdigit() else float(written)
    except ValueError:
        raise refused(f"{where}: a number is written in decimal digits") from None
    return _checked_number(value, where)


def _checked_number(value: int | float, where: str) -> int | float:
    if (isinstance(value, int) and abs(value) >= 2**63) or not math.isfinite(value):
        raise refused(f"{where}: numbers are 64-bit (integers below 2**63, finite floats)")
    return value


def refused(what: str) -> InvalidParameterError:
    """The refusal of a statement, in one line naming what is refused."""
    return InvalidParameterError(f"dpdist.sql refuses {what}.")


@dataclass(frozen=True)
class Scope:
    """The columns a statement's expressions may name: what each name as written (qualified or not) is in the frame.

    Attributes
    ----------
    schema : dict or None
        ``{frame column: narwhals dtype}`` (public: no data read); ``None`` before the table is opened (a statement
        that reads it as it is: names are checked by the query, as it runs).
    names : dict or None
        ``{(qualifier or None, name): frame column}``; ``None`` for a name several tables hold (ambiguous unqualified).
    qualifiers : tuple of str
        The tables of FROM, by alias or name.
    bounds : dict
        ``{frame column: (lo, hi)}``: the public bounds given, from which numbers' ranges are worked out.
    """

    schema: dict[str, Any] | None
    names: dict[tuple, str | None] | None
    qualifiers: tuple[str, ...]
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)

    @classmethod
    def of_table(cls, schema: dict[str, Any] | None, qualifier: str, bounds: dict | None = None) -> "Scope":
        """The scope of one table's columns, named bare or qualified by ``qualifier`` (``schema=None``: not yet
        opened)."""
        if schema is None:
            return cls(None, None, (qualifier,))
        names: dict[tuple, str | None] = {(None, name): name for name in schema}
        names.update({(qualifier, name): name for name in schema})
        given = {name: value for name, value in (bounds or {}).items() if name in schema}
        return cls(dict(schema), names, (qualifier,), given)

    def resolve(self, qualifier: str | None, name: str, where: str, written: str) -> str:
        """The frame column of ``qualifier.name``; a refusal naming it (``where`` the clause) when there is none."""
        if qualifier and qualifier not in self.qualifiers:
            one = len(self.qualifiers) == 1
            raise refused(f"{where} {written[:60]}, a column of a table not in FROM: a query reads "
                          f"{'one table' if one else 'the tables'} ({', '.join(sorted(self.qualifiers))})")
        key = (qualifier or None, name)
        if self.names is None:
            return name
        if key not in self.names:
            holder = "the table does not have" if len(self.qualifiers) == 1 else "no table of FROM has"
            raise refused(f"{where} the column {name!r}, which {holder}: name one of its columns "
                          f"{sorted({n for q, n in self.names if q is None})!r:.160}")
        column = self.names[key]
        if column is None:
            raise refused(f"{where} the column {name!r}, which several tables of FROM have: qualify it "
                          f"({' or '.join(f'{q}.{name}' for q in self.qualifiers if (q, name) in self.names)})")
        return column


@dataclass(frozen=True)
class Value:
    """A number, string or boolean of an expression: a constant, or a narwhals expression of the row's cells."""

    kind: str  # "number", "string", "boolean", or "other" (a column of another type: only IS NULL tests it)
    text: str  # as written, for refusals
    expression: Any = None  # the narwhals expression (None: a constant)
    constant: Any = None
    missing: Any = None  # where the value is missing (null or NaN), None for a constant
    ordered: bool = True  # whether <, >, BETWEEN order it (not a categorical's or a boolean's)
    dtype: str = ""
    integer: bool = False  # a number whose every value is an integer
    low: float | None = None  # its range over its columns' public bounds (None: unknown)
    high: float | None = None

    def operand(self, nw: Any) -> Any:
        return self.expression if self.expression is not None else nw.lit(self.constant)

    @property
    def present(self) -> Any:
        """Where it is not missing: an expression without nulls, or ``True`` for a constant."""
        return True if self.expression is None else ~self.missing


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


def _divided(x: Any, divisor: float) -> Any:
    """``x / divisor`` for a constant divisor, the same on every engine: the product by the reciprocal and one
    correction, :math:`q + (x - q d) r` with :math:`q = x r`, :math:`r = 1/d` (products and sums, which every engine
    rounds alike; Polars itself divides a column by a constant as the product by its reciprocal, a last bit away from
    the quotient pandas and DuckDB give, and from an integer quotient).  An integer quotient comes out exact."""
    reciprocal = 1.0 / divisor
    first = x * reciprocal
    return first + (x - first * divisor) * reciprocal


def _alike(left: Value, right: Value) -> bool:
    """Whether two numbers compare as they are: two columns of one type, or an integer column and an integer it holds;
    other pairs compare as 64-bit floats (:func:`as_float`), as SQL compares an integer with a float (PyArrow refuses
    to compare an integer beyond :math:`2^{53}` with a float, where the others convert it)."""
    if left.expression is not None and right.expression is not None:
        return left.dtype == right.dtype
    column, constant = (left, right.constant) if right.expression is None else (right, left.constant)
    low, high = _WHOLE.get(column.dtype, (0, 0))
    return isinstance(constant, int) and low <= constant < high


def _floor(nw: Any, x: Any, ceil: bool = False) -> Any:
    """``FLOOR`` (or ``CEIL``) of the float expression ``x``, a float for every value on every engine: a float of
    magnitude :math:`2^{52}` or more is an integer already and stays as it is, so the engine rounds small values only
    (Ibis' and Spark's ``FLOOR`` give a 64-bit integer, which fails beyond :math:`2^{63}`: a failure one row decides)."""
    small = x.abs() < 2.0**52
    inner = nw.when(small).then(x).otherwise(nw.lit(0.0))
    return nw.when(small).then(inner.ceil() if ceil else inner.floor()).otherwise(x)


def _interval(name: str, left: Value, right: Value) -> tuple[float | None, float | None]:
    """The range of ``left <name> right`` over their ranges (interval arithmetic); ``(None, None)`` where unknown."""
    if None in (left.low, left.high, right.low, right.high):
        return None, None
    a, b, c, d = float(left.low), float(left.high), float(right.low), float(right.high)  # type: ignore[arg-type]
    if name == "Add":
        ends = [a + c, b + d]
    elif name == "Sub":
        ends = [a - d, b - c]
    elif name == "Mul":
        ends = [a * c, a * d, b * c, b * d]
    elif c > 0 or d < 0:
        ends = [a / c, a / d, b / c, b / d]
    else:
        return None, None  # a divisor whose range holds 0: no bound
    return (min(ends), max(ends)) if all(map(math.isfinite, ends)) else (None, None)


class RowCompiler:
    """The typing and compiling of a statement's row expressions against one scope (``clause`` names them in errors)."""

    def __init__(self, exp: Any, nw: Any, scope: Scope, clause: str = "WHERE"):
        self.exp, self.nw, self.scope, self.clause = exp, nw, scope, clause
        self.depth = 0

    def _refused(self, node: Any, why: str, width: int = 60) -> InvalidParameterError:
        return refused(f"{self.clause} ... {node.sql()[:width]}: {why}")

    # --- conditions ---

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
            raise refused(f"{self.clause} ... {value.text[:60]} as a condition: a condition is true or false, and it "
                          f"holds {what}; compare it ({value.text[:40]} {other}, for instance)")
        if value.expression is None:
            return _Condition(bool(value.constant), not value.constant)
        return _Condition(value.present & value.expression, value.present & ~value.expression)

    def _compared(self, name: str, left: Value, right: Value, node: Any) -> _Condition:
        compare, orders = _COMPARED[name]
        kinds = {left.kind, right.kind}
        if len(kinds) != 1 or "other" in kinds:
            raise self._refused(node, f"{self._types(left, right)}; {_GRAMMAR} (a string in quotes, a number "
                                      "without, TRUE or FALSE)", 80)
        if orders and not (left.ordered and right.ordered):
            raise self._refused(node, f"{self._unordered(left, right)} compare with =, <>, IN or IS NULL only; cast a "
                                      "categorical to strings in the table's engine to order it", 80)
        if left.expression is None and right.expression is None:
            holds = bool(compare(left.constant, right.constant))
            return _Condition(holds, not holds)
        operands = (left.operand(self.nw), right.operand(self.nw)) if left.kind != "number" or _alike(left, right) \
            else (self.floats(left), self.floats(right))
        compared = compare(*operands)
        present = _and(left.present, right.present)
        return _Condition(_and(present, compared), _and(present, ~compared))

    def _in(self, node: Any) -> _Condition:
        """``IN``: a value's ``is_in`` of constants of its kind (one test per row however long the list: an ``OR`` of
        thousands of equalities was a graph Dask took minutes over), else the equalities' ``OR``."""
        self._only(node, "this", "expressions")
        value = self.value(node.this)
        listed = [self.value(item) for item in node.expressions]
        if not listed:
            raise self._refused(node, "IN lists one value or more", 80)
        if value.expression is None or value.kind not in ("string", "number") or any(
                item.kind != value.kind or item.expression is not None for item in listed):
            return self._any([self._compared("EQ", value, item, node) for item in listed])
        constants = [item.constant for item in listed]
        if value.kind == "string":
            found = value.expression.is_in(constants)
        elif value.integer and value.dtype in _WHOLE:  # an integer column: exactly, as = compares it
            low, high = _WHOLE[value.dtype]
            found = value.expression.is_in(sorted({int(c) for c in constants if float(c).is_integer() and
                                                   low <= int(c) < high}))
        else:  # a float column or a computed number: in 64-bit floats, as = compares it
            found = self.floats(value).is_in(sorted({float(c) for c in constants}))
        return _Condition(value.present & found, value.present & ~found)

    def _is_null(self, node: Any) -> _Condition:
        self._only(node, "this", "expression")
        if not isinstance(node.expression, self.exp.Null):
            raise self._refused(node, "IS tests NULL only (IS NULL, IS NOT NULL); compare a boolean with = TRUE")
        value = self.value(node.this)
        if value.expression is None:
            return _Condition(False, True)
        return _Condition(value.missing, value.present)

    @staticmethod
    def _all(parts: list[_Condition]) -> _Condition:
        return _Condition(_balanced(_and, [part.true for part in parts]), _balanced(_or, [part.false for part in parts]))

    @staticmethod
    def _any(parts: list[_Condition]) -> _Condition:
        return _Condition(_balanced(_or, [part.true for part in parts]), _balanced(_and, [part.false for part in parts]))

    # --- values ---

    def value(self, node: Any) -> Value:
        """The typed value of ``node``, no deeper than :data:`DEPTH` levels (each engine evaluates by recursion)."""
        if self.depth >= DEPTH:
            raise refused(f"{self.clause} ... an expression nested more than {DEPTH} levels deep (a chain of "
                          f"arithmetic counts a level per operator): compute it in the table's engine first")
        self.depth += 1
        try:
            return self._value(node)
        finally:
            self.depth -= 1

    def _value(self, node: Any) -> Value:
        exp = self.exp
        node = self._unwrapped(node)
        name = type(node).__name__
        if isinstance(node, exp.Column):
            return self._column(node)
        if isinstance(node, exp.Literal):
            self._only(node, "this", "is_string")
            if node.is_string:
                return Value("string", node.sql(), constant=node.name)
            constant = number(node.name, f"{self.clause} ... {node.sql()[:60]}")
            return Value("number", node.sql(), constant=constant, integer=isinstance(constant, int), low=constant,
                         high=constant)
        if isinstance(node, exp.Boolean):
            self._only(node, "this")
            return Value("boolean", node.sql(), constant=bool(node.this), ordered=False)
        if isinstance(node, exp.Neg):
            self._only(node, "this")
            return self._negated(node, self.value(node.this))
        if isinstance(node, exp.Null):
            raise refused(f"{self.clause} ... {node.parent.sql()[:60] if node.parent else 'NULL'}: a comparison with "
                          "NULL is never true in SQL; test a missing value with IS NULL or IS NOT NULL")
        if name in _ARITHMETIC:
            return self._arithmetic(node, name)
        if isinstance(node, (exp.Floor, exp.Ceil, exp.Round, exp.Abs)):
            return self._rounded(node)
        if isinstance(node, (exp.Least, exp.Greatest)):
            return self._extreme(node)
        if isinstance(node, (exp.Case, exp.If)):
            return self._case(node)
        if name in _CONDITIONS:
            return self._truth(self.condition(node), node.sql())
        raise self._refused(node, f"{_GRAMMAR}; compute other values in the table's engine first")

    def _column(self, node: Any) -> Value:
        exp = self.exp
        self._only(node, "this", "table")
        if not isinstance(node.this, exp.Identifier):
            raise self._refused(node, "name one column")
        name = self.scope.resolve(node.table, node.name, f"{self.clause} on" if self.clause == "WHERE" else
                                  self.clause, node.sql())
        nw, dtype = self.nw, (self.scope.schema or {})[name]
        column = nw.col(name)
        missing = column.is_null() | column.is_nan() if dtype.is_float() else column.is_null()
        written, typed = node.sql(), dtype_name(dtype)
        if dtype.is_boolean():
            return Value("boolean", written, column, missing=missing, ordered=False, dtype=typed)
        if dtype.is_numeric():
            low, high = self.scope.bounds.get(name, (None, None))
            wide = _WIDE.get(typed)  # compared and computed in 64 bits on every engine
            return Value("number", written, column if wide is None else column.cast(getattr(nw, wide)), missing=missing,
                         dtype=typed if wide is None else wide, integer=dtype.is_integer(), low=low, high=high)
        if dtype == nw.String:
            return Value("string", written, column, missing=missing, dtype=typed)
        if isinstance(dtype, (nw.Categorical, nw.Enum)):
            return Value("string", written, column.cast(nw.String), missing=missing, ordered=False, dtype=typed)
        if dtype == nw.Object:  # Python objects, whatever they are, as their text: no comparison raises on a value
            return Value("string", written, column.cast(nw.String), missing=missing, dtype=typed)
        return Value("other", written, column, missing=missing, ordered=False, dtype=typed)

    def _numbers(self, node: Any, values: list[Value]) -> None:
        for value in values:
            if value.kind != "number":
                what = {"string": "a string", "boolean": "a boolean"}.get(value.kind, f"of type {value.dtype}")
                takes = "a minus sign goes before a number" if isinstance(node, self.exp.Neg) else \
                    f"arithmetic and {type(node).__name__.upper()} take numbers"
                raise self._refused(node, f"{takes}; {value.text[:40]} is {what}", 80)

    def floats(self, value: Value) -> Any:
        """The value as a 64-bit float expression: every engine computes alike."""
        return as_float(self.nw, value.expression, value.dtype) if value.expression is not None else \
            self.nw.lit(float(value.constant))

    def _computed(self, text: str, expression: Any, present: Any, integer: bool,
                  interval: tuple[float | None, float | None]) -> Value:
        """A number computed in the engine: missing where ``present`` is false or the result is NaN or null (a missing
        operand gives a null or a NaN in every engine's arithmetic, so ``present`` is only what that would not
        cover: a zero divisor)."""
        expression = expression if present is True else self.nw.when(present).then(expression)
        return Value("number", text, expression, missing=expression.is_null() | expression.is_nan(), dtype="Float64",
                     integer=integer, low=interval[0], high=interval[1])

    def _negated(self, node: Any, inner: Value) -> Value:
        self._numbers(node, [inner])
        if inner.expression is None:
            return replace(inner, text=node.sql(), constant=-inner.constant, low=-inner.constant, high=-inner.constant)
        ends = (None, None) if inner.low is None or inner.high is None else (-inner.high, -inner.low)
        return self._computed(node.sql(), -self.floats(inner), True, inner.integer, ends)

    def _arithmetic(self, node: Any, name: str) -> Value:
        self._only(node, "this", "expression", "typed", "safe")
        left, right = self.value(node.this), self.value(node.expression)
        self._numbers(node, [left, right])
        if name == "Div" and right.expression is None and right.constant == 0:
            raise self._refused(node, "a division by the constant 0")
        integer = left.integer and right.integer and name != "Div"
        if left.expression is None and right.expression is None:
            folded = _ARITHMETIC[name](left.constant, right.constant)
            folded = _checked_number(int(folded) if integer else float(folded), f"{self.clause} ... {node.sql()[:60]}")
            return Value("number", node.sql(), constant=folded, integer=integer, low=folded, high=folded)
        divisor = self.floats(right)
        present = True
        if name == "Div" and right.expression is not None:  # x / 0 is missing, and no engine divides by 0 (Spark fails)
            present, divisor = divisor != 0, self.nw.when(divisor != 0).then(divisor).otherwise(self.nw.lit(1.0))
        computed = _divided(self.floats(left), float(right.constant)) if name == "Div" and right.expression is None \
            else _ARITHMETIC[name](self.floats(left), divisor)
        return self._computed(node.sql(), computed, present, integer, _interval(name, left, right))

    def _rounded(self, node: Any) -> Value:
        exp = self.exp
        self._only(node, "this", "decimals")
        value = self.value(node.this)
        self._numbers(node, [value])
        digits = 0
        if node.args.get("decimals") is not None:
            places = self.value(node.args["decimals"])
            if not isinstance(node, exp.Round) or places.expression is not None or not places.integer or \
                    not 0 <= places.constant <= 15:
                raise self._refused(node, "ROUND(x, digits) takes a constant number of digits from 0 to 15; FLOOR "
                                          "and CEIL take one number")
            digits = int(places.constant)
        shift = 10.0**digits

        def rounded(x: Any) -> Any:  # half away from zero, in Python as in the engine
            if isinstance(node, (exp.Floor, exp.Ceil)):
                ceil = isinstance(node, exp.Ceil)
                return _floor(self.nw, x, ceil) if not isinstance(x, float) else (math.ceil if ceil else math.floor)(x)
            if isinstance(node, exp.Abs):
                return abs(x) if isinstance(x, float) else x.abs()
            if isinstance(x, float):
                return math.copysign(_divided(float(math.floor(abs(x) * shift + 0.5)), shift), x)
            whole = _floor(self.nw, x.abs() * shift + 0.5)
            return _divided(self.nw.when(x < 0).then(-whole).otherwise(whole), shift)

        integer = value.integer if isinstance(node, exp.Abs) else digits == 0
        ends: tuple[float | None, float | None] = (None, None)
        if value.low is not None and value.high is not None:
            low, high = float(value.low), float(value.high)
            ends = ((0.0 if low < 0 < high else min(abs(low), abs(high))), max(abs(low), abs(high))) \
                if isinstance(node, exp.Abs) else (rounded(low), rounded(high))
        if value.expression is None:
            folded = rounded(float(value.constant))
            folded = int(folded) if integer else folded
            return Value("number", node.sql(), constant=folded, integer=integer, low=folded, high=folded)
        return self._computed(node.sql(), rounded(self.floats(value)), True, integer, ends)

    def _extreme(self, node: Any) -> Value:
        exp = self.exp
        self._only(node, "this", "expressions", "ignore_nulls")
        if len(node.expressions) >= DEPTH:
            raise self._refused(node, f"LEAST and GREATEST take at most {DEPTH} values")
        values = [self.value(part) for part in [node.this, *node.expressions]]
        self._numbers(node, values)
        least = isinstance(node, exp.Least)
        pick = min if least else max
        ends = (None, None) if any(v.low is None or v.high is None for v in values) else \
            (pick(float(v.low) for v in values), pick(float(v.high) for v in values))  # type: ignore[arg-type]
        integer = all(v.integer for v in values)
        if all(v.expression is None for v in values):
            folded = pick(v.constant for v in values)
            return Value("number", node.sql(), constant=folded, integer=integer, low=folded, high=folded)
        result = self.floats(values[0])
        for value in values[1:]:
            other = self.floats(value)
            result = self.nw.when((result <= other) if least else (result >= other)).then(result).otherwise(other)
        return self._computed(node.sql(), result, _balanced(_and, [v.present for v in values]), integer, ends)

    def _case(self, node: Any) -> Value:
        """``CASE`` (searched or simple) and ``IF``: the first branch whose condition is true, else the default
        (missing without one); its branches are of one type (``NULL`` aside)."""
        exp, nw = self.exp, self.nw
        if isinstance(node, exp.If):
            self._only(node, "this", "true", "false")
            pairs, default = [(node.this, node.args["true"])], node.args.get("false")
        else:
            self._only(node, "this", "ifs", "default")
            pairs, default = [(branch.this, branch.args.get("true")) for branch in node.args["ifs"]], \
                node.args.get("default")
        if len(pairs) >= DEPTH:
            raise self._refused(node, f"a CASE of at most {DEPTH} branches (each is a level of the engine's "
                                      "expression)")
        subject = None if isinstance(node, exp.If) or node.this is None else self.value(node.this)
        conditions = [self.condition(when) if subject is None else
                      self._compared("EQ", subject, self.value(when), node) for when, _ in pairs]
        values = [None if then is None or isinstance(self._unwrapped(then), exp.Null) else self.value(then)
                  for _, then in [*pairs, (None, default)]]
        kinds = {value.kind for value in values if value is not None}
        if len(kinds) != 1 or not kinds <= {"number", "string", "boolean"}:
            raise self._refused(node, f"the branches of a CASE are values of one type (numbers, strings or booleans; "
                                      f"NULL in any); they are {sorted(kinds) or 'all NULL'}", 80)
        (kind,) = kinds
        operand: Callable[[Value], Any] = self.floats if kind == "number" else (lambda v: v.operand(nw))
        result: Any = None if values[-1] is None else operand(values[-1])
        for condition, value in reversed(list(zip(conditions, values))):
            if condition.true is False:
                continue
            then = None if value is None else operand(value)
            if condition.true is True:
                result = then
            elif then is None:
                result = None if result is None else nw.when(~condition.true).then(result)
            else:
                result = nw.when(condition.true).then(then) if result is None else \
                    nw.when(condition.true).then(then).otherwise(result)
        if result is None:
            raise self._refused(node, "a CASE that is NULL on every row")
        numbers = [value for value in values if value is not None]
        ends = (None, None) if kind != "number" or any(v.low is None or v.high is None for v in numbers) else \
            (min(float(v.low) for v in numbers), max(float(v.high) for v in numbers))  # type: ignore[arg-type]
        if kind == "number":
            return self._computed(node.sql(), result, True, all(v.integer for v in numbers), ends)
        return Value(kind, node.sql(), result, missing=result.is_null(), ordered=kind == "string", dtype=kind)

    def _truth(self, condition: _Condition, text: str) -> Value:
        """A condition as a boolean value: true, false, or missing where it is unknown."""
        nw = self.nw
        if isinstance(condition.true, bool) and isinstance(condition.false, bool):
            return Value("boolean", text, constant=condition.true, ordered=False)
        true, false = (nw.lit(part) if isinstance(part, bool) else part for part in (condition.true, condition.false))
        expression = nw.when(true).then(nw.lit(True)).otherwise(nw.when(false).then(nw.lit(False)))
        return Value("boolean", text, expression, missing=~(true | false), ordered=False, dtype="Boolean")

    def numeric(self, value: Value) -> Value:
        """A boolean value as a number: 1 where true, 0 where false, missing where unknown (SQL's cast)."""
        nw = self.nw
        if value.expression is None:
            return Value("number", value.text, constant=int(value.constant), integer=True, low=int(value.constant),
                         high=int(value.constant))
        number = nw.when(value.present & value.expression).then(nw.lit(1.0)).otherwise(
            nw.when(value.present).then(nw.lit(0.0)))
        return Value("number", value.text, number, missing=number.is_null() | number.is_nan(), dtype="Float64",
                     low=0.0, high=1.0)

    def column(self, value: Value) -> Any:
        """The expression of a derived column of ``value``: a computed integer as a 64-bit integer (missing where it
        is beyond :math:`2^{53}`, or missing), a number as a float, a string or a boolean as it is."""
        nw = self.nw
        if value.expression is None:
            return nw.lit(value.constant)
        if value.kind != "number" or not value.integer or value.dtype != "Float64":
            return value.expression
        exact = value.present & (value.expression.abs() < _EXACT)
        whole = nw.when(exact).then(value.expression).otherwise(nw.lit(0.0)).cast(nw.Int64)
        return nw.when(exact).then(whole)

    # --- the syntax tree ---

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

    def _only(self, node: Any, *allowed: str) -> None:
        """Refuses a node carrying a modifier this module does not read (``BETWEEN SYMMETRIC``, ``IN UNNEST``, ...)."""
        extra = [key for key, value in node.args.items() if key not in allowed and value not in (None, False, [])]
        if extra:
            raise self._refused(node, _GRAMMAR)

    @staticmethod
    def _types(left: Value, right: Value) -> str:
        def typed(value: Value) -> str:
            what = {"number": "a number", "string": "a string", "boolean": "a boolean"}.get(value.kind)
            return f"{value.text[:40]} is {what or 'of type ' + value.dtype}"
        return f"{typed(left)} and {typed(right)}"

    @staticmethod
    def _unordered(left: Value, right: Value) -> str:
        value = left if not left.ordered else right
        return "booleans" if value.kind == "boolean" else f"categorical values ({value.text[:40]}: {value.dtype})"

    def predicate(self, node: Any) -> Any:
        """Where the condition ``node`` keeps a row: a narwhals expression, or ``True`` (every row) or ``False``
        (none) for a constant condition."""
        return self.condition(node).true
