"""Parameter constraints as data, checked once in constructors (cf. scikit-learn).

A protocol declares ``_constraints = {"epsilon": Interval(0, inf, ...), ...}``;
:func:`check_params` validates a dict of parameters against it and raises a
:mod:`dpdist.errors` exception that names the parameter, the value and the rule.
The same table drives the conformance suite's bad-input tests
(:meth:`Constraint.invalid_examples`).  A function states the rules of its
arguments the same way, with :func:`validate_params` (scikit-learn's
``validate_params``): the table is checked before the function runs, and
``tests/package/test_parameter_tables.py`` generates every table's bad-input tests.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import math
import numbers
import os
import pathlib
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TypeVar, cast

import numpy as np

from ._types import ArrayLike
from .errors import (
    DPDistError,
    InvalidParameterError,
    InvalidPrivacyParameterError,
    InvalidValueTypeError,
    OutOfDomainError,
)

__all__ = [
    "Interval",
    "Integer",
    "Options",
    "PowerOfTwo",
    "Prime",
    "is_prime",
    "Boolean",
    "RandomSource",
    "Bounds",
    "Optional",
    "Described",
    "OneOf",
    "InstanceOf",
    "NamedInstanceOf",
    "Items",
    "TupleOf",
    "Text",
    "Bytes",
    "PathLike",
    "CallableRule",
    "RealArray",
    "ExistingFile",
    "Dict",
    "Probabilities",
    "Vector",
    "DType",
    "Relation",
    "Below",
    "NoneWhen",
    "SameSize",
    "Either",
    "Implies",
    "check_relations",
    "validate_params",
    "ParameterTable",
    "PARAMETER_TABLES",
    "EPSILON",
    "LOCAL_EPSILON",
    "CENTRAL_EPSILON",
    "DELTA",
    "DOMAIN_SIZE",
    "MAX_ALLOCATION_BYTES",
    "check_allocation",
    "check_param",
    "Labels",
    "Alphabet",
    "check_params",
    "check_options",
    "check_integer_values",
    "check_real_values",
    "clip_real_values",
]


#: Bounds must hold this many cells of distinct floats (the finest grid dpdist builds by default is 2^20
#: leaves of a central tree; 4 floats per leaf keep every edge distinct after rounding).
BOUNDS_CELLS = 2**22


class Constraint:
    """A rule a parameter value must satisfy."""

    @property
    def error(self) -> type[DPDistError]:
        """The exception a value that breaks the rule raises."""
        return InvalidParameterError

    def check(self, value: Any) -> Any:  # pragma: no cover - interface
        """Return the (coerced) value, or raise ValueError with no message."""
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def invalid_examples(self) -> list:
        """Values that must be rejected (used by the conformance suite)."""
        return []

    def shown(self, value: Any) -> str:
        """``value`` as a refusal shows it (its repr, cut at 200 characters)."""
        return f"{value!r:.200}"


@dataclass(frozen=True)
class Interval(Constraint):
    """A finite real number in an interval; ``closed`` in {"both", "left", "right", "neither"}."""

    low: float = -math.inf
    high: float = math.inf
    closed: str = "neither"
    privacy: bool = False

    @property
    def error(self) -> type[DPDistError]:
        return InvalidPrivacyParameterError if self.privacy else InvalidParameterError

    def check(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError
        try:
            value = float(value)
        except OverflowError:  # an int beyond the floats (10**309) is a bad value, not a crash
            raise ValueError from None
        if not math.isfinite(value):
            raise ValueError
        low_ok = value >= self.low if self.closed in ("both", "left") else value > self.low
        high_ok = value <= self.high if self.closed in ("both", "right") else value < self.high
        if not (low_ok and high_ok):
            raise ValueError
        return value

    def describe(self) -> str:
        parts = []
        if self.low != -math.inf:
            parts.append((">= " if self.closed in ("both", "left") else "> ") + f"{self.low:g}")
        if self.high != math.inf:
            parts.append(("<= " if self.closed in ("both", "right") else "< ") + f"{self.high:g}")
        return "a finite float" + (" " + " and ".join(parts) if parts else "")

    def invalid_examples(self) -> list:
        out = [math.nan, math.inf, -math.inf, "1.0", None, 10**309]
        if self.low != -math.inf:
            out.append(self.low if self.closed in ("neither", "right") else self.low - 1.0)
            out.append(self.low - 1.0)
        if self.high != math.inf:
            out.append(self.high if self.closed in ("neither", "left") else self.high + 1.0)
        return out


@dataclass(frozen=True)
class Integer(Constraint):
    """An integer in ``[low, high]`` (either end may be None)."""

    low: int | None = None
    high: int | None = None

    def check(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise ValueError
        value = int(value)
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            raise ValueError
        return value

    def describe(self) -> str:
        if self.low is not None and self.high is not None:
            return f"an int in [{self.low}, {self.high}]"
        if self.low is not None:
            return f"an int >= {self.low}"
        if self.high is not None:
            return f"an int <= {self.high}"
        return "an int"

    def invalid_examples(self) -> list:
        out = [1.5, "3", None]
        if self.low is not None:
            out.append(self.low - 1)
        if self.high is not None:
            out.append(self.high + 1)
        return out


@dataclass(frozen=True)
class PowerOfTwo(Constraint):
    """An integer power of 2 in ``[low, high]`` (a number of tree leaves, a sketch's width)."""

    low: int = 1
    high: int | None = None

    def check(self, value: Any) -> Any:
        value = Integer(self.low, self.high).check(value)
        if value & (value - 1):
            raise ValueError
        return value

    def describe(self) -> str:
        return f"a power of 2 in [{self.low}, {self.high}]" if self.high is not None else f"a power of 2 >= {self.low}"

    def invalid_examples(self) -> list:
        return [*Integer(self.low, self.high).invalid_examples(), 3 * self.low if self.low > 1 else 3]


def is_prime(number: int) -> bool:
    """Deterministic primality test (Miller-Rabin with the first 12 primes as bases: exact below 3.3e24)."""
    if number < 2:
        return False
    bases = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
    if number in bases:
        return True
    if any(number % base == 0 for base in bases):
        return False
    odd, twos = number - 1, 0
    while odd % 2 == 0:
        odd, twos = odd // 2, twos + 1
    for base in bases:
        power = pow(base, odd, number)
        if power in (1, number - 1):
            continue
        for _ in range(twos - 1):
            power = pow(power, 2, number)
            if power == number - 1:
                break
        else:
            return False
    return True


@dataclass(frozen=True)
class Prime(Constraint):
    """A prime in ``[low, high]`` (the modulus of a hash family)."""

    low: int = 2
    high: int | None = None

    def check(self, value: Any) -> Any:
        value = Integer(self.low, self.high).check(value)
        if not is_prime(value):
            raise ValueError
        return value

    def describe(self) -> str:
        return f"a prime in [{self.low}, {self.high}]" if self.high is not None else f"a prime >= {self.low}"

    def invalid_examples(self) -> list:
        composite = next(n for n in range(max(self.low, 4), max(self.low, 4) + 64) if not is_prime(n))
        return [*Integer(self.low, self.high).invalid_examples(), composite]


@dataclass(frozen=True)
class Options(Constraint):
    """One of a fixed set of values."""

    values: tuple

    def check(self, value: Any) -> Any:
        if value not in self.values:
            raise ValueError
        return value

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)

    def invalid_examples(self) -> list:
        return ["not-an-option"]


