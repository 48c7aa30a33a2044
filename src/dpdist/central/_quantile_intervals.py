r"""Confidence intervals for the quantiles of an exponential-mechanism release (AQ, JointExp).

AQ (Kaplan, Schnapp & Stemmer, ICML 2022) and JointExp (Gillenwater, Joseph & Kulesza, ICML 2021)
bound their error in *ranks*, relative to the best rank a point can take: the exponential
mechanism's utility tail bound (McSherry & Talwar 2007, as both papers use it),
:math:`P[u(o) \le \mathrm{OPT} - (\ln|O| + t)/\beta] \le e^{-t}` for an output set :math:`O`.
Neither turns into an interval for the data's quantile by itself: the data's density (to map
ranks to values) is private, and with ties the best rank is far from the target (an atom around
the target gives AQ and JointExp the "tie floor" of ``docs/explanation/central-release.md``, and AQ's rescaled
sub-problems carry a parent's miss into its children), so no rank bound of theirs holds for every
data set.  The intervals here hold for every data set and need nothing of the point release's
accuracy; they cost a stated share of the budget.

**Construction.**  After the point release :math:`v_1 \le \dots \le v_m` (grid points; :math:`v_0 =
0`, :math:`v_{m+1} = G` the grid's ends), with the interval budget split into :math:`\varepsilon_b`
and :math:`\varepsilon_c` (:func:`split_interval_budget`, from public inputs):

1. *Brackets* (:math:`\varepsilon_b`).  In each segment of records with cells in :math:`[v_i,
   v_{i+1})`, two exact exponential mechanisms with the closed rank of
   :func:`~dpdist.central._grid_quantile.exponential_rank` (the distance from the target to
   :math:`[\#\{c < k\}, \#\{c \le k\}]`, sensitivity 1 under add/remove, the atom's own point has
   utility 0), each at :math:`\varepsilon_b/2`: the upper bracket :math:`U_i` of quantile :math:`i`
   at :math:`R_i` records above :math:`v_i`, the lower bracket :math:`L_{i+1}` of quantile
   :math:`i + 1` at :math:`R_{i+1}` records below :math:`v_{i+1}`.  The segments are disjoint and
   fixed by released points, so the round is :math:`\varepsilon_b`-DP (parallel composition across
   segments, sequential within one).  The offsets :math:`R_j` are public (functions of
   :math:`q`, :math:`m`, the budget and the level: :func:`bracket_offsets`); they only set where the
   brackets land, never whether the intervals cover.
2. *Reserves* (free).  Two more grid points per quantile, :math:`v_j \mp 2\max(v_j - L_j, U_j -
   v_j)` (clipped to the grid), post-processing of released points: where a bracket lands too
   near the quantile to be certified, the interval ends at its reserve (about twice as far)
   rather than at a neighbouring quantile's bracket, :math:`n/m` ranks away.
3. *Counts* (:math:`\varepsilon_c`).  The distinct brackets and reserves cut the grid into
   :math:`S \le 4m + 1` segments; their record counts get exact discrete Laplace noise :math:`Z_k` of scale
   :math:`1/\varepsilon_c` (a histogram: l1 sensitivity 1 under add/remove).

The release is :math:`\varepsilon_v + \varepsilon_b + \varepsilon_c`-DP under add/remove
(sequential composition; ``PrivacyGuarantee`` states the total).

**The interval.**  At a bracket or reserve :math:`p` (a segment boundary with :math:`K_b` segments below it
and :math:`K_a` above), :math:`S_p = \#\{c < p\} - q n` has the noisy value :math:`\hat S_p = S_p +
N_p`, :math:`N_p = (1 - q)\sum_{\text{below}} Z_k - q \sum_{\text{above}} Z_k`, a function of the
noisy counts alone.  :math:`N_p` is symmetric, and Chernoff's bound with the discrete Laplace
moment generating function :math:`M(\lambda) = (1 - \rho)^2 / ((1 - \rho e^\lambda)(1 - \rho
e^{-\lambda}))`, :math:`\rho = e^{-\varepsilon_c}`, gives for every :math:`\lambda \in (0,
\varepsilon_c / \max(q, 1 - q))`

.. math::

    P[N_p \ge b] \le \exp\bigl(-\lambda b + K_b \ln M((1 - q)\lambda) + K_a \ln M(q\lambda)\bigr),

so :math:`b_p` = the smallest right side's root at :math:`\alpha/2`, :math:`\alpha = 1 -
\text{level}`, minimized over a grid of :math:`\lambda` (any :math:`\lambda` gives a valid bound:
:func:`count_noise_bound`).  :math:`p` is *certified below* the quantile when :math:`\hat S_p +
b_p < 0` and *certified above* when :math:`\hat S_p - b_p \ge 0`; the lower end of the interval is
the largest boundary :math:`p` such that :math:`p` and every boundary below it are certified below
(else the lower bound), the upper end the smallest :math:`p` such that it and every boundary above
are certified above (else the upper bound).

**Coverage.**  Let :math:`s = \lceil qn \rceil` and :math:`c^*` the cell of the data's
:math:`s`-th smallest value :math:`x^*` (the empirical quantile, ``np.quantile(x, q,
method="inverted_cdf")``).  A point :math:`p \le c^*` lies at or below :math:`x^*`, and
:math:`\#\{c < p\} < s \Leftrightarrow p \le c^*`; :math:`S_p < 0` implies :math:`\#\{c < p\} < s`
and :math:`S_p \ge 0` implies :math:`\#\{c < p\} \ge s`.  The lower end misses (lies above
:math:`x^*`) only if the smallest boundary :math:`p^\circ` with :math:`S_{p^\circ} \ge 0` was
certified below (it lies at or below the lower end, and every boundary up to it passed), i.e.
:math:`N_{p^\circ} < -b_{p^\circ}`: probability at most :math:`\alpha/2`, the boundaries being fixed
before the counts' noise is drawn.  The same for the upper end, so each interval covers
:math:`x^*` with probability at least the level, for every data set (ties, few records, the point
release far off).  The point estimate may lie outside its interval (where AQ or JointExp missed:
the contract allows it, ``dpdist.estimates.Interval``).  The end points are released grid points,
so no float of a sampler is released.  (Where the boundaries lie, the offsets and reserves,
changes only the width.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._grid_quantile import exponential_rank
from .noise import _dyadic_epsilon, _sampler_scale, discrete_laplace

__all__ = ["count_noise_bound", "bracket_offsets", "split_interval_budget", "BracketIntervals", "bracket_intervals"]

#: the lambda grid of the Chernoff bound: fractions of its largest admissible value
_LAMBDA_FRACTIONS = np.concatenate([np.geomspace(1e-4, 0.05, 64), np.linspace(0.05, 0.999, 448)[1:]])


def _count_noise_rho(epsilon: float) -> float:
    r""":math:`\rho` of the discrete Laplace law :math:`P(z) \propto \rho^{|z|}` the counts' sampler draws (rounded up)."""
    t, s = _sampler_scale(Fraction(1) / _dyadic_epsilon(epsilon))
    # rounded up (a larger rho is more noise: the bound stays valid), also where exp underflows (huge epsilon)
    return min(max(math.exp(-s / t) * (1 + 1e-12), 1e-300), 1 - 1e-15)


