""":class:`CDFBand`: pointwise and simultaneous confidence bands of a CDF, and the intervals they give.

Made by :func:`dpdist.uncertainty.cdf_band` (a parametric bootstrap of a local protocol) and
:meth:`dpdist.central.TreeHistogram.cdf_band` (a Monte Carlo of a release's noise law), both
through :meth:`CDFBand.around` with radii from :func:`upper_order_statistic`; a
:class:`~dpdist.Distribution` carries one as ``band``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._documents import read_dataclass
from ..errors import InvalidParameterError
from .._validation import Interval, RealArray, validate_params
from .._types import ArrayLike

__all__ = ["CDFBand", "upper_order_statistic"]

#: The arrays of a band, in the order of its JSON
_BANDS = ("edges", "lower", "upper", "simultaneous_lower", "simultaneous_upper")


@validate_params({"level": Interval(0.0, 1.0, closed="neither")})
@dataclass(frozen=True)
class CDFBand:
    """Pointwise and simultaneous confidence bands of a CDF at ``edges``.

    Attributes
    ----------
    edges : array
        Points where the bands are given (the estimate's bin edges).
    lower, upper : array
        Pointwise band.
    simultaneous_lower, simultaneous_upper : array
        Simultaneous band (monotone).
    level : float
        Confidence level of both bands.
    replicates : int
        Bootstrap replicates behind them.
    method : str
        How they were computed.
    """

    edges: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    simultaneous_lower: np.ndarray
    simultaneous_upper: np.ndarray
    level: float
    replicates: int
    method: str = "parametric bootstrap"

    def __post_init__(self) -> None:
        arrays = [np.asarray(getattr(self, name), dtype=np.float64) for name in _BANDS]
        if arrays[0].ndim != 1 or arrays[0].size < 2 or any(array.shape != arrays[0].shape for array in arrays):
            raise InvalidParameterError(
                f"The {', '.join(repr(name) for name in _BANDS)} parameters of CDFBand must be 1-D arrays of one length, "
                f"at least 2. Got shapes {[array.shape for array in arrays]} instead.")

    @classmethod
    def around(cls, edges: np.ndarray, center: np.ndarray, pointwise: np.ndarray | float,
               simultaneous: np.ndarray | float, *,
               level: float, replicates: int, method: str) -> "CDFBand":
        """The bands ``center +- pointwise`` and ``center +- simultaneous`` (radii at each edge, or one number).

        Both are clipped to [0, 1] and pinned to the known :math:`F = 0` and :math:`1` at the
        bounds; the simultaneous band is then made monotone, which keeps every CDF it contained.
        """

        def pinned(values: np.ndarray) -> np.ndarray:
            values = np.clip(values, 0.0, 1.0)
            values[0], values[-1] = 0.0, 1.0
            return values

        low, high = pinned(center - simultaneous), pinned(center + simultaneous)
        return cls(
            edges=edges,
            lower=pinned(center - pointwise),
            upper=pinned(center + pointwise),
            simultaneous_lower=np.maximum.accumulate(low),
            simultaneous_upper=np.minimum.accumulate(high[::-1])[::-1],
            level=float(level),
            replicates=int(replicates),
            method=method,
        )

    @validate_params({"q": RealArray("a probability or a 1-D array of probabilities in [0, 1]", ndims=(0, 1), low=0.0,
                                     high=1.0)})
    def quantile_interval(self, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Interval of each ``q``-quantile: the bins where the pointwise band contains ``q``.

        The left end is the left edge of the bin in which the upper band first
        reaches ``q``, the right end the right edge of the bin in which the lower
        band does.  The band is known at the edges only and the data may lie
        anywhere inside a bin (an atom at 40 inside the bin [39.8, 40.02)), so
        whenever the band covers the CDF at the edges the interval contains the
        quantile ``inf {x: F(x) >= q}``.  Interpolating linearly between
        the edges instead covered the quantiles of integer data (weeks worked) 0.1-0.4.
        """
        q = np.atleast_1d(q)  # finite, in [0, 1]: the table
        return _crossing_bin(self.edges, np.maximum.accumulate(self.upper), q, "left"), _crossing_bin(
            self.edges, np.maximum.accumulate(self.lower), q, "right"
        )

    def mean_interval(self) -> tuple[float, float]:
        """Interval of the mean from the simultaneous band (integrals of its two edges)."""
        lo = self.edges[0]
        return (
            float(lo + np.trapezoid(1 - self.simultaneous_upper, self.edges)),
            float(lo + np.trapezoid(1 - self.simultaneous_lower, self.edges)),
        )

    def to_dict(self) -> dict:
        return {
            "level": self.level,
            "replicates": self.replicates,
            "method": self.method,
            **{name: np.asarray(getattr(self, name)).tolist() for name in _BANDS},
        }

    @classmethod
    def from_dict(cls, document: dict) -> "CDFBand":
        """The band whose :meth:`to_dict` is ``document``; a field missing or of another type, bands of other lengths
        than the edges, or a level outside (0, 1) is refused by name (:class:`~dpdist.errors.MalformedDocumentError`)."""
        return read_dataclass(cls, document)


def upper_order_statistic(values: np.ndarray, level: float) -> np.ndarray:
    r"""The ``ceil((B + 1) level)``-th smallest of ``B`` values along axis 0 (the largest if that exceeds ``B``).

    A new draw exchangeable with the ``B`` falls at or below it with probability at
    least ``level`` (Davison & Hinkley 1997, sec. 2.4 and 5.2: bootstrap quantiles at
    :math:`(B + 1)\alpha`); ``np.quantile``'s interpolated quantile is below that
    (0.93 instead of 0.95 at ``B = 40``).
    """
    count = values.shape[0]
    rank = min(math.ceil((count + 1) * level - 1e-9), count)
    return np.partition(values, rank - 1, axis=0)[rank - 1]


def _crossing_bin(edges: np.ndarray, cdf: np.ndarray, q: np.ndarray, side: str) -> np.ndarray:
    """Left or right edge of the bin at whose right edge the non-decreasing ``cdf`` first reaches each ``q``."""
    index = np.clip(np.searchsorted(cdf, q, side="left"), 1, edges.size - 1)  # first edge with cdf >= q
    x = edges[index - 1] if side == "left" else edges[index]
    return np.where(q <= 0, edges[0], x)