@dataclass(frozen=True)
class RandomSource(Constraint):
    """Where randomness comes from: None (the CSPRNG), an int seed >= 0, a SeedSequence or a Generator."""

    def check(self, value: Any) -> Any:
        if value is None or isinstance(value, (np.random.SeedSequence, np.random.Generator)):
            return value
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError
        return int(value)

    def describe(self) -> str:
        return "None, an int seed >= 0, a numpy SeedSequence or a numpy Generator"

    def invalid_examples(self) -> list:
        return [-1, 1.5, "seed"]


@dataclass(frozen=True)
class Boolean(Constraint):
    def check(self, value: Any) -> Any:
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError
        return bool(value)

    def describe(self) -> str:
        return "a bool"

    def invalid_examples(self) -> list:
        return ["yes"]


@dataclass(frozen=True)
class Bounds(Constraint):
    """A pair ``(lo, hi)`` of finite floats with ``lo < hi``; stored as a tuple.

    The width must be finite and hold :data:`BOUNDS_CELLS` cells of distinct floats: at least that many times
    the spacing of floats at the bounds (``math.ulp``) and that many smallest normal floats.  Narrower bounds
    (``(0, 1e-320)``, ``(1e15, 1e15 + 1)``) have grids whose edges coincide or underflow, and every method on
    them would divide by a width of a few representable steps.
    """

    def check(self, value: Any) -> Any:
        try:
            lo, hi = value
            lo, hi = float(lo), float(hi)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond the floats (10**309)
            raise ValueError from None
        # the width must be finite too: (-1e308, 1e308) would overflow every rescaling to inf
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi and math.isfinite(hi - lo)):
            raise ValueError
        if hi - lo < BOUNDS_CELLS * max(math.ulp(max(abs(lo), abs(hi))), sys.float_info.min):
            raise ValueError
        return (lo, hi)

    def describe(self) -> str:
        return (f"a pair (lo, hi) of finite floats with lo < hi, a finite width hi - lo, and room for 2**{BOUNDS_CELLS.bit_length() - 1} "
                "distinct grid steps (hi - lo at least that many times the float spacing math.ulp at the bounds, "
                "and that many times 2.2e-308)")

    def invalid_examples(self) -> list:
        return [(1.0, 0.0), (0.0, math.inf), (0.0,), "ab", (-1e308, 1e308), (0.0, 1e-320), (1e15, 1e15 + 1), (0, 10**309)]


@dataclass(frozen=True)
class Optional(Constraint):
    """``None`` or a value satisfying ``inner``."""

    inner: Constraint

    @property
    def error(self) -> type[DPDistError]:
        return self.inner.error

    def check(self, value: Any) -> Any:
        return None if value is None else self.inner.check(value)

    def describe(self) -> str:
        return "None or " + self.inner.describe()

    def invalid_examples(self) -> list:
        return [v for v in self.inner.invalid_examples() if v is not None]

    def shown(self, value: Any) -> str:
        return self.inner.shown(value)


@dataclass(frozen=True)
class Labels(Constraint):
    """A public label domain: a list of at least 2 distinct non-empty strings; stored as a tuple.

    Item ``i`` of a categorical protocol is ``labels[i]``.
    """

    max_size: int = 2**31 - 1

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, np.ndarray)):
            raise ValueError
        labels = tuple(value)
        if not 2 <= len(labels) <= self.max_size:
            raise ValueError
        if not all(isinstance(label, str) and label for label in labels) or len(set(labels)) != len(labels):
            raise ValueError
        return labels

    def describe(self) -> str:
        return "a list of at least 2 distinct non-empty strings"

    def invalid_examples(self) -> list:
        return [["only"], ["a", "a"], [1, 2], ["a", ""], "ab"]


@dataclass(frozen=True)
class ItemIds(Constraint):
    """A non-empty set of distinct item ids (ints >= 0): a list, one int, or the ids as text separated by commas
    (``"3,7"``: a query string, a command line); stored as a tuple.  The domain is checked by the option's user."""

    def check(self, value: Any) -> Any:
        if isinstance(value, str):
            parts = [part.strip() for part in value.split(",")]
            if not all(part.isdigit() and part.isascii() for part in parts):
                raise ValueError
            value = [int(part) for part in parts]
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, (list, tuple, np.ndarray)) or np.ndim(value) != 1:
            raise ValueError
        items = tuple(value)
        if not items or not all(isinstance(item, (int, np.integer)) and not isinstance(item, bool) and item >= 0
                                for item in items):
            raise ValueError
        if len(set(int(item) for item in items)) != len(items):
            raise ValueError
        return tuple(int(item) for item in items)

    def describe(self) -> str:
        return "a non-empty list of distinct item ids (ints >= 0), e.g. [3, 7] or '3,7'"

    def invalid_examples(self) -> list:
        return [[], [1, 1], [-1], ["a"], "x", [1.5], "3,,7", True]


@dataclass(frozen=True)
class Alphabet(Constraint):
    """A public alphabet: a string of 1 .. ``max_size`` distinct characters (symbols of encoded words)."""

    max_size: int = 255

    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or not 1 <= len(value) <= self.max_size or len(set(value)) != len(value):
            raise ValueError
        return value

    def describe(self) -> str:
        return f"a string of 1 to {self.max_size} distinct characters"

    def invalid_examples(self) -> list:
        return ["", "aa", ["a", "b"], 3]


@dataclass(frozen=True)
class Described(Constraint):
    """``inner``'s rule, described in the words of its parameter (``"a number of seconds in (0, 600]"``)."""

    inner: Constraint
    text: str

    @property
    def error(self) -> type[DPDistError]:
        return self.inner.error

    def check(self, value: Any) -> Any:
        return self.inner.check(value)

    def describe(self) -> str:
        return self.text

    def invalid_examples(self) -> list:
        return self.inner.invalid_examples()

    def shown(self, value: Any) -> str:
        return self.inner.shown(value)


@dataclass(frozen=True)
class OneOf(Constraint):
    """A value that satisfies one of ``rules`` (as the first of them that it satisfies returns it), described as
    ``what``."""

    rules: tuple[Constraint, ...]
    what: str

    def check(self, value: Any) -> Any:
        for rule in self.rules:
            try:
                return rule.check(value)
            except (ValueError, TypeError):
                continue
        raise ValueError

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        out = []
        for example in (example for rule in self.rules for example in rule.invalid_examples()):
            try:
                self.check(example)
            except ValueError:
                out.append(example)
        return out


class _Absent:
    """A value of no type a rule names (an invalid example of :class:`InstanceOf`)."""

    def __repr__(self) -> str:
        return "<an object>"


