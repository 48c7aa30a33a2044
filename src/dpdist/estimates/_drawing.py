"""matplotlib behind one lazy import: new figures and axes, saving without a display, and the layouts
results and the demo draw on (a CDF band, a heat map, a grid of panels).

Every result draws itself with these (``estimate.figure(...)``, ``estimate.plot(ax)``: the
result contract :class:`dpdist.estimates.Estimate`), so the CLI, the service and the demo draw
an estimate the same way and none of them asks which kind it holds.  matplotlib is imported on
first use (``import dpdist`` stays light), and nothing here knows a result type.
"""

from __future__ import annotations

import threading
from typing import Any, BinaryIO, Protocol, Sequence

import numpy as np

from .._types import ArrayLike, PathLike
from ._intervals import percent

__all__ = [
    "pyplot",
    "headless",
    "save_figure",
    "save_estimate",
    "axes",
    "fill_band",
    "draw_heatmap",
    "panel_grid",
    "small_multiples",
    "label_bottom_panels",
]

_PYPLOT = threading.Lock()  # pyplot keeps global state: one figure at a time per process


class Drawn(Protocol):
    """What :func:`save_estimate` draws: any result (``figure`` of the result contract)."""

    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None,
               level: float = 0.95) -> Any: ...


def pyplot() -> Any:
    """``matplotlib.pyplot`` (the ``plot`` extra)."""
    import matplotlib.pyplot as plt  # lazy: loads matplotlib (1-2 s)

    return plt


def headless() -> None:
    """Draw without a display (matplotlib's Agg backend), as the CLI, the service and the demo do."""
    import matplotlib  # lazy: loads matplotlib (1-2 s)

    matplotlib.use("Agg", force=False)


def save_figure(figure: Any, path: PathLike | BinaryIO, **kwargs: Any) -> None:
    """Write ``figure`` to ``path`` (a file name or a binary stream; ``kwargs`` go to ``savefig``) and close it."""
    figure.savefig(path, **kwargs)
    pyplot().close(figure)


def save_estimate(estimate: Drawn, path: PathLike | BinaryIO, *, label: str | None = None, truth: Any = None, xlabel: str | None = None,
                  level: float = 0.95, note: str | None = None) -> None:
    """Write ``estimate.figure(...)`` to ``path`` (a file name or a binary stream) without a display.

    What ``dpdist estimate --plot``, ``dpdist campaign estimate --plot`` and the service's
    ``GET .../estimate.png`` draw; one figure at a time per process (pyplot is not thread-safe).
    ``note``: a line written at the top of the figure (the one-shot ``dpdist estimate``: a simulation, its
    truth not private).
    """
    headless()
    with _PYPLOT:
        figure = estimate.figure(label=label, truth=truth, xlabel=xlabel, level=level)
        if note is not None:
            figure.text(0.5, 0.995, note, ha="center", va="top", fontsize=7, color="firebrick", wrap=True)
        save_figure(figure, path)


def axes(ax: Any, figsize: tuple[float, float]) -> Any:
    """``ax``, or the axes of a new figure of ``figsize`` inches."""
    if ax is None:
        _, ax = pyplot().subplots(figsize=figsize)
    return ax


def fill_band(ax: Any, band: Any, color: Any) -> None:
    """The simultaneous band (light) and the pointwise band (darker) of a CDF (a :class:`~dpdist.estimates.CDFBand`)."""
    level = percent(band.level)
    ax.fill_between(band.edges, band.simultaneous_lower, band.simultaneous_upper, color=color, alpha=0.15,
                    linewidth=0, label=f"{level} simultaneous band")
    ax.fill_between(band.edges, band.lower, band.upper, color=color, alpha=0.3, linewidth=0,
                    label=f"{level} pointwise band")


def draw_heatmap(table: ArrayLike, error: ArrayLike, ax: Any = None, *, row_labels: Sequence[str] | None = None,
                 column_labels: Sequence[str] | None = None, row_name: str = "", column_name: str = "",
                 **kwargs: Any) -> Any:
    """A two-way table of frequencies as a heat map, each cell annotated ``f`` and ``+- se`` (when at most 144 cells).

    ``error``: the standard error of each cell (``inf``: no interval, shown as ``n/a``).
    """
    table = np.asarray(table, dtype=np.float64)
    error = np.asarray(error, dtype=np.float64)
    rows, columns = table.shape
    ax = axes(ax, (min(12, 1.2 + 0.7 * columns), min(10, 1.0 + 0.5 * rows)))
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


def panel_grid(panels: int, columns: int = 3, *, width: float = 4.5, height: float = 3.4) -> tuple[Any, list[Any]]:
    """A grid of ``panels`` independent panels (own axes each), ``columns`` wide; unused cells hidden.

    Returns ``(figure, axes)``, axes flattened to the ``panels`` visible ones.
    """
    columns = max(1, min(columns, panels))
    rows = -(-max(panels, 1) // columns)
    figure, axes = pyplot().subplots(rows, columns, figsize=(width * columns, height * rows), squeeze=False)
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
    figure, axes = pyplot().subplots(rows, columns, figsize=(width * columns, total), squeeze=False, sharex=True,
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
