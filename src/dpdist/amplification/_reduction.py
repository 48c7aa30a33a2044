r"""The hockey-stick divergence of one neighbouring pair's reduction, computed exactly by blocks.

The reduction (module :mod:`dpdist.amplification`, "Method"): the victim's report falls in
category 0, 1 or 2 with probabilities :math:`a^{(0)} = (a_0, a_1, a_2)` under :math:`x_0` and
:math:`a^{(1)} = (b_0, b_1, a_2)` under :math:`x_1` (:math:`a_0 > b_0`, :math:`a_1 < b_1`); each of
the other :math:`n - 1` users independently
falls in category :math:`k` with probability :math:`r_k` and is *revealed* (its report handed to
the adversary, who knows its value) otherwise.  With :math:`M \sim \mathrm{Bin}(n-1, R)`,
:math:`R = r_0 + r_1 + r_2`, users in a category and :math:`\rho = r / R`, the adversary sees
:math:`M` and the category counts :math:`N` of the :math:`m = M + 1` unrevealed reports, and

.. math::

    P_{x_0}(N \mid M) = \mathrm{Mult}_m(N; \rho)\, \sum_k \frac{a^{(0)}_k N_k}{m \rho_k},
    \qquad
    \delta_M(t) = \frac1m\, \mathbb E_{N \sim \mathrm{Mult}_m(\rho)}
        \Bigl[\bigl(\textstyle\sum_k A_k N_k\bigr)_+\Bigr],
    \quad A_k = \frac{a^{(0)}_k - e^t a^{(1)}_k}{\rho_k}

(the identity :math:`\mathrm{Mult}_{m-1}(N - e_k) = \mathrm{Mult}_m(N) N_k / (m \rho_k)`).  With
:math:`c = N_0 + N_1 \sim \mathrm{Bin}(m, \rho_0 + \rho_1)` and :math:`N_0 \mid c \sim
\mathrm{Bin}(c, s)`, :math:`s = \rho_0/(\rho_0+\rho_1)`, the sum is
:math:`D N_0 + B c + A_2 m` (:math:`D = A_0 - A_1 > 0` for :math:`e^t < a_0/b_0`,
:math:`B = A_1 - A_2`), and its positive part given :math:`c` is two binomial tails.

Blocks (each an upper bound, so the total is one):

* over :math:`M`: :math:`\delta_M` does not increase with :math:`M` (one more unrevealed user
  adds an independent report: a post-processing), so a block of :math:`M` is charged
  :math:`\delta` at its smallest :math:`M`; blocks are at most 0.4% of :math:`M` wide (at most 64 of them) over
  eight standard deviations, and the mass below them is charged 1;
* over :math:`c`: writing :math:`D N_0 + B c = D(N_0 - s c) + \kappa c`,
  :math:`\kappa = D s + B`, the fluctuation :math:`D(N_0 - sc)` gains an independent
  mean-zero increment with every unit of :math:`c` (so its positive-part expectation grows with
  :math:`c`, by Jensen), and :math:`\kappa c` is at most its value at the block's end where it is
  largest: each :math:`c` of a block :math:`[c_s, c_e]` is charged
  :math:`\mathbb E[(D(N - s c_e) + \max(\kappa c_s, \kappa c_e) + A_2 m)_+]`,
  :math:`N \sim \mathrm{Bin}(c_e, s)`.  Blocks are a tenth of a standard deviation of
  :math:`c` wide (wider if the cells would exceed 8192) over eight standard deviations; the mass of :math:`c` outside them is charged
  its probability under :math:`x_0`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from . import _binomial

__all__ = ["Reduction", "PairDivergence"]

#: standard deviations kept around the means of M and c; the mass outside is charged in full
_WINDOW_SD = 8.0
#: width of an M block, relative to M
_M_RELATIVE_WIDTH = 0.004
#: at most this many M blocks (the cells left go to c)
_MAX_M_BLOCKS = 64
#: width of a c block, in standard deviations of c
_C_WIDTH_SD = 0.1
#: at most this many (M block, c block) cells per evaluation (2x more moves epsilon by < 0.2%)
_MAX_CELLS = 8192
#: the values of delta(t) a divergence keeps, and the divergences :func:`pair_divergence` keeps (each at most
#: _MAX_CELLS cells of five float arrays: 330 kB)
_MAX_REMEMBERED = 4096
_KEPT_DIVERGENCES = 64


@dataclass(frozen=True)
class Reduction:
    """One neighbouring pair's reduction (module docstring of :mod:`._reduction`).

    ``victim = (a0, a1, a2)`` and ``victim_other = (b0, b1, a2)``: the victim's categories under
    ``x0`` and ``x1``; ``others = (r0, r1, r2)``: each other user's probability of each category
    (revealed otherwise; ``r0, r1 > 0``).
    """

    victim: tuple[float, float, float]
    victim_other: tuple[float, float, float]
    others: tuple[float, float, float]

    @property
    def ratio(self) -> float:
        """The victim's largest likelihood ratio ``a0 / b0``: the divergence is 0 at ``e^t >= ratio``."""
        return self.victim[0] / self.victim_other[0]


