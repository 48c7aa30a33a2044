r"""General wave mechanisms with trapezoid and triangle waves, ``gw`` (paper 003, Def. 5.1, sec. 6.4).

Paper 003, Def. 5.1 and the shape comparison of
sec. 6.4 / Fig. 5 (trapezoids with top/bottom side ratio 0.2, 0.4, 0.6, 0.8
and a triangle, against the square wave).  A value :math:`v \in [0, 1]` is
reported as :math:`\tilde v \in [-b, 1+b]` with density :math:`W(\tilde v - v)`,
:math:`W = q` outside :math:`[-b, b]` and a trapezoid of height
:math:`e^\varepsilon q`, bottom side :math:`2b` and top side :math:`2rb` inside,
so :math:`q \le W \le e^\varepsilon q` (Thm. 5.2 gives
:math:`\varepsilon`-LDP) and

.. math::

    q = \frac{1}{1 + 2b + (e^\varepsilon - 1)\, b (1 + r)}

from :math:`\int_{-b}^{b} W = 1 - q` (derivation in :mod:`._wave_shape`;
:math:`r = 1` gives the square wave, :math:`r = 0` the triangle).  Reports,
channel, transition matrix and the EM/EMS estimators are those of ``sw``
(:mod:`._wave_protocol`); only "randomize before bucketize" is offered (the
paper defines the discrete variant for the square wave only).
"""

from __future__ import annotations

from ..._validation import Interval, NoneWhen, Optional, Options
from .._docs import shared_parameters
from .._protocol import register
from ._wave_grid import OutputGrid
from ._wave_protocol import WaveProtocol
from ._wave_shape import WaveShape, mutual_information_b

__all__ = ["GeneralWave"]

#: Top/bottom ratio of the trapezoid when ``ratio`` is not given (the middle of Fig. 5's 0.2-0.8).
DEFAULT_RATIO = 0.5


@register
@shared_parameters
class GeneralWave(WaveProtocol):
    """General wave (GW) mechanism with a trapezoid or triangle wave and EMS / EM estimation.

    Parameters
    ----------
    {epsilon}
    {wave_bounds}
    bins : int
        Number of equal input bins of the estimate (default 1024, at most 4096).
    output_bins : int, optional
        Number of equal output buckets of ``[-b, 1+b]``; default ``bins``.
    b : float, optional
        Half-width of the wave (half its bottom side) as a fraction of the bounds'
        width; default the square wave's mutual-information rule (sec. 5.3), so
        that shapes are compared at the same ``b`` as in Fig. 5.
    shape : {"trapezoid", "triangle"}
        Wave shape; default "trapezoid".
    ratio : float, optional
        Top/bottom side ratio of the trapezoid, in (0, 1) (the paper uses
        0.2-0.8); default 0.5.  Must be None for the triangle.
    """

    name = "gw"
    summary = "general wave: trapezoid or triangle wave over public buckets of [-b, 1+b]; EMS/EM estimate"
    _constraints = {
        **WaveProtocol._constraints,
        "shape": Options(("trapezoid", "triangle")),
        "ratio": Optional(Interval(0.0, 1.0, closed="neither")),
    }
    _relations = (NoneWhen("ratio", "shape", "triangle", why="a triangle has ratio 0",
                           counterexample={"shape": "triangle", "ratio": 0.5}),)
    _defaults = {**WaveProtocol._defaults, "shape": "trapezoid", "ratio": None}

    @property
    def ratio(self) -> float:
        """Top/bottom side ratio of the wave (0 for the triangle)."""
        return self._ratio

    def _setup(self):
        shape, ratio = self._params["shape"], self._params["ratio"]
        self._ratio = 0.0 if shape == "triangle" else (DEFAULT_RATIO if ratio is None else ratio)
        b = self._params["b"]
        b = mutual_information_b(self.epsilon) if b is None else b  # > 0: epsilon <= 30 by the table
        output_bins = self._params["output_bins"] or self.bins
        self._finish_setup(OutputGrid(WaveShape(self.epsilon, b, self._ratio), output_bins, self.bins), b)