@dataclass(frozen=True)
class InstanceOf(Constraint):
    """An instance of one of ``types`` (a class, or a tuple of classes), described as ``what``; a refusal shows the
    value's type only, or a string's text too when ``shows_text`` (a name given where an object was meant)."""

    types: Any
    what: str
    shows_text: bool = False

    def check(self, value: Any) -> Any:
        if not isinstance(value, self.types) or (isinstance(value, bool) and bool not in _as_tuple(self.types)):
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [_Absent(), *(["text"] if not isinstance("text", self.types) else [])]

    def shown(self, value: Any) -> str:
        """The type only: the repr of an object can be its whole (private) content."""
        if self.shows_text and isinstance(value, str):
            return f"the str {value!r:.200}"
        return type(value).__name__


def _as_tuple(types: Any) -> tuple:
    return types if isinstance(types, tuple) else (types,)


@dataclass(frozen=True)
class Items(Constraint):
    """At least ``min_length`` items, each satisfying ``item`` (any item when None), described as ``what``: a list, a
    tuple, a 1-D array or another iterable (not a str, bytes or mapping; a generator is read once); returned as a tuple
    of the items as ``item`` returns them.  ``increasing``: each item above the one before (real items: a grid, a
    curve's abscissae)."""

    item: Constraint | None
    what: str
    min_length: int = 0
    increasing: bool = False

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes, bytearray, memoryview, Mapping)) or not isinstance(value, Iterable):
            raise ValueError
        items = tuple(value) if self.item is None else tuple(self.item.check(one) for one in value)  # an item the
        # rule refuses raises ValueError or TypeError
        if len(items) < self.min_length:
            raise ValueError
        if self.increasing and any(not before < after for before, after in zip(items, items[1:])):
            raise ValueError
        return items

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        out: list = ["text", 3, {"a": 1}]
        bad = [] if self.item is None else [one for one in self.item.invalid_examples() if one is not None][:1]
        out.extend([bad] if bad else [])
        if self.min_length:
            out.append([])
        if self.increasing:
            out.append([2.0, 1.0] * max(1, self.min_length))
        return [example for example in out if _refuses(self, example)]

    def shown(self, value: Any) -> str:
        """The first item refused, as ``item`` shows it (a list of a thousand is not shown whole), else the value."""
        if isinstance(value, (list, tuple, np.ndarray)) and self.item is not None:
            for index, one in enumerate(value):
                try:
                    self.item.check(one)
                except (ValueError, TypeError):
                    return f"a {type(value).__name__} whose item {index} is {self.item.shown(one)}"
        return super().shown(value)


@dataclass(frozen=True)
class TupleOf(Constraint):
    """A pair, a triple, ...: exactly one item per rule of ``rules``, each satisfying its rule, described as ``what``;
    returned as a tuple of the items as their rules return them."""

    rules: tuple[Constraint, ...]
    what: str

    def check(self, value: Any) -> Any:
        if not isinstance(value, (list, tuple)) or len(value) != len(self.rules):
            raise ValueError
        return tuple(rule.check(one) for rule, one in zip(self.rules, value))

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        out: list = ["text", 3, ()]
        for index, rule in enumerate(self.rules):  # one bad item at each place (None stands for the others)
            bad = [example for example in rule.invalid_examples() if example is not None][:1]
            out.extend([tuple(bad[0] if place == index else None for place in range(len(self.rules)))] if bad else [])
        return out


@dataclass(frozen=True)
class NamedInstanceOf(Constraint):
    """An instance of one of the classes ``names`` of the module ``module`` (an optional package's, say a
    ``cryptography`` key), described as ``what``.  The module is not imported to state the rule: while its package is
    not imported no object of its classes exists, and every value is refused."""

    module: str
    names: tuple[str, ...]
    what: str

    def check(self, value: Any) -> Any:
        if self.module.partition(".")[0] not in sys.modules:
            raise ValueError
        found = importlib.import_module(self.module)
        if not isinstance(value, tuple(getattr(found, name) for name in self.names)):
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [_Absent(), "text"]

    def shown(self, value: Any) -> str:
        """The type only, as :class:`InstanceOf` (a key's repr may hold its numbers)."""
        return type(value).__name__


@dataclass(frozen=True)
class Text(Constraint):
    """A string; ``non_empty``, ``ascii`` (printable ASCII), ``min_length``, ``max_length`` and ``pattern`` (a
    regular expression the whole string matches; say what it means with :class:`Described`) narrow it."""

    non_empty: bool = True
    ascii: bool = False
    min_length: int = 0
    max_length: int | None = None
    pattern: str | None = None

    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or (self.non_empty and not value) or len(value) < self.min_length:
            raise ValueError
        if self.ascii and not (value.isascii() and value.isprintable()):
            raise ValueError
        if self.max_length is not None and len(value) > self.max_length:
            raise ValueError
        if self.pattern is not None and re.fullmatch(self.pattern, value) is None:
            raise ValueError
        return value

    def describe(self) -> str:
        what = "a non-empty " if self.non_empty and not self.min_length else "a "
        what += "printable ASCII string" if self.ascii else "str"
        if self.min_length:
            what += f" of at least {self.min_length} characters"
        if self.max_length is not None:
            what += f" of at most {self.max_length} characters"
        return what + (f" matching {self.pattern!r}" if self.pattern is not None else "")

    def invalid_examples(self) -> list:
        out: list = [3, b"bytes"]
        if self.non_empty or self.min_length:
            out.append("")
        if self.ascii:
            out.append("\u00e9t\u00e9" * max(1, self.min_length))
        if self.min_length > 1:
            out.append("x" * (self.min_length - 1))
        if self.max_length is not None:
            out.append("x" * (self.max_length + 1))
        if self.pattern is not None:
            out.append(" \n")
        return out


@dataclass(frozen=True)
class Bytes(Constraint):
    """Bytes (``bytes``, ``bytearray`` or ``memoryview``), of exactly ``length`` when given; returned as ``bytes``."""

    length: int | None = None

    def check(self, value: Any) -> Any:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise ValueError
        value = bytes(value)
        if self.length is not None and len(value) != self.length:
            raise ValueError
        return value

    def describe(self) -> str:
        return "bytes" if self.length is None else f"{self.length} bytes"

    def shown(self, value: Any) -> str:
        """The length or the type only: bytes may be a key."""
        return f"{len(value)} bytes" if isinstance(value, (bytes, bytearray, memoryview)) else type(value).__name__

    def invalid_examples(self) -> list:
        out: list = ["text", 3]
        if self.length is not None:
            out.append(bytes(self.length + 1))
        return out


