"""Result objects: :class:`FrequencyEstimate` (categorical), :class:`Distribution` (numerical),
:class:`MeanEstimate` and :class:`MeanVarianceEstimate`.

All are immutable, carry what produced them (method, n, epsilon and the privacy
guarantee) and meet one result protocol, :class:`Estimate`, so a caller (the CLI,
a plot, the runner) can report any of them without asking which one it holds.
"""

from __future__ import annotations

import dataclasses
import math
from statistics import NormalDist
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, Sequence, runtime_checkable

import numpy as np

from ._rng import check_rng
from ._validation import Integer, Labels, check_param
from .errors import InvalidParameterError
from .privacy import PrivacyGuarantee, parallel
from ._types import ArrayLike, FloatBounds, Seed

__all__ = [
    "Estimate",
    "FrequencyEstimate",
    "Distribution",
    "MeanEstimate",
    "MeanVarianceEstimate",
    "ConfidenceInterval",
    "TopK",
    "HeavyHitters",
]


class ConfidenceInterval(NamedTuple):
    low: Any  # an array (one bound per item) or a float (a mean's)
    high: Any


class TopK(NamedTuple):
    items: np.ndarray
    frequencies: np.ndarray


@runtime_checkable
class Estimate(Protocol):
    """What every ``estimate`` returns: the result contract callers rely on.

    Attributes
    ----------
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
    """

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


def _check_level(level: float, owner: str) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or not 0 < level < 1:
        raise InvalidParameterError(
            f"The 'level' parameter of {owner} must be a float in (0, 1). Got {level!r} instead."
        )
    return float(level)


def _readonly(array) -> np.ndarray:
    array = np.array(array, dtype=np.float64)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, repr=False)
