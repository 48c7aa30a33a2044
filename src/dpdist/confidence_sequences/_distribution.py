r"""Confidence sequence of a CDF from an LDP aggregate: report statistics' sequences, then a linear program.

Cut the bounds into :math:`M` cells (unions of the estimate's bins) and let
:math:`m_c` be the population's mass in cell :math:`c`.  Each protocol gives
linear statistics of its reports whose expectation is bracketed by the masses:
for statistic :math:`j`,

.. math::

    \sum_c m_c\,a^-_{jc} \;\le\; \mathbb E[Y_j] \;\le\; \sum_c m_c\,a^+_{jc},

with :math:`a^\pm_{jc}` the largest and smallest value of
:math:`\Pr[Y_j = 1 \mid x]` over :math:`x` in cell :math:`c` (equal where it is
constant on the cell).  The beta-binomial mixture sequence (:mod:`._boundary`) of
each :math:`\mathbb E[Y_j]`, with :math:`\alpha/J` each, gives
:math:`[L_j, U_j]` holding for all :math:`j` at every :math:`n` at once with
probability :math:`1-\alpha`; on that event the true masses lie in

.. math::

    \mathcal M_n = \{m \ge 0:\ \textstyle\sum_c m_c = 1,\ a^- m \le U,\ a^+ m \ge L\},

so :math:`F(e_k) = \sum_{c < k} m_c` lies between its minimum and maximum over
:math:`\mathcal M_n` (two linear programs per edge) and the mean between the
minimum of :math:`\sum_c m_c e_c` and the maximum of :math:`\sum_c m_c e_{c+1}`:
a band and a mean interval that hold at every :math:`n` together, whatever the
population (atoms included).  The statistics:

* **binning**: the prefix sums of the oracle's support counts at each cell edge,
  :math:`\mathbb E = q^* k + (p^* - q^*) F(e_k)` over :math:`k` bins.  Over GRR each
  report supports exactly one bin, so the prefix is binary (the beta-binomial
  mixture is exact); over unary encoding (OUE, SUE) its law is known exactly for
  every :math:`F(e_k)` (the exact-CGF mixture, :mod:`._unary`); over any other
  oracle (OLH), the support of each bin (:func:`._frequency.oracle_means`), a box
  on each cell's mass;
* **hh** (and hh-admm, the same reports): each level's oracle over its nodes, on
  the users of that level (a level is drawn independently of the value, so they
  are a sample of the population), as for binning; the cells are the nodes of
  the deepest level with at most ``cells`` nodes, and finer levels are left out
  (their intervals, intersected with these, made the band no narrower);
* **sw**, **gw**: :math:`Y_j = 1[\text{report bucket} < t_j]` at :math:`J`
  output edges.  For a wave, :math:`\Pr[Y_j = 1 \mid x] = j q w + \omega\,B(t_j - x)`
  with :math:`B` the wave's bump CDF, non-increasing in :math:`x`: its extremes
  on a cell are at the cell's ends (checked at run time).

When every statistic is a prefix (binning and hh over GRR or unary encoding) the
set :math:`\mathcal M_n` is "a non-decreasing :math:`F` inside an interval at each
edge", whose extremes are the monotone envelopes of the intervals (no linear
program; ``tests/confidence_sequences/test_confidence_sequences.py`` checks they agree).

The deconvolution is honest about what the reports identify: for SW at
:math:`\varepsilon = 1` a report says little about a point of the CDF, and the
band is wide, where a binned oracle's is narrow.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..local.frequency._unary import UnaryEncoding
from ..local.frequency.grr import GRR
from ..local.numerical._composite import inner_aggregator
from ..local.numerical.binning import Binning
from ..local.numerical.hh import HierarchicalHistogram
from ._boundary import BoundedMeans
from ._frequency import oracle_means, sequence_stamp
from ._results import CDFSequence
from ._unary import UnaryPrefixes

__all__ = ["DEFAULT_CELLS", "cdf_sequence", "prefix_means"]

#: Cells of the band (its points are their edges): 32 cells, 66 linear programs.
DEFAULT_CELLS = 32
#: Sets of linear programs whose extremes are kept (two per band: lowest and highest); a few kilobytes each.
_KEPT_PROGRAMS = 32


@dataclass(frozen=True)
class _Constraints:
    """Rows ``a_low m <= high`` and ``a_high m >= low`` on the cell masses, and the sequences they come from."""

    a_low: np.ndarray
    a_high: np.ndarray
    low: np.ndarray
    high: np.ndarray
    sources: tuple[BoundedMeans, ...]
    n: float

    def shrink(self, n: float) -> float:
        """Median ratio of a constraint's interval at ``n`` reports to its width now (each source's share of n kept)."""
        ratios = [source.widths(source.n * n / self.n) / np.maximum(source.widths(), 1e-300) for source in self.sources]
        return float(np.median(np.concatenate(ratios)))

    def prefix_sizes(self) -> np.ndarray | None:
        """Cells below each row's cut when every row is an exact prefix ``F(e_k)`` (else ``None``)."""
        if self.a_low is not self.a_high and not np.array_equal(self.a_low, self.a_high):
            return None
        sizes = self.a_low.sum(axis=1)
        prefix = np.arange(self.a_low.shape[1])[None, :] < sizes[:, None]
        return sizes.astype(np.int64) if np.array_equal(self.a_low, prefix.astype(np.float64)) else None


