""":class:`CountRelease`: a private count of records (or of persons' rows) with its exact interval.

Made by :func:`dpdist.central.count` (a count plus exact discrete Laplace noise); one per group of a
group-by (:func:`dpdist.frame.group_release`), where the group's key may itself be private.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._guarantee import PrivacyGuarantee
from .._validation import validate_params
from ._drawing import axes, pyplot
from ._intervals import TRUTH, Interval, check_level, json_value, percent
from ._presented import Presented
from ._reading import Header
from ._text import limits, text_table

__all__ = ["CountRelease"]


@dataclass(frozen=True)
class CountRelease(Presented):
    """A private count (the result contract :class:`dpdist.estimates.Estimate`).

    Attributes
    ----------
    count : float
        The noisy count (an integer, as a float): unbiased for the count of the records released.
    standard_error : float
        The noise's standard deviation (public: a function of epsilon and the sensitivity).
    low, high : float
        The interval at ``level`` that covers the count released with probability at least ``level``, exactly (the
        discrete Laplace law's tails).
    level : float
    method : str
    epsilon : float
    details : dict
    guarantee : PrivacyGuarantee or None
    """

    kind: ClassVar[str] = "count"

    count: float
    standard_error: float
    low: float
    high: float
    level: float
    method: str
    epsilon: float
    details: dict[str, Any] = field(default_factory=dict)
    guarantee: PrivacyGuarantee | None = None

    @property
    def n(self) -> None:
        """``None``: the true count is what is private (the release is its noisy value)."""
        return None

    def summary(self) -> dict[str, float]:
        """``count`` and its ``standard_error``."""
        return {"count": float(self.count), "standard_error": float(self.standard_error)}

    def summary_row(self) -> dict[str, float]:
        """``count`` followed by its interval (``"count low"``, ``"count high"``, ``level``)."""
        return {"count": float(self.count), "count low": float(self.low), "count high": float(self.high),
                "level": float(self.level)}

    def table(self) -> dict[str, np.ndarray]:
        """One row: ``count``, ``standard_error``, ``low``, ``high``."""
        return {name: np.array([value]) for name, value in
                (("count", self.count), ("standard_error", self.standard_error), ("low", self.low), ("high", self.high))}

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        """The interval released with the count, at its own level."""
        check_level(level, "CountRelease.intervals")
        return (Interval("count", float(self.count), float(self.low), float(self.high), self.level,
                         "the discrete Laplace noise's exact tails (covers the count released)"),)

    def _json_fields(self, level: float) -> dict[str, Any]:
        return {"count": json_value(self.count), "standard_error": json_value(self.standard_error),
                "low": json_value(self.low), "high": json_value(self.high), "level": self.level}

    @classmethod
    def _from_document(cls, document: dict[str, Any], header: Header) -> "CountRelease":
        """The release of a checked document (:meth:`Presented.from_dict`)."""
        return cls(float(document["count"]), float(document["standard_error"]), float(document["low"]),
                   float(document["high"]), float(document["level"]), header.method,  # type: ignore[arg-type]
                   header.epsilon, header.details(), header.guarantee)  # type: ignore[arg-type]

    @classmethod
    def _document_lines(cls, document: dict[str, Any], intervals: list[dict], level: str) -> list[str]:
        """The count with the interval released with it."""
        return text_table([("count", document["count"], limits({"low": document["low"], "high": document["high"]}),
                            "-")], level, "none")

    @validate_params({"truth": TRUTH})
    def describe(self, truth: Any = None, level: float = 0.95) -> str:
        """The count and its interval, beside the number of true values ``truth`` when given."""
        true = "" if truth is None else f"   (true {truth.size})"
        return (f"  count              {self.count:.6g}{true}\n"
                f"  {percent(self.level) + ' interval':<18} [{self.low:.6g}, {self.high:.6g}]")

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """The count as a point with its interval as a segment."""
        axis = axes(ax, (3, 4))
        axis.errorbar([0], [self.count], yerr=[[self.count - self.low], [self.high - self.count]], fmt="o", capsize=4,
                      **kwargs)
        axis.set_xticks([])
        axis.set_ylabel("count")
        return axis

    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None, level: float = 0.95) -> Any:
        """:meth:`plot` on a figure of its own."""
        figure, axis = pyplot().subplots(figsize=(3, 4))
        self.plot(axis, label=label)
        if label:
            axis.set_title(label)
        return figure