@dataclass(frozen=True)
class Dict(Constraint):
    """A dict (a JSON object), described as ``what``: with at least ``min_size`` entries, every key of ``required``,
    only keys of ``allowed`` (when given), and the value of each key named in ``values`` (``(key, rule)`` pairs)
    satisfying its rule.  A refusal shows the keys given, not the values."""

    what: str = "a dict"
    required: tuple[str, ...] = ()
    allowed: tuple[str, ...] | None = None
    min_size: int = 0
    values: tuple[tuple[str, Constraint], ...] = ()

    def check(self, value: Any) -> Any:
        if not isinstance(value, dict) or len(value) < self.min_size or not set(self.required) <= set(value):
            raise ValueError
        if self.allowed is not None and not set(value) <= set(self.allowed):
            raise ValueError
        for key, rule in self.values:
            if key in value:
                rule.check(value[key])
        return value

    def describe(self) -> str:
        parts = [f"the keys {list(self.required)}"] if self.required else []
        if self.allowed is not None:
            parts.append(f"no key but {list(self.allowed)}")
        if self.min_size:
            parts.append(f"at least {self.min_size} entr{'y' if self.min_size == 1 else 'ies'}")
        parts += [f"the {key!r} key {rule.describe()}" for key, rule in self.values]
        return self.what + (" with " + ", ".join(parts) if parts else "")

    def shown(self, value: Any) -> str:
        """The keys, and the value of a key that breaks its rule of ``values`` (as that rule shows it); not the other
        values, which may be data."""
        if not isinstance(value, dict):
            return type(value).__name__
        shown = f"a dict with the keys {sorted(map(str, value))!r:.200}"
        for key, rule in self.values:
            try:
                if key in value:
                    rule.check(value[key])
            except (ValueError, TypeError):
                return f"{shown} whose {key!r} is {rule.shown(value[key])}"
        return shown

    def invalid_examples(self) -> list:
        out: list = ["text", [("key", 1)]]
        if self.required or self.min_size:
            out.append({})
        if self.allowed is not None:
            out.append({**dict.fromkeys(self.required, 0), "not_a_key": 1})
        out += [{**dict.fromkeys(self.required, 0), key: bad} for key, rule in self.values
                for bad in rule.invalid_examples()]
        return out


@dataclass(frozen=True)
class Vector(Constraint):
    """A non-empty sequence (a list, a tuple, a 1-D array or another iterable but a string or a dict) whose every item
    satisfies ``item``; returned as a list of the checked items."""

    item: Constraint

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes, dict)):
            raise ValueError
        items = [self.item.check(entry) for entry in value]  # not iterable: TypeError
        if not items:
            raise ValueError
        return items

    def describe(self) -> str:
        return f"a non-empty list, each item {self.item.describe()}"

    def invalid_examples(self) -> list:
        return [[], "ab", 3, *[[bad] for bad in self.item.invalid_examples()]]


@dataclass(frozen=True)
class Probabilities(Constraint):
    """One or more probabilities (an array or a float) in ``[0, 1]`` (``closed``) or ``(0, 1)``; returned as a 1-D
    float64 array."""

    closed: bool = True

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes)):
            raise ValueError
        array = np.atleast_1d(np.asarray(value, dtype=np.float64))
        if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
            raise ValueError
        inside = (array >= 0) & (array <= 1) if self.closed else (array > 0) & (array < 1)
        if not inside.all():
            raise ValueError
        return array

    def describe(self) -> str:
        return "one or more probabilities in " + ("[0, 1]" if self.closed else "(0, 1)")

    def invalid_examples(self) -> list:
        out: list = ["0.5", [], [[0.5]], [math.nan], [-0.5], [1.5], None]
        return out + ([] if self.closed else [0.0, [0.5, 1.0]])


@dataclass(frozen=True)
class DType(Constraint):
    """A NumPy dtype, or what ``numpy.dtype`` reads as one (``"<u4"``, ``np.uint8``); returned as a ``numpy.dtype``."""

    def check(self, value: Any) -> Any:
        if value is None:  # numpy.dtype(None) is float64: no dtype is given
            raise ValueError
        return np.dtype(value)  # anything else: TypeError

    def describe(self) -> str:
        return "a NumPy dtype"

    def invalid_examples(self) -> list:
        return ["not-a-dtype", 3.5, _Absent()]


@dataclass(frozen=True)
class PathLike(Constraint):
    """The path of a file: a str or an ``os.PathLike`` (kept as given)."""

    def check(self, value: Any) -> Any:
        if not isinstance(value, (str, os.PathLike)):
            raise ValueError
        text = os.fspath(value)  # an os.PathLike of bytes (or of nothing) names no file here either
        if not isinstance(text, str) or not text:
            raise ValueError
        return value

    def describe(self) -> str:
        return "a path (a non-empty str or os.PathLike)"

    def invalid_examples(self) -> list:
        return [3, "", b"bytes"]


@dataclass(frozen=True)
class CallableRule(Constraint):
    """A callable, described as ``what``."""

    what: str = "a callable"

    def check(self, value: Any) -> Any:
        if not callable(value):
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [3, "name"]


@dataclass(frozen=True)
class RealArray(Constraint):
    """Finite real numbers (a number, a sequence or a numpy array), returned as a float64 array, described as ``what``:
    of one of ``ndims`` dimensions when given (a number has 0), ``width`` long along the last axis when given, at least
    ``min_size`` of them, each in ``[low, high]`` (``closed`` as for :class:`Interval`), and along a 1-D array
    non-decreasing (``increasing="weakly"``, by at most ``tolerance`` down: rounding) or strictly increasing
    (``"strictly"``).  A ``private`` array (the true data) is shown by its shape only."""

    what: str
    ndims: tuple[int, ...] | None = None
    min_size: int = 0
    low: float = -math.inf
    high: float = math.inf
    closed: str = "both"
    increasing: str | None = None
    tolerance: float = 0.0
    private: bool = False
    width: int | None = None

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes)) or value is None:
            raise ValueError
        try:
            array = np.asarray(value, dtype=np.float64)  # ValueError, TypeError: not numbers
        except OverflowError:  # an int beyond the floats (10**309)
            raise ValueError from None
        if (self.ndims is not None and array.ndim not in self.ndims) or array.size < self.min_size:
            raise ValueError
        if self.width is not None and (array.ndim == 0 or array.shape[-1] != self.width):
            raise ValueError
        if not np.all(np.isfinite(array)):
            raise ValueError
        low_ok = array >= self.low if self.closed in ("both", "left") else array > self.low
        high_ok = array <= self.high if self.closed in ("both", "right") else array < self.high
        if not (np.all(low_ok) and np.all(high_ok)):
            raise ValueError
        if self.increasing is not None:
            steps = np.diff(array.reshape(-1)) if array.ndim <= 1 else np.array([-math.inf])
            if np.any(steps <= 0 if self.increasing == "strictly" else steps < -self.tolerance):
                raise ValueError
        return array

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        out: list = ["text", None, [math.nan] * max(1, self.min_size), [[[0.0]]] if self.ndims is not None else "x"]
        if self.min_size > 0:
            out.append([self.low if math.isfinite(self.low) else 0.0] * (self.min_size - 1))
        if math.isfinite(self.low):
            out.append([self.low - 1.0] * max(1, self.min_size))
        if math.isfinite(self.high):
            out.append([self.high + 1.0] * max(1, self.min_size))
        if self.increasing is not None:
            out.append([1.0, 0.0] if self.increasing == "weakly" else [0.0, 0.0])
        if self.width is not None:
            out.append([[0.0] * (self.width + 1)])
        return [example for example in out if _refuses(self, example)]

    def shown(self, value: Any) -> str:
        try:
            shape = np.shape(value)
        except ValueError:  # ragged
            return type(value).__name__
        return f"an array of shape {shape}" if self.private else f"{value!r:.200}"


def _refuses(rule: Constraint, value: Any) -> bool:
    try:
        rule.check(value)
    except (ValueError, TypeError):
        return True
    return False