class FrequencyEstimate:
    """Estimated frequencies of the items ``0 .. d-1`` of a categorical domain.

    Attributes
    ----------
    frequencies : ndarray of shape (d,)
        Estimated frequency of each item (after any post-processing).
    n : int
        Number of reports the estimate is based on.
    variance : ndarray of shape (d,)
        Analytic variance of each item's plain unbiased estimator (before any
        post-processing or deconvolution), with the estimated frequencies
        plugged in.
    epsilon : float or None
        Privacy budget of the protocol that produced the reports.
    protocol : str or None
        Registry name of that protocol.
    postprocess : str
        Name of the post-processing applied (``"none"`` for the raw unbiased
        estimate).
    details : dict
        Method-specific extras (e.g. a convergence trace).
    guarantee : PrivacyGuarantee or None
        The privacy guarantee of the reports (the protocol's ``guarantee``).
    labels : tuple of str or None
        The public label of each item, when the protocol has a label domain.
    interval_center : ndarray of shape (d,) or None
        The unbiased estimate that ``variance`` is the variance of, when the
        point estimate ``frequencies`` is a biased decoding of it (CP's sparse
        recovery): :meth:`confidence_interval` is centred on it.  ``None``: on
        ``frequencies``.

    Notes
    -----
    An infinite ``variance`` means no interval: the estimator has none that
    covers (``details["no_interval"]`` says why, e.g. CP with fewer
    measurements than items, whose frequencies are not identified without a
    sparsity assumption).  Coverage of the intervals is measured in
    ``docs/uncertainty.md``.
    """

    frequencies: np.ndarray
    n: int
    variance: np.ndarray
    epsilon: float | None = None
    protocol: str | None = None
    postprocess: str = "none"
    details: dict = field(default_factory=dict)
    guarantee: PrivacyGuarantee | None = None
    labels: tuple | None = None
    interval_center: np.ndarray | None = None

    def __post_init__(self):
        frequencies = _readonly(self.frequencies)
        if frequencies.ndim != 1 or frequencies.size == 0 or not np.all(np.isfinite(frequencies)):
            raise InvalidParameterError(
                "The 'frequencies' parameter of FrequencyEstimate must be a non-empty 1-D array of "
                f"finite floats. Got shape {frequencies.shape} instead."
            )
        try:
            variance = np.broadcast_to(np.asarray(self.variance, dtype=np.float64), frequencies.shape)
        except ValueError:
            variance = None
        if variance is None or not np.all(variance >= 0):
            raise InvalidParameterError(
                "The 'variance' parameter of FrequencyEstimate must be non-negative floats of the "
                f"frequencies' shape {frequencies.shape}. Got {self.variance!r:.200} instead."
            )
        object.__setattr__(self, "frequencies", frequencies)
        object.__setattr__(self, "variance", _readonly(variance))
        if self.interval_center is not None:
            center = _readonly(self.interval_center)
            if center.shape != frequencies.shape or not np.all(np.isfinite(center)):
                raise InvalidParameterError(
                    "The 'interval_center' parameter of FrequencyEstimate must be finite floats of the "
                    f"frequencies' shape {frequencies.shape}. Got {self.interval_center!r:.200} instead."
                )
            object.__setattr__(self, "interval_center", center)
        object.__setattr__(self, "n", check_param("FrequencyEstimate", "n", self.n, Integer(low=0)))
        if self.labels is not None:
            labels = check_param("FrequencyEstimate", "labels", self.labels, Labels())
            if len(labels) != frequencies.size:
                raise InvalidParameterError(
                    f"The 'labels' parameter of FrequencyEstimate must hold one label per item "
                    f"({frequencies.size}). Got {len(labels)} instead."
                )
            object.__setattr__(self, "labels", labels)

    def with_labels(self, labels: Sequence[str]) -> "FrequencyEstimate":
        """The same estimate with a label for each item."""
        return dataclasses.replace(self, labels=tuple(labels))

    @property
    def domain_size(self) -> int:
        return self.frequencies.shape[0]

    def item_names(self) -> list[str]:
        """The label of each item, or its number as a string when there are no labels."""
        return list(self.labels) if self.labels is not None else [str(i) for i in range(self.domain_size)]

    def by_label(self) -> dict[str, float]:
        """``{label: frequency}`` for every item (item numbers as strings without labels)."""
        return dict(zip(self.item_names(), self.frequencies.tolist()))

    def top_labels(self, k: int) -> list[tuple[str, float]]:
        """``[(label, frequency), ...]`` of the ``k`` most frequent items, largest first (see :meth:`top_k`)."""
        items, frequencies = self.top_k(k)
        names = self.item_names()
        return [(names[item], float(share)) for item, share in zip(items, frequencies)]

    @property
    def method(self) -> str | None:
        """The registry name of the protocol (the :class:`Estimate` name of ``protocol``)."""
        return self.protocol

    def summary(self, k: int = 5) -> dict[str, float]:
        """The ``k`` most frequent items' estimates (largest first), named by label or ``"item <i>"``."""
        pairs = self.top_labels(min(k, self.domain_size))
        return {(name if self.labels is not None else f"item {name}"): share for name, share in pairs}

    def table(self) -> dict[str, np.ndarray]:
        """Columns ``item``, ``frequency``, ``standard_error`` and the 95 % interval ``low``, ``high``.

        The interval is :meth:`confidence_interval` (centred on :attr:`interval_center` when
        there is one, so not always ``frequency +- 1.96 standard_error``; infinite: no interval).
        """
        low, high = self.confidence_interval(0.95)
        return {"item": np.arange(self.domain_size), "frequency": self.frequencies, "standard_error": self.standard_error,
                "low": low, "high": high}

    @property
    def standard_error(self) -> np.ndarray:
        return np.sqrt(self.variance)

    @property
    def has_intervals(self) -> bool:
        """Whether every item has a finite :meth:`confidence_interval` (see ``details["no_interval"]`` if not)."""
        return bool(np.all(np.isfinite(self.variance)))

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Normal-approximation interval per item: ``c +- z * sqrt(variance)``.

        ``c`` is :attr:`interval_center` when the estimate has one (the unbiased
        estimate behind a biased decoding), else ``frequencies``.  Items with an
        infinite variance get ``(-inf, inf)``: no interval.
        """
        level = _check_level(level, "FrequencyEstimate.confidence_interval")
        z = NormalDist().inv_cdf(0.5 + level / 2)
        half = z * self.standard_error
        center = self.frequencies if self.interval_center is None else self.interval_center
        return ConfidenceInterval(center - half, center + half)

    def top_k(self, k: int) -> TopK:
        """The ``k`` items with the largest estimated frequency, largest first (ties by item)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= self.domain_size:
            raise InvalidParameterError(
                f"The 'k' parameter of FrequencyEstimate.top_k must be an int in [1, {self.domain_size}]. "
                f"Got {k!r} instead."
            )
        order = np.argsort(-self.frequencies, kind="stable")[:k]
        return TopK(order, self.frequencies[order])

    # ------------------------------------------------------------------ as an array of frequencies
    def __len__(self) -> int:
        """The number of items ``d`` (``len(estimate) == estimate.domain_size``)."""
        return self.domain_size

    def __array__(self, dtype=None, copy=None):
        """``np.asarray(estimate)`` is the (read-only) frequency vector."""
        if copy:
            return np.array(self.frequencies, dtype=dtype)
        return self.frequencies if dtype is None else self.frequencies.astype(dtype, copy=False)

    def __getitem__(self, key):
        """The frequency of an item: ``estimate[3]``, a slice or an index array, or a label (``estimate["home"]``)."""
        if isinstance(key, str):
            names = self.item_names() if self.labels is not None else None
            if names is None or key not in names:
                raise KeyError(
                    f"{key!r} is not a label of this estimate"
                    + ("" if self.labels is not None else " (it has no labels: index it by item number)")
                )
            return float(self.frequencies[names.index(key)])
        value = self.frequencies[key]
        return float(value) if np.ndim(value) == 0 else value

    def plot(self, ax: Any = None, *, k: int | None = None, level: float = 0.95, truth: ArrayLike | None = None, **kwargs: Any) -> Any:
        """Bars of the estimated frequencies with their ``level`` intervals; returns the axes.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Axes to draw on (default: a new figure).
        k : int, optional
            Only the ``k`` most frequent items, largest first (default: every item, in item order).
        level : float
            Confidence level of the error bars (normal approximation, :meth:`confidence_interval`).
        truth : array_like, optional
            True frequencies of the ``d`` items, drawn as markers.
        """
        import matplotlib.pyplot as plt

        items = np.arange(self.domain_size) if k is None else self.top_k(k).items
        if truth is not None:
            truth = np.asarray(truth, dtype=np.float64)
            if truth.shape != (self.domain_size,):
                raise InvalidParameterError(
                    f"The 'truth' parameter of FrequencyEstimate.plot must hold one frequency per item "
                    f"({self.domain_size}). Got shape {truth.shape} instead."
                )
        if ax is None:
            _, ax = plt.subplots(figsize=(max(6, min(16, 0.35 * items.size + 2)), 3.8))
        positions = np.arange(items.size)
        shares = self.frequencies[items]
        label = kwargs.pop("label", self.protocol)
        color, interval_color = kwargs.pop("color", "C0"), kwargs.pop("ecolor", "0.3")
        ax.bar(positions, shares, label=label or None, color=color, **kwargs)
        if self.has_intervals:  # segments, not error bars: an interval need not contain the point estimate (CP)
            low, high = self.confidence_interval(level)
            ax.vlines(positions, low[items], high[items], color=interval_color, label=f"{level:.0%} interval")
        else:
            ax.set_title("no interval: " + str(self.details.get("no_interval", "the estimator has no variance")),
                         fontsize=8)
        if truth is not None:
            ax.plot(positions, truth[items], "_", color="k", markersize=14, mew=2, label="true")
        names = [self.item_names()[item] for item in items]
        if items.size <= 60:
            rotate = items.size > 8
            ax.set_xticks(positions, names, rotation=45 if rotate else 0, ha="right" if rotate else "center")
        ax.set_xlabel("item")
        ax.set_ylabel("frequency")
        if label or truth is not None:
            ax.legend(fontsize=8)
        return ax

    def __repr__(self):
        return (
            f"FrequencyEstimate(protocol={self.protocol!r}, epsilon={self.epsilon!r}, n={self.n}, "
            f"domain_size={self.domain_size}, postprocess={self.postprocess!r})"
        )


