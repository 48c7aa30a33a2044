"""The result contract :class:`Estimate`, and :class:`Presented`, the part of it every result shares.

A caller (the CLI, the service, the demo, a notebook) reports any result through this
contract without asking which one it holds: its headline numbers (``summary``), its
columns (``table``), its intervals, its JSON (``to_dict`` / ``to_json``, the schema of
``docs/results.md``), its text (``describe``), its figure and its view as a distribution.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from ..privacy import PrivacyGuarantee
from ._intervals import Interval, check_level, json_value

if TYPE_CHECKING:
    from ._distribution import Distribution

__all__ = ["Estimate", "Presented", "SCHEMA"]

#: The ``schema`` value of every estimate's JSON (bumped when a field changes meaning or goes).
SCHEMA = "dpdist.estimate/1"


@runtime_checkable
class Estimate(Protocol):
    """What every ``estimate`` returns: the result contract callers rely on.

    Attributes
    ----------
    kind : str
        ``"frequency"``, ``"heavy_hitters"``, ``"distribution"``, ``"mean"``,
        ``"mean_variance"`` or ``"quantiles"``: which fields its JSON holds.
    method : str or None
        What produced the estimate (a protocol's registry name or a central method).
    n : int or None
        Reports or records behind it (``None`` where the count is itself private).
    epsilon : float or None
    guarantee : PrivacyGuarantee or None
        The privacy guarantee, as a value (:mod:`dpdist.privacy`).
    details : dict
        Method-specific extras (budget split, convergence trace, ...).

    Methods
    -------
    summary() -> dict[str, float]
        The headline numbers, named, with their standard errors where the
        estimator has them (what a one-screen report prints).
    table() -> dict[str, ndarray]
        The whole estimate as named, equal-length columns (what a CSV holds).
    notes() -> list of str
        What a reader must know to read it, in sentences (usually none), e.g. CP's
        estimate of an aggregate in which no item stands out of the noise.
    intervals(level) -> tuple of Interval
        Its confidence intervals and bands (none where the estimator has none);
        ``level`` sets those computed on request, those made with the estimate
        (a bootstrap band, a release's quantile intervals) keep their own.
    to_dict(level) -> dict
        Its JSON form (``docs/results.md``): what the service returns and
        ``to_json`` writes.
    to_json(level, **kwargs) -> str
    describe(truth=None, level=0.95) -> str
        Its headline numbers and intervals as text, each beside the true value when
        ``truth`` is given (what ``dpdist estimate`` prints).
    figure(label=None, truth=None, xlabel=None, level=0.95) -> matplotlib Figure
        Its standard figure (what ``--plot`` and the service's ``estimate.png`` draw).
    plot(ax=None, ...) -> matplotlib Axes
        The same drawn on one axes.
    as_distribution(bounds=None) -> Distribution or None
        The estimate as a distribution on numbers (``None`` when it estimates no
        distribution, e.g. a mean).
    """

    @property
    def kind(self) -> str: ...

    @property
    def method(self) -> str | None: ...

    @property
    def n(self) -> int | None: ...

    @property
    def epsilon(self) -> float | None: ...

    @property
    def guarantee(self) -> PrivacyGuarantee | None: ...

    @property
    def details(self) -> dict: ...

    def summary(self) -> dict[str, float]: ...

    def table(self) -> dict[str, np.ndarray]: ...

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]: ...

    def notes(self) -> list[str]: ...

    def to_dict(self, level: float = 0.95) -> dict[str, Any]: ...

    def to_json(self, level: float = 0.95, **kwargs: Any) -> str: ...

    def describe(self, truth: Any = None, level: float = 0.95) -> str: ...

    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None,
               level: float = 0.95) -> Any: ...

    def plot(self, ax: Any = None, **kwargs: Any) -> Any: ...

    def as_distribution(self, bounds: tuple[float, float] | None = None) -> Distribution | None: ...


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
        ``summary``, ``intervals`` (at ``level`` where they are computed on request), ``notes`` (:meth:`notes`) and
        the fields of its kind.

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
            "notes": self.notes(),
        }
        document.update(self._json_fields(level))
        return document

    def notes(self) -> list[str]:
        """What a reader must know to read the estimate, in sentences (``details["notes"]``; ``[]`` mostly): e.g.
        that CP found no item above the noise and its estimate is the uniform distribution (issue 45 item 10)."""
        details = getattr(self, "details", None) or {}
        return [str(note) for note in details.get("notes", ())]

    def to_json(self, level: float = 0.95, **kwargs: Any) -> str:
        """:meth:`to_dict` as JSON text (``kwargs`` go to :func:`json.dumps`, e.g. ``indent=2``)."""
        return json.dumps(self.to_dict(level), **kwargs)

    def as_distribution(self, bounds: tuple[float, float] | None = None) -> Distribution | None:
        """``None``: this estimate is no distribution on numbers."""
        return None