def _log_mgf(lam: np.ndarray, rho: float) -> np.ndarray:
    """Log moment generating function of the discrete Laplace law with parameter ``rho`` at ``lam`` (``|lam| < -ln rho``)."""
    return 2 * math.log1p(-rho) - np.log1p(-rho * np.exp(lam)) - np.log1p(-rho * np.exp(-lam))


def count_noise_bound(q: float, below: np.ndarray, above: np.ndarray, alpha: float, epsilon: float) -> np.ndarray:
    r""":math:`b` with :math:`P[N \ge b] \le \alpha` for :math:`N = (1 - q)\sum_{k \le K_b} Z_k - q\sum_{k \le K_a} Z'_k`.

    ``below`` and ``above`` are the numbers of segments :math:`K_b`, :math:`K_a` (arrays of one
    shape), the :math:`Z` independent discrete Laplace draws of the counts' sampler at ``epsilon``;
    Chernoff's bound minimized over a grid of :math:`\lambda` (see the module docstring).
    """
    rho = _count_noise_rho(epsilon)
    below = np.asarray(below, dtype=np.float64)[..., None]
    above = np.asarray(above, dtype=np.float64)[..., None]
    largest = -math.log(rho) / max(q, 1 - q)
    lam = _LAMBDA_FRACTIONS * largest
    exponent = below * _log_mgf((1 - q) * lam, rho) + above * _log_mgf(q * lam, rho) + math.log(1 / alpha)
    return np.min(exponent / lam, axis=-1)


