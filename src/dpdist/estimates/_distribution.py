""":class:`Distribution`: a probability distribution on numbers, uniform within each bin, with an optional CDF band."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._rng import check_rng
from .._validation import Bounds, Described, Integer, Options, RealArray, check_param, validate_params
from ..errors import InvalidParameterError
from .._guarantee import PrivacyGuarantee
from ._band import CDFBand
from .._documents import read_part
from ._presented import Presented
from ._reading import Header, numbers
from ._drawing import axes, fill_band, pyplot
from ._intervals import TRUTH, Interval, check_level, json_value, percent, readonly, row_with_limits
from ._text import limits, pick, text_table
from .._types import ArrayLike, FloatBounds, Seed
from ..postprocess import taut_string, unimodal_regression

__all__ = ["Distribution", "QUANTILES", "DISPLAY_BINS", "display_edges", "draw_distribution", "distribution_figure"]

#: At most this many bins in a plotted density: the truth and the estimate are drawn on the
#: same bins, coarse enough that a histogram of the data is not a forest of spikes.
DISPLAY_BINS = 40
#: The quantiles a distribution reports (its JSON, :meth:`Distribution.describe`, its intervals).
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


#: the edges of a distribution's bins
EDGES = RealArray("a 1-D array of at least 2 finite, strictly increasing floats", ndims=(1,), min_size=2,
                  increasing="strictly")
#: what :meth:`Distribution.quantile` reads
PROBABILITIES = RealArray("a probability or an array of probabilities in [0, 1]", low=0.0, high=1.0)
#: what :meth:`Distribution.cdf` and :meth:`Distribution.pdf` read
POINTS = RealArray("a finite float or an array of finite floats")


@validate_params({"edges": EDGES})
@dataclass(frozen=True, repr=False)
class Distribution(Presented):
    """A probability distribution on ``bounds``, uniform within each bin.

    The CDF is piecewise linear through ``(edges[i], cumulative[i])``; every
    quantity below (cdf, quantile, mean, var, range queries) is exact for that
    piecewise-uniform density.

    Parameters
    ----------
    edges : array of shape (k + 1,)
        Strictly increasing finite bin edges; ``bounds = (edges[0], edges[-1])``.
    probabilities : array of shape (k,)
        Non-negative bin masses summing to 1 (to 1e-6; renormalized exactly).
    method, epsilon, n : optional
        What produced the estimate.
    details : dict
        Method-specific extras (budget split, convergence trace, ...).  ``details["period"]``
        (the circular protocol ``opm-circular`` sets it) says the bounds are one period of a
        circle, ``hi`` the same point as ``lo``: the mean and the standard deviation are then
        the circular ones (:attr:`period`).
    guarantee : PrivacyGuarantee, optional
        The privacy guarantee of the release or of the reports behind it.
    band : CDFBand, optional
        Pointwise and simultaneous confidence bands of the CDF
        (:func:`dpdist.uncertainty.cdf_band`); drawn by :meth:`plot`.
    """

    edges: np.ndarray
    probabilities: np.ndarray
    method: str | None = None
    epsilon: float | None = None
    n: int | None = None
    details: dict = field(default_factory=dict)
    guarantee: PrivacyGuarantee | None = None
    band: Any = None
    _cumulative: np.ndarray = field(init=False, repr=False, compare=False)  # CDF at the edges

    kind: ClassVar[str] = "distribution"

    def __post_init__(self) -> None:
        edges = np.asarray(self.edges, dtype=np.float64)  # 1-D, finite, increasing: the table
        probabilities = np.asarray(check_param("Distribution", "probabilities", self.probabilities, RealArray(
            f"finite floats of shape ({edges.size - 1},), one per bin of 'edges'", ndims=(1,), width=edges.size - 1)),
            dtype=np.float64)
        total = probabilities.sum()
        if not np.all(np.isfinite(probabilities)) or probabilities.min() < -1e-12 or abs(total - 1) > 1e-6:
            raise InvalidParameterError(
                "The 'probabilities' parameter of Distribution must be non-negative and sum to 1. "
                f"Got minimum {probabilities.min()!r} and sum {total!r} instead."
            )
        probabilities = np.clip(probabilities, 0, None)
        probabilities = probabilities / probabilities.sum()
        object.__setattr__(self, "edges", readonly(edges))
        object.__setattr__(self, "probabilities", readonly(probabilities))
        cumulative = np.concatenate([[0.0], np.cumsum(probabilities)])
        cumulative[-1] = 1.0
        object.__setattr__(self, "_cumulative", readonly(cumulative))

    # ------------------------------------------------------------------ construction
    @classmethod
    @validate_params({"cdf_values": RealArray("a non-decreasing 1-D array of finite numbers (one value per edge)",
                                              ndims=(1,), increasing="weakly", tolerance=1e-12)})
    def from_cdf(cls, edges: ArrayLike, cdf_values: ArrayLike, **kwargs: Any) -> "Distribution":
        """Build from CDF values at ``edges`` (non-decreasing from 0 to 1)."""
        return cls(np.asarray(edges), np.diff(cdf_values), **kwargs)

    @classmethod
    def from_quantiles(cls, q: ArrayLike, values: ArrayLike, bounds: FloatBounds, **kwargs: Any) -> "Distribution":
        """The distribution whose CDF runs linearly through ``(values[i], q[i])``, from 0 at ``bounds[0]`` to 1 at
        ``bounds[1]``: quantiles at ``q`` are ``values`` exactly, and in between the mass is spread evenly.

        Values are clipped to the bounds.  Tied values (and a value at a bound) are one edge, the CDF there the
        largest of theirs: the mass between the tied quantiles is spread over the bin below that edge.
        """
        owner = "Distribution.from_quantiles"
        lo, hi = check_param(owner, "bounds", bounds, Bounds())
        probabilities = check_param(owner, "q", np.asarray(q, dtype=np.float64).ravel(), RealArray(
            "one or more strictly increasing probabilities in (0, 1)", min_size=1, low=0.0, high=1.0, closed="neither",
            increasing="strictly"))
        points = check_param(owner, "values", np.asarray(values, dtype=np.float64).ravel(), RealArray(
            f"{probabilities.size} finite, non-decreasing values (one per probability of 'q')", ndims=(1,),
            width=probabilities.size, increasing="weakly"))
        x = np.concatenate([[lo], np.clip(points, lo, hi), [hi]])
        cdf = np.concatenate([[0.0], probabilities, [1.0]])
        edges, last = np.unique(x[::-1], return_index=True)  # the last point of each tie: its largest CDF value
        heights = cdf[::-1][last]
        heights[0] = 0.0  # the CDF is 0 at the lower bound
        return cls.from_cdf(edges, heights, **kwargs)

    @classmethod
    def uniform_bins(cls, probabilities: ArrayLike, bounds: FloatBounds = (0.0, 1.0), **kwargs: Any) -> "Distribution":
        """Equal-width bins over ``bounds``."""
        probabilities = np.asarray(probabilities, dtype=np.float64)
        return cls(np.linspace(bounds[0], bounds[1], probabilities.size + 1), probabilities, **kwargs)

    # ------------------------------------------------------------------ properties
    @property
    def bounds(self) -> tuple[float, float]:
        return float(self.edges[0]), float(self.edges[-1])

    @property
    def bins(self) -> int:
        return self.probabilities.size

    @property
    def widths(self) -> np.ndarray:
        return np.diff(self.edges)

    @property
    def period(self) -> float | None:
        """The circle's length when the bounds are one period of a circle (times of day, angles), else None."""
        period = self.details.get("period")
        return None if period is None else float(period)

    @property
    def cumulative(self) -> np.ndarray:
        """CDF at the edges (length ``bins + 1``, from 0 to 1)."""
        return self._cumulative

    # ------------------------------------------------------------------ functions
    @validate_params({"x": POINTS})
    def pdf(self, x: ArrayLike) -> np.ndarray:
        """Density at ``x`` (0 outside bounds; right-continuous at inner edges)."""
        x = np.asarray(x, dtype=np.float64)
        index = np.searchsorted(self.edges, x, side="right") - 1
        inside = (x >= self.edges[0]) & (x <= self.edges[-1])
        index = np.clip(index, 0, self.bins - 1)
        return np.where(inside, self.probabilities[index] / self.widths[index], 0.0)

    @validate_params({"x": POINTS})
    def cdf(self, x: ArrayLike) -> np.ndarray:
        """CDF at ``x``: linear within bins, 0 below and 1 above ``bounds``."""
        return np.interp(np.asarray(x, dtype=np.float64), self.edges, self._cumulative, left=0.0, right=1.0)

    @validate_params({"q": PROBABILITIES})
    def quantile(self, q: ArrayLike) -> np.ndarray:
        """Smallest ``x`` with ``cdf(x) >= q`` (the generalized inverse), for ``q`` in [0, 1]."""
        q = np.asarray(q, dtype=np.float64)
        cumulative = self._cumulative
        index = np.clip(np.searchsorted(cumulative, q, side="left"), 1, self.bins)
        lower = cumulative[index - 1]
        mass = self.probabilities[index - 1]
        fraction = np.divide(q - lower, mass, out=np.zeros_like(q), where=mass > 0)
        return self.edges[index - 1] + np.clip(fraction, 0, 1) * self.widths[index - 1]

    def mean(self) -> float:
        """The mean; on a circle (:attr:`period`) the circular mean, in ``[lo, lo + period)`` (NaN when the
        resultant is 0: a uniform circle has no mean direction)."""
        if self.period is not None:
            angle, resultant = self._resultant()
            if resultant < 1e-12:
                return math.nan
            return float(self.edges[0] + (angle % (2 * math.pi)) * self.period / (2 * math.pi))
        midpoints = (self.edges[:-1] + self.edges[1:]) / 2
        return float(np.dot(self.probabilities, midpoints))

    def _resultant(self) -> tuple[float, float]:
        r"""``(angle, R)`` of the mean resultant :math:`E[e^{i\theta}]`, :math:`\theta = 2\pi (x - lo) / P`, exact for the
        piecewise-uniform density: over a bin :math:`[\alpha, \beta]` the mean of :math:`\cos\theta` is
        :math:`(\sin\beta - \sin\alpha)/(\beta - \alpha)` and of :math:`\sin\theta`,
        :math:`(\cos\alpha - \cos\beta)/(\beta - \alpha)` (Mardia & Jupp, *Directional Statistics*, 2000, sec. 2.2)."""
        assert self.period is not None, "a circular distribution"
        turns = 2 * math.pi * (self.edges - self.edges[0]) / self.period
        low, high = turns[:-1], turns[1:]
        cosine = np.dot(self.probabilities, (np.sin(high) - np.sin(low)) / (high - low))
        sine = np.dot(self.probabilities, (np.cos(low) - np.cos(high)) / (high - low))
        return math.atan2(sine, cosine), math.hypot(cosine, sine)

    def var(self) -> float:
        r"""Variance of the piecewise-uniform density (includes the within-bin ``w^2/12``); on a circle
        (:attr:`period`) the square of the circular standard deviation :math:`\sqrt{-2 \ln R}\, P / 2\pi`
        (Mardia & Jupp, sec. 2.3), in the squared units of the bounds."""
        if self.period is not None:
            resultant = max(self._resultant()[1], 1e-300)
            return float(-2 * math.log(min(resultant, 1.0)) * (self.period / (2 * math.pi)) ** 2)
        midpoints = (self.edges[:-1] + self.edges[1:]) / 2
        second = np.dot(self.probabilities, midpoints**2 + self.widths**2 / 12)
        return float(max(second - self.mean() ** 2, 0.0))

    def summary(self) -> dict[str, float]:
        """``mean``, ``std`` and ``median`` of the piecewise-uniform density."""
        return {"mean": self.mean(), "std": math.sqrt(self.var()), "median": float(self.quantile(0.5))}

    def summary_row(self) -> dict[str, float]:
        """:meth:`summary`, the mean and the median followed by their intervals from the :attr:`band` (at its
        level) when it has one."""
        if self.band is None:
            return self.summary()
        limits: dict[str, tuple[float, float]] = {}
        for interval in self.intervals(self.band.level):
            if interval.quantity == "mean":
                limits["mean"] = (interval.low, interval.high)
            elif interval.quantity == "quantile":
                middle = int(np.flatnonzero(np.asarray(interval.at) == 0.5)[0])
                limits["median"] = (interval.low[middle], interval.high[middle])
        return row_with_limits(self.summary(), limits, self.band.level)

    def table(self) -> dict[str, np.ndarray]:
        """Columns ``low``, ``high``, ``probability`` (of each bin) and ``cdf`` (at its right edge).

        With a :attr:`band` (on these edges, or on some of them) also ``cdf_lower``, ``cdf_upper``
        (pointwise) and ``cdf_simultaneous_lower``, ``cdf_simultaneous_upper`` at the right edge,
        NaN at an edge the band does not hold at (the atom-aware tree CDF has knots between its
        leaf edges, :mod:`dpdist.central._atoms`).
        """
        table = {
            "low": self.edges[:-1], "high": self.edges[1:], "probability": self.probabilities, "cdf": self._cumulative[1:]
        }
        rows = self._band_rows()
        if rows is not None and self.band is not None:
            for column, name in (("cdf_lower", "lower"), ("cdf_upper", "upper"),
                                 ("cdf_simultaneous_lower", "simultaneous_lower"),
                                 ("cdf_simultaneous_upper", "simultaneous_upper")):
                values = np.full(self.edges.size, np.nan)
                values[rows] = np.asarray(getattr(self.band, name), dtype=np.float64)
                table[column] = values[1:]
        return table

    def _band_rows(self) -> np.ndarray | None:
        """The index in :attr:`edges` of each edge of the band (``None``: no band, or one on other edges)."""
        if self.band is None:
            return None
        band_edges = np.asarray(self.band.edges, dtype=np.float64)
        rows = np.searchsorted(self.edges, band_edges)
        if np.any(rows >= self.edges.size) or not np.array_equal(self.edges[np.minimum(rows, self.edges.size - 1)],
                                                                 band_edges):
            return None
        return rows

    def range_query(self, low: ArrayLike, high: ArrayLike) -> np.ndarray:
        """Probability mass of ``[low, high]``."""
        low = np.asarray(low, dtype=np.float64)
        high = np.asarray(high, dtype=np.float64)
        if np.any(high < low):
            raise InvalidParameterError(
                f"Distribution.range_query needs low <= high. Got low={low!r}, high={high!r}."
            )
        return self.cdf(high) - self.cdf(low)

    def sample(self, size: int, rng: Seed = None) -> np.ndarray:
        """Draw ``size`` i.i.d. values (bin by mass, then uniform within the bin).

        The bins' counts are one multinomial draw and their order a uniform shuffle, which is
        the law of ``size`` independent bin draws at a quarter of the cost of drawing them one
        by one (the bootstrap of :mod:`dpdist.uncertainty` samples thousands of data sets).
        """
        size = check_param("Distribution.sample", "size", size, Integer(low=0))
        generator = check_rng(rng, owner="Distribution.sample")
        probabilities = self.probabilities / self.probabilities.sum()
        bins = np.repeat(np.arange(self.bins), generator.multinomial(size, probabilities))
        generator.shuffle(bins)
        return self.edges[bins] + generator.random(size) * self.widths[bins]


    # ------------------------------------------------------------------ presentation
    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        """The intervals of its :attr:`band` (none without one), at the band's own level.

        The pointwise and the simultaneous CDF band at the band's edges, the intervals of the
        :data:`QUANTILES` (the pointwise band inverted, :meth:`CDFBand.quantile_interval`) and of
        the mean (the simultaneous band integrated, :meth:`CDFBand.mean_interval`).
        """
        check_level(level, "Distribution.intervals")
        band = self.band
        if band is None:
            return ()
        edges = np.asarray(band.edges, dtype=np.float64)
        cdf, q = self.cdf(edges), np.array(QUANTILES)
        method = f"{band.method}; {band.replicates} replicates"
        low, high = band.quantile_interval(q)
        intervals = (
            Interval("cdf", cdf, band.lower, band.upper, band.level, method, at=edges),
            Interval("cdf", cdf, band.simultaneous_lower, band.simultaneous_upper, band.level, method, at=edges,
                     simultaneous=True),
            Interval("quantile", self.quantile(q), low, high, band.level,
                     "the pointwise CDF band inverted, to the edges of the bins where it crosses q", at=q),
        )
        if self.period is not None:  # the band integrated bounds the linear mean, not the circular one
            return intervals
        mean_low, mean_high = band.mean_interval()
        return (*intervals, Interval("mean", self.mean(), mean_low, mean_high, band.level,
                                     "the simultaneous CDF band integrated"))

    def _json_fields(self, level: float) -> dict[str, Any]:
        return {
            "edges": json_value(self.edges),
            "probabilities": json_value(self.probabilities),
            "cdf": json_value(self._cumulative[1:]),
            "mean": json_value(self.mean()),
            "median": json_value(self.quantile(0.5)),
            "quantiles": {"q": list(QUANTILES), "values": json_value(self.quantile(np.array(QUANTILES)))},
            "band": None if self.band is None else self.band.to_dict(),
            **({} if self.period is None else {"period": self.period}),
        }

    @classmethod
    def _from_document(cls, document: dict[str, Any], header: Header) -> "Distribution":
        """The distribution of a checked document (:meth:`Presented.from_dict`): its bins, guarantee, band, period."""
        band = document["band"]
        period = document.get("period")
        return cls(
            numbers(document, "edges", header), numbers(document, "probabilities", header), method=header.method,
            epsilon=header.epsilon, n=header.n, guarantee=header.guarantee,
            details=header.details(**({} if period is None else {"period": float(period)})),
            band=None if band is None else read_part(CDFBand.from_dict, band, header.owner, "band"),
        )

    @validate_params({"truth": TRUTH})
    def describe(self, truth: Any = None, level: float = 0.95) -> str:
        """Mean, standard deviation and the :data:`QUANTILES`, one per line, with the intervals of its band
        when it has one (at the band's level: ``level`` is not used), each beside the value of the samples
        ``truth`` when given; then the band's method and the bins."""
        samples = truth
        band, q = self.band, np.array(QUANTILES)
        circular = self.period is not None
        names = ["circular mean" if circular else "estimated mean", "circular std" if circular else "estimated std",
                 *(f"{round(100 * p):>2}% quantile" for p in QUANTILES)]
        values = [self.mean(), math.sqrt(self.var()), *self.quantile(q)]
        truths = [None] * len(names) if samples is None else [*_sample_moments(samples, self), *np.quantile(samples, q)]
        intervals: list[Any] = [None] * len(names)
        if band is not None:  # the mean's from the simultaneous band (not on a circle), the quantiles' from the pointwise one
            intervals[0] = None if circular else band.mean_interval()
            intervals[2:] = zip(*band.quantile_interval(q))
        lines = [
            f"  {name:<18} {value:.6g}" + ("" if true is None else f"   (true {true:.6g})")
            + ("" if interval is None or band is None else f"   {percent(band.level)} [{interval[0]:.6g}, {interval[1]:.6g}]")
            for name, value, true, interval in zip(names, values, truths, intervals)
        ]
        if band is not None:
            lines.append(f"  bands              {percent(band.level)} pointwise and simultaneous, {band.method} "
                         f"({band.replicates} replicates)")
        low, high = self.bounds
        lines.append(f"  bins               {self.bins} over [{low:g}, {high:g}]"
                     + (f", a circle ({high:g} is {low:g}; quantiles from {low:g})" if circular else ""))
        lines.extend(f"  note               {note}" for note in self.notes())
        return "\n".join(lines)

    @classmethod
    def _document_lines(cls, document: dict[str, Any], intervals: list[dict], level: str) -> list[str]:
        """The mean and the quantiles with their fixed-n and anytime intervals, then the widest point of each CDF band."""
        mean = "circular mean" if document.get("period") is not None else "mean"  # a circle (opm-circular): no interval
        rows = [(mean, document["mean"], limits(pick(intervals, "mean", False)), limits(pick(intervals, "mean", True)))]
        fixed_q, anytime_q = pick(intervals, "quantile", False), pick(intervals, "quantile", True)
        quantiles = document.get("quantiles") or {"q": [], "values": []}
        for index, (q, value) in enumerate(zip(quantiles["q"], quantiles["values"])):
            rows.append((f"quantile {q:g}", value, limits(fixed_q, index), limits(anytime_q, index)))
        lines = text_table(rows, level, "every look")
        widths = []
        for name, band in (("fixed-n", pick(intervals, "cdf", False, simultaneous=True)), ("anytime", pick(intervals, "cdf", True))):
            if band is not None:
                widest = max(high - low for low, high in zip(band["low"], band["high"]) if low is not None and high is not None)
                widths.append(f"{name} {widest:.3g} ({len(band['low'])} points)")
        if widths:
            lines.append("CDF band, widest: " + ", ".join(widths))
        return lines

    def display_density(self) -> dict[str, Any]:
        """The density every view of the estimate draws (its figure, the dashboard), as JSON
        ``{"edges", "density", "bins", "peaks", "method"}``: the estimate on :func:`display_edges`
        (at most :data:`DISPLAY_BINS` equal bins, each one's mass from its CDF), with only the peaks
        its band supports.

        The band's (:func:`dpdist.uncertainty.cdf_band`; the service adds one): of all densities whose
        CDF lies in the simultaneous band, the taut string's has the fewest peaks
        (:func:`dpdist.postprocess.taut_string`), ``peaks``; cut at its valleys, each stretch of the
        estimate is fitted by a density that rises, then falls (:func:`dpdist.postprocess.unimodal_regression`:
        least squares, the mass kept), so every peak drawn is one the data support, and the heights
        are the estimate's.  Drawn as it is, an EMS estimate of one peak showed 9-11 peaks on 40 bins
        (SW, n = 6,600, epsilon 2) and 5-8 bin by bin (1024 bins, n = 20,000).  Without a band the
        estimate is drawn as it is (``peaks`` is None), and ``method`` says that its peaks are not checked.
        """
        edges = display_edges(self)
        density = np.diff(self.cdf(edges)) / np.diff(edges)
        bins = edges.size - 1
        if self.band is None:
            return {"edges": edges.tolist(), "density": density.tolist(), "bins": int(bins), "peaks": None,
                    "method": f"the estimate on {bins} equal bins; no band, so its peaks are not checked"}
        band = self.band
        knots, values = taut_string(band.edges, band.simultaneous_lower, band.simultaneous_upper)
        supported = np.diff(np.interp(edges, knots, values)) / np.diff(edges)
        valleys = _valleys(supported)
        fitted = np.concatenate([unimodal_regression(stretch) for stretch in np.split(density, valleys)])
        cdf = np.r_[0.0, np.cumsum(fitted * np.diff(edges))]
        if np.any(cdf < np.interp(edges, band.edges, band.simultaneous_lower) - 1e-9) or np.any(
                cdf > np.interp(edges, band.edges, band.simultaneous_upper) + 1e-9):
            fitted = supported  # the fit left the band: the taut string's own density, inside it by construction
        peaks = len(valleys) + 1
        method = (f"the estimate on {bins} equal bins with the {peaks} peak{'s' if peaks > 1 else ''} its "
                  f"{percent(self.band.level)} simultaneous band supports")
        return {"edges": edges.tolist(), "density": fitted.tolist(), "bins": int(bins), "peaks": peaks, "method": method}

    def needs_band(self) -> bool:
        """Whether :attr:`band` is still missing (:func:`dpdist.uncertainty.cdf_band` adds one)."""
        return self.band is None

    @validate_params({"kind": Options(("pdf", "cdf"))})
    def plot(self, ax: Any = None, *, kind: str = "pdf", **kwargs: Any) -> Any:
        """Plot the density (``kind="pdf"``) or the CDF (``kind="cdf"``); returns the axes.

        A CDF plot draws the confidence bands when the estimate has them
        (:attr:`band`, from :func:`dpdist.uncertainty.cdf_band`).
        """
        return draw_distribution(self, ax, kind=kind, **kwargs)

    @validate_params({"truth": TRUTH})
    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None, level: float = 0.95) -> Any:
        """The density of :meth:`display_density` (at most :data:`DISPLAY_BINS` equal bins) beside the CDF with its
        band, the samples ``truth`` as a histogram on the same bins and as their empirical CDF (``level``: the band's)."""
        return distribution_figure(self, label=label, truth=truth, xlabel=xlabel)

    def as_distribution(self, bounds: tuple[float, float] | None = None) -> "Distribution":
        """Itself (``bounds``, if given, must be its own)."""
        if bounds is not None:
            own = Described(Options((self.bounds,)), f"its bounds {self.bounds} or None")
            check_param("Distribution.as_distribution", "bounds", check_param("Distribution.as_distribution", "bounds",
                                                                              bounds, Bounds()), own)
        return self

    def __repr__(self):
        lo, hi = self.bounds
        return (
            f"Distribution(method={self.method!r}, epsilon={self.epsilon!r}, n={self.n}, "
            f"bounds=({lo:g}, {hi:g}), bins={self.bins})"
        )


