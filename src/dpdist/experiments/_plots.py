"""Figures from the summary table: one PNG and one SVG per :class:`FigureSpec`.

Each panel (one value of ``figure.panels``) plots ``mean`` of the metric ``figure.y``
against ``figure.x``, one line per ``figure.series`` value, with a band of +- 1 standard
error over repeats.  Drawn with matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ._table import ResultsTable

__all__ = ["draw_figure"]


def draw_figure(figure, summary: ResultsTable, folder) -> list[Path]:
    """Draw ``figure`` from ``summary``; return the written paths (empty if no row matches)."""
    import matplotlib  # lazy: loads matplotlib (1-2 s)

    matplotlib.use("Agg", force=False)
    import matplotlib.lines  # lazy: loads matplotlib (1-2 s)
    import matplotlib.pyplot as plt  # lazy: loads matplotlib (1-2 s)

    rows = summary.select(metric=figure.y, **figure.where)
    if figure.datasets:
        rows = rows.select(dataset=list(figure.datasets))
    if figure.methods:
        rows = rows.select(method=list(figure.methods))
    if len(rows) == 0 or figure.x not in rows.columns:
        return []
    panels = rows.unique(figure.panels) if figure.panels else [None]
    # one color per series in every panel, and one legend listing every series
    every_series = rows.unique(figure.series)
    cycle = plt.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    colors = {series: cycle[i % len(cycle)] for i, series in enumerate(every_series)}
    markers = {series: "os^Dv<>ph*"[(i // len(cycle)) % 10] for i, series in enumerate(every_series)}
    columns = min(len(panels), 4)
    lines = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4.2 * columns, 3.4 * lines), squeeze=False)
    for index, panel in enumerate(panels):
        ax = axes[index // columns][index % columns]
        panel_rows = rows.select(**{figure.panels: panel}) if figure.panels else rows
        for series in panel_rows.unique(figure.series):
            line = panel_rows.select(**{figure.series: series})
            x = np.array([_number(v) for v in line.column(figure.x)], dtype=np.float64)
            order = np.argsort(x, kind="stable")
            mean = line.column("mean").astype(np.float64)[order]
            se = np.nan_to_num(line.column("se").astype(np.float64)[order])
            (drawn,) = ax.plot(
                x[order], mean, marker=markers[series], markersize=3, label=str(series), color=colors[series]
            )
            low = mean - se
            if figure.logy:
                low = np.where(low > 0, low, mean)  # a band below 0 cannot be drawn on a log axis
            ax.fill_between(x[order], low, mean + se, color=drawn.get_color(), alpha=0.2, linewidth=0)
        if figure.logx:
            ax.set_xscale("log")
        if figure.logy:
            ax.set_yscale("log")
        ax.set_xlabel(figure.xlabel or figure.x)
        ax.set_ylabel(figure.ylabel or figure.y)
        if panel is not None:
            ax.set_title(str(panel), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    for index in range(len(panels), lines * columns):
        axes[index // columns][index % columns].set_visible(False)
    handles = [
        matplotlib.lines.Line2D([], [], color=colors[series], marker=markers[series], markersize=3, label=str(series))
        for series in every_series
    ]
    axes[0][0].legend(handles=handles, fontsize=8)
    if figure.title:
        fig.suptitle(figure.title)
    fig.tight_layout()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for suffix in ("png", "svg"):
        path = folder / f"{figure.name}.{suffix}"
        fig.savefig(path, dpi=120, metadata={"Date": None} if suffix == "svg" else None)
        paths.append(path)
    plt.close(fig)
    return paths


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan
