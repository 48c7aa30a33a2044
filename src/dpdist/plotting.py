"""Figures of estimates with matplotlib: what ``--plot``, the service's ``estimate.png`` and ``dpdist demo`` draw.

Every result draws itself (``estimate.figure(...)``, ``estimate.plot(ax)``, the result
contract :class:`dpdist.estimates.Estimate`); the functions here are how, one per kind,
so that the CLI, the service and the demo draw an estimate the same way and none of them
asks which kind it holds.  :func:`save_estimate` writes an estimate's figure to a file (or
a binary stream) without a display; :func:`small_multiples` lays out the demo's panels.

matplotlib is imported on first use (``import dpdist`` stays light); nothing here imports
the result classes, which call in.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, BinaryIO, Sequence

import numpy as np

from ._types import ArrayLike, PathLike

if TYPE_CHECKING:
    from .estimates import (
        Distribution,
        Estimate,
        FrequencyEstimate,
        HeavyHitters,
        MeanEstimate,
        QuantileRelease,
    )

__all__ = [
    "DISPLAY_BINS",
    "display_edges",
    "save_estimate",
    "save_figure",
    "headless",
    "draw_frequencies",
    "frequency_figure",
    "draw_distribution",
    "distribution_figure",
    "draw_heavy_hitters",
    "heavy_hitters_figure",
    "draw_mean",
    "mean_figure",
    "draw_quantiles",
    "quantiles_figure",
    "small_multiples",
    "label_bottom_panels",
    "panel_grid",
    "draw_heatmap",
]

#: At most this many bins in a plotted density: the truth and the estimate are drawn on the
#: same bins, coarse enough that a histogram of the data is not a forest of spikes.
DISPLAY_BINS = 40

_PYPLOT = threading.Lock()  # pyplot keeps global state: one figure at a time per process


def _pyplot():
    import matplotlib.pyplot as plt

    return plt


def _percent(level: float) -> str:
    return f"{round(level * 100, 6):g}%"


def headless() -> None:
    """Draw without a display (matplotlib's Agg backend), as the CLI, the service and the demo do."""
    import matplotlib

    matplotlib.use("Agg", force=False)


def save_figure(figure: Any, path: PathLike | BinaryIO, **kwargs: Any) -> None:
    """Write ``figure`` to ``path`` (a file name or a binary stream; ``kwargs`` go to ``savefig``) and close it."""
    figure.savefig(path, **kwargs)
    _pyplot().close(figure)


def save_estimate(estimate: Estimate, path: PathLike | BinaryIO, *, label: str | None = None, truth: Any = None, xlabel: str | None = None,
                  level: float = 0.95) -> None:
    """Write ``estimate.figure(...)`` to ``path`` (a file name or a binary stream) without a display.

    What ``dpdist estimate --plot``, ``dpdist campaign estimate --plot`` and the service's
    ``GET .../estimate.png`` draw; one figure at a time per process (pyplot is not thread-safe).
    """
    headless()
    with _PYPLOT:
        save_figure(estimate.figure(label=label, truth=truth, xlabel=xlabel, level=level), path)


def display_edges(distribution: Distribution, bins: int = DISPLAY_BINS) -> np.ndarray:
    """Equal bins over the distribution's bounds for drawing it (never finer than its own bins)."""
    low, high = distribution.bounds
    return np.linspace(low, high, min(bins, distribution.bins) + 1)


def _axes(ax, figsize):
    if ax is None:
        _, ax = _pyplot().subplots(figsize=figsize)
    return ax


# ---------------------------------------------------------------------- frequencies
def draw_frequencies(estimate: FrequencyEstimate, ax: Any = None, *, items: ArrayLike | None = None, level: float = 0.95, truth: Any = None, **kwargs: Any) -> Any:
    """Bars of ``estimate.frequencies[items]`` with their ``level`` intervals as segments, ``truth`` as markers.

    Segments, not error bars: an interval need not contain the point estimate (CP's is centred on
    the unbiased estimate behind its decoding).  Without intervals the title says why.
    """
    items = np.arange(estimate.domain_size) if items is None else np.asarray(items)
    ax = _axes(ax, (max(6, min(16, 0.35 * items.size + 2)), 3.8))
    positions = np.arange(items.size)
    label = kwargs.pop("label", estimate.protocol)
    color, interval_color = kwargs.pop("color", "C0"), kwargs.pop("ecolor", "0.3")
    ax.bar(positions, estimate.frequencies[items], label=label or None, color=color, **kwargs)
    if estimate.has_intervals:
        low, high = estimate.confidence_interval(level)
        ax.vlines(positions, low[items], high[items], color=interval_color, label=f"{_percent(level)} interval")
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
    figure, ax = _pyplot().subplots(figsize=(max(6, min(16, 0.35 * estimate.domain_size + 2)), 3.8))
    draw_frequencies(estimate, ax, level=level, truth=truth, label=label)
    ax.set_xlabel(xlabel or "item")
    figure.tight_layout()
    return figure


# ---------------------------------------------------------------------- distributions
def _fill_band(ax, band, color) -> None:
    """The simultaneous band (light) and the pointwise band (darker) of a CDF."""
    percent = _percent(band.level)
    ax.fill_between(band.edges, band.simultaneous_lower, band.simultaneous_upper, color=color, alpha=0.15,
                    linewidth=0, label=f"{percent} simultaneous band")
    ax.fill_between(band.edges, band.lower, band.upper, color=color, alpha=0.3, linewidth=0,
                    label=f"{percent} pointwise band")


def draw_distribution(distribution: Distribution, ax: Any = None, *, kind: str = "pdf", **kwargs: Any) -> Any:
    """The density (``kind="pdf"``) on the distribution's own bins, or its CDF (``"cdf"``) with its band."""
    ax = _axes(ax, (6, 3.5))
    label = kwargs.pop("label", distribution.method)
    if kind == "pdf":
        ax.stairs(distribution.probabilities / distribution.widths, distribution.edges, label=label, **kwargs)
        ax.set_ylabel("density")
    else:
        (line,) = ax.plot(distribution.edges, distribution.cumulative, label=label, **kwargs)
        if distribution.band is not None:
            _fill_band(ax, distribution.band, line.get_color())
        ax.set_ylabel("CDF")
    ax.set_xlim(*distribution.bounds)
    if label:
        ax.legend()
    return ax


def distribution_figure(distribution: Distribution, *, label: str | None = None, truth: Any = None, xlabel: str | None = None) -> Any:
    """The density on :func:`display_edges` beside the CDF with its band; the true values (``truth``) as a
    histogram on the very same bins and as their empirical CDF."""
    figure, (density_ax, cdf_ax) = _pyplot().subplots(1, 2, figsize=(10, 3.8))
    edges = display_edges(distribution)
    if truth is not None:
        heights, _ = np.histogram(truth, bins=edges)
        density_ax.stairs(heights / (truth.size * np.diff(edges)), edges, label="true", color="0.45", lw=1.6)
        ordered = np.concatenate([[edges[0]], np.sort(truth), [edges[-1]]])
        steps = np.concatenate([[0.0], np.arange(1, truth.size + 1) / truth.size, [1.0]])
        cdf_ax.step(ordered, steps, where="post", color="0.45", label="true")
    density_ax.stairs(np.diff(distribution.cdf(edges)) / np.diff(edges), edges, label=label, color="C0", lw=1.6)
    density_ax.set_ylabel(f"density (on {edges.size - 1} equal bins)")
    cdf_ax.plot(distribution.edges, distribution.cumulative, color="C0", label=label)
    if distribution.band is not None:
        _fill_band(cdf_ax, distribution.band, "C0")
    cdf_ax.set_ylabel("CDF")
    cdf_ax.set_ylim(-0.02, 1.02)
    for ax in (density_ax, cdf_ax):
        ax.set_xlim(*distribution.bounds)
        ax.set_xlabel(xlabel or "value")
        ax.legend(fontsize=8)
    figure.tight_layout()
    return figure


# ---------------------------------------------------------------------- heavy hitters
def draw_heavy_hitters(found: HeavyHitters, ax: Any = None, *, level: float = 0.95, **kwargs: Any) -> Any:
    """Horizontal bars of the items found, most frequent on top, with their simultaneous intervals."""
    ax = _axes(ax, (7, max(2.5, 0.3 * found.items.size + 1.2)))
    rows = np.arange(found.items.size)[::-1]
    frequencies = np.asarray(found.frequencies, dtype=np.float64)
    errors = None
    if found.standard_error is not None:
        low, high = found.confidence_interval(level)
        errors = np.vstack([frequencies - low, high - frequencies])
    label = kwargs.pop("label", found.method)
    ax.barh(rows, frequencies, xerr=errors, color=kwargs.pop("color", "C0"), ecolor="0.3",
            label=f"{label} ({_percent(level)} simultaneous interval)", **kwargs)
    ax.set_yticks(rows, found.names)
    ax.set_xlabel("estimated frequency")
    ax.legend(fontsize=8)
    return ax


def heavy_hitters_figure(found: HeavyHitters, *, label: str | None = None, level: float = 0.95) -> Any:
    """:func:`draw_heavy_hitters` on a figure sized to the items found."""
    figure, ax = _pyplot().subplots(figsize=(7, max(2.5, 0.3 * found.items.size + 1.2)))
    draw_heavy_hitters(found, ax, level=level, label=label or found.method)
    figure.tight_layout()
    return figure


# ---------------------------------------------------------------------- means
def draw_mean(estimate: MeanEstimate, ax: Any = None, *, level: float = 0.95, truth: Any = None, **kwargs: Any) -> Any:
    """The mean as a point with its ``level`` interval on the axis of its bounds; the true values' mean as a line."""
    ax = _axes(ax, (6, 1.8))
    low, high = estimate.confidence_interval(level)
    label = kwargs.pop("label", estimate.method)
    ax.errorbar([estimate.mean], [0.0], xerr=[[estimate.mean - low], [high - estimate.mean]], fmt="o", capsize=4,
                color=kwargs.pop("color", "C0"), label=f"{label}: mean, {_percent(level)} interval", **kwargs)
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
    figure, ax = _pyplot().subplots(figsize=(6, 1.8))
    draw_mean(estimate, ax, level=level, truth=truth, label=label or estimate.method)
    ax.set_xlabel(xlabel or "value")
    figure.tight_layout()
    return figure


# ---------------------------------------------------------------------- quantiles
def draw_quantiles(release: QuantileRelease, ax: Any = None, **kwargs: Any) -> Any:
    """The released quantiles as points at their probabilities, their intervals (if any) as segments."""
    ax = _axes(ax, (7, 4))
    label = kwargs.pop("label", "private quantiles")
    ax.scatter(release.values, release.q, color=kwargs.pop("color", "C3"), zorder=3, label=label, **kwargs)
    if release.low is not None:
        ax.hlines(release.q, release.low, release.high, color="C3", alpha=0.6,
                  label=f"{_percent(release.level)} intervals")
    ax.set_ylim(0, 1)
    ax.set_ylabel("cumulative probability")
    ax.legend(loc="lower right")
    return ax


def quantiles_figure(release: QuantileRelease, *, label: str | None = None, xlabel: str | None = None) -> Any:
    """:func:`draw_quantiles` on a figure of its own."""
    figure, ax = _pyplot().subplots(figsize=(7, 4))
    draw_quantiles(release, ax, label=label or f"{release.method} quantiles")
    ax.set_xlabel(xlabel or "value")
    figure.tight_layout()
    return figure


# ---------------------------------------------------------------------- two-way tables
def draw_heatmap(table: ArrayLike, error: ArrayLike, ax: Any = None, *, row_labels: Sequence[str] | None = None,
                 column_labels: Sequence[str] | None = None, row_name: str = "", column_name: str = "",
                 **kwargs: Any) -> Any:
    """A two-way table of frequencies as a heat map, each cell annotated ``f`` and ``+- se`` (when at most 144 cells).

    ``error``: the standard error of each cell (``inf``: no interval, shown as ``n/a``).
    """
    table = np.asarray(table, dtype=np.float64)
    error = np.asarray(error, dtype=np.float64)
    rows, columns = table.shape
    ax = _axes(ax, (min(12, 1.2 + 0.7 * columns), min(10, 1.0 + 0.5 * rows)))
    image = ax.imshow(table, cmap=kwargs.pop("cmap", "viridis"), aspect="auto", **kwargs)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="frequency")
    if rows * columns <= 144:
        for row in range(rows):
            for column in range(columns):
                spread = "n/a" if not np.isfinite(error[row, column]) else f"{error[row, column]:.3f}"
                ax.text(column, row, f"{table[row, column]:.3f}\n+-{spread}", ha="center", va="center", fontsize=6,
                        color="w" if table[row, column] < np.nanmean(table) else "k")
    if row_labels is not None and rows <= 40:
        ax.set_yticks(np.arange(rows), row_labels, fontsize=7)
    if column_labels is not None and columns <= 40:
        ax.set_xticks(np.arange(columns), column_labels, fontsize=7, rotation=45 if columns > 8 else 0)
    ax.set_ylabel(row_name)
    ax.set_xlabel(column_name)
    return ax