def _sample_moments(samples: np.ndarray, distribution: Distribution) -> tuple[float, float]:
    """The samples' mean and standard deviation, circular when ``distribution`` is on a circle (as it reports its own)."""
    period = distribution.period
    if period is None:
        return float(np.mean(samples)), float(np.std(samples))
    turns = 2 * np.pi * (samples - distribution.edges[0]) / period
    resultant = np.mean(np.exp(1j * turns))
    mean = distribution.edges[0] + (np.angle(resultant) % (2 * np.pi)) * period / (2 * np.pi)
    return float(mean), float(np.sqrt(-2 * np.log(max(abs(resultant), 1e-300))) * period / (2 * np.pi))


def _valleys(density: np.ndarray) -> list[int]:
    """Where to cut a step density between its peaks: the middle bin of each interior valley (a run of equal bins
    lower than the runs on both sides; equal within 1e-9 of the highest)."""
    changes = np.flatnonzero(np.abs(np.diff(density)) > 1e-9 * max(float(np.max(density)), 1e-300)) + 1
    starts = np.r_[0, changes]
    ends = np.r_[changes, density.size]
    heights = density[starts]
    return [int((starts[j] + ends[j]) // 2) for j in range(1, starts.size - 1)
            if heights[j] < heights[j - 1] and heights[j] < heights[j + 1]]


def display_edges(distribution: Distribution, bins: int = DISPLAY_BINS) -> np.ndarray:
    """Equal bins over the distribution's bounds for drawing it (never finer than its own bins)."""
    low, high = distribution.bounds
    return np.linspace(low, high, min(bins, distribution.bins) + 1)


def draw_distribution(distribution: Distribution, ax: Any = None, *, kind: str = "pdf", **kwargs: Any) -> Any:
    """The density (``kind="pdf"``) on the distribution's own bins, or its CDF (``"cdf"``) with its band."""
    ax = axes(ax, (6, 3.5))
    label = kwargs.pop("label", distribution.method)
    if kind == "pdf":
        ax.stairs(distribution.probabilities / distribution.widths, distribution.edges, label=label, **kwargs)
        ax.set_ylabel("density")
    else:
        (line,) = ax.plot(distribution.edges, distribution.cumulative, label=label, **kwargs)
        if distribution.band is not None:
            fill_band(ax, distribution.band, line.get_color())
        ax.set_ylabel("CDF")
    ax.set_xlim(*distribution.bounds)
    if label:
        ax.legend()
    return ax


def distribution_figure(distribution: Distribution, *, label: str | None = None, truth: Any = None, xlabel: str | None = None) -> Any:
    """The density of :meth:`Distribution.display_density` beside the CDF with its band; the true values (``truth``)
    as a histogram on the very same bins (:func:`display_edges`) and as their empirical CDF."""
    figure, (density_ax, cdf_ax) = pyplot().subplots(1, 2, figsize=(10, 3.8))
    edges = display_edges(distribution)
    if truth is not None:
        heights, _ = np.histogram(truth, bins=edges)
        density_ax.stairs(heights / (truth.size * np.diff(edges)), edges, label="true", color="0.45", lw=1.6)
        ordered = np.concatenate([[edges[0]], np.sort(truth), [edges[-1]]])
        steps = np.concatenate([[0.0], np.arange(1, truth.size + 1) / truth.size, [1.0]])
        cdf_ax.step(ordered, steps, where="post", color="0.45", label="true")
    shown = distribution.display_density()
    density_ax.stairs(shown["density"], shown["edges"], label=label, color="C0", lw=1.6)
    density_ax.set_ylabel(f"density (on {shown['bins']} equal bins)")
    cdf_ax.plot(distribution.edges, distribution.cumulative, color="C0", label=label)
    if distribution.band is not None:
        fill_band(cdf_ax, distribution.band, "C0")
    cdf_ax.set_ylabel("CDF")
    cdf_ax.set_ylim(-0.02, 1.02)
    for ax in (density_ax, cdf_ax):
        ax.set_xlim(*distribution.bounds)
        ax.set_xlabel(xlabel or "value")
        ax.legend(fontsize=8)
    figure.tight_layout()
    return figure
