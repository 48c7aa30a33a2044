"""The rules added by the tables-b session (issue 63: the parameter tables of the service, relay, issuer, experiments,
audit and frame functions), kept apart for the lead to re-home by kind: tokens, mappings, registries, combinators,
rows of numbers and a relation (``Satisfies``)."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import DPDistError
from ._objects import _Absent
from ._relations import Relation
from ._rule import Constraint, _refuses
from ._scalars import Integer

__all__ = ["Token", "Even", "MappingOf", "HasMethod", "AttributeIn", "NumericRows", "AllOf", "ShownBy", "Satisfies",
           "Registered"]


# ---- rules added by tables-b
@dataclass(frozen=True)
class Token(Constraint):
    """A secret sent in an HTTP header (``Authorization: Bearer ...``): a string of at least ``min_length`` printable
    ASCII characters (as header values must be) without surrounding spaces, described as ``what`` when given; a
    refusal shows its length only."""

    min_length: int = 1
    what: str = ""
    spaces: bool = False  # surrounding spaces allowed (an issuer's admin token always took them)

    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or len(value) < self.min_length or (value != value.strip() and not self.spaces):
            raise ValueError
        if not (value.isascii() and value.isprintable()):
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what or (f"a token of at least {self.min_length} printable ASCII characters, without surrounding "
                             "spaces")

    def shown(self, value: Any) -> str:
        return f"a str of {len(value)} characters" if isinstance(value, str) else f"a {type(value).__name__}"

    def invalid_examples(self) -> list:
        out: list = [3, None, "\u00e9" * max(1, self.min_length)]
        out += [""] if self.min_length else []
        out += ["x" * (self.min_length - 1)] if self.min_length > 1 else []
        return out + ([] if self.spaces else [" " + "x" * max(1, self.min_length)])


@dataclass(frozen=True)
class Even(Constraint):
    """An even int in ``[low, high]`` (either end may be None)."""

    low: int | None = None
    high: int | None = None

    def check(self, value: Any) -> Any:
        value = Integer(self.low, self.high).check(value)
        if value % 2:
            raise ValueError
        return value

    def describe(self) -> str:
        return "an even " + Integer(self.low, self.high).describe().removeprefix("an ")

    def invalid_examples(self) -> list:
        odd = (self.low if self.low is not None else 0) + 1
        return [*Integer(self.low, self.high).invalid_examples(), odd if odd % 2 else odd + 1]


@dataclass(frozen=True)
class MappingOf(Constraint):
    """A mapping whose every key satisfies ``key`` and every value ``value`` (the value of a key named in ``named``,
    ``(key, rule)`` pairs, that key's rule instead), described as ``what``; returned as a new dict of the checked keys
    and values, or as given with ``as_given`` (values whose type is part of a result: an experiment's grid).  A
    refusal shows the keys, not the values (which may be secrets), and the key whose value is refused."""

    key: Constraint
    value: Constraint
    what: str
    named: tuple[tuple[str, Constraint], ...] = ()
    as_given: bool = False

    def _rule(self, key: Any) -> Constraint:
        return next((rule for name, rule in self.named if name == key), self.value)

    def check(self, value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise ValueError
        checked = {self.key.check(key): self._rule(key).check(item) for key, item in value.items()}
        return value if self.as_given else checked

    def describe(self) -> str:
        return self.what

    def shown(self, value: Any) -> str:
        if not isinstance(value, Mapping):
            return type(value).__name__
        shown = f"a dict with the keys {sorted(map(str, value))!r:.200}"
        for key, item in value.items():
            if _refuses(self.key, key):
                return f"{shown} whose key {key!r:.100} is refused"
            if _refuses(self._rule(key), item):
                return f"{shown} whose {key!r:.100} is {self._rule(key).shown(item)}"
        return shown

    def invalid_examples(self) -> list:
        out: list = ["text", [("key", "value")]]
        good_value = next((example for example in ("value", 1, 1.0) if not _refuses(self.value, example)), None)
        good_key = next((example for example in ("key", 1) if not _refuses(self.key, example)), None)
        out += [{bad: good_value} for bad in self.key.invalid_examples()[:1] if _hashable(bad)]
        out += [{good_key: bad} for bad in self.value.invalid_examples()[:1]]
        out += [{name: bad} for name, rule in self.named for bad in rule.invalid_examples()[:1]]
        return [example for example in out if _refuses(self, example)]


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


@dataclass(frozen=True)
class HasMethod(Constraint):
    """An object with a callable attribute ``name`` (a result with ``table()``), described as ``what``; a refusal
    shows the value's type only (its repr may be its whole content)."""

    name: str
    what: str

    def check(self, value: Any) -> Any:
        if not callable(getattr(value, self.name, None)):
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def shown(self, value: Any) -> str:
        return type(value).__name__

    def invalid_examples(self) -> list:
        return [_Absent(), 3]


@dataclass(frozen=True)
class AttributeIn(Constraint):
    """An instance of ``types`` whose attribute ``attribute`` is one of ``values`` (a protocol of some names),
    described as ``what``."""

    types: Any
    attribute: str
    values: tuple
    what: str

    def check(self, value: Any) -> Any:
        if not isinstance(value, self.types) or getattr(value, self.attribute, None) not in self.values:
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [_Absent(), "text"]


@dataclass(frozen=True)
class NumericRows(Constraint):
    """``min_rows`` to ``max_rows`` numbers, or rows of numbers: what ``numpy.asarray`` reads as a 1-D or 2-D array of
    booleans, ints or floats; returned as given (its dtype is the caller's).  With ``not_pairs``, a tuple of two numbers
    is refused (another rule reads it: bounds ``(low, high)``).  Described as ``what``; a long value is shown by its
    type and shape."""

    min_rows: int
    max_rows: int
    what: str
    not_pairs: bool = False

    def check(self, value: Any) -> Any:
        if value is None or isinstance(value, (str, bytes)):
            raise ValueError
        if self.not_pairs and isinstance(value, tuple) and len(value) == 2 and all(
                isinstance(one, numbers.Real) for one in value):
            raise ValueError
        array = np.asarray(value)  # ValueError, TypeError: ragged, not numbers
        if array.dtype.kind not in "biuf" or array.ndim not in (1, 2) or not self.min_rows <= len(array) <= self.max_rows:
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def shown(self, value: Any) -> str:
        text = repr(value)
        if len(text) <= 80 and "\n" not in text:
            return text
        return f"{type(value).__name__} of shape {np.shape(value)}" if _shaped(value) else type(value).__name__

    def invalid_examples(self) -> list:
        return [None, "abc", [0.0] * (self.min_rows - 1), [[[0.0]] * self.min_rows], [0.0] * (self.max_rows + 1),
                *([(0.0, 1.0)] if self.not_pairs else [])]


def _shaped(value: Any) -> bool:
    try:
        np.shape(value)
    except ValueError:  # ragged
        return False
    return True


@dataclass(frozen=True)
class AllOf(Constraint):
    """A value that satisfies every rule of ``rules`` in turn (each given what the one before returned), returned as
    the last returns it; described as ``what``."""

    rules: tuple[Constraint, ...]
    what: str

    def check(self, value: Any) -> Any:
        for rule in self.rules:
            value = rule.check(value)
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [example for rule in self.rules for example in rule.invalid_examples() if _refuses(self, example)]

    def shown(self, value: Any) -> str:
        """As the first rule shows it (a key: its type only)."""
        return self.rules[0].shown(value)


@dataclass(frozen=True)
class ShownBy(Constraint):
    """``inner``'s rule, a refused value shown as ``shower`` shows it (a long array by its type and shape)."""

    inner: Constraint
    shower: Constraint

    @property
    def error(self) -> type[DPDistError]:
        return self.inner.error

    def check(self, value: Any) -> Any:
        return self.inner.check(value)

    def describe(self) -> str:
        return self.inner.describe()

    def invalid_examples(self) -> list:
        return self.inner.invalid_examples()

    def shown(self, value: Any) -> str:
        return self.shower.shown(value)


@dataclass(frozen=True)
class Satisfies(Relation):
    """When ``when`` is given (not None; with ``absent``, when it is None), ``name`` satisfies ``rule`` (a bound finite
    only with another setting).  ``why`` says why."""

    name: str
    rule: Constraint
    when: str
    why: str = ""
    counterexample: dict[str, Any] = field(default_factory=dict, compare=False)
    absent: bool = False  # the rule holds when ``when`` is None instead

    def holds(self, params: dict[str, Any]) -> bool:
        if (params.get(self.when) is None) != self.absent:
            return True
        return not _refuses(self.rule, params.get(self.name))

    def describe(self, params: dict[str, Any]) -> str:
        when = f"{self.when!r} is None" if self.absent else f"{self.when!r} is given"
        return f"{self.rule.describe()} when {when}" + (f" ({self.why})" if self.why else "")


@dataclass(frozen=True)
class Registered(Constraint):
    """A name of a registry that may grow while the program runs (registered datasets, methods): one of ``names()``,
    described as ``what`` followed by the names registered when a value is refused."""

    names: Callable[[], Iterable[str]]
    what: str

    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or value not in set(self.names()):
            raise ValueError
        return value

    def describe(self) -> str:
        return f"{self.what}: one of {sorted(self.names())}"

    def invalid_examples(self) -> list:
        return ["not-a-registered-name", 3]
