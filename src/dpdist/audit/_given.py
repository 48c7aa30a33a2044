"""What :func:`dpdist.audit.audit` accepts as a randomizer, made a :class:`Randomizer`."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from .._validation import CallableRule, InstanceOf, OneOf, validate_params
from ..local import LocalProtocol
from ._protocols import is_protocol, protocol_randomizer
from ._randomizer import Randomizer

__all__ = ["as_randomizer"]


@validate_params({"randomizer": OneOf((InstanceOf(Randomizer, "a Randomizer"), InstanceOf(LocalProtocol, "a protocol"),
                                       CallableRule()),
                                      "a callable f(values) -> outputs, a dpdist.audit.Randomizer or a dpdist local "
                                      "protocol")}, owner_argument="owner")
def as_randomizer(randomizer: Any, owner: str = "audit") -> Randomizer:
    """A :class:`Randomizer` from one, from a dpdist protocol, or from a plain callable.

    A callable with a parameter named ``rng`` is called ``f(values, rng=generator)``; else one with two positional
    parameters without a default is ``f(values, rng)``; any other (``f(values)``, ``f(values, mech=mech)``: a
    default bound at definition) is ``f(values)`` and draws its own randomness.
    """
    if isinstance(randomizer, Randomizer):
        return randomizer
    if is_protocol(randomizer):
        return protocol_randomizer(randomizer)
    # a callable otherwise: the table
    name = getattr(randomizer, "__qualname__", None) or type(randomizer).__name__
    if _takes_rng_keyword(randomizer):
        return Randomizer(sample=lambda values, rng: randomizer(values, rng=rng), name=name)
    if _positional_arguments(randomizer, required=True) >= 2:
        return Randomizer(sample=randomizer, name=name)
    return Randomizer(sample=lambda values, rng: randomizer(values), name=name, seeded=False)


def _takes_rng_keyword(function: Callable) -> bool:
    """Whether ``function`` has a parameter named ``rng`` that can be passed by keyword."""
    try:
        parameter = inspect.signature(function).parameters.get("rng")
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                        inspect.Parameter.KEYWORD_ONLY)


def _positional_arguments(function: Callable, required: bool = False) -> int:
    """How many positional parameters ``function`` has (``required``: only those without a default)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for parameter in parameters if parameter.kind in kinds
               and not (required and parameter.default is not inspect.Parameter.empty))
