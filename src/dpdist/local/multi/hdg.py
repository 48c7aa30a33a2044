r"""Range queries over numerical attributes with hybrid grids, ``hdg`` (Yang, Wang, Li, Cheng, Su, PVLDB 2020).

HDG ("Hybrid-Dimensional Grids") answers axis-aligned range queries over :math:`k \ge 2`
numerical attributes from one report per user:

1. *Grids* (sec. 5.1): every attribute's bounds are cut into :math:`g_1` equal cells (a 1-D
   grid per attribute) and every pair of attributes into :math:`g_2 \times g_2` cells (a
   2-D grid per pair); :math:`g_1, g_2` follow the paper's guideline (sec. 5.3, eq. for
   :math:`g_1` and :math:`g_2`, :func:`._grids.guideline_granularities`) at
   ``expected_reports`` users, or are given.  TDG (``hybrid=False``, sec. 4) keeps only the
   2-D grids.
2. *Reporting* (sec. 5.1): the users are divided at random among the grids; each reports
   the cell of their record in their grid through a frequency oracle at the whole budget,
   with the grid's index (independent of the record: :math:`\varepsilon`-LDP for any two
   records).  The paper uses OLH; here GRR below :math:`3e^\varepsilon + 2` cells, else OUE
   (OLH's variance), as :mod:`.calm` does.
3. *Consistency and non-negativity* (sec. 5.2): the grids are made consistent on what they
   share (a 1-D grid and a 2-D grid of the same attribute agree on its :math:`g_2` coarse
   cells, :mod:`._consistency`), then Norm-Sub and consistency in turn ending with Norm-Sub
   (``postprocess="norm-sub"``, as the paper does; the default ``"none"`` keeps the grids linear).
4. *Answering* (sec. 4.2 and 5.3): a 1-D range from its attribute's 1-D grid (TDG: the 2-D
   grids' projection), a 2-D range from the pair's *response matrix* (the maximum-entropy
   fine table given the 2-D and both 1-D grids; TDG spreads each 2-D cell evenly), a bin
   cut by the range counted in proportion; a :math:`\lambda`-D range from the
   :math:`\binom{\lambda}{2}` 2-D and :math:`\lambda` 1-D answers (maximum entropy on
   :math:`\{in, out\}^\lambda`).  See :mod:`._grids`.

Each grid is a marginal of *digits* of the attributes (:mod:`._grids`), so the estimate is a
:class:`~._marginals.MarginalsEstimate` of those digits (``"age:coarse"``, ``"age:fine"``)
with :meth:`~._grid_estimate.GridsEstimate.range` on top.  Intervals: those of the linear
estimate of the same range (consistent grids before Norm-Sub, uniform within the cells it
cuts), exact variance of the noise and of the split of users; the error of assuming
uniformity within cut cells is not in them.  A range over three or more attributes has none.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._types import ArrayLike
from ..._validation import Boolean, Given, Integer, Optional, Options, validate_params
from ...errors import InvalidParameterError
from .._protocol import register
from ._grid_estimate import GridsEstimate
from ._grids import GridGeometry, guideline_granularities
from ._groups import SampledGroups
from ._marginals import MarginalsEstimate
from ._record import RecordProtocol
from ._schema import Attribute, Attributes
from .calm import MAX_CELLS, ORACLES, ConsistentMarginals

__all__ = ["HybridGrids"]

#: the default number of reports the granularity guideline plans for
EXPECTED_REPORTS = 10**6
#: ``channel(values)`` needs the records: the attributes are numerical (no list of all inputs).
RECORDS_GIVEN = Given("values", why="the input records: the attributes are numerical", counterexample={"values": None})


@dataclass(frozen=True)
class _PowerOfTwo(Integer):
    """An int power of two within ``[low, high]``."""

    def check(self, value: Any) -> Any:
        checked = super().check(value)
        if checked & (checked - 1):
            raise ValueError
        return checked

    def describe(self) -> str:
        return f"a power of two from {self.low} to {self.high}"

    def invalid_examples(self) -> list:
        return [*super().invalid_examples(), 6]  # not a power of two (and above every low here)


@register
class HybridGrids(ConsistentMarginals):
    """Range queries over numerical attributes from 1-D and 2-D grids (see the module docstring).

    Parameters
    ----------
    epsilon : float
        Budget of one record (the grid's oracle runs at ``epsilon``).
    attributes : list of dict
        At least two numerical attributes (``bounds``; no ``protocol``).
    resolution : int
        Fine bins per attribute, :math:`c` (a power of two, default 64): the response
        matrices are :math:`c \times c`.
    g1, g2 : int, optional
        Cells of a 1-D grid and per side of a 2-D grid (powers of two, ``g2 <= g1 <= c``);
        by default the paper's guideline at ``expected_reports`` users.
    expected_reports : int
        The number of users the guideline plans for (default :math:`10^6`).
    hybrid : bool
        ``True`` (HDG, default): 1-D and 2-D grids; ``False`` (TDG): 2-D grids only.
    oracle : {"auto", "grr", "oue", "sue"}
        The oracle of every grid (``"auto"`` as in :mod:`.calm`).
    """

    name = "hdg"
    summary = "several numerical attributes: range queries from consistent 1-D and 2-D grids (HDG/TDG)"
    _constraints = {
        **RecordProtocol._constraints,
        "attributes": Attributes(low=2, kind="numerical", bare=True),  # a range over one: hh or haar-hrr
        "resolution": _PowerOfTwo(low=4, high=1024),
        "g1": Optional(_PowerOfTwo(low=1, high=1024)),
        "g2": Optional(_PowerOfTwo(low=1, high=1024)),
        "expected_reports": Integer(low=1),
        "hybrid": Boolean(),
        "oracle": Options(ORACLES),
    }
    _relations = ()  # not CALM's: no 'order'
    _defaults = {"resolution": 64, "g1": None, "g2": None, "expected_reports": EXPECTED_REPORTS, "hybrid": True,
                 "oracle": "auto"}
    estimate_options = {"postprocess": Options(("none", "norm-sub"))}

    def _setup(self):
        self._setup_schema()
        self.geometry = self._granularities()
        k, hybrid = len(self._attributes), self._params["hybrid"]
        coarse, within, _ = self.geometry.digits
        self._sizes = [size for _ in range(k) for size in (coarse, within)]  # digits 2j (coarse), 2j + 1 (fine)
        pairs = list(itertools.combinations(range(k), 2))
        self._sets = tuple([(2 * a, 2 * b) for a, b in pairs] + ([(2 * a, 2 * a + 1) for a in range(k)] if hybrid else []))
        names = [f"{self._attributes[a].name},{self._attributes[b].name}" for a, b in pairs]
        names += [attribute.name for attribute in self._attributes] if hybrid else []
        inners = [self._oracle(int(np.prod([self._sizes[d] for d in digits]))) for digits in self._sets]
        self._groups = SampledGroups(inners, "grid", names)
        self._strides = [self._mixed_radix_strides(digits) for digits in self._sets]

    def _granularities(self) -> GridGeometry:
        params, owner = self._params, self.display_name
        resolution, g1, g2 = params["resolution"], params["g1"], params["g2"]
        planned = guideline_granularities(params["expected_reports"], self.epsilon, len(self._attributes),
                                          params["hybrid"], resolution)
        g1 = planned[0] if g1 is None else g1
        g2 = planned[1] if g2 is None else g2
        if not params["hybrid"]:
            g1 = g2  # TDG: no 1-D grids (g1 is g2, so a digit's fine part has one value)
        if not g2 <= g1 <= resolution:
            raise InvalidParameterError(
                f"The 'g1' and 'g2' parameters of {owner} must satisfy g2 <= g1 <= resolution ({resolution}). "
                f"Got g1={g1}, g2={g2}."
            )
        if max(g2 * g2, g1) > MAX_CELLS:
            raise InvalidParameterError(f"The 'g2' parameter of {owner}: a 2-D grid has at most {MAX_CELLS:,} cells. Got {g2}.")
        return GridGeometry(resolution, g1, g2)

    def _client_design(self) -> dict:
        """The grids' granularities and each grid's oracle, as a client derives them from the config."""
        return {"g1": self.geometry.g1, "g2": self.geometry.g2, **super()._client_design()}

    @property
    def grid_names(self) -> list[str]:
        """Each grid's attributes (``"a,b"`` for a 2-D grid, ``"a"`` for a 1-D grid), in report order."""
        return list(self._groups.names)

    def _group_values(self, records, group):
        """The cell of each record in grid ``group`` (C order: the first digit slowest)."""
        digits = self._sets[group]
        a, b = digits[0] // 2, digits[1] // 2
        if a != b:
            return self.geometry.two_way_cell(records[:, a], records[:, b])
        return self.geometry.one_way_cell(records[:, a])

    # ------------------------------------------------------------------ estimation
    def _result(self, fields: tuple) -> GridsEstimate:
        digits = tuple(
            Attribute(f"{attribute.name}:{part}", size)
            for attribute in self._attributes
            for part, size in zip(("coarse", "fine"), self.geometry.digits[:2])
        )
        named: dict[str, Any] = dict(zip([entry.name for entry in dataclasses.fields(MarginalsEstimate)], (digits, *fields[1:])))
        return GridsEstimate(**named, numerical=tuple(self._attributes), geometry=self.geometry,
                             hybrid=bool(self._params["hybrid"]))

    @validate_params({}, owner="HDG.channel", relations=(RECORDS_GIVEN,))
    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Exact ``P[i, y]`` for records ``values`` (required: the attributes are numerical)."""
        return super().channel(values)