# ---------------------------------------------------------------------- small multiples
def panel_grid(panels: int, columns: int = 3, *, width: float = 4.5, height: float = 3.4) -> tuple[Any, list[Any]]:
    """A grid of ``panels`` independent panels (own axes each), ``columns`` wide; unused cells hidden.

    Returns ``(figure, axes)``, axes flattened to the ``panels`` visible ones.
    """
    columns = max(1, min(columns, panels))
    rows = -(-max(panels, 1) // columns)
    figure, axes = _pyplot().subplots(rows, columns, figsize=(width * columns, height * rows), squeeze=False)
    for axis in axes.flat[max(panels, 1):]:
        axis.set_visible(False)
    return figure, list(axes.flat[:panels])


def small_multiples(panels: int, columns: int, *, width: float, height: float, extra: float, left: float,
                    bottom: float, top: float, hspace: float) -> Any:
    """A grid for ``panels`` panels sharing their x and y axes, ``columns`` wide.

    Each panel is about ``width`` x ``height`` inches, the figure ``extra`` inches taller, with
    fixed margins (``left`` a fraction of the width; ``bottom`` and ``top`` in inches, for the
    x labels and the title): a layout engine costs seconds on tens of panels.  The cells past
    ``panels`` are hidden.  Returns ``(figure, axes)``, axes of shape ``(rows, columns)``.
    """
    rows = -(-max(panels, 1) // columns)
    total = height * rows + extra
    figure, axes = _pyplot().subplots(rows, columns, figsize=(width * columns, total), squeeze=False, sharex=True,
                                      sharey=True)
    figure.subplots_adjust(left=left, right=0.99, bottom=bottom / total, top=1 - top / total, wspace=0.08,
                           hspace=hspace)
    for axis in axes.flat[max(panels, 1):]:
        axis.set_visible(False)
    return figure, axes


def label_bottom_panels(axes: Any, panels: int, label: str) -> None:
    """Tick labels and the x label on the lowest visible panel of every column (``sharex`` hides the rest)."""
    rows, columns = axes.shape
    for column in range(columns):
        visible = [row for row in range(rows) if row * columns + column < panels]
        if visible:
            axis = axes[visible[-1], column]
            axis.tick_params(axis="x", labelbottom=True)
            axis.set_xlabel(label)
