r"""Rounds of shuffled reports composed through the privacy loss distribution of a dominating pair.

One round's accountant (:class:`._accounting._Bound`) gives an upper bound :math:`\hat\delta(\varepsilon)`,
:math:`\varepsilon \ge 0`, on the hockey-stick divergence :math:`H_{e^\varepsilon}(A \| B)` of the shuffled
output laws :math:`A, B` of every pair of neighbouring data sets, in both orders (the reductions of
:mod:`._reduction`, read from each ordered pair of inputs).  ``rounds`` rounds of fresh reports are composed
as follows.

**A dominating pair from the curve** ("connect the dots", Doroshenko, Ghazi, Kamath, Kumar & Manurangsi,
PETS 2022, made symmetric).  Write :math:`\gamma = e^\varepsilon`, :math:`H(\gamma) =
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

**Composition.**  Dominating pairs compose: ``rounds`` adaptive rounds, each dominated by :math:`(P, Q)`, are
dominated by :math:`(P^{\otimes T}, Q^{\otimes T})` (Zhu et al.'s composition theorem for dominating pairs),
whose privacy loss is the sum of :math:`T` independent copies of :math:`L` under :math:`P`.  The losses lie on
the lattice :math:`h\mathbb Z`, so the sum's law is the :math:`T`-fold convolution, computed by repeated
squaring (as Koskela, Jälkö & Honkela, AISTATS 2020, by FFT), and :math:`\delta(\varepsilon) = \mathbb
E[(1 - e^{\varepsilon - L_T})_+] + P(L_T = \infty)` is read off exactly for the discrete pair.  Pessimistic
steps only: mass in a far upper tail is moved to :math:`+\infty`, mass in a far lower tail up to the lowest
loss kept.  Floating point: convolutions of up to :math:`3 \cdot 10^7` products are summed directly (all
terms :math:`\ge 0`, so each mass has a relative error below :math:`m u`, Higham, *Accuracy and Stability of
Numerical Algorithms*, 2nd ed., sec. 4.2), larger ones by FFT with an absolute error bounded by Higham's
Thm. 24.2 (times 10); both are carried and allowed for in every :math:`\delta` read off.  The one-round
masses are checked against the grid values, any shortfall moved to :math:`L = \pm\infty`.

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

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = [
    "LossDistribution", "dominating_distribution", "composed_distribution", "composed_epsilon", "round_distribution",
    "GRID_POINTS", "TAIL_SHARE",
]

#: points of one round's curve on [0, cutoff] (one more at 0); 2x more moves the T = 30 example by < 0.5%
GRID_POINTS = 32
#: share of delta the rounds' mass beyond the grid may cost (it is put at +infinity)
TAIL_SHARE = 1e-3
#: the truncations of the composed distributions' far tails cost at most twice this share of delta together
_TRUNCATION_SHARE = 1e-4
#: distributions longer than this are truncated after each convolution
_TRUNCATE_ABOVE = 4096
#: convolutions of at most this many products are summed directly (entrywise relative error), larger ones by FFT
_DIRECT_WORK = 3 * 10**7
_UNIT_ROUNDOFF = 2.0**-53


@dataclass(frozen=True)
class LossDistribution:
    r"""A privacy loss distribution on the lattice ``step * k``, ``k = offset .. offset + mass.size - 1``.

    ``mass[j]``: the probability under :math:`P` that :math:`L = (offset + j)\, step`, as computed;
    ``infinity``: that :math:`L = +\infty`.  Floating point: each computed mass (and ``infinity``) is within a
    factor ``1 +- relative`` of the exact one, up to an added error of total size at most ``allowance`` (FFT);
    :meth:`delta` accounts for both.
    """

    step: float
    offset: int
    mass: np.ndarray
    infinity: float
    relative: float = 0.0
    allowance: float = 0.0

    def losses(self) -> np.ndarray:
        return (self.offset + np.arange(self.mass.size)) * self.step

    def _raw(self, epsilon: float) -> float:
        losses = self.losses()
        above = losses > epsilon
        return float(np.dot(self.mass[above], -np.expm1(epsilon - losses[above])))

    def delta(self, epsilon: float) -> float:
        r"""An upper bound on :math:`\mathbb E_P[(1 - e^{\varepsilon - L})_+] + P(L = +\infty)` for the exact masses."""
        return (self._raw(epsilon) + self.infinity) / (1.0 - self.relative) + self.allowance

    def epsilon(self, delta: float) -> float:
        """The smallest ``epsilon >= 0`` with :meth:`delta` at most ``delta`` (``inf`` if none)."""
        budget = (delta - self.allowance) * (1.0 - self.relative) - self.infinity  # for _raw
        if budget <= 0:
            return math.inf
        if self._raw(0.0) <= budget:
            return 0.0
        losses = self.losses()
        first = int(np.searchsorted(losses, 0.0))  # the first loss >= 0
        low, high = first - 1, losses.size - 1  # _raw(0) > budget >= _raw(largest loss) = 0
        while high - low > 1:  # _raw(losses[low]) > budget >= _raw(losses[high]) (losses[first - 1] read as 0)
            middle = (low + high) // 2
            if self._raw(float(losses[middle])) <= budget:
                high = middle
            else:
                low = middle
        # on (losses[high - 1], losses[high]] the losses above epsilon are those from index high on:
        # _raw(epsilon) = S - e^epsilon R, solved exactly
        tail = slice(high, None)
        upper = float(self.mass[tail].sum())
        scaled = float(np.dot(self.mass[tail], np.exp(-(losses[tail] - losses[high]))))  # R e^{losses[high]}
        start = float(losses[high - 1]) if high > first else 0.0
        if scaled <= 0 or upper <= budget:
            return start
        solved = float(losses[high]) + math.log((upper - budget) / scaled)
        return min(max(solved, start), float(losses[high]))

    def compose(self, rounds: int, delta: float) -> LossDistribution:
        """The loss distribution of ``rounds`` independent copies, by repeated squaring.

        A convolution that stands for ``k`` of the rounds may move ``_TRUNCATION_SHARE * delta * k / rounds /
        levels`` of each far tail (``levels``: the bits of ``rounds``); it enters the result at most
        ``2 * rounds / k`` times, so the truncations together cost at most ``2 * _TRUNCATION_SHARE * delta``.
        """
        levels = rounds.bit_length()
        result: LossDistribution | None = None
        power, remaining, copies, done = self, rounds, 1, 0
        while True:
            if remaining & 1:
                done += copies
                budget = _TRUNCATION_SHARE * delta * done / rounds / levels
                result = power if result is None else _convolve(result, power, budget)
            remaining >>= 1
            if not remaining:
                break
            copies *= 2
            power = _convolve(power, power, _TRUNCATION_SHARE * delta * copies / rounds / levels)
        assert result is not None  # rounds >= 1
        return result


def _fft_error(first: np.ndarray, second: np.ndarray, length: int) -> float:
    r"""A bound on the l1 error of the FFT convolution of ``first`` and ``second`` (transform length ``length``).

    Higham (2002), Thm. 24.2: a computed length-N FFT has relative 2-norm error at most about
    :math:`\log_2 N\, \eta`, :math:`\eta \approx 8u` with accurate twiddle factors; the two forward
    transforms, the product and the inverse give :math:`\|\Delta c\|_2 \lesssim 3 \log_2 N\, \eta\,
    (\|a\|_2 \|b\|_1 + \|a\|_1 \|b\|_2)`, and :math:`\|\cdot\|_1 \le \sqrt N \|\cdot\|_2`.  Times 10.
    """
    norms = float(np.linalg.norm(first) * second.sum() + first.sum() * np.linalg.norm(second))
    return 10.0 * math.sqrt(length) * 3 * math.log2(max(length, 2)) * 8 * _UNIT_ROUNDOFF * norms


def _convolve(first: LossDistribution, second: LossDistribution, budget: float) -> LossDistribution:
    """The loss distribution of the sum of independent losses with laws ``first`` and ``second``.

    Directly summed (every term >= 0: each entry within a factor ``1 +- m u / (1 - m u)`` of the exact
    convolution of the computed inputs, ``m`` the shorter length; Higham 2002, sec. 4.2) up to
    ``_DIRECT_WORK`` products, by FFT beyond (an absolute error, :func:`_fft_error`).
    """
    shorter = min(first.mass.size, second.mass.size)
    relative = (1 + first.relative) * (1 + second.relative) - 1
    allowance = (first.allowance + second.allowance + first.allowance * second.allowance) * (1 + relative)
    if first.mass.size * second.mass.size <= _DIRECT_WORK:
        mass = np.convolve(first.mass, second.mass)
        terms = (shorter + 2) * _UNIT_ROUNDOFF  # the products, the sum, and the infinity mass below
        relative = (1 + relative) * (1 + terms / (1 - terms)) - 1
    else:
        size = first.mass.size + second.mass.size - 1
        length = 1 << (size - 1).bit_length()
        mass = np.fft.irfft(np.fft.rfft(first.mass, length) * np.fft.rfft(second.mass, length), length)[:size]
        mass = np.maximum(mass, 0.0)  # a negative entry is rounding: clipping it moves it toward the truth
        allowance += _fft_error(first.mass, second.mass, length) * (1 + relative)
    infinity = first.infinity + second.infinity - first.infinity * second.infinity
    offset = first.offset + second.offset
    if mass.size > _TRUNCATE_ABOVE:
        mass, offset, infinity = _truncate(mass, offset, infinity, budget)
    return LossDistribution(first.step, offset, mass, infinity, relative, allowance)


def _truncate(mass: np.ndarray, offset: int, infinity: float, budget: float) -> tuple[np.ndarray, int, float]:
    """Move at most ``budget`` of the upper tail to +infinity and of the lower tail up to the lowest loss kept
    (both only raise the losses: pessimistic)."""
    upper = np.cumsum(mass[::-1])  # upper[j]: the mass of the top j + 1 entries
    top = int(np.searchsorted(upper, budget, side="right"))  # that many entries hold at most budget
    lower = np.cumsum(mass)
    bottom = int(np.searchsorted(lower, budget, side="right"))
    if top + bottom >= mass.size:
        return mass, offset, infinity
    kept = mass[bottom : mass.size - top].copy()
    if top:
        infinity = min(1.0, infinity + float(upper[top - 1]))
    if bottom:
        kept[0] += float(lower[bottom - 1])
    return kept, offset + bottom, infinity


def dominating_distribution(step: float, deltas) -> LossDistribution:
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
    shortfall = float(np.max(deltas - reached * (1 - 4 * points * _UNIT_ROUNDOFF)))
    infinity += max(shortfall, 0.0)
    zero = 1.0 - infinity - float(positive.sum()) - float(negative.sum())
    if zero < 0:  # no room left for the shortfall (not met in practice): the trivial pair
        return LossDistribution(step, 0, np.zeros(1), 1.0)
    mass = np.concatenate([negative[:0:-1], [zero], positive[1:]])
    return LossDistribution(step, -(points - 1), mass, infinity)


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


def composed_distribution(
    curve: Callable[[np.ndarray], np.ndarray],
    within: Callable[[float, float], bool],
    t_max: float,
    rounds: int,
    delta: float,
) -> LossDistribution | None:
    r"""The loss distribution of ``rounds`` rounds' dominating pair, each round with the curve ``curve`` (upper
    bounds on every neighbouring pair's :math:`\delta(\varepsilon)`, both orders, at an array of
    :math:`\varepsilon \ge 0`; 0 from ``t_max`` on); ``within(t, d)``: whether the curve is at most ``d`` at ``t``;
    ``delta``: the target, which sets the grid (module docstring).  None when one round's curve is below
    ``TAIL_SHARE * delta / rounds`` already at 0 (the rounds' total variation is then below ``delta``).
    """
    one = round_distribution(curve, within, t_max, rounds, delta)
    return None if one is None else one.compose(rounds, delta)


def round_distribution(
    curve: Callable[[np.ndarray], np.ndarray],
    within: Callable[[float, float], bool],
    t_max: float,
    rounds: int,
    delta: float,
) -> LossDistribution | None:
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