#: the offsets' weight on the spread of the bracket's landing beyond the counts' bound.  A bracket too near to be
#: certified sends its end to its reserve (twice as far), and where that fails too, to a neighbouring quantile's
#: bracket (n/m ranks wider).  9 deciles of N(0, 1), epsilon = 1, 20 runs, mean (largest) width in ranks, AQ at a
#: share of 0.2 and JointExp at 0.4, n = 10^4 and 10^5: weight 1.0: 541, 295, 613, 298; 0.7: 485, 248, 495, 240;
#: 0.5: 428 (791), 211, 448 (1119), 231; 0.3: 382, 190, 458 (9785: a neighbour's), 191.  Without reserves, 0.7
#: sent 6.7% of AQ's intervals at n = 10^5 to a neighbour's bracket (mean width 1068 ranks)
_SPREAD_WEIGHT = 0.5
#: the brackets' candidate fractions of the intervals' budget (the counts get the rest)
_BRACKET_FRACTIONS = np.linspace(0.2, 0.8, 13)


def bracket_offsets(q: np.ndarray, level: float, epsilon_brackets: float, epsilon_counts: float,
                    point_spread: float, quantiles: int | None = None) -> np.ndarray:
    r"""The public offsets :math:`R_j` (records between a quantile's release and its brackets).

    A bracket is certified when its distance from the quantile exceeds the counts' bound
    :math:`b` (segments split as :math:`q_j`) by the counts' noise, its own mechanism's miss
    (:math:`(2/\varepsilon') \ln(2/\alpha)` at :math:`\varepsilon' = \varepsilon_b/2`) and the point
    release's (``point_spread``), independent errors added in quadrature (``quantiles``: how many are
    released, default ``q.size``; the counts have up to :math:`4m + 1` segments):
    :math:`R_j = b + w\sqrt{b^2 + \text{own}^2 + \text{spread}^2}`, :math:`w` = ``_SPREAD_WEIGHT`` (fitted to
    the widths).  Only the intervals' width depends on them.
    """
    alpha = 1 - level
    segments = 4 * (q.size if quantiles is None else quantiles) + 1
    below = np.round(q * segments)
    bound = np.array([count_noise_bound(float(p), k, segments - k, alpha / 2, epsilon_counts)
                      for p, k in zip(q, below)])
    own = 2 / (epsilon_brackets / 2) * math.log(2 / alpha)
    return np.ceil(bound + _SPREAD_WEIGHT * np.sqrt(bound**2 + own**2 + point_spread**2))


