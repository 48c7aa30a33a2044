"""Rules made of rules: an optional value, a rule in its own words, one of several rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import DPDistError
from ._rule import Constraint

__all__ = ["Optional", "Described", "OneOf"]


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