@dataclass(frozen=True)
class ExistingFile(Constraint):
    """The path of an existing file (a str or an ``os.PathLike``, kept as given), described as ``what``; with
    ``endings`` or ``containing``, of a kind its name says: its suffixes (``".csv.gz"`` of ``data.csv.gz``, in lower
    case) end with one of ``endings`` or hold one of ``containing``."""

    what: str = "the path of an existing file"
    endings: tuple[str, ...] = ()
    containing: tuple[str, ...] = ()

    def check(self, value: Any) -> Any:
        if not isinstance(value, (str, os.PathLike)) or (isinstance(value, str) and not value):
            raise ValueError
        if not os.path.isfile(value):
            raise ValueError
        suffixes = "".join(pathlib.PurePath(os.fspath(value)).suffixes).lower()
        if (self.endings or self.containing) and not (
                suffixes.endswith(self.endings) or any(part in suffixes for part in self.containing)):
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        here = os.path.abspath(__file__)
        out: list = [3, "", os.path.join(os.path.dirname(here), "no-such-file.csv")]
        if self.endings or self.containing:
            out.append(here)  # a file that exists, of another kind (.py)
        return out

    def shown(self, value: Any) -> str:
        return f"{os.fspath(value)!r:.200}" if isinstance(value, (str, os.PathLike)) else type(value).__name__
# ---------------------------------------------------------------------- relations between parameters
class Relation:
    """A rule between two parameters of one table (a protocol's ``_relations``), checked after each parameter's own
    rule by :func:`check_relations`; a refusal names ``name``.  ``counterexample`` holds values, each valid by its own
    rule, that break it: ``tests/conformance/test_relations.py`` builds every protocol with it."""

    name: str
    counterexample: dict[str, Any]

    @property
    def error(self) -> type[DPDistError]:
        return InvalidParameterError

    def holds(self, params: dict[str, Any]) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def describe(self, params: dict[str, Any]) -> str:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class Below(Relation):
    """``name`` (every item of it when ``every``) below ``other`` (``strict``) or at most ``other`` (its number of
    items when ``count``); either None: no relation.  ``why`` says why."""

    name: str
    other: str
    strict: bool = True
    why: str = ""
    counterexample: dict[str, Any] = field(default_factory=dict, compare=False)
    count: bool = False
    every: bool = False

    def _bound(self, params: dict[str, Any]) -> Any:
        bound = params.get(self.other)
        return len(bound) if self.count and bound is not None else bound

    def holds(self, params: dict[str, Any]) -> bool:
        value, bound = params.get(self.name), self._bound(params)
        if value is None or bound is None:
            return True
        return all(item < bound if self.strict else item <= bound for item in (value if self.every else [value]))

    def describe(self, params: dict[str, Any]) -> str:
        other = f"the number of {self.other!r}" if self.count else repr(self.other)
        return (f"{'all ' if self.every else ''}{'below' if self.strict else 'at most'} {other} = {self._bound(params)!r}"
                + (f" ({self.why})" if self.why else ""))


@dataclass(frozen=True)
class SameSize(Relation):
    """``name`` holds as many items as ``other`` (a sequence) holds or says (an int); either None: no relation."""

    name: str
    other: str
    why: str = ""
    counterexample: dict[str, Any] = field(default_factory=dict, compare=False)

    def _size(self, params: dict[str, Any]) -> Any:
        other = params.get(self.other)
        return other if other is None or isinstance(other, numbers.Integral) else len(other)

    def holds(self, params: dict[str, Any]) -> bool:
        value, size = params.get(self.name), self._size(params)
        return value is None or size is None or len(value) == size

    def describe(self, params: dict[str, Any]) -> str:
        says = "says" if isinstance(params.get(self.other), numbers.Integral) else "holds"
        return f"{self._size(params)} items long (as many as {self.other!r} {says})" + (f": {self.why}" if self.why else "")


@dataclass(frozen=True)
class Either(Relation):
    """``name`` given (not None) when ``other`` is None, and (``exactly``) None when ``other`` is given."""

    name: str
    other: str
    exactly: bool = False
    why: str = ""
    counterexample: dict[str, Any] = field(default_factory=dict, compare=False)

    def holds(self, params: dict[str, Any]) -> bool:
        given, other = params.get(self.name) is not None, params.get(self.other) is not None
        return given != other if self.exactly else given or other

    def describe(self, params: dict[str, Any]) -> str:
        what = f"given exactly when {self.other!r} is None" if self.exactly else f"given when {self.other!r} is None"
        return what + (f" ({self.why})" if self.why else "")


@dataclass(frozen=True)
class NoneWhen(Relation):
    """``name`` None when ``other`` is ``value``.  ``why`` says why."""

    name: str
    other: str
    value: Any
    why: str = ""
    counterexample: dict[str, Any] = field(default_factory=dict, compare=False)

    def holds(self, params: dict[str, Any]) -> bool:
        return params.get(self.other) != self.value or params.get(self.name) is None

    def describe(self, params: dict[str, Any]) -> str:
        return f"None when {self.other}={self.value!r}" + (f" ({self.why})" if self.why else "")


@dataclass(frozen=True)
class Implies(Relation):
    """When ``when`` is one of ``when_values`` (``None``: given, any value but None; a refusal does not show it, which
    may be data), ``name`` is one of ``values`` (``None``: given).  ``why`` says why."""

    name: str
    values: tuple | None
    when: str
    when_values: tuple | None
    why: str = ""
    counterexample: dict[str, Any] = field(default_factory=dict, compare=False)

    def holds(self, params: dict[str, Any]) -> bool:
        when = params.get(self.when)
        if when is None if self.when_values is None else not _among(when, self.when_values):
            return True
        value = params.get(self.name)
        return value is not None if self.values is None else _among(value, self.values)

    def describe(self, params: dict[str, Any]) -> str:
        if self.values is None:
            allowed = "given (not None)"
        else:
            allowed = repr(self.values[0]) if len(self.values) == 1 else "one of " + ", ".join(map(repr, self.values))
        when = f"{self.when!r} is given" if self.when_values is None else f"{self.when}={params.get(self.when)!r}"
        return f"{allowed} when {when}" + (f" ({self.why})" if self.why else "")


def _among(value: Any, options: tuple) -> bool:
    """Whether ``value`` is one of the scalar ``options`` (an array, whose ``==`` is elementwise, is none of them)."""
    for option in options:
        if value is option:
            return True
        try:
            equal = value == option
        except (TypeError, ValueError):  # pragma: no cover - an object whose == refuses
            continue
        if isinstance(equal, (bool, np.bool_)) and equal:
            return True
    return False


def check_relations(owner: str, params: dict[str, Any], relations: Sequence[Relation]) -> None:
    """Refuse ``params`` (each valid by its own rule) that break one of ``relations``, naming the parameter, its
    value and what the relation allows (as :func:`check_param` words a rule)."""
    for relation in relations:
        if not relation.holds(params):
            raise relation.error(f"The {relation.name!r} parameter of {owner} must be {relation.describe(params)}. "
                                 f"Got {params.get(relation.name)!r:.200} instead.")


# ---------------------------------------------------------------------- shared rules
# One definition of each rule several modules check (local and central protocols,
# ``local.make("auto")``, the demo), so a change of the supported range is made once.

