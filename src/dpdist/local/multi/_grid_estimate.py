r"""The estimate of ``hdg``: consistent grids of numerical attributes and range queries with intervals.

A :class:`GridsEstimate` is a :class:`~._marginals.MarginalsEstimate` whose attributes are the
*digits* of the numerical attributes (:mod:`._grids`: ``"age:coarse"``, the 2-D cell of a value,
``"age:fine"``, its 1-D cell within that), plus :meth:`GridsEstimate.range`, the share of records
inside an axis-aligned range (HDG/TDG, Yang et al., PVLDB 2020, sec. 4.2 and 5.3), and
:meth:`GridsEstimate.conditional` / :meth:`GridsEstimate.conditional_mean`, the distribution (mean,
quantiles) of one attribute among the records inside a range of another, read from the pair's
response matrix (the same fine table the 2-D ranges are answered from).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..._validation import Dict, Options, Span, check_param
from ...errors import InvalidParameterError
from ...estimates import Distribution, Interval
from ...estimates._intervals import check_level, normal_quantile
from ._grids import GridGeometry, coverage, range_from_answers
from ._marginals import MarginalsEstimate

__all__ = ["GridsEstimate"]


@dataclass(frozen=True)
class GridsEstimate(MarginalsEstimate):
    """Consistent 1-D and 2-D grids over numerical attributes (see :mod:`dpdist.local.multi.hdg`).

    Attributes
    ----------
    numerical : tuple of Attribute
        The numerical attributes (names and bounds) the ranges are about.
    geometry : GridGeometry
        Fine bins, 1-D cells and 2-D cells per side.
    hybrid : bool
        HDG (1-D and 2-D grids) or TDG (2-D grids only).
    """

    kind: ClassVar[str] = "marginals"

    numerical: tuple = ()
    geometry: GridGeometry = GridGeometry(1, 1, 1)
    hybrid: bool = True
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ ranges
    def _ranges(self, ranges: Any, argument: str = "ranges",
                owner: str = "GridsEstimate.range") -> list[tuple[int, float, float]]:
        """``{name: (low, high)}`` as sorted ``(attribute index, low, high)`` on [0, 1], checked (``argument`` of
        ``owner``)."""
        names = [attribute.name for attribute in self.numerical]
        check_param(owner, argument, ranges, Dict(f"a non-empty dict {{attribute: (low, high)}} with attributes of {names}",
                                                  min_size=1, allowed=tuple(names)))
        out = []
        for name, bounds in ranges.items():
            low, high = self.numerical[names.index(name)].interval
            first, second = check_param(owner, f"{argument}[{name!r}]", bounds, Span())
            unit = [min(max((value - low) / (high - low), 0.0), 1.0) for value in (first, second)]
            out.append((names.index(name), unit[0], unit[1]))
        return sorted(out)

    def _one_way(self, tables: tuple, attribute: int) -> np.ndarray:
        """Attribute ``attribute``'s 1-D grid (HDG) or the 2-D grids' projection on it (TDG), as ``g1`` cells."""
        wanted = [2 * attribute, 2 * attribute + 1] if self.hybrid else [2 * attribute]
        group = self._container(wanted)
        assert group is not None  # every attribute is in a 2-D grid (k >= 2)
        return self._project(tables, group, wanted).ravel()

    def response_matrix(self, first: int, second: int) -> np.ndarray:
        """The ``c x c`` fine table of attributes ``first < second`` (indices): HDG's response matrix."""
        key = (first, second)
        if key not in self.cache:
            group = self._container([2 * first, 2 * second])
            assert group is not None
            two_way = _distribution(self.tables[group])
            rows = columns = None
            if self.hybrid:
                rows, columns = (_distribution(self._one_way(self.tables, a)) for a in (first, second))
            self.cache[key] = self.geometry.response_matrix(two_way, rows, columns)
        return self.cache[key]

    def _limits(self, chosen: list[tuple[int, float, float]], level: float) -> tuple[float, float, bool]:
        r"""Confidence limits of the share of records in a 1-D or 2-D range, and whether the range cuts a cell.

        The grid's cells inside the range hold a share :math:`I \le` the range's, and the cells
        meeting it a share :math:`O \ge` it: the records of a cell the range cuts may lie anywhere in
        the cell.  Both are linear queries of the consistent grids (before Norm-Sub), unbiased with
        an exact variance; the limits are :math:`\hat I - z\sigma_I` and :math:`\hat O + z\sigma_O`,
        :math:`z` the two-sided normal quantile, so each misses with probability :math:`(1 - \text{level})/2`
        and the interval covers the range's share with probability at least ``level``, for every
        range, clipped to [0, 1].  On cell edges :math:`I = O` and it is the normal interval of
        the linear estimate.
        """
        if len(chosen) == 1:
            attribute, low, high = chosen[0]
            wanted = [2 * attribute, 2 * attribute + 1] if self.hybrid else [2 * attribute]
            cells = self.geometry.g1 if self.hybrid else self.geometry.g2
            weights = coverage(low, high, cells).reshape([self.schema[d].size for d in wanted])
        else:
            (a, low_a, high_a), (b, low_b, high_b) = chosen
            wanted = [2 * a, 2 * b]
            weights = np.outer(coverage(low_a, high_a, self.geometry.g2), coverage(low_b, high_b, self.geometry.g2))
        group = self._container(wanted)
        assert group is not None
        inner = (weights >= 1.0 - 1e-9).astype(np.float64)  # cells inside the range
        outer = (weights > 1e-12).astype(np.float64)  # cells meeting it
        table = self._project(self.linear, group, wanted)
        z = normal_quantile(level)
        limits = []
        for sign, counted in ((-1.0, inner), (1.0, outer)):
            variance = float(self._variance(group, wanted, counted[..., None])[0]) if counted.any() else 0.0
            limits.append(float((table * counted).sum()) + sign * z * float(np.sqrt(max(variance, 0.0))))
        return min(max(limits[0], 0.0), 1.0), min(max(limits[1], 0.0), 1.0), bool(np.any(inner != outer))

    def _answer(self, chosen: list[tuple[int, float, float]]) -> float:
        resolution = self.geometry.resolution
        if len(chosen) == 1:
            attribute, low, high = chosen[0]
            cells = self.geometry.g1 if self.hybrid else self.geometry.g2
            return float(coverage(low, high, cells) @ self._one_way(self.tables, attribute))
        if len(chosen) == 2:
            (a, low_a, high_a), (b, low_b, high_b) = chosen
            matrix = self.response_matrix(a, b)
            return float(coverage(low_a, high_a, resolution) @ matrix @ coverage(low_b, high_b, resolution))
        one_way = [self._answer([entry]) for entry in chosen]
        two_way = {(i, j): self._answer([chosen[i], chosen[j]]) for i in range(len(chosen)) for j in range(i + 1, len(chosen))}
        return range_from_answers(one_way, two_way)

    def range(self, ranges: dict[str, Any], level: float = 0.95) -> Interval:
        """The share of records inside every range of ``ranges`` (``{"age": (30, 40), "income": (20e3, 40e3)}``).

        The point estimate is HDG's (sec. 4.2, 5.3; TDG's for ``hybrid=False``): the grids'
        answer with the records of the cells the range cuts spread by the response matrix
        (maximum entropy), an assumption about where in a cell they lie.  Over one or two
        attributes the interval is one for the share itself, at ``level`` for every range
        (:meth:`_limits`): from the cells inside the range (low) to the cells meeting it (high),
        each with its exact noise, so it holds the records of the cut cells wherever they lie;
        on cell edges it is the normal interval of the linear estimate.  (It used to be the
        linear estimate's interval only, which assumes uniformity in the cut cells: the guide's
        example printed 0.0864 with "95 % interval 0.0543 .. 0.0629" and truth 0.0969.)
        Over three or more attributes there is no interval (infinite limits).
        """
        level = check_level(level, "GridsEstimate.range")
        chosen = self._ranges(ranges)
        value = self._answer(chosen)
        if len(chosen) > 2:
            return Interval("probability", value, -np.inf, np.inf, level, "maximum entropy over 3+ ranges: no analytic interval")
        low, high, cut = self._limits(chosen, level)
        method = ("from the cells inside the range to the cells meeting it (the records of a cut cell may lie anywhere "
                  "in it), each the normal limit with the exact variance of the consistent grids' linear estimate"
                  if cut else "normal approximation with the exact variance of the linear estimate of the consistent grids")
        return Interval("probability", value, low, high, level, method)

    # ------------------------------------------------------------------ conditional distributions
    def _conditioning(self, attribute: str, given: Any) -> tuple[int, tuple[int, float, float]]:
        """The index of ``attribute`` and the one range of ``given`` (another attribute), checked."""
        names = [entry.name for entry in self.numerical]
        check_param("GridsEstimate.conditional", "attribute", attribute, Options(tuple(names)))
        chosen = self._ranges(given, "given", "GridsEstimate.conditional")
        if len(chosen) != 1 or chosen[0][0] == names.index(attribute):
            raise InvalidParameterError(
                "The 'given' argument of GridsEstimate.conditional must hold the range of exactly one other attribute "
                f"(HDG's response matrices are 2-D: a pair's fine table). Got {given!r} for attribute {attribute!r}."
            )
        return names.index(attribute), chosen[0]

    def conditional(self, attribute: str, given: dict[str, Any]) -> Distribution:
        """The distribution of ``attribute`` among the records inside the range ``given`` of another attribute.

        Read from the pair's response matrix (HDG: the maximum-entropy fine table matching the
        2-D grid and both 1-D grids; TDG: the 2-D grid spread evenly), the fine bins the range
        cuts counted in proportion: a :class:`~dpdist.estimates.Distribution` over the
        attribute's ``resolution`` fine bins (``mean()``, ``quantile(q)``, ``cdf(x)``), with the
        estimated share of records in the range in ``details["share"]``.  It has no band; see
        :meth:`conditional_mean` for the mean's interval.
        """
        target, (other, low, high) = self._conditioning(attribute, given)
        resolution = self.geometry.resolution
        weights = coverage(low, high, resolution)
        if other < target:
            mass = weights @ self.response_matrix(other, target)
        else:
            mass = self.response_matrix(target, other) @ weights
        share = float(mass.sum())
        if not share > 0:
            raise InvalidParameterError(
                f"GridsEstimate.conditional: the estimated share of records in {given!r} is 0; no distribution of "
                f"{attribute!r} among them."
            )
        return Distribution.uniform_bins(
            mass / share, bounds=self.numerical[target].interval, method=self.method, epsilon=self.epsilon, n=self.n,
            details={"given": dict(given), "share": share, "estimator": "response matrix"}, guarantee=self.guarantee,
        )

    def conditional_mean(self, attribute: str, given: dict[str, Any], level: float = 0.95) -> Interval:
        r"""The mean of ``attribute`` among the records inside the range ``given`` of another, with an interval.

        The estimate is :meth:`conditional`'s mean.  The interval is centred on it with the
        delta-method half-width of the *linear* estimate of the same ratio
        :math:`R = N/D` from the pair's consistent 2-D grid (before Norm-Sub, uniform within
        the cells the range cuts, each cell of ``attribute`` at its centre):
        :math:`z\,\sqrt{\operatorname{Var}(N - R D)}/D`, with the exact variance of that linear
        query (noise and the split of users).  Like :meth:`range`'s, it is the noise's
        interval: it leaves out the error of the within-cell assumptions.
        """
        level = check_level(level, "GridsEstimate.conditional_mean")
        value = self.conditional(attribute, given).mean()
        target, (other, low, high) = self._conditioning(attribute, given)
        g2 = self.geometry.g2
        lo, hi = self.numerical[target].interval
        centres = lo + (np.arange(g2) + 0.5) / g2 * (hi - lo)
        inside = coverage(low, high, g2)
        first, second = sorted((target, other))
        wanted = [2 * first, 2 * second]
        group = self._container(wanted)
        assert group is not None
        table = self._project(self.linear, group, wanted)
        numerator = np.outer(inside, centres) if other < target else np.outer(centres, inside)
        denominator = np.outer(inside, np.ones(g2)) if other < target else np.outer(np.ones(g2), inside)
        share = float((table * denominator).sum())
        if not share > 0:
            return Interval("mean", value, -np.inf, np.inf, level, "the linear estimate of the share in the range is not positive")
        ratio = float((table * numerator).sum()) / share
        variance = float(self._variance(group, wanted, (numerator - ratio * denominator)[..., None])[0])
        half = normal_quantile(level) * float(np.sqrt(max(variance, 0.0))) / share
        return Interval("mean", value, value - half, value + half, level,
                        "delta method with the exact variance of the linear estimate of the consistent 2-D grid (noise only)")


def _distribution(table: np.ndarray) -> np.ndarray:
    """``table`` clipped at 0 and normalized (uniform if nothing is left)."""
    clipped = np.clip(np.asarray(table, dtype=np.float64), 0.0, None)
    total = clipped.sum()
    return clipped / total if total > 0 else np.full(clipped.shape, 1.0 / clipped.size)
