r"""Slice quantiles: many quantiles from correlated rank noise and one exponential mechanism per slice.

Imola, Boninsegna, Keller, Aamand, Roy Chowdhury & Pagh, "Differentially Private Quantiles with
Smaller Error" (NeurIPS 2025, arXiv 2505.13662), the SliceQuantiles mechanism (their Alg. 1 and
its (epsilon, delta) variant), on dpdist's public grid and with exact samplers.

**The mechanism.**  The records are mapped to the cells of the public grid of :math:`2^{32}` cells
(:mod:`dpdist.central._grid_quantile`) and sorted, :math:`x_{(0)} \le \dots \le x_{(n-1)}`.  For
probabilities :math:`q_1 < \dots < q_m` the target ranks :math:`r_i = \lfloor q_i n\rfloor` get
the noise :math:`Z_i` of a :math:`k`-ary tree for continual counting (:class:`CountingTree`:
:math:`Z_i` is the sum of the node noises of the base-:math:`k` decomposition of the prefix
:math:`[1, i]`, each node an exact discrete Laplace), so that the noisy ranks
:math:`c_i = r_i + Z_i` are correlated: a step :math:`(0, \dots, 0, 1, \dots, 1)` in the ranks is a
shift of the :math:`H` nodes above one leaf.  Slice :math:`i` holds the :math:`2h + 1` records
:math:`x_{(c_i - h)}, \dots, x_{(c_i + h)}`.  The slices are then released by a binary divide and
conquer (the paper's recursion, as in Kaplan, Schnapp & Stemmer's AQ): the middle slice's median
is drawn by Smith's exponential mechanism within the current bounds :math:`(a, b)` (exactly, on
the grid: :func:`~dpdist.central._grid_quantile.exponential_rank`, records below :math:`a` lowering
the target rank), giving :math:`z`; the slices to its left recurse within :math:`(a, z)`, those
to its right within :math:`(z, b)`.  The utility is the distance from the target rank
:math:`h + 1/2` to the ranks :math:`[\#\{c < k\}, \#\{c \le k\}]` of point :math:`k` (``closed=True``):
a slice inside one atom of tied values then has the atom's point to choose, where the paper's
open rank :math:`\#\{c < k\}`, which assumes distinct values, leaves only the two sides of the
atom, at equal utility, and draws uniformly from the whole range.  Only the :math:`m` grid points
are released; the noisy ranks never leave (:math:`h` is a public function of :math:`n, m,
\varepsilon, \delta`).

**The guarantee** (derived here for this implementation, not copied from the paper; its
(epsilon, delta) variant and its code bound delta the same way, by the probability that the
noise moves the slices into each other).  Neighbours: **replace one record, n public** (the
ranks :math:`\lfloor q_i n\rfloor` use :math:`n`).  Under add/remove neighbours the ranks of all
quantiles move with :math:`n`, which the tree noise cannot hide at the cost of one step, so no
add/remove guarantee is claimed: the release states ``neighbouring="replace"``.

*One insertion at fixed ranks.*  Let :math:`X' = X \cup \{x^*\}`, :math:`x^*` at sorted position
:math:`p`, with the same ranks :math:`r`.  Call the noise *good* when :math:`\max_i |Z_i| \le K`
with :math:`r_{i+1} - r_i - 2K \ge 2h + 4`, :math:`r_1 - K - h \ge 1` and
:math:`r_m + K + h \le n - 3`: the slices are then :math:`2h + 3` apart and inside the data in
both data sets.  Map a good :math:`z'` of :math:`X'` to :math:`z = z' - s_j` (:math:`s_j` the step
starting at slice :math:`j`) where :math:`j` is the first slice lying wholly above :math:`p`; the
slices of :math:`X'` under :math:`z'` and of :math:`X` under :math:`z` are then equal, except the
one slice whose window contains :math:`x^*`, which differs by one swapped record whether it is
shifted or not.  That slice is shifted with probability :math:`\lambda = (c' - p + h + 1)/(2h + 2)`
(a ramp over its :math:`2h + 1` positions), so each :math:`z` receives total weight at most
:math:`1 + 1/(2h + 2)`.  The tree noise has :math:`P(Z = z') \le e^{\varepsilon_{cc}} P(Z = z' -
s_j)` (:math:`H` nodes shift by one, each of scale :math:`H/\varepsilon_{cc}`), the swapped slice's
exponential mechanism (rank utility of sensitivity 1, the other slices' laws unchanged given the
outputs before them) :math:`e^{\varepsilon_{em}}`, so for every output set :math:`S`

.. math::

    P_{X'}(S) \le e^{\varepsilon_1} P_X(S) + \delta_1, \qquad
    \varepsilon_1 = \varepsilon_{cc} + \varepsilon_{em} + \ln\bigl(1 + \tfrac{1}{2h+2}\bigr),
    \quad \delta_1 = P(\max_i |Z_i| > K),

and the same for a removal (the mirrored ramp).  :math:`\delta_1` is bounded by a Chernoff bound
on each :math:`Z_i` (a sum of :math:`T_i` discrete Laplace variables, :math:`T_i` the base-:math:`k`
digit sum of :math:`i`) and a union bound over :math:`i` (:meth:`CountingTree.tail_probability`).

*Replace one record* is a removal then an insertion (ranks fixed at the public :math:`n`; the
conditions above hold for the :math:`n - 1` records in between), so the release is
:math:`(2\varepsilon_1, (1 + e^{\varepsilon_1})\delta_1)`-DP.  The budget: :math:`\varepsilon_1 =
\varepsilon/2`, of which a share ``split`` (default 1/2, the paper's code) goes to the counting
noise, :math:`\ln(1 + 1/(2h+2))` to the ramp and the rest to the exponential mechanism;
:math:`K` is the smallest integer with :math:`(1 + e^{\varepsilon/2})\,\delta_1 \le \delta`, and
:math:`h` the paper's :math:`\lceil (2/\varepsilon_{em}) \ln(2 m G/\beta)\rceil` (:math:`G + 1` grid
points; here :math:`\lceil (2/\varepsilon_{em})(\ln(G + 1) + \ln(2m/\beta))\rceil` with
:math:`\beta = 10^{-3}`, the width within which each mechanism lands with probability
:math:`1 - \beta/(2m)`) capped by the largest :math:`h` the conditions allow (a capped :math:`h` keeps
the guarantee but not the error bound: ``details["rank_error_bound"]["applies"]``).  Where no
:math:`h \ge 1` fits (quantiles too close for the noise at this :math:`n`, :math:`\varepsilon` and
:math:`\delta`), the release is refused with :class:`~dpdist.errors.InvalidParameterError`; the
refusal depends on public values only.

**Rank error** (the paper's Thm.: :math:`O((\log\psi + \log^2 m)/\varepsilon)`).  With
probability :math:`1 - \beta`: :math:`|Z_i| \le K_\beta` for all :math:`i` and every exponential
mechanism lands within :math:`e_\beta = (2/\varepsilon_{em})(\ln(G + 1) + \ln(2m/\beta))` ranks of
its slice's median; when :math:`e_\beta \le h` each output then lies in its own slice and
:math:`|\mathrm{rank}(z_i) - r_i| \le K_\beta + e_\beta + 1` (``details["rank_error_bound"]``;
checked on seeded data in ``tests/central/test_slice_quantiles.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import InvalidParameterError
from .._guarantee import PrivacyGuarantee
from ._grid_quantile import GRID_CELLS, exponential_rank
from .noise import _dyadic_epsilon, discrete_laplace

__all__ = ["CountingTree", "SlicePlan", "slice_plan", "slice_quantile_points", "DEFAULT_DELTA"]

#: delta of ``method="slice"`` when none is given
DEFAULT_DELTA = 1e-10
#: share of each step's budget for the counting noise (the paper's code: 1/2)
SPLIT = 0.5
#: failure probability in the choice of h (the paper's code: 0.05 in ln(2 m psi / beta))
_BETA = 1e-3
#: largest branching factor tried
_MAX_BRANCHING = 1024


def _digit_sums(m: int, k: int, height: int) -> np.ndarray:
    """Base-``k`` digit sums of ``1 .. m``: the number of tree nodes in each prefix."""
    i = np.arange(1, m + 1, dtype=np.int64)
    total = np.zeros(m, dtype=np.int64)
    for _ in range(height):
        total += i % k
        i //= k
    return total


def _max_digit_sum(m: int, k: int) -> int:
    """The largest base-``k`` digit sum of ``1 .. m``: ``m`` itself, or a digit of ``m`` lowered by one and all
    digits after it ``k - 1``."""
    digits = []
    while m:
        digits.append(m % k)
        m //= k
    digits.reverse()
    best = sum(digits)
    for position, digit in enumerate(digits):
        if digit:
            best = max(best, sum(digits[:position]) + digit - 1 + (k - 1) * (len(digits) - position - 1))
    return best


def _height(m: int, k: int) -> int:
    """Smallest ``H`` with ``k**H > m`` (every prefix length ``<= m`` has ``H`` base-``k`` digits)."""
    height, power = 1, k
    while power <= m:
        height, power = height + 1, power * k
    return height


class CountingTree:
    r"""Noise of the :math:`k`-ary tree mechanism for the prefix sums of a stream of length :math:`m`.

    Level :math:`l = 1..H` holds nodes for the blocks of :math:`k^{H-l}` consecutive leaves;
    :math:`Z_i` sums the nodes of the base-:math:`k` decomposition of :math:`[1, i]`.  Every node is
    an exact discrete Laplace of scale :math:`H/\varepsilon'` (:func:`~dpdist.central.noise.discrete_laplace`
    with integer sensitivity :math:`H`), so adding one to every node above a leaf (the only change
    a unit step in the prefix sums needs) costs :math:`\varepsilon' \le \varepsilon`.  The branching
    :math:`k` minimizes the largest variance :math:`T_{\max} \cdot \mathrm{Var}(\text{node})`.

    Parameters
    ----------
    m : int
    epsilon : float
        :math:`\varepsilon_{cc}`.
    branching : int, optional
        :math:`k` (default: the variance-minimizing one).
    """

    def __init__(self, m: int, epsilon: float, branching: int | None = None) -> None:
        self.m, self.epsilon = int(m), float(epsilon)
        # the sampler's decay per unit, from the rounded-down epsilon (heavier tails than nominal)
        self.epsilon_exact = _dyadic_epsilon(self.epsilon)
        if branching is None:
            candidates = range(2, min(self.m + 1, _MAX_BRANCHING) + 1)
            branching = min(candidates, key=self._worst_variance)
        self.k = int(branching)
        self.height = _height(self.m, self.k)
        self.terms = _digit_sums(self.m, self.k, self.height)
        self.decay = float(self.epsilon_exact) / self.height * (1 - 2.0**-40)

    def _worst_variance(self, k: int) -> float:
        height = _height(self.m, k)
        b = math.exp(-float(self.epsilon_exact) / height)
        return _max_digit_sum(self.m, k) * 2 * b / (1 - b) ** 2

    @property
    def sensitivity(self) -> int:
        """:math:`H`: the nodes a unit step in the prefix sums moves by one."""
        return self.height

    def sample(self, rng: np.random.Generator, draws: int | None = None) -> np.ndarray:
        """:math:`Z_1, \\dots, Z_m` (int64), or ``draws`` independent rows of them."""
        rows = 1 if draws is None else int(draws)
        i = np.arange(1, self.m + 1, dtype=np.int64)
        z = np.zeros((rows, self.m), dtype=np.int64)
        for level in range(1, self.height + 1):
            size = self.k ** (self.height - level)
            nodes = discrete_laplace(rows * (self.m // size), self.height, self.epsilon, rng).reshape(rows, -1)
            cumulative = np.concatenate([np.zeros((rows, 1), dtype=np.int64), np.cumsum(nodes, axis=1)], axis=1)
            z += cumulative[:, i // size] - cumulative[:, self.k * (i // (size * self.k))]
        return z[0] if draws is None else z

    def matrix(self) -> np.ndarray:
        """The 0/1 matrix ``A`` with ``Z = A @ nodes`` (rows: prefixes; columns: nodes level by level)."""
        i = np.arange(1, self.m + 1)
        columns = []
        for level in range(1, self.height + 1):
            size = self.k ** (self.height - level)
            block = np.arange(self.m // size)
            low, high = self.k * (i // (size * self.k)), i // size
            columns.append((block[None, :] >= low[:, None]) & (block[None, :] < high[:, None]))
        return np.concatenate(columns, axis=1).astype(np.int64)

    def tail_probability(self, bound: int) -> float:
        r"""An upper bound on :math:`P(\max_i |Z_i| > \text{bound})`.

        Chernoff on each :math:`Z_i` (moment generating function of a discrete Laplace,
        :math:`(1-b)^2/((1-be^\lambda)(1-be^{-\lambda}))`, :math:`b = e^{-a}`), both tails, a union
        bound over :math:`i`; :math:`\lambda` on a grid of :math:`(0, a)` (every :math:`\lambda` is valid).
        """
        a = self.decay
        lam = a * np.linspace(0.005, 0.995, 199)
        b = math.exp(-a)
        log_mgf = 2 * math.log1p(-b) - np.log1p(-b * np.exp(lam)) - np.log1p(-b * np.exp(-lam))
        values, counts = np.unique(self.terms, return_counts=True)
        exponents = -lam[None, :] * (bound + 1) + values[:, None] * log_mgf[None, :]
        per_prefix = np.min(exponents, axis=1) + math.log(2)
        return float(min(1.0, np.sum(counts * np.exp(per_prefix)) * (1 + 2.0**-40)))

    def bound_for(self, delta: float) -> int:
        """The smallest integer ``K`` with :meth:`tail_probability` ``(K) <= delta``."""
        low, high = 0, 1
        while self.tail_probability(high) > delta:
            low, high = high, 2 * high
        while high - low > 1:
            middle = (low + high) // 2
            if self.tail_probability(middle) > delta:
                low = middle
            else:
                high = middle
        return high if self.tail_probability(low) > delta else low


@dataclass(frozen=True)
class SlicePlan:
    """The public parameters of one slice release (a function of ``n``, ``q``, epsilon and delta)."""

    ranks: np.ndarray
    half_width: int
    noise_bound: int
    tree: CountingTree
    epsilon_counting: float
    epsilon_exponential: float
    ramp: float
    delta_step: float
    guarantee: PrivacyGuarantee

    @property
    def epsilon_step(self) -> float:
        """:math:`\\varepsilon_1`: the cost of one insertion or removal."""
        return self.epsilon_counting + self.epsilon_exponential + self.ramp

    def exponential_error(self, beta: float) -> float:
        """Ranks within which every exponential mechanism lands with probability ``1 - beta/2``."""
        exponential = float(_dyadic_epsilon(self.epsilon_exponential))
        return (2 / exponential) * (math.log(GRID_CELLS + 1) + math.log(2 * self.ranks.size / beta))

    def rank_error_bound(self, beta: float) -> float:
        r"""Ranks within which every output lies with probability :math:`1 - \beta` (module docstring):
        :math:`K_{\beta/2} + (2/\varepsilon_{em})(\ln(G + 1) + \ln(2m/\beta)) + 1`, when that EM term is at most h."""
        return self.tree.bound_for(beta / 2) + self.exponential_error(beta) + 1


def _refuse(n: int, q: np.ndarray, epsilon: float, delta: float, why: str) -> InvalidParameterError:
    return InvalidParameterError(
        f"The 'q' parameter of quantiles with method='slice' asks for {q.size} quantiles whose ranks among the "
        f"n = {n} records are too close for the guarantee at epsilon={epsilon!r}, delta={delta!r}: {why}. "
        "Allowed: rank gaps above 2 (h + 2 + K) with h >= 1 (fewer or farther-apart quantiles, a larger epsilon or "
        "delta, or more records); or use method='aq' or 'tree'."
    )


def slice_plan(n: int, q: np.ndarray, epsilon: float, delta: float, *, split: float = SPLIT) -> SlicePlan:
    """The public parameters of a slice release, or :class:`~dpdist.errors.InvalidParameterError` (module docstring)."""
    step = epsilon / 2
    ranks = np.floor(np.asarray(q, dtype=np.float64) * n).astype(np.int64)
    tree = CountingTree(q.size, split * step)
    noise_bound = tree.bound_for(delta / (1 + math.exp(step)))
    gaps = np.diff(ranks)
    room = [int(ranks[0]) - noise_bound - 1, n - 3 - int(ranks[-1]) - noise_bound]
    if gaps.size:
        room.append((int(gaps.min()) - 2 * noise_bound - 4) // 2)
    widest = min(room)
    if widest < 1:
        raise _refuse(n, q, epsilon, delta, f"the rank noise is at most K = {noise_bound} with probability "
                      f"1 - delta, which leaves room for a slice half-width h of {widest}")
    exponential_share = (1 - split) * step
    # h within which each mechanism lands with probability 1 - beta/(2m), after the ramp's share is taken
    log_points = math.log(GRID_CELLS + 1) + math.log(2 * q.size / _BETA)
    first = math.ceil((2 / exponential_share) * log_points)
    wanted = math.ceil((2 / (exponential_share - math.log1p(1 / (2 * first + 2)))) * log_points)
    half_width = min(wanted, widest)
    ramp = math.log1p(1 / (2 * half_width + 2)) * (1 + 2.0**-40)
    epsilon_exponential = exponential_share - ramp
    if epsilon_exponential <= 0:
        raise _refuse(n, q, epsilon, delta, f"a slice half-width of h = {half_width} costs ln(1 + 1/(2h + 2)) = "
                      f"{ramp:.3g}, more than the exponential mechanism's share {exponential_share:.3g}")
    delta_step = tree.tail_probability(noise_bound)
    epsilon_counting = split * step
    total_step = epsilon_counting + epsilon_exponential + ramp
    guarantee = PrivacyGuarantee(min(epsilon, 2 * total_step), min(delta, (1 + math.exp(total_step)) * delta_step),
                                 "replace", "central")
    return SlicePlan(ranks, half_width, noise_bound, tree, epsilon_counting, epsilon_exponential, ramp, delta_step,
                     guarantee)


def slice_quantile_points(cells: np.ndarray, plan: SlicePlan, rng: np.random.Generator,
                          grid_cells: int = GRID_CELLS) -> np.ndarray:
    """The released grid points (int64, one per quantile) for the sorted cells of the records."""
    h, m = plan.half_width, plan.ranks.size
    centres = np.clip(plan.ranks + plan.tree.sample(rng), h, max(h, cells.size - 1 - h))
    target = Fraction(2 * h + 1, 2)
    points = np.empty(m, dtype=np.int64)
    pending = [(0, m, 0, grid_cells)]  # (first slice, end, lo, hi): the slices left to release within [lo, hi]
    while pending:
        first, end, lo, hi = pending.pop()
        if first >= end:
            continue
        middle = (first + end) // 2
        window = cells[int(centres[middle]) - h: int(centres[middle]) + h + 1]
        below = int(np.searchsorted(window, lo, side="left"))
        inside = window[below: int(np.searchsorted(window, hi, side="left"))]
        point = exponential_rank(inside, lo, hi, target - below, plan.epsilon_exponential, rng, closed=True)
        points[middle] = point
        pending.append((first, middle, lo, point))
        pending.append((middle + 1, end, point, hi))
    return points
