r"""Grids over numerical attributes (HDG and TDG, Yang, Wang, Li, Cheng, Su, PVLDB 2020): geometry and queries.

Each numerical attribute's bounds are cut into ``resolution`` equal fine bins
(:math:`c`, a power of two).  A *1-D grid* cuts an attribute into :math:`g_1` equal
cells, a *2-D grid* a pair of attributes into :math:`g_2 \times g_2` cells (powers of two
dividing :math:`c`, :math:`g_2 \le g_1`).

To make the grids consistent with :mod:`._consistency`, attribute :math:`a`'s fine bin is
written in three digits: its 2-D cell :math:`a_c` (:math:`g_2` values), the 1-D cell within
it :math:`a_f` (:math:`g_1/g_2` values) and the fine bin within that :math:`a_u`
(:math:`c/g_1`).  A 1-D grid is then the marginal of :math:`(a_c, a_f)` and a 2-D grid of
:math:`(a_c, b_c)`: they share :math:`a_c`.

The *response matrix* of a pair (HDG sec. 5.3, "weighted update") is the
:math:`c \times c` table of fine bins of maximum entropy given the pair's 2-D grid and
both 1-D grids (:func:`dpdist.estimates._maxent.fit_table` on the six digits); TDG, without 1-D grids,
spreads each 2-D cell evenly.  A range's answer sums the fine bins it covers, a bin cut
by the range's end in proportion to the part covered (the uniformity assumption of
sec. 4.2).  A range over :math:`\lambda > 2` attributes is answered, as in the paper
(sec. 4.2, "answering :math:`\lambda`-D queries"), from the :math:`\binom{\lambda}{2}` 2-D answers
and the :math:`\lambda` 1-D answers: the distribution on :math:`\{in, out\}^\lambda` of
maximum entropy that matches them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...estimates._boxes import coverage, range_from_answers
from ...estimates._maxent import fit_table

__all__ = ["GridGeometry", "guideline_granularities", "coverage", "range_from_answers", "ALPHA_1", "ALPHA_2"]

#: the constants of the granularity guideline (HDG sec. 4.3 and 5.3, from the paper's experiments)
ALPHA_1, ALPHA_2 = 0.7, 0.03


def _power_of_two(value: float, low: int, high: int) -> int:
    return int(min(max(2 ** round(math.log2(max(value, 1.0))), low), high))


def guideline_granularities(n: int, epsilon: float, attributes: int, hybrid: bool, resolution: int) -> tuple[int, int]:
    r"""HDG's :math:`(g_1, g_2)` for ``n`` users (TDG: :math:`g_1 = g_2`), rounded to powers of two within ``[2, c]``.

    With :math:`m` grids (:math:`\binom{k}{2}`, plus :math:`k` for HDG), each of about
    :math:`n/m` users, balancing the noise of the cells a range sums against the error of
    assuming uniformity inside the cells it cuts:
    :math:`g_2 = \sqrt{2\alpha_2(e^\varepsilon - 1)\sqrt{n/(m e^\varepsilon)}}` and
    :math:`g_1 = (n(e^\varepsilon - 1)^2\alpha_1^2/(2 m e^\varepsilon))^{1/3}`.
    """
    grids = attributes * (attributes - 1) // 2 + (attributes if hybrid else 0)
    e = math.exp(epsilon)
    g2 = math.sqrt(2 * ALPHA_2 * (e - 1) * math.sqrt(n / (grids * e)))
    g2 = _power_of_two(g2, 2, resolution)
    if not hybrid:
        return g2, g2
    g1 = (n * (e - 1) ** 2 * ALPHA_1**2 / (2 * grids * e)) ** (1 / 3)
    return max(_power_of_two(g1, 2, resolution), g2), g2


@dataclass(frozen=True)
class GridGeometry:
    """Fine bins ``resolution`` per attribute, 1-D cells ``g1``, 2-D cells ``g2`` per side."""

    resolution: int
    g1: int
    g2: int

    @property
    def digits(self) -> tuple[int, int, int]:
        """Sizes of the three digits of a fine bin: 2-D cell, 1-D cell within it, fine bin within that."""
        return self.g2, self.g1 // self.g2, self.resolution // self.g1

    def fine(self, unit: np.ndarray) -> np.ndarray:
        """The fine bin of values on [0, 1]."""
        return np.minimum((np.asarray(unit) * self.resolution).astype(np.int64), self.resolution - 1)

    def one_way_cell(self, unit: np.ndarray) -> np.ndarray:
        """The 1-D cell of values on [0, 1]."""
        return self.fine(unit) // (self.resolution // self.g1)

    def two_way_cell(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """The 2-D cell (C order: ``first`` slowest) of pairs of values on [0, 1]."""
        width = self.resolution // self.g2
        return (self.fine(first) // width) * self.g2 + self.fine(second) // width

    def response_matrix(self, two_way: np.ndarray, rows: np.ndarray | None, columns: np.ndarray | None) -> np.ndarray:
        """The :math:`c \\times c` response matrix of a pair: maximum entropy given its 2-D grid and, for HDG, both 1-D grids.

        ``two_way``: ``(g2, g2)`` non-negative cells; ``rows`` / ``columns``: ``(g1,)`` 1-D grids (``None``: TDG).
        """
        g2, r, u = self.digits
        shape = (g2, r, u, g2, r, u)
        constraints: list[tuple[tuple[int, ...], np.ndarray]] = [((0, 3), two_way)]
        if rows is not None and columns is not None:
            constraints += [((0, 1), np.reshape(rows, (g2, r))), ((3, 4), np.reshape(columns, (g2, r)))]
            table, _, _ = fit_table(shape, constraints, tolerance=1e-12, max_iterations=200)
        else:
            table, _, _ = fit_table(shape, constraints, tolerance=1e-12, max_iterations=1)
        return table.reshape(self.resolution, self.resolution)

    def spread(self, one_way: np.ndarray) -> np.ndarray:
        """A 1-D grid spread evenly over the fine bins."""
        return np.repeat(np.asarray(one_way, dtype=np.float64) / (self.resolution // self.g1), self.resolution // self.g1)


