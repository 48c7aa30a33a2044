"""Which values of a query are equal: its keys, its persons' ids and the values of a distinct count, one rule per type
of the table's schema.

A query groups rows by their keys, bounds each person's rows by their id and counts distinct values.  Which values are
equal is decided by the column's type in the table's schema (:func:`kind_of`), never by the values it holds, and no
value is refused: a refusal, or a rule, that depended on one row would tell that row.

* **numbers and booleans**: by value (``1``, ``1.0`` and ``True`` are equal, from an int64 or a float64 column or a
  public key alike; ``2**53 + 1`` and ``2.0**53`` are not);
* **dates, times and durations**: by value;
* **strings, categoricals, columns of Python objects** (pandas' ``object`` dtype, whatever it holds) **and any other
  type** (lists, structs, bytes, decimals of an object column): as their text, ``str(value)``.  An object column
  holding ``1``, ``"1"`` and ``1.0`` holds the texts ``"1"``, ``"1"`` and ``"1.0"``: the text Dask reads such a column
  as by default, so pandas and Dask agree.

Each value is read on its own, so adding or removing a row changes no other row's value: grouping, bounding and
deduplicating stay 1-stable.  A missing value (null, NaN) is no value: the query leaves its row out of what needs it.
Public keys are typed against the same kinds (a string column's keys are strings: :func:`check_keys`), so a key listed
matches its rows on every engine, and the bounding of each person's rows (:func:`texts`, hashed on a cluster) and the
release's groups (:func:`staged`) see the same groups.
"""

from __future__ import annotations

import datetime
import decimal
import numbers
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ..frame._tables import dtype_name

__all__ = ["kind_of", "staged", "texts", "ids", "check_keys"]

#: what a public key of each kind is, and how the refusal says it
_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "boolean": ((bool, np.bool_), "booleans (True or False)"),
    "number": ((numbers.Real, decimal.Decimal), "numbers (an int or a float, not a boolean)"),
    "instant": ((datetime.date, datetime.time, datetime.timedelta, np.datetime64, np.timedelta64),
                "dates, times or durations"),
    "text": ((str,), "strings (the column is compared as text)"),
}


def kind_of(dtype: Any) -> str:
    """The kind of values of a column of the narwhals ``dtype``: ``"boolean"``, ``"number"``, ``"instant"`` or
    ``"text"`` (strings, categoricals, Python objects and any other type)."""
    if dtype.is_boolean():
        return "boolean"
    if dtype.is_numeric():
        return "number"
    return "instant" if dtype.is_temporal() else "text"


def staged(values: np.ndarray, kind: str) -> np.ndarray:
    """``values`` (a column as :meth:`dpdist.frame._tables.Table.values` reads it) as the query compares them: numbers
    and instants as they are, text as Python strings (a missing value stays ``None``)."""
    if kind != "text" or (values.dtype == object and all(type(value) is str or value is None for value in values)):
        return values
    return np.fromiter((None if value is None else str(value) for value in values.tolist()), dtype=object,
                       count=len(values))


def texts(values: np.ndarray, kind: str) -> np.ndarray:
    """Each present value's text, equal exactly where the values are equal as :func:`staged` compares them: what the
    bounding hashes (numbers by value: an integral float as its integer)."""
    if kind in ("boolean", "number"):
        return _number_texts(np.asarray(values))
    return staged(np.asarray(values, dtype=object), "text")


def ids(values: np.ndarray, kind: str) -> np.ndarray:
    """Persons' ids as the bounding compares them: typed numbers as they are, anything else as its text (one kind in
    every block, so that no id is refused)."""
    if kind in ("boolean", "number") and values.dtype != object:
        return values
    return texts(values, kind)


def check_keys(owner: str, keys: list, by: tuple[str, ...], kinds: dict[str, str], schema: dict[str, Any]) -> None:
    """Refuse a public key whose part is not of its column's kind (public: the keys and the schema), before anything
    is read or charged: ``"north"`` for a column of numbers would match no row on one engine and refuse on another."""
    for key in keys:
        for name, part in zip(by, key if len(by) > 1 else (key,)):
            types, what = _KEYS[kinds[name]]
            if isinstance(part, types) and not (kinds[name] == "number" and isinstance(part, (bool, np.bool_))):
                continue
            raise InvalidParameterError(
                f"The 'keys' argument of {owner} must hold {what} for the column {name!r}, of type "
                f"{dtype_name(schema[name])}. Got {part!r:.60} ({type(part).__name__}) in the key {key!r:.80}.")


def _number_texts(values: np.ndarray) -> np.ndarray:
    """Numbers as text by exact value: integers (and integral floats) in decimal digits, other floats as their
    shortest round-trip text (``repr``), ``-0.0`` as ``0``."""
    if values.dtype.kind in "iub":
        return values.astype(np.int64 if values.dtype.kind == "b" else values.dtype).astype(str).astype(object)
    if values.dtype.kind != "f":
        return np.fromiter((_number_text(value) for value in values.tolist()), dtype=object, count=len(values))
    floats = values.astype(np.float64) + 0.0
    text = floats.astype(str).astype(object)
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(floats) & (floats == np.trunc(floats))
    small = whole & (np.abs(floats) < 2.0**63)
    text[small] = floats[small].astype(np.int64).astype(str)
    text[whole & ~small] = [str(int(value)) for value in floats[whole & ~small].tolist()]
    return text


def _number_text(value: Any) -> str | None:
    """One number's text, as :func:`_number_texts` writes a typed array's (a missing one stays None)."""
    if value is None or isinstance(value, str):  # missing, or already its text (:func:`ids` read twice is once)
        return value
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, decimal.Decimal):
        return str(int(value)) if value.is_finite() and value == value.to_integral_value() else str(value.normalize())
    if isinstance(value, numbers.Integral):
        return str(int(value))
    number = float(value) + 0.0
    return str(int(number)) if np.isfinite(number) and number == int(number) else repr(number)