@dataclass(frozen=True, repr=False)
class Distribution:
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
        Method-specific extras (budget split, convergence trace, ...).
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

    def __post_init__(self) -> None:
        edges = np.asarray(self.edges, dtype=np.float64)
        probabilities = np.asarray(self.probabilities, dtype=np.float64)
        if edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
            raise InvalidParameterError(
                "The 'edges' parameter of Distribution must be a 1-D array of at least 2 finite, "
                f"strictly increasing floats. Got {edges!r} instead."
            )
        if probabilities.shape != (edges.size - 1,):
            raise InvalidParameterError(
                f"The 'probabilities' parameter of Distribution must have shape ({edges.size - 1},) "
                f"to match 'edges'. Got shape {probabilities.shape} instead."
            )
        total = probabilities.sum()
        if not np.all(np.isfinite(probabilities)) or probabilities.min() < -1e-12 or abs(total - 1) > 1e-6:
            raise InvalidParameterError(
                "The 'probabilities' parameter of Distribution must be non-negative and sum to 1. "
                f"Got minimum {probabilities.min()!r} and sum {total!r} instead."
            )
        probabilities = np.clip(probabilities, 0, None)
        probabilities = probabilities / probabilities.sum()
        object.__setattr__(self, "edges", _readonly(edges))
        object.__setattr__(self, "probabilities", _readonly(probabilities))
        cumulative = np.concatenate([[0.0], np.cumsum(probabilities)])
        cumulative[-1] = 1.0
        object.__setattr__(self, "_cumulative", _readonly(cumulative))

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_cdf(cls, edges: ArrayLike, cdf_values: ArrayLike, **kwargs: Any) -> "Distribution":
        """Build from CDF values at ``edges`` (non-decreasing from 0 to 1)."""
        cdf_values = np.asarray(cdf_values, dtype=np.float64)
        if cdf_values.ndim != 1 or np.any(np.diff(cdf_values) < -1e-12):
            raise InvalidParameterError(
                "The 'cdf_values' parameter of Distribution.from_cdf must be a non-decreasing 1-D array "
                f"(one value per edge). Got {cdf_values!r:.200} instead."
            )
        return cls(np.asarray(edges), np.diff(cdf_values), **kwargs)

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
    def cumulative(self) -> np.ndarray:
        """CDF at the edges (length ``bins + 1``, from 0 to 1)."""
        return self._cumulative

    # ------------------------------------------------------------------ functions
    def pdf(self, x: ArrayLike) -> np.ndarray:
        """Density at ``x`` (0 outside bounds; right-continuous at inner edges)."""
        x = np.asarray(x, dtype=np.float64)
        index = np.searchsorted(self.edges, x, side="right") - 1
        inside = (x >= self.edges[0]) & (x <= self.edges[-1])
        index = np.clip(index, 0, self.bins - 1)
        return np.where(inside, self.probabilities[index] / self.widths[index], 0.0)

    def cdf(self, x: ArrayLike) -> np.ndarray:
        """CDF at ``x``: linear within bins, 0 below and 1 above ``bounds``."""
        return np.interp(np.asarray(x, dtype=np.float64), self.edges, self._cumulative, left=0.0, right=1.0)

    def quantile(self, q: ArrayLike) -> np.ndarray:
        """Smallest ``x`` with ``cdf(x) >= q`` (the generalized inverse), for ``q`` in [0, 1]."""
        q = np.asarray(q, dtype=np.float64)
        if np.any(~np.isfinite(q)) or np.any((q < 0) | (q > 1)):
            raise InvalidParameterError(
                f"The 'q' parameter of Distribution.quantile must lie in [0, 1]. Got {q!r} instead."
            )
        cumulative = self._cumulative
        index = np.clip(np.searchsorted(cumulative, q, side="left"), 1, self.bins)
        lower = cumulative[index - 1]
        mass = self.probabilities[index - 1]
        fraction = np.divide(q - lower, mass, out=np.zeros_like(q), where=mass > 0)
        return self.edges[index - 1] + np.clip(fraction, 0, 1) * self.widths[index - 1]

    def mean(self) -> float:
        midpoints = (self.edges[:-1] + self.edges[1:]) / 2
        return float(np.dot(self.probabilities, midpoints))

    def var(self) -> float:
        """Variance of the piecewise-uniform density (includes the within-bin ``w^2/12``)."""
        midpoints = (self.edges[:-1] + self.edges[1:]) / 2
        second = np.dot(self.probabilities, midpoints**2 + self.widths**2 / 12)
        return float(max(second - self.mean() ** 2, 0.0))

    def summary(self) -> dict[str, float]:
        """``mean``, ``std`` and ``median`` of the piecewise-uniform density."""
        return {"mean": self.mean(), "std": math.sqrt(self.var()), "median": float(self.quantile(0.5))}

    def table(self) -> dict[str, np.ndarray]:
        """Columns ``low``, ``high``, ``probability`` (of each bin) and ``cdf`` (at its right edge).

        With a :attr:`band` (on the same edges) also ``cdf_lower``, ``cdf_upper`` (pointwise)
        and ``cdf_simultaneous_lower``, ``cdf_simultaneous_upper`` at the right edge.
        """
        table = {
            "low": self.edges[:-1], "high": self.edges[1:], "probability": self.probabilities, "cdf": self._cumulative[1:]
        }
        if self.band is not None and np.shape(self.band.edges) == self.edges.shape:
            for column, name in (("cdf_lower", "lower"), ("cdf_upper", "upper"),
                                 ("cdf_simultaneous_lower", "simultaneous_lower"),
                                 ("cdf_simultaneous_upper", "simultaneous_upper")):
                table[column] = np.asarray(getattr(self.band, name))[1:]
        return table

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

    def plot(self, ax: Any = None, *, kind: str = "pdf", **kwargs: Any) -> Any:
        """Plot the density (``kind="pdf"``) or the CDF (``kind="cdf"``); returns the axes.

        A CDF plot draws the confidence bands when the estimate has them
        (:attr:`band`, from :func:`dpdist.uncertainty.cdf_band`).
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 3.5))
        label = kwargs.pop("label", self.method)
        if kind == "pdf":
            heights = self.probabilities / self.widths
            ax.stairs(heights, self.edges, label=label, **kwargs)
            ax.set_ylabel("density")
        elif kind == "cdf":
            (line,) = ax.plot(self.edges, self._cumulative, label=label, **kwargs)
            if self.band is not None:
                percent = f"{100 * self.band.level:g}%"
                ax.fill_between(
                    self.band.edges, self.band.simultaneous_lower, self.band.simultaneous_upper,
                    color=line.get_color(), alpha=0.15, linewidth=0, label=f"{percent} simultaneous band",
                )
                ax.fill_between(
                    self.band.edges, self.band.lower, self.band.upper,
                    color=line.get_color(), alpha=0.3, linewidth=0, label=f"{percent} pointwise band",
                )
            ax.set_ylabel("CDF")
        else:
            raise InvalidParameterError(
                f"The 'kind' parameter of Distribution.plot must be 'pdf' or 'cdf'. Got {kind!r} instead."
            )
        ax.set_xlim(*self.bounds)
        if label:
            ax.legend()
        return ax

    def __repr__(self):
        lo, hi = self.bounds
        return (
            f"Distribution(method={self.method!r}, epsilon={self.epsilon!r}, n={self.n}, "
            f"bounds=({lo:g}, {hi:g}), bins={self.bins})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "edges": self.edges.tolist(),
            "probabilities": self.probabilities.tolist(),
            "method": self.method,
            "epsilon": self.epsilon,
            "n": self.n,
            "guarantee": None if self.guarantee is None else self.guarantee.to_dict(),
            "band": None if self.band is None else self.band.to_dict(),
        }

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as JSON text (``kwargs`` go to :func:`json.dumps`, e.g. ``indent=2``)."""
        import json

        return json.dumps(self.to_dict(), **kwargs)


