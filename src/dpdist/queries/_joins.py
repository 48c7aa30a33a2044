"""Joins of a query's private table: to a public table, and to another private table on the privacy id.

**To a public table** (:meth:`Query.join_public`, SQL's ``JOIN`` of a table given in ``public_tables``): each private
row is matched, in the private table's engine, with the public rows whose keys equal its own (``how="inner"`` keeps
the matched rows, ``"left"`` every private row, its public columns missing where none matched).  The public table is
public: its keys and attributes are not covered by any guarantee, and it is read whole (into the private table's
engine, whatever engine it came in).  Each output row is one private row with public columns added, a per-row map,
so the output's rows of a person are made of that person's rows alone.  Per person (``privacy_id``), the bounding of
each person's rows after the join (``max_contributions`` per group, ``max_groups``) holds the guarantee, however many
public rows a private row matched; per record (no ``privacy_id``) a private row must match at most one public row, so
the public keys must be unique *as the join compares them* (cast to the type they meet the private keys in), which is
checked on the public table in the engine that compares them (a refusal that depends on public data only).

**Of two private tables on the privacy id** (:meth:`Query.join_private`, SQL's ``JOIN`` of two tables of
``tables``), as Tumult Analytics' ``join_private`` under ``AddRowsWithID``: the condition equates the two tables'
columns of persons' ids (and any other columns besides), so each output row is made of two rows of one person; the
privacy unit is carried through (the output's id is the left table's), and each person's rows are bounded *after* the
join (``max_contributions`` rows per group, ``max_groups`` groups).  Adding or removing a person (all their rows, in
both tables: one id is one person in both) adds or removes only that person's output rows, so the bounded output
obeys the per-person guarantee the query states, as one table would, whatever the number of rows (a person of
:math:`r_1` and :math:`r_2` rows has :math:`r_1 r_2` output rows, bounded with the rest).  Refused: a join of private
tables without ``privacy_id`` or not on it (one person's rows would meet other persons' rows, whose number no bound
covers), and joins other than ``inner`` and ``left``.

Both keep SQL's meaning on every engine: a missing key (null, NaN) matches nothing; keys are compared by type (numbers
by value, an integer column with a float one; strings with strings, a categorical as its strings), refused before any
engine runs where the types differ.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..frame._tables import _calls, dtype_name, narwhals, open_frame
from ._expressions import as_float
from ._scale import _pair_keys
from ._values import kind_of

__all__ = ["HOW", "joined", "in_engine"]

#: the joins a query makes (the private table on the left)
HOW = ("inner", "left")


def _kind(nw: Any, dtype: Any) -> str:
    if dtype.is_boolean():
        return "boolean"
    if dtype.is_numeric():
        return "number"
    if dtype == nw.String or dtype == nw.Object or isinstance(dtype, (nw.Categorical, nw.Enum)):
        return "string"  # Python objects as their text
    return f"of type {dtype_name(dtype)}"


def in_engine(owner: str, frame: Any, like: Any) -> Any:
    """``frame`` (a native frame of any engine) as a narwhals frame of the engine of the narwhals frame ``like``:
    itself where it is one already, else read whole and made in that engine."""
    nw = narwhals()
    table = open_frame(owner, frame)
    engine = open_frame(owner, like.to_native()).engine
    if table.engine.name == engine.name and table.engine.lazy == engine.lazy:
        return table.frame
    table.read(tuple(table.names))
    return nw.from_native(engine.frame({name: table.values(name) for name in table.names}))


def _compared_as(nw: Any, kind: str, mine: Any, theirs: Any) -> tuple[Any, bool]:
    """The type two keys are compared in, and whether that comparison is exact: integers as 64-bit integers, other
    numbers as floats (an integer beyond 2**53 meets its neighbours there), strings as strings."""
    if kind == "number":
        whole = mine.is_integer() and theirs.is_integer() and nw.UInt64 not in (mine, theirs)
        if mine == theirs or whole:
            return (None if mine == theirs else nw.Int64), True
        return nw.Float64, not (mine.is_integer() or theirs.is_integer())
    return (nw.String if kind == "string" else nw.Boolean), True


def joined(owner: str, left: Any, right: Any, pairs: Sequence[tuple[str, str]], how: str, kept: dict[str, str],
           exact: Sequence[tuple[str, str]] = (), unique: str | None = None) -> Any:
    """``left`` joined to ``right`` (narwhals frames of one engine) where each pair ``(left column, right column)`` of
    ``pairs`` is equal; the left's columns and the right's columns ``kept`` (``{right column: its name in the
    output}``).  Keys are typed first (refused by name where they do not compare, or where a pair of ``exact``, the
    persons' ids, would compare an integer as a float); a missing key matches nothing.  Per record, ``unique`` names
    the public table ``right``, whose keys must be unique as the join compares them (:func:`_check_unique`)."""
    nw = narwhals()
    left_schema, right_schema = dict(left.collect_schema()), dict(right.collect_schema())
    left_keys, right_keys, present = [], [], []
    for index, (mine, theirs) in enumerate(pairs):
        kinds = _kind(nw, left_schema[mine]), _kind(nw, right_schema[theirs])
        if kinds[0] != kinds[1] or kinds[0] not in ("number", "string", "boolean"):
            raise InvalidParameterError(f"{owner} refuses a join of {mine!r} ({kinds[0]}) with {theirs!r} "
                                        f"({kinds[1]}): join columns of one type (numbers, strings or booleans).")
        cast, is_exact = _compared_as(nw, kinds[0], left_schema[mine], right_schema[theirs])
        if not is_exact and (mine, theirs) in exact:
            raise InvalidParameterError(f"{owner} refuses to join the persons' ids {mine!r} "
                                        f"({dtype_name(left_schema[mine])}) and {theirs!r} "
                                        f"({dtype_name(right_schema[theirs])}): an integer id compared as a float "
                                        "could meet another person's; give both id columns one type.")
        left_keys.append(_typed(nw, mine, left_schema[mine], cast).alias(f"__dpdist_left_{index}"))
        right_keys.append(_typed(nw, theirs, right_schema[theirs], cast).alias(f"__dpdist_right_{index}"))
        column = nw.col(theirs)
        present.append(~(column.is_null() | column.is_nan()) if right_schema[theirs].is_float() else ~column.is_null())
    names = [f"__dpdist_left_{index}" for index in range(len(pairs))]
    right = right.filter(*present) if present else right  # a missing key matches nothing, on every engine
    right = right.select(*right_keys, *(nw.col(name).alias(new) for name, new in kept.items()))
    with _calls(_engine_name(left)):
        if unique is not None:
            _check_unique(owner, right.select(*(f"__dpdist_right_{index}" for index in range(len(pairs)))),
                          [theirs for _, theirs in pairs], unique)
        output = left.with_columns(*left_keys).join(right, left_on=names, right_on=[f"__dpdist_right_{index}" for
                                                                                     index in range(len(pairs))], how=how)
        return output.select(*left_schema, *kept.values())


def _typed(nw: Any, name: str, dtype: Any, cast: Any) -> Any:
    """The key column ``name`` in the type it is compared in (``cast``; None: its own): as floats on every engine
    whatever its values (:func:`~._expressions.as_float`)."""
    if cast is None:
        return nw.col(name)
    return as_float(nw, nw.col(name), dtype) if cast == nw.Float64 else nw.col(name).cast(cast)


def _engine_name(frame: Any) -> str:
    return str(frame.implementation.value)


def _check_unique(owner: str, keys: Any, names: Sequence[str], table: str) -> None:
    """Refuses a public table whose rows repeat a key *as the join compares them*: ``keys`` are its present keys, cast
    to the type they meet the private keys in, read from the engine that compares them (integers unique as integers
    may meet as floats: :math:`2^{60}` and :math:`2^{60} + 1` are one float).  Per record, a private row then matches
    one public row at most.  The public table's keys are public: this reads no private value."""
    opened = open_frame(owner, keys.to_native())
    opened.read(tuple(opened.names))
    rows = _pair_keys([opened.values(name) for name in opened.names], [kind_of(opened.schema[name]) for name in
                                                                        opened.names])
    if np.unique(rows).size != rows.size:
        raise InvalidParameterError(
            f"{owner} refuses a join to the public table {table!r}, whose rows repeat a key of {list(names)} (as the "
            "join compares them: an integer with a float as floats, where integers beyond 2**53 meet): a private row "
            "would become several rows, which a per-record guarantee does not cover. "
            "Give privacy_id (each person's rows are bounded after the join), or make the public keys unique.")
