r"""Data-adaptive shape of the tree CDF: a coarse noisy histogram picks ``(branching, height)``.

The tree's KS error to the data's CDF has two parts (measured in ``docs/explanation/central-release.md``,
"Tree shape"):

* **noise.**  With Laplace scale :math:`s = \Delta_1/\varepsilon_{\rm tree}` on every node
  (:math:`\Delta_1 = h` under add/remove, :math:`2h` under replacement), the expected largest
  error of the consistent cumulative counts over the leaf edges is :math:`\alpha(b, h)\,s`, with

  .. math::

      \alpha(b, 1) = 0.87\sqrt{2b}, \qquad
      \alpha(b, h) = 0.72\sqrt{h\,(b - 1)\,\ln b^h} \quad (h \ge 2).

  The flat histogram's (:math:`h = 1`) cumulative noise is a Brownian bridge of variance
  :math:`2b s^2` whose expected supremum is :math:`\sqrt{\pi/2}\,\ln 2 \approx 0.87` standard
  deviations; a prefix of a consistent tree sums about :math:`h(b-1)/2` nodes (Qardaji, Yang &
  Li, PVLDB 2013, sec. 4) and its largest value over :math:`L = b^h` edges grows like
  :math:`\sqrt{\ln L}`.  Both constants were fitted to Monte-Carlo draws of the noise through
  Hay et al.'s consistency (200 draws per shape, :math:`b = 2..64`, :math:`L \le 2^{16}`,
  within 7%).
* **resolution.**  Inside a leaf the released CDF is linear.  For a density of largest slope
  :math:`D` (in units of the range: :math:`\max|f'|\,(\text{high}-\text{low})^2`) the chord misses
  the CDF by at most :math:`D / (8L^2)`; the data's own sampling wobble inside the densest leaf
  (:math:`c\,n/L` records, :math:`c` the largest density times the range) adds about
  :math:`\sqrt{c/(Ln)}`.

The rule minimises :math:`\alpha(b,h)\,s/n + D/(8L^2) + \sqrt{c/(Ln)}` over the level-uniform
trees of Rameshwar, Tandon & Sharma ("Optimal Tree-Based Mechanisms for Differentially Private
Approximate CDFs", COMSNETS 2025, arXiv 2409.18573): every branching factor :math:`b` from 2 to
:data:`MAX_BRANCHING` and every height with :math:`L = b^h \in [16, 2^{20}]`, the flat histogram
(:math:`h = 1`) at every :math:`L` of a 2% geometric grid (:func:`expected_ks`, :func:`best_shape`).
Their Thm. IV.1 gives the squared :math:`\ell_2` error of a level-uniform tree with branching
factors :math:`n_i` and level budgets :math:`\varepsilon_i` as :math:`\frac{4K}{N^2}\sum_i (n_i -
1)/\varepsilon_i^2`; Thm. IV.3 shows that equal branching factors and equal level budgets are
optimal (for :math:`n_i \ge 3`), with error :math:`\propto h^3 (b - 1)`, and Lemma IV.3 that the
best common factor is :math:`\beta^\star \approx 16.79` (17 over the integers) whatever :math:`K`.
dpdist's tree is such a tree (equal :math:`b`, one Laplace scale :math:`h/\varepsilon` on every
level, i.e. equal budgets), and its noise term is theirs for the sup norm: :math:`(\alpha(b,h)\,s)^2
\propto h^4 (b-1)\ln b = h^3 (b - 1)\,\ln L`, so for a given :math:`L` the rule picks the
:math:`(b, h)` of their integer optimum (Sec. V, minimising :math:`h^3(b-1)` over :math:`b^h = L`)
and :math:`L` itself from the KS model (the paper takes :math:`K` as given).  The fit of
:math:`\alpha` holds within 7% for any integer :math:`b \le 64` (not only powers of two; checked in
``tests/central/test_shape.py``), so the candidates are every integer :math:`b \le 64`.
Trees with unequal branching factors (their Lemma V.2: better for :math:`K = 2^t`, :math:`t` prime)
are not needed: :math:`L` is free here, and an equal-branching :math:`L` lies within a few percent
of any target resolution.

:math:`c` and :math:`D` come from the data at a small privacy cost: a **coarse histogram** of
:data:`PROFILE_BINS` equal bins, Laplace, :data:`PROFILE_BUDGET_SHARE` of the budget (the share
that used to buy the noisy ``n``).  Its total is the noisy ``n`` (add/remove neighbours; under
replacement ``n`` is public and the histogram costs the same share, sensitivity 2); its largest
bin, less the expected largest noise (:math:`\sqrt{2\ln K}` noise standard deviations), gives the
concentration :math:`\hat c = K \max_j \hat p_j \ge 1`.  The curvature is not visible at
:math:`K = 16` bins (a lognormal's peak is 1/100 of its range wide), so :math:`D` is read off
:math:`\hat c` by log-log interpolation through two reference models, smooth (normal on
:math:`\pm 4` sd: :math:`c_{16} = 3.06`, :math:`D = 15.5`) and skewed (lognormal(0, 1) on
[0, 50]: :math:`c_{16} = 13.96`, :math:`D = 9851`):

.. math::

    \hat D = 15.5\,(\hat c / 3.06)^{\gamma}, \qquad
    \gamma = \ln(9851/15.5) / \ln(13.96/3.06) = 4.27 .

The coarse histogram and the tree are sequentially composed Laplace releases: the returned
guarantee is the sum (:func:`dpdist.privacy.sequential`).
"""

