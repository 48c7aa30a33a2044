""":class:`FrequencyEstimate`: the estimated frequencies of the items of a categorical domain."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple, Sequence

import numpy as np

from .._types import ArrayLike
from .._validation import (
    Bounds,
    Given,
    Integer,
    Labels,
    Optional,
    RealArray,
    SameSize,
    check_param,
    check_relations,
    validate_params,
)
from ..errors import InvalidParameterError
from .._guarantee import PrivacyGuarantee
from ._presented import Presented
from ._reading import Header, numbers
from ._distribution import Distribution, readonly
from ._drawing import axes, pyplot
from ._intervals import (SHARE_CLIPPED, ConfidenceInterval, Interval, check_level, json_value, normal_quantile, percent,
                         row_with_limits, share_limits)
from ._text import frequency_lines

__all__ = ["FrequencyEstimate", "TopK", "draw_frequencies", "frequency_figure"]

#: Frequency estimates of at most this many items show every item in a table of estimates (``summary_row``).
_ALL_ITEMS = 64


class TopK(NamedTuple):
    items: np.ndarray
    frequencies: np.ndarray


#: A label domain names every item of the estimate.
_ONE_LABEL_PER_ITEM = (SameSize("labels", "frequencies", why="one label per item"),)


@validate_params({"frequencies": RealArray("a non-empty 1-D array of finite floats", ndims=(1,), min_size=1,
                                           private=True)})
@dataclass(frozen=True, repr=False)
class FrequencyEstimate(Presented):
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
    ``docs/explanation/uncertainty.md``.
    """

    kind: ClassVar[str] = "frequency"

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
        frequencies = readonly(self.frequencies)  # non-empty, 1-D, finite: the table
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
        object.__setattr__(self, "variance", readonly(variance))
        if self.interval_center is not None:
            check_param("FrequencyEstimate", "interval_center", self.interval_center, RealArray(
                f"finite floats of the frequencies' shape {frequencies.shape}", ndims=(1,), width=frequencies.size))
            object.__setattr__(self, "interval_center", readonly(self.interval_center))
        object.__setattr__(self, "n", check_param("FrequencyEstimate", "n", self.n, Integer(low=0)))
        if self.labels is not None:
            labels = check_param("FrequencyEstimate", "labels", self.labels, Labels())
            check_relations("FrequencyEstimate", {"labels": labels, "frequencies": frequencies}, _ONE_LABEL_PER_ITEM)
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
        """Columns ``item`` (and ``label`` with labels), ``frequency``, ``standard_error`` and the 95 % interval
        ``low``, ``high``.

        The interval is :meth:`confidence_interval` (centred on :attr:`interval_center` when
        there is one, so not always ``frequency +- 1.96 standard_error``; infinite: no interval).
        """
        low, high = self.confidence_interval(0.95)
        labels = {} if self.labels is None else {"label": np.array(self.labels)}
        return {"item": np.arange(self.domain_size), **labels, "frequency": self.frequencies,
                "standard_error": self.standard_error, "low": low, "high": high}

    @property
    def standard_error(self) -> np.ndarray:
        return np.sqrt(self.variance)

    @property
    def has_intervals(self) -> bool:
        """Whether every item has a finite :meth:`confidence_interval` (see ``details["no_interval"]`` if not)."""
        return bool(np.all(np.isfinite(self.variance)))

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Normal-approximation interval per item: ``c +- z * sqrt(variance)``, clipped to [0, 1].

        ``c`` is :attr:`interval_center` when the estimate has one (the unbiased
        estimate behind a biased decoding), else ``frequencies``.  A share lies in
        [0, 1], so the limits are clipped there, and the interval stays at least its
        half-width wide (:func:`._intervals.share_limits`: never a lower coverage, no
        impossible share at small n, and never [0, 0]).  Items with an infinite
        variance get ``(-inf, inf)``: no interval.
        """
        level = check_level(level, "FrequencyEstimate.confidence_interval")
        half = normal_quantile(level) * self.standard_error
        center = self.frequencies if self.interval_center is None else self.interval_center
        return share_limits(center - half, center + half)

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        """:meth:`confidence_interval` of every item, pointwise."""
        low, high = self.confidence_interval(level)
        method = "normal approximation with the estimator's analytic variance"
        if self.interval_center is not None:
            method += ", around the unbiased estimate behind the decoded one"
        method += "; " + SHARE_CLIPPED
        return (Interval("frequency", self.frequencies, low, high, level, method, at=np.arange(self.domain_size)),)

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

    # ------------------------------------------------------------------ presentation
    def _json_fields(self, level: float) -> dict[str, Any]:
        low, high = self.confidence_interval(level)
        return {
            "items": list(range(self.domain_size)),
            "labels": None if self.labels is None else list(self.labels),
            "frequencies": json_value(self.frequencies),
            "standard_error": json_value(self.standard_error),
            "postprocess": self.postprocess,
            "no_interval": None if self.has_intervals else self._no_interval_reason(),
            "band": {"level": level, "low": json_value(low), "high": json_value(high)},
        }

    @classmethod
    def _from_document(cls, document: dict[str, Any], header: Header) -> "FrequencyEstimate":
        """The estimate of a checked document (:meth:`Presented.from_dict`): the variance from the standard errors
        (``null``: none, an infinite variance), the centre of the intervals from the ``band``'s limits where they
        are not centred on the frequencies (CP's decoding)."""
        frequencies = numbers(document, "frequencies", header)
        error = numbers(document, "standard_error", header)
        variance = np.where(np.isnan(error), np.inf, error) ** 2
        band = document["band"] or {}
        low, high = (numbers(band, side, header) if isinstance(band.get(side), list) else np.zeros(0)
                     for side in ("low", "high"))
        center = None
        if low.shape == high.shape == frequencies.shape and isinstance(band.get("level"), (int, float)):
            middle = _center_of(low, high, normal_quantile(check_level(band["level"], header.owner)) * error, frequencies)
            if not np.allclose(middle, frequencies, rtol=0, atol=1e-12):
                center = middle
        no_interval = document["no_interval"]
        labels = document["labels"]
        return cls(frequencies, header.n, variance, header.epsilon, header.method, document["postprocess"],  # type: ignore[arg-type]
                   header.details(**({} if no_interval is None else {"no_interval": no_interval})), header.guarantee,
                   None if labels is None else tuple(labels), center)

    @classmethod
    def _document_lines(cls, document: dict[str, Any], intervals: list[dict], level: str) -> list[str]:
        """The most frequent values by label, each with its fixed-n and anytime interval."""
        return frequency_lines(document, intervals, level)

    def item_frequencies(self) -> tuple[np.ndarray, np.ndarray]:
        """The frequencies and their variance (:meth:`Presented.item_frequencies`)."""
        return self.frequencies, self.variance

    def summary_row(self) -> dict[str, float]:
        """Every item's frequency, by label or ``"item <i>"``, each followed by its 95% interval (``"<item> low"``,
        ``"<item> high"``, and a ``level`` column), for a domain of at most 64 items (the same columns in every row
        of a table); :meth:`summary` (the top items) for a larger one."""
        if self.domain_size > _ALL_ITEMS:
            return self.summary()
        names = [str(name) for name in (self.item_names() if self.labels is not None
                                         else [f"item {i}" for i in range(self.domain_size)])]
        low, high = self.confidence_interval(0.95)  # each followed by its 95% interval (none where infinite)
        return row_with_limits(dict(zip(names, map(float, self.frequencies))), dict(zip(names, zip(low, high))), 0.95)

    def _no_interval_reason(self) -> str:
        return str(self.details.get("no_interval", "no interval: the estimator has no variance"))

    def describe(self, truth: Any = None, level: float = 0.95, *, k: int = 10) -> str:
        """The ``k`` most frequent items with their intervals at ``level``, one per line, beside their true
        frequency when ``truth`` (the ``d`` true frequencies) is given; a last line says why when there are none."""
        truth = self._check_truth(truth, "describe")
        names = self.item_names()
        width = max(len(name) for name in names[:1000])
        items, shares = self.top_k(min(k, self.domain_size))
        low, high = self.confidence_interval(level)
        lines = []
        for item, share in zip(items.tolist(), shares.tolist()):
            interval = (f"{percent(level)} [{low[item]:.4f}, {high[item]:.4f}]" if np.isfinite(self.variance[item])
                        else "no interval")
            true = "" if truth is None else f"   (true {truth[item]:.4f})"
            lines.append(f"  {names[item]:<{width}}  {share:9.4f}  {interval}{true}")
        if not self.has_intervals:  # say why rather than print an interval that does not cover
            lines.append(f"  intervals          {self._no_interval_reason()}")
        lines.extend(f"  note               {note}" for note in self.notes())
        return "\n".join(lines)

    def _check_truth(self, truth, method: str) -> np.ndarray | None:
        if truth is None:
            return None
        return check_param(f"FrequencyEstimate.{method}", "truth", truth, RealArray(
            f"one frequency per item ({self.domain_size})", ndims=(1,), width=self.domain_size, private=True))

    def plot(self, ax: Any = None, *, k: int | None = None, level: float = 0.95, truth: Any = None, **kwargs: Any) -> Any:
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
        items = np.arange(self.domain_size) if k is None else self.top_k(k).items
        return draw_frequencies(self, ax, items=items, level=level, truth=self._check_truth(truth, "plot"),
                                **kwargs)

    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None, level: float = 0.95) -> Any:
        """Bars of every item with its ``level`` interval, the true frequencies (``truth``) as markers."""
        return frequency_figure(self, label=label, truth=self._check_truth(truth, "figure"), xlabel=xlabel, level=level)

    @validate_params({"bounds": Optional(Bounds())}, relations=(Given("bounds", why=(
        "the interval over which item i is the i-th of equal bins: a FrequencyEstimate holds frequencies of items, not "
        "a distribution of numbers; or compare it with the frequency metrics (mse, l1, ...)"),
        counterexample={"bounds": None}),))
    def as_distribution(self, bounds: tuple[float, float] | None = None) -> Distribution:
        """The items as equal bins over ``bounds`` (item ``i`` the ``i``-th bin), e.g. a numeric column binned
        for a frequency protocol; the frequencies must form a probability vector (a postprocess such as
        ``"norm-sub"``)."""
        checked: tuple[float, float] = check_param("FrequencyEstimate.as_distribution", "bounds", bounds, Bounds())
        frequencies = self.frequencies
        if frequencies.min() < 0 or abs(frequencies.sum() - 1) > 1e-6:
            raise InvalidParameterError(
                "Bin frequencies must be a probability vector to form a Distribution; use a postprocess "
                f"such as 'norm-sub'. Got minimum {frequencies.min()!r} and sum {frequencies.sum()!r}."
            )
        return Distribution.uniform_bins(
            frequencies, checked, method=f"{self.protocol}-binning", epsilon=self.epsilon, n=self.n,
            details={"postprocess": self.postprocess}, guarantee=self.guarantee,
        )

    def __repr__(self):
        return (
            f"FrequencyEstimate(protocol={self.protocol!r}, epsilon={self.epsilon!r}, n={self.n}, "
            f"domain_size={self.domain_size}, postprocess={self.postprocess!r})"
        )


