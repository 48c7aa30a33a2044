r"""A dominating pair from upper bounds on a mechanism's privacy curve, on a lattice: "connect the dots".

Given upper bounds :math:`\hat\delta(\varepsilon)`, :math:`\varepsilon \ge 0`, on the hockey-stick divergence of
every ordered neighbouring pair :math:`(A, B)` of a mechanism, in both orders ("connect the dots", Doroshenko,
Ghazi, Kamath, Kumar & Manurangsi, PETS 2022, made symmetric).  Write :math:`\gamma = e^\varepsilon`, :math:`H(\gamma) =
H_\gamma(A\|B) = \sum_y (A(y) - \gamma B(y))_+`.  For every pair, :math:`H` is convex and non-increasing in
:math:`\gamma \ge 0`.  Evaluate :math:`\hat\delta` at :math:`\varepsilon_i = i h`, :math:`i = 0..J`; take
the running minimum (valid, :math:`H` is non-increasing), raise the points to the line through
:math:`(1, \hat\delta(0))` of slope :math:`(\hat\delta(0) - 1)/2` (see below), and let :math:`f` be the lower
convex hull of the points :math:`(e^{\varepsilon_i}, \hat\delta_i)` on :math:`[1, e^{\varepsilon_J}]`,
constant beyond.  Between two vertices of :math:`f`, :math:`H` lies below its own chord, which lies below
:math:`f`'s, so :math:`H \le f` on :math:`\gamma \ge 1`.  :math:`f` is the curve, on :math:`\gamma \ge 1`,
of the pair :math:`(P, Q)` whose privacy loss :math:`L = \log(dP/dQ)` takes the values

.. math::

    P(L = \varepsilon_i) = e^{\varepsilon_i} (s_{i+1} - s_i), \quad
    P(L = -\varepsilon_i) = s_{i+1} - s_i, \quad
    P(L = +\infty) = f(e^{\varepsilon_J}), \quad
    P(L = 0) = 1 - f(1) + 2 s_1,

with :math:`s_i` the slope of :math:`f` left of vertex :math:`i` (:math:`s_{J+1} = 0`) and :math:`Q(L = \ell)
= e^{-\ell} P(L = \ell)` (:math:`Q` puts :math:`f(e^{\varepsilon_J})` at :math:`L = -\infty`).  The pair is
symmetric (:math:`(Q, P)` is :math:`(P, Q)` with the loss negated), so for :math:`\gamma < 1`,
:math:`H_\gamma(P\|Q) = 1 - \gamma + \gamma H_{1/\gamma}(P\|Q) \ge 1 - \gamma + \gamma H_{1/\gamma}(B\|A) =
H_\gamma(A\|B)`: the pair *dominates* every neighbouring pair at every :math:`\varepsilon \in \mathbb R`
(the dominating pairs of Zhu, Dathathri & Gopi, AISTATS 2022).  :math:`P(L = 0) \ge 0` is what the line above secures.
"""

from __future__ import annotations

import numpy as np

from ._lattice import UNIT_ROUNDOFF, LatticeLoss

__all__ = ["dominating_distribution"]


def dominating_distribution(step: float, deltas) -> LatticeLoss:
    r"""The symmetric dominating pair's loss distribution from upper bounds ``deltas[i]`` on every neighbouring
    pair's :math:`\delta(i \cdot step)`, ``i = 0..J`` (module docstring).

    The masses are computed in floating point; the curve they give is then evaluated at the grid points, and
    any shortfall below the (monotone) ``deltas`` there is moved from :math:`L = 0` to :math:`L = \pm\infty`
    (which raises the curve by that much at :math:`\gamma \ge 1` and :math:`\gamma` times it below).
    """
    deltas = np.minimum.accumulate(np.clip(np.asarray(deltas, dtype=np.float64), 0.0, 1.0))
    points = deltas.size
    gammas = np.exp(step * np.arange(points))
    start = float(deltas[0])
    # so that P(L = 0) >= 0 (the slope a hair less steep than (start - 1) / 2 keeps it so through rounding)
    raised = np.maximum(deltas, start + 0.5 * (start - 1.0) * (1 - 1e-12) * (gammas - 1.0))
    vertices = _lower_hull(gammas, raised)
    slopes = np.diff(raised[vertices]) / np.diff(gammas[vertices])  # s_1 .. s_k, left of vertices 1 .. k
    jumps = np.maximum(np.append(slopes[1:], 0.0) - slopes, 0.0)  # s_{i+1} - s_i at vertices 1 .. k
    positive = np.zeros(points)
    positive[vertices[1:]] = gammas[vertices[1:]] * jumps
    negative = np.zeros(points)
    negative[vertices[1:]] = jumps
    infinity = float(raised[vertices[-1]])
    # the curve of these masses at the grid points: sum_j P(L = eps_j) (1 - gamma_i / gamma_j)_+ + infinity
    reached = np.maximum(1.0 - gammas[:, None] / gammas[None, :], 0.0) @ positive + infinity
    shortfall = float(np.max(deltas - reached * (1 - 4 * points * UNIT_ROUNDOFF)))
    infinity += max(shortfall, 0.0)
    zero = 1.0 - infinity - float(positive.sum()) - float(negative.sum())
    if zero < 0:  # no room left for the shortfall (not met in practice): the trivial pair
        return LatticeLoss(step, 0, np.zeros(1), 1.0)
    mass = np.concatenate([negative[:0:-1], [zero], positive[1:]])
    return LatticeLoss(step, -(points - 1), mass, infinity)


def _lower_hull(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the lower convex hull of the points ``(x, y)`` (``x`` increasing), first and last included."""
    hull: list[int] = []
    for index in range(x.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (y[b] - y[a]) * (x[index] - x[a]) >= (y[index] - y[a]) * (x[b] - x[a]):  # b on or above a-index
                hull.pop()
            else:
                break
        hull.append(index)
    return np.asarray(hull)
