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
   a broken randomizer costs a few stages), else after the last (a bounded budget).

This is the distinguishability audit of Arcolezi & Gambs (2023, arXiv:2309.01597, Sec. 4) with the
event found from data rather than from each protocol's attack, and with the multiple comparisons
paid for explicitly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidParameterError
from ._cells import CellMap, as_columns
from ._events import Event, choose_events
from ._randomizer import Randomizer
from ._result import Stage
from ._statistics import clopper_pearson_lower, clopper_pearson_upper, detectable_epsilon, epsilon_lower_bound

__all__ = ["BlackBox", "stage_sizes", "run_black_box"]

#: Rows of outputs drawn per call of the randomizer (and per input and chunk).
CHUNK = 1 << 16
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
    detectable: float
    planned: int


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


def _draw(randomizer: Randomizer, value: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` outputs of one input, as rows of numbers, drawn in chunks."""
    parts = []
    for start in range(0, count, CHUNK):
        size = min(CHUNK, count - start)
        values = np.repeat(value[None, ...], size, axis=0)
        outputs = randomizer.sample(values, rng)
        rows = randomizer.features(outputs) if randomizer.features is not None else outputs
        rows = as_columns(rows, randomizer.name)
        if rows.shape[0] != size:
            raise _count_error(randomizer, size, rows.shape[0])
        parts.append(rows)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _count_error(randomizer, expected, got):
    return InvalidParameterError(
        f"The 'randomizer' {randomizer.name} must return one output per input value: given {expected} values, "
        f"it returned {got} outputs."
    )


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
) -> BlackBox:
    """Run the staged audit (module docstring); ``samples`` outputs per input at most, pilot included."""
    sizes = stage_sizes(samples, pilot, sequential)
    level = alpha / (2 * len(sizes) * keep)
    kept: list[np.ndarray] = [_draw(randomizer, value, pilot, rng) for value in inputs]
    columns = kept[0].shape[1]
    cap = max(pilot, KEPT_ENTRIES // max(1, len(inputs) * columns))
    drawn = pilot
    stages: list[Stage] = []
    best: tuple[float, dict, float, int] = (0.0, {}, 0.0, 0)
    for size in sizes:
        pooled = np.concatenate(kept)
        fit_rows = pooled if len(pooled) <= FIT_ROWS else pooled[rng.choice(len(pooled), FIT_ROWS, replace=False)]
        cell_map = CellMap.fit(fit_rows, bins, max_cells)
        events = choose_events(kept, cell_map, pairs, size, level, keep, joint_columns=3)
        counts = np.zeros((len(events), 2), dtype=np.int64)
        for index, value in enumerate(inputs):
            fresh = _draw(randomizer, value, size, rng)
            for e, event in enumerate(events):
                if index in (event.first, event.second):
                    inside = int(np.count_nonzero(event.contains(cell_map, fresh)))
                    counts[e, 0 if index == event.first else 1] += inside
            if len(kept[index]) < cap:
                kept[index] = np.concatenate([kept[index], fresh[: cap - len(kept[index])]])
        drawn += size
        bounds = epsilon_lower_bound(counts[:, 0], size, counts[:, 1], size, level)
        top = int(np.argmax(bounds))
        stage_bound = float(bounds[top])
        stages.append(Stage(drawn, stage_bound))
        if stage_bound >= best[0] or not best[1]:
            witness = _witness(events[top], cell_map, inputs, counts[top], size, level)
            best = (stage_bound, witness, counts[top, 0] / size, size)
        if stage_bound > claim:
            break
    certified, witness, p_in, size = best
    detectable = detectable_epsilon(p_in, size, level, claim) if p_in > 0 else math.inf
    return BlackBox(certified, witness, tuple(stages), drawn, level, detectable, len(sizes))


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
