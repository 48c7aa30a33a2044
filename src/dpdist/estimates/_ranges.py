r"""Range answers over numerical attributes: a histogram of every attribute and a response matrix of every pair.

A :class:`RangeEstimate` holds, for attributes with bounds, each one's frequencies of ``resolution``
equal bins (a 1-D histogram) and each pair's ``resolution x resolution`` joint frequencies (its
*response matrix*, rows and columns matching the two histograms bin by bin), and answers the share of
records inside an axis-aligned range from them (:mod:`._boxes`): a 1-D range from the attribute's
histogram, a 2-D range from the pair's matrix, a range over :math:`\lambda > 2` attributes from the
:math:`\lambda` 1-D and :math:`\binom{\lambda}{2}` 2-D answers (maximum entropy on :math:`\{in, out\}^\lambda`).
A bin cut by a range counts in proportion.  PriPL-Tree (Wang, Ye, Hu, Meng, PVLDB 17(11), 2024, sec. 4.1
step 4; :mod:`dpdist.local.multi.pripl`) releases one.

**No interval.**  Its answers carry infinite limits, and it lists no intervals.  PriPL-Tree's
histograms and matrices come out of a structure that adapts to the data: the trees' leaves and the
grids' cells are chosen from earlier rounds' reports, and the release passes through a least-squares
piecewise-linear fit with clipped slopes, Norm-Sub, the consistency updates of sec. 4.3 and the
maximum-entropy fit of each response matrix.  None of these steps is linear in the reports, so the
answer has no analytic variance, and the part of a range inside a leaf or cell it cuts is read under
the PL / maximum-entropy assumption, whose error no noise variance bounds.  An honest bound would have to
bracket that part the way HDG's ranges do (``dpdist.local.multi.hdg``: from the cells inside the range
to the cells meeting it, on the linear estimates before post-processing); dpdist does not compute one, and a
bootstrap of the whole plan is left to the caller.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

import numpy as np

from .._guarantee import PrivacyGuarantee
from .._validation import Described, Dict, Differs, Options, RealArray, Span, check_param, validate_params
from ..errors import InvalidParameterError
from ._boxes import coverage, range_from_answers
from ._distribution import Distribution
from ._drawing import draw_heatmap, panel_grid
from ._intervals import Interval, check_level, json_value
from .._documents import refused
from ._presented import Presented
from ._reading import Header

__all__ = ["RangeEstimate", "NO_RANGE_INTERVAL"]

#: Why a :class:`RangeEstimate`'s answers have no interval (the module docstring says it at length).
NO_RANGE_INTERVAL = ("an adaptive structure (leaves and cells chosen from earlier reports; PL fit, Norm-Sub and "
                     "maximum-entropy steps): no analytic variance, and a leaf or cell cut by the range is read under "
                     "the PL / maximum-entropy assumption")


@dataclass(frozen=True, repr=False)
class RangeEstimate(Presented):
    """Histograms of numerical attributes and response matrices of their pairs (see the module docstring).

    Attributes
    ----------
    names : tuple of str
        The attributes, in the release's order.
    bounds : tuple of (float, float)
        Each attribute's bounds.
    histograms : tuple of ndarray
        Each attribute's frequency of each of ``resolution`` equal bins of its bounds.
    matrices : dict
        ``(i, j) -> resolution x resolution`` response matrix of attributes ``i < j`` (indices into ``names``).
    epsilon : float
        Every user's budget.
    n : int
        Users whose reports the release uses.
    guarantee : PrivacyGuarantee
    method : str
        What produced it (``"pripl"``).
    details : dict
        The producer's extras (PriPL-Tree: the trees' leaves and the grids' cells, ``"leaves"``, ``"grids"``,
        reports per group); not in the JSON.
    """

    kind: ClassVar[str] = "ranges"

    names: tuple[str, ...]
    bounds: tuple[tuple[float, float], ...]
    histograms: tuple[np.ndarray, ...] = field(repr=False)
    matrices: dict[tuple[int, int], np.ndarray] = field(repr=False)
    epsilon: float
    n: int
    guarantee: PrivacyGuarantee | None
    method: str = "pripl"
    details: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        sizes = {np.shape(h) for h in self.histograms}
        if not self.names or len(self.names) != len(self.bounds) or len(self.names) != len(self.histograms) \
                or len(sizes) != 1 or len(next(iter(sizes))) != 1:
            raise InvalidParameterError(
                f"A RangeEstimate needs one bounds pair and one 1-D histogram of equal size per attribute. Got "
                f"{len(self.names)} names, {len(self.bounds)} bounds and histograms of shapes {sorted(sizes)}.")
        resolution = next(iter(sizes))[0]
        for (i, j), matrix in self.matrices.items():
            if not (0 <= i < j < len(self.names)) or np.shape(matrix) != (resolution, resolution):
                raise InvalidParameterError(
                    f"A RangeEstimate's response matrix ({i}, {j}) must be of attributes i < j < {len(self.names)}, "
                    f"{resolution} x {resolution}. Got shape {np.shape(matrix)}.")

    def __repr__(self) -> str:
        return (f"RangeEstimate({self.method}, n={self.n}, epsilon={self.epsilon:g}, attributes={list(self.names)}, "
                f"resolution={self.resolution})")

    @property
    def resolution(self) -> int:
        return int(self.histograms[0].size)

    # ------------------------------------------------------------------ queries
    def _index(self, name: Any, argument: str = "name", owner: str = "RangeEstimate") -> int:
        """The index of attribute ``name`` (``argument`` of ``owner``), one of this estimate's attributes."""
        return self.names.index(check_param(owner, argument, name, Described(
            Options(tuple(self.names)), f"one of this estimate's attributes {list(self.names)}")))

    def _unit(self, index: int, bounds: Any) -> tuple[float, float]:
        name = self.names[index]
        low, high = check_param("RangeEstimate.range", f"ranges[{name!r}]", bounds, Span())
        lo, hi = self.bounds[index]
        return float(np.clip((low - lo) / (hi - lo), 0, 1)), float(np.clip((high - lo) / (hi - lo), 0, 1))

    def marginal(self, name: str) -> Distribution:
        """Attribute ``name``'s histogram as a :class:`~dpdist.estimates.Distribution` on its bounds."""
        index = self._index(name, "name", "RangeEstimate.marginal")
        return Distribution.uniform_bins(self.histograms[index], self.bounds[index], method=self.method,
                                         epsilon=self.epsilon, n=self.n, guarantee=self.guarantee)

    @validate_params({}, relations=(Differs("second", "first", why="a pair of two attributes",
                                            counterexample={"first": "x", "second": "x"}),))
    def response_matrix(self, first: str, second: str) -> np.ndarray:
        """The estimated joint frequencies of the bins of ``first`` (rows) and ``second`` (columns)."""
        i, j = self._index(first, "first", "RangeEstimate.response_matrix"), self._index(second, "second",
                                                                                          "RangeEstimate.response_matrix")
        if (min(i, j), max(i, j)) not in self.matrices:
            raise InvalidParameterError(f"This estimate has no response matrix of the pair ({first!r}, {second!r}).")
        matrix = self.matrices[(min(i, j), max(i, j))]
        return matrix if i < j else matrix.T

    @validate_params({"ranges": Dict("a non-empty dict attribute -> (low, high)", min_size=1)})
    def range(self, ranges: dict[str, Any], level: float = 0.95) -> Interval:
        """The share of records with every attribute ``name`` of ``ranges`` inside ``ranges[name] = (low, high)``.

        The interval's limits are infinite: an adaptive structure has no analytic variance (module docstring).
        """
        check_level(level, "RangeEstimate.range")
        indices = [self._index(name, "ranges", "RangeEstimate.range") for name in ranges]
        covers = [coverage(*self._unit(i, bounds), self.resolution) for i, bounds in zip(indices, ranges.values())]
        one_way = [float(np.clip(c @ self.histograms[i], 0, 1)) for i, c in zip(indices, covers)]
        if len(indices) == 1:
            value = one_way[0]
        else:
            two_way = {}
            for (a, i), (b, j) in itertools.combinations(enumerate(indices), 2):
                two_way[(a, b)] = float(covers[a] @ self.response_matrix(self.names[i], self.names[j]) @ covers[b])
            value = two_way[(0, 1)] if len(indices) == 2 else range_from_answers(one_way, two_way)
        return Interval("probability", value, -np.inf, np.inf, level, f"no interval: {NO_RANGE_INTERVAL}")

    @validate_params({"boxes": RealArray("a finite (q, 4) array of (low1, high1, low2, high2)", ndims=(2,), width=4,
                                         private=True)})
    def ranges(self, first: str, second: str, boxes: np.ndarray) -> np.ndarray:
        """Many 2-D ranges at once: ``boxes[q] = (low1, high1, low2, high2)`` in the attributes' units."""
        out = []
        matrix = self.response_matrix(first, second)
        edges = np.linspace(0, 1, self.resolution + 1)
        for axis, name in enumerate((first, second)):
            lo, hi = self.bounds[self._index(name)]
            low = np.clip((boxes[:, 2 * axis] - lo) / (hi - lo), 0, 1)
            high = np.clip((boxes[:, 2 * axis + 1] - lo) / (hi - lo), 0, 1)
            out.append(np.clip(np.minimum(edges[1:], high[:, None]) - np.maximum(edges[:-1], low[:, None]), 0, None)
                       * self.resolution)
        return np.einsum("qi,ij,qj->q", out[0], matrix, out[1])

    # ------------------------------------------------------------------ the result contract
    def summary(self) -> dict[str, float]:
        """Each attribute's mean and median, read from its histogram."""
        out = {}
        for name in self.names:
            distribution = self.marginal(name)
            out[f"mean of {name}"] = float(distribution.mean())
            out[f"median of {name}"] = float(distribution.quantile(0.5))
        return out

    def table(self) -> dict[str, np.ndarray]:
        """One row per bin: ``bin`` and, per attribute, ``"<name> low"``, ``"<name> high"`` and ``"<name>"`` (its
        frequency); the response matrices are in the JSON."""
        columns: dict[str, np.ndarray] = {"bin": np.arange(self.resolution)}
        for name, (lo, hi), histogram in zip(self.names, self.bounds, self.histograms):
            edges = np.linspace(lo, hi, self.resolution + 1)
            columns[f"{name} low"], columns[f"{name} high"] = edges[:-1], edges[1:]
            columns[name] = np.asarray(histogram, dtype=np.float64)
        return columns

    def _json_fields(self, level: float) -> dict[str, Any]:
        return {
            "attributes": [{"name": name, "bounds": [float(lo), float(hi)]} for name, (lo, hi) in zip(self.names, self.bounds)],
            "resolution": self.resolution,
            "histograms": [json_value(histogram) for histogram in self.histograms],
            "matrices": [{"attributes": [self.names[i], self.names[j]], "matrix": json_value(matrix)}
                         for (i, j), matrix in sorted(self.matrices.items())],
            "no_interval": NO_RANGE_INTERVAL,
        }

    @classmethod
    def _from_document(cls, document: dict[str, Any], header: Header) -> RangeEstimate:
        """The estimate of a checked document (:meth:`Presented.from_dict`), refusing what no release could have
        produced, naming the field and its value: attributes without a unique name and finite bounds ``low < high``;
        a ``resolution`` other than every histogram's and matrix's size; a histogram or matrix with a missing,
        negative entry, or whose entries do not sum to 1 (within 1e-6: a release's are Norm-Sub'd frequencies)."""
        owner = header.owner
        names, bounds = [], []
        for k, entry in enumerate(document["attributes"]):
            name = entry["name"]
            if name in names:
                raise refused(owner, f"attributes[{k}].name", f"must be unique. Got {name!r} twice")
            pair = _numbers(entry["bounds"], f"attributes[{k}].bounds", owner)
            if pair.size != 2 or not pair[0] < pair[1]:
                raise refused(owner, f"attributes[{k}].bounds", f"must be two finite numbers low < high (attribute "
                                                                f"{name!r}). Got {entry['bounds']!r}")
            names.append(name)
            bounds.append((float(pair[0]), float(pair[1])))
        resolution, raw = document["resolution"], document["histograms"]
        if len(raw) != len(names):
            raise refused(owner, "histograms", f"must hold one histogram per attribute ({len(names)}). Got {len(raw)}")
        histograms = tuple(_frequencies(h, (resolution,), f"histograms[{k}]", owner) for k, h in enumerate(raw))
        matrices = {}
        for k, entry in enumerate(document["matrices"]):
            pair_names = entry["attributes"]
            if len(pair_names) != 2 or not all(n in names for n in pair_names) or pair_names[0] == pair_names[1]:
                raise refused(owner, f"matrices[{k}].attributes", f"must name two different attributes of {names}. "
                                                                  f"Got {pair_names!r:.100}")
            i, j = sorted(names.index(name) for name in pair_names)
            matrix = _frequencies(entry["matrix"], (resolution, resolution), f"matrices[{k}].matrix", owner)
            matrices[(i, j)] = matrix if names.index(pair_names[0]) == i else matrix.T
        own = f"no interval: {NO_RANGE_INTERVAL}"
        notes = header.notes[:-1] if header.notes[-1:] == [own] else header.notes
        return cls(tuple(names), tuple(bounds), histograms, matrices, header.epsilon, header.n,  # type: ignore[arg-type]
                   header.guarantee, header.method, {"notes": notes} if notes else {})  # type: ignore[arg-type]

    def notes(self) -> list[str]:
        """The producer's notes, then why there is no interval (:data:`NO_RANGE_INTERVAL`): in the JSON's ``notes``
        as in ``no_interval``, so a reader of either sees it."""
        return [*super().notes(), f"no interval: {NO_RANGE_INTERVAL}"]

    def describe(self, truth: Any = None, level: float = 0.95) -> str:
        """Each attribute's mean and median (beside the true ones of ``truth``, a mapping name -> values, when given),
        then why there are no intervals and the bins (``level`` is not used: there are none)."""
        lines = []
        for name, value in self.summary().items():
            statistic, attribute = name.split(" of ", 1)
            true = ""
            if truth is not None:
                values = np.asarray(truth[attribute], dtype=np.float64)
                true = f"   (true {float(np.mean(values) if statistic == 'mean' else np.median(values)):.6g})"
            lines.append(f"  {name:<24} {value:.6g}{true}")
        lines.append(f"  intervals                none: {NO_RANGE_INTERVAL}")
        pairs = [f"{self.names[i]} x {self.names[j]}" for i, j in sorted(self.matrices)]
        lines.append(f"  bins                     {self.resolution} per attribute; response matrices: "
                     f"{', '.join(pairs) if pairs else 'none'}")
        lines.extend(f"  note                     {note}" for note in self.notes()[:-1])  # the last: intervals above
        return "\n".join(lines)

    def plot(self, ax: Any = None, *, pair: tuple[str, str] | None = None, **kwargs: Any) -> Any:
        """The heat map of a pair's response matrix (the first pair unless ``pair``; rows: the first attribute's bins
        from its lower bound), or the one attribute's histogram when there is no pair."""
        if pair is None:
            if not self.matrices:
                return self.marginal(self.names[0]).plot(ax, **kwargs)
            i, j = min(self.matrices)
            pair = (self.names[i], self.names[j])
        matrix = self.response_matrix(*pair)
        ax = draw_heatmap(matrix, np.full(matrix.shape, np.inf), ax, row_name=pair[0], column_name=pair[1], **kwargs)
        # the ticks in the attributes' units (bin edges), not bin numbers: 6 edges, from the lower bound
        edges = np.linspace(-0.5, self.resolution - 0.5, 6)
        for set_ticks, name in ((ax.set_yticks, pair[0]), (ax.set_xticks, pair[1])):
            lo, hi = self.bounds[self._index(name)]
            set_ticks(edges, [f"{value:.4g}" for value in np.linspace(lo, hi, 6)], fontsize=7)
        return ax

    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None, level: float = 0.95) -> Any:
        """The response matrices of the pairs (at most six), or the one attribute's histogram."""
        pairs = [(self.names[i], self.names[j]) for i, j in sorted(self.matrices)][:6]
        panels: Sequence[tuple[str, str] | None] = pairs or [None]
        figure, axes = panel_grid(len(panels))
        for axis, pair in zip(axes, panels):
            self.plot(axis, pair=pair)
            if label:
                axis.set_title(f"{label}: {' x '.join(pair) if pair else self.names[0]}", fontsize=9)
        figure.tight_layout()
        return figure


def _numbers(value: Any, field: str, owner: str) -> np.ndarray:
    """``value`` as a float array of finite numbers (no ``null``, no strings), or refused naming ``field``."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        array = None
    if array is None or array.dtype != np.float64 or not np.all(np.isfinite(array)):
        raise refused(owner, field, f"must hold finite numbers only (no null). Got {value!r:.100}")
    return array


def _frequencies(value: Any, shape: tuple[int, ...], field: str, owner: str) -> np.ndarray:
    """``value`` as frequencies of ``shape``: finite, non-negative, summing to 1 within 1e-6 (a release's are)."""
    array = _numbers(value, field, owner)
    if array.shape != shape:
        raise refused(owner, field, f"must have shape {shape} (its 'resolution'). Got shape {array.shape}")
    if np.any(array < 0):
        where = tuple(int(k) for k in np.unravel_index(np.argmin(array), shape))
        raise refused(owner, field, f"must be non-negative frequencies. Got {float(array.min()):g} at index {where}")
    if abs(float(array.sum()) - 1.0) > 1e-6:
        raise refused(owner, field, f"must sum to 1 (frequencies). Got a sum of {float(array.sum()):.6g}")
    return array