def _cell_edges(bins: int, cells: int) -> np.ndarray:
    """Bin indices of the cell edges: at most ``cells`` unions of consecutive bins."""
    return np.unique(np.round(np.linspace(0, bins, min(cells, bins) + 1)).astype(np.int64))


def _oracle_rows(oracle, support_counts, n: int, alpha_each: float, target_n: float, item_edges, cell_edges):
    """Rows, bounds and source of one frequency oracle whose item ``v`` spans bins ``item_edges[v]..[v+1]``.

    Items are unions of cells, or cells unions of items (the cell edges are item
    edges or the other way round).
    """
    if _prefixes(oracle):  # the prefix at every inner cell edge that is an item edge
        cuts = _shared_edges(item_edges, cell_edges)
        source = prefix_means(oracle, support_counts, n, alpha_each, target_n, np.searchsorted(item_edges, cuts))
        rows = (cell_edges[None, 1:] <= cuts[:, None]).astype(np.float64)
        low, high = source.interval()
        return rows, low, high, source
    source = oracle_means(oracle, support_counts, n, alpha_each, target_n)
    low, high = (np.clip(bound, 0.0, 1.0) for bound in source.interval())
    overlap = ((cell_edges[None, :-1] < item_edges[1:, None]) & (item_edges[:-1, None] < cell_edges[None, 1:]))
    overlap = overlap.astype(np.float64)  # (items, cells)
    if np.all(np.isin(item_edges, cell_edges)):  # items are unions of cells: a row per item
        return overlap, low, high, source
    return np.eye(cell_edges.size - 1), overlap.T @ low, overlap.T @ high, source  # cells are unions of items


def prefix_means(oracle, support_counts, n: int, alpha_each: float, target_n: float, below: np.ndarray):
    """Sequences of :math:`F` at the edges with ``below`` items under them, from a GRR or unary oracle's counts.

    ``support_counts`` may have leading axes (independent aggregates): the result
    is elementwise over them.
    """

    p, q = oracle.support_probabilities()
    counts = np.asarray(support_counts, dtype=np.float64)
    prefix = np.concatenate([np.zeros(counts.shape[:-1] + (1,)), np.cumsum(counts, axis=-1)], axis=-1)[..., below]
    alphas = np.full(below.size, alpha_each)
    if isinstance(oracle, GRR):  # one supported item per report: a binary prefix
        return BoundedMeans(prefix, float(n), alphas, -q * below / (p - q), np.full(below.size, 1.0 / (p - q)),
                            float(target_n))
    return UnaryPrefixes(prefix, below.astype(np.float64), float(n), alphas, p, q, float(target_n))  # exact CGF


def _prefixes(oracle) -> bool:
    """Whether ``oracle``'s prefix sums have a sequence of their own (GRR: binary; unary encoding: exact CGF)."""

    return isinstance(oracle, (GRR, UnaryEncoding))


def _prefix_count(oracle, item_edges, cell_edges) -> int:
    """How many statistics :func:`_oracle_rows` makes (its share of the union bound)."""
    return _shared_edges(item_edges, cell_edges).size if _prefixes(oracle) else item_edges.size - 1


def _shared_edges(item_edges, cell_edges) -> np.ndarray:
    """Inner cell edges that are also item edges."""
    inner = cell_edges[1:-1]
    return inner[np.isin(inner, item_edges)]


def _solve(constraints: _Constraints, objectives: np.ndarray, maximize: bool) -> np.ndarray | None:
    """Extremes of each objective row over the feasible masses (``None`` when infeasible).

    The same programs give the same extremes: a service asked for one campaign state's estimate by several views
    (each with its own query string) solves them once (:func:`_solved`, the last few programs kept)."""
    a_ub = np.ascontiguousarray(np.vstack([constraints.a_low, -constraints.a_high]), dtype=np.float64)
    b_ub = np.ascontiguousarray(np.concatenate([constraints.high, -constraints.low]), dtype=np.float64)
    objectives = np.ascontiguousarray(objectives, dtype=np.float64)
    out = _solved(a_ub.shape, a_ub.tobytes(), b_ub.tobytes(), objectives.shape, objectives.tobytes(), maximize)
    return None if out is None else out.copy()


