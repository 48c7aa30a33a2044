"""The result contract :class:`Estimate` (the part every result shares is :class:`~._presented.Presented`).

A caller (the CLI, the service, the demo, a notebook) reports any result through this
contract without asking which one it holds: its headline numbers (``summary``), its
columns (``table``), its intervals, its JSON (``to_dict`` / ``to_json``, the schema of
``docs/reference/results.md``), its text (``describe``), its figure and its view as a distribution.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._guarantee import PrivacyGuarantee
from ._distribution import Distribution
from ._intervals import Interval

__all__ = ["Estimate"]


@runtime_checkable
class Estimate(Protocol):
    """What every ``estimate`` returns: the result contract callers rely on.

    Attributes
    ----------
    kind : str
        ``"frequency"``, ``"heavy_hitters"``, ``"distribution"``, ``"mean"``,
        ``"mean_variance"``, ``"quantiles"``, ``"ranges"`` (and the multi-attribute
        ``"multi"``, ``"marginals"``): which fields its JSON holds.
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
        Its JSON form (``docs/reference/results.md``): what the service returns and
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
