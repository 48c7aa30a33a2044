"""The registry of local protocols: ``register``, ``make``, ``available``, ``from_config``.

It knows protocols only as classes with a ``name``, ``tags.kind`` and a
``_constraints`` table, so it imports nothing of the contract
(:mod:`dpdist.local._protocol`), and the state validator can rebuild a
protocol from its config without importing the aggregator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

from ..errors import IncompatibleStateError, InvalidParameterError

if TYPE_CHECKING:  # for the annotations only: the registry imports nothing of the contract
    from ._protocol import LocalProtocol

#: the registry's functions that :mod:`dpdist.local._protocol` re-exports with the contract
PROTOCOL_FUNCTIONS = [
    "register",
    "make",
    "available",
    "from_config",
    "describe",
    "needs_population_size",
    "parameter_names",
]
__all__ = ["CONFIG_VERSION", *PROTOCOL_FUNCTIONS, "registered_class"]

#: version of ``LocalProtocol.config()`` dicts and aggregator states
CONFIG_VERSION = 1

_REGISTRY: dict[str, type[LocalProtocol]] = {}
_CHOOSERS: dict[str, Callable[..., LocalProtocol]] = {}

ProtocolClass = TypeVar("ProtocolClass", bound="type[LocalProtocol]")


def register(cls: ProtocolClass) -> ProtocolClass:
    """Class decorator: add a protocol to the registry under ``cls.name``."""
    if not cls.name or cls.name in _REGISTRY:
        raise ValueError(f"protocol name {cls.name!r} is empty or already registered")
    _REGISTRY[cls.name] = cls
    return cls


def available(kind: str | None = None) -> list[str]:
    """Registered protocol names (optionally only ``kind`` "frequency", "heavy_hitters" or "numerical")."""
    return sorted(name for name, cls in _REGISTRY.items() if kind is None or cls.tags.kind == kind)


def describe() -> list[tuple[str, str, str]]:
    """``(name, kind, summary)`` for every registered protocol."""
    return [(name, _REGISTRY[name].tags.kind, _REGISTRY[name].summary) for name in available()]


def parameter_names(name: str) -> list[str]:
    """The parameters protocol ``name`` takes (its constraint table), e.g. to build it generically."""
    if name not in _REGISTRY:
        raise InvalidParameterError(f"Unknown protocol {name!r}; registered: {available()}.")
    return sorted(_REGISTRY[name]._constraints)


def needs_population_size(name: str) -> bool:
    """Whether protocol ``name`` takes the public ``n_users`` parameter (its design depends on n)."""
    return name in _REGISTRY and "n_users" in _REGISTRY[name]._constraints


def register_chooser(name: str, factory: Callable[..., LocalProtocol]) -> None:
    """Register ``factory(**params)`` as the builder of the pseudo-protocol ``name`` (e.g. ``"auto"``).

    A chooser returns an instance of a registered protocol; it is not listed by
    :func:`available` (its config names the protocol it chose).
    """
    _CHOOSERS[name] = factory


def make(name: str, **params: Any) -> LocalProtocol:
    """Build a registered protocol, e.g. ``make("oue", epsilon=1.0, domain_size=1024)``.

    Names are case-insensitive (``"OUE"`` is ``"oue"``); the config keeps the registry's spelling.
    """
    if not isinstance(name, str):
        raise InvalidParameterError(
            f"The 'name' parameter of local.make must be one of {available()} or 'auto'. Got {name!r} instead."
        )
    key = name if name in _CHOOSERS or name in _REGISTRY else name.strip().lower().replace("_", "-")
    if key in _CHOOSERS:
        return _CHOOSERS[key](**params)
    if key not in _REGISTRY:
        import difflib

        close = difflib.get_close_matches(key, [*available(), *_CHOOSERS], n=1, cutoff=0.6)
        raise InvalidParameterError(
            f"The 'name' parameter of local.make must be one of {available()} or 'auto'. Got {name!r} instead"
            + (f" (did you mean {close[0]!r}?)." if close else ".")
        )
    return _REGISTRY[key](**params)


def from_config(config: dict[str, Any]) -> LocalProtocol:
    """Rebuild a protocol from :meth:`LocalProtocol.config`."""
    if not isinstance(config, dict) or "protocol" not in config:
        raise InvalidParameterError(
            f"The 'config' parameter of local.from_config must be a dict with a 'protocol' key. Got {config!r}."
        )
    params = dict(config)
    name = params.pop("protocol")
    if not isinstance(name, str):
        raise InvalidParameterError(
            f"The 'protocol' key of a config must be a protocol name, one of {available()} or 'auto'. "
            f"Got {name!r} instead."
        )
    version = params.pop("version", CONFIG_VERSION)
    if version != CONFIG_VERSION:
        raise IncompatibleStateError(
            f"Config version {version!r} of protocol {name!r} is not supported (this dpdist reads {CONFIG_VERSION})."
        )
    return make(name, **params)


def registered_class(name: str) -> type[LocalProtocol] | None:
    """The class registered under ``name`` (None if there is none)."""
    return _REGISTRY.get(name)
