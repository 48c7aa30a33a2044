r"""The black-box certificate: a lower bound on a randomizer's realized epsilon from its samples alone.

The design (every number in it is fixed before the samples it governs are drawn):

1. a **pilot** of ``pilot`` outputs per audited input chooses how outputs become cells
   (:class:`~dpdist.audit._cells.CellMap`) and the ``keep`` most promising output events over all
   pairs of inputs and both directions (:func:`~dpdist.audit._events.choose_events`);
2. **stages** of fresh outputs, doubling in size, certify those events: for an event :math:`E` with
   :math:`k` of :math:`n` outputs of input :math:`x` in it and :math:`k'` of :math:`n` of :math:`x'`,
   :math:`\varepsilon \ge \ln(p_-/q_+)` with one-sided Clopper-Pearson bounds (Clopper & Pearson 1934);
   each later stage chooses its events again from every output drawn before it (independent of
   its own fresh outputs, so the choice costs nothing);
3. every bound of every stage is at level :math:`a = \alpha / (2 L K)` for :math:`L` stages of
   :math:`K` events (a union bound: all :math:`2LK` one-sided bounds hold at once with probability
   :math:`\ge 1 - \alpha`), so the largest bound of the audit, and the verdict, are valid at
   confidence :math:`1 - \alpha` however early the audit stops;
4. the audit **stops** at the first stage whose bound exceeds the claim (a violation is certified:
   a broken randomizer costs a few stages), else after the last (a bounded budget);
5. a local audit ends with one more stage, on its own pilot, whose outputs come from calls of one value each
   (as a device calls: :func:`single_value_plan`), counted in :math:`L`: a randomizer that sorts or
   shuffles the values of a call, so that output :math:`i` is not input :math:`i`'s, is audited as it runs.

This is the distinguishability audit of Arcolezi & Gambs (2023, arXiv:2309.01597, Sec. 4) with the
event found from data rather than from each protocol's attack, and with the multiple comparisons
paid for explicitly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidParameterError
from ._cells import CellMap
from ._draws import OutputLayout, draw_mixed, draw_single, handed_generator
from ._events import Event, choose_events
from ._randomizer import Randomizer
from ._result import Stage
from ._statistics import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    detectable_epsilon,
    epsilon_lower_bound,
    smallest_examined_probability,
)

__all__ = ["BlackBox", "stage_sizes", "single_value_plan", "run_black_box"]

#: Entries of outputs (rows x columns, all inputs) kept for choosing events.
KEPT_ENTRIES = 1 << 25
#: Rows pooled to fit the cell map.
FIT_ROWS = 1 << 15


@dataclass(frozen=True)
class BlackBox:
    """What the black-box audit found."""

    certified: float
    witness: dict
    stages: tuple[Stage, ...]
    samples_per_input: int
    level: float
    witness_power_loss: float
    planned: int
    largest_stage: int
    smallest_examined: float


def stage_sizes(samples: int, pilot: int, sequential: bool) -> list[int]:
    """Fresh outputs per input of each stage: doubling from ``pilot`` while the budget lasts (the remainder
    joins the last stage); one stage of everything after the pilot when not ``sequential``."""
    remaining = samples - pilot
    if not sequential:
        return [remaining]
    sizes: list[int] = []
    size = pilot
    while remaining >= size:
        sizes.append(size)
        remaining -= size
        size *= 2
    if sizes:
        sizes[-1] += remaining
    else:
        sizes = [remaining]
    return sizes


def single_value_plan(samples: int, claim: float) -> tuple[int, int]:
    r"""Outputs per input of the one-value stage's pilot and of its stage (calls of one value, as a device makes).

    Enough that an identity hidden behind a call's order (outputs sorted or shuffled within the call) is
    certified above the claim: a stage of :math:`n` outputs certifies such a leak up to about
    :math:`\ln(n / \ln(1/a))`, so :math:`n` grows as :math:`e^{\text{claim}}` (256 at claims up to 1.4), at
    most an eighth of ``samples`` and 8,192; its pilot a quarter of it.
    """
    stage = int(min(samples // 8, 8192, max(256, math.ceil(60 * math.exp(claim)))))
    return max(16, stage // 4), stage


def _pilot(draw, inputs: np.ndarray, pilot: int, name: str) -> list[np.ndarray]:
    """``pilot`` outputs of each input (``draw``'s calls), grouped by input; refused when they would not fit in memory."""
    labels, parts = [], []
    for call_labels, rows in draw(pilot):
        if pilot * len(inputs) * rows.shape[1] > KEPT_ENTRIES:
            raise InvalidParameterError(
                f"The 'randomizer' {name} returns outputs of {rows.shape[1]} numbers each: a pilot of "
                f"{pilot} outputs of each of {len(inputs)} inputs would keep {pilot * len(inputs) * rows.shape[1]:,} "
                f"numbers, above {KEPT_ENTRIES:,}. Give a 'features' function (fewer numbers per output) or a "
                f"smaller 'pilot'."
            )
        labels.append(call_labels)
        parts.append(rows)
    every, rows = np.concatenate(labels), np.concatenate(parts)
    order = np.argsort(every, kind="stable")
    return np.split(rows[order], np.cumsum(np.bincount(every, minlength=len(inputs)))[:-1])


@dataclass
class _Look:
    """The running state of the certifying stages: the best bound so far, its witness, the stages."""

    level: float
    best: tuple[float, dict, float, int] = (0.0, {}, 0.0, 0)
    stages: list = field(default_factory=list)
    drawn: int = 0
    run: list = field(default_factory=list)


def _certify_stages(draw, kept: list[np.ndarray], sizes: list[int], look: _Look, inputs, pairs, claim: float,
                    delta: float, keep: int, bins: int, max_cells: int, layout: OutputLayout, rng) -> bool:
    """Certify ``sizes`` stages of ``draw``'s fresh outputs, each on events chosen from the outputs before it (kept
    in ``kept``); True when a stage certified more than the claim (the audit stops there)."""
    columns = kept[0].shape[1]
    cap = max(len(kept[0]), KEPT_ENTRIES // max(1, len(inputs) * columns))
    for size in sizes:
        pooled = np.concatenate(kept)
        fit_rows = pooled if len(pooled) <= FIT_ROWS else pooled[rng.choice(len(pooled), FIT_ROWS, replace=False)]
        cell_map = CellMap.fit(fit_rows, bins, max_cells, planes=layout.float_bits,
                               grains=len(layout.floats))
        events = choose_events(kept, cell_map, pairs, size, look.level, keep, joint_columns=3)
        counts = np.zeros((len(events), 2), dtype=np.int64)
        more: list[list[np.ndarray]] = [[] for _ in inputs]
        room = [cap - len(rows) for rows in kept]
        for labels, rows in draw(size):
            counts += _event_counts(events, cell_map, labels, rows)
            for index in range(len(inputs)):
                if room[index] > 0:
                    taken = rows[labels == index][: room[index]]
                    more[index].append(taken)
                    room[index] -= len(taken)
        kept[:] = [np.concatenate([rows, *extra]) if extra else rows for rows, extra in zip(kept, more)]
        look.drawn += size
        look.run.append(size)
        bounds = epsilon_lower_bound(counts[:, 0], size, counts[:, 1], size, look.level, delta)
        top = int(np.argmax(bounds))
        stage_bound = float(bounds[top])
        look.stages.append(Stage(look.drawn, stage_bound))
        if stage_bound >= look.best[0] or not look.best[1]:
            witness = _witness(events[top], cell_map, inputs, counts[top], size, look.level)
            look.best = (stage_bound, witness, counts[top, 0] / size, size)
        if stage_bound > claim:
            return True
    return False


def run_black_box(
    randomizer: Randomizer,
    inputs: np.ndarray,
    pairs: np.ndarray,
    claim: float,
    alpha: float,
    samples: int,
    pilot: int,
    sequential: bool,
    keep: int,
    bins: int,
    max_cells: int,
    rng: np.random.Generator,
    delta: float = 0.0,
    float_bits: bool = True,
    single: bool = False,
) -> BlackBox:
    """Run the staged audit (module docstring); ``samples`` outputs per input at most, pilot included, and with
    ``single`` a last stage of one-value calls (:func:`single_value_plan`, on its own pilot) when none before it
    certified a violation.

    ``pairs`` are the pairs of inputs compared (every pair for a local randomizer; neighbouring datasets for a
    central release); ``delta`` is subtracted from each lower bound (an (epsilon, delta) claim)."""
    sizes = stage_sizes(samples, pilot, sequential)
    single_pilot, single_stage = single_value_plan(samples, claim) if single else (0, 0)
    look = _Look(alpha / (2 * (len(sizes) + (1 if single else 0)) * keep))
    layout, handed = OutputLayout(float_bits=float_bits), handed_generator(rng)
    settings = (inputs, pairs, claim, delta, keep, bins, max_cells, layout, rng)

    def mixed(count):
        return draw_mixed(randomizer, inputs, count, rng, layout, handed)

    look.drawn = pilot
    stopped = _certify_stages(mixed, _pilot(mixed, inputs, pilot, randomizer.name), sizes, look, *settings)
    if single and not stopped:
        def one_value(count):
            return draw_single(randomizer, inputs, count, rng, layout, handed)

        look.drawn += single_pilot
        _certify_stages(one_value, _pilot(one_value, inputs, single_pilot, randomizer.name), [single_stage], look,
                        *settings)
    certified, witness, p_in, size = look.best
    power_loss = detectable_epsilon(p_in, size, look.level, claim) if p_in > 0 else math.inf
    largest = max(look.run)
    floor = smallest_examined_probability(look.run, look.level, claim, 1.0 - alpha, delta)
    return BlackBox(certified, witness, tuple(look.stages), look.drawn, look.level, power_loss,
                    len(sizes) + (1 if single else 0), largest, floor)


def _event_counts(events: list[Event], cell_map: CellMap, labels: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``(events, 2)``: how many outputs of each event's first and second input are in it.

    What :meth:`Event.contains` says of each row, with the work shared between the events: the rows' codes
    (rows mode) and their levels in every column an event looks at are computed once for the call.
    """
    counts = np.zeros((len(events), 2), dtype=np.int64)
    row_codes = cell_map.row_codes(rows) if any(event.columns is None for event in events) else None
    used = sorted({column for event in events if event.columns is not None for column in event.columns})
    levels = cell_map.column_levels(rows, used) if used else None
    where = {column: position for position, column in enumerate(used)}
    radix = cell_map.level_counts()
    for e, event in enumerate(events):
        first, second = labels == event.first, labels == event.second
        if event.columns is None:
            assert row_codes is not None
            inside = event.cells[row_codes]
        else:
            assert levels is not None
            either = first | second
            code = np.zeros(int(np.count_nonzero(either)), dtype=np.int64)
            for column in event.columns:  # CellMap.joint_codes of the rows of the two inputs
                code = code * radix[column] + levels[either, where[column]]
            inside = np.zeros(len(rows), dtype=bool)
            inside[either] = event.cells[code]
        counts[e, 0] = np.count_nonzero(inside & first)
        counts[e, 1] = np.count_nonzero(inside & second)
    return counts


def _witness(event: Event, cell_map: CellMap, inputs: np.ndarray, counts: np.ndarray, size: int, level: float) -> dict:
    return {
        "input": inputs[event.first].tolist(),
        "other_input": inputs[event.second].tolist(),
        "event": event.describe(cell_map),
        "count": int(counts[0]),
        "other_count": int(counts[1]),
        "samples": int(size),
        "probability_low": float(clopper_pearson_lower(counts[0], size, level)),
        "other_probability_high": float(clopper_pearson_upper(counts[1], size, level)),
        "level": float(level),
    }