def split_interval_budget(q: np.ndarray, level: float, epsilon: float, point_spread: float) -> tuple[float, float]:
    """``(epsilon_brackets, epsilon_counts)`` summing to ``epsilon`` with the smallest offset at the middle quantile.

    Public inputs only: the counts' noise grows with the number of quantiles, the brackets' does not.
    """
    middle = q[[q.size // 2]]
    widths = [float(bracket_offsets(middle, level, f * epsilon, (1 - f) * epsilon, point_spread, q.size)[0])
              for f in _BRACKET_FRACTIONS]
    best = float(_BRACKET_FRACTIONS[int(np.argmin(widths))])
    return best * epsilon, (1 - best) * epsilon


@dataclass(frozen=True)
class BracketIntervals:
    """The interval ends (grid points) of every quantile, and what was released to find them."""

    low: np.ndarray
    high: np.ndarray
    lower_brackets: np.ndarray
    upper_brackets: np.ndarray
    reserves: np.ndarray
    boundaries: np.ndarray
    noisy_counts: np.ndarray


def _brackets(sorted_cells: np.ndarray, grid_cells: int, points: np.ndarray, offsets: np.ndarray, epsilon: float,
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper brackets of every quantile, two closed-rank mechanisms per segment at ``epsilon / 2``."""
    m = points.size
    edges = np.concatenate([[0], points, [grid_cells]])
    cuts = np.searchsorted(sorted_cells, edges, side="left")
    lower, upper = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
    for i in range(m + 1):  # segment [v_i, v_{i+1}): the upper bracket of quantile i, the lower of i + 1
        inside = sorted_cells[cuts[i]:cuts[i + 1]]
        lo, hi = int(edges[i]), int(edges[i + 1])
        if i >= 1:
            upper[i - 1] = exponential_rank(inside, lo, hi, Fraction(int(offsets[i - 1])), epsilon / 2, rng,
                                            closed=True)
        if i < m:
            target = Fraction(inside.size - int(offsets[i]))
            lower[i] = exponential_rank(inside, lo, hi, target, epsilon / 2, rng, closed=True)
    return lower, upper


def _certified_ends(q: np.ndarray, boundaries: np.ndarray, noisy: np.ndarray, alpha: float,
                    epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Indices into ``boundaries`` of each quantile's interval ends (see the module docstring)."""
    segments = noisy.size
    below_noisy = np.concatenate([[0], np.cumsum(noisy)]).astype(np.float64)  # noisy #{c < boundary}
    total = below_noisy[-1]
    index = np.arange(boundaries.size)
    margin = 1e-9 * (abs(total) + 1)  # the doubles' rounding of S-hat, far above it
    low, high = np.empty(q.size, dtype=np.int64), np.empty(q.size, dtype=np.int64)
    for j, p in enumerate(q.tolist()):
        bound = count_noise_bound(p, index, segments - index, alpha / 2, epsilon) + margin
        shat = below_noisy - p * total
        below = shat + bound < 0
        above = shat - bound >= 0
        below[0], above[-1] = True, True  # the grid's ends: always at or below, above x*
        failed = np.flatnonzero(~below)
        low[j] = (failed[0] - 1) if failed.size else boundaries.size - 1
        failed = np.flatnonzero(~above)
        high[j] = (failed[-1] + 1) if failed.size else 0
    return low, high


def bracket_intervals(sorted_cells: np.ndarray, grid_cells: int, points: np.ndarray, q: np.ndarray, level: float,
                      epsilon_brackets: float, epsilon_counts: float, point_spread: float,
                      rng: np.random.Generator) -> BracketIntervals:
    """Intervals of the quantiles ``q`` released at the grid ``points`` (sorted), at ``level`` (module docstring).

    ``sorted_cells`` are the records' cells on the same grid of ``grid_cells`` cells.  Spends
    ``epsilon_brackets`` on the brackets and ``epsilon_counts`` on the counts (add/remove).
    """
    points = np.asarray(points, dtype=np.int64)
    offsets = bracket_offsets(q, level, epsilon_brackets, epsilon_counts, point_spread)
    lower, upper = _brackets(sorted_cells, grid_cells, points, offsets, epsilon_brackets, rng)
    reach = 2 * np.maximum(points - lower, upper - points)  # released points only: post-processing
    reserves = np.clip(np.concatenate([points - reach, points + reach]), 0, grid_cells)
    boundaries = np.unique(np.concatenate([[0], lower, upper, reserves, [grid_cells]]))
    counts = np.diff(np.searchsorted(sorted_cells, boundaries, side="left"))
    noisy = counts + discrete_laplace(counts.size, 1, epsilon_counts, rng)
    low, high = _certified_ends(q, boundaries, noisy, 1 - level, epsilon_counts)
    low_points, high_points = boundaries[low], boundaries[high]
    # both ends wrong at once (probability below the level's complement) can cross them: keep an interval
    return BracketIntervals(np.minimum(low_points, high_points), np.maximum(low_points, high_points), lower, upper,
                            reserves, boundaries, noisy)
