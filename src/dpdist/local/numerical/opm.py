r"""Optimal piecewise mechanism on an interval (``opm``) and on a circle (``opm-circular``), EMS / EM estimate.

Zheng, Mishra and Hu, "Optimal Piecewise-based Mechanism for Collecting Bounded Numerical Data under
Local Differential Privacy" (arXiv 2505.15483, PETS 2025).  Among the generalized (m-piece)
piecewise mechanisms whose output domain is the input domain, the paper's closed-form optimum is a
three-piece density: :math:`p_\varepsilon` on a window of width :math:`w^*` of the domain and
:math:`p_\varepsilon e^{-\varepsilon}` elsewhere, with

.. math::

    w^* = \frac{1}{e^{\varepsilon/2} + 1}, \qquad p_\varepsilon = e^{\varepsilon/2} \text{ (per unit of the domain)},

optimal for the expected absolute error :math:`E|Y - v|` of a report (:func:`~._window_grid.optimal_window`
re-derives :math:`w^*`).  Classical domain :math:`[0, 1]`: the window is centred on :math:`v` and stops
at an edge (:math:`[0, w^*]` for :math:`v < w^*/2`).  Circular domain (the paper's :math:`[0, 2\pi)`, here
``bounds = (lo, hi)`` with ``hi`` the same point as ``lo``, e.g. minutes of the day ``(0, 1440)``): the
window is centred on :math:`v` and wraps around, so a value just before midnight and one just after get
the same treatment and no output range is spent outside the domain.

Privacy: pure :math:`\varepsilon`-LDP for any two values of one user (``PrivacyGuarantee(epsilon, 0,
"replace", "local")``): on the circle every output bucket's probability lies between the uniform part's
:math:`(1 - \lambda)\tilde w` and :math:`(1 - \lambda)\tilde w + \lambda \tilde w / w`, a ratio at most
:math:`e^\varepsilon` (:mod:`._window_grid`), and so on the interval.

Reports and estimation reuse the square wave's machinery (:mod:`._wave_protocol`): the client sends
the index of the public output bucket of its randomized value (``bins`` equal buckets of the domain),
the aggregator counts buckets, and the estimate is the EMS (default) or EM reconstruction of paper 003,
Alg. 1 (:mod:`dpdist.local._em`) on ``bins`` input bins.  On the circle the transition matrix is
circulant (products by FFT) and EMS smooths around the circle (:func:`~dpdist.local._em.smooth_circular`);
the estimate's ``details["period"]`` says the domain is circular, and
:func:`dpdist.metrics.circular_wasserstein` measures it on the circle.
"""

from __future__ import annotations

from typing import Callable, ClassVar

import numpy as np

from ..._validation import Interval, Optional
from .._docs import shared_parameters
from .._em import smooth_circular
from .._protocol import register
from ._wave_protocol import WaveProtocol
from ._window_grid import CirculantOperator, CircularWindowGrid, ClampedWindowGrid, optimal_window

__all__ = ["OptimalPiecewise", "CircularOptimalPiecewise", "optimal_window"]

_CONSTRAINTS = {
    **{name: rule for name, rule in WaveProtocol._constraints.items() if name not in ("b", "output_bins")},
    "window": Optional(Interval(0.0, 1.0, closed="neither")),
}
_DEFAULTS = {**{k: v for k, v in WaveProtocol._defaults.items() if k not in ("b", "output_bins")}, "window": None}


class _WindowProtocol(WaveProtocol):
    """Shared set-up of the two window protocols: the width ``w``, the grid of ``bins`` buckets."""

    _constraints = _CONSTRAINTS
    _defaults = _DEFAULTS
    _grid: ClassVar[type] = ClampedWindowGrid

    @property
    def window(self) -> float:
        """Width of the high-probability window as a fraction of the domain."""
        return self._mechanism.width_window

    def _setup(self):
        window = self._params["window"]
        window = optimal_window(self.epsilon) if window is None else window  # > 0 for every allowed epsilon
        self._finish_setup(self._grid(self.epsilon, window, self.bins), window / 2.0)


@register
@shared_parameters
class OptimalPiecewise(_WindowProtocol):
    """Optimal piecewise mechanism on an interval (Zheng et al.), EMS / EM estimation.

    Parameters
    ----------
    {epsilon}
    {wave_bounds}
    bins : int
        Number of equal input bins of the estimate and of public output buckets (default 1024,
        at most 4096).
    window : float, optional
        Width of the high-probability window as a fraction of the bounds' width, in (0, 1);
        default the optimal :math:`1/(e^{\\varepsilon/2} + 1)`.

    Reports are output-bucket indices of ``bounds`` itself (no margin) in the narrowest unsigned dtype.
    """

    name = "opm"
    summary = "optimal piecewise mechanism (Zheng et al.): a public bucket of the bounds, dense near the value; EMS/EM"


@register
@shared_parameters
class CircularOptimalPiecewise(_WindowProtocol):
    """Optimal piecewise mechanism on a circle (times of day, angles), EMS / EM estimation on the circle.

    Parameters
    ----------
    {epsilon}
    bounds : (float, float)
        One period of the circular domain, ``hi`` being the same point as ``lo`` (e.g. ``(0, 1440)``
        for minutes of the day, ``(0, 360)`` for degrees); default ``(0, 1)``.
    bins : int
        Number of equal bins of the period (estimate and public output buckets; default 1024, at most 4096).
    window : float, optional
        Width of the high-probability window as a fraction of the period, in (0, 1); default the
        optimal :math:`1/(e^{\\varepsilon/2} + 1)`.

    The transition matrix is circulant, so EM / EMS multiply by FFT (``details["operator"] =
    "circulant-fft"``) and EMS smooths around the circle.
    """

    name = "opm-circular"
    summary = "optimal piecewise mechanism on a circle (times of day, angles): the window wraps around; EMS/EM"
    circular = True  # a value outside one period is wrapped around (25:00 is 01:00), never clipped to 00:00
    _grid = CircularWindowGrid

    @property
    def _smoothing(self) -> Callable[[np.ndarray], np.ndarray]:
        return smooth_circular

    @property
    def display_name(self) -> str:
        return "OPM-CIRCULAR"

    @property
    def period(self) -> float:
        """Length of the circle in the units of ``bounds`` (``hi - lo``)."""
        lo, hi = self.bounds
        return hi - lo

    @property
    def _operator_name(self) -> str:
        return "circulant-fft"

    def _transition_operator(self):
        if self._operator is None:
            self._operator = CirculantOperator(self._mechanism.transition_column())
        return self._operator

    def _distribution(self, unit_probabilities, *, aggregator=None, **details):
        return super()._distribution(unit_probabilities, aggregator=aggregator, period=self.period, **details)