def _center_of(low: np.ndarray, high: np.ndarray, half: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """A centre ``c`` whose limits of a share (:func:`._intervals.share_limits` of ``c +- half``) are ``low``,
    ``high`` (a document's band): from a limit that is the interval's own (inside (0, 1), off the half-width floor),
    else the frequency moved as little as the limits need (they are the same for every such centre: at most 0 where
    the interval is [0, half], at least 1 where it is [1 - half, 1]); the frequency where there is no interval (NaN
    limits)."""
    tolerance = 1e-12
    own_low = (low > 0) & (low < 1 - half - tolerance)  # low = c - half
    own_high = (high < 1) & (high > half + tolerance)  # high = c + half
    center = np.where(own_low, low + half, np.where(own_high, high - half, frequencies))
    floor = ~own_low & ~own_high & (low <= 0) & (high < 1)  # [0, half]: any c <= 0
    ceiling = ~own_low & ~own_high & (high >= 1) & (low > 0)  # [1 - half, 1]: any c >= 1
    center = np.where(floor, np.minimum(frequencies, 0.0), np.where(ceiling, np.maximum(frequencies, 1.0), center))
    spans = (low <= 0) & (high >= 1)  # over all of [0, 1]
    return np.where(spans, np.clip(frequencies, np.minimum(1 - half, half), half), center)


def draw_frequencies(estimate: FrequencyEstimate, ax: Any = None, *, items: ArrayLike | None = None, level: float = 0.95, truth: Any = None, **kwargs: Any) -> Any:
    """Bars of ``estimate.frequencies[items]`` with their ``level`` intervals as segments, ``truth`` as markers.

    Segments, not error bars: an interval need not contain the point estimate (CP's is centred on
    the unbiased estimate behind its decoding).  Without intervals the title says why.
    """
    items = np.arange(estimate.domain_size) if items is None else np.asarray(items)
    ax = axes(ax, (max(6, min(16, 0.35 * items.size + 2)), 3.8))
    positions = np.arange(items.size)
    label = kwargs.pop("label", estimate.protocol)
    color, interval_color = kwargs.pop("color", "C0"), kwargs.pop("ecolor", "0.3")
    ax.bar(positions, estimate.frequencies[items], label=label or None, color=color, **kwargs)
    if estimate.has_intervals:
        low, high = estimate.confidence_interval(level)
        ax.vlines(positions, low[items], high[items], color=interval_color, label=f"{percent(level)} interval")
    else:
        reason = estimate.details.get("no_interval", "the estimator has no variance")
        ax.set_title(f"no interval: {reason}", fontsize=8)
    if truth is not None:
        ax.plot(positions, truth[items], "_", color="k", markersize=14, mew=2, label="true")
    if items.size <= 60:
        names = [estimate.item_names()[item] for item in items]
        rotate = items.size > 8
        ax.set_xticks(positions, names, rotation=45 if rotate else 0, ha="right" if rotate else "center")
    ax.set_xlabel("item")
    ax.set_ylabel("frequency")
    if label or truth is not None:
        ax.legend(fontsize=8)
    return ax


def frequency_figure(estimate: FrequencyEstimate, *, label: str | None = None, truth: Any = None, xlabel: str | None = None,
                     level: float = 0.95) -> Any:
    """Every item's bar and interval (:func:`draw_frequencies`) on a figure sized to the domain."""
    figure, ax = pyplot().subplots(figsize=(max(6, min(16, 0.35 * estimate.domain_size + 2)), 3.8))
    draw_frequencies(estimate, ax, level=level, truth=truth, label=label)
    ax.set_xlabel(xlabel or "item")
    figure.tight_layout()
    return figure
