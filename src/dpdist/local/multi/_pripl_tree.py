r"""The PriPL-Tree over a PL fit: structure and user allocation (Algorithm 2), refinement (sec. 3.5, Algorithm 4).

Wang, Ye, Hu, Meng, "PriPL-Tree: Accurate Range Query for Arbitrary Distribution under Local
Differential Privacy", PVLDB 17(11), 2024 (full version arXiv:2407.13532).

*Structure* (sec. 3.4.2): the :math:`K` segments of the PL fit are the leaves of a balanced binary
tree; every non-leaf, non-root node is then visited in post-order and removed (its children linked to
its parent) when that lowers the expected noise of a uniformly random range query,
:math:`Err \propto \sum_k w_k / \alpha_k` (eq. 7) with :math:`w_k` the probability that a query holds
node :math:`k` but not its parent (eq. 8) and :math:`\alpha_k` the share of users the node gets.

*Allocation* (sec. 3.4.1, Algorithm 2 lines 5-12): walking down from the root, node :math:`k` keeps
:math:`1/h_k` of the users it inherits (:math:`h_k` the height of its subtree, 1 for a leaf) and passes
the rest to each of its children.  So every user sits in one node per root-to-leaf path, and the nodes
of one user are disjoint intervals covering the domain: the users fall into *bands* (contiguous shares
of the tree's users) each of which reports the interval of its own partition that holds the value
through one frequency oracle at the full budget (lines 13-16; the paper uses OUE).

*Refinement* (sec. 3.5): weighted averaging bottom-up (a leaf combines its oracle frequency with the
SW histogram's mass over it, a non-leaf node its oracle frequency with the sum of its children's, each
by inverse variance, the SW variance approximated as in Algorithm 4 line 4), then frequency consistency
top-down (eq. 9: the children are shifted equally to sum to their parent, negatives set to zero and
the shift repeated), then slope refinement (eq. 10: each leaf's slope clipped so the PL function is
non-negative at both ends of its interval).  The variance of every refined frequency follows
Algorithm 4 (the weight vectors of the averaging and consistency steps).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._pl_fit import PLFit

__all__ = ["TreeShape", "build_tree", "RefinedTree", "refine_tree", "leaf_density", "norm_sub"]


@dataclass(frozen=True)
class TreeShape:
    """A PriPL-Tree without its frequencies: its non-root nodes in level order.

    ``lefts``/``rights`` are each node's bins (inclusive), ``parents`` its parent's index (``-1``: the
    root), ``leaves`` the leaf indices from left to right, ``starts``/``ends`` each node's share of the
    tree's users (Algorithm 2), ``bands`` the band edges on [0, 1] and ``band_nodes`` the nodes of each
    band from left to right (a partition of the bins).
    """

    size: int
    lefts: np.ndarray
    rights: np.ndarray
    parents: np.ndarray
    leaves: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    bands: np.ndarray
    band_nodes: tuple[np.ndarray, ...]

    @property
    def shares(self) -> np.ndarray:
        r""":math:`\alpha_k`: the share of the tree's users that reports on node ``k``."""
        return self.ends - self.starts

    def children(self, node: int) -> np.ndarray:
        return np.flatnonzero(self.parents == node)

    def band_cuts(self, band: int) -> np.ndarray:
        """The inner edges (bins) of band ``band``'s partition: a value in bin ``b`` reports item
        ``searchsorted(cuts, b, side="right")``."""
        return self.lefts[self.band_nodes[band]][1:]


def _allocation(parents: dict[int, int], children: dict[int, list[int]]) -> tuple[dict[int, float], dict[int, float]]:
    """Each node's ``(start, end)`` share of users (Algorithm 2 lines 5-12), by exact fractions."""
    height: dict[int, int] = {}

    def measure(node: int) -> int:
        height[node] = 1 + max((measure(c) for c in children.get(node, [])), default=0)
        return height[node]

    measure(0)
    start, end = {}, {}
    queue = [(c, 0.0) for c in children[0]]
    while queue:
        node, inherited = queue.pop(0)
        start[node] = inherited
        end[node] = inherited + (1.0 - inherited) / height[node]
        queue.extend((c, end[node]) for c in children.get(node, []))
    return start, end


def _expected_error(parents: dict[int, int], children: dict[int, list[int]], lefts: dict[int, int],
                    rights: dict[int, int], size: int) -> float:
    """Eq. 7 with eq. 8's weights (1-based bins; the root covers every bin)."""
    start, end = _allocation(parents, children)
    total = 0.0
    for node, parent in parents.items():
        if node == 0:
            continue
        held = (lefts[node] + 1) * (size - rights[node])
        held_parent = (lefts[parent] + 1) * (size - rights[parent])
        total += (held - held_parent) / ((size + 1) * size / 2) / (end[node] - start[node])
    return total


