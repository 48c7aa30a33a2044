"""Outputs as finite cells: the output events the auditor certifies are sets of cells.

Any randomizer's outputs become rows of numbers (:func:`~dpdist.audit._draws.as_columns`); a *pilot* sample
then fixes how rows become cells, two ways:

* **rows**: each distinct row of the pilot is a cell (and every row the pilot never saw
  one more), when the pilot has at most ``max_cells`` distinct rows and at most
  :data:`UNSEEN_MASS` of fresh rows are expected to be unseen (Good-Turing: the share of
  pilot rows seen once): exact for small finite output spaces (GRR, a dpdist protocol's
  ``report_index``, short bit vectors), never for reals;
* **columns**: each column is cut into at most ``bins`` levels (its distinct values when
  it has few, else quantiles of the pilot), and a pair of inputs looks at the joint
  levels of the few columns that tell them apart best (large bit vectors, reals);
* **bit planes**: each of the first :data:`PLANE_SOURCES` columns of many values (the ones cut
  into quantiles) also gives one 0/1 column per bit of its 64-bit pattern that varies in the
  pilot: an integer's two's complement (a column of whole numbers below :math:`2^{53}`), else
  the float's IEEE 754 bits.  Quantile bins never see a leak in a low bit (an integer's parity,
  a mantissa bit): these columns do, and the pair's column choice above takes them like any
  other column.

Either map is a post-processing fixed before the certifying samples are drawn, so a
bound certified on cells holds for the randomizer itself (post-processing cannot raise
the privacy loss: Dwork & Roth 2014, Proposition 2.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["CellMap", "UNSEEN_MASS", "PLANE_SOURCES"]

#: The rows mode is used only when the pilot says fresh rows are mostly rows it saw: at most this share
#: unseen (Good-Turing).  Distinct reals never recur, so events on them certify nothing on fresh outputs.
UNSEEN_MASS = 0.25
#: Columns of many values (the first ones) whose bits become columns of their own.
PLANE_SOURCES = 8
#: The most distinct values a lowest-set-bit column keeps as levels (a double's grain is one of about 2,100).
GRAIN_LEVELS = 128


@dataclass(frozen=True)
class CellMap:
    """How rows of outputs become cells, fixed from a pilot sample (:meth:`fit`)."""

    codebook: np.ndarray | None  # distinct pilot rows (rows mode), or None
    levels: tuple[np.ndarray, ...]  # per column: its values (few) or interior quantile edges (many)
    discrete: tuple[bool, ...]  # per column: levels are values (True) or edges (False)
    planes: tuple[tuple[int, int, bool], ...] = ()  # extra 0/1 columns: (source column, bit, bits of a float)

    @classmethod
    def fit(cls, pilot: np.ndarray, bins: int, max_cells: int, planes: bool = True, grains: int = 0) -> CellMap:
        """The map of a pilot ``(n, k)`` (every input's rows pooled); ``planes``: add the bit planes; the last
        ``grains`` columns (lowest-set-bit exponents, :mod:`._floats`) keep up to :data:`GRAIN_LEVELS` distinct values
        as levels: quantiles would pool a float grid that one input reaches and the other does not with its
        neighbours."""
        distinct = _distinct_rows(pilot)
        codebook = distinct if len(distinct) <= max_cells else None
        if codebook is not None and len(pilot) and _unseen_mass(cls(codebook, (), ()), pilot) > UNSEEN_MASS:
            codebook = None  # most fresh rows would be rows the pilot never saw (reals): columns mode only
        levels, discrete = [], []
        for index, column in enumerate(pilot.T):
            values = np.unique(column)
            if values.size <= (GRAIN_LEVELS if index >= pilot.shape[1] - grains else bins):
                levels.append(values)
                discrete.append(True)
            else:
                edges = np.unique(np.quantile(column, np.linspace(0, 1, bins + 1)[1:-1]))
                levels.append(edges)
                discrete.append(False)
        sources = [column for column, few in enumerate(discrete) if not few][:PLANE_SOURCES if planes else 0]
        return cls(codebook, tuple(levels), tuple(discrete), _varying_planes(pilot, sources))

    @property
    def columns(self) -> int:
        """Columns of levels: the outputs' own, then the bit planes."""
        return len(self.levels) + len(self.planes)

    def column_name(self, column: int) -> str:
        """A column in words (an output's own column, or a bit of one)."""
        if column < len(self.levels):
            return f"column {column}"
        source, bit, as_float = self.planes[column - len(self.levels)]
        return f"bit {bit} of column {source}" + (" (float bits)" if as_float else "")

    def row_cells(self) -> int:
        """Cells of the rows mode: the pilot's distinct rows and one for any other row."""
        return 0 if self.codebook is None else len(self.codebook) + 1

    def row_codes(self, rows: np.ndarray) -> np.ndarray:
        """Each row's index in the codebook; ``len(codebook)`` for a row the pilot never saw.

        Each column's value becomes its rank among the codebook's values of that column, and a row the
        mixed-radix number of its ranks (first column most significant: the codebook's lexicographic order),
        looked up with a binary search; rows of too many columns for one int64 go through ``np.unique``.
        """
        assert self.codebook is not None
        known = len(self.codebook)
        if rows.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        ranks, book = self._rank_tables
        if book is not None:
            code = np.zeros(rows.shape[0], dtype=np.int64)
            seen = np.ones(rows.shape[0], dtype=bool)
            for column, values in enumerate(ranks):
                position = np.minimum(np.searchsorted(values, rows[:, column]), values.size - 1)
                seen &= values[position] == rows[:, column]
                code = code * values.size + position
            index = np.minimum(np.searchsorted(book, code), known - 1)
            return np.where(seen & (book[index] == code), index, known)
        _, inverse = np.unique(np.concatenate([self.codebook, rows]), axis=0, return_inverse=True)
        inverse = inverse.ravel()
        table = np.full(inverse.max() + 1, known, dtype=np.int64)
        table[inverse[:known]] = np.arange(known)
        return table[inverse[known:]]

    @cached_property
    def _rank_tables(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        """Per column the codebook's distinct values, and each codebook row's mixed-radix number of its ranks
        (``None`` when the radix product does not fit an int64): fixed with the map, so computed once."""
        assert self.codebook is not None
        ranks = [np.unique(self.codebook[:, column]) for column in range(self.codebook.shape[1])]
        if float(np.prod(np.asarray([values.size for values in ranks], dtype=np.float64))) >= 2.0**62:
            return ranks, None
        book = np.zeros(len(self.codebook), dtype=np.int64)
        for column, values in enumerate(ranks):
            book = book * values.size + np.searchsorted(values, self.codebook[:, column])
        return ranks, book

    def level_counts(self) -> np.ndarray:
        """How many levels each column has (a discrete column: its values and one for any other; a bit plane: 2)."""
        return np.array([lv.size + 1 for lv in self.levels] + [2] * len(self.planes), dtype=np.int64)

    def column_levels(self, rows: np.ndarray, columns) -> np.ndarray:
        """The level of each row in each of ``columns``: ``(n, len(columns))`` integers."""
        out = np.empty((rows.shape[0], len(columns)), dtype=np.int32)
        patterns: dict[tuple[int, bool], np.ndarray] = {}  # a source column's 64-bit patterns, once per call
        for position, column in enumerate(columns):
            if column >= len(self.levels):
                source, bit, as_float = self.planes[column - len(self.levels)]
                if (source, as_float) not in patterns:
                    patterns[source, as_float] = _bit_patterns(rows[:, source], as_float)
                out[:, position] = (patterns[source, as_float] >> np.uint64(bit)) & np.uint64(1)
                continue
            values, levels = rows[:, column], self.levels[column]
            if self.discrete[column]:
                index = np.searchsorted(levels, values)
                clipped = np.minimum(index, levels.size - 1)
                out[:, position] = np.where(levels[clipped] == values, clipped, levels.size)
            else:
                out[:, position] = np.searchsorted(levels, values, side="right")
        return out

    def joint_codes(self, rows: np.ndarray, columns) -> np.ndarray:
        """The joint level of ``columns`` as one integer per row (mixed radix)."""
        levels = self.column_levels(rows, columns)
        radix = self.level_counts()[list(columns)]
        code = np.zeros(rows.shape[0], dtype=np.int64)
        for position in range(len(columns)):
            code = code * radix[position] + levels[:, position]
        return code

    def joint_cells(self, columns) -> int:
        return int(np.prod(self.level_counts()[list(columns)]))


def _whole_numbers(column: np.ndarray) -> bool:
    """Whether a column is read as integers (its two's complement) rather than as a float's bits."""
    if column.dtype.kind in "biu":
        return True
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(column) < 2.0**53) and np.all(column == np.round(column)))


