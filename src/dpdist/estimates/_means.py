""":class:`MeanEstimate` (the mean of the users' values) and :class:`MeanVarianceEstimate` (mean and variance)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._guarantee import PrivacyGuarantee, parallel
from .._documents import read_part
from .._validation import validate_params
from ._presented import Presented
from ._reading import Header, numbers
from ._drawing import axes, pyplot
from ._intervals import TRUTH, ConfidenceInterval, Interval, check_level, json_value, normal_quantile, percent
from ._text import limits, pick, text_table

__all__ = ["MeanEstimate", "MeanVarianceEstimate", "draw_mean", "mean_figure"]


@dataclass(frozen=True)
class MeanEstimate(Presented):
    """An unbiased estimate of the mean of the users' values.

    Attributes
    ----------
    mean : float
        The estimate, in the units of ``bounds`` (not clipped into them).
    variance : float
        Estimated variance of ``mean`` (sample variance of the decoded reports / n).
    n : int
        Number of reports.
    bounds : (float, float)
        Range of the values.
    epsilon : float
    method : str
        Registry name of the protocol.
    guarantee : PrivacyGuarantee or None
        The privacy guarantee of the reports (the protocol's ``guarantee``).
    """

    kind: ClassVar[str] = "mean"

    mean: float
    variance: float
    n: int
    bounds: tuple
    epsilon: float
    method: str
    details: dict = field(default_factory=dict, repr=False)
    guarantee: PrivacyGuarantee | None = None

    @property
    def standard_error(self) -> float:
        return math.sqrt(self.variance)

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Normal-approximation interval ``mean +- z * standard_error``."""
        level = check_level(level, "MeanEstimate.confidence_interval")
        half = normal_quantile(level) * self.standard_error
        return ConfidenceInterval(self.mean - half, self.mean + half)

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        """:meth:`confidence_interval` of the mean."""
        low, high = self.confidence_interval(level)
        return (Interval("mean", float(self.mean), low, high, level,
                         "normal approximation with the sample variance of the decoded reports"),)

    def summary(self) -> dict[str, float]:
        """``mean`` and its ``standard_error``."""
        return {"mean": float(self.mean), "standard_error": self.standard_error}

    def table(self) -> dict[str, np.ndarray]:
        """One row: ``mean``, ``standard_error``."""
        return {name: np.array([value]) for name, value in self.summary().items()}

    def _json_fields(self, level: float) -> dict[str, Any]:
        low, high = self.confidence_interval(level)
        return {
            "mean": json_value(self.mean),
            "standard_error": json_value(self.standard_error),
            "bounds": json_value(self.bounds),
            "band": {"level": level, "low": json_value(low), "high": json_value(high)},
        }

    @classmethod
    def _from_document(cls, document: dict[str, Any], header: Header) -> "MeanEstimate":
        """The estimate of a checked document (:meth:`Presented.from_dict`): its variance from the standard error."""
        bounds = numbers(document, "bounds", header)
        error = document["standard_error"]
        return cls(_number(document["mean"]), math.inf if error is None else float(error) ** 2, header.n,  # type: ignore[arg-type]
                   tuple(bounds.tolist()), header.epsilon, header.method, header.details(),  # type: ignore[arg-type]
                   header.guarantee)

    @classmethod
    def _document_lines(cls, document: dict[str, Any], intervals: list[dict], level: str) -> list[str]:
        """The mean with its fixed-n and anytime interval."""
        return text_table([("mean", document["mean"], limits(pick(intervals, "mean", False)),
                            limits(pick(intervals, "mean", True)))], level, "every look")

    @validate_params({"truth": TRUTH})
    def describe(self, truth: Any = None, level: float = 0.95) -> str:
        """The mean beside the mean of the true values ``truth`` (when given), and its interval at ``level``."""
        low, high = self.confidence_interval(level)
        samples = truth
        true = "" if samples is None else f"   (true {np.mean(samples):.6g})"
        return (f"  estimated mean     {self.mean:.6g}{true}\n"
                f"  {percent(level) + ' interval':<18} [{low:.6g}, {high:.6g}]")

    @validate_params({"truth": TRUTH})
    def plot(self, ax: Any = None, *, level: float = 0.95, truth: Any = None, **kwargs: Any) -> Any:
        """The mean with its ``level`` interval on the axis of ``bounds``, the true values' mean as a line."""
        return draw_mean(self, ax, level=level, truth=truth, **kwargs)

    @validate_params({"truth": TRUTH})
    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None, level: float = 0.95) -> Any:
        """:meth:`plot` on a figure of its own."""
        return mean_figure(self, label=label, truth=truth, xlabel=xlabel, level=level)


