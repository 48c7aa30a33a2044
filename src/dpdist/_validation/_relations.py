"""Relations between parameters: a rule over two or more arguments, each with a counterexample."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..errors import DPDistError, InvalidParameterError
from ._rule import Constraint, refuses

__all__ = ["Relation", "Below", "SameSize", "Either", "NoneWhen", "Implies", "check_relations", "Given", "PowerOf", "Differs", "Satisfies"]


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
        return not refuses(self.rule, params.get(self.name))

    def describe(self, params: dict[str, Any]) -> str:
        when = f"{self.when!r} is None" if self.absent else f"{self.when!r} is given"
        return f"{self.rule.describe()} when {when}" + (f" ({self.why})" if self.why else "")
