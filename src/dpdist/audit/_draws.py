"""Drawing a randomizer's outputs for the auditor: calls that look like ordinary use, outputs as rows of numbers.

**Calls.**  Each call holds every audited input the same number of times, shuffled, and that number is
drawn log-uniformly between 1 and a cap, so calls mix values and vary in size: a randomizer that behaves
well only on batches of one repeated value, or of one size, is audited on other batches too.  This does not
defeat a randomizer that *detects* the audit (by its batch sizes, call count, time or process) and behaves
only then: no black box can (docs/audit.md, "What a black box cannot see").

**Rows.**  Outputs become an ``(n, k)`` array of numbers (:func:`as_columns`), every map a fixed function
of one output (a post-processing, which keeps every bound valid: Dwork & Roth 2014, Proposition 2.1):
booleans as 0/1, a structured array's fields as columns, more dimensions flattened, non-finite numbers as
sentinels (NaN as -2e300, +-inf as +-1e300: an output that is NaN for some inputs is itself a leak to
certify), and outputs of value-dependent length (a ragged sequence) as their length followed by their
first :data:`RAGGED_WIDTH` numbers.  The shape of the first call's rows is the shape of all: a later call
of another shape is refused (:class:`~dpdist.errors.InvalidParameterError`).  Float outputs also get the
binary exponent and lowest set bit of their first columns (:mod:`~dpdist.audit._floats`): an output whose
set of possible doubles depends on the input is a leak to certify.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np
from numpy.lib import recfunctions

from ..errors import InvalidParameterError
from ._floats import FLOAT_COLUMNS, bit_columns
from ._randomizer import Randomizer

__all__ = ["as_columns", "OutputLayout", "draw_mixed", "CALL_VALUES", "CALL_ENTRIES", "RAGGED_WIDTH"]

#: Values asked for in one call of the randomizer, at most (and numbers, rows x columns, of its outputs).
CALL_VALUES, CALL_ENTRIES = 1 << 16, 1 << 22
#: Numbers kept of an output of value-dependent length (after its length).
RAGGED_WIDTH = 16
#: What non-finite outputs become (fixed: a post-processing).
NAN_AS, INF_AS = -2e300, 1e300


@dataclass
class OutputLayout:
    """The shape of a randomizer's rows, fixed by its first call (``float_bits``: add the bit columns of
    :mod:`~dpdist.audit._floats` to float outputs; ``floats``: which columns get them, fixed by the first call)."""

    columns: int | None = None
    ragged: bool = False
    float_bits: bool = False
    floats: tuple[int, ...] = ()


def as_columns(outputs, owner: str = "audit", layout: OutputLayout | None = None) -> np.ndarray:
    """A randomizer's outputs as an ``(n, k)`` array of numbers, one row per output (module docstring)."""
    layout = OutputLayout() if layout is None else layout
    try:
        array = np.asarray(outputs)
    except ValueError:  # a sequence of outputs of different lengths
        array = None
    if array is None or layout.ragged or (array.dtype == object and array.ndim == 1 and _all_sequences(array)):
        if layout.columns is not None and not layout.ragged:
            raise _shape_error(owner, "outputs of different lengths", layout.columns)
        array = _ragged(outputs, owner)
        layout.ragged = True
    if array.dtype.names is not None:
        array = recfunctions.structured_to_unstructured(array, dtype=np.float64)
    if array.dtype == bool:
        array = array.astype(np.uint8)
    if array.dtype.kind not in "biuf":
        raise InvalidParameterError(
            f"The 'outputs' of the randomizer given to {owner} must be numbers, booleans or a structured array of "
            f"numbers (give a 'features' function for other outputs). Got dtype {array.dtype}."
        )
    if array.ndim == 0:
        raise InvalidParameterError(f"The 'outputs' of the randomizer given to {owner} must have one row per input.")
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        array = np.nan_to_num(array.astype(np.float64), nan=NAN_AS, posinf=INF_AS, neginf=-INF_AS)
    rows = array.reshape(array.shape[0], -1)
    if layout.columns is None:
        layout.columns = rows.shape[1]
        if layout.float_bits and rows.dtype.kind == "f" and not layout.ragged:
            layout.floats = tuple(range(min(FLOAT_COLUMNS, rows.shape[1])))
    elif rows.shape[1] != layout.columns:
        raise _shape_error(owner, f"outputs of {rows.shape[1]} numbers", layout.columns)
    if layout.floats:
        rows = np.column_stack([rows.astype(np.float64), bit_columns(rows[:, list(layout.floats)])])
    return rows


def _all_sequences(array: np.ndarray) -> bool:
    return array.size > 0 and all(isinstance(item, (list, tuple, np.ndarray)) for item in array.tolist())


def _ragged(outputs, owner: str) -> np.ndarray:
    """Outputs of different lengths as rows ``(length, first RAGGED_WIDTH numbers, zeros after the end)``."""
    items = [np.asarray(item).ravel() for item in outputs]
    rows = np.zeros((len(items), 1 + RAGGED_WIDTH), dtype=np.float64)
    for row, item in zip(rows, items):  # outputs of different lengths cannot be one array: one at a time
        if item.dtype.kind not in "biuf":
            raise InvalidParameterError(
                f"The 'outputs' of the randomizer given to {owner} must be numbers (give a 'features' function for "
                f"other outputs). Got an output of dtype {item.dtype}."
            )
        row[0] = item.size
        row[1 : 1 + min(item.size, RAGGED_WIDTH)] = item[:RAGGED_WIDTH]
    return rows


def _shape_error(owner: str, got: str, columns: int) -> InvalidParameterError:
    return InvalidParameterError(
        f"The 'outputs' of the randomizer given to {owner} must keep one shape across calls: {got} after outputs of "
        f"{columns} numbers (give a 'features' function mapping every output to the same numbers)."
    )


def draw_mixed(
    randomizer: Randomizer, inputs: np.ndarray, count: int, rng: np.random.Generator, layout: OutputLayout
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``count`` outputs of every input, as ``(labels, rows)`` per call: ``labels[i]`` the index of the input
    whose output is ``rows[i]``.  The first call of an audit holds each input once (it fixes the layout)."""
    n = len(inputs)
    remaining = count
    while remaining > 0:
        if layout.columns is None:
            per_input = 1
        else:
            cap = max(1, min(CALL_VALUES // n, CALL_ENTRIES // (n * max(layout.columns, 1))))
            per_input = min(remaining, int(math.exp(rng.uniform(0.0, math.log(cap + 1)))))
            per_input = max(per_input, 1)
        labels = rng.permutation(np.repeat(np.arange(n), per_input))
        yield labels, _call(randomizer, inputs[labels], rng, layout)
        remaining -= per_input


def _call(randomizer: Randomizer, values: np.ndarray, rng: np.random.Generator, layout: OutputLayout) -> np.ndarray:
    try:
        outputs = randomizer.sample(values, rng)
        if randomizer.features is not None:
            outputs = randomizer.features(outputs)
    except MemoryError:
        raise
    except Exception as error:  # the randomizer's own failure: one line naming it, the cause chained
        raise InvalidParameterError(
            f"The 'randomizer' {randomizer.name} raised {type(error).__name__} when called with {len(values)} "
            f"values: {error}"
        ) from error
    rows = as_columns(outputs, randomizer.name, layout)
    if rows.shape[0] != len(values):
        raise InvalidParameterError(
            f"The 'randomizer' {randomizer.name} must return one output per input value: given {len(values)} values, "
            f"it returned {rows.shape[0]} outputs."
        )
    return rows
