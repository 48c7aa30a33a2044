r"""Smoothing baselines of paper 001: the (1/4, 1/2, 1/4) filter and the Gaussian filter.

Paper 001 (Fang et al., IEEE S&P 2023).

* Eq. 25 (after Nychka 1990, the smoothing step of EMS):
  :math:`\tilde f_i = \tfrac12 \hat f_i + \tfrac14 (\hat f_{i-1} + \hat f_{i+1})`.
* Appendix C, GF: a Gaussian filter of width ``sigma`` (in items) on the plain
  estimate (the paper's GF1 and GF3 use ``sigma = 1`` and ``3``).  The kernel is
  the sampled Gaussian truncated at 4 sigma and normalized to sum 1
  (``scipy.ndimage.gaussian_filter1d``).

``boundary`` says how the ends are extended: ``"wrap"`` (circular, like the
convolution framework itself; right for cyclic domains such as time of day),
``"reflect"`` (mirror, edge repeated) or ``"nearest"`` (edge value repeated).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import ndimage

__all__ = ["BOUNDARIES", "Boundary", "gaussian_smooth", "smooth_adjacent"]

#: How the ends are extended (``scipy.ndimage``'s ``mode``).
Boundary = Literal["wrap", "reflect", "nearest"]
BOUNDARIES: tuple[Boundary, ...] = ("wrap", "reflect", "nearest")

_ADJACENT_WEIGHTS = np.array([0.25, 0.5, 0.25])


def smooth_adjacent(frequencies: np.ndarray, boundary: Boundary) -> np.ndarray:
    """Eq. 25: average every estimate with its two neighbours, weights (1/4, 1/2, 1/4)."""
    return ndimage.correlate1d(frequencies, _ADJACENT_WEIGHTS, mode=boundary)


def gaussian_smooth(frequencies: np.ndarray, sigma: float, boundary: Boundary) -> np.ndarray:
    """Appendix C: Gaussian filter of standard deviation ``sigma`` items."""
    return ndimage.gaussian_filter1d(frequencies, sigma, mode=boundary, truncate=4.0)