#: The supported privacy budget of every local protocol.  Below 1e-6 the estimators divide by
#: differences of probabilities that round to zero; above 30 the protocols' integer parameters
#: (e^epsilon hash ranges, OLH's g) overflow, and no local release is meaningful there anyway.
LOCAL_EPSILON = Interval(1e-6, 30.0, closed="both", privacy=True)
#: The supported privacy budget of every central release, at both ends for every release
#: (tests/central/test_common.py): the exact noise samplers round each step's epsilon down to
#: a dyadic rational whose resolution follows the step (so a split budget never falls below it),
#: as an int64 numerator (so at most 1e12; larger budgets protect nothing).
CENTRAL_EPSILON = Interval(1e-6, 1e12, closed="both", privacy=True)
#: a local protocol's privacy budget (the name local modules and the demo use)
EPSILON = LOCAL_EPSILON
#: the delta of (epsilon, delta)-DP: in (0, 1)
DELTA = Interval(0.0, 1.0, closed="neither", privacy=True)
#: the number of items of a categorical domain
DOMAIN_SIZE = Integer(low=2, high=2**31 - 1)
#: The largest single array (in bytes) that one report, the aggregate or the estimate of a local
#: protocol may need: 2 GiB.  A protocol whose parameters would need more (a ``domain_size`` of
#: 2^31 items is 16 GiB of int64 counts) is refused when it is built (:func:`check_allocation`),
#: not when the first batch of reports arrives.  The peak working memory is a few such arrays.
MAX_ALLOCATION_BYTES = 2**31


def _format_bytes(count: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"


def check_allocation(owner: str, name: str, value: int, bytes_per_unit: int, what: str) -> None:
    """Refuse ``value`` of parameter ``name`` when ``value * bytes_per_unit`` exceeds :data:`MAX_ALLOCATION_BYTES`.

    ``what`` says which array it is (e.g. "the aggregate (an int64 count per item)"); the
    message names the parameter, its value, the memory it would need and the largest
    value allowed.
    """
    need = int(value) * int(bytes_per_unit)
    if bytes_per_unit > 0 and need > MAX_ALLOCATION_BYTES:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} is {value:,}: {what} would need {_format_bytes(need)} in one "
            f"array ({bytes_per_unit} bytes per item), over dpdist's limit of {_format_bytes(MAX_ALLOCATION_BYTES)} "
            f"per allocation (dpdist.local.MAX_ALLOCATION_BYTES). The largest allowed {name} is "
            f"{MAX_ALLOCATION_BYTES // bytes_per_unit:,}."
        )


def check_param(owner: str, name: str, value, constraint: Constraint):
    """Validate one parameter; return its coerced value."""
    try:
        return constraint.check(value)
    except (ValueError, TypeError):
        raise constraint.error(
            f"The {name!r} parameter of {owner} must be {constraint.describe()}. Got {constraint.shown(value)} instead."
        ) from None


#: Names other libraries use for dpdist's parameters (diffprivlib, pure-ldp, OpenDP): suggested when given.
_ALIASES = {"eps": "epsilon", "e": "epsilon", "d": "domain_size", "domain": "domain_size", "n_bins": "bins",
            "nbins": "bins", "num_bins": "bins", "range": "bounds", "data_range": "bounds", "seed": "rng",
            "random_state": "rng"}


def did_you_mean(name: str, allowed) -> str | None:
    """The allowed name ``name`` was probably meant to be (an alias or a close spelling), or None."""

    allowed = list(allowed)
    alias = _ALIASES.get(str(name).lower())
    if alias in allowed:
        return alias
    close = difflib.get_close_matches(str(name).lower(), allowed, n=1, cutoff=0.6)
    return close[0] if close else None


def unknown_names_error(owner: str, unknown, allowed, *, what: str = "parameter", note: str = "") -> InvalidParameterError:
    """The error for names not in ``allowed``, suggesting the name meant (``eps`` -> ``epsilon``)."""
    unknown = sorted(unknown)
    hints = [f"{guess!r} for {name!r}" for name in unknown if (guess := did_you_mean(name, allowed)) is not None]
    hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
    return InvalidParameterError(f"{owner} got unknown {what}(s) {unknown}{hint}; allowed: {sorted(allowed)}{note}.")


def check_params(owner: str, params: dict, constraints: dict[str, Constraint]) -> dict:
    """Validate ``params`` against ``constraints``; unknown names are rejected."""
    unknown = sorted(set(params) - set(constraints))
    if unknown:
        raise unknown_names_error(owner, unknown, constraints)
    return {name: check_param(owner, name, value, constraints[name]) for name, value in params.items()}



def check_options(owner: str, options: dict, table: dict[str, Constraint], delegate: str | None = None) -> dict:
    """Validate keyword options against their declared ``table``; return them with coerced values.

    An option not in the table raises :class:`~dpdist.errors.InvalidParameterError`
    listing the allowed ones, unless ``delegate`` names an option that is given
    (not None): the options outside the table then go to it, which checks them
    itself (the frequency oracles' ``deconvolve``).  ``None`` means "the default"
    for every option and is passed through unchecked.
    """
    unknown = sorted(set(options) - set(table))
    if unknown and (delegate is None or options.get(delegate) is None):
        if not table:
            raise InvalidParameterError(f"{owner} got unknown option(s) {unknown}; allowed: none.")
        raise unknown_names_error(owner, unknown, table, what="option")
    return {
        name: check_param(owner, name, value, table[name]) if name in table and value is not None else value
        for name, value in options.items()
    }

Function = TypeVar("Function", bound=Callable[..., Any])


@dataclass(frozen=True)
class ParameterTable:
    """The rules a function states for its arguments (:func:`validate_params`): what the generated tests read.

    ``function`` is the checked function (as callers call it); ``method`` says its first parameter is ``self`` or
    ``cls``; ``defaults`` holds the defaults of the parameters the table names (a default must pass its rule);
    ``module`` the module that states the table (a re-exported class's ``__module__`` may name its package);
    ``relations`` the rules between its parameters.
    """

    function: Callable[..., Any]
    owner: str
    rules: dict[str, Constraint]
    method: bool
    defaults: dict[str, Any] = field(default_factory=dict)
    module: str = ""
    relations: tuple[Relation, ...] = ()


#: Every table stated with :func:`validate_params`, in the order the modules were imported.
PARAMETER_TABLES: list[ParameterTable] = []


