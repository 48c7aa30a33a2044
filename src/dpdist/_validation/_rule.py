"""The base of every rule: a value is checked, described and shown; a rule that wraps another; one parameter
checked against its rule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._redact import MASK, url_secrets
from ..errors import DPDistError, InvalidParameterError

__all__ = ["Constraint", "Wrapper", "check_param", "refuses"]


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
class Wrapper(Constraint):
    """A rule that is ``inner``'s in every respect (its error, check, description, refused examples and how it shows a
    value) but those a subclass overrides: the base of rules that add one thing to another rule."""

    inner: Constraint

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
        return self.inner.shown(value)


def refuses(rule: Constraint, value: Any) -> bool:
    """Whether ``rule`` refuses ``value`` (its check raises ValueError or TypeError)."""
    try:
        rule.check(value)
    except (ValueError, TypeError):
        return True
    return False


def check_param(owner: str, name: str, value, constraint: Constraint):
    """Validate one parameter; return its coerced value."""
    try:
        return constraint.check(value)
    except (ValueError, TypeError):
        raise constraint.error(
            f"The {name!r} parameter of {owner} must be {constraint.describe()}. "
            f"Got {_without_passwords(constraint.shown(value), value)} instead."  # a URL's password is never shown
        ) from None


def _without_passwords(shown: str, value: Any) -> str:
    """``shown`` (a refused ``value``) without the passwords of the URLs ``value`` holds (a string, or the strings of a
    list, tuple or dict), as typed and as ``repr`` writes them."""
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else (value,)
    for secret in sorted({secret for item in items if isinstance(item, str) for secret in url_secrets(item)}, key=len, reverse=True):
        shown = shown.replace(secret, MASK).replace(repr(secret)[1:-1], MASK) if len(secret) >= 3 else shown
    return shown