def build_tree(fit: PLFit, size: int) -> TreeShape:
    """Algorithm 2 lines 1-12: the balanced binary tree over the fit's segments, its nodes reduced by eq. 7."""
    leaf_lefts, leaf_rights = fit.lefts, fit.rights
    parents: dict[int, int] = {0: -1}
    lefts, rights = {0: 0}, {0: size - 1}
    next_id = [1]

    def grow(a: int, b: int, parent: int) -> None:  # leaves a .. b-1 under `parent`
        for lo, hi in ((a, (a + b) // 2), ((a + b) // 2, b)) if b - a > 1 else ():
            node = next_id[0]
            next_id[0] += 1
            parents[node], lefts[node], rights[node] = parent, int(leaf_lefts[lo]), int(leaf_rights[hi - 1])
            if hi - lo > 1:
                grow(lo, hi, node)

    grow(0, len(leaf_lefts), 0)
    children: dict[int, list[int]] = {}
    for node, parent in parents.items():
        if parent >= 0:
            children.setdefault(parent, []).append(node)
    order: list[int] = []

    def postorder(node: int) -> None:
        for c in children.get(node, []):
            postorder(c)
        order.append(node)

    postorder(0)
    for node in order:
        if node == 0 or node not in children:
            continue
        before = _expected_error(parents, children, lefts, rights, size)
        reduced_parents = {k: (parents[node] if p == node else p) for k, p in parents.items() if k != node}
        reduced_children = {k: [c for c in v if c != node] for k, v in children.items() if k != node}
        reduced_children[parents[node]] = sorted(reduced_children[parents[node]] + children[node],
                                                 key=lambda k: lefts[k])
        if _expected_error(reduced_parents, reduced_children, lefts, rights, size) < before:
            parents, children = reduced_parents, reduced_children
    return _shape(parents, children, lefts, rights, size)


def _shape(parents, children, lefts, rights, size) -> TreeShape:
    start, end = _allocation(parents, children)
    level: list[int] = []
    queue = list(children[0])
    while queue:
        node = queue.pop(0)
        level.append(node)
        queue.extend(sorted(children.get(node, []), key=lambda k: lefts[k]))
    index = {node: i for i, node in enumerate(level)}
    node_lefts = np.array([lefts[k] for k in level], dtype=np.int64)
    node_rights = np.array([rights[k] for k in level], dtype=np.int64)
    node_parents = np.array([index.get(parents[k], -1) for k in level], dtype=np.int64)
    starts = np.array([start[k] for k in level])
    ends = np.array([end[k] for k in level])
    is_leaf = np.array([k not in children for k in level])
    leaves = np.flatnonzero(is_leaf)
    leaves = leaves[np.argsort(node_lefts[leaves])]
    edges = np.unique(np.round(np.concatenate([starts, ends]), 12))
    band_nodes = []
    for a, b in zip(edges[:-1], edges[1:]):
        middle = (a + b) / 2
        members = np.flatnonzero((starts <= middle) & (ends > middle))
        band_nodes.append(members[np.argsort(node_lefts[members])])
    return TreeShape(size, node_lefts, node_rights, node_parents, leaves, starts, ends, edges, tuple(band_nodes))


def norm_sub(values: np.ndarray, total: float) -> np.ndarray:
    """The closest non-negative vector summing to ``total`` by equal shifts (the KKT solution of eq. 9)."""
    out = np.asarray(values, dtype=np.float64).copy()
    if total <= 0 or out.size == 0:
        return np.zeros_like(out)
    positive = np.ones(out.size, dtype=bool)
    out += (total - out.sum()) / out.size
    while (out < 0).any():
        positive &= out > 0
        out[~positive] = 0.0
        out[positive] += (total - out[positive].sum()) / positive.sum()
    return out


@dataclass(frozen=True)
class RefinedTree:
    """A PriPL-Tree with its refined frequencies (eq. 9) and variances (Algorithm 4) and its leaves' slopes (eq. 10)."""

    shape: TreeShape
    frequencies: np.ndarray
    variances: np.ndarray
    slopes: np.ndarray  # one per leaf, left to right (per bin)

    @property
    def leaf_frequencies(self) -> np.ndarray:
        return self.frequencies[self.shape.leaves]

    @property
    def leaf_variances(self) -> np.ndarray:
        return self.variances[self.shape.leaves]

    def density(self) -> np.ndarray:
        """The frequency of every bin under the PL function of the leaves (eq. 1 for one-bin ranges)."""
        return leaf_density(self.shape.lefts[self.shape.leaves], self.shape.rights[self.shape.leaves],
                            self.leaf_frequencies, self.slopes, self.shape.size)


def clip_slopes(slopes: np.ndarray, frequencies: np.ndarray, widths: np.ndarray) -> np.ndarray:
    r"""Eq. 10: each slope clipped to :math:`[-C_k, C_k]`, :math:`C_k = 2 \tilde f_k / (|I_k| (|I_k| - 1))`."""
    bound = np.where(widths > 1, 2.0 * np.maximum(frequencies, 0.0) / (widths * np.maximum(widths - 1, 1)), 0.0)
    return np.clip(slopes, -bound, bound)


def leaf_density(lefts: np.ndarray, rights: np.ndarray, frequencies: np.ndarray, slopes: np.ndarray,
                 size: int) -> np.ndarray:
    """Each bin's frequency: ``f_k / |I_k| + slope_k (v - centre_k)`` over the leaf ``k`` holding bin ``v``."""
    widths = rights - lefts + 1
    leaf_of = np.repeat(np.arange(lefts.size), widths)
    v = np.arange(size, dtype=np.float64)
    centre = (lefts + rights) / 2.0
    out = frequencies[leaf_of] / widths[leaf_of] + slopes[leaf_of] * (v - centre[leaf_of])
    return np.clip(out, 0.0, None)


def refine_tree(shape: TreeShape, oracle: np.ndarray, oracle_variance: np.ndarray, histogram: np.ndarray,
                fit: PLFit) -> RefinedTree:
    """Sec. 3.5 and Algorithm 4: refined frequencies, their variances and the leaves' slopes.

    ``oracle``/``oracle_variance`` are every node's frequency from the bands (:math:`\\bar f_k`) and its
    variance; ``histogram`` the SW (EMS) histogram of phase 1 (:math:`\\hat f_k` is its mass over a leaf).
    """
    count = shape.lefts.size
    cumulative = np.concatenate([[0.0], np.cumsum(histogram)])
    basic = oracle_variance.astype(np.float64).copy()           # the vector V of Algorithm 4
    weights = np.eye(count)                                      # W_k, row k
    value = oracle.astype(np.float64).copy()
    variance = oracle_variance.astype(np.float64).copy()
    # weighted averaging, bottom-up (post-order: reversed level order visits children first)
    for node in range(count - 1, -1, -1):
        children = shape.children(node)
        if children.size == 0:
            sw = cumulative[shape.rights[node] + 1] - cumulative[shape.lefts[node]]
            gap = (sw - oracle[node]) ** 2
            sw_variance = gap - oracle_variance[node] if gap > oracle_variance[node] else gap   # Algorithm 4 line 4
            sw_variance = max(sw_variance, 1e-18)
            theta = oracle_variance[node] / (sw_variance + oracle_variance[node])
            value[node] = theta * sw + (1 - theta) * oracle[node]
            variance[node] = sw_variance * oracle_variance[node] / (sw_variance + oracle_variance[node])
            basic[node] = variance[node]                                                      # line 5
        else:
            summed, summed_variance = value[children].sum(), variance[children].sum()
            theta = summed_variance / (summed_variance + variance[node])                      # line 10
            value[node] = theta * oracle[node] + (1 - theta) * summed
            weights[node] = theta * weights[node] + (1 - theta) * weights[children].sum(axis=0)   # line 11
            variance[node] = variance[node] * summed_variance / (variance[node] + summed_variance)
    # frequency consistency, top-down (eq. 9), and the weights of line 15
    for parent in [-1, *range(count)]:
        children = np.flatnonzero(shape.parents == parent)
        if children.size == 0:
            continue
        parent_value = 1.0 if parent < 0 else value[parent]
        parent_weights = np.zeros(count) if parent < 0 else weights[parent]
        updated = norm_sub(value[children], parent_value)
        positive = children[updated > 0]
        if positive.size:
            old = weights[positive].copy()
            weights[positive] = old - old.sum(axis=0) / positive.size + parent_weights / positive.size
        value[children] = updated
    variances = (weights**2) @ basic                                                          # line 17
    leaves = shape.leaves
    widths = shape.rights[leaves] - shape.lefts[leaves] + 1
    slopes = clip_slopes(fit.slopes, value[leaves], widths)
    return RefinedTree(shape, value, variances, slopes)