def validate_params(rules: dict[str, Constraint], *, owner: str | None = None, relations: Sequence[Relation] = (),
                    owner_argument: str | None = None) -> Callable[[Function], Function]:
    """Check the arguments named in ``rules`` against their constraints before the function runs.

    An argument that breaks its rule raises the rule's error (:class:`~dpdist.errors.InvalidParameterError`, or
    :class:`~dpdist.errors.InvalidPrivacyParameterError` for a privacy parameter) naming the parameter, the value and
    what is allowed, as :func:`check_param` words it; an argument that passes reaches the function as the rule
    returns it (``Interval``: a float, ``Integer``: an int, ``Bytes``: bytes).  An argument left to its default is not
    checked (the generated tests check that every default passes its rule).  ``owner`` names the function in
    messages (default: its qualified name, a class for ``__init__``); on a class (a dataclass, say) the table is its
    ``__init__``'s, and the class is returned.  The table is recorded in
    :data:`PARAMETER_TABLES`, from which ``tests/package/test_parameter_tables.py`` generates the bad-input tests, as
    the conformance suite does from protocols' ``_constraints``.  ``relations`` (:class:`Relation`) are checked next,
    over the arguments given and the defaults of the others; ``tests/package/test_parameter_relations.py`` calls the
    function with each relation's counterexample.  A helper that checks its caller's arguments (``check_rng``) names
    the caller: ``owner_argument`` is the keyword argument that holds the caller's name (its default otherwise).
    """

    def decorate(function: Function) -> Function:
        if isinstance(function, type):  # a class (a dataclass, say): its __init__, under the class's name
            cls: Any = function
            cls.__init__ = validate_params(rules, owner=owner or cls.__name__, relations=relations)(cls.__init__)
            table = PARAMETER_TABLES[-1]
            PARAMETER_TABLES[-1] = ParameterTable(cls, table.owner, table.rules, False, table.defaults, cls.__module__,
                                                  table.relations)
            return cast(Function, cls)
        parameters = inspect.signature(function).parameters
        names = list(parameters)
        unknown = sorted(set(rules) - set(names))
        if unknown:
            raise TypeError(f"validate_params of {function.__qualname__} names no parameter of it: {unknown}")
        shown = owner or function.__qualname__.removesuffix(".__init__")
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        named_at = None
        if owner_argument is not None:  # the caller's name: that argument, else its default
            if parameters[owner_argument].default is not inspect.Parameter.empty:
                shown = parameters[owner_argument].default
            named_at = names.index(owner_argument) if parameters[owner_argument].kind in positional else None
        checks = tuple(
            (name, names.index(name) if parameters[name].kind in positional else None, rule)
            for name, rule in rules.items()
        )

        signature = inspect.signature(function)

        @functools.wraps(function)
        def checked(*args: Any, **kwargs: Any) -> Any:
            named = shown
            if named_at is not None and named_at < len(args):
                named = args[named_at]
            elif owner_argument is not None:
                named = kwargs.get(owner_argument, shown)
            for name, position, rule in checks:
                if name in kwargs:
                    kwargs[name] = check_param(named, name, kwargs[name], rule)
                elif position is not None and position < len(args):
                    args = (*args[:position], check_param(named, name, args[position], rule), *args[position + 1 :])
            if relations:
                bound = signature.bind_partial(*args, **kwargs)
                bound.apply_defaults()
                check_relations(named, bound.arguments, relations)
            return function(*args, **kwargs)

        defaults = {name: parameters[name].default for name in rules
                    if parameters[name].default is not inspect.Parameter.empty}
        PARAMETER_TABLES.append(ParameterTable(checked, shown, dict(rules), names[:1] in (["self"], ["cls"]), defaults,
                                               function.__module__, tuple(relations)))
        return checked  # type: ignore[return-value]  # functools.wraps keeps the signature; mypy sees a new callable

    return decorate


def _one_dimensional(values: ArrayLike, owner: str, name: str, elements: str) -> np.ndarray:
    """``values`` as a 1-D array (a scalar is one value); ``elements`` names what it must hold in the error."""
    array = np.asarray(values)
    if array.ndim == 0:
        array = array.reshape(1)
    if array.ndim != 1:
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must be a 1-D array of {elements}. "
            f"Got an array of shape {array.shape} instead."
        )
    return array


def check_integer_values(values: ArrayLike, domain_size: int, *, owner: str, name: str = "values") -> np.ndarray:
    """Coerce user values to a 1-D int64 array in ``[0, domain_size)``."""
    array = _one_dimensional(values, owner, name, "ints")
    if array.size == 0:
        return array.astype(np.int64)
    if np.issubdtype(array.dtype, np.floating):
        # integral floats are items: a pandas integer column with missing values dropped is float64
        whole = np.isfinite(array) & (array == np.floor(array))
        if not whole.all():
            bad = array[~whole]
            raise InvalidValueTypeError(
                f"The {name!r} argument of {owner} must hold integers in [0, {domain_size}) (whole floats such "
                f"as 3.0 are accepted). Got {bad.size} value(s) that are not whole numbers, e.g. {float(bad[0])!r}"
                + (" (missing values: drop them first)." if np.isnan(bad).any() else ".")
            )
        if array.min() >= 0 and array.max() < domain_size:
            return array.astype(np.int64)
    elif not np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_:
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must hold integers in [0, {domain_size}). "
            f"Got dtype {array.dtype} instead."
        )
    low, high = array.min(), array.max()
    if low < 0 or high >= domain_size:
        bad = array[(array < 0) | (array >= domain_size)]
        raise OutOfDomainError(
            f"The {name!r} argument of {owner} must hold integers in [0, {domain_size}). "
            f"Got {bad.size} value(s) outside it, e.g. {bad[0]!r}."
        )
    return array.astype(np.int64, copy=False)


def check_real_values(values: ArrayLike, bounds: Sequence[float], *, owner: str, name: str = "values") -> np.ndarray:
    """Coerce user values to a 1-D float64 array of finite values in ``[lo, hi]``."""
    array = _one_dimensional(values, owner, name, "floats")
    if array.size and not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must hold real numbers in [{bounds[0]}, {bounds[1]}]. "
            f"Got dtype {array.dtype} instead."
        )
    array = array.astype(np.float64, copy=False)
    if array.size:
        finite = np.isfinite(array)
        if not finite.all():
            raise OutOfDomainError(
                f"The {name!r} argument of {owner} must hold finite values. "
                f"Got {np.count_nonzero(~finite)} non-finite value(s), e.g. {array[~finite][0]!r}."
            )
        outside = (array < bounds[0]) | (array > bounds[1])
        if outside.any():
            raise OutOfDomainError(
                f"The {name!r} argument of {owner} must lie in bounds [{bounds[0]}, {bounds[1]}]. "
                f"Got {np.count_nonzero(outside)} value(s) outside, e.g. {array[outside][0]!r}."
            )
    return array


def wrap_real_values(values, bounds: Sequence[float], *, owner: str, name: str = "values") -> tuple[np.ndarray, int]:
    """``(wrapped, moved)``: user values on a circle of one period ``[lo, hi]`` (``hi`` the same point as ``lo``), a
    finite value outside it wrapped around (``lo + (x - lo) mod (hi - lo)``: 1500 minutes of a day is 60), and how many
    moved; NaN and infinities as :func:`clip_real_values` (NaN to ``lo``), since they have no place on the circle."""
    array, moved = clip_real_values(values, bounds, owner=owner, name=name)
    if not moved:
        return array, 0
    raw = _one_dimensional(values, owner, name, "floats")
    raw = np.asarray([np.nan if value is None else value for value in raw.tolist()] if raw.dtype == object else raw,
                     dtype=np.float64)
    low, high = float(bounds[0]), float(bounds[1])
    outside = np.isfinite(raw) & ((raw < low) | (raw > high))
    wrapped = array.copy()
    wrapped[outside] = low + np.mod(raw[outside] - low, high - low)
    return wrapped, moved


