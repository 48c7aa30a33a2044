r"""JointExp: all requested quantiles from one exponential mechanism (Gillenwater, Joseph & Kulesza, ICML 2021),
on the public grid, sampled exactly.

**The mechanism** (their Sec. 3, eq. (1) and Alg. 1, on a grid).  The records are mapped to the
cells of a public grid of :math:`G` cells over the bounds and the outputs are the grid's
:math:`G + 1` points (:mod:`dpdist.central._grid_quantile`: a record in cell :math:`c` lies below
point :math:`k` when :math:`c < k`).  For probabilities :math:`q_1 < \dots < q_m`, :math:`q_0 = 0`,
:math:`q_{m+1} = 1`, gaps :math:`g_j = q_j - q_{j-1}`, an output is a non-decreasing tuple of points
:math:`k_1 \le \dots \le k_m` drawn with probability proportional to

.. math::

    \nu(k)\,\exp(\beta\,u(X, k)), \qquad
    u(X, k) = -\sum_{j=1}^{m+1} \bigl|\#\{c : k_{j-1} \le c < k_j\} - n g_j\bigr|,
    \quad k_0 = 0,\ k_{m+1} = G,

:math:`\beta \le \varepsilon / (2\Delta u)` (an exact double, rounded down) and the base measure
:math:`\nu(k) = 1/\prod_p r_p!`, :math:`r_p` the number of outputs at point :math:`p`: the grid
version of the paper's Lebesgue measure on sorted vectors (the mass of :math:`r` sorted outputs
among :math:`s` points is :math:`s^r/r!`, as :math:`w^r/r!` for an interval of width :math:`w`), a
function of the output alone.  :math:`\Delta u = 2(1 - \min_j g_j)` under add/remove neighbours
(adding a record in gap :math:`k` moves that gap's count by 1 and every target :math:`n g_j` by
:math:`g_j`), so the mechanism is :math:`\varepsilon`-DP (McSherry & Talwar 2007);
``tests/central/test_joint_exp.py`` checks the density ratio of neighbours exactly.

**The law as a dynamic program** (the paper's Sec. 4 on groups of points).  Points between two
consecutive distinct cells share their rank: group :math:`i` has :math:`s_i` points of rank
:math:`R_i` (:math:`R_0 = 0 < \dots < R_D = n`).  With :math:`\phi_j(d) = e^{-\beta|d - n
g_j|}` and :math:`\alpha[j, i, k]` the weight of outputs :math:`1..j` whose last :math:`k + 1` lie in
group :math:`i`,

.. math::

    \alpha[1, i, 0] &= s_i\,\phi_1(R_i), \qquad
    \alpha[j, i, 0] = s_i \sum_{i' < i} \phi_j(R_i - R_{i'}) \sum_k \alpha[j-1, i', k], \\
    \alpha[j, i, k] &= \alpha[j-k, i, 0] \prod_{l=j-k+1}^{j} \phi_l(0)\; s_i^k / (k+1)!,

and the tuple is drawn backwards: :math:`(k, i)` of the last run with weight :math:`\alpha[m, i,
k]\,\phi_{m+1}(n - R_i)`, then the run before it below :math:`i` with :math:`\alpha[j, i', k']\,
\phi_{j+1}(R_i - R_{i'})`, and so on; the :math:`k + 1` points of a run are :math:`k + 1` uniform
points of the group, sorted.

**No FFT.**  The kernel is a two-sided exponential in the rank difference :math:`d = R_i - R_{i'}`,
so the sum over :math:`i' < i` splits at :math:`d = n g_j`: the terms with :math:`d \ge n g_j` are
:math:`e^{-\beta(R_i - n g_j)}` times a prefix sum of :math:`e^{\beta R_{i'}} \sum_k\alpha` (a
cumulative log-sum-exp), those with :math:`d < n g_j` are :math:`e^{\beta(R_i - n g_j)}` times a
window sum of :math:`e^{-\beta R_{i'}} \sum_k \alpha` (a disjoint sparse table of log-sum-exps).
Both add positive terms only, so every entry is computed to a small *relative* error (an FFT would
lose every weight below :math:`2^{-52}` of its row's largest), in
:math:`O(m D \log D + m^2 D)`.

**Exact sampling.**  Every backward step is a race of certified Gumbels
(:func:`~dpdist.central._exact_choice.certified_gumbel_max`) over the step's weights, whose
error is bounded rigorously: the tables carry, row by row, a bound on the absolute error of
their logarithms (every operation adds at most :math:`8u(|v| + 1)`, :math:`u` the unit roundoff,
:math:`v` the largest magnitude of the row; accumulations are two-level, so a sum of :math:`L`
terms takes :math:`2\sqrt L` rounding steps).  When a step cannot be decided, the tables are
recomputed in ``numpy.longdouble`` (64-bit significand) and then, if still needed, in
``decimal`` arithmetic (sequential sums in the linear domain, :math:`O(m^2 D)` operations: slow
at large :math:`D`, and reached with probability far below :math:`10^{-9}`).  The drawn tuple
therefore has exactly the mechanism's law.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction
from typing import Callable

import numpy as np

from ._exact_choice import FAR, certified_gumbel_max
from ._grid_quantile import rank_groups
from .noise import _dyadic_epsilon
from .._types import ArrayLike

__all__ = ["joint_exp_sensitivity", "joint_exp_beta", "JointExpTables", "joint_exp"]

#: sums longer than this are accumulated in two levels (blocks, then the blocks' totals)
_BLOCK = 1024


def _gaps(q: np.ndarray) -> list[Fraction]:
    """The exact gaps :math:`q_j - q_{j-1}` (:math:`q_0 = 0`, :math:`q_{m+1} = 1`) of the doubles ``q``."""
    edges = [Fraction(0), *(Fraction(float(v)) for v in q), Fraction(1)]
    return [b - a for a, b in zip(edges[:-1], edges[1:])]


def joint_exp_sensitivity(q: np.ndarray) -> float:
    r"""Add/remove sensitivity of the JointExp utility, :math:`2 (1 - \min_j (q_j - q_{j-1}))`."""
    return float(2 * (1 - min(_gaps(q))))


def joint_exp_beta(q: np.ndarray, epsilon: float) -> float:
    r""":math:`\beta`: the largest double at most :math:`\varepsilon' / (2\Delta u)`.

    :math:`\varepsilon'` is ``epsilon`` rounded down to a dyadic rational (as for the Laplace noise).
    """
    exact = _dyadic_epsilon(epsilon) / (4 * (1 - min(_gaps(q))))
    beta = float(exact)
    while Fraction(beta) > exact:  # float() rounds to nearest: step down to stay below
        beta = math.nextafter(beta, 0.0)
    return beta


def _cumulative_log_sum(values: np.ndarray) -> np.ndarray:
    """Cumulative log-sum-exp along the last axis, in two levels when it is long (see the module docstring)."""
    length = values.shape[-1]
    if length <= _BLOCK:
        return np.logaddexp.accumulate(values, axis=-1)
    block = 1 << math.ceil(math.log2(math.sqrt(length)))
    padded = -(-length // block) * block
    shape = values.shape[:-1] + (padded // block, block)
    grid = np.concatenate([values, np.full(values.shape[:-1] + (padded - length,), -np.inf, values.dtype)], axis=-1)
    local = np.logaddexp.accumulate(grid.reshape(shape), axis=-1)
    carry = np.logaddexp.accumulate(local[..., -1], axis=-1)
    before = np.concatenate([np.full(values.shape[:-1] + (1,), -np.inf, values.dtype), carry[..., :-1]], axis=-1)
    return np.logaddexp(local, before[..., None]).reshape(values.shape[:-1] + (padded,))[..., :length]


def _range_logsumexp(values: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``log sum exp(values[left[t] .. right[t]])`` for every query ``t`` (``-inf`` where ``left > right``).

    A disjoint sparse table: at level ``h`` the array is cut into blocks of ``2^(h+1)``, and each
    half's sums are accumulated outwards from the block's middle, so a range whose ends lie in the
    two halves of one block is one left sum and one right sum (no subtraction).
    """
    out = np.full(left.shape, -np.inf, dtype=values.dtype)
    valid = left <= right
    single = valid & (left == right)
    out[single] = values[left[single]]
    pairs = np.flatnonzero(valid & (left < right))
    if pairs.size == 0:
        return out
    size = 1 << max(1, math.ceil(math.log2(values.size)))
    table = np.full(size, -np.inf, dtype=values.dtype)
    table[: values.size] = values
    levels = np.floor(np.log2((left[pairs] ^ right[pairs]).astype(np.float64))).astype(np.int64)
    for level in np.unique(levels):
        half = 1 << int(level)
        blocks = table.reshape(-1, 2, half)
        suffix = _cumulative_log_sum(blocks[:, 0, ::-1])[:, ::-1].reshape(-1)  # sums from a point to the middle
        prefix = _cumulative_log_sum(blocks[:, 1, :]).reshape(-1)  # sums from the middle to a point
        chosen = pairs[levels == level]
        lo, hi = left[chosen], right[chosen]
        out[chosen] = np.logaddexp(suffix[(lo // (2 * half)) * half + lo % half],
                                   prefix[(hi // (2 * half)) * half + hi % half])
    return out


class JointExpTables:
    r"""The dynamic program of JointExp on one data set's grid cells (see the module docstring).

    Parameters
    ----------
    sorted_cells : ndarray of int64
        The records' grid cells, sorted.
    grid_cells : int
        :math:`G`: the outputs are the points ``0 .. G``.
    q : ndarray
        Strictly increasing probabilities in (0, 1).
    epsilon : float
    dtype : {numpy.float64, numpy.longdouble}
        The floating type of the tables.

    Attributes
    ----------
    starts, sizes, ranks : ndarray
        The groups of points sharing a rank: first point, number of points :math:`s_i`, rank :math:`R_i`.
    start, total : ndarray, shape (m, groups)
        :math:`\log\alpha[j, i, 0]` and :math:`\log\sum_k \alpha[j, i, k]`.
    radius : ndarray, shape (m,)
        A bound on the absolute error of the logarithms of row ``j`` (of both tables).
    """

    def __init__(self, sorted_cells: np.ndarray, grid_cells: int, q: np.ndarray, epsilon: float, *,
                 dtype: type[np.floating] = np.float64) -> None:
        self.starts, self.sizes, self.ranks = rank_groups(np.asarray(sorted_cells, dtype=np.int64), 0, int(grid_cells))
        self.n, self.m, self.size = int(len(sorted_cells)), int(q.size), int(self.sizes.size)
        self.q, self.epsilon, self.dtype = np.asarray(q, dtype=np.float64), float(epsilon), dtype
        self.sensitivity = joint_exp_sensitivity(q)
        self.beta = joint_exp_beta(q, epsilon)
        self.exact_targets = [self.n * gap for gap in _gaps(q)]  # n g_j, gaps 0..m
        self.targets = np.array([float(t) for t in self.exact_targets])
        self._cumulative_targets = [Fraction(0)]
        for target in self.exact_targets:
            self._cumulative_targets.append(self._cumulative_targets[-1] + target)
        self.unit = float(np.finfo(dtype).eps) / 2
        self.log_size = np.log(self.sizes.astype(dtype))
        self.start = np.empty((self.m, self.size), dtype=dtype)
        self.total = np.empty((self.m, self.size), dtype=dtype)
        self.radius = np.zeros(self.m)
        for j in range(self.m):
            self._row(j)

    # ------------------------------------------------------------------ pieces of the law
    def log_phi(self, gap: int, difference: ArrayLike) -> np.ndarray:
        r""":math:`\log\phi` of gap ``gap`` (0: below the first output, ``m``: above the last) at rank differences."""
        return -self.dtype(self.beta) * np.abs(np.asarray(difference, dtype=self.dtype) - self.dtype(self.targets[gap]))

    def _phi_error(self, gap: int, largest: float) -> float:
        """Error bound of :meth:`log_phi` at differences up to ``n``: the target's rounding and three operations."""
        target = abs(float(self.targets[gap]))
        return self.beta * (math.ulp(target) + 4 * self.unit * (self.n + target + 1)) + 4 * self.unit * (largest + 1)

    def repeat_offset(self, j: int, k: int) -> np.ndarray:
        r""":math:`\log(\prod_{l=j-k+1}^{j}\phi_l(0)\, s_i^k/(k+1)!)` for every group (0-indexed quantile ``j``).

        :math:`\sum_l \log\phi_l(0) = -\beta \sum_l n g_l` is computed from the exact rationals
        and rounded once to the tables' type (its error is far inside the bound of :meth:`_row`).
        """
        exact = -Fraction(self.beta) * (self._cumulative_targets[j + 1] - self._cumulative_targets[j - k + 1])
        high = float(exact)
        zero = self.dtype(high) + self.dtype(float(exact - Fraction(high)))  # to within the type's rounding
        # log (k+1)!: math.lgamma is within 4 ulps, as scipy's gammaln (both inside the rounding of _row's radius)
        return (zero - self.dtype(math.lgamma(k + 2))) + k * self.log_size

    def _kernel(self, j: int) -> tuple[np.ndarray, float]:
        r""":math:`\log\sum_{i'<i}\phi_j(R_i - R_{i'})\sum_k\alpha[j-1, i', k]` and the largest magnitude met."""
        total = self.total[j - 1]
        ranks = self.ranks.astype(self.dtype)
        beta, target = self.dtype(self.beta), self.dtype(self.targets[j])
        index = np.arange(self.size)
        # the last i' < i with d >= n g_j (at n = 0 the target is 0 and i' = i would qualify: it is not summed)
        far = np.minimum(np.searchsorted(self.ranks, self.ranks - self.targets[j], side="right") - 1, index - 1)
        rising = _cumulative_log_sum(total + beta * ranks)
        with np.errstate(invalid="ignore"):
            part_far = np.where(far >= 0, rising[np.maximum(far, 0)], -np.inf) - beta * (ranks - target)
        part_near = _range_logsumexp(total - beta * ranks, far + 1, index - 1) + beta * (ranks - target)
        # every intermediate (the shifted totals, their partial sums, the two parts) is below this in magnitude
        finite = total[np.isfinite(total)]
        largest = (float(np.max(np.abs(finite), initial=0.0)) + self.beta * self.n + abs(float(target))
                   + math.log(self.size) + 1)
        return np.logaddexp(part_far, part_near), largest

    def _row(self, j: int) -> None:
        """Fill ``start[j]``, ``total[j]`` and ``radius[j]``."""
        steps = 2 * math.isqrt(self.size) + 16  # rounding steps on any path through one row
        if j == 0:
            self.start[0] = self.log_phi(0, self.ranks) + self.log_size
            largest, inherited = float(self.beta * self.n + abs(self.targets[0])), 0.0
        else:
            kernel, largest = self._kernel(j)
            self.start[j] = kernel + self.log_size
            inherited = float(self.radius[j - 1])
        with np.errstate(invalid="ignore"):
            total = self.start[j].copy()
            for k in range(1, j + 1):
                total = np.logaddexp(total, self.start[j - k] + self.repeat_offset(j, k))
                inherited = max(inherited, float(self.radius[j - k]))
        self.total[j] = total
        finite = self.total[j][np.isfinite(self.total[j])]
        largest = max(largest, float(np.max(np.abs(finite), initial=0.0))) + float(np.max(np.abs(self.log_size)))
        repeats = sum(self._phi_error(gap, largest) for gap in range(1, j + 1))
        rounding = (steps + 3 * j) * 8 * self.unit * (largest + 1)
        self.radius[j] = inherited + rounding + self._phi_error(j, largest) + repeats

    # ------------------------------------------------------------------ backward sampling
    def step_row(self, j: int, k: int, last: int, first: bool) -> np.ndarray:
        """Log weights of the groups ``i`` for the run of ``k + 1`` outputs ending at output ``j``.

        The next output up lies in group ``last`` (``first``: there is none, the link is to the
        top, rank ``n``, and ``i = last`` is allowed).
        """
        stop = last + 1 if first else last
        link = self.log_phi(self.m if first else j + 1, self.ranks[last] - self.ranks[:stop])
        if k == 0:
            return self.start[j, :stop] + link
        return self.start[j - k, :stop] + self.repeat_offset(j, k)[:stop] + link

    def step_error(self, j: int, first: bool, largest: float) -> float:
        """Error bound of :meth:`step_row` for rows ``0 .. j`` whose magnitudes are below ``largest``."""
        gap = self.m if first else j + 1
        return float(np.max(self.radius[: j + 1])) + self._phi_error(gap, largest) + 32 * self.unit * (largest + 1)

    def step_log_weights(self, j: int, last: int, first: bool) -> tuple[np.ndarray, float]:
        """Every row of :meth:`step_row` (``weights[k, i]``) and their error bound (small tables; tests)."""
        weights = np.stack([self.step_row(j, k, last, first) for k in range(j + 1)])
        finite = weights[np.isfinite(weights)]
        return weights, self.step_error(j, first, float(np.max(np.abs(finite), initial=0.0)))


def _window_sums(values: list, lefts: np.ndarray, rights: np.ndarray) -> list:
    """Sums of ``values[l .. r]`` for windows whose ends never move left (two stacks: additions only)."""
    zero = values[0] * 0 if values else 0
    front: list = []  # partial sums from each front element to the front's end, the first element on top
    back_sum, back = zero, []
    start = end = 0  # the queue holds values[start:end]
    out = []
    for left, right in zip(lefts.tolist(), rights.tolist()):
        while end <= right:
            back.append(values[end])
            back_sum += values[end]
            end += 1
        while start < min(left, end):
            if not front:
                running = zero
                for value in reversed(back):
                    running += value
                    front.append(running)
                back, back_sum = [], zero
            front.pop()
            start += 1
        start, end = max(start, left), max(end, left)
        out.append((front[-1] if front else zero) + back_sum if left <= right else zero)
    return out


class _DecimalJointExp:
    """The same dynamic program in ``decimal`` arithmetic, in the linear domain, by sequential sums (no subtraction)."""

    def __init__(self, tables: JointExpTables, digits: int):
        self.tables = tables
        self.context = decimal.Context(prec=digits + 10, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
        self._phi: dict[tuple[int, int], decimal.Decimal] = {}  # phi's values, each computed once in self.context
        with decimal.localcontext(self.context):
            self.beta = decimal.Decimal(tables.beta)
            self.targets = [self._decimal(t) for t in tables.exact_targets]
            self.start: list[list[decimal.Decimal]] = []
            self.total: list[list[decimal.Decimal]] = []
            for j in range(tables.m):
                self._row(j)

    def _decimal(self, value: Fraction) -> decimal.Decimal:
        return self.context.divide(value.numerator, value.denominator)

    def phi(self, gap: int, difference: int) -> decimal.Decimal:
        """:math:`\\phi` of gap ``gap`` at a rank difference, in ``self.context`` (every caller's; kept once computed:
        ``repeat`` asks for the same ``phi(gap, 0)`` for every group)."""
        value = self._phi.get((gap, difference))
        if value is None:
            with decimal.localcontext(self.context):
                value = self._phi[gap, difference] = (-self.beta * abs(difference - self.targets[gap])).exp()
        return value

    def repeat(self, j: int, k: int, i: int) -> decimal.Decimal:
        factor = decimal.Decimal(int(self.tables.sizes[i])) ** k / math.factorial(k + 1)
        for gap in range(j - k + 1, j + 1):
            factor *= self.phi(gap, 0)
        return factor

    def _row(self, j: int) -> None:
        tables = self.tables
        ranks, sizes = tables.ranks.tolist(), tables.sizes.tolist()
        if j == 0:
            start = [size * self.phi(0, rank) for size, rank in zip(sizes, ranks)]
        else:
            target = tables.exact_targets[j]
            previous = self.total[j - 1]
            far = [min(int(np.searchsorted(tables.ranks, math.floor(rank - target), side="right")) - 1, i - 1)
                   for i, rank in enumerate(ranks)]
            rising, running = [], decimal.Decimal(0)
            for rank, value in zip(ranks, previous):
                running += (self.beta * rank).exp() * value
                rising.append(running)
            falling = [(-self.beta * rank).exp() * value for rank, value in zip(ranks, previous)]
            near = _window_sums(falling, np.array(far) + 1, np.arange(len(ranks)) - 1)
            shift = self.targets[j]
            start = [
                size * ((-self.beta * (rank - shift)).exp() * (rising[p] if p >= 0 else 0)
                        + (self.beta * (rank - shift)).exp() * w)
                for size, rank, p, w in zip(sizes, ranks, far, near)
            ]
        self.start.append(start)
        self.total.append([
            sum((self.start[j - k][i] * self.repeat(j, k, i) for k in range(1, j + 1)), start[i])
            for i in range(len(ranks))
        ])

    def log_weight(self, j: int, last: int, first: bool, k: int, i: int, context: decimal.Context) -> decimal.Decimal:
        """:math:`\\log(\\alpha[j, i, k] \\times \\text{link})` at ``context``'s precision."""
        tables = self.tables
        gap = tables.m if first else j + 1
        with decimal.localcontext(self.context):
            link = self.phi(gap, int(tables.ranks[last] - tables.ranks[i]))
            weight = self.start[j - k][i] * self.repeat(j, k, i) * link
            return context.plus(weight.ln())


def joint_exp(
    sorted_cells: np.ndarray, grid_cells: int, q: np.ndarray, epsilon: float, rng: np.random.Generator
) -> tuple[np.ndarray, JointExpTables]:
    """One JointExp draw: the sorted output points (integers in ``0 .. grid_cells``) and the tables used."""
    tables = JointExpTables(sorted_cells, grid_cells, q, epsilon)
    sharper: dict = {}

    def exact_tables(digits: int) -> _DecimalJointExp:
        if sharper.get("digits", 0) < digits:
            sharper.update(digits=digits, decimal=_DecimalJointExp(tables, digits))
        return sharper["decimal"]

    def long_tables() -> JointExpTables:  # the same tables in long double: tighter bounds before any decimal
        if "long" not in sharper:
            sharper["long"] = JointExpTables(sorted_cells, grid_cells, q, epsilon, dtype=np.longdouble)
        return sharper["long"]

    points = np.empty(tables.m, dtype=np.int64)
    j, last, first = tables.m - 1, tables.size - 1, True
    while j >= 0:
        k, group = _draw_run(tables, j, last, first, exact_tables, long_tables, rng)
        low, size = int(tables.starts[group]), int(tables.sizes[group])
        points[j - k : j + 1] = np.sort(low + rng.integers(0, size, size=k + 1))
        j, last, first = j - k - 1, group, False
    return points, tables


def _magnitude(values: np.ndarray) -> float:
    """The largest magnitude of the finite entries (0 if none)."""
    return float(np.max(np.abs(values[np.isfinite(values)]), initial=0.0))


def _log_sum(values: np.ndarray) -> np.floating:
    """``log sum exp(values)`` by scaling to the largest (``exp`` of non-positive numbers, a pairwise sum).

    Positive terms only: the result's error is a few units of :math:`u` times the largest magnitude
    of ``values`` plus :math:`u \\log_2 N`, inside the pooling bound of :func:`_race_scores`.
    """
    top = np.max(values, initial=-np.inf)
    if not np.isfinite(top):
        return top
    return top + np.log(np.sum(np.exp(values - top)))  # in the values' own type (long double for the long tables)


def _split_rows(tables: JointExpTables, j: int, last: int, first: bool) -> tuple[list[int], dict[int, np.ndarray]]:
    """The rows ``k`` whose largest weight is within FAR of the best row's (and those rows), in one pass.

    A row is kept while it is within FAR of the best row seen so far: every row of the final
    answer is, so at most the contending rows are held at once.
    """
    kept: dict[int, np.ndarray] = {}
    maxima = np.full(j + 1, -np.inf)
    for k in range(j + 1):
        row = tables.step_row(j, k, last, first)
        maxima[k] = np.max(row)
        if maxima[k] >= np.max(maxima) - FAR:
            kept[k] = row
    near = np.flatnonzero(maxima >= np.max(maxima) - FAR).tolist()
    return near, {k: kept[k] for k in near}


def _race_scores(tables: JointExpTables, j: int, last: int, first: bool, near: list[int], far: list[int],
                 rows: dict[int, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Scores of the race (the near rows' weights, then the far rows' pooled log-sum-exp) and their error bounds.

    A score's bound is :meth:`JointExpTables.step_error` at the largest magnitude of the terms that
    made it; the pooled score adds the rounding of a sum of positive terms (``4 N u`` relative).
    """
    near_rows = [rows[k] if rows is not None else tables.step_row(j, k, last, first) for k in near]
    width = near_rows[0].size
    near_magnitude = max(_magnitude(row) for row in near_rows)
    errors = [np.full(width * len(near), tables.step_error(j, first, near_magnitude))]
    if far:
        pooled, magnitude = -np.inf, 0.0
        for k in far:
            row = tables.step_row(j, k, last, first)
            pooled = np.logaddexp(pooled, _log_sum(row))
            magnitude = max(magnitude, _magnitude(row))
        magnitude = max(magnitude, abs(float(pooled)) if np.isfinite(pooled) else 0.0)
        pooling = 8 * width * len(far) * tables.unit * (magnitude + 1)
        near_rows.append(np.array([pooled]))
        errors.append(np.array([tables.step_error(j, first, magnitude) + pooling]))
    return np.concatenate(near_rows).astype(np.float64), np.concatenate(errors)


def _draw_run(tables: JointExpTables, j: int, last: int, first: bool, exact_tables: Callable[[int], _DecimalJointExp],
              long_tables: Callable[[], JointExpTables], rng: np.random.Generator) -> tuple[int, int]:
    """``(k, i)`` of the run ending at output ``j``: a certified race over the rows near the top, the others pooled.

    Rows ``k`` whose largest weight is more than :data:`~dpdist.central._exact_choice.FAR` below the
    best row's race as one candidate (their log-sum-exp), so only a few rows are held at a time.
    The long-double tables sharpen the scores of a race the doubles cannot decide, and the decimal
    ones (exact to their precision) decide the rest.
    """
    near, rows = _split_rows(tables, j, last, first)
    far = [k for k in range(j + 1) if k not in rows]
    width = rows[near[0]].size
    scores, errors = _race_scores(tables, j, last, first, near, far, rows)

    def candidate(index: int) -> tuple[int, int]:
        row, group = divmod(int(index), width)
        return near[row], group

    def exact(index: int, context: decimal.Context) -> decimal.Decimal:
        table = exact_tables(context.prec)
        if index == len(near) * width:  # the pooled rows
            return context.ln(sum(context.exp(table.log_weight(j, last, first, k, i, context))
                                  for k in far for i in range(width)))
        k, i = candidate(index)
        return table.log_weight(j, last, first, k, i, context)

    def sharper() -> tuple[np.ndarray, np.ndarray]:
        return _race_scores(long_tables(), j, last, first, near, far)

    winner = certified_gumbel_max(scores, errors, exact, rng, sharper)
    if winner < len(near) * width:
        return candidate(winner)
    # the pooled rows won (their total is below e^-FAR of the best row's): race among them
    pooled = np.concatenate([tables.step_row(j, k, last, first) for k in far])
    inner = certified_gumbel_max(pooled, float(errors[-1]), lambda index, context: exact_tables(context.prec).log_weight(
        j, last, first, far[index // width], index % width, context), rng)
    return far[inner // width], inner % width
