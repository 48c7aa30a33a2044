"""The density the dashboard draws for a distribution: the library's own, on the figure's display bins (issue 45 item 7).

An estimate of a numerical protocol has ``bins`` equal bins (1024 by default for SW and
OPM): finer than its reports can resolve at most ``n``.  Drawn bin by bin, the EMS
estimate of a single-peaked population showed 5-8 peaks at n = 20,000 (SW, epsilon 1-2);
its figure (:meth:`dpdist.estimates.Distribution.figure`, ``dpdist campaign estimate
--plot``, ``GET .../estimate.png``) draws the density on :func:`dpdist.plotting.display_edges`
instead, at most :data:`dpdist.plotting.DISPLAY_BINS` equal bins, each bin's mass from the
CDF (:meth:`~dpdist.estimates.Distribution.cdf`).  The served document carries that density
as ``display``, and the dashboard draws it: one density, whichever view shows it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["display_density"]


def display_density(distribution) -> dict:
    """``{"edges", "density", "bins"}``: the density of ``distribution`` on its figure's display bins."""
    from ..plotting import display_edges

    edges = display_edges(distribution)
    density = np.diff(distribution.cdf(edges)) / np.diff(edges)
    return {"edges": edges.tolist(), "density": density.tolist(), "bins": int(edges.size - 1)}