from __future__ import annotations

import math

import numpy as np

from .._guarantee import PrivacyGuarantee, split
from .noise import laplace_mechanism

__all__ = [
    "PROFILE_BINS",
    "PROFILE_BUDGET_SHARE",
    "noise_factor",
    "curvature_from_concentration",
    "expected_ks",
    "best_shape",
    "coarse_profile",
]

#: Bins of the coarse histogram that profiles the data for the shape rule.
PROFILE_BINS = 16
#: Share of the budget spent on the coarse histogram.
PROFILE_BUDGET_SHARE = 0.05
#: The tree has at least this many and at most this many leaves.
MIN_LEAVES, MAX_LEAVES = 16, 2**20
#: Largest branching factor of a tree of two or more levels (the range where the noise model was checked).
MAX_BRANCHING = 64
#: Flat histograms compared: this many leaf counts, geometrically spaced over [MIN_LEAVES, MAX_LEAVES].
FLAT_GRID = 500
#: The profile bins left out of the tree's range look empty: their noisy sum within this many of its noise sds of 0,
ZOOM_EMPTY = 2.0
#: and hold at most this share of the noisy n, the sum plus that many noise sds (:func:`zoom_bins`).
ZOOM_SHARE, ZOOM_MARGIN = 0.05, 2.5
#: Exponent of the kept share of the profile's bins by which a zoom lowers the concentration (:func:`zoomed_concentration`).
ZOOM_SPREAD = 0.25
#: Reference models of the curvature interpolation: (concentration at 16 bins, curvature D).
SMOOTH_REFERENCE = (3.06, 15.5)
SKEWED_REFERENCE = (13.96, 9851.0)


def noise_factor(branching, height):
    r""":math:`\alpha(b, h)`: expected largest cumulative-count error of a consistent tree, in Laplace scales.

    ``branching`` and ``height`` may be arrays (one value per shape).
    """
    b = np.asarray(branching, dtype=np.float64)
    h = np.asarray(height, dtype=np.float64)
    value = np.where(h == 1, 0.87 * np.sqrt(2.0 * b), 0.72 * np.sqrt(h * (b - 1) * h * np.log(b)))
    return float(value) if value.ndim == 0 else value


def curvature_from_concentration(concentration: float) -> float:
    r""":math:`\hat D`: log-log interpolation of the curvature between the two reference models."""
    (c0, d0), (c1, d1) = SMOOTH_REFERENCE, SKEWED_REFERENCE
    gamma = math.log(d1 / d0) / math.log(c1 / c0)
    return d0 * (max(concentration, 1.0) / c0) ** gamma


