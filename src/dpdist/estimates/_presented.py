""":class:`Presented`: the part of the result contract (:class:`~dpdist.estimates.Estimate`) every result shares.

Its JSON envelope (``to_dict`` / ``to_json``, the schema of ``docs/results.md``), no intervals
and no distribution unless the result says otherwise.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from ._intervals import Interval, check_level, json_value

__all__ = ["Presented", "SCHEMA"]

#: The ``schema`` value of every estimate's JSON (bumped when a field changes meaning or goes).
SCHEMA = "dpdist.estimate/1"


class Presented:
    """The JSON every result shares: the envelope of ``docs/results.md`` around its own fields.

    A result class sets ``kind``, implements ``intervals(level)`` (default: none) and
    ``_json_fields(level)`` (its point estimate and whatever else its JSON holds), and
    inherits :meth:`to_dict`, :meth:`to_json` and :meth:`as_distribution` (``None``).
    """

    kind: ClassVar[str]

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        """Its confidence intervals and bands (``()``: the estimator has none)."""
        check_level(level, f"{type(self).__name__}.intervals")
        return ()

    def _json_fields(self, level: float) -> dict[str, Any]:
        return {}

    def to_dict(self, level: float = 0.95) -> dict[str, Any]:
        """The JSON form (``docs/results.md``): ``schema``, ``kind``, what produced it, its guarantee,
        ``summary``, ``intervals`` (at ``level`` where they are computed on request) and the fields of its kind.

        JSON-safe: plain numbers and lists, ``null`` for a missing or non-finite value.
        """
        level = check_level(level, f"{type(self).__name__}.to_dict")
        guarantee = self.guarantee  # type: ignore[attr-defined]
        document = {
            "schema": SCHEMA,
            "kind": self.kind,
            "method": self.method,  # type: ignore[attr-defined]
            "n": json_value(self.n),  # type: ignore[attr-defined]
            "epsilon": json_value(self.epsilon),  # type: ignore[attr-defined]
            "guarantee": None if guarantee is None else guarantee.to_dict(),
            "summary": {name: json_value(value) for name, value in self.summary().items()},  # type: ignore[attr-defined]
            "intervals": [interval.to_dict() for interval in self.intervals(level)],
        }
        document.update(self._json_fields(level))
        return document

    def to_json(self, level: float = 0.95, **kwargs: Any) -> str:
        """:meth:`to_dict` as JSON text (``kwargs`` go to :func:`json.dumps`, e.g. ``indent=2``)."""
        return json.dumps(self.to_dict(level), **kwargs)

    def as_distribution(self, bounds: tuple[float, float] | None = None) -> Presented | None:
        """``None``: this estimate is no distribution on numbers (a :class:`~dpdist.Distribution`, itself a
        ``Presented``, where it is one)."""
        return None