def clip_real_values(values, bounds: Sequence[float], *, owner: str, name: str = "values") -> tuple[np.ndarray, int]:
    """``(clipped, moved)``: user values as a 1-D float64 array clipped into ``[lo, hi]``, and how many moved.

    The rule of every clipping in dpdist (central releases, ``clip=True`` of the local
    numerical protocols): values below ``lo`` (``-inf`` included) become ``lo``, values
    above ``hi`` (``+inf`` included) become ``hi``.  A missing value (NaN) is its callers'
    to handle first, by their ``missing=`` policy (:mod:`dpdist._missing`: refused unless
    asked); one that reaches this function becomes ``lo`` and is counted as moved.  Only the
    schema is refused: a 2-D or non-numeric ``values`` raises
    :class:`~dpdist.errors.InvalidValueTypeError` naming ``name``.
    """
    array = _one_dimensional(values, owner, name, "floats")
    if array.dtype == object and array.size:  # a Python list with None (missing) among the numbers
        try:
            array = np.array([np.nan if value is None else value for value in array.tolist()], dtype=np.float64)
        except (TypeError, ValueError):
            pass
    if array.size and not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise InvalidValueTypeError(
            f"The {name!r} argument of {owner} must hold real numbers. Got dtype {array.dtype} instead."
        )
    array = array.astype(np.float64, copy=False)
    low, high = float(bounds[0]), float(bounds[1])
    inside = (array >= low) & (array <= high)  # False for NaN
    if inside.all():
        return array, 0
    clipped = np.clip(np.where(np.isnan(array), low, array), low, high)
    return clipped, int(array.size - np.count_nonzero(inside))


# ---- rules added by tables-a
@dataclass(frozen=True)
class Given(Relation):
    """``name`` given (not None), though its default is None (``channel(values=None)`` of a protocol that has no list
    of all inputs).  ``why`` says why.  A relation, not a rule of ``name``: a default is not checked by its rule."""

    name: str
    why: str = ""
    counterexample: dict[str, Any] = field(default_factory=dict, compare=False)

    def holds(self, params: dict[str, Any]) -> bool:
        return params.get(self.name) is not None

    def describe(self, params: dict[str, Any]) -> str:
        return "given (not None)" + (f" ({self.why})" if self.why else "")


@dataclass(frozen=True)
class Present(Constraint):
    """Any value but None, described as ``what`` (the data of a call, whose own checks read it next); a refusal shows
    the type only."""

    what: str

    def check(self, value: Any) -> Any:
        if value is None:
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [None]

    def shown(self, value: Any) -> str:
        return type(value).__name__ if value is not None else "None"


@dataclass(frozen=True)
class Span(Constraint):
    """A range ``(low, high)`` of a query: two finite numbers with ``low <= high`` (a point when equal; unlike
    :class:`Bounds`, no width is needed); returned as a tuple of floats."""

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes, Mapping)):
            raise ValueError
        try:
            low, high = (float(one) for one in value)  # not a pair of numbers: ValueError or TypeError
        except OverflowError:  # an int beyond the floats (10**309)
            raise ValueError from None
        if not (math.isfinite(low) and math.isfinite(high) and low <= high):
            raise ValueError
        return (low, high)

    def describe(self) -> str:
        return "a pair (low, high) of finite numbers with low <= high"

    def invalid_examples(self) -> list:
        return [(1.0, 0.0), (0.0, math.inf), (0.0,), (0.0, 1.0, 2.0), "ab", 3, None, (0, 10**309)]


@dataclass(frozen=True)
class Admits(Constraint):
    """An instance of ``types`` that ``reason`` admits, described as ``what``: ``reason(value)`` is None, or the reason
    the value is refused (a test stated for some protocols only, ``why_no_feasibility_test``).  A refusal shows the
    value's type, and the reason when it is of ``types``."""

    types: Any
    reason: Callable[[Any], "str | None"]
    what: str

    def check(self, value: Any) -> Any:
        if not isinstance(value, self.types) or self.reason(value) is not None:
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [_Absent(), "text"]

    def shown(self, value: Any) -> str:
        if not isinstance(value, self.types):
            return type(value).__name__
        return f"{getattr(value, 'display_name', type(value).__name__)} ({self.reason(value)})"


@dataclass(frozen=True)
class PowerOf(Relation):
    """``name`` a power ``other**k`` (``k >= 1``) of the int ``other`` >= 2 (a tree's leaves and its branching); either
    None: no relation.  ``why`` says why."""

    name: str
    other: str
    why: str = ""
    counterexample: dict[str, Any] = field(default_factory=dict, compare=False)

    def holds(self, params: dict[str, Any]) -> bool:
        value, base = params.get(self.name), params.get(self.other)
        if value is None or base is None:
            return True
        power = base
        while power < value:
            power *= base
        return power == value

    def describe(self, params: dict[str, Any]) -> str:
        base = params.get(self.other)
        return (f"a power of {self.other!r} = {base!r} (e.g. {base**2}, {base**3})" if isinstance(base, int) else
                f"a power of {self.other!r}") + (f" ({self.why})" if self.why else "")


@dataclass(frozen=True)
class Distinct(Constraint):
    """What ``inner`` (an :class:`Items` rule, say) returns, with no item twice, described as ``what``."""

    inner: Constraint
    what: str

    @property
    def error(self) -> type[DPDistError]:
        return self.inner.error

    def check(self, value: Any) -> Any:
        items = self.inner.check(value)
        if len(set(items)) != len(items):  # items the rule returns are hashable (names, ints)
            raise ValueError
        return items

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        repeated = [example for example in ([1, 1], ["a", "a"]) if not _refuses(self.inner, example)]
        return [*self.inner.invalid_examples(), *repeated]

    def shown(self, value: Any) -> str:
        return self.inner.shown(value)


@dataclass(frozen=True)
class Differs(Relation):
    """``name`` other than ``other`` (two attributes of a pair); either None: no relation.  ``why`` says why."""

    name: str
    other: str
    why: str = ""
    counterexample: dict[str, Any] = field(default_factory=dict, compare=False)

    def holds(self, params: dict[str, Any]) -> bool:
        value, other = params.get(self.name), params.get(self.other)
        return value is None or other is None or not _among(value, (other,))

    def describe(self, params: dict[str, Any]) -> str:
        return f"other than {self.other!r} = {params.get(self.other)!r}" + (f" ({self.why})" if self.why else "")


@dataclass(frozen=True)
class Weights(Constraint):
    """Finite non-negative numbers with a positive sum (a 1-D sequence or array: group sizes, a law's weights),
    described as ``what``; returned as a float64 array."""

    what: str = "non-negative numbers with a positive sum"

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes)) or value is None:
            raise ValueError
        try:
            array = np.asarray(value, dtype=np.float64)  # ValueError, TypeError: not numbers
        except OverflowError:  # an int beyond the floats (10**309)
            raise ValueError from None
        if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)) or np.any(array < 0):
            raise ValueError
        if not array.sum() > 0:
            raise ValueError
        return array

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return ["text", None, [], [[1.0]], [math.nan, 1.0], [-1.0, 2.0], [0.0, 0.0]]
