""":class:`QuantileRelease`: private quantiles with their intervals, as every quantile method releases them.

Made by :func:`dpdist.central.quantiles` (tree, AQ, JointExp, slice) and by the local adaptive
quantile search (:meth:`dpdist.local.adaptive_quantiles.AdaptiveQuantiles.estimate`);
:func:`check_q` is the one check of the probabilities both ask for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..errors import InvalidParameterError
from .._guarantee import PrivacyGuarantee
from .._validation import RealArray, check_param, validate_params
from ._distribution import Distribution
from ._presented import Presented
from ._reading import Header, numbers
from ._drawing import axes, pyplot
from ._intervals import TRUTH, Interval, check_level, json_value, percent, row_with_limits
from ._text import limits, text_table

__all__ = ["QuantileRelease", "check_q", "draw_quantiles", "quantiles_figure"]


@dataclass(frozen=True)
class QuantileRelease(Presented):
    """Private quantiles with their intervals (the result contract :class:`dpdist.estimates.Estimate`).

    Attributes
    ----------
    q : ndarray
        The requested probabilities.
    values : ndarray
        The released quantiles, non-decreasing in ``q``.
    low, high : ndarray or None
        Interval of each quantile at ``level`` (``None`` where the method gives none).
    level : float
    method : str
    epsilon : float
    details : dict
    """

    kind: ClassVar[str] = "quantiles"

    q: np.ndarray
    values: np.ndarray
    low: np.ndarray | None
    high: np.ndarray | None
    level: float
    method: str
    epsilon: float
    details: dict[str, Any] = field(default_factory=dict)
    guarantee: PrivacyGuarantee | None = None

    @property
    def n(self) -> None:
        """``None``: the count of records is not released (it is private under add/remove neighbours)."""
        return None

    def summary(self) -> dict[str, float]:
        """Each released quantile, named ``"<q> quantile"``."""
        return {f"{probability:g} quantile": float(value) for probability, value in zip(self.q, self.values)}

    def summary_row(self) -> dict[str, float]:
        """Each released quantile followed by its interval (``"<q> quantile low"``, ``"... high"``) and the
        intervals' ``level``, where the method releases intervals."""
        limits = {} if self.low is None or self.high is None else {
            f"{probability:g} quantile": (low, high) for probability, low, high in zip(self.q, self.low, self.high)}
        return row_with_limits(self.summary(), limits, self.level)

    def table(self) -> dict[str, np.ndarray]:
        """Columns ``q``, ``value``, ``low``, ``high`` (NaN where the method gives no interval)."""
        missing = np.full(self.q.shape, np.nan)
        return {
            "q": self.q,
            "value": self.values,
            "low": missing if self.low is None else self.low,
            "high": missing if self.high is None else self.high,
        }

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        """The intervals released with the quantiles, at their own ``level`` (none for ``aq`` and ``jointexp``)."""
        check_level(level, "QuantileRelease.intervals")
        if self.low is None or self.high is None:
            return ()
        method = str(self.details.get("intervals", f"released by {self.method}"))
        return (Interval("quantile", self.values, self.low, self.high, self.level, method, at=self.q),)

    def _json_fields(self, level: float) -> dict[str, Any]:
        return {
            "level": self.level,
            "q": json_value(self.q),
            "values": json_value(self.values),
            "low": json_value(self.low),
            "high": json_value(self.high),
        }

    @classmethod
    def _from_document(cls, document: dict[str, Any], header: Header) -> "QuantileRelease":
        """The release of a checked document (:meth:`Presented.from_dict`); how its intervals were made from theirs."""
        details = header.details()
        if header.intervals:
            details["intervals"] = header.intervals[0]["method"]
        return cls(numbers(document, "q", header), numbers(document, "values", header), numbers(document, "low", header),
                   numbers(document, "high", header), float(document["level"]), header.method,  # type: ignore[arg-type]
                   header.epsilon, details, header.guarantee)  # type: ignore[arg-type]

    def as_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` (JSON-safe, plain floats)."""
        return self.to_dict()

    def as_distribution(self, bounds: tuple[float, float] | None = None) -> Distribution:
        """The distribution through the released quantiles (:meth:`Distribution.from_quantiles`): its CDF is ``q``
        at each released value, linear in between and to the bounds (``bounds``: the release's own by default,
        which every quantile method records in ``details["bounds"]``)."""
        if bounds is None:
            bounds = self.details.get("bounds")
        if bounds is None:
            raise InvalidParameterError(
                "The 'bounds' parameter of QuantileRelease.as_distribution is needed: this release does not record "
                "its bounds. Pass the public bounds (lo, hi) it was released on."
            )
        return Distribution.from_quantiles(self.q, self.values, bounds, method=self.method, epsilon=self.epsilon,
                                           guarantee=self.guarantee, details={"from": "quantiles", "q": self.q.tolist()})

    @classmethod
    def _document_lines(cls, document: dict[str, Any], intervals: list[dict], level: str) -> list[str]:
        """Each released quantile with the interval released with it (none is anytime-valid)."""
        interval = {"low": document["low"], "high": document["high"]} if document.get("low") is not None else None
        rows = [(f"quantile {q:g}", value, limits(interval, index), "-")
                for index, (q, value) in enumerate(zip(document["q"], document["values"]))]
        return text_table(rows, level, "none")

    @validate_params({"truth": TRUTH})
    def describe(self, truth: Any = None, level: float = 0.95) -> str:
        """One line per quantile with its interval (at the release's level: ``level`` is not used), beside the
        quantile of the true values ``truth`` when given."""
        true_values = None if truth is None else np.quantile(truth, self.q)
        lines = []
        for index, probability in enumerate(self.q):
            interval = ("   no interval" if self.low is None or self.high is None
                        else f"   {percent(self.level)} [{self.low[index]:.6g}, {self.high[index]:.6g}]")
            true = "" if true_values is None else f"   (true {true_values[index]:.6g})"
            lines.append(f"  {f'{probability:g} quantile':<18} {self.values[index]:.6g}{true}{interval}")
        return "\n".join(lines)

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """The quantiles as points at their probabilities, their intervals as segments."""
        return draw_quantiles(self, ax, **kwargs)

    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None, level: float = 0.95) -> Any:
        """:meth:`plot` on a figure of its own (``truth`` is not drawn)."""
        return quantiles_figure(self, label=label, xlabel=xlabel)


#: The probabilities of quantiles: a number or a 1-D array, strictly increasing, in (0, 1).
QUANTILE_LEVELS = RealArray("one or more probabilities strictly between 0 and 1, strictly increasing", ndims=(0, 1),
                            min_size=1, low=0.0, high=1.0, closed="neither", increasing="strictly")


def check_q(owner: str, q) -> np.ndarray:
    """``q`` as a strictly increasing float array of probabilities in (0, 1) (:data:`QUANTILE_LEVELS`), or an error
    naming ``owner``."""
    return np.atleast_1d(check_param(owner, "q", q, QUANTILE_LEVELS))


def draw_quantiles(release: QuantileRelease, ax: Any = None, **kwargs: Any) -> Any:
    """The released quantiles as points at their probabilities, their intervals (if any) as segments."""
    ax = axes(ax, (7, 4))
    label = kwargs.pop("label", "private quantiles")
    ax.scatter(release.values, release.q, color=kwargs.pop("color", "C3"), zorder=3, label=label, **kwargs)
    if release.low is not None:
        ax.hlines(release.q, release.low, release.high, color="C3", alpha=0.6,
                  label=f"{percent(release.level)} intervals")
    ax.set_ylim(0, 1)
    ax.set_ylabel("cumulative probability")
    ax.legend(loc="lower right")
    return ax


def quantiles_figure(release: QuantileRelease, *, label: str | None = None, xlabel: str | None = None) -> Any:
    """:func:`draw_quantiles` on a figure of its own."""
    figure, ax = pyplot().subplots(figsize=(7, 4))
    draw_quantiles(release, ax, label=label or f"{release.method} quantiles")
    ax.set_xlabel(xlabel or "value")
    figure.tight_layout()
    return figure