@dataclass(frozen=True)
class MeanVarianceEstimate(Presented):
    r"""Mean and variance by the two-phase method of paper 003 sec. 6.3.

    Attributes
    ----------
    mean : float
        Phase-1 estimate of the mean (from ``mean_estimate.n`` users).
    var : float
        Phase-2 estimate of :math:`E[(x - c)^2]` around the broadcast centre
        :math:`c` (the phase-1 mean clipped into bounds).  It estimates
        :math:`\sigma^2 + (\mu - c)^2`: the paper's estimator, which is biased up by
        the squared error of phase 1; it may be negative for small samples.
    center : float
        The centre :math:`c` broadcast to the phase-2 users.
    mean_estimate, deviation_estimate : MeanEstimate
        The two phases' estimates (the second over squared deviations, with
        bounds ``(0, max(hi - c, c - lo)**2)``).
    """

    kind: ClassVar[str] = "mean_variance"

    mean: float
    var: float
    center: float
    mean_estimate: MeanEstimate
    deviation_estimate: MeanEstimate

    @property
    def n(self) -> int:
        return self.mean_estimate.n + self.deviation_estimate.n

    @property
    def epsilon(self) -> float:
        return self.mean_estimate.epsilon

    @property
    def guarantee(self) -> PrivacyGuarantee | None:
        """Parallel composition: the two phases ask disjoint groups of users."""
        first, second = self.mean_estimate.guarantee, self.deviation_estimate.guarantee
        return None if first is None or second is None else parallel([first, second])

    @property
    def method(self) -> str:
        return self.mean_estimate.method

    @property
    def mean_standard_error(self) -> float:
        return self.mean_estimate.standard_error

    @property
    def var_standard_error(self) -> float:
        """Standard error of ``var`` from phase-2 noise only (excludes the phase-1 bias term)."""
        return self.deviation_estimate.standard_error

    @property
    def details(self) -> dict:
        """The broadcast centre and the users of each phase."""
        return {"center": self.center, "n_mean": self.mean_estimate.n, "n_deviation": self.deviation_estimate.n}

    def summary(self) -> dict[str, float]:
        """``mean``, ``var`` and their standard errors."""
        return {
            "mean": float(self.mean),
            "var": float(self.var),
            "mean_standard_error": self.mean_standard_error,
            "var_standard_error": self.var_standard_error,
        }

    def table(self) -> dict[str, np.ndarray]:
        """One row: the :meth:`summary`."""
        return {name: np.array([value]) for name, value in self.summary().items()}

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        """The mean's interval (phase 1); none for ``var``, whose estimator is biased up by phase 1's error."""
        return self.mean_estimate.intervals(level)

    def _json_fields(self, level: float) -> dict[str, Any]:
        low, high = self.mean_estimate.confidence_interval(level)
        return {
            "mean": json_value(self.mean),
            "var": json_value(self.var),
            "mean_standard_error": json_value(self.mean_standard_error),
            "var_standard_error": json_value(self.var_standard_error),
            "center": json_value(self.center),
            "band": {"level": level, "low": json_value(low), "high": json_value(high)},
            "phases": {"mean": self.mean_estimate.to_dict(level), "deviation": self.deviation_estimate.to_dict(level)},
        }

    @classmethod
    def _from_document(cls, document: dict[str, Any], header: Header) -> "MeanVarianceEstimate":
        """The estimate of a checked document (:meth:`Presented.from_dict`): its two phases from ``phases``."""
        phases = {name: read_part(MeanEstimate.from_dict, document["phases"][name], header.owner, f"phases.{name}")
                  for name in ("mean", "deviation")}
        return cls(_number(document["mean"]), _number(document["var"]), _number(document["center"]),
                   phases["mean"], phases["deviation"])

    @classmethod
    def _document_lines(cls, document: dict[str, Any], intervals: list[dict], level: str) -> list[str]:
        """The mean with its fixed-n and anytime interval, then the variance."""
        return text_table([("mean", document["mean"], limits(pick(intervals, "mean", False)),
                            limits(pick(intervals, "mean", True))), ("variance", document["var"], "-", "-")],
                          level, "every look")

    @validate_params({"truth": TRUTH})
    def describe(self, truth: Any = None, level: float = 0.95) -> str:
        """The mean (:meth:`MeanEstimate.describe`) and the variance, beside those of ``truth`` when given."""
        true = "" if truth is None else f"   (true {np.var(truth):.6g})"
        return f"{self.mean_estimate.describe(truth, level)}\n  estimated var      {self.var:.6g}{true}"

    def plot(self, ax: Any = None, *, level: float = 0.95, truth: Any = None, **kwargs: Any) -> Any:
        """The mean with its interval (:meth:`MeanEstimate.plot`)."""
        return self.mean_estimate.plot(ax, level=level, truth=truth, **kwargs)

    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None, level: float = 0.95) -> Any:
        """The mean with its interval (:meth:`MeanEstimate.figure`)."""
        return self.mean_estimate.figure(label=label, truth=truth, xlabel=xlabel, level=level)


def _number(value: Any) -> float:
    """A number of a document (``null``: not finite, NaN)."""
    return math.nan if value is None else float(value)


def draw_mean(estimate: MeanEstimate, ax: Any = None, *, level: float = 0.95, truth: Any = None, **kwargs: Any) -> Any:
    """The mean as a point with its ``level`` interval on the axis of its bounds; the true values' mean as a line."""
    ax = axes(ax, (6, 1.8))
    low, high = estimate.confidence_interval(level)
    label = kwargs.pop("label", estimate.method)
    ax.errorbar([estimate.mean], [0.0], xerr=[[estimate.mean - low], [high - estimate.mean]], fmt="o", capsize=4,
                color=kwargs.pop("color", "C0"), label=f"{label}: mean, {percent(level)} interval", **kwargs)
    if truth is not None:
        ax.axvline(float(np.mean(truth)), color="0.3", ls="--", label="true mean")
    lo, hi = estimate.bounds
    ax.set_xlim(min(lo, low), max(hi, high))
    ax.set_yticks([])
    ax.legend(fontsize=8)
    return ax


def mean_figure(
    estimate: MeanEstimate, *, label: str | None = None, truth: Any = None, xlabel: str | None = None, level: float = 0.95
) -> Any:
    """:func:`draw_mean` on a figure of its own."""
    figure, ax = pyplot().subplots(figsize=(6, 1.8))
    draw_mean(estimate, ax, level=level, truth=truth, label=label or estimate.method)
    ax.set_xlabel(xlabel or "value")
    figure.tight_layout()
    return figure
