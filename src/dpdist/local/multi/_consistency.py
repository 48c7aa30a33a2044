r"""Consistency of overlapping marginals (Qardaji, Yang, Li, PriView, SIGMOD 2014, sec. 4.3).

Estimated marginals of attribute sets :math:`V_1, \dots, V_m` disagree on what they
share: the projections of :math:`V_i` and :math:`V_j` onto :math:`A = V_i \cap V_j`
differ by noise.  PriView's consistency step, which CALM (Zhang, Wang, Li, He, Chen,
CCS 2018, sec. 4.3) and HDG (Yang et al., PVLDB 2020, sec. 5.2) use, visits every
shared set :math:`A` in order of size (the empty set first: every marginal sums to
the known total 1) and

1. takes the weighted average :math:`T_A = \sum_i \alpha_i \Pi_A \hat V_i` of the
   projections of every marginal containing :math:`A`, with
   :math:`\alpha_i \propto 1/(c_i \sigma_i^2)`, the inverse variance of a projected
   cell (:math:`c_i` cells of :math:`V_i` per cell of :math:`A`, each of variance
   :math:`\sigma_i^2`): the minimum-variance unbiased combination;
2. spreads each marginal's difference :math:`T_A - \Pi_A \hat V_i` evenly over the
   :math:`c_i` cells projecting to each cell of :math:`A`.

Visiting sets by size keeps the smaller ones consistent (a step on :math:`A` changes
no projection onto a subset of :math:`A`, already equal everywhere), so one pass
makes every marginal agree on every shared set.

The map is affine: :meth:`Consistency.apply` is it, :meth:`Consistency.adjoint` the
transpose of its linear part, so the variance of any linear query of the consistent
marginals is :math:`u^\top \Sigma u` with :math:`u = C^\top w` and :math:`\Sigma` the
covariance of the unbiased marginals (block diagonal: the groups of users are
disjoint).  Both take a trailing batch axis (many queries at once).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ... import postprocess as _postprocess

__all__ = ["Consistency", "nonnegative"]


@dataclass(frozen=True)
class _Step:
    subset: tuple[int, ...]  # attribute indices, sorted
    members: tuple[int, ...]  # marginals containing it
    weights: np.ndarray  # alpha of each member (sum 1)


class Consistency:
    """The consistency map of marginals over ``sets`` (sorted attribute tuples) with ``sizes`` per attribute.

    ``cell_variance[i]``: the variance scale :math:`\\sigma_i^2` of one cell of marginal ``i``.
    """

    def __init__(self, sets: Sequence[tuple[int, ...]], sizes: Sequence[int], cell_variance: Sequence[float]):
        self.sets = [tuple(sorted(attributes)) for attributes in sets]
        self.sizes = list(sizes)
        self.shapes = [tuple(self.sizes[a] for a in attributes) for attributes in self.sets]
        shared: set[tuple[int, ...]] = set()
        for first, second in itertools.combinations(self.sets, 2):
            common = tuple(sorted(set(first) & set(second)))
            for size in range(1, len(common) + 1):
                shared.update(itertools.combinations(common, size))
        self.steps = []
        for subset in sorted(shared, key=lambda s: (len(s), s)):
            members = tuple(i for i, attributes in enumerate(self.sets) if set(subset) <= set(attributes))
            inverse = np.array([1.0 / (self._cells_per(i, subset) * cell_variance[i]) for i in members])
            self.steps.append(_Step(subset, members, inverse / inverse.sum()))

    def _cells_per(self, index: int, subset: tuple[int, ...]) -> int:
        return int(np.prod(self.shapes[index])) // int(np.prod([self.sizes[a] for a in subset], dtype=np.int64))

    def _axes(self, index: int, subset: tuple[int, ...]) -> tuple[int, ...]:
        """The axes of marginal ``index`` to sum over to project onto ``subset``."""
        return tuple(position for position, a in enumerate(self.sets[index]) if a not in subset)

    def project(self, index: int, table: np.ndarray, subset: tuple[int, ...]) -> np.ndarray:
        """Marginal ``index`` (shape ``(*shape, batch...)``) summed onto ``subset``."""
        return table.sum(axis=self._axes(index, subset)) if self._axes(index, subset) else table

    def _spread(self, index: int, values: np.ndarray, subset: tuple[int, ...]) -> np.ndarray:
        """``values`` over ``subset`` spread evenly over marginal ``index``'s cells (the adjoint of :meth:`project` / c)."""
        axes = self._axes(index, subset)
        expanded = np.expand_dims(values, axis=axes) if axes else values
        return np.broadcast_to(expanded, self.shapes[index] + values.shape[len(subset):]) / self._cells_per(index, subset)

    # ------------------------------------------------------------------ the map and its transpose
    def apply(self, tables: Sequence[np.ndarray], total: float | None = 1.0) -> list[np.ndarray]:
        """The consistent marginals (each of shape ``(*shape, batch...)``); ``total``: the known sum (``None``: the
        linear part only, as the adjoint's transpose)."""
        tables = [np.array(table, dtype=np.float64) for table in tables]
        for index, table in enumerate(tables):
            cells = int(np.prod(self.shapes[index]))
            axes = tuple(range(len(self.shapes[index])))
            gap = (0.0 if total is None else total) - table.sum(axis=axes)
            tables[index] = table + gap / cells
        for step in self.steps:
            average = sum(w * self.project(i, tables[i], step.subset) for w, i in zip(step.weights, step.members))
            for i in step.members:
                tables[i] = tables[i] + self._spread(i, average - self.project(i, tables[i], step.subset), step.subset)
        return tables

    def adjoint(self, weights: Sequence[np.ndarray]) -> list[np.ndarray]:
        """:math:`C^\\top w`: the transpose of :meth:`apply`'s linear part, applied to one query vector per marginal."""
        weights = [np.array(w, dtype=np.float64) for w in weights]
        for step in reversed(self.steps):
            pulled = sum(self.project(i, weights[i], step.subset) / self._cells_per(i, step.subset) for i in step.members)
            for w, i in zip(step.weights, step.members):
                own = self.project(i, weights[i], step.subset) / self._cells_per(i, step.subset)
                weights[i] = weights[i] + self._lift(i, w * pulled - own, step.subset)
        for index, w in enumerate(weights):
            axes = tuple(range(len(self.shapes[index])))
            cells = int(np.prod(self.shapes[index]))
            weights[index] = w - w.sum(axis=axes) / cells
        return weights

    def _lift(self, index: int, values: np.ndarray, subset: tuple[int, ...]) -> np.ndarray:
        """``values`` over ``subset`` repeated on every cell of marginal ``index`` projecting to it (:math:`\\Pi^\\top`)."""
        axes = self._axes(index, subset)
        expanded = np.expand_dims(values, axis=axes) if axes else values
        return np.broadcast_to(expanded, self.shapes[index] + values.shape[len(subset):])

    def violation(self, tables: Sequence[np.ndarray]) -> float:
        """The largest disagreement of two marginals on a shared set (0 when consistent)."""
        worst = 0.0
        for step in self.steps:
            projections = [self.project(i, tables[i], step.subset) for i in step.members]
            worst = max(worst, max(float(np.max(np.abs(p - projections[0]))) for p in projections))
        return worst


def nonnegative(consistency: Consistency, tables, *, rounds: int = 100, tolerance: float = 1e-9):
    """Norm-Sub of every table and consistency, in turn, until consistent within ``tolerance``; ends with Norm-Sub.

    The non-negativity step of CALM (sec. 4.3) and HDG (sec. 5.2; the authors' code runs at most 100 rounds and
    ends with Norm-Sub).  Returns the tables and the rounds used.
    """
    current = list(tables)
    used = 0
    for used in range(1, rounds + 1):
        current = [_postprocess.apply("norm-sub", table.ravel()).reshape(table.shape) for table in current]
        if consistency.violation(current) <= tolerance:
            break
        current = consistency.apply(current)
    return current, used