@dataclass(frozen=True)
class MeanEstimate:
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
        level = _check_level(level, "MeanEstimate.confidence_interval")
        half = NormalDist().inv_cdf(0.5 + level / 2) * self.standard_error
        return ConfidenceInterval(self.mean - half, self.mean + half)

    def summary(self) -> dict[str, float]:
        """``mean`` and its ``standard_error``."""
        return {"mean": float(self.mean), "standard_error": self.standard_error}

    def table(self) -> dict[str, np.ndarray]:
        """One row: ``mean``, ``standard_error``."""
        return {name: np.array([value]) for name, value in self.summary().items()}


@dataclass(frozen=True)
class MeanVarianceEstimate:
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


@dataclass(frozen=True)
class HeavyHitters:
    """The heavy hitters a ``pem`` collection found, most frequent first, with their estimated frequencies.

    ``labels`` are the words (for a protocol over words), ``standard_error`` the
    last round's (FLH's variance at the estimate), ``details`` the rounds.
    """

    items: np.ndarray
    frequencies: np.ndarray
    n: int
    epsilon: float
    labels: list[str] | None = None
    guarantee: PrivacyGuarantee | None = None
    standard_error: np.ndarray | None = None
    details: dict = field(default_factory=dict)
    method: str = "pem"

    @property
    def names(self) -> list[str]:
        """The items' words (for words) or their integers as text."""
        return self.labels if self.labels is not None else [str(i) for i in self.items.tolist()]

    def summary(self) -> dict[str, float]:
        return {name: float(f) for name, f in zip(self.names, self.frequencies)}

    def table(self) -> dict[str, np.ndarray]:
        table = {"item": self.items, "frequency": self.frequencies}
        if self.standard_error is not None:
            table["standard_error"] = self.standard_error
        if self.labels is not None:
            table["label"] = np.array(self.labels)
        return table
