r"""Piecewise mechanism, ``pm`` (Wang et al., ICDE 2019; paper 003 sec. 2.2, reference [30]).

On :math:`v \in [-1, 1]` (the bounds rescaled), with :math:`a = e^{\varepsilon/2}`,
the output lies in :math:`[-s, s]`, :math:`s = (a + 1)/(a - 1)`, with density

.. math::

    f(y \mid v) = \begin{cases}
        p = \frac{a}{2}\cdot\frac{a - 1}{a + 1} & y \in [\ell(v), r(v)] \\
        q = \frac{1}{2a}\cdot\frac{a - 1}{a + 1} & \text{otherwise,}
    \end{cases}
    \qquad \ell(v) = \frac{a v - 1}{a - 1},\ r(v) = \frac{a v + 1}{a - 1},

so :math:`p/q = e^\varepsilon` and :math:`E[y \mid v] = v`.

Public grid (floating-point safety, docs/explanation/privacy-model.md "Privacy model").  A real-valued output sampled in
floating point can have an input-dependent support (Mironov 2012).  Here the
report is an index :math:`j \in \{0, \dots, G\}` of the public grid
:math:`g_j = -s + j w`, :math:`w = 2s/G` (``grid = G``): the continuous output
:math:`y` is *stochastically rounded* to its two neighbouring grid points
(up with probability :math:`(y - g_j)/w`).  The report's law is therefore

.. math::

    P(j \mid v) = \int f(y \mid v)\, \Lambda_j(y)\, dy

with :math:`\Lambda_j` the hat function of grid point :math:`j`; every grid
point has positive probability for every input (the support is the whole
public grid), each :math:`P(j \mid \cdot)` is an average of densities whose
ratio is at most :math:`e^\varepsilon`, so the ratio bound holds exactly, and
:math:`E[g_J \mid v] = E[y \mid v] = v`: the decoded grid value is exactly
unbiased, with variance that of PM plus the rounding term
:math:`E[(y - g_j)(g_{j+1} - y)] \le w^2/4` (computed exactly by
:meth:`report_variance` from the grid channel).

Exact draws.  The window is chosen when ``U < inside`` with ``U`` a multiple of
:math:`2^{-53}` (``Generator.random()``); ``inside`` is the largest such multiple whose
density ratio :math:`(\text{inside}/w) / ((1-\text{inside})/(2s - w))` is at most
:math:`e^\varepsilon` (:mod:`dpdist.local._bernoulli`; ideally :math:`a/(a+1)`), the channel
uses it, and the decoded values are the grid points divided by the gain
:math:`E[y \mid v]/v` at that probability (1 up to ~1e-16), so the mean stays unbiased.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..._validation import Integer
from .._bernoulli import exp_lower, odds_probability
from .._docs import shared_parameters
from .._protocol import register
from ._mean import MeanProtocol

__all__ = ["PiecewiseMechanism"]


def _hat_integral(u: np.ndarray) -> np.ndarray:
    r""":math:`\int_{-\infty}^{u} \max(0, 1 - |t|)\, dt` (the hat function's CDF, scaled to width 1)."""
    u = np.clip(u, -1.0, 1.0)
    return np.where(u <= 0, (u + 1.0) ** 2 / 2.0, 1.0 - (1.0 - u) ** 2 / 2.0)


@register
@shared_parameters
class PiecewiseMechanism(MeanProtocol):
    """Piecewise mechanism with outputs on a public grid, for mean (and two-phase variance) estimation.

    Parameters
    ----------
    {epsilon}
    grid : int
        Number ``G`` of grid intervals on ``[-s, s]`` (``G + 1`` public outputs; default 1024).
    {bounds}

    Notes
    -----
    ``estimate`` returns a :class:`~dpdist.MeanEstimate`;
    ``estimate_mean_variance(values, rng)`` runs the two-phase variance protocol.
    """

    name = "pm"
    summary = "piecewise mechanism (Wang et al.) on a public output grid: unbiased mean; two-phase variance"
    _constraints = {**MeanProtocol._constraints, "grid": Integer(low=2, high=2**24)}
    _defaults = {**MeanProtocol._defaults, "grid": 1024}

    def _setup(self):
        a = math.exp(self.epsilon / 2.0)
        self._a = a
        self._s = (a + 1.0) / (a - 1.0)
        self._window = 2.0 / (a - 1.0)
        outside = 2.0 * self._s - self._window  # the length the outside part is sampled on
        # the probability that y falls in the window, a/(a+1) ideally: the largest 2^-53 grid value
        # (U < inside realizes it exactly) with density ratio (inside / w) / ((1 - inside) / outside) <= e^eps
        self._inside = odds_probability(exp_lower(self.epsilon) * Fraction(self._window) / Fraction(outside))
        self._p = self._inside / self._window
        self._q = (1.0 - self._inside) / outside
        # E[y | v] = gain * v with gain = (a/(a-1)) (inside - (1 - inside) w / outside), 1 at a/(a+1)
        self._gain = a / (a - 1.0) * (self._inside - (1.0 - self._inside) * self._window / outside)
        self._grid = self._params["grid"]
        self._step = 2.0 * self._s / self._grid
        grid = -self._s + self._step * np.arange(self._grid + 1)
        grid[-1] = self._s
        self._points = grid  # where the output is rounded to
        self._decoded = grid / self._gain  # unbiased at the realized inside probability

    @property
    def output_bound(self) -> float:
        """``s``: outputs lie in ``[-s, s]`` on the mechanism's [-1, 1] scale."""
        return self._s

    def _window_left(self, v):
        return (self._a * v - 1.0) / (self._a - 1.0)

    def _sample(self, v, rng):
        n = v.size
        left = self._window_left(v)
        inside = rng.random(n) < self._inside
        # outside the window: uniform on [-s, s] minus the window, by a shift past it
        outside = -self._s + rng.random(n) * (2.0 * self._s - self._window)
        outside = np.where(outside >= left, outside + self._window, outside)
        y = np.where(inside, left + rng.random(n) * self._window, outside)
        position = (y + self._s) / self._step
        lower = np.floor(position)
        index = lower + (rng.random(n) < position - lower)
        return np.clip(index, 0, self._grid).astype(self._report_dtype)

    def _unit_channel(self, v):
        v = np.asarray(v, dtype=np.float64)[:, None]
        points = self._points[None, :]  # the grid the output is rounded to (decoded: rescaled)
        w = self._step

        def mass(low, high):  # integral of each hat over [low, high]
            return w * (_hat_integral((high - points) / w) - _hat_integral((low - points) / w))

        left = self._window_left(v)
        right = left + self._window
        return self._q * mass(-self._s, self._s) + (self._p - self._q) * mass(left, right)
