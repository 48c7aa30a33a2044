"""Figures of estimates with matplotlib: what ``--plot``, the service's ``estimate.png`` and ``dpdist demo`` draw.

A face: every result draws itself (``estimate.figure(...)``, ``estimate.plot(ax)``, the result
contract :class:`dpdist.estimates.Estimate`), and each kind's drawing lives with its result in
:mod:`dpdist.estimates`; this module gathers them under their public names.  :func:`save_estimate`
writes an estimate's figure to a file (or a binary stream) without a display; :func:`small_multiples`
lays out the demo's panels.  matplotlib is imported on first use (``import dpdist`` stays light).
"""

from .estimates._distribution import DISPLAY_BINS, display_edges, distribution_figure, draw_distribution
from .estimates._drawing import (
    draw_heatmap,
    headless,
    label_bottom_panels,
    panel_grid,
    save_estimate,
    save_figure,
    small_multiples,
)
from .estimates._frequency import draw_frequencies, frequency_figure
from .estimates._heavy_hitters import draw_heavy_hitters, heavy_hitters_figure
from .estimates._means import draw_mean, mean_figure
from .estimates._quantiles import draw_quantiles, quantiles_figure

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
