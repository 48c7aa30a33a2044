"""What a confidence sequence reports: :class:`FrequencySequence`, :class:`MeanSequence`, :class:`CDFSequence`.

Each holds the intervals at the current number of reports, the level they hold
at *every* number of reports at once, and a "stop when narrower than w"
readout (:class:`StopReadout`): whether the band is already narrower than
``w`` and, if not, the number of reports at which it will be if the estimate
stays where it is (a projection for planning; the guarantee itself needs no
plan: stopping at any moment, for any reason, keeps the level).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from .._documents import ABSENT, read_dataclass, read_value, refused
from ..errors import InvalidParameterError
from .._validation import Described, Interval as Range, Probabilities, validate_params
from ..estimates import QUANTILES, Interval
from ..estimates._band import _crossing_bin as crossing_bin
from ._boundary import BoundedMeans, projected_n

if TYPE_CHECKING:
    from ..estimates import Distribution

__all__ = ["StopReadout", "FrequencySequence", "MeanSequence", "CDFSequence"]

#: What every sequence's ``guarantee`` says (the JSON field and the printouts).
ANYTIME = "anytime-valid: holds at every number of reports at once, however often it is looked at"


#: What an empty simultaneous band means (``FrequencySequence.simultaneous_empty``), in every view.
EMPTY_BAND = ("the anytime {level}% band of all values at once is empty: no distribution is consistent with the support "
              "counts at this level (honest reports give this with probability at most 1 - level: a poisoning signal, "
              "see the poisoning test)")


def _floats(values) -> list:
    return [float(v) if math.isfinite(v) else None for v in np.asarray(values, dtype=np.float64).ravel()]


@dataclass(frozen=True)
class StopReadout:
    """When the band will be narrower than ``target_width``.

    Attributes
    ----------
    target_width : float
    width : float
        The band's width now (its widest point).
    reached : bool
        Whether ``width <= target_width`` already.
    n : int or None
        The number of reports at which the width falls to ``target_width`` if the
        estimate stays where it is (``n`` now when reached; ``None`` beyond 10^10, where the sums outgrow double precision).
    """

    target_width: float
    width: float
    reached: bool
    n: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"target_width": self.target_width, "width": self.width, "reached": self.reached, "n": self.n}

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> "StopReadout":
        """The readout whose :meth:`to_dict` is ``document`` (refused by field name otherwise, :mod:`dpdist._documents`)."""
        return read_dataclass(cls, document)

    def __str__(self) -> str:
        if self.reached:
            return f"narrower than {self.target_width:g} already (width {self.width:.4g})"
        if self.n is None:
            return f"width {self.width:.4g}; not narrower than {self.target_width:g} within 10^10 reports"
        return f"width {self.width:.4g}; narrower than {self.target_width:g} at about n = {self.n:,}"


def _head(sequence, kind: str) -> dict[str, Any]:
    """The fields every sequence's ``to_dict`` starts with."""
    return {"kind": kind, "level": sequence.level, "n": sequence.n, "target_n": sequence.target_n,
            "method": sequence.method, "guarantee": ANYTIME}


def _read_sequence(cls: type, document: Any, **options: Any) -> Any:
    """A sequence read from its :meth:`to_dict` (:func:`dpdist._documents.read_dataclass`): the head's ``kind`` and
    ``guarantee`` are checked as written again; the projection (the statistics behind ``stop_readout``) is not in the
    JSON, so a sequence read back has none."""
    return read_dataclass(cls, document, **options)


#: the width a stop readout asks for
_WIDTH = Described(Range(0.0, math.inf, closed="neither"), "a finite number > 0")


def _readout(target_width: float, n_now: int, width_at: Callable[[float], float]) -> StopReadout:
    width = float(width_at(float(n_now)))
    n = projected_n(width_at, float(target_width), float(max(n_now, 1)))
    reached = width <= target_width
    return StopReadout(float(target_width), width, reached, int(n_now) if reached else (None if n is None else int(n)))


@dataclass(frozen=True)
class FrequencySequence:
    """Confidence sequence of every item's frequency.

    Attributes
    ----------
    estimate : array
        The unbiased estimate (the sequence's centre; not post-processed).
    low, high : array
        Each item's interval: item ``v``'s frequency is inside at every ``n``
        with probability ``level`` (per item).
    simultaneous_low, simultaneous_high : array
        All items inside at every ``n`` at once with probability ``level``
        (a union bound over the items, intersected with the simplex); NaN when that
        intersection is empty.
    simultaneous_empty : bool
        The intersection is empty: no distribution is consistent with the support counts
        at ``level`` (honest reports give this with probability at most ``1 - level``: a
        poisoning signal); :meth:`intervals` says so (``Interval.empty``).
    level, n, target_n, method, labels
    """

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    simultaneous_low: np.ndarray
    simultaneous_high: np.ndarray
    level: float
    n: int
    target_n: float
    method: str
    labels: tuple[str, ...] | None = None
    simultaneous_empty: bool = False
    _band: BoundedMeans | None = field(default=None, repr=False, compare=False)

    @property
    def width(self) -> float:
        """Width of the widest item's simultaneous interval (0 when the band is empty: nothing is inside)."""
        return 0.0 if self.simultaneous_empty else float(np.max(self.simultaneous_high - self.simultaneous_low))

    @validate_params({"width": _WIDTH})
    def stop_readout(self, width: float) -> StopReadout:
        """Whether every item's simultaneous interval is narrower than ``width``, or when it will be."""
        band = self._band
        if band is None:
            raise InvalidParameterError("This FrequencySequence carries no projection (built without its statistics).")
        return _readout(width, self.n, lambda n: float(np.max(band.widths(n))))

    def centring_note(self, options: dict[str, Any]) -> str | None:
        """What a reader of the intervals beside an estimate made with ``options`` must know (None: nothing)."""
        notes = []
        if options.get("postprocess", "none") != "none":
            notes.append("the anytime intervals are centred on the unbiased estimate, not on the post-processed one")
        if self.simultaneous_empty:
            notes.append(EMPTY_BAND.format(level=f"{100 * self.level:g}"))
        return "; ".join(notes) or None

    def intervals(self, estimate: Any = None) -> tuple:
        """As :class:`~dpdist.estimates.Interval` values (``anytime_valid=True``): per item, and all items at once
        (centred on the sequence's own unbiased estimate, whatever ``estimate`` the campaign shows); the band
        ``empty`` when no distribution fits (``simultaneous_empty``)."""

        items = np.arange(self.estimate.size)
        per_item = Interval("frequency", self.estimate, self.low, self.high, self.level, self.method, at=items,
                            anytime_valid=True)
        method = self.method + ("; " + EMPTY_BAND.format(level=f"{100 * self.level:g}") if self.simultaneous_empty else "")
        band = Interval("frequency", self.estimate, self.simultaneous_low, self.simultaneous_high, self.level,
                        method, at=items, simultaneous=True, anytime_valid=True, empty=self.simultaneous_empty)
        return per_item, band

    def to_dict(self) -> dict[str, Any]:
        return {
            **_head(self, "frequency"),
            "labels": None if self.labels is None else list(self.labels),
            "estimate": _floats(self.estimate),
            "low": _floats(self.low),
            "high": _floats(self.high),
            "simultaneous_low": _floats(self.simultaneous_low),
            "simultaneous_high": _floats(self.simultaneous_high),
            "simultaneous_empty": bool(self.simultaneous_empty),
        }

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> "FrequencySequence":
        """The sequence whose :meth:`to_dict` is ``document``, without its projection (``stop_readout`` refuses)."""
        return _read_sequence(cls, document)


@dataclass(frozen=True)
class MeanSequence:
    """Confidence sequence of the mean: inside ``[low, high]`` at every ``n`` with probability ``level``."""

    estimate: float
    low: float
    high: float
    level: float
    n: int
    target_n: float
    method: str
    _mean: Any = field(default=None, repr=False, compare=False)  # BoundedMeans or BennettMean

    @property
    def width(self) -> float:
        return float(self.high - self.low)

    @validate_params({"width": _WIDTH})
    def stop_readout(self, width: float) -> StopReadout:
        """Whether the interval is narrower than ``width``, or when it will be."""
        mean = self._mean
        if mean is None:
            raise InvalidParameterError("This MeanSequence carries no projection (built without its statistics).")
        return _readout(width, self.n, lambda n: float(mean.widths(n)[0]))

    def centring_note(self, options: dict[str, Any]) -> str | None:
        """What a reader of the interval beside the campaign's estimate must know (nothing: None)."""
        return None

    def intervals(self, estimate: Any = None) -> tuple:
        """As an :class:`~dpdist.estimates.Interval` value (``anytime_valid=True``; centred on the sequence's own
        estimate, whatever ``estimate`` the campaign shows)."""

        return (Interval("mean", self.estimate, self.low, self.high, self.level, self.method, anytime_valid=True),)

    def to_dict(self) -> dict[str, Any]:
        return {
            **_head(self, "mean"),
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
        }

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> "MeanSequence":
        """The sequence whose :meth:`to_dict` is ``document``, without its projection (``stop_readout`` refuses)."""
        return _read_sequence(cls, document)