def _windows(trials: int, p: float, relative: float | None, width_sd: float | None, max_blocks: int = _MAX_CELLS):
    """Block starts and ends covering mean +- _WINDOW_SD sd of Bin(trials, p): widths ``relative`` to the
    start, or ``width_sd`` standard deviations but at most ``max_blocks`` blocks."""
    mean, sd = trials * p, math.sqrt(trials * p * (1 - p))
    low = max(0, int(math.floor(mean - _WINDOW_SD * sd)))
    high = min(trials, int(math.ceil(mean + _WINDOW_SD * sd)))
    if relative is not None:  # widths proportional to the start, at most max_blocks of them
        grown = [low]
        floor = max(1, -(-(high - low + 1) // max_blocks))
        while True:
            width = max(floor, int(relative * grown[-1]))
            if grown[-1] + width > high:
                break
            grown.append(grown[-1] + width)
        starts = np.asarray(grown, dtype=np.float64)
    else:
        assert width_sd is not None  # one of the two widths is given
        width = max(1, int(width_sd * sd), -(-(high - low + 1) // max_blocks))
        starts = np.arange(low, high + 1, width, dtype=np.float64)
    ends = np.append(starts[1:] - 1, high)
    return starts, ends


class PairDivergence:
    """:math:`\\delta(t)` of one reduction for ``n`` users, its blocks computed once (module docstring)."""

    def __init__(self, reduction: Reduction, n: int):
        r = np.asarray(reduction.others, dtype=np.float64)
        self.reduction, self.n = reduction, n
        self.total = min(1.0, float(r.sum()))  # at most the blanket's mass, 1 up to rounding
        self.rho = r / self.total
        self.a = np.asarray(reduction.victim, dtype=np.float64)
        self.b = np.asarray(reduction.victim_other, dtype=np.float64)
        q = float(self.rho[0] + self.rho[1])
        self.q = 1.0 if self.rho[2] == 0 else q
        self.s = float(self.rho[0] / q) if q > 0 else 0.0
        self.revealed = self.rho == 0  # no other user is in these categories: the victim's presence shows
        self._tails_cache: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # the last call's k and tails
        self._deltas: dict[float, float] = {}  # delta(t) by t: a bisection of another account asks again
        if q > 0:
            self._blocks(n - 1)
        else:  # nobody else carries the informative parts: only the revealed terms remain
            self.constant, self.m, self.c_start, self.c_end, self.weight = 0.0, *(np.zeros(0) for _ in range(4))

    def _blocks(self, trials: int) -> None:
        m_starts, m_ends = _windows(trials, self.total, _M_RELATIVE_WIDTH, None, _MAX_M_BLOCKS)
        m_ends[-1] = trials  # the upper tail is charged at the last block's smallest M
        m_mass = _binomial.between(m_starts, m_ends, trials, self.total)
        self.constant = float(1.0 - _binomial.at_least(m_starts[:1], trials, self.total)[0])  # M below the window
        cells = []
        per_block = max(32, _MAX_CELLS // max(1, int(np.count_nonzero(m_mass > 0))))
        for m_start, mass in zip(m_starts, m_mass):
            if mass <= 0:
                continue
            m = int(m_start) + 1
            if self.q == 1.0:
                cells.append((np.array([m]), np.array([m], dtype=np.float64), np.array([m], dtype=np.float64), np.array([mass])))
                continue
            c_starts, c_ends = _windows(m, self.q, None, _C_WIDTH_SD, per_block)
            c_mass = _binomial.between(c_starts, c_ends, m, self.q)
            # c outside the window: at most its probability under x0 (the victim adds at most one to c)
            # (c is the others' count, Bin(m - 1, q), plus at most one)
            below = 1.0 - _binomial.at_least(c_starts[:1], m - 1, self.q)[0]
            outside = below + _binomial.at_least(c_ends[-1:], m - 1, self.q)[0]
            self.constant += mass * min(1.0, outside)
            cells.append((np.full(c_starts.size, m), c_starts, c_ends, mass * c_mass))
        self.m = np.concatenate([cell[0] for cell in cells]).astype(np.float64)
        self.c_start = np.concatenate([cell[1] for cell in cells])
        self.c_end = np.concatenate([cell[2] for cell in cells])
        self.weight = np.concatenate([cell[3] for cell in cells]) / self.m

    def _tails(self, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``P[Bin(c_end, s) >= k]`` and ``P[Bin(c_end - 1, s) >= k - 1]`` per cell, evaluated only where ``k`` differs
        from the previous call's (a search over ``t`` moves ``k`` in few cells once it closes in: the same numbers
        with 3-10x fewer incomplete beta evaluations).  Each call's arrays are new, so a call never sees another's."""
        c_end, s, cache = self.c_end, self.s, self._tails_cache
        if cache is None or cache[0].shape != k.shape:
            upper, tail = _binomial.at_least(k, c_end, s), _binomial.at_least(k - 1, c_end - 1, s)
        else:
            changed = k != cache[0]
            upper, tail = cache[1].copy(), cache[2].copy()
            if changed.any():
                upper[changed] = _binomial.at_least(k[changed], c_end[changed], s)
                tail[changed] = _binomial.at_least(k[changed] - 1, c_end[changed] - 1, s)
        self._tails_cache = (k, upper, tail)
        return upper, tail

    def delta(self, t: float) -> float:
        """An upper bound on :math:`\\delta(t)`, the hockey-stick divergence :math:`D_{e^t}(P_{x_0} \\| P_{x_1})`
        (a value computed once per ``t``: :meth:`_delta` does not depend on the calls before it)."""
        value = self._deltas.get(t)
        if value is None:
            if len(self._deltas) >= _MAX_REMEMBERED:
                self._deltas.clear()
            value = self._deltas[t] = self._delta(t)
        return value

    def _delta(self, t: float) -> float:
        if math.exp(t) >= self.reduction.ratio:
            return 0.0
        gap = math.exp(t)
        # a category nobody else falls in reveals the victim: it adds (a_k - e^t b_k)_+ and drops out of the sum
        revealed = float(np.sum(np.maximum(self.a - gap * self.b, 0.0)[self.revealed]))
        if self.m.size == 0:
            return min(1.0, revealed)
        with np.errstate(divide="ignore", invalid="ignore"):
            coefficients = np.where(self.revealed, 0.0, (self.a - gap * self.b) / self.rho)
        a0, a1, a2 = coefficients
        d, s = a0 - a1, self.s
        kappa = d * s + a1 - a2
        c_end = self.c_end
        drift = np.maximum(kappa * self.c_start, kappa * c_end) + a2 * self.m - d * s * c_end
        # E[(d N + drift)_+], N ~ Bin(c_end, s): d N + drift > 0 from N = k on
        k = np.maximum(np.floor(-drift / d) + 1, 0.0)
        upper, tail = self._tails(k)
        mean_upper = c_end * s * tail
        positive = np.maximum(d * mean_upper + drift * upper, 0.0)
        return float(min(1.0, revealed + self.constant + np.dot(self.weight, positive)))


@functools.lru_cache(maxsize=_KEPT_DIVERGENCES)
def pair_divergence(reduction: Reduction, n: int) -> PairDivergence:
    """The :class:`PairDivergence` of ``reduction`` for ``n`` users, built once for the accounts that ask for the same
    one (a trust ladder's rows, a plan's charges and their searches over epsilon0 ask for the same pairs again: the
    blocks and the values of delta are the same numbers, computed once)."""
    return PairDivergence(reduction, n)