def _bit_patterns(column: np.ndarray, as_float: bool) -> np.ndarray:
    """A column's 64-bit patterns: a float's IEEE 754 bits, or an integer's two's complement."""
    if as_float:
        return np.ascontiguousarray(column, dtype=np.float64).view(np.uint64)
    if column.dtype.kind == "u":
        return column.astype(np.uint64)
    return np.ascontiguousarray(column.astype(np.int64)).view(np.uint64)


def _varying_planes(pilot: np.ndarray, sources: list[int]) -> tuple[tuple[int, int, bool], ...]:
    """The bit planes of ``sources`` that are not constant in the pilot (a constant one tells nothing apart)."""
    planes = []
    for source in sources:
        as_float = not _whole_numbers(pilot[:, source])
        patterns = _bit_patterns(pilot[:, source], as_float)
        varying = np.bitwise_or.reduce(patterns) & ~np.bitwise_and.reduce(patterns) if patterns.size else np.uint64(0)
        planes += [(source, bit, as_float) for bit in range(64) if (int(varying) >> bit) & 1]
    return tuple(planes)


def _unseen_mass(rows_map: CellMap, pilot: np.ndarray) -> float:
    """Good-Turing estimate of the probability that a fresh row is none of the pilot's: the share of the
    pilot's rows seen exactly once (Good 1953)."""
    assert rows_map.codebook is not None, "a map of whole rows has its codebook"
    counts = np.bincount(rows_map.row_codes(pilot), minlength=len(rows_map.codebook) + 1)
    return float(np.count_nonzero(counts == 1)) / len(pilot)


def _distinct_rows(rows: np.ndarray) -> np.ndarray:
    """``np.unique(rows, axis=0)`` (distinct rows in lexicographic order), through one int64 per row when the
    columns' distinct values allow it (a 1-D unique is far cheaper than one over rows)."""
    columns = [np.unique(column, return_inverse=True) for column in rows.T]
    if not columns or float(np.prod([float(values.size) for values, _ in columns])) >= 2.0**62:
        return np.unique(rows, axis=0)
    code = np.zeros(rows.shape[0], dtype=np.int64)
    for values, inverse in columns:
        code = code * values.size + inverse.ravel()
    distinct = np.unique(code)
    out = np.empty((distinct.size, rows.shape[1]), dtype=rows.dtype)
    for position in range(rows.shape[1] - 1, -1, -1):
        values = columns[position][0]
        distinct, digit = np.divmod(distinct, values.size)
        out[:, position] = values[digit]
    return out