def _candidates(branching: int | None) -> tuple[np.ndarray, np.ndarray]:
    r"""``(branchings, heights)`` of the shapes the rule compares (all of them, or those of a given ``branching``).

    Trees (:math:`h \ge 2`): every integer :math:`b \in [2,` :data:`MAX_BRANCHING` :math:`]` with
    :math:`b^h` in [:data:`MIN_LEAVES`, :data:`MAX_LEAVES`]; flat histograms (:math:`h = 1`): the
    leaf counts of a 2% geometric grid over that range.  A given ``branching`` keeps its own powers
    in the range (and itself as a flat histogram), or one level if it is above the range.
    """
    if branching is not None:
        heights = [h for h in range(1, 21) if MIN_LEAVES <= branching**h <= MAX_LEAVES]
        return np.full(len(heights), branching, dtype=np.int64), np.array(heights, dtype=np.int64)
    flat = np.unique(np.round(np.geomspace(MIN_LEAVES, MAX_LEAVES, FLAT_GRID)).astype(np.int64))
    trees = [(b, h) for b in range(2, MAX_BRANCHING + 1) for h in range(2, 21) if MIN_LEAVES <= b**h <= MAX_LEAVES]
    tree_branchings = np.array([b for b, _ in trees], dtype=np.int64)
    tree_heights = np.array([h for _, h in trees], dtype=np.int64)
    return (np.concatenate([flat, tree_branchings]),
            np.concatenate([np.ones(flat.size, dtype=np.int64), tree_heights]))


def expected_ks(branching, height, n: float, epsilon: float, concentration: float, *, replace: bool = False):
    r"""Modelled KS of a ``branching**height``-leaf tree: :math:`\alpha(b,h)\,s/n + \hat D/(8L^2) + \sqrt{c/(Ln)}`.

    ``branching`` and ``height`` may be arrays of shapes (one value each).
    """
    b = np.asarray(branching, dtype=np.float64)
    h = np.asarray(height, dtype=np.float64)
    n = max(n, 1.0)
    leaves = b**h
    scale = (2.0 if replace else 1.0) * h / epsilon
    noise = noise_factor(b, h) * scale / n
    curvature = curvature_from_concentration(concentration) / (8.0 * leaves**2)
    wobble = np.sqrt(max(concentration, 1.0) / (leaves * n))
    value = noise + curvature + wobble
    return float(value) if value.ndim == 0 else value


def best_shape(n: float, epsilon: float, concentration: float, *, branching: int | None = None, replace: bool = False,
               min_leaves: float = 0.0) -> tuple[int, int]:
    """``(branching, height)`` minimising :func:`expected_ks` (ties: fewer leaves), among the shapes of at least
    ``min_leaves`` leaves (or of the most leaves there are, if none has that many)."""
    branchings, heights = _candidates(branching)
    leaves = branchings.astype(np.float64) ** heights
    enough = leaves >= min(min_leaves, leaves.max(initial=0.0))
    branchings, heights = branchings[enough], heights[enough]
    if branchings.size == 0:  # a branching above MAX_LEAVES is refused by the release; below MIN_LEAVES: one level
        assert branching is not None, "every branching is a candidate when none is given"
        return int(branching), 1
    values = expected_ks(branchings, heights, n, epsilon, concentration, replace=replace)
    best = np.lexsort((branchings.astype(np.float64) ** heights, np.asarray(values)))[0]
    return int(branchings[best]), int(heights[best])


def zoom_bins(counts: np.ndarray, sigma: float, n: float) -> tuple[int, int]:
    r"""``(first, last)``: the profile bins the tree covers, the outer ones that hold none of the data dropped.

    From each side, the most bins are dropped whose noisy counts look empty, their sum within :data:`ZOOM_EMPTY`
    noise standard deviations of it (:math:`\sigma\sqrt k` for :math:`k` bins) of nothing, and hold at worst
    :data:`ZOOM_SHARE` of the noisy ``n`` (the sum plus :data:`ZOOM_MARGIN` of those standard deviations): with
    loose bounds the data sit in a few bins, and a tree over those alone has narrower leaves and no noisy empty
    nodes before them.  At least one bin is kept.

    Privacy: the range is a function of the released noisy counts alone (post-processing of the profile, paid
    from its share of the budget).  Under add/remove the records beyond it are counted in one of two outside cells
    released at the tree's budget (``tree._outside_cells``: a record lies in the tree or in one cell, parallel
    composition); under replacement (``n`` public, the tree's root) the tree clips them onto its edges, one record at
    a time, as the bounds do.  Either way the tree's sensitivity is unchanged.
    """
    spread = sigma * np.sqrt(np.arange(1, counts.size + 1))

    def empty_run(side: np.ndarray) -> int:  # the most outer bins whose sum looks empty (one noisy bin may not)
        total = np.cumsum(side)
        empty = np.flatnonzero((total <= ZOOM_EMPTY * spread) & (total + ZOOM_MARGIN * spread <= ZOOM_SHARE * n))
        return int(empty[-1]) + 1 if empty.size else 0

    left = min(empty_run(counts), counts.size - 1)
    return left, max(counts.size - 1 - empty_run(counts[::-1]), left)