@functools.lru_cache(maxsize=_KEPT_PROGRAMS)
def _solved(a_shape: tuple[int, ...], a_ub: bytes, b_ub: bytes, shape: tuple[int, ...], objectives: bytes,
            maximize: bool) -> np.ndarray | None:
    """:func:`_solve` of the programs given as bytes (hashable: the cache's key), one ``linprog`` per row."""
    from scipy.optimize import linprog  # lazy: loads scipy (0.4-2 s)

    a = np.frombuffer(a_ub, dtype=np.float64).reshape(a_shape)
    b = np.frombuffer(b_ub, dtype=np.float64)
    rows = np.frombuffer(objectives, dtype=np.float64).reshape(shape)
    cells = a_shape[1]
    out = np.empty(shape[0])
    for row, objective in enumerate(rows):
        result = linprog(-objective if maximize else objective, A_ub=a, b_ub=b,
                         A_eq=np.ones((1, cells)), b_eq=[1.0], bounds=(0.0, None), method="highs")
        if result.status == 2:
            return None
        if result.status != 0 or result.fun is None:  # status 0 (solved) comes with the objective's value
            raise RuntimeError(f"The band's linear program failed: {result.message}")
        out[row] = -result.fun if maximize else result.fun
    out.flags.writeable = False
    return out


