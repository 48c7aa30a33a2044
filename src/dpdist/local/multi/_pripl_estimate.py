r"""The release of PriPL-Trees with adaptive grids: 1-D histograms, 2-D response matrices, range answers.

Answers follow sec. 4.1 step 4 of Wang, Ye, Hu, Meng (PVLDB 17(11), 2024): a 1-D range from its
attribute's PL histogram (eq. 1, bin by bin), a 2-D range from the pair's response matrix, a range over
:math:`\lambda > 2` attributes from the :math:`\lambda` 1-D and :math:`\binom{\lambda}{2}` 2-D answers
(maximum entropy on :math:`\{in, out\}^\lambda`, as HDG does).  A bin cut by a range counts in proportion.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._guarantee import PrivacyGuarantee
from ...errors import InvalidParameterError
from ...estimates import Distribution, Interval
from ...estimates._intervals import check_level
from ._grids import coverage, range_from_answers
from ._schema import Attribute

__all__ = ["PriPLRangeEstimate"]

_NO_INTERVAL = ("PriPL-Tree with adaptive grids: no interval (the structure adapts to the data, and a leaf or cell "
                "cut by the range is read under the PL / maximum-entropy assumption)")


@dataclass(frozen=True)
class PriPLRangeEstimate:
    """PriPL-Tree histograms of every attribute and response matrices of every pair (see the module docstring).

    Attributes
    ----------
    attributes : tuple of Attribute
        The numerical attributes, in the schema's order.
    histograms : tuple of ndarray
        Each attribute's frequency of each of ``resolution`` equal bins of its bounds.
    matrices : dict
        ``(i, j) -> resolution x resolution`` response matrix of attributes ``i < j``.
    epsilon : float
        Every user's budget: one report at ``epsilon`` (``guarantee``).
    n : int
        Users whose reports the release uses.
    details : dict
        The trees' leaves and the grids' cells (``"leaves"``, ``"grids"``), users per phase.
    """

    attributes: tuple[Attribute, ...]
    histograms: tuple[np.ndarray, ...] = field(repr=False)
    matrices: dict[tuple[int, int], np.ndarray] = field(repr=False)
    epsilon: float
    n: int
    guarantee: PrivacyGuarantee
    method: str = "pripl"
    details: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def attribute_names(self) -> list[str]:
        return [attribute.name for attribute in self.attributes]

    @property
    def resolution(self) -> int:
        return int(self.histograms[0].size)

    def _index(self, name: Any) -> int:
        names = self.attribute_names
        if name not in names:
            raise InvalidParameterError(f"The attribute {name!r} is not one of this estimate's attributes {names}.")
        return names.index(name)

    def _unit(self, index: int, bounds: Any) -> tuple[float, float]:
        attribute = self.attributes[index]
        try:
            low, high = (float(v) for v in bounds)
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"The range of attribute {attribute.name!r} must be a pair (low, high) of numbers. Got {bounds!r}."
            ) from None
        if not (np.isfinite(low) and np.isfinite(high) and low <= high):
            raise InvalidParameterError(
                f"The range of attribute {attribute.name!r} must be finite with low <= high. Got {bounds!r}.")
        lo, hi = attribute.interval
        return float(np.clip((low - lo) / (hi - lo), 0, 1)), float(np.clip((high - lo) / (hi - lo), 0, 1))

    def marginal(self, name: str) -> Distribution:
        """Attribute ``name``'s PL histogram as a :class:`~dpdist.estimates.Distribution` on its bounds."""
        index = self._index(name)
        return Distribution.uniform_bins(self.histograms[index], self.attributes[index].interval, method=self.method,
                                         epsilon=self.epsilon, n=self.n, guarantee=self.guarantee)

    def response_matrix(self, first: str, second: str) -> np.ndarray:
        """The estimated joint frequencies of the bins of ``first`` (rows) and ``second`` (columns)."""
        i, j = self._index(first), self._index(second)
        if i == j:
            raise InvalidParameterError(f"response_matrix needs two different attributes. Got {first!r} twice.")
        if (min(i, j), max(i, j)) not in self.matrices:
            raise InvalidParameterError(f"This estimate has no grid of the pair ({first!r}, {second!r}).")
        matrix = self.matrices[(min(i, j), max(i, j))]
        return matrix if i < j else matrix.T

    def range(self, ranges: dict[str, Any], level: float = 0.95) -> Interval:
        """The share of records with every attribute ``name`` of ``ranges`` inside ``ranges[name] = (low, high)``.

        The interval is unbounded: the structure has no analytic one (module docstring).
        """
        check_level(level, "PriPLRangeEstimate.range")
        if not isinstance(ranges, dict) or not ranges:
            raise InvalidParameterError(
                f"The 'ranges' argument of PriPLRangeEstimate.range must be a non-empty dict attribute -> (low, high). "
                f"Got {ranges!r:.100}.")
        indices = [self._index(name) for name in ranges]
        covers = [coverage(*self._unit(i, bounds), self.resolution) for i, bounds in zip(indices, ranges.values())]
        one_way = [float(np.clip(c @ self.histograms[i], 0, 1)) for i, c in zip(indices, covers)]
        if len(indices) == 1:
            value = one_way[0]
        else:
            two_way = {}
            for (a, i), (b, j) in itertools.combinations(enumerate(indices), 2):
                two_way[(a, b)] = float(covers[a] @ self.response_matrix(self.attribute_names[i],
                                                                         self.attribute_names[j]) @ covers[b])
            value = two_way[(0, 1)] if len(indices) == 2 else range_from_answers(one_way, two_way)
        return Interval("probability", value, -np.inf, np.inf, level, _NO_INTERVAL)

    def ranges(self, first: str, second: str, boxes: np.ndarray) -> np.ndarray:
        """Many 2-D ranges at once: ``boxes[q] = (low1, high1, low2, high2)`` in the attributes' units."""
        boxes = np.asarray(boxes, dtype=np.float64)
        if boxes.ndim != 2 or boxes.shape[1] != 4 or not np.all(np.isfinite(boxes)):
            raise InvalidParameterError(f"The 'boxes' argument of PriPLRangeEstimate.ranges must be a finite (q, 4) "
                                        f"array of (low1, high1, low2, high2). Got shape {boxes.shape}.")
        out = []
        matrix = self.response_matrix(first, second)
        for axis, name in enumerate((first, second)):
            lo, hi = self.attributes[self._index(name)].interval
            low = np.clip((boxes[:, 2 * axis] - lo) / (hi - lo), 0, 1)
            high = np.clip((boxes[:, 2 * axis + 1] - lo) / (hi - lo), 0, 1)
            edges = np.linspace(0, 1, self.resolution + 1)
            out.append(np.clip(np.minimum(edges[1:], high[:, None]) - np.maximum(edges[:-1], low[:, None]), 0, None)
                       * self.resolution)
        return np.einsum("qi,ij,qj->q", out[0], matrix, out[1])
