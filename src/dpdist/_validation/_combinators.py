"""Rules made of rules: an optional value, a rule in its own words, one or all of several rules, distinct
items, a rule shown by another."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._rule import Constraint, Wrapper, refuses

__all__ = ["Optional", "Described", "OneOf", "Distinct", "AllOf", "ShownBy"]


@dataclass(frozen=True)
class Optional(Wrapper):
    """``None`` or a value satisfying ``inner``."""

    def check(self, value: Any) -> Any:
        return None if value is None else self.inner.check(value)

    def describe(self) -> str:
        return "None or " + self.inner.describe()

    def invalid_examples(self) -> list:
        return [v for v in self.inner.invalid_examples() if v is not None]


@dataclass(frozen=True)
class Described(Wrapper):
    """``inner``'s rule, described in the words of its parameter (``"a number of seconds in (0, 600]"``)."""

    text: str

    def describe(self) -> str:
        return self.text


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


@dataclass(frozen=True)
class Distinct(Wrapper):
    """What ``inner`` (an :class:`Items` rule, say) returns, with no item twice, described as ``what``."""

    what: str

    def check(self, value: Any) -> Any:
        items = self.inner.check(value)
        if len(set(items)) != len(items):  # items the rule returns are hashable (names, ints)
            raise ValueError
        return items

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        repeated = [example for example in ([1, 1], ["a", "a"]) if not refuses(self.inner, example)]
        return [*self.inner.invalid_examples(), *repeated]


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
        return [example for rule in self.rules for example in rule.invalid_examples() if refuses(self, example)]

    def shown(self, value: Any) -> str:
        """As the first rule shows it (a key: its type only)."""
        return self.rules[0].shown(value)


@dataclass(frozen=True)
class ShownBy(Wrapper):
    """``inner``'s rule, a refused value shown as ``shower`` shows it (a long array by its type and shape)."""

    shower: Constraint

    def shown(self, value: Any) -> str:
        return self.shower.shown(value)
