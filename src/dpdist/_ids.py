r"""Persons' ids (``privacy_id``): which ids are one person, one rule for the in-memory and the cluster paths.

Two rows are one person when their ids are **equal as values of one kind**:

* **numbers** (Python and NumPy integers, unsigned integers, floats, booleans): compared by exact numeric
  value, so ``1``, ``1.0``, ``np.uint8(1)`` and ``True`` are one person, and ``2**53 + 1`` and ``2.0**53``
  are two (ids of several number types, a list mixing ints and floats or an object array mixing
  ``np.float32`` and Python floats, are compared as exact Python numbers, never rounded through float64 or
  float32);
* **strings**: compared code point by code point (``"alice"``, ``"Alice"`` and ``" alice"`` are three
  persons: nothing is stripped, folded or normalised; ``"a\x00"`` and ``"a"`` are two, though NumPy's ``str``
  arrays cannot hold the first: a list holding such a string is kept as Python strings);
* **bytes**: compared byte by byte;
* **dates and times** (``numpy.datetime64``, ``datetime.datetime``) and **durations**: compared as instants
  (in memory only; a cluster refuses them, :mod:`dpdist.distributed._hashing`).

Ids of two kinds (``1`` and ``"1"``; ``"a"`` and ``b"a"``) are refused by name, never converted: NumPy
would make ``[1, "1", 2.0]`` the strings ``"1", "1", "2.0"`` and silently merge or split persons.  A
missing id (``None``, NaN, NaT, ``pandas.NA``) is no kind: it is refused as a missing value by the caller.
"""

from __future__ import annotations

import datetime
import math
import numbers
from typing import Any

import numpy as np

from .errors import InvalidValueTypeError

__all__ = ["ID_KINDS", "id_kind", "dtype_kind", "ids_missing", "id_array", "type_label", "text_codes"]

#: what the refusals say is allowed
ID_KINDS = ("numbers (integers and floats, compared by value: 1 and 1.0 are one person), strings, bytes, or dates, "
            "all of one kind")

_DTYPE_KINDS = {"i": "number", "u": "number", "b": "number", "f": "number", "U": "string", "S": "bytes",
                "M": "datetime", "m": "timedelta"}


def id_kind(kind_of: type) -> str:
    """The kind of ids of a Python type: ``"number"``, ``"string"``, ``"bytes"``, ``"datetime"``, ``"date"``,
    ``"timedelta"``, or the type's own name (a kind of its own)."""
    if issubclass(kind_of, (np.datetime64, datetime.datetime)):
        return "datetime"
    if issubclass(kind_of, datetime.date):
        return "date"
    if issubclass(kind_of, (np.timedelta64, datetime.timedelta)):
        return "timedelta"
    if issubclass(kind_of, (bool, np.bool_, numbers.Real)):
        return "number"
    if issubclass(kind_of, str):
        return "string"
    if issubclass(kind_of, bytes):
        return "bytes"
    return kind_of.__qualname__


def text_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(codes, firsts)`` of an object array of strings: each value's code (0, 1, ... in order of first appearance,
    equal exactly where the strings are, code point by code point) and each code's first position, in one pass of a
    dict (``np.unique`` sorts the objects: 15x slower on a million rows of few groups); None where a value is no string
    (the caller compares those by its own rule)."""
    seen: dict[Any, int] = {}
    try:
        codes = np.fromiter((seen.setdefault(value, len(seen)) for value in values.tolist()), dtype=np.int64,
                            count=len(values))
    except TypeError:  # an unhashable value: no string
        return None
    if set(map(type, seen)) - {str}:
        return None
    return codes, np.unique(codes, return_index=True)[1]


def dtype_kind(ids: np.ndarray) -> str | None:
    """The kind of a typed array's ids (``None`` for an object array: its elements decide)."""
    return None if ids.dtype == object else _DTYPE_KINDS.get(ids.dtype.kind, str(ids.dtype))


def _is_missing(value: Any) -> bool:
    if value is None or type(value).__name__ in ("NAType", "NaTType"):  # pandas.NA, pandas.NaT
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return bool(np.isnat(value))
    return False


def ids_missing(ids: np.ndarray) -> np.ndarray:
    """Which ids are missing: NaN in a float array, NaT in a date array, ``None``, NaN, NaT or ``pandas.NA`` in an
    object array."""
    if ids.dtype == object:
        return np.fromiter(map(_is_missing, ids), dtype=bool, count=ids.size)
    if ids.dtype.kind in "fc":
        return np.isnan(ids)
    if ids.dtype.kind in "Mm":
        return np.isnat(ids)
    return np.zeros(ids.size, dtype=bool)


def type_label(ids: np.ndarray) -> str:
    """The types of an array's ids, for a message (a dtype, or the Python types of an object array's ids)."""
    if ids.dtype != object:
        return {"U": "str", "S": "bytes"}.get(ids.dtype.kind, str(ids.dtype))
    names = sorted({type(value).__name__ for value in ids.tolist() if not _is_missing(value)})
    return "object of " + ", ".join(names) if names else "object"


def _kinds(ids: np.ndarray) -> dict[str, set[type]]:
    """``{kind: Python types}`` of an object array's ids, missing ids left out."""
    kinds: dict[str, set[type]] = {}
    for kind_of in {type(value) for value in ids.tolist() if not _is_missing(value)}:
        kinds.setdefault(id_kind(kind_of), set()).add(kind_of)
    return kinds


def id_array(owner: str, privacy_id: Any, name: str = "privacy_id") -> np.ndarray:
    """``privacy_id`` as an array whose equal elements are one person (the module docstring): a list or an object
    array of ids of several kinds refused by ``name`` (the types seen and the kinds allowed); numbers of several
    types (integers and floats, or NumPy and Python floats) kept as Python numbers, compared exactly: neither rounded
    through float64 nor compared as NumPy 2 compares ``np.float32(0.1) == 0.1`` (true, by rounding the Python float
    to float32: not exact, not transitive, so that ``np.unique`` split one person into several)."""
    raw = privacy_id if isinstance(privacy_id, np.ndarray) else None
    if raw is None and isinstance(privacy_id, (list, tuple)):
        raw = np.empty(len(privacy_id), dtype=object)
        raw[:] = list(privacy_id)
    ids = np.asarray(privacy_id) if raw is None else raw
    if ids.dtype != object or ids.ndim != 1:
        return ids
    kinds = _kinds(ids)
    if len(kinds) > 1:
        seen = ", ".join(f"{kind} ({', '.join(sorted(t.__name__ for t in types))})" for kind, types in sorted(kinds.items()))
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must hold ids of one kind: {ID_KINDS}. Got ids of several kinds: {seen}. "
            "They are not converted (1 and '1' would be one person or two by accident): give every id as one kind, "
            "e.g. all strings.")
    if len(kinds.get("number", ())) > 1:  # numbers of several types: each as its exact Python value
        return np.array([value.item() if isinstance(value, np.generic) else value for value in ids.tolist()],
                        dtype=object)
    if isinstance(privacy_id, np.ndarray) or any(map(_ends_in_nul, ids.tolist())):
        return ids  # an object array kept: NumPy's str and bytes arrays strip trailing NULs ("a\x00" would be "a")
    return np.asarray(privacy_id)


def _ends_in_nul(value: Any) -> bool:
    return (isinstance(value, str) and value.endswith("\x00")) or (isinstance(value, bytes) and value.endswith(b"\x00"))
