"""The public schema of a multi-attribute record: its attributes, each categorical or numerical.

An attribute is given as a JSON-safe dict, so a protocol's config, a report
file's header and a JavaScript client all read the same schema:

* categorical: ``{"name": "country", "domain_size": 5}`` or
  ``{"name": "country", "labels": ["fr", "de", ...]}`` (item ``i`` is ``labels[i]``);
* numerical: ``{"name": "age", "bounds": [0, 100]}``;

and optionally ``"protocol"`` (the registered protocol that randomizes this
attribute: a categorical frequency oracle or a numerical protocol) and
``"options"`` (that protocol's further parameters, e.g. ``{"bins": 16}``).
:class:`Attributes` is the constraint of the ``attributes`` parameter; it
returns the schema normalized (a tuple of dicts with every key present), and
:class:`Attribute` is one entry as a value.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

from ..._validation import Bounds, Constraint, Labels

__all__ = ["MAX_ATTRIBUTES", "Attribute", "Attributes"]

#: The most attributes one record may have (the sampled attribute's index of SMP is one byte).
MAX_ATTRIBUTES = 64
#: The longest attribute name (a report field, a Parquet column, a CSV header).
MAX_NAME_LENGTH = 64
_KEYS = {"name", "domain_size", "labels", "bounds", "protocol", "options"}
_RESERVED = {"attribute", "payload"}  # the fields of SMP's reports


def _check_name(name) -> str:
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME_LENGTH or name != name.strip():
        raise ValueError
    if any(ord(character) < 32 or ord(character) == 127 for character in name) or name in _RESERVED:
        raise ValueError
    return name


def _check_options(options) -> dict[str, Any]:
    if options is None:
        return {}
    if not isinstance(options, dict) or not all(isinstance(key, str) for key in options):
        raise ValueError
    if set(options) & {"epsilon", "domain_size", "labels", "bounds"}:
        raise ValueError  # the schema and the protocol's budget set these
    return {key: list(value) if isinstance(value, tuple) else value for key, value in sorted(options.items())}


@dataclass(frozen=True)
class Attribute:
    """One attribute of a record: categorical (``domain_size``, optional ``labels``) or numerical (``bounds``).

    ``protocol`` and ``options`` name the protocol that randomizes it (``None``:
    the multi-attribute protocol's default for this attribute).
    """

    name: str
    domain_size: int | None = None
    labels: tuple[str, ...] | None = None
    bounds: tuple[float, float] | None = None
    protocol: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def categorical(self) -> bool:
        return self.bounds is None

    @property
    def size(self) -> int:
        """The number of items of a categorical attribute (its ``domain_size``)."""
        if self.domain_size is None:
            raise TypeError(f"attribute {self.name!r} is numerical: it has bounds, not items")
        return self.domain_size

    @property
    def interval(self) -> tuple[float, float]:
        """The bounds of a numerical attribute."""
        if self.bounds is None:
            raise TypeError(f"attribute {self.name!r} is categorical: it has items, not bounds")
        return self.bounds

    @property
    def kind(self) -> str:
        """``"categorical"`` or ``"numerical"``."""
        return "categorical" if self.categorical else "numerical"

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> "Attribute":
        """The attribute of a (normalized) schema entry."""
        labels = spec.get("labels")
        bounds = spec.get("bounds")
        return cls(
            name=spec["name"],
            domain_size=spec.get("domain_size"),
            labels=None if labels is None else tuple(labels),
            bounds=None if bounds is None else (float(bounds[0]), float(bounds[1])),
            protocol=spec.get("protocol"),
            options=dict(spec.get("options") or {}),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON-safe schema entry (only the keys that apply)."""
        out: dict[str, Any] = {"name": self.name}
        if self.categorical:
            out["domain_size"] = self.domain_size
            if self.labels is not None:
                out["labels"] = list(self.labels)
        else:
            out["bounds"] = list(self.interval)
        out["protocol"] = self.protocol
        out["options"] = dict(self.options)
        return out

    def with_protocol(self, protocol: str, options: dict[str, Any]) -> "Attribute":
        return Attribute(self.name, self.domain_size, self.labels, self.bounds, protocol, dict(options))

    def domain_text(self) -> str:
        """``"5 items"``, ``"labels fr, de, ..."`` or ``"[0, 100]"`` (for messages and tables)."""
        if not self.categorical:
            return f"[{self.interval[0]:g}, {self.interval[1]:g}]"
        if self.labels is not None:
            shown = ", ".join(self.labels[:3]) + (", ..." if len(self.labels) > 3 else "")
            return f"{self.domain_size} labels ({shown})"
        return f"{self.domain_size} items"


def _entry(spec) -> dict[str, Any]:
    if not isinstance(spec, dict) or not set(spec) <= _KEYS or "name" not in spec:
        raise ValueError
    name = _check_name(spec["name"])
    categorical = "domain_size" in spec or "labels" in spec
    if categorical == ("bounds" in spec):
        raise ValueError  # exactly one of a categorical domain and numerical bounds
    protocol = spec.get("protocol")
    if protocol is not None and (not isinstance(protocol, str) or not protocol):
        raise ValueError
    options = _check_options(spec.get("options"))
    if not categorical:
        lo, hi = Bounds().check(spec["bounds"])
        return Attribute(name, bounds=(lo, hi), protocol=protocol, options=options).to_dict()
    labels = spec.get("labels")
    if labels is not None:
        labels = Labels().check(labels)
    size = spec.get("domain_size", None if labels is None else len(labels))
    if isinstance(size, float) and size.is_integer():
        size = int(size)
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or not 2 <= int(size) <= 2**31 - 1:
        raise ValueError
    if labels is not None and len(labels) != size:
        raise ValueError
    return Attribute(name, int(size), labels, protocol=protocol, options=options).to_dict()


@dataclass(frozen=True)
class Attributes(Constraint):
    """The schema of a record: ``low`` .. ``high`` attributes with distinct names (see the module docstring); every one
    of ``kind`` (``"categorical"`` or ``"numerical"``) when given, and without 'protocol' or 'options' when ``bare``
    (a protocol that sets every attribute's oracle itself)."""

    low: int = 1
    high: int = MAX_ATTRIBUTES
    kind: str | None = None
    bare: bool = False

    def check(self, value: Any) -> tuple[dict[str, Any], ...]:
        if isinstance(value, (str, bytes, dict)) or not isinstance(value, (list, tuple)):
            raise ValueError
        entries = tuple(_entry(spec) for spec in value)
        if not self.low <= len(entries) <= self.high:
            raise ValueError
        if len({entry["name"] for entry in entries}) != len(entries):
            raise ValueError
        if self.kind is not None and any(("bounds" in entry) != (self.kind == "numerical") for entry in entries):
            raise ValueError
        if self.bare and any(entry.get("protocol") is not None or entry.get("options") for entry in entries):
            raise ValueError
        return entries

    def describe(self) -> str:
        keys = {
            "categorical": "'domain_size' (an int >= 2) and/or 'labels' (distinct non-empty strings)",
            "numerical": "'bounds' [lo, hi]",
            None: "either 'domain_size' (an int >= 2) and/or 'labels' (distinct non-empty strings) for a categorical "
                  "attribute or 'bounds' [lo, hi] for a numerical one",
        }[self.kind]
        optional = ("no 'protocol' or 'options' (this protocol sets each attribute's oracle)" if self.bare else
                    "optionally 'protocol' (a registered protocol name) and 'options' (a dict of its other parameters)")
        return (
            f"a list of {self.low} to {self.high} {'' if self.kind is None else self.kind + ' '}attributes with "
            f"distinct names, each a dict with a 'name' (1 to {MAX_NAME_LENGTH} printable characters, not "
            f"{sorted(_RESERVED)}) and {keys}; {optional}"
        )

    def invalid_examples(self) -> list:
        categorical = {"name": "a", "domain_size": 3}
        return [
            [],
            "attributes",
            [{"name": "a"}],
            [{"name": "a", "domain_size": 1}],
            [{"name": "a", "domain_size": 3, "bounds": [0, 1]}],
            [{"name": "a", "bounds": [1, 0]}],
            [{"name": "", "domain_size": 3}],
            [categorical, categorical],
            [{"name": "a", "domain_size": 3, "colour": "red"}],
            [{"name": "a", "domain_size": 3, "options": {"epsilon": 1.0}}],
            [{"name": "a", "labels": ["x", "y"], "domain_size": 3}],
            [{"name": "a", "bounds": [0, math.inf]}],
            [{"name": f"a{i}", "domain_size": 2} for i in range(self.high + 1)],
            *([[{"name": f"a{i}", "bounds": [0, 1]} for i in range(self.low - 1)]] if self.low > 1 else []),
            *([[{"name": "a", "domain_size": 3}, {"name": "b", "bounds": [0, 1]}]] if self.kind is not None else []),
            *([[{"name": f"a{i}", **({"bounds": [0, 1]} if self.kind == "numerical" else {"domain_size": 3}),
                 "protocol": "grr"} for i in range(max(self.low, 2))]] if self.bare else []),
        ]