def zoomed_concentration(concentration: float, kept: int) -> float:
    r"""The concentration at the width of the ``kept`` profile bins the tree covers (``kept`` of :data:`PROFILE_BINS`).

    The profile sees the mass of each bin, not where it lies inside it: over a zoomed range the heaviest bin spans
    :math:`K/k` of the rule's :math:`K` cells, and the concentration there lies between the smooth reading
    :math:`\hat c\,k/K` (its mass spread over those cells) and the concentrated one :math:`\hat c` (all of it in one
    cell, the reading a single kept bin keeps).  The rule takes :math:`\hat c\,(k/K)^{a}`, :data:`ZOOM_SPREAD`
    :math:`a = 1/4`: a quarter of the way from the concentrated reading in a log scale, because the two mistakes cost
    unequally.  Too few leaves leave a steep edge's mass inside one leaf, read linearly (up to the leaf's whole
    mass in rank, more as the bound loosens); too many cost noise that grows like :math:`h^{3/2}`.  Measured
    (``benchmarks/bench_decile_peers.py``, Pareto 1.2 at the bound 10^7, :math:`n = 10^5`, :math:`\varepsilon = 1`,
    three bins kept, 99% of the data in one): the smooth reading (:math:`a = 1`, 2.98) picks 784 leaves of 2,400
    and a mean decile rank error of 1.2e-3, :math:`a = 1/4` (10.5) 1.9e-4; at :math:`a = 0` the zoomed lognormal and
    loan incomes lose their lead, at :math:`a = 1/2` the Pareto stays 2.9x behind the best peer.

    Privacy: a function of the released profile alone (post-processing).
    """
    return max(concentration * (kept / PROFILE_BINS) ** ZOOM_SPREAD, 1.0)


def coarse_profile(data, neighbouring: str) -> tuple[float, float, list[PrivacyGuarantee], dict]:
    r"""``(n for the rule, concentration, the release's steps, the profile release)``.

    A :data:`PROFILE_BINS`-bin Laplace histogram (sensitivity 1 under add/remove, 2 under
    replacement, rounded to integers) of :data:`PROFILE_BUDGET_SHARE` of the budget; the second
    step is what is left for the tree.  ``n`` is the public size under replacement, else the
    noisy total (at least 1).  The concentration is
    :math:`K\,\max(\max_j \tilde y_j - \sqrt{2\ln K}\,\sigma,\ \hat n/K)/\hat n`, :math:`\sigma`
    the noise standard deviation of a bin; over a range zoomed to fewer bins (:func:`zoom_bins`),
    :func:`zoomed_concentration`.
    """
    total = data.guarantee(neighbouring)
    steps = split(total, [PROFILE_BUDGET_SHARE, 1.0 - PROFILE_BUDGET_SHARE])
    sensitivity = 2.0 if neighbouring == "replace" else 1.0
    low, high = data.bounds
    bins = PROFILE_BINS
    index = np.minimum(((data.x - low) / (high - low) * bins).astype(np.int64), bins - 1)
    counts = np.bincount(index, minlength=bins).astype(np.float64)
    noisy = np.round(laplace_mechanism(counts, sensitivity, steps[0].epsilon, data.rng, integer_valued=True))
    n = max(float(data.x.size) if neighbouring == "replace" else float(noisy.sum()), 1.0)
    sigma = math.sqrt(2.0) * sensitivity / steps[0].epsilon
    top = max(float(noisy.max()) - math.sqrt(2.0 * math.log(bins)) * sigma, n / bins)
    concentration = float(min(max(bins * top / n, 1.0), bins))
    profile = {"counts": noisy.astype(np.int64).tolist(), "epsilon": steps[0].epsilon, "sensitivity_l1": sensitivity}
    if neighbouring != "replace":
        profile["noisy_n"] = int(n)
    first, last = zoom_bins(noisy, sigma, n)
    if (first, last) != (0, bins - 1):  # the tree covers the kept bins; the concentration at their width
        profile["zoom"] = [low + (high - low) * first / bins, low + (high - low) * (last + 1) / bins]
        if last > first:  # inside one bin the profile sees nothing: the concentrated reading stays
            concentration = zoomed_concentration(concentration, last + 1 - first)
    profile["concentration"] = concentration
    return n, concentration, steps, profile
