"""Choosing the output events to certify, from a pilot sample only.

For two inputs :math:`x, x'` the most telling event is a level set of the likelihood
ratio, :math:`\\{y : P(y \\mid x) / P(y \\mid x') \\ge t\\}` (Neyman & Pearson 1933): on the pilot's
cells, the cells sorted by their empirical ratio, and every prefix of that order a
candidate.  Each candidate is scored by the bound it is expected to certify on the fresh
samples (:func:`~dpdist.audit._statistics.score_events`), and the best few of all pairs and both
directions are kept.  Nothing here touches the certifying samples, so however many events
and pairs the search looks at, the certificate pays only for the events it keeps
(Bonferroni over those: Arcolezi & Gambs 2023, Sec. 4, pay for none, choosing the event by
the protocol's design instead).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._cells import CellMap
from ._statistics import score_events, wilson_bound

__all__ = ["Event", "choose_events"]


@dataclass(frozen=True)
class Event:
    """An output event to certify: ``Pr[M(x) in E]`` against ``Pr[M(x') in E]``.

    ``first`` and ``second`` index the audited inputs; ``columns`` is ``None`` for an event
    on whole rows (``cells`` indexes :attr:`CellMap.codebook`, the last cell being "any row the
    pilot never saw") or the columns whose joint levels ``cells`` indexes.
    """

    first: int
    second: int
    columns: tuple[int, ...] | None
    cells: np.ndarray  # bool, one per cell
    score: float

    def contains(self, cell_map: CellMap, rows: np.ndarray) -> np.ndarray:
        """Whether each row of outputs is in the event."""
        if self.columns is None:
            return self.cells[cell_map.row_codes(rows)]
        return self.cells[cell_map.joint_codes(rows, self.columns)]

    def describe(self, cell_map: CellMap) -> str:
        """The event in words: the rows or the column levels it holds."""
        cells = np.flatnonzero(self.cells)
        if self.columns is None:
            assert cell_map.codebook is not None
            shown = [_row_text(cell_map.codebook[c]) if c < len(cell_map.codebook) else "(unseen)" for c in cells[:6]]
            more = f" and {cells.size - 6} more" if cells.size > 6 else ""
            return f"output in {{{', '.join(shown)}{more}}}"
        names = ", ".join(cell_map.column_name(column) for column in self.columns)
        return f"levels of ({names}) in {cells[:12].tolist()}" + (" ..." if cells.size > 12 else "")


def _row_text(row: np.ndarray) -> str:
    values = [f"{v:g}" for v in row.tolist()]
    return values[0] if len(values) == 1 else "(" + ",".join(values) + ")"


def _best_prefixes(counts: np.ndarray, x: np.ndarray, y: np.ndarray, h: np.ndarray, n_certify: int, a: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The best level-set event of each row (one direction and half each): (scores, cell masks).

    ``counts`` is ``(m, 2, cells)``: the counts per cell of each of ``m`` inputs' two halves of the pilot.  Row ``r``
    orders the cells by the ratio of ``x[r]``'s half ``h[r]`` to ``y[r]``'s, and scores each prefix on the other
    half (``1 - h[r]``) of both, so an event is not preferred for fitting noise (many small cells sorted by their
    own noisy ratios look better than they are).  All rows at once: the audit of a protocol with many inputs
    scores a few hundred of them (the counts are whole numbers, so the sums are exact and each row's result is
    what it is alone).
    """
    cells = counts.shape[2]
    flat = counts.reshape(-1, cells)  # row 2 * input + half
    totals = flat.sum(axis=1)
    scaled = (flat + 0.5) / totals[:, None]  # each input's half once, then gathered per row
    ratio = scaled[2 * x + h] / scaled[2 * y + h]
    order = np.argsort(-ratio, axis=1, kind="stable")
    score_x, score_y = 2 * x + 1 - h, 2 * y + 1 - h
    in_sums = np.cumsum(flat[score_x[:, None], order], axis=1)
    out_sums = np.cumsum(flat[score_y[:, None], order], axis=1)
    largest = int(totals.max()) + 1
    if flat.shape[0] * largest <= in_sums.size:
        # the prefix sums are whole numbers up to a half's total: each half's score of every count once, then
        # looked up (the same numbers as score_events on the proportions, computed on fewer of them)
        low, high = _score_tables(totals, largest, n_certify, a)
        scores = (np.take(low, score_x[:, None] * largest + in_sums.astype(np.int64))
                  - np.take(high, score_y[:, None] * largest + out_sums.astype(np.int64)))
    else:
        p_in = in_sums / totals[score_x][:, None]
        p_out = (out_sums + 0.5) / (totals[score_y][:, None] + 1.0)  # a pilot zero is not a certified zero
        scores = score_events(p_in, p_out, n_certify, a)
    best = np.argmax(scores, axis=1)
    rows = np.arange(order.shape[0])
    masks = np.zeros(order.shape, dtype=bool)
    masks[rows[:, None], order] = np.arange(order.shape[1])[None, :] <= best[:, None]
    return scores[rows, best], masks


def _score_tables(totals: np.ndarray, largest: int, n_certify: int, a: float) -> tuple[np.ndarray, np.ndarray]:
    """``log`` of the Wilson bounds of :func:`~dpdist.audit._statistics.score_events` for a prefix count of
    ``0 .. largest - 1`` of each half (flat, ``half * largest + count``): the lower one of ``count / total`` (the
    event's input), the upper one of ``(count + 0.5) / (total + 1)`` (the other input)."""
    k = np.arange(largest, dtype=np.float64)[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):  # counts above a half's total are never looked up
        low = np.log(wilson_bound(k / totals[:, None], n_certify, a, -1.0))
        high = np.log(wilson_bound((k + 0.5) / (totals[:, None] + 1.0), n_certify, a, 1.0))
    return low.ravel(), high.ravel()


def _directions(jobs: list[tuple[int, int, tuple[int, ...] | None, np.ndarray, np.ndarray]], n_certify: int, a: float
                ) -> list[Event]:
    """Both directions of each pair, each with both halves' roles (order on one, score on the other): the best of
    each direction as an Event, pair by pair (the events in the order of ``jobs``, first direction first).

    ``jobs`` holds ``(first, second, columns, halves of first, halves of second)``, halves a (2, cells) array of
    counts.  The pairs with as many cells are scored in one :func:`_best_prefixes` call (its rows are independent),
    so a protocol with many pairs pays a few calls per stage, not one per pair.
    """
    groups: dict[int, list[int]] = {}
    for at, job in enumerate(jobs):
        groups.setdefault(job[3].shape[1], []).append(at)
    best: list[tuple[float, np.ndarray] | None] = [None] * (2 * len(jobs))
    for members in groups.values():
        # rows (job, direction, h): x orders on half h and is scored on half 1 - h, against y; the distinct halves
        # arrays stacked once and gathered (pairs share inputs)
        distinct: dict[int, int] = {}
        pool: list[np.ndarray] = []
        sides = []
        for at in members:
            for halves in (jobs[at][3], jobs[at][4]):
                if id(halves) not in distinct:
                    distinct[id(halves)] = len(pool)
                    pool.append(halves)
                sides.append(distinct[id(halves)])
        side = np.asarray(sides, dtype=np.int64).reshape(-1, 2)
        x = np.repeat(np.stack([side[:, 0], side[:, 1]], axis=1).ravel(), 2)  # per row: whose events are scored
        y = np.repeat(np.stack([side[:, 1], side[:, 0]], axis=1).ravel(), 2)
        h = np.tile(np.array([0, 1]), x.size // 2)
        scores, masks = _best_prefixes(np.stack(pool), x, y, h, n_certify, a)
        for slot, at in enumerate(members):
            for direction in (0, 1):
                row = 4 * slot + 2 * direction
                pick = row + 1 if scores[row + 1] > scores[row] else row  # the first of the best, as max() over (h=0, h=1)
                best[2 * at + direction] = (float(scores[pick]), masks[pick])
    events = []
    for at, (first, second, columns, _, _) in enumerate(jobs):
        for direction, (scored, other) in enumerate(((first, second), (second, first))):
            found = best[2 * at + direction]
            assert found is not None
            events.append(Event(int(scored), int(other), columns, found[1], found[0]))
    return events


def _halves(codes: np.ndarray, cells: int) -> np.ndarray:
    """Counts per cell of the even and of the odd rows."""
    return np.stack([np.bincount(codes[h::2], minlength=cells) for h in (0, 1)]).astype(np.float64)


def choose_events(
    pilot: list[np.ndarray], cell_map: CellMap, pairs: np.ndarray, n_certify: int, a: float, keep: int, joint_columns: int
) -> list[Event]:
    """The ``keep`` best events over ``pairs`` (rows of input indices, both directions of each).

    Parameters
    ----------
    pilot : list of arrays
        Each audited input's pilot rows of outputs.
    pairs : (p, 2) int array
        Unordered pairs of input indices.
    n_certify : int
        Fresh samples per input the events will be certified on (the score's scale).
    a : float
        Level of each one-sided bound of the certificate.
    joint_columns : int
        The most columns a columns-mode event looks at jointly.
    """
    found: list[Event] = []
    if cell_map.codebook is not None:
        cells = cell_map.row_cells()
        halves = [_halves(cell_map.row_codes(rows), cells) for rows in pilot]
        found.extend(_directions([(int(i), int(j), None, halves[i], halves[j]) for i, j in pairs], n_certify, a))
    if cell_map.columns > 1 or cell_map.codebook is None or not all(cell_map.discrete):
        # a column of many reals: its quantile levels too (distinct reals as cells never recur)
        found.extend(_column_events(pilot, cell_map, pairs, n_certify, a, joint_columns))
    found.sort(key=lambda event: -event.score)
    return found[:keep]


def _column_events(pilot, cell_map: CellMap, pairs, n_certify, a, joint_columns) -> list[Event]:
    """Per pair: the columns whose marginal levels differ most (total variation), their joint level sets; and the
    columns with most mass on levels one input reaches and the other never does (an output set that depends on the
    input: the float grid of textbook noise, Mironov 2012, in the lowest-set-bit columns of :mod:`._floats`)."""
    radix = cell_map.level_counts()
    everything = np.arange(cell_map.columns)
    levels = [cell_map.column_levels(rows, everything) for rows in pilot]
    marginals = np.stack([
        np.bincount((lv + everything * int(radix.max())).ravel(), minlength=lv.shape[1] * int(radix.max())).reshape(
            lv.shape[1], -1) / len(lv)
        for lv in levels
    ])  # (inputs, columns, levels)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    first, second = marginals[pairs[:, 0]], marginals[pairs[:, 1]]
    distances = 0.5 * np.abs(first - second).sum(axis=2)  # (pairs, columns)
    unreached = (first * (second == 0)).sum(axis=2) + (second * (first == 0)).sum(axis=2)
    halves: dict[tuple[int, tuple[int, ...]], np.ndarray] = {}  # (input, columns): pairs share inputs and columns
    jobs: list[tuple[int, int, tuple[int, ...] | None, np.ndarray, np.ndarray]] = []
    for (i, j), by_distance, by_support in zip(pairs.tolist(), distances, unreached):
        choices = {_chosen(np.argsort(-by_distance, kind="stable"), radix, joint_columns)}
        if by_support.max() > 0:
            choices.add(_chosen(np.argsort(-by_support, kind="stable")[: np.count_nonzero(by_support)], radix,
                                joint_columns))
        for chosen_columns in sorted(choices):
            cells = cell_map.joint_cells(chosen_columns)
            for k in (i, j):
                if (k, chosen_columns) not in halves:
                    halves[k, chosen_columns] = _halves(
                        _joint(levels[k][:, list(chosen_columns)], radix[list(chosen_columns)]), cells)
            jobs.append((i, j, chosen_columns, halves[i, chosen_columns], halves[j, chosen_columns]))
    return _directions(jobs, n_certify, a)


def _chosen(ranked: np.ndarray, radix: np.ndarray, joint_columns: int) -> tuple[int, ...]:
    """The first ``joint_columns`` of the ``4 * joint_columns`` best ranked columns whose joint cells stay at most
    4,096, in column order."""
    chosen: list[int] = []
    for column in ranked[: max(joint_columns, 1) * 4].tolist():
        if len(chosen) == joint_columns:
            break
        if math.prod(int(radix[c]) for c in chosen + [column]) <= 4096:
            chosen.append(column)
    return tuple(sorted(chosen))


def _joint(levels: np.ndarray, radix: np.ndarray) -> np.ndarray:
    code = np.zeros(levels.shape[0], dtype=np.int64)
    for position in range(levels.shape[1]):
        code = code * radix[position] + levels[:, position]
    return code