@dataclass(frozen=True)
class CDFSequence:
    """Confidence sequence of a CDF: a band at ``edges`` holding at every ``n`` at once, with probability ``level``.

    ``low[i] <= F(edges[i]) <= high[i]`` for every ``i`` and every ``n`` at once,
    with :math:`F(x)` the share of the population *below* ``x``.  Between edges
    :math:`F` is non-decreasing, so the band's value at the edge to the left and
    to the right bound it.  Quantile and mean intervals follow from the same event,
    so they hold together with the band.
    """

    edges: np.ndarray
    low: np.ndarray
    high: np.ndarray
    mean_low: float
    mean_high: float
    level: float
    n: int
    target_n: float
    method: str
    _shrink: Callable[[float], float] | None = field(default=None, repr=False, compare=False)

    @property
    def width(self) -> float:
        """The band's widest point."""
        return float(np.max(self.high - self.low))

    @validate_params({"q": Probabilities()})
    def quantile_interval(self, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Interval of each ``q``-quantile :math:`\\inf\\{x: F(x) \\ge q\\}`, from the band (as :meth:`CDFBand.quantile_interval`)."""

        q = np.asarray(q, dtype=np.float64)  # the table's: one or more probabilities in [0, 1], a 1-D array
        return crossing_bin(self.edges, self.high, q, "left"), crossing_bin(self.edges, self.low, q, "right")

    def mean_interval(self) -> tuple[float, float]:
        return self.mean_low, self.mean_high

    @validate_params({"width": _WIDTH})
    def stop_readout(self, width: float) -> StopReadout:
        """Whether the band is narrower than ``width`` everywhere, or when it will be.

        The projection scales today's width by how much the band's constraints
        (the report statistics' intervals) narrow by then: the band is a linear
        image of them, exactly so while the positivity of the masses is not what
        binds it.
        """
        shrink = self._shrink
        if shrink is None:
            raise InvalidParameterError("This CDFSequence carries no projection (built without its statistics).")
        now = self.width
        return _readout(width, self.n, lambda n: now * shrink(n))

    def centring_note(self, options: dict[str, Any]) -> str | None:
        """What a reader of the band beside the campaign's estimate must know (nothing: None)."""
        return None

    def intervals(self, distribution: Distribution | None = None) -> tuple:
        """As :class:`~dpdist.estimates.Interval` values (``anytime_valid=True``, all simultaneous: one event).

        The CDF band at :attr:`edges`, the intervals of the quantiles
        :data:`~dpdist.estimates.QUANTILES` and of the mean; their point estimates are
        ``distribution``'s (the campaign's estimate), else the band's midpoints.
        """

        q = np.array(QUANTILES)
        low, high = self.quantile_interval(q)
        if distribution is not None:
            cdf, quantiles, mean = distribution.cdf(self.edges), distribution.quantile(q), distribution.mean()
        else:
            cdf, quantiles, mean = (self.low + self.high) / 2, (low + high) / 2, (self.mean_low + self.mean_high) / 2
        intervals = (
            Interval("cdf", cdf, self.low, self.high, self.level, self.method, at=self.edges, simultaneous=True,
                     anytime_valid=True),
            Interval("quantile", quantiles, low, high, self.level, "the anytime CDF band inverted, to the edges of "
                     "the cells where it crosses q", at=q, simultaneous=True, anytime_valid=True),
        )
        if distribution is not None and distribution.period is not None:  # its bounds are the linear mean's
            return intervals
        return (*intervals, Interval("mean", float(mean), self.mean_low, self.mean_high, self.level,
                                     "the extremes of the mean over the masses the anytime band's statistics allow",
                                     simultaneous=True, anytime_valid=True))

    def to_dict(self) -> dict[str, Any]:
        return {
            **_head(self, "cdf"),
            "edges": _floats(self.edges),
            "low": _floats(self.low),
            "high": _floats(self.high),
            "mean": {"low": self.mean_low, "high": self.mean_high},
        }

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> "CDFSequence":
        """The sequence whose :meth:`to_dict` is ``document``, without its projection (``stop_readout`` refuses)."""

        def mean(name: str, document: Any) -> Any:
            if name not in ("mean_low", "mean_high"):
                return ABSENT
            limits = document.get("mean") if isinstance(document, dict) else None
            side = name.removeprefix("mean_")
            if not isinstance(limits, dict) or side not in limits:
                raise refused("CDFSequence.from_dict", f"mean.{side}", "is missing")
            return read_value(float, limits[side], "CDFSequence.from_dict", f"mean.{side}")

        return _read_sequence(cls, document, nested=mean)
