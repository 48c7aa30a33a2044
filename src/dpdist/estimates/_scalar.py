""":class:`ScalarRelease`: a private sum or mean of one column (per record or per person), with its interval.

Made by :func:`dpdist.central.sum` and :func:`dpdist.central.mean`; one per group of a group-by
(:func:`dpdist.frame.group_release`, :func:`dpdist.query`).
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

__all__ = ["ScalarRelease"]


@dataclass(frozen=True)
class ScalarRelease(Presented):
    """A private sum or mean of a column (the result contract :class:`dpdist.estimates.Estimate`).

    Attributes
    ----------
    statistic : {"sum", "mean", "variance"}
        Which statistic ``value`` is.
    value : float
        The noisy statistic of the values clipped to the bounds (of the rows kept per person with a privacy unit).
    standard_error : float
        Its noise's standard deviation (public for a sum; for a mean, the delta method at the released count).
    low, high : float
        The interval at ``level`` that covers the statistic of the clipped rows released with probability at least
        ``level`` (the discrete Laplace noise's exact tails; a mean's: a union bound over its sum and its count).
    level : float
    method : str
    epsilon : float
    details : dict
    guarantee : PrivacyGuarantee or None
    """

    kind: ClassVar[str] = "scalar"

    statistic: str
    value: float
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
        """``None``: the number of records is private."""
        return None

    def summary(self) -> dict[str, float]:
        """The statistic and its ``standard_error``."""
        return {self.statistic: float(self.value), "standard_error": float(self.standard_error)}

    def summary_row(self) -> dict[str, float]:
        """The statistic followed by its interval (``"<statistic> low"``, ``"<statistic> high"``, ``level``)."""
        return {self.statistic: float(self.value), f"{self.statistic} low": float(self.low),
                f"{self.statistic} high": float(self.high), "level": float(self.level)}

    def table(self) -> dict[str, np.ndarray]:
        """One row: the statistic, ``standard_error``, ``low``, ``high``."""
        return {name: np.array([value]) for name, value in
                ((self.statistic, self.value), ("standard_error", self.standard_error), ("low", self.low),
                 ("high", self.high))}

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        """The interval released with the statistic, at its own level."""
        check_level(level, "ScalarRelease.intervals")
        method = self.details.get("intervals", "the discrete Laplace noise's exact tails (covers the statistic of the "
                                                "clipped rows)")
        return (Interval(self.statistic, float(self.value), float(self.low), float(self.high), self.level, method),)

    def _json_fields(self, level: float) -> dict[str, Any]:
        return {"statistic": self.statistic, "value": json_value(self.value),
                "standard_error": json_value(self.standard_error), "low": json_value(self.low),
                "high": json_value(self.high), "level": self.level}

    @classmethod
    def _from_document(cls, document: dict[str, Any], header: Header) -> "ScalarRelease":
        """The release of a checked document (:meth:`Presented.from_dict`)."""
        return cls(str(document["statistic"]), float(document["value"]), float(document["standard_error"]),
                   float(document["low"]), float(document["high"]), float(document["level"]),
                   header.method,  # type: ignore[arg-type]
                   header.epsilon, header.details(), header.guarantee)  # type: ignore[arg-type]

    @classmethod
    def _document_lines(cls, document: dict[str, Any], intervals: list[dict], level: str) -> list[str]:
        """The statistic with the interval released with it."""
        return text_table([(document["statistic"], document["value"],
                            limits({"low": document["low"], "high": document["high"]}), "-")], level, "none")

    @validate_params({"truth": TRUTH})
    def describe(self, truth: Any = None, level: float = 0.95) -> str:
        """The statistic and its interval, beside the statistic of the values ``truth`` when given."""
        true = "" if truth is None else f"   (true {float(getattr(np, self.statistic)(truth)):.6g})"
        return (f"  {self.statistic:<18} {self.value:.6g}{true}\n"
                f"  {percent(self.level) + ' interval':<18} [{self.low:.6g}, {self.high:.6g}]")

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """The statistic as a point with its interval as a segment."""
        axis = axes(ax, (3, 4))
        axis.errorbar([0], [self.value], yerr=[[self.value - self.low], [self.high - self.value]], fmt="o", capsize=4,
                      **kwargs)
        axis.set_xticks([])
        axis.set_ylabel(self.statistic)
        return axis

    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None,
               level: float = 0.95) -> Any:
        """:meth:`plot` on a figure of its own."""
        figure, axis = pyplot().subplots(figsize=(3, 4))
        self.plot(axis, label=label)
        if label:
            axis.set_title(label)
        return figure
