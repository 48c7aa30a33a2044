"""What :func:`dpdist.audit.audit` accepts as a randomizer, made a :class:`Randomizer`."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from ..errors import InvalidParameterError
from ._protocols import is_protocol, protocol_randomizer
from ._randomizer import Randomizer

__all__ = ["as_randomizer"]


def as_randomizer(randomizer: Any, owner: str = "audit") -> Randomizer:
    """A :class:`Randomizer` from one, from a dpdist protocol, or from a plain callable.

    A callable taking one argument is ``f(values) -> outputs`` and draws its own randomness;
    one taking two is ``f(values, rng)``.
    """
    if isinstance(randomizer, Randomizer):
        return randomizer
    if is_protocol(randomizer):
        return protocol_randomizer(randomizer)
    if not callable(randomizer):
        raise InvalidParameterError(
            f"The 'randomizer' argument of {owner} must be a callable f(values) -> outputs, a dpdist.audit.Randomizer "
            f"or a dpdist local protocol. Got {type(randomizer).__name__} instead."
        )
    name = getattr(randomizer, "__qualname__", None) or type(randomizer).__name__
    if _positional_arguments(randomizer) >= 2:
        return Randomizer(sample=randomizer, name=name)
    return Randomizer(sample=lambda values, rng: randomizer(values), name=name, seeded=False)


def _positional_arguments(function: Callable) -> int:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for parameter in parameters if parameter.kind in kinds)