def cdf_sequence(protocol, aggregator, level: float, target_n: float, *, cells: int = DEFAULT_CELLS) -> CDFSequence | str:
    """The band (module docstring), or the reason there is none."""

    alpha = 1.0 - level
    if isinstance(protocol, Binning):
        edges = _cell_edges(protocol.bins, cells)
        constraints = _binning_constraints(protocol, aggregator, alpha, target_n, edges)
        method = f"beta-binomial mixtures of {protocol.oracle.display_name}'s support counts"
    elif isinstance(protocol, HierarchicalHistogram):  # cells: the nodes of the deepest level with at most `cells`
        depth = max(1, int(np.floor(np.log(max(cells, 2)) / np.log(protocol.branching) + 1e-9)))
        depth = min(depth, protocol.height)
        edges = np.arange(protocol.branching**depth + 1) * (protocol.bins // protocol.branching**depth)
        constraints = _tree_constraints(protocol, aggregator, alpha, target_n, edges)
        method = "beta-binomial mixtures of every tree node's support counts, level by level"
    else:
        edges = _cell_edges(protocol.bins, cells)
        rows = _wave_constraints(protocol, aggregator, alpha, target_n, edges)
        if isinstance(rows, str):
            return rows
        constraints = rows
        method = f"beta-binomial mixtures of the report CDF at {constraints.low.size} output edges"
    return _band(protocol, aggregator.n, level, target_n, edges / protocol.bins, constraints, method)


_CONTRADICTION = ("the reports contradict the protocol's channel at this level (chance at most 1 - level "
                  "when every report follows it: a sign of reports that do not)")


def _extremes(constraints: _Constraints, unit_edges: np.ndarray):
    """``F``'s lowest and highest value at the inner edges and the mean's, over the masses the constraints allow."""
    cells = unit_edges.size - 1
    sizes = constraints.prefix_sizes()
    if sizes is not None and np.all((sizes >= 1) & (sizes < cells)):
        # intervals of F at inner edges only (several at one edge intersect; none: [0, 1]): the
        # monotone envelopes of their intersection are the extremes
        lows, highs = np.zeros(cells - 1), np.ones(cells - 1)
        np.maximum.at(lows, sizes - 1, np.clip(constraints.low, 0.0, 1.0))
        np.minimum.at(highs, sizes - 1, np.clip(constraints.high, 0.0, 1.0))
        low = np.concatenate([[0.0], np.maximum.accumulate(lows), [1.0]])
        high = np.concatenate([[0.0], np.minimum.accumulate(highs[::-1])[::-1], [1.0]])
        if np.any(low > high):
            return None
        # mass as far left as allowed (F highest) at the cells' left ends, or right (F lowest) at their right ends
        return low[1:-1], high[1:-1], float(unit_edges[:-1] @ np.diff(high)), float(unit_edges[1:] @ np.diff(low))
    below = np.tril(np.ones((cells + 1, cells)), k=-1)[1:-1]  # F(e_k) = sum of the cells below e_k, inner edges
    lowest = _solve(constraints, np.vstack([below, unit_edges[None, :-1]]), maximize=False)
    highest = _solve(constraints, np.vstack([below, unit_edges[None, 1:]]), maximize=True)
    if lowest is None or highest is None:
        return None
    return (np.maximum.accumulate(lowest[:-1]), np.minimum.accumulate(highest[:-1][::-1])[::-1],
            lowest[-1], highest[-1])


def _band(protocol, n, level, target_n, unit_edges, constraints: _Constraints, method: str) -> CDFSequence | str:
    extremes = _extremes(constraints, unit_edges)
    if extremes is None:
        return _CONTRADICTION
    low, high, mean_low, mean_high = extremes
    lo, hi = protocol.bounds
    scale = hi - lo
    band_low = np.clip(np.concatenate([[0.0], low, [1.0]]), 0.0, 1.0)
    band_high = np.clip(np.concatenate([[0.0], high, [1.0]]), 0.0, 1.0)
    return CDFSequence(
        edges=lo + scale * unit_edges,
        low=band_low,
        high=np.maximum(band_high, band_low),
        mean_low=float(lo + scale * mean_low),
        mean_high=float(lo + scale * mean_high),
        **sequence_stamp(level, n, target_n),
        method=method + " (Howard et al. 2021; union over them), then the extremes of F over the masses they allow "
        "(a linear program per edge)",
        _shrink=constraints.shrink,
    )


def _binning_constraints(protocol, aggregator, alpha, target_n, edges) -> _Constraints:
    oracle = protocol.oracle
    counts = oracle.support_counts(inner_aggregator(oracle, aggregator.statistic, aggregator.n))
    parts = [(oracle, counts, aggregator.n, np.arange(protocol.bins + 1))]
    return _from_oracles(parts, alpha, target_n, edges, aggregator.n)


def _tree_constraints(protocol, aggregator, alpha, target_n, edges) -> _Constraints:
    offsets = protocol._stat_offsets
    parts = []
    for depth, (oracle, count) in enumerate(zip(protocol.oracles, protocol.level_counts(aggregator)), start=1):
        nodes = protocol.branching**depth
        if nodes > edges.size - 1:
            # finer levels: their users' intervals, intersected with these, made the band no narrower
            # (0.657 wide instead of 0.646 on 20,000 Beta(5, 2) values at eps = 1: more statistics to share alpha)
            break
        if count == 0:
            continue
        node_edges = np.arange(nodes + 1) * (protocol.bins // nodes)
        inner = inner_aggregator(oracle, aggregator.statistic[offsets[depth]:offsets[depth + 1]], int(count))
        parts.append((oracle, oracle.support_counts(inner), int(count), node_edges))
    return _from_oracles(parts, alpha, target_n, edges, aggregator.n)


def _from_oracles(parts, alpha, target_n, edges, n_total) -> _Constraints:
    """Rows of several oracles ``(oracle, support counts, n, item edges)``, a union bound over all their statistics."""
    alpha_each = alpha / max(sum(_prefix_count(oracle, item_edges, edges) for oracle, _, _, item_edges in parts), 1)
    rows, lows, highs, sources = [], [], [], []
    for oracle, counts, n, item_edges in parts:
        row, low, high, source = _oracle_rows(oracle, counts, n, alpha_each, target_n, item_edges, edges)
        rows.append(row)
        lows.append(low)
        highs.append(high)
        sources.append(source)
    matrix = np.vstack(rows)
    return _Constraints(matrix, matrix, np.concatenate(lows), np.concatenate(highs), tuple(sources), float(n_total))


def _wave_constraints(protocol, aggregator, alpha, target_n, edges) -> _Constraints | str:
    """Rows of a wave protocol: the report CDF at about ``cells`` output edges (module docstring)."""
    counts = np.asarray(aggregator.statistic, dtype=np.float64)
    buckets = counts.size
    cuts = np.unique(np.round(np.linspace(0, buckets, min(edges.size - 1, buckets) + 1)).astype(np.int64))[1:-1]
    lo, hi = protocol.bounds
    unit = edges / protocol.bins
    below_right = np.minimum(unit[1:] - 1e-12 * (unit[1:] - unit[:-1]), 1.0)
    below_right[-1] = 1.0
    points = np.concatenate([unit[:-1], (unit[:-1] + unit[1:]) / 2, below_right])
    masses = protocol.channel(lo + (hi - lo) * points)  # (3 cells, buckets)
    prefix = np.cumsum(masses, axis=1)[:, cuts - 1]  # P[report bucket < cut | x]
    cells = unit.size - 1
    left, middle, right = prefix[:cells], prefix[cells:2 * cells], prefix[2 * cells:]
    tolerance = 1e-12
    if np.any(middle > left + tolerance) or np.any(right > middle + tolerance):
        return (f"{protocol.display_name}'s report CDF is not monotone in the value, which the band's "
                "linear program needs")
    source = BoundedMeans(np.cumsum(counts)[cuts - 1], float(aggregator.n), np.full(cuts.size, alpha / cuts.size),
                          np.zeros(cuts.size), np.ones(cuts.size), float(target_n))
    low, high = source.interval()
    return _Constraints(right.T.copy(), left.T.copy(), low, high, (source,), float(aggregator.n))
