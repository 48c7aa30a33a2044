"""Rules of one number or flag: intervals, integers, even integers, powers of two, primes, options, booleans."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DPDistError, InvalidParameterError, InvalidPrivacyParameterError
from ._rule import Constraint

__all__ = ["Interval", "Integer", "PowerOfTwo", "is_prime", "Prime", "Options", "Boolean", "Even"]


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
