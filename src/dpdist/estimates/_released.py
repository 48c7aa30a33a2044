""":class:`ReleasedDistribution`: a central release that presents itself through the distribution it releases."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ._distribution import Distribution
from ._intervals import Interval

__all__ = ["ReleasedDistribution"]


class ReleasedDistribution:
    """The result contract of a release whose estimate is the :class:`Distribution` of ``to_distribution()``.

    A mergeable release (:class:`~dpdist.central.TreeHistogram`,
    :class:`~dpdist.central.PolynomialMoments`) is the state sites merge; what it estimates
    is its distribution, so its numbers, intervals, JSON, text and figure are that
    distribution's.  A release that can bound its distribution overrides :meth:`_presented`
    to attach the band at ``level`` (post-processing: no privacy cost).
    """

    kind: ClassVar[str] = "distribution"

    def to_distribution(self) -> Distribution:  # pragma: no cover - every release implements it
        raise NotImplementedError

    def _presented(self, level: float | None) -> Distribution:
        """The distribution shown at ``level`` (``None``: without a band)."""
        return self.to_distribution()

    def summary(self) -> dict[str, float]:
        """The distribution's ``mean``, ``std`` and ``median``."""
        return self.to_distribution().summary()

    def summary_row(self) -> dict[str, float]:
        """The distribution's :meth:`~Distribution.summary_row`."""
        return self.to_distribution().summary_row()

    def needs_band(self) -> bool:
        """False: the release attaches its own band when presented at a level (:meth:`_presented`)."""
        return False

    def table(self) -> dict[str, np.ndarray]:
        """The distribution's bins (:meth:`Distribution.table`)."""
        return self.to_distribution().table()

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        return self._presented(level).intervals(level)

    def notes(self) -> list[str]:
        """The distribution's notes (:meth:`Distribution.notes`)."""
        return self.to_distribution().notes()

    def to_dict(self, level: float = 0.95) -> dict[str, Any]:
        """The JSON of the distribution (``docs/reference/results.md``), with its band at ``level`` when the release has one."""
        return self._presented(level).to_dict(level)

    def to_json(self, level: float = 0.95, **kwargs: Any) -> str:
        return self._presented(level).to_json(level, **kwargs)

    def describe(self, truth: Any = None, level: float = 0.95) -> str:
        return self._presented(level).describe(truth, level)

    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None, level: float = 0.95) -> Any:
        return self._presented(level).figure(label=label, truth=truth, xlabel=xlabel, level=level)

    def plot(self, ax: Any = None, *, level: float | None = None, **kwargs: Any) -> Any:
        """:meth:`Distribution.plot` of the distribution (with its band at ``level`` if given)."""
        return self._presented(level).plot(ax, **kwargs)

    def as_distribution(self, bounds: tuple[float, float] | None = None) -> Distribution:
        return self.to_distribution().as_distribution(bounds)
