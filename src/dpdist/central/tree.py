r"""Tree CDF: a b-ary hierarchical histogram with constrained inference, mergeable across sites.

The data's range is cut into :math:`L = b^h` equal-width leaves; every node of
the complete b-ary tree over them (levels :math:`0..h`, the root included)
counts the records below it, and each count of levels :math:`1..h` gets Laplace
noise (the root is the sum of level 1, or the public ``n``).  One record touches
one node per level, so under add/remove neighbours the :math:`\ell_1`
sensitivity of the released tree is :math:`h` (under replacement, :math:`2h`).  The noisy tree is made
consistent by the least-squares projection of Hay, Rastogi, Miklau & Suciu
(PVLDB 2010, Thm. 3; :func:`dpdist.postprocess.hay_consistency`) and
the cumulative leaf counts are projected onto monotone CDFs (isotonic
regression, Prop. 1 of Tao & Sarwate), so any number of quantiles and range
queries follow from one release at no further privacy cost.  A CDF value is a
sum of :math:`O(b\,h)` nodes instead of up to :math:`L` bins, which is why the
tree beats a flat histogram at fine resolutions (Qardaji, Yang & Li, PVLDB 2013,
who find :math:`b \approx 16` best for range queries).

**Shape rule** (default ``rule="adaptive"``, :mod:`dpdist.central._shape`, tested): 5% of
the budget buys a 16-bin Laplace histogram of the data; its total is the noisy ``n`` (under
add/remove neighbours; under replacement ``n`` is public and the histogram still costs the 5%)
and its largest bin the concentration :math:`\hat c` (largest density times the range).
``(branching, height)`` minimise the modelled KS

.. math::

    \alpha(b,h)\,\frac{\Delta_1}{\varepsilon_{\rm tree}\,\hat n} + \frac{\hat D(\hat c)}{8L^2}
    + \sqrt{\frac{\hat c}{L\,\hat n}}, \qquad L = b^h \in [16, 2^{20}],

noise of the consistent tree plus the linear interpolation's error inside a leaf, with the
curvature :math:`\hat D` interpolated from :math:`\hat c` between a smooth and a skewed
reference model.  The shapes compared are the level-uniform trees of Rameshwar, Tandon & Sharma
(arXiv 2409.18573: equal branching factors and equal level budgets, optimal by their Thm. IV.3,
any integer :math:`b \le 64`) and flat histograms of any size; for a given :math:`L` the noise term
orders them as their :math:`\ell_2` error :math:`h^3(b-1)` does (Thm. IV.1), so the rule picks
their integer optimum for the :math:`L` the KS model wants.  Smooth data get a flat histogram or a
shallow tree, concentrated data a deep one; at large :math:`n\varepsilon`, data the profile cannot resolve (nearly
all in one of its bins, or tied) get at least :func:`leaf_floor` leaves.  ``rule="size"`` is the earlier rule
(:func:`choose_shape`, from the noisy ``n`` only); a given ``height`` spends the whole budget on
the tree.  The two releases compose sequentially (the guarantee is their sum).

**Atoms.**  Inside a leaf the released CDF is linear, except that mass above both neighbouring
leaves is read as an atom of unknown position and split between the leaf's edges, the minimax
reading for the KS distance (:mod:`dpdist.central._atoms`, post-processing): on data with atoms
(incomes, rounded times) the linear reading misses an atom by up to its whole mass depending on
where the public grid falls, this one by half of it wherever it falls.

**Zoomed range.**  With loose bounds the tree covers only the profile's bins that hold the data
(:func:`dpdist.central._shape.zoom_bins`); under add/remove the records below and above it are counted in two
outside cells at the tree's budget (a record lies in the tree or in one cell: parallel composition, McSherry 2009,
Thm. 4), and the CDF beyond reads them as exponential tails meeting the tree's density at its edges
(post-processing).

**Floating-point safety.** Node counts are integers; the noisy counts are rounded
to integers (post-processing), so the released values lie on a data-independent
grid and carry no low-order bits of the noise sampler (Mironov 2012).  In
``secure`` mode the noise is exact discrete Laplace from the CSPRNG.

**Mergeable.** :class:`TreeHistogram` is the release of one site; releases of
disjoint data with the same tree shape add (:meth:`TreeHistogram.merge` or
``+``), and by parallel composition the merged tree is ``max(epsilon)``-DP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from .._guarantee import PrivacyGuarantee, parallel, sequential, split
from .._types import ArrayLike, FloatBounds, Seed
from ..errors import IncompatibleStateError
from .._validation import Described, Integer, Interval, check_param, validate_params
from ..estimates import CDFBand, Distribution, ReleasedDistribution
from ..estimates._band import upper_order_statistic
from ..estimates._intervals import normal_quantile
from ..postprocess import _consistent_tree, hay_consistency, isotonic_cdf
from ._atoms import atom_aware_cdf, atom_masses
from ._refine import FOLLOW, Refinement, refine_share, refined_masses, release_refinement
from ._common import (
    CentralInput,
    release_notes,
    cdf_distribution,
    check_central_input,
    check_option,
    check_positive_int,
)
from ._defaults import SIZE_BUDGET_SHARE, size_for_rules  # noqa: F401  (SIZE_BUDGET_SHARE: re-exported)
from ._shape import PROFILE_BINS, best_shape, coarse_profile
from .noise import laplace_mechanism

__all__ = ["TreeHistogram", "tree_cdf", "cdf", "choose_shape", "grow_checked", "DEFAULT_BRANCHING", "MAX_LEAVES"]

DEFAULT_BRANCHING = 16
MAX_LEAVES = 2**20
NEIGHBOURING = ("add-remove", "replace")
RULES = ("adaptive", "size")
#: The tree has at least this many leaves (see :func:`choose_shape`).
MIN_LEAVES = 256
#: The tree's noisy n times its budget from which the shape rule floors the leaves where nearly all the data sit in one
#: of the profile's bins (:func:`leaf_floor`; data with ties have a floor at every size),
LARGE_SIZE = 2.5e5
#: the concentration from which the data count as sitting in one of the profile's bins,
CONCENTRATED = 15.0
#: and the floors, as that size over these divisors: data in one profile bin, data with ties.
CONCENTRATED_DIVISOR, HEAPED_DIVISOR = 4.0, 32.0
#: knots of the CDF read beyond a zoomed tree on each side (``TreeHistogram._beyond``)
TAIL_KNOTS = 65
#: nodes of the noise trees drawn and made consistent at once by ``_noise_cdfs`` (2 MiB of doubles a block)
_NOISE_CELLS = 1 << 18


def choose_shape(n: float, epsilon: float, branching: int | None = None) -> tuple[int, int]:
    r"""``(branching, height)`` of the tree from the (public or noisy) ``n`` and the tree's budget.

    Fan-out 16 (Qardaji et al. 2013) and the largest height with
    :math:`16^h \le \varepsilon n / 16`, but at least 2 (256 leaves) and at most
    :math:`2^{20}` leaves.  The divisor 16 (it was 2): at :math:`\varepsilon n = 2\cdot 10^5`
    on Beta(2, 5) data a 16^3-leaf tree has mean KS 2.5e-4 against 3.5e-4 for 16^4 leaves
    (10 seeds), and 99-quantile rank errors are equal on normal and lognormal data at
    :math:`\varepsilon n \ge 10^5`; at :math:`\varepsilon n = 10^4` 256 leaves are better
    on normal data (rank error 6e-4 vs 1.0e-3) and worse on lognormal (1.9e-3 vs 1.2e-3).  Measured in ``docs/explanation/central-release.md`` (rank error of 9 and 99
    quantiles and KS, normal and lognormal data, n = 10^3..10^5, epsilon =
    0.1..1): a flat histogram with the bin rule of the smooth-data analysis
    (:math:`\varepsilon\sqrt{1.6n}` bins) is up to 1.7x better on normal data at
    :math:`\varepsilon n \le 500` but 10-40x worse on skewed data, where all
    the mass falls in a few bins; the tree's resolution is what makes it robust.
    A given ``branching`` keeps the rule with that fan-out.
    """
    budget = max(epsilon * max(n, 1.0), 1.0)
    branching = DEFAULT_BRANCHING if branching is None else branching
    height = 1
    while branching ** (height + 1) <= MAX_LEAVES and (
        branching ** (height + 1) <= budget / 16 or branching ** (height + 1) <= MIN_LEAVES
    ):
        height += 1
    return branching, height


def leaf_floor(n: float, epsilon: float, concentration: float, bins: int, heaped: bool = False) -> float:
    r"""The fewest leaves the adaptive shape rule may choose (:func:`dpdist.central._shape.best_shape`; ``n`` the
    profile's noisy count, ``epsilon`` the tree's budget).

    On data with ties (``heaped``: a release's noisy count of tied records, the default quantiles' choice),
    :math:`n\varepsilon /` :data:`HEAPED_DIVISOR` at every size; from :math:`n\varepsilon =` :data:`LARGE_SIZE`,
    :math:`n\varepsilon /` :data:`CONCENTRATED_DIVISOR` where the profile's concentration is at least
    :data:`CONCENTRATED` and the tree spans ``bins`` > 1 of its bins (nearly all the data in one bin: the profile
    cannot see their shape inside it, and its curvature model stops at the one-bin reading); 0 otherwise.  The KS
    model weighs the noise of a taller tree against a resolution it reads from the profile; these data's deciles are
    limited by what the profile cannot see: the slope of a steep density inside a wide leaf (read linearly, a Pareto's
    deciles all land above the data's), and heaps closer than a leaf (a decile lands between two, or in a leaf too
    light to be refined).  Measured (``benchmarks/bench_decile_peers.py``'s sets the rules are tuned on,
    :math:`\varepsilon = 1`): at :math:`n = 10^6` (4 runs, the mean over 4 seeds of the noise) Pareto 1.2 at the
    bound :math:`10^7` (14^4 leaves by the model, 22^4 with the floor): deciles' rank error 4.8e-5 -> 2.3e-5; loan
    incomes at the bound 300,000 (19^3 -> 13^4): 2.2 -> 1.0 USD; heaped incomes 1.05 -> 0.43 USD, CPS wages 0.030 ->
    0.012 USD.  At :math:`n = 10^4` (60 runs) the model chose 111-196 leaves at the tight bounds, the floor 256: CPS
    wages 2.2 -> 1.18 USD, loan incomes 241 -> 219 USD, ages 0.078 -> 0.053 years, Canadian wages 0.040 -> 0.030 CAD,
    the other rows within their standard errors.  The divisors have no derivation: they were read off those rows
    (the heaped one among 16, 32 and 64: 16 is better on loan incomes at :math:`10^6` but worse on weekly wages,
    whose first decile lies between heaps, in the noise; 64 leaves the tight rows at :math:`10^4` as they were).  On
    smooth data without ties the model's shape stays: a floor of :math:`n\varepsilon/4` makes a normal sample's
    deciles 1.3x worse in rank (the noise of a 22^4 tree against 19^3).

    Privacy: a function of released values (the profile, the noisy ties) and public constants: post-processing.
    """
    size = n * epsilon
    if size >= LARGE_SIZE and concentration >= CONCENTRATED and bins > 1:
        return size / CONCENTRATED_DIVISOR
    return size / HEAPED_DIVISOR if heaped else 0.0


def _noisy_levels(data, branching: int, height: int, neighbouring: str, epsilon: float) -> tuple[list, float]:
    """``(levels, l1 sensitivity)``: the tree's noisy node counts (int64), level 0 the root (the public ``n`` under
    replacement, else the sum of level 1, not noised), each level below with discrete Laplace noise at ``epsilon``."""
    leaves = branching**height
    low, high = data.bounds
    index = np.minimum(((data.x - low) / (high - low) * leaves).astype(np.int64), leaves - 1)
    exact = [np.bincount(index, minlength=leaves).astype(np.float64)]
    for _ in range(height):
        exact.append(exact[-1].reshape(-1, branching).sum(axis=1))
    exact.reverse()  # exact[0] is the root
    to_noise = exact[1:]  # under add/remove the root is not released: it would cost one more level of sensitivity
    sensitivity = 2.0 * height if neighbouring == "replace" else float(height)
    noisy = laplace_mechanism(np.concatenate(to_noise), sensitivity, epsilon, data.rng, integer_valued=True)
    noisy = np.round(noisy).astype(np.int64)  # integer grid: nothing of the sampler's float bits is released
    offsets = np.cumsum([0] + [level.size for level in to_noise])
    levels = [noisy[offsets[i]: offsets[i + 1]] for i in range(len(to_noise))]
    root = data.x.size if neighbouring == "replace" else levels[0].sum()  # derived, not noised
    return [np.array([root], dtype=np.int64), *levels], sensitivity


@dataclass(frozen=True)
class TreeHistogram(ReleasedDistribution):
    """Noisy node counts of a b-ary tree over ``bounds``: the mergeable state of :func:`tree_cdf`.

    It meets the result contract (:class:`dpdist.estimates.Estimate`) through its distribution
    (:meth:`to_distribution`), whose intervals, JSON and figure carry the :meth:`cdf_band` at the
    level asked for (post-processing: no privacy cost).

    Attributes
    ----------
    levels : tuple of ndarray
        ``levels[l]`` holds the ``branching**l`` noisy counts (int64) of level ``l``; level 0 is the
        root: the public ``n`` under replacement neighbours, else the sum of level 1 (not noised).
    branching, height : int
    bounds : (float, float)
    neighbouring : {"add-remove", "replace"}
    noise_variance : float
        Variance of the noise on every node (the sum over merged releases).
    releases : tuple of dict
        One entry per site release: epsilon, noise scale, sensitivity, secure.
    refinement : Refinement, optional
        The noisy sub-trees inside the heavy leaves (:mod:`dpdist.central._refine`), released with a
        shape chosen by the rule; a merged tree has none (the sites refined different leaves).
    """

    levels: tuple
    branching: int
    height: int
    bounds: tuple
    neighbouring: str = "add-remove"
    noise_variance: float = 0.0
    releases: tuple = field(default_factory=tuple)
    refinement: Refinement | None = None

    # ------------------------------------------------------------------ release
    @classmethod
    def release(
        cls,
        x: ArrayLike,
        epsilon: float,
        bounds: FloatBounds,
        *,
        branching: int | None = None,
        height: int | None = None,
        neighbouring: str = "add-remove",
        rng: Seed = None,
        clip: bool = True,
        secure: bool = False,
        rule: str = "adaptive",
        missing: str | float = "refuse",
        privacy_id: ArrayLike | None = None,
        max_contributions: int | str | None = None,
    ) -> "TreeHistogram":
        """Release the noisy tree of one data set (``epsilon``-DP; see the module docstring).

        ``rule`` picks the shape when ``height`` is None: ``"adaptive"`` (a coarse noisy
        histogram profiles the data, :mod:`dpdist.central._shape`) or ``"size"``
        (:func:`choose_shape`, from the noisy ``n`` only); ``missing``, ``privacy_id`` and
        ``max_contributions`` as in :func:`tree_cdf` (trees per person merge with trees per person only, of
        sites holding disjoint persons).
        """
        return grow_tree(cls, "TreeHistogram.release", x, epsilon, bounds, branching=branching, height=height,
                         neighbouring=neighbouring, rng=rng, clip=clip, secure=secure, rule=rule, missing=missing,
                         privacy_id=privacy_id, max_contributions=max_contributions)

    # ------------------------------------------------------------------ merge
    def merge(self, other: "TreeHistogram") -> "TreeHistogram":
        """The tree of the union of two disjoint data sets (same shape, bounds and neighbouring)."""
        if not isinstance(other, TreeHistogram):
            raise IncompatibleStateError(f"TreeHistogram.merge needs a TreeHistogram. Got {type(other).__name__}.")
        mine = (self.branching, self.height, self.bounds, self.neighbouring, self.unit)
        theirs = (other.branching, other.height, other.bounds, other.neighbouring, other.unit)
        if mine != theirs:
            raise IncompatibleStateError(
                f"Cannot merge trees of different shapes (branching, height, bounds, neighbouring, unit): {mine} and "
                f"{theirs}; give every site the same branching and height (and privacy unit)."
            )
        levels = tuple(a + b for a, b in zip(self.levels, other.levels))
        return TreeHistogram(
            levels,
            self.branching,
            self.height,
            self.bounds,
            self.neighbouring,
            self.noise_variance + other.noise_variance,
            self.releases + other.releases,
        )

    __add__ = merge

    # ------------------------------------------------------------------ estimates
    @property
    def unit(self) -> str:
        """``"person"`` for a tree released per person (``privacy_id``), else ``"record"``."""
        return str(self.releases[0].get("unit", "record")) if self.releases else "record"

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """The guarantee of the merged release (parallel composition over disjoint sites: disjoint persons, per
        person)."""
        return parallel(PrivacyGuarantee(r["epsilon"], 0.0, self.neighbouring, "central", unit=self.unit)
                        for r in self.releases)

    @property
    def epsilon(self) -> float:
        return self.guarantee.epsilon

    def consistent_leaves(self) -> tuple[np.ndarray, float]:
        """Least-squares consistent leaf counts and the consistent total (Hay et al. 2010, Thm. 3)."""
        levels = [level.astype(np.float64) for level in self.levels]
        root = float(levels[0][0]) if self.neighbouring == "replace" else None
        tree = hay_consistency(levels, self.branching, root=root)
        return tree[-1], float(tree[0][0])

    @property
    def method(self) -> str:
        return "tree"

    @property
    def n(self) -> int | None:
        """The public number of records under replacement neighbours; ``None`` under add/remove (it is private)."""
        return int(self.levels[0][0]) if self.neighbouring == "replace" else None

    @property
    def details(self) -> dict:
        """The tree's shape, its noise and the site releases behind it."""
        return {
            "branching": self.branching,
            "height": self.height,
            "leaves": int(self.branching**self.height),
            "neighbouring": self.neighbouring,
            "noise_variance_per_node": self.noise_variance,
            "releases": [dict(release) for release in self.releases],
            "budget": {"tree": [release["tree_epsilon"] for release in self.releases]},
            "secure": all(release["secure"] for release in self.releases),
            **({"privacy_unit": self.releases[0]["privacy_unit"]} if len(self.releases) == 1 and
               "privacy_unit" in self.releases[0] else {}),
            **release_notes(self.releases),
        }

    @property
    def public_bounds(self) -> tuple:
        """The bounds the release was asked for: :attr:`bounds` unless the tree covers fewer of the profile's bins
        (:func:`dpdist.central._shape.zoom_bins`; values beyond them are counted in two outside cells under
        add/remove, at their edges under replacement)."""
        return tuple(self.releases[0].get("bounds", self.bounds)) if self.releases else self.bounds

    def leaf_cdf(self) -> tuple[np.ndarray, np.ndarray]:
        """``(edges, cdf)``: the isotonic, consistent CDF at the leaf edges (where :meth:`cdf_band` and
        :meth:`cdf_standard_error` hold), and at the bounds asked for when the tree covers less of them."""
        edges, cdf, _ = self._leaf_cdf_and_total()
        return self._padded(edges, cdf, 0.0, 1.0)

    def _padded(self, edges: np.ndarray, values: np.ndarray, low, high) -> tuple[np.ndarray, np.ndarray]:
        """``edges`` out to the bounds asked for where the tree stops short of them, ``values`` given ``low`` and
        ``high`` there."""
        below, above = self._short()
        return (np.concatenate([self.public_bounds[:below], edges, self.public_bounds[2 - above:]]),
                np.concatenate([[low] * below, values, [high] * above]))

    def _short(self) -> tuple[int, int]:
        """``(below, above)``: 1 on each side where the tree stops short of the bounds asked for, else 0."""
        return int(self.public_bounds[0] < self.bounds[0]), int(self.public_bounds[1] > self.bounds[1])

    def _outside(self) -> tuple[float, float]:
        """``(below, above)``: the released counts of the records beyond the zoomed range (at least 0; 0 unzoomed)."""
        below, above = np.sum([r.get("outside", [0, 0]) for r in self.releases], axis=0) if self.releases else (0, 0)
        return max(float(below), 0.0), max(float(above), 0.0)

    def _leaf_cdf_and_total(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(edges, cdf, total)``: the tree's CDF at its edges, the records below and above it (:meth:`_outside`)
        counted in the total and below its first edge."""
        leaves, total = self.consistent_leaves()
        below, above = self._outside()
        edges = np.linspace(self.bounds[0], self.bounds[1], leaves.size + 1)
        cumulative = np.concatenate([[0.0], np.cumsum(leaves)]) / max(total, 1.0)
        whole = max(total, 1.0) + below + above
        return edges, (below + max(total, 1.0) * isotonic_cdf(cumulative, pinned=True)) / whole, whole

    def to_distribution(self, grid_size: int | None = None, *, level: float | None = None) -> Distribution:
        """The released distribution: :meth:`leaf_cdf` at the leaf edges, atom-aware inside the leaves.

        Inside a leaf the CDF is linear, except that the part of a leaf's mass above both
        neighbours (beyond the noise) is read as an atom of unknown position and split between the
        leaf's two edges (:mod:`dpdist.central._atoms`; post-processing).  ``details["atoms"]``
        counts the leaves read so.  With ``level`` the distribution carries its :meth:`cdf_band` at
        that level as ``band`` (on the leaf edges).
        """
        edges, cdf, total = self._leaf_cdf_and_total()
        cells, cumulative, noise_sd, at_edges = self._refined_cells(edges, cdf, total)
        sub_leaves = np.diff(at_edges).repeat(np.diff(at_edges)) > 1  # the cells inside refined leaves
        atoms = atom_masses(np.diff(cumulative) * total, noise_sd, np.diff(cells), whole=sub_leaves) / total
        knots, values, held = atom_aware_cdf(cells, cumulative, atoms)
        held = held[at_edges]
        knots, values = self._beyond(knots, values)
        details = {**self.details, "atoms": int(np.count_nonzero(atoms > 0)) if knots.size > cells.size else 0}
        distribution = cdf_distribution(knots, values, method=self.method, guarantee=self.guarantee, n=self.n,
                                        details=details)
        if level is not None:  # the band is of the share below each leaf edge: where the CDF takes that value
            held, _ = self._padded(held, held, None, None)
            distribution = replace(distribution, band=replace(self.cdf_band(level), edges=held))
        return distribution

    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """``(edges, cdf)`` of the released CDF's cells before the atom reading: the leaves, a refined leaf's
        sub-leaves where its sub-tree says more than the linear reading (post-processing)."""
        edges, cdf, total = self._leaf_cdf_and_total()
        cells, cumulative, _, _ = self._refined_cells(edges, cdf, total)
        return cells, cumulative

    def _beyond(self, knots: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r"""The CDF between the bounds asked for and a zoomed tree's: its released outside shares (``values[0]``
        below, ``1 - values[-1]`` above) as exponential tails that meet the tree's density at its edges.

        A share :math:`M` beyond an edge where the tree's CDF rises by :math:`f_0` a unit (over a quarter of a
        profile bin) is read as the density :math:`f_0 e^{-t/\lambda}` at the distance :math:`t` from the edge,
        :math:`\lambda = M / f_0` (its mass, truncated at the bound and scaled back to :math:`M`); no rise reads
        evenly.  The profile's own
        counts there are no better guide: beside 5% of the records or fewer, their noise (:math:`\sqrt 2` over 5%
        of the budget a bin) is the larger (a normal sample of :math:`10^4` at :math:`\varepsilon = 0.5`: sd 57
        against 49 records in the bin next to the tree).  Post-processing of released values: no privacy cost.
        """
        low, high = self.public_bounds
        if (low, high) == (knots[0], knots[-1]):
            return knots, values
        width = (high - low) / PROFILE_BINS / 4  # a quarter of a bin (normal, 8 runs: 1.14x the flat KS; 1.26x at a bin)

        def tail(mass: float, rise: float, span: float) -> tuple[np.ndarray, np.ndarray]:  # distance, share beyond
            if span <= 0:  # the tree reaches this bound
                return np.zeros(1), np.full(1, mass)
            distance = np.linspace(0.0, span, TAIL_KNOTS)
            scale = mass / rise * width if rise > 0 and mass > 0 else math.inf
            if scale > 1e3 * span:
                return distance, mass * (1.0 - distance / span)
            share = mass * (np.exp(-distance / scale) - math.exp(-span / scale)) / -math.expm1(-span / scale)
            share[-1] = 0.0  # at the bound, exactly
            return distance, share

        left, below = tail(values[0], np.interp(knots[0] + width, knots, values) - values[0], knots[0] - low)
        right, above = tail(1.0 - values[-1], values[-1] - np.interp(knots[-1] - width, knots, values), high - knots[-1])
        return (np.concatenate([knots[0] - left[:0:-1], knots, knots[-1] + right[1:]]),
                np.concatenate([below[:0:-1], values, 1.0 - above[1:]]))

    def _refined_cells(self, edges: np.ndarray, cdf: np.ndarray, total: float):
        """``(cell edges, CDF at them, noise sd of each cell, index of each leaf edge among them)``: the leaves, each
        refined leaf whose sub-tree says more than the linear reading replaced by its sub-leaves (post-processing,
        :func:`dpdist.central._refine.refined_masses`)."""
        leaf_sd = math.sqrt(self.noise_variance)
        if self.refinement is None or self.refinement.leaves.size == 0:
            return edges, cdf, leaf_sd, np.arange(edges.size)
        leaf_masses = np.diff(cdf) * total
        # the atoms the tree's own reading finds, large enough for the sub-tree to place
        atom_leaves = atom_masses(leaf_masses, leaf_sd) > FOLLOW * self.refinement.noise_sd
        sub_masses, used = refined_masses(self.refinement, leaf_masses, atom_leaves)
        refined, sub_masses = self.refinement.leaves[used], sub_masses[used]
        per_leaf = np.ones(leaf_masses.size, dtype=np.int64)
        per_leaf[refined] = sub_masses.shape[1]
        first = np.concatenate([[0], np.cumsum(per_leaf)])
        within = np.arange(first[-1]) - np.repeat(first[:-1], per_leaf)
        widths = np.repeat(np.diff(edges) / per_leaf, per_leaf)
        cells = np.append(np.repeat(edges[:-1], per_leaf) + within * widths, edges[-1])
        masses = np.repeat(leaf_masses, per_leaf)
        is_sub = np.repeat(per_leaf > 1, per_leaf)
        masses[is_sub] = sub_masses.ravel()
        noise_sd = np.where(is_sub, self.refinement.noise_sd, leaf_sd)
        cumulative = np.minimum(cdf[0] + np.concatenate([[0.0], np.cumsum(masses)]) / total, 1.0)
        cumulative[first] = cdf  # the released values at the leaf edges, exactly
        return cells, np.maximum.accumulate(cumulative), noise_sd, first

    def _presented(self, level: float | None) -> Distribution:
        """The distribution with its band at ``level`` (``None``: without)."""
        return self.to_distribution(level=level)

    def cdf_standard_error(self, draws: int = 200, rng: Seed = 0) -> np.ndarray:
        """Standard error of the released CDF at the leaf edges, from the noise alone.

        The consistent CDF is a fixed function of the public noise law, so its
        spread is found by pushing ``draws`` independent noise trees of the
        release's variance through the same post-processing (no privacy cost:
        the data are not touched).  Used for quantile intervals.
        """
        leaves, _ = self.consistent_leaves()
        # running mean and sum of squared deviations (Welford): memory O(leaves), not O(draws * leaves)
        # (a 2**20-leaf tree would otherwise hold 200 x 2**20 doubles, 1.7 GB)
        mean = np.zeros(self._padded(leaves, leaves, 0, 0)[0].size + 1)  # the leaf edges and the bounds asked for
        squares = np.zeros_like(mean)
        delta, step = np.empty_like(mean), np.empty_like(mean)  # reused: a 2**20-leaf draw is 8 MB a temporary
        for draw, sample in enumerate(self._noise_cdfs(draws, np.random.default_rng(rng))):
            np.subtract(sample, mean, out=delta)
            mean += np.divide(delta, draw + 1, out=step)
            squares += np.multiply(delta, np.subtract(sample, mean, out=step), out=step)
        return np.sqrt(squares / draws)

    def _noise_cdfs(self, draws: int, generator):
        """``draws`` errors of the normalized CDF at the leaf edges, from independent noise trees of this law.

        Consistency is linear, so a noise tree ``e`` moves the consistent counts ``C`` (the
        released ones stand in for the data's) to ``C + e`` and, under add/remove neighbours,
        the total ``T`` to ``T + e_T``: the error of the CDF is ``(C + e)/(T + e_T) - C/T``.
        The total's noise moves every edge with it (about ``-F e_T / T``); leaving it out
        put the CDF's standard error where ``F`` is near 1/2 too low (a simultaneous band on
        it covered 0.8 on weeks-worked; ``docs/explanation/uncertainty.md``).

        Each yielded array is reused for the next draw (a 2**20-leaf tree's error is 8 MB): use it before
        asking for the next.
        """
        leaves, total = self.consistent_leaves()
        below, above = self._outside()
        counts = below + np.concatenate([[0.0], np.cumsum(leaves)])
        released = counts / (max(total, 1.0) + below + above)
        scale = math.sqrt(self.noise_variance / 2.0)
        short = self._short()  # the CDF at the bounds asked for too (0 and 1: no error)
        cells = any("outside" in release for release in self.releases)  # the outside cells' noise: scale / height
        shape = [level.size for level in self.levels]
        cuts = np.cumsum(shape)[:-1]
        replacing = self.neighbouring == "replace"
        # a block of draws at a time (at most _NOISE_CELLS nodes, memory O(leaves) still), each draw's levels in
        # order: the generator's stream and every draw's numbers are those of one laplace call per level and draw
        block = max(1, _NOISE_CELLS // sum(shape))
        padded = np.zeros(counts.size + sum(short))  # 0 at the bounds asked for, beyond the tree's
        error = padded[short[0]: short[0] + counts.size]
        for start in range(0, draws, block):
            size = min(block, draws - start)
            noise = np.split(generator.laplace(0.0, scale, (size, sum(shape))), cuts, axis=1)
            noise[0] = np.zeros((size, 1)) if replacing else noise[1].sum(axis=1, keepdims=True)
            noisy_leaves = _consistent_tree(noise, self.branching, 0.0 if replacing else None)[-1]
            moved = np.empty((size, counts.size))  # counts + [0, cumsum(noisy leaves)], without the temporaries
            moved[:, 0] = 0.0
            np.cumsum(noisy_leaves, axis=1, out=moved[:, 1:])
            moved += counts
            beyond = generator.laplace(0.0, scale / self.height, (size, 2)) if cells else np.zeros((size, 2))
            beyond[:, np.equal(short, 0)] = 0.0  # no cell where the tree reaches the bound
            moved += beyond[:, :1]
            for row, more in zip(moved, beyond[:, 1] + above):
                np.subtract(np.divide(row, max(row[-1] + more, 1.0), out=error), released, out=error)
                yield padded

    @validate_params({"level": Interval(0.0, 1.0, closed="neither")})
    def cdf_band(
        self, level: float = 0.95, *, draws: int = 200, standard_error: np.ndarray | None = None, rng: int = 0
    ) -> CDFBand:
        r"""Pointwise and simultaneous bands of the released CDF at the leaf edges (post-processing).

        The pointwise band is :math:`\hat F \pm z\,\mathrm{se}` (:meth:`cdf_standard_error`,
        the band behind the quantile intervals).  The simultaneous band is
        :math:`\hat F \pm m\,\mathrm{se}` with :math:`m` the
        :math:`\lceil (B+1)\,\mathrm{level} \rceil`-th smallest of
        :math:`\max_x |e_b(x)| / \mathrm{se}(x)` over ``draws`` further noise trees
        :math:`e_b`, independent of those behind ``se`` (Monte Carlo of the known noise
        law; Davison & Hinkley 1997, sec. 5.2, for the order statistic).  Both are
        clipped to [0, 1], pinned at the bounds and monotone (simultaneous), and
        cover the *data's* CDF at the edges (its share below each edge): the noise is
        the only randomness.  Coverage: ``docs/explanation/uncertainty.md``.

        Parameters
        ----------
        level : float
            Confidence level in (0, 1).
        draws : int
            Noise trees for the standard error and as many for the multiplier.
        standard_error : array, optional
            :meth:`cdf_standard_error` if already computed (same ``draws`` and ``rng``).
        rng : int
            Seed of the noise draws (public: they simulate the noise law, not the data).

        Returns
        -------
        CDFBand
        """
        draws = check_positive_int("TreeHistogram.cdf_band", "draws", draws, low=20, high=100_000)
        edges, cdf = self.leaf_cdf()
        se = self.cdf_standard_error(draws, rng) if standard_error is None else np.asarray(standard_error)
        varying = se > 1e-12
        varying[[0, -1]] = False
        spread = se[varying]
        ratio = np.empty(spread.size)  # reused: a 2**20-leaf draw is 8 MB a temporary
        sups = np.array([
            np.divide(np.abs(np.compress(varying, sample, out=ratio), out=ratio), spread, out=ratio).max()
            if spread.size else 0.0
            for sample in self._noise_cdfs(draws, np.random.default_rng([rng, 1]))
        ])
        multiplier = float(upper_order_statistic(sups, level))
        z = normal_quantile(level)
        return CDFBand.around(
            edges, cdf, z * se, multiplier * se, level=level, replicates=draws,
            method="Monte Carlo of the release's noise law through the same post-processing (covers the data's CDF)",
        )


def grow_tree(cls: type[TreeHistogram], owner: str, x: ArrayLike, epsilon: float, bounds: FloatBounds, *,
              branching: int | None = None, height: int | None = None, neighbouring: str = "add-remove",
              rng: Seed = None, clip: bool = True, secure: bool = False, rule: str = "adaptive",
              missing: str | float = "refuse", privacy_id: ArrayLike | None = None,
              max_contributions: int | str | None = None) -> TreeHistogram:
    """:meth:`TreeHistogram.release`, its refusals naming ``owner``: the function the caller called
    (``cdf``, ``tree_cdf``, ``quantiles`` or ``TreeHistogram.release``)."""
    check_option(owner, "neighbouring", neighbouring, NEIGHBOURING)
    data = check_central_input(owner, x, epsilon=epsilon, bounds=bounds, rng=rng, clip=clip, secure=secure,
                               missing=missing, neighbouring=neighbouring, privacy_id=privacy_id,
                               max_contributions=max_contributions)
    return grow_checked(cls, owner, data, branching=branching, height=height, neighbouring=neighbouring, rule=rule)


def grow_checked(cls: type[TreeHistogram], owner: str, data: CentralInput, *, branching: int | None = None,
                 height: int | None = None,
                 neighbouring: str = "add-remove", rule: str = "adaptive", before: tuple = (),
                 choice: dict | None = None, heaped: bool = False) -> TreeHistogram:
    """The tree of checked input ``data`` (:func:`grow_tree`); ``before`` holds steps of the budget already spent on
    the same data (``data.left`` is what is left, the tree's), stated with the tree's own, ``choice`` what
    they released (the default quantiles' choice of method, :func:`dpdist.central.quantiles`) and ``heaped`` whether
    it reads the data as having ties (:func:`leaf_floor`)."""
    if branching is not None:
        branching = check_positive_int(owner, "branching", branching, low=2, high=MAX_LEAVES)
    check_option(owner, "rule", rule, RULES)
    branching, height, spent, size_release = _shape_and_budget(data, branching, height, neighbouring, rule, heaped)
    public_bounds = tuple(float(b) for b in data.bounds)
    outside = None
    if size_release is not None and "zoom" in size_release:  # the tree covers the profile bins holding the data
        data.bounds = tuple(size_release["zoom"])
        if neighbouring == "replace":  # n is public, the tree's root: records beyond are counted at its edges
            data.x = np.clip(data.x, *data.bounds)  # per record, as the bounds clip: neighbours stay neighbours
        else:  # records beyond fall in one of two outside cells, released beside the tree (_outside_cells)
            beyond = np.stack([data.x < data.bounds[0], data.x > data.bounds[1]])
            outside, data.x = beyond.sum(axis=1), data.x[~beyond.any(axis=0)]
    tree_epsilon = spent[1].epsilon if len(spent) == 3 else spent[-1].epsilon  # with a refinement, the middle step
    branching = DEFAULT_BRANCHING if branching is None else branching
    height = check_positive_int(owner, "height", height, high=64)
    tallest = next(h for h in range(1, 65) if branching ** (h + 1) > MAX_LEAVES)  # branching <= MAX_LEAVES: h >= 1
    height = int(check_param(owner, "height", height, Described(Integer(1, tallest), (
        f"an int in [1, {tallest}]: the tree of {owner} may have at most 2**20 leaves, branching={branching}"))))
    noisy_levels, sensitivity = _noisy_levels(data, branching, height, neighbouring, tree_epsilon)
    scale = sensitivity / tree_epsilon
    if outside is not None:  # a side the tree reaches has no cell (a public fact of the range): 0, not released
        reached = np.array([data.bounds[0] <= public_bounds[0], data.bounds[1] >= public_bounds[1]])
        outside = np.where(reached, 0, _outside_cells(outside, tree_epsilon, data.rng)).tolist()
    outside = {} if outside is None else {"outside": outside}
    release = {
        "epsilon": data.stated(sequential([*before, *spent])).epsilon,
        "tree_epsilon": tree_epsilon,
        "noise_scale": scale,
        "sensitivity_l1": sensitivity,
        "secure": data.secure,
        **({"bounds": list(public_bounds)} if public_bounds != tuple(data.bounds) else {}),
        **outside,
    }
    if size_release is not None:
        release["profile" if rule == "adaptive" else "size"] = size_release
    if choice is not None:
        release["choice"] = choice
    if data.unit is not None:  # the tree ran at the record-level budget above: its epsilon is stated per person
        release.update(unit="person", privacy_unit=data.unit_details())
    release.update({"notes": list(data.notes)} if data.notes else {})  # the missing-value policy, stated
    tree = cls(tuple(noisy_levels), branching, height, tuple(float(b) for b in data.bounds), neighbouring,
               2.0 * scale**2, (release,))
    if len(spent) < 3:
        return tree
    # the heavy leaves, chosen from the tree just released (post-processing), refined at the last step's budget
    refinement = release_refinement(data, tree.consistent_leaves()[0], spent[2].epsilon, neighbouring,
                                    math.sqrt(tree.noise_variance))
    return replace(tree, refinement=refinement, releases=({**release, "refinement": refinement.details()},))


def _outside_cells(counts: np.ndarray, epsilon: float, rng) -> list[int]:
    r"""The noisy counts of the records below and above the zoomed range, at the tree's budget (add/remove).

    Privacy: a record lies in the tree or in exactly one of the two cells (the range is public, a function of the
    released profile), so the tree's nodes (scale :math:`h/\varepsilon_T`, sensitivity :math:`h`) and the cells
    (scale :math:`1/\varepsilon_T`, sensitivity 1) are Laplace releases on disjoint parts of the data: by parallel
    composition (McSherry, SIGMOD 2009, Thm. 4) they cost :math:`\varepsilon_T` together, the tree's own step of
    the budget; adding or removing a record moves one of them by at most :math:`\varepsilon_T` in privacy loss.
    """
    noisy = laplace_mechanism(counts.astype(np.float64), 1.0, epsilon, rng, integer_valued=True)
    return np.round(noisy).astype(np.int64).tolist()


def _shape_and_budget(data, branching: int | None, height: int | None, neighbouring: str, rule: str,
                      heaped: bool = False):
    """``(branching, height, steps, size release)``: the tree's shape and the steps of the budget, composed
    sequentially: the whole budget on a tree of a given ``height``; else the rule's profile (or noisy ``n``)
    first, then, with the adaptive rule, the tree (at least :func:`leaf_floor` leaves; ``heaped`` as there) and its
    refinement (:func:`~dpdist.central._refine.refine_share` of what is left, none for small data)."""
    total = data.guarantee(neighbouring)
    if height is not None:
        return branching, height, [total], None
    if rule == "size":  # the shape rule needs n: public, or a noisy count under add/remove
        public_n, spent, size_release = size_for_rules(data, neighbouring)
        return (*choose_shape(public_n, spent[-1].epsilon, branching), spent, size_release)
    public_n, concentration, spent, size_release = coarse_profile(data, neighbouring)  # noisy n, concentration
    share = refine_share(public_n, spent[-1].epsilon)
    steps = [spent[0], *split(spent[-1], [1.0 - share, share])] if share > 0 else spent
    zoom = size_release.get("zoom", data.bounds)
    bins = round((zoom[1] - zoom[0]) / (data.bounds[1] - data.bounds[0]) * PROFILE_BINS)
    shape = best_shape(public_n, steps[1].epsilon, concentration, branching=branching,
                       replace=neighbouring == "replace",
                       min_leaves=leaf_floor(public_n, steps[1].epsilon, concentration, bins, heaped))
    return (*shape, steps, size_release)


def tree_cdf(
    x: ArrayLike,
    epsilon: float,
    bounds: FloatBounds,
    *,
    branching: int | None = None,
    height: int | None = None,
    neighbouring: str = "add-remove",
    rng: Seed = None,
    clip: bool = True,
    secure: bool = False,
    rule: str = "adaptive",
    missing: str | float = "refuse",
    privacy_id: ArrayLike | None = None,
    max_contributions: int | str | None = None,
) -> Distribution:
    r"""Private CDF from a consistent b-ary tree of noisy counts (see :mod:`dpdist.central.tree`).

    Parameters
    ----------
    x : array_like of float
        The data: any real values (clipped into ``bounds`` by default), possibly none.
    epsilon : float
        Total budget (with ``height=None``, 5% of it buys the coarse histogram
        of the shape rule, or the noisy ``n`` of ``rule="size"``).
    bounds : (float, float)
        Public range of the data.
    branching : int, optional
        Fan-out b of the tree; ``None`` chooses it with the height (16, Qardaji
        et al. 2013, or a flat histogram for small ``epsilon * n``).
    height : int, optional
        Levels below the root; ``None`` chooses it (and ``branching`` if that is
        ``None`` too) by ``rule``.
    neighbouring : {"add-remove", "replace"}
        Add/remove one record (``n`` private; the default, as OpenDP and
        diffprivlib) or replace one (``n`` public).
    rng, clip, secure
        As in :func:`dpdist.central.histogram_queries`.
    rule : {"adaptive", "size"}
        The shape rule when ``height`` is None: from a coarse noisy histogram
        of the data (:mod:`dpdist.central._shape`) or from the noisy ``n`` only
        (:func:`choose_shape`).
    missing : {"refuse", "drop"} or float
        Missing values (NaN, None) in ``x``: refused with their count (the default), left out
        (``"drop"``, under ``"add-remove"`` only), or each counted as the number given; the
        result's notes state the policy (:mod:`dpdist._missing`).
    privacy_id : array_like, optional
        Whose row each value is (one id per value); with ``max_contributions`` (the rows kept per
        person: an int >= 1, or ``"auto"`` to choose it: privately under add/remove, for no budget under
        replace) the guarantee is per person
        (:mod:`dpdist.central._contributions`).
        Ids compare exactly, numbers by value, strings as written (normalise them first); two kinds are refused
        (:mod:`dpdist._ids`).

    Returns
    -------
    Distribution
        On the ``branching**height`` leaf edges; ``details`` records the tree
        shape and budget.
    """
    tree = grow_tree(TreeHistogram, "tree_cdf", x, epsilon, bounds, branching=branching, height=height,
                     neighbouring=neighbouring, rng=rng, clip=clip, secure=secure, rule=rule, missing=missing,
                     privacy_id=privacy_id, max_contributions=max_contributions)
    return tree.to_distribution()


def cdf(x: ArrayLike, epsilon: float, bounds: FloatBounds, *, rng: Seed = None, clip: bool = True, secure: bool = False,
        missing: str | float = "refuse", privacy_id: ArrayLike | None = None,
        max_contributions: int | str | None = None) -> Distribution:
    """The recommended private CDF for the setting: :func:`tree_cdf` with its data-adaptive shape.

    A flat histogram or a shallow tree on smooth data, a deep tree on
    concentrated data, chosen from a coarse noisy histogram (5% of the budget,
    :mod:`dpdist.central._shape`); add/remove neighbours, isotonic
    post-processing (``docs/explanation/central-release.md`` has the measurements).  ``missing``, ``privacy_id`` and
    ``max_contributions`` (a release per person) as in :func:`tree_cdf`.
    """
    return grow_tree(TreeHistogram, "cdf", x, epsilon, bounds, rng=rng, clip=clip, secure=secure, missing=missing,
                     privacy_id=privacy_id, max_contributions=max_contributions).to_distribution()
