"""The registry of local protocols: ``register``, ``available``, and building a registered protocol.

It knows protocols only as classes with a ``name``, ``summary``, ``tags.kind``
and a ``_constraints`` table, so it imports nothing of the contract: the state validator and the aggregator rebuild a protocol from its
config through it (:func:`rebuild`), and the contract
(:mod:`dpdist.local._protocol`) gives :func:`build` and :func:`rebuild` their
public, typed names ``make`` and ``from_config``.
"""

from __future__ import annotations

import difflib
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, TypeVar

from .._validation import Boolean, Described, Dict, Options, Text, check_param, validate_params
from ..errors import IncompatibleStateError, InvalidParameterError

__all__ = [
    "CONFIG_VERSION",
    "register",
    "register_chooser",
    "available",
    "describe",
    "parameter_names",
    "needs_population_size",
    "build",
    "rebuild",
    "registered_class",
    "stored_defaults",
    "in_stored_defaults",
]


#: version of ``LocalProtocol.config()`` dicts and aggregator states
CONFIG_VERSION = 1

#: set while a stored config is rebuilt, or a protocol builds an inner one its config names without parameters
_STORED_DEFAULTS: ContextVar[bool] = ContextVar("stored_defaults", default=False)

_REGISTRY: dict[str, Any] = {}  # name -> a Registrable class (called with the parameters to build one)
_CHOOSERS: dict[str, Callable[..., Any]] = {}

ProtocolClass = TypeVar("ProtocolClass", bound=type)


def register(cls: ProtocolClass) -> ProtocolClass:
    """Class decorator: add a protocol to the registry under ``cls.name``."""
    name = getattr(cls, "name", "")
    if not name or name in _REGISTRY:
        raise ValueError(f"protocol name {name!r} is empty or already registered")
    _REGISTRY[name] = cls
    return cls


def available(kind: str | None = None) -> list[str]:
    """Registered protocol names (optionally only ``kind`` "frequency", "heavy_hitters" or "numerical")."""
    return sorted(name for name, cls in _REGISTRY.items() if kind is None or cls.tags.kind == kind)


def describe() -> list[tuple[str, str, str]]:
    """``(name, kind, summary)`` for every registered protocol."""
    return [(name, _REGISTRY[name].tags.kind, _REGISTRY[name].summary) for name in available()]


def parameter_names(name: str) -> list[str]:
    """The parameters protocol ``name`` takes (its constraint table), e.g. to build it generically."""
    name = check_param("local.parameter_names", "name", name, Options(tuple(available())))
    return sorted(_REGISTRY[name]._constraints)


def needs_population_size(name: str) -> bool:
    """Whether protocol ``name`` takes the public ``n_users`` parameter (its design depends on n)."""
    return name in _REGISTRY and "n_users" in _REGISTRY[name]._constraints


def register_chooser(name: str, factory: Callable[..., Any]) -> None:
    """Register ``factory(**params)`` as the builder of the pseudo-protocol ``name`` (e.g. ``"auto"``).

    A chooser returns an instance of a registered protocol; it is not listed by
    :func:`available` (its config names the protocol it chose).
    """
    _CHOOSERS[name] = factory


#: a protocol's name as local.make and a config take it (the registered names are checked when it is built)
_NAME = Described(Text(), "a protocol name (one of local.available()) or 'auto'")


@validate_params({"name": _NAME}, owner="local.make")
def build(name: str, **params: Any) -> Any:
    """Build a registered protocol (``local.make``, its typed face), e.g. ``build("oue", epsilon=1.0, domain_size=1024)``.

    Names are case-insensitive (``"OUE"`` is ``"oue"``); the config keeps the registry's spelling.
    """
    key = name if name in _CHOOSERS or name in _REGISTRY else name.strip().lower().replace("_", "-")
    if key in _CHOOSERS:
        return _CHOOSERS[key](**params)
    if key not in _REGISTRY:
        close = difflib.get_close_matches(key, [*available(), *_CHOOSERS], n=1, cutoff=0.6)
        raise InvalidParameterError(
            f"The 'name' parameter of local.make must be one of {available()} or 'auto'. Got {name!r} instead"
            + (f" (did you mean {close[0]!r}?)." if close else ".")
        )
    try:
        return _REGISTRY[key](**params)
    except OverflowError as error:  # a number past what a float computes with (sw's b = 1e308): the caller's
        raise InvalidParameterError(f"The parameters of {key!r} hold a number dpdist cannot compute with "
                                    f"({_largest(params)}: {error}); give smaller values.") from None


def _largest(params: dict[str, Any]) -> str:
    """The parameter of largest magnitude among ``params``' numbers, as ``name = value`` (the likely culprit)."""
    numbers = [(abs(value), key, value) for key, value in params.items()
               if isinstance(value, (int, float)) and not isinstance(value, bool)]
    if not numbers:
        return "a nested value"
    _, key, value = max(numbers)
    return f"{key} = {value!r}"


@validate_params({"config": Dict("a protocol's config (a dict)", required=("protocol",), values=(("protocol", _NAME),)),
                  "new": Boolean()}, owner="local.from_config")
def rebuild(config: dict[str, Any], new: bool = False) -> Any:
    """Rebuild a protocol from :meth:`LocalProtocol.config` (``local.from_config``, its typed face); ``new``: the config
    of reports still to be made (a campaign being created), whose left-out parameters take today's defaults rather
    than those of :func:`stored_defaults`."""
    params = dict(config)
    name = params.pop("protocol")
    version = params.pop("version", CONFIG_VERSION)
    if isinstance(version, bool) or version != CONFIG_VERSION:  # true == 1 in Python, not in a config
        raise IncompatibleStateError(
            f"Config version {version!r} of protocol {name!r} is not supported (this dpdist reads {CONFIG_VERSION})."
        )
    if new or name == "auto":  # no report names "auto" (each names the protocol chosen): it is always a new config
        return build(name, **params)
    with stored_defaults():
        return build(name, **params)


@contextmanager
def stored_defaults():
    """Build protocols as configs written earlier meant them: a parameter a config leaves out takes the default it had
    when such configs were written (``ss``'s ``subset_size``), not a newer one.  :func:`rebuild` builds in it, and so
    does a protocol building an inner one that its own config names without that parameter."""
    token = _STORED_DEFAULTS.set(True)
    try:
        yield
    finally:
        _STORED_DEFAULTS.reset(token)


def in_stored_defaults() -> bool:
    """Whether protocols are being built under :func:`stored_defaults`."""
    return _STORED_DEFAULTS.get()


def registered_class(name: str) -> Any:
    """The class registered under ``name`` (a LocalProtocol subclass; None if there is none)."""
    return _REGISTRY.get(name)
