r"""Rounds of shuffled reports composed through the privacy loss distribution of a dominating pair.

One round's accountant (:class:`._accounting._Bound`) gives an upper bound :math:`\hat\delta(\varepsilon)`,
:math:`\varepsilon \ge 0`, on the hockey-stick divergence :math:`H_{e^\varepsilon}(A \| B)` of the shuffled
output laws :math:`A, B` of every pair of neighbouring data sets, in both orders (the reductions of
:mod:`._reduction`, read from each ordered pair of inputs).  ``rounds`` rounds of fresh reports are composed
as follows.

**A dominating pair from the curve**: connect the dots (:mod:`dpdist.accounting._connect_dots`).

**Composition.**  Dominating pairs compose: ``rounds`` adaptive rounds, each dominated by :math:`(P, Q)`, are
dominated by :math:`(P^{\otimes T}, Q^{\otimes T})` (Zhu et al.'s composition theorem for dominating pairs),
whose privacy loss is the sum of :math:`T` independent copies of :math:`L` under :math:`P`: on the lattice
:math:`h\mathbb Z`, composed and read off exactly for the discrete pair with its floating-point error carried
(:mod:`dpdist.accounting._lattice`).  The truncations of the composed distributions' far tails cost at most
:math:`2 \cdot 10^{-4}\delta` together.  The one-round masses are checked against the grid values, any shortfall
moved to :math:`L = \pm\infty`.

**The grid.**  :math:`\varepsilon_J` is the smallest :math:`\varepsilon` (to 1%) with :math:`\hat\delta \le
10^{-3}\delta / T` (so the rounds' mass at :math:`+\infty` costs at most :math:`10^{-3}\delta`), or with
:math:`\hat\delta` at twice its floor (the reductions charge their far tails in full, about
:math:`10^{-15}`) when the rounds can afford it; :math:`J = 32`.  Per pair class, the curve uses the
reduction candidate smallest at the grid's middle (and on its upper half, the one smallest at its end).
Against the exact loss of one concrete pair of neighbouring data sets composed over the rounds (a lower
bound on the truth), GRR with :math:`\varepsilon_0 = 4`, d = 3, n = 10^5, 30 rounds, :math:`\delta = 10^{-8}`:
0.89 against 0.88 (``docs/reference/benchmarks/anonymity.md``); the optimal composition theorem applied to each round's
:math:`(\varepsilon, \delta)` gave 4.86.  Su, Cheng & Wang (arXiv 2504.07414, 2025) compute one round's
blanket divergence by FFT; composing rounds through privacy loss distributions is the same idea one step on.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..accounting._connect_dots import dominating_distribution
from ..accounting._lattice import LatticeLoss

__all__ = ["composed_distribution", "composed_epsilon", "round_distribution", "GRID_POINTS", "TAIL_SHARE"]

#: points of one round's curve on [0, cutoff] (one more at 0); 2x more moves the T = 30 example by < 0.5%
GRID_POINTS = 32
#: share of delta the rounds' mass beyond the grid may cost (it is put at +infinity)
TAIL_SHARE = 1e-3
#: the truncations of the composed distributions' far tails cost at most twice this share of delta together
TRUNCATION_SHARE = 1e-4


def composed_distribution(
    curve: Callable[[np.ndarray], np.ndarray],
    within: Callable[[float, float], bool],
    t_max: float,
    rounds: int,
    delta: float,
) -> LatticeLoss | None:
    r"""The loss distribution of ``rounds`` rounds' dominating pair, each round with the curve ``curve`` (upper
    bounds on every neighbouring pair's :math:`\delta(\varepsilon)`, both orders, at an array of
    :math:`\varepsilon \ge 0`; 0 from ``t_max`` on); ``within(t, d)``: whether the curve is at most ``d`` at ``t``;
    ``delta``: the target, which sets the grid (module docstring).  None when one round's curve is below
    ``TAIL_SHARE * delta / rounds`` already at 0 (the rounds' total variation is then below ``delta``).
    """
    one = round_distribution(curve, within, t_max, rounds, delta)
    return None if one is None else one.compose(rounds, 2 * TRUNCATION_SHARE * delta)


def round_distribution(
    curve: Callable[[np.ndarray], np.ndarray],
    within: Callable[[float, float], bool],
    t_max: float,
    rounds: int,
    delta: float,
) -> LatticeLoss | None:
    """One round's dominating pair on the grid :func:`composed_distribution` composes (None: see there)."""
    target = TAIL_SHARE * delta / rounds
    # the curve's floor (the reductions' far tails are charged in full): if the rounds can afford twice it, the
    # grid ends where the curve reaches it, else at t_max (where the curve is 0)
    floor = float(curve(np.array([t_max * (1 - 1e-9)]))[0])
    if 2 * floor * rounds <= 0.1 * delta:
        target = max(target, 2 * floor)
    cutoff = _cutoff(lambda t: within(t, target), t_max)
    if cutoff == 0.0:
        return None
    step = cutoff / GRID_POINTS
    return dominating_distribution(step, curve(step * np.arange(GRID_POINTS + 1)))


def composed_epsilon(
    curve: Callable[[np.ndarray], np.ndarray],
    within: Callable[[float, float], bool],
    t_max: float,
    rounds: int,
    delta: float,
) -> float:
    """The central epsilon at ``delta`` of ``rounds`` rounds (:func:`composed_distribution`'s arguments)."""
    composed = composed_distribution(curve, within, t_max, rounds, delta)
    # None: each round's total variation is at most delta / rounds / 1000, so the rounds' is below delta
    return 0.0 if composed is None else composed.epsilon(delta)


def _cutoff(feasible: Callable[[float], bool], high: float) -> float:
    """A ``t`` in ``[0, high]`` with ``feasible(t)``, within 1% above the smallest (``feasible`` monotone)."""
    if feasible(0.0):
        return 0.0
    low = 0.0
    while high - low > 0.01 * high:
        middle = 0.5 * (low + high)
        if feasible(middle):
            high = middle
        else:
            low = middle
    return high
