r"""Refinement of a tree's heavy leaves: a noisy sub-tree inside each, read as found mass plus a linear rest.

A leaf of the tree (:mod:`dpdist.central.tree`) knows how much mass it holds, not where: read linearly, a
decile inside it lands between the values the data hold.  Real amounts are *heaped* (incomes at round
thousands, wages at multiples of 50, ages in whole years): most of a leaf's mass sits on a few points, and a
decile lands up to a leaf's width from the atom it belongs to.  The refinement spends a share of the budget
(:func:`refine_share`) on finer counts inside the heavy leaves and reads them only where they say more than
the linear reading.  It is the one-dimensional form of the adaptive grid of Qardaji, Yang & Li
("Differentially Private Grids for Geospatial Data", ICDE 2013, arXiv 1209.1322): a coarse release with part
of the budget, then each cell its noisy count shows dense partitioned finer with the rest, the finer counts
of disjoint cells in parallel, the two levels in sequence.  Here the coarse level is the tree itself and the
finer one a sub-tree of the same kind (noise on every level, Hay et al.'s consistency).

**Release** (:func:`release_refinement`).  The leaves refined are chosen from the tree's released counts
(post-processing): those whose consistent mass could hold a child above the noise (at least
:data:`SIGNIFICANCE` noise standard deviations), and those the tree reads as holding an atom of at least
:data:`FOLLOW` of them (the reading follows it down; on weekly wages heaped on 10 and 50 USD at n = 10^5, bound
2,500, the atoms at multiples of 10 lie in leaves lighter than a heavy one: refining them as well takes the deciles'
error from 0.23 to 0.13 USD over 24 runs), the heaviest first, at most :data:`MAX_CELLS` cells in all.
Inside each, a complete :data:`SUB_BRANCHING`-ary tree of :data:`SUB_HEIGHT` levels over
:math:`S = b^h` equal sub-leaves counts the records; every node of levels :math:`1..h` gets discrete
Laplace noise of scale :math:`h/\varepsilon_R` (integers: no bit of the sampler's floats is released).
One record lies in at most one refined leaf and touches one node per level, so the whole refinement has
:math:`\ell_1` sensitivity :math:`h` under add/remove neighbours (:math:`2h` under replacement) and is
:math:`\varepsilon_R`-DP; which leaves are refined is a function of the tree already released, so the
release composes sequentially with the profile and the tree (their budgets sum to the total).

**Reading** (:func:`refined_masses`, post-processing: no privacy cost).  The sub-tree is made consistent
with the leaf's released mass as its root (Hay et al.'s least squares, :func:`dpdist.postprocess.hay_consistency`
with a root known).  Top-down, a node's mass :math:`P` goes to its children as follows: a child whose
count differs from the background share by more than :func:`significance` noise standard deviations (at least
:data:`SIGNIFICANCE`, more as more children are tested: noise alone makes :data:`FALSE_FINDS` of them
significant in a whole refinement, in expectation) keeps its count (clipped to :math:`[0, P]`; the background
is re-estimated without the significant children, three times), and each run of the others between two
significant children shares its own total evenly (so the mass either side of a found atom stays on that side);
when the other children's cumulative counts leave the linear line by more than :func:`trend_threshold`
:math:`\sigma\sqrt b` (a steep density rather than points of mass) every child keeps its count.  In a leaf the
tree itself reads as holding an atom (its mass above both neighbours', :mod:`dpdist.central._atoms`) of at
least :data:`FOLLOW` noise standard deviations of a sub-tree node, the largest child of each level is kept as
well: the tree found the atom, the sub-tree only has to place it, and its largest child is the atom's well
below the significance a blind search needs.  Children that are not significant spread their mass linearly
down to the sub-leaves, so a leaf without significant structure keeps exactly the tree's linear reading, and
smooth data lose nothing but the budget share.  The sub-leaf masses then go
through the tree's atom reading (:mod:`dpdist.central._atoms`): a sub-leaf above both neighbours is
split between its edges, so a decile on an atom lands within a sub-leaf (:math:`1/S` of a leaf) of
it, on the side of the atom its rank is nearer to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._atoms import atom_masses
from .noise import laplace_mechanism

__all__ = ["REFINE_SHARE", "REFINE_FLOOR", "REFINE_MIN_SIZE", "REFINE_SIZE_SHARE", "SUB_BRANCHING", "SUB_HEIGHT",
           "SIGNIFICANCE", "FALSE_FINDS", "FOLLOW", "TREND", "MAX_CELLS", "refine_share", "significance",
           "trend_threshold", "Refinement", "release_refinement",
           "refined_masses"]

#: Largest share of the budget (after the profile) spent on the refinement (:func:`refine_share`).
REFINE_SHARE = 0.2
#: Smallest share spent on it, and the noisy n times epsilon below which none is (:func:`refine_share`).
REFINE_FLOOR, REFINE_MIN_SIZE = 0.02, 2000.0
#: :math:`n\varepsilon` times the share in between (:func:`refine_share`).
REFINE_SIZE_SHARE = 5000.0
#: Branching factor and height of the sub-tree inside a refined leaf (:math:`16^2 = 256` sub-leaves).
SUB_BRANCHING, SUB_HEIGHT = 16, 2
#: Noise standard deviations a child must differ from its background share by to keep its own count.
SIGNIFICANCE = 4.0
#: Children that noise alone makes significant, in expectation, in a whole refinement (:func:`significance`).
FALSE_FINDS = 0.01
#: Noise standard deviations of a sub-tree node an atom the tree finds in a leaf must hold to be followed down it.
FOLLOW = 2.0
#: Noise standard deviations, times :math:`\sqrt b`, the children's cumulative counts must leave the linear line by
#: (at least; more as more nodes are tested, :func:`trend_threshold`).
TREND = 2.0
#: Largest number of sub-leaves released, as the tree's leaves (the heaviest leaves are refined first).
MAX_CELLS = 2**20


def refine_share(n: float, epsilon: float) -> float:
    r"""The refinement's share of the tree's budget, from the (noisy or public) ``n`` and the budget.

    :math:`\min(` :data:`REFINE_SHARE` :math:`, \max(` :data:`REFINE_FLOOR` :math:`, 5000/(n\varepsilon)))`: the share
    at which a child holding 0.2% of the records clears :data:`SIGNIFICANCE` noise standard deviations of
    a sub-tree node (:math:`4\sqrt2\,h/(s\varepsilon) \approx 11/(s\varepsilon) \approx 0.002\,n`), within those
    limits; 0 below :math:`n\varepsilon =` :data:`REFINE_MIN_SIZE`, where only atoms of many percent could be
    found and the budget does more in the tree.
    """
    size = n * epsilon
    return 0.0 if size < REFINE_MIN_SIZE else min(REFINE_SHARE, max(REFINE_FLOOR, REFINE_SIZE_SHARE / size))


def significance(tested: int) -> float:
    r"""Noise standard deviations a child must stand out by when ``tested`` children are searched blind.

    A child of no mass of its own stands out by more than :math:`t` Laplace scales with probability
    :math:`e^{-t}`; :math:`t = \ln(\text{tested}/` :data:`FALSE_FINDS` :math:`)` keeps the expected number of
    such children in the whole refinement at :data:`FALSE_FINDS` (a union bound over the children), in standard
    deviations :math:`t/\sqrt2`, and never below :data:`SIGNIFICANCE`.  At a fixed 4 sds, the Laplace tail alone
    predicts 0.35% of the children of smooth data read as mass (a dozen of the 3,440 children of a normal sample of
    :math:`10^5`), each a false atom of about 0.2% of the records.
    """
    return max(SIGNIFICANCE, math.log(max(tested, 1) / FALSE_FINDS) / math.sqrt(2.0))


def trend_threshold(tested: int) -> float:
    r"""Noise standard deviations, times :math:`\sqrt b`, by which the cumulative counts of a node's children must
    leave the linear line when ``tested`` nodes are searched blind for a steep density.

    Noise alone makes the centred cumulative sum of :math:`b` children a Brownian bridge of scale
    :math:`\sigma\sqrt b`, beyond :math:`c` with probability at most :math:`2e^{-2c^2}` (Kolmogorov's bound;
    simulated Laplace sums of 16 children exceed it by 1.3-5x at :math:`c = 2..2.5`); :math:`c` keeps the expected
    number of such nodes at :data:`FALSE_FINDS`, never below :data:`TREND`.
    """
    return max(TREND, math.sqrt(math.log(2.0 * max(tested, 1) / FALSE_FINDS) / 2.0))


@dataclass(frozen=True)
class Refinement:
    """The noisy sub-trees of the refined leaves of a :class:`~dpdist.central.tree.TreeHistogram`.

    Attributes
    ----------
    leaves : ndarray of int64
        Indices of the refined leaves, increasing.
    levels : tuple of ndarray
        ``levels[d]`` (``d = 0..height-1``) holds, one row per refined leaf, the ``branching**(d + 1)`` noisy
        counts (int64) of level ``d + 1`` of its sub-tree (the root is the leaf's count in the tree).
    branching, height : int
    noise_scale : float
        Laplace scale of every node (sensitivity over the refinement's epsilon).
    epsilon : float
        The refinement's share of the budget.
    """

    leaves: np.ndarray
    levels: tuple
    branching: int
    height: int
    noise_scale: float
    epsilon: float

    @property
    def noise_sd(self) -> float:
        """Standard deviation of the noise on one node."""
        return math.sqrt(2.0) * self.noise_scale

    def details(self) -> dict:
        """What the refinement released (for a release's ``details``)."""
        return {"epsilon": self.epsilon, "leaves": int(self.leaves.size), "branching": self.branching,
                "height": self.height, "noise_scale": self.noise_scale,
                "sensitivity_l1": self.noise_scale * self.epsilon}


def release_refinement(data, leaf_masses: np.ndarray, epsilon: float, neighbouring: str,
                       leaf_sd: float | None = None) -> Refinement:
    """The noisy sub-trees of the leaves chosen from the released ``leaf_masses`` (see the module docstring).

    ``data`` is the checked input of the tree (its values already clipped into its bounds, its generator),
    ``leaf_masses`` the tree's consistent leaf counts (released), ``epsilon`` the refinement's budget.
    """
    branching, height = SUB_BRANCHING, SUB_HEIGHT
    sensitivity = float(2 * height if neighbouring == "replace" else height)
    scale = sensitivity / epsilon
    cells = branching**height
    heavy = leaf_masses >= SIGNIFICANCE * math.sqrt(2.0) * scale
    if leaf_sd is not None:  # the atoms the tree reads, large enough for the sub-tree to place (:func:`refined_masses`)
        heavy |= atom_masses(leaf_masses, leaf_sd) > FOLLOW * math.sqrt(2.0) * scale
    chosen = np.flatnonzero(heavy)
    heaviest = chosen[np.argsort(-leaf_masses[chosen], kind="stable")[: MAX_CELLS // cells]]
    leaves = np.sort(heaviest)
    low, high = data.bounds
    position = (data.x - low) / (high - low) * leaf_masses.size
    leaf = np.minimum(position.astype(np.int64), leaf_masses.size - 1)
    row = np.full(leaf_masses.size, -1, dtype=np.int64)
    row[leaves] = np.arange(leaves.size)
    inside = row[leaf] >= 0
    sub = np.minimum(((position[inside] - leaf[inside]) * cells).astype(np.int64), cells - 1)
    counts = np.bincount(row[leaf[inside]] * cells + sub, minlength=leaves.size * cells)
    exact = [counts.reshape(leaves.size, cells)]
    for _ in range(height - 1):
        exact.append(exact[-1].reshape(leaves.size, exact[-1].shape[1] // branching, branching).sum(axis=2))
    exact.reverse()  # exact[d]: level d + 1
    sizes = np.cumsum([level.size for level in exact])[:-1]
    noisy = laplace_mechanism(np.concatenate([level.ravel() for level in exact]).astype(np.float64), sensitivity,
                              epsilon, data.rng, integer_valued=True)
    noisy = np.round(noisy).astype(np.int64)
    levels = tuple(part.reshape(level.shape) for part, level in zip(np.split(noisy, sizes), exact))
    return Refinement(leaves, levels, branching, height, scale, epsilon)


def _consistent_rows(refinement: Refinement, roots: np.ndarray) -> list[np.ndarray]:
    """Least-squares consistent sub-trees (Hay et al.'s two passes), each with its leaf's mass as a known root."""
    b, rows = refinement.branching, roots.size
    z = [np.asarray(level, dtype=np.float64) for level in refinement.levels]
    for depth in range(len(z) - 2, -1, -1):  # z[depth] is level depth + 1, of height len(z) - depth
        i = len(z) - depth
        own = (b**i - b ** (i - 1)) / (b**i - 1)
        z[depth] = own * z[depth] + (1.0 - own) * z[depth + 1].reshape(rows, z[depth].shape[1], b).sum(axis=2)
    consistent = [roots.astype(np.float64)[:, None]]
    for level in z:
        residual = consistent[-1] - level.reshape(rows, level.shape[1] // b, b).sum(axis=2)
        consistent.append(level + np.repeat(residual / b, b, axis=1))
    return consistent


def _children(counts: np.ndarray, parents: np.ndarray, thresholds: tuple[float, float],
              atom: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(masses, significant)`` of the children (last axis) of nodes of mass ``parents``: those more than
    ``thresholds[0]`` from the background share keep their counts, the rest is shared evenly, unless its
    cumulative counts leave the linear line by ``thresholds[1]`` (then every child keeps its count); in a node
    known to hold an atom (``atom``) the largest child is significant too (see the module docstring)."""
    threshold, trend_limit = thresholds
    b = counts.shape[-1]
    parents = parents[..., None]
    largest = (np.arange(b) == counts.argmax(axis=-1)[..., None]) & atom[..., None]
    significant = np.zeros(counts.shape, dtype=bool)
    background = parents / b
    for _ in range(3):  # the background share, re-estimated without the significant children
        significant = (np.abs(counts - background) > threshold) | largest
        others = b - significant.sum(axis=-1, keepdims=True)
        found = np.where(significant, counts, 0.0).sum(axis=-1, keepdims=True)
        background = np.divide(parents - found, others, out=np.zeros(parents.shape), where=others > 0)
    rest = np.where(significant, background, counts)  # the children but the significant ones: linear, or a trend?
    trend = np.abs(np.cumsum(rest - rest.mean(axis=-1, keepdims=True), axis=-1)).max(axis=-1, keepdims=True)
    significant |= trend > trend_limit
    # the children between two significant ones share their own total evenly: the mass each side of a found
    # atom stays on that side
    run = np.cumsum(significant, axis=-1)  # the significant children seen so far: one run between each two
    slot = (np.arange(run.size // b).reshape(run.shape[:-1]) * (b + 1))[..., None] + run  # (node, run), flat
    slots = slot.size // b * (b + 1)
    run_total = np.maximum(np.bincount(slot.ravel(), np.where(significant, 0.0, counts).ravel(), slots), 0.0)
    run_size = np.bincount(slot.ravel(), (~significant).ravel().astype(np.float64), slots)
    share = np.divide(run_total, run_size, out=np.zeros(run_total.shape), where=run_size > 0)
    masses = np.where(significant, np.clip(counts, 0.0, parents), share[slot])
    total = masses.sum(axis=-1, keepdims=True)
    masses = np.where(total > 0, masses * np.divide(parents, total, out=np.zeros(parents.shape), where=total > 0),
                      parents / b)
    return masses, significant


def refined_masses(refinement: Refinement, leaf_masses: np.ndarray,
                   atom_leaves: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(masses, used)``: the sub-leaf masses of every refined leaf (one row each, summing to its mass in
    ``leaf_masses``) and whether the reading differs from the linear one (post-processing).

    ``atom_leaves`` (one flag per leaf): the leaves the tree itself reads as holding an atom
    (:func:`dpdist.central._atoms.atom_masses`, from its own counts); in those the atom is followed down the
    largest child of each level, whatever its significance (the tree found it; the sub-tree places it).
    """
    roots = np.asarray(leaf_masses, dtype=np.float64)[refinement.leaves]
    b, rows = refinement.branching, roots.size
    consistent = _consistent_rows(refinement, roots)
    masses, active = roots[:, None], np.ones((rows, 1), dtype=bool)
    atom = (np.zeros(rows, dtype=bool) if atom_leaves is None else np.asarray(atom_leaves)[refinement.leaves])[:, None]
    sigma = refinement.noise_sd  # the first level's nodes and children are all searched
    thresholds = (significance(rows * b) * sigma, trend_threshold(rows) * sigma * math.sqrt(b))
    for level in consistent[1:]:
        children, significant = _children(level.reshape(rows, -1, b), masses, thresholds, atom & active)
        linear = np.repeat(masses / b, b, axis=1)
        masses = np.where(np.repeat(active, b, axis=1), children.reshape(rows, level.shape[1]), linear)
        followed = (children.reshape(rows, -1, b).argmax(axis=2)[..., None] == np.arange(b)).reshape(rows, -1)
        atom = np.repeat(atom, b, axis=1) & followed
        active = np.repeat(active, b, axis=1) & significant.reshape(rows, level.shape[1])
    used = np.abs(masses - roots[:, None] / masses.shape[1]).max(axis=1, initial=0.0) > 1e-9 * (roots + 1.0)
    return masses, used
