"""Intervals as values: :class:`Interval` (one entry of an estimate's ``intervals``), and the small helpers
every result uses for its levels and its JSON.

Every result lists its intervals with :meth:`~dpdist.estimates.Estimate.intervals`; each
:class:`Interval` says what it bounds (``quantity`` at the points ``at``), the point estimate
and the limits, the confidence ``level``, the ``method`` that made it, and what kind of
guarantee it has: at each point or at every point at once (``simultaneous``), at one fixed
number of reports or at every number of reports of a collection watched as it grows
(``anytime_valid``: a confidence sequence).  Its JSON form is what ``to_dict`` lists under
``"intervals"`` (``docs/reference/results.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, NamedTuple

import numpy as np

from .._documents import ABSENT, read_dataclass, read_numbers, read_value
from .._validation import Interval as IntervalRule, Optional, RealArray, check_param
from ..errors import InvalidParameterError

__all__ = ["Interval", "ConfidenceInterval", "check_level", "normal_quantile", "json_value", "percent", "readonly", "TRUTH",
           "row_with_limits", "share_limits", "SHARE_CLIPPED"]


class ConfidenceInterval(NamedTuple):
    """Lower and upper limits (arrays, or floats for a scalar quantity)."""

    low: Any
    high: Any


#: The confidence level of an interval or a band.
LEVEL = IntervalRule(0.0, 1.0, closed="neither")


def check_level(level: float, owner: str) -> float:
    """``level`` as a float in (0, 1) (:data:`LEVEL`), or an error naming ``owner``."""
    return check_param(owner, "level", level, LEVEL)


def normal_quantile(level: float, comparisons: int = 1) -> float:
    r"""The :math:`z` of a two-sided normal interval at ``level``, Bonferroni-corrected over ``comparisons``.

    With :math:`m` comparisons each interval is taken at :math:`1 - (1 - \text{level})/m`, so all
    :math:`m` hold at once with probability at least ``level`` (Bonferroni's inequality).
    """
    if comparisons == 1:
        return NormalDist().inv_cdf(0.5 + level / 2)
    return NormalDist().inv_cdf(1 - (1 - level) / (2 * comparisons))


#: What every interval of a share says of its limits (:func:`share_limits`).
SHARE_CLIPPED = "clipped to [0, 1], what a share can be"


def share_limits(low, high) -> ConfidenceInterval:
    """The limits of an interval of a share (a frequency, a probability) kept in [0, 1], what a share can be, and
    never of zero width.

    A normal interval :math:`c \pm h` around an unbiased estimate runs below 0 or above 1 at small n (GRR, eps 1,
    n = 60: [-1.02, -0.15] and [0.07, 1.22]).  Its limits are clipped to [0, 1], and its upper limit is at least its
    half-width :math:`h` (its lower limit at most :math:`1 - h`): an interval wholly below 0 becomes :math:`[0, h]`
    (clipped alone it was [0, 0], which claims a certainty no noisy estimate has), one reaching just above 0 stays
    :math:`h` wide at least.  Coverage never drops: a share :math:`p \le h` lies below the new upper limit, so it is
    missed only where the lower limit is above it, as before; a share :math:`p > h` is below
    :math:`\max(c + h, h)` exactly when it is below :math:`c + h`.  The interval is at least :math:`h` wide wherever
    :math:`h > 0`.  Infinite limits (no interval) stay infinite.  Every view of a share's interval (``intervals``,
    ``to_dict``, ``describe``, ``table``, the service's pages and the CLI) reads these limits: one state, one
    interval.
    """
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    finite = np.isfinite(low) & np.isfinite(high)
    half = np.where(finite, (high - low) / 2, 0.0)
    low = np.where(finite, np.clip(np.minimum(low, 1.0 - half), 0.0, 1.0), low)
    high = np.where(finite, np.clip(np.maximum(high, half), 0.0, 1.0), high)
    if low.ndim == 0:
        return ConfidenceInterval(float(low), float(high))
    return ConfidenceInterval(low, high)


#: The true values an estimate is compared with (its ``describe``, ``plot``, ``figure``): None, or a non-empty 1-D array
#: of finite numbers (shown by its shape only: the true data)
TRUTH = Optional(RealArray("a non-empty 1-D array of finite values (the true data)", ndims=(1,), min_size=1,
                           private=True))


def readonly(values) -> np.ndarray:
    """A read-only float64 copy of ``values`` (the arrays a frozen result holds)."""
    array = np.array(values, dtype=np.float64)
    array.setflags(write=False)
    return array


def percent(level: float) -> str:
    """``0.95`` as ``"95%"`` (``0.975`` as ``"97.5%"``)."""
    return f"{round(level * 100, 6):g}%"


def json_value(value) -> Any:
    """JSON-safe form of a number or an array: lists of numbers, integers kept, non-finite floats as ``None``."""
    if value is None or isinstance(value, (str, bool)):
        return value
    array = np.asarray(value)
    if array.dtype.kind == "f":
        listed = array.astype(np.float64).tolist()
        return _finite_or_none(listed)
    return array.tolist()


def _finite_or_none(listed):
    if isinstance(listed, list):
        return [_finite_or_none(item) for item in listed]
    return listed if math.isfinite(listed) else None


@dataclass(frozen=True)
class Interval:
    """Confidence limits of one quantity of an estimate, at one point or several.

    Attributes
    ----------
    quantity : str
        What is bounded: ``"frequency"`` (of each item of ``at``), ``"cdf"`` (at each value of
        ``at``), ``"quantile"`` (at each probability of ``at``) or ``"mean"`` (a scalar:
        ``at`` is ``None``).
    estimate : ndarray or float
        The point estimate at each point (a float for a scalar quantity).
    low, high : ndarray or float
        The limits, like ``estimate``.  An infinite limit means no interval at that point
        (JSON: ``null``); a limit need not be on the same side of ``estimate`` as in a
        symmetric interval (an interval centred on an unbiased estimate behind a biased
        point estimate, a band around a bias-corrected centre).
    level : float
        Confidence level in (0, 1).
    method : str
        How the limits were computed, in one phrase (their measured coverage is in
        ``docs/explanation/uncertainty.md``).
    at : ndarray, optional
        The points: items, values or probabilities; ``None`` for a scalar quantity.
    simultaneous : bool
        Whether the limits hold at every point of ``at`` at once (a band) rather than at
        each point on its own.
    anytime_valid : bool
        Whether they hold at every number of reports of a collection watched as it grows
        (a confidence sequence) rather than at one fixed number of reports.
    empty : bool
        The confidence set is empty: no value is consistent with the data at this
        ``level`` (a simultaneous band of frequencies intersected with the probability
        simplex when the support counts fit no distribution: a poisoning signal,
        :mod:`dpdist.confidence_sequences._frequency`).  ``low`` and ``high`` are then
        NaN (JSON ``null``) and ``method`` says so; never a ``low > high`` pair.
    """

    quantity: str
    estimate: Any
    low: Any
    high: Any
    level: float
    method: str
    at: Any = None
    simultaneous: bool = False
    anytime_valid: bool = False
    empty: bool = False

    def __post_init__(self):
        object.__setattr__(self, "level", check_level(self.level, "Interval"))
        shapes = {np.shape(self.estimate), np.shape(self.low), np.shape(self.high)}
        expected = () if self.at is None else np.shape(self.at)
        if shapes != {expected}:
            raise InvalidParameterError(
                f"The 'estimate', 'low' and 'high' parameters of Interval must have the shape of 'at' ({expected}). "
                f"Got shapes {sorted(shapes)} instead."
            )

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> "Interval":
        """The interval whose :meth:`to_dict` is ``document``: a ``null`` limit is no limit there (``-inf`` below,
        ``inf`` above; NaN in an ``empty`` one), a ``null`` estimate NaN.  A field missing or of another type, or
        limits of another shape than ``at``, is refused by name (:class:`~dpdist.errors.MalformedDocumentError`)."""

        def limits(name: str, document: Any) -> Any:
            if name not in ("estimate", "low", "high") or not isinstance(document, dict) or name not in document:
                return ABSENT
            value, owner = document[name], "Interval.from_dict"
            unbounded = np.nan if name == "estimate" or document.get("empty") is True else (
                -np.inf if name == "low" else np.inf)
            if isinstance(value, list):
                values = read_numbers(value, owner, name)
                return np.where(np.isnan(values), unbounded, values)
            return unbounded if value is None else read_value(float, value, owner, name)

        return read_dataclass(cls, document, nested=limits, types_of={"at": np.ndarray | None})

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``docs/reference/results.md``): numbers as lists, non-finite limits as ``None``."""
        return {
            "quantity": self.quantity,
            "at": json_value(self.at),
            "estimate": json_value(self.estimate),
            "low": json_value(self.low),
            "high": json_value(self.high),
            "level": self.level,
            "simultaneous": bool(self.simultaneous),
            "anytime_valid": bool(self.anytime_valid),
            "empty": bool(self.empty),
            "method": self.method,
        }


def row_with_limits(headline: dict[str, float], limits: dict[str, tuple[float, float]], level: float) -> dict[str, float]:
    """A table row: each headline number followed by its interval (``"<name> low"``, ``"<name> high"``) where
    ``limits`` has a finite one, and the intervals' ``level`` when any is there (a group-by's ``summary``)."""
    row: dict[str, float] = {}
    for name, value in headline.items():
        row[name] = value
        low, high = limits.get(name, (math.inf, math.inf))
        if math.isfinite(low) and math.isfinite(high):
            row[f"{name} low"], row[f"{name} high"] = float(low), float(high)
    if len(row) > len(headline):
        row["level"] = float(level)
    return row
