"""Drawing a randomizer's outputs for the auditor: calls that look like ordinary use, outputs as rows of numbers.

**Calls.**  Each call's make-up is drawn at random, as a column of ordinary use would be: its size
log-uniform between 1 and a cap, its inputs multinomial with proportions drawn from a Dirichlet(1/2) (skewed:
most calls hold a few inputs in large numbers and miss others), shuffled; only the totals per input are
fixed (each input's outputs of a stage come to exactly the stage's size).  Beside these mixed calls, a
:func:`draw_single` stage calls the randomizer with one value at a time, as a device does, so that a
randomizer whose output ``i`` does not belong to input ``i`` (it sorts or shuffles the values of a call) is
audited as the device would run it.  The generator handed to the randomizer is always a NumPy ``Generator``
on ``AESCounter`` (dpdist's CSPRNG, what its clients pass in ordinary use), keyed from the audit's stream, so
its type does not tell a seeded audit from use.  None of this defeats a randomizer that *detects* the audit
(by its call pattern, count or timing, its process, an environment variable) and behaves only then: no black
box can (docs/explanation/auditing.md, "What a black box cannot see").

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

from .._rng import keyed_generator
from ..errors import InvalidParameterError
from ._floats import FLOAT_COLUMNS, bit_columns
from ._randomizer import Randomizer

__all__ = ["as_columns", "OutputLayout", "draw_mixed", "draw_single", "handed_generator", "CALL_VALUES", "CALL_ENTRIES",
           "RAGGED_WIDTH"]

#: Values asked for in one call of the randomizer, at most (and numbers, rows x columns, of its outputs).
CALL_VALUES, CALL_ENTRIES = 1 << 16, 1 << 22
#: Numbers kept of an output of value-dependent length (after its length).
RAGGED_WIDTH = 16
#: What non-finite outputs become (fixed: a post-processing).
NAN_AS, INF_AS = -2e300, 1e300
#: The row of a value whose one-value call raised (every number of it).
REFUSED_AS = -3e300


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


def handed_generator(rng: np.random.Generator) -> np.random.Generator:
    """The generator the randomizer is handed: dpdist's CSPRNG type (AES-CTR), keyed from the audit's stream."""
    return keyed_generator(rng)


def draw_mixed(
    randomizer: Randomizer, inputs: np.ndarray, count: int, rng: np.random.Generator, layout: OutputLayout,
    handed: np.random.Generator | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``count`` outputs of every input, as ``(labels, rows)`` per call: ``labels[i]`` the index of the input
    whose output is ``rows[i]``.  Each call's make-up is random (module docstring); ``handed`` is the generator
    the randomizer draws from (``rng``, which draws the make-ups, when not given)."""
    n = len(inputs)
    remaining = np.full(n, count, dtype=np.int64)
    handed = rng if handed is None else handed
    while remaining.sum() > 0:
        take = _make_up(remaining, layout, rng)
        if take.sum() == 0:
            continue
        labels = rng.permutation(np.repeat(np.arange(n), take))
        yield labels, _call(randomizer, inputs[labels], handed, layout)
        remaining -= take


def _make_up(remaining: np.ndarray, layout: OutputLayout, rng: np.random.Generator) -> np.ndarray:
    """How many values of each input the next call holds (at most ``remaining``).

    A size log-uniform up to the cap and multinomial proportions from a Dirichlet(1/2).  The first call of an
    audit (it fixes the layout: outputs whose length depends on the value show only in a call that mixes them)
    holds every input once and up to as many more values at random, so its outputs stay small.
    """
    n = remaining.size
    if layout.columns is None:
        extra = rng.multinomial(int(rng.integers(0, n + 1)), rng.dirichlet(np.full(n, 0.5)))
        return np.minimum(1 + extra, remaining)
    cap = max(1, min(CALL_VALUES, CALL_ENTRIES // max(layout.columns, 1)))
    size = int(math.exp(rng.uniform(0.0, math.log(cap + 1))))
    weights = rng.dirichlet(np.full(n, 0.5)) * (remaining > 0)
    if not weights.sum() > 0:  # every remaining input drew a weight of 0 (underflow): the rest evenly
        weights = (remaining > 0).astype(np.float64)
    return np.minimum(rng.multinomial(max(size, 1), weights / weights.sum()), remaining)


def draw_single(
    randomizer: Randomizer, inputs: np.ndarray, count: int, rng: np.random.Generator, layout: OutputLayout,
    handed: np.random.Generator | None = None, chunk: int = 512,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``count`` outputs of every input from calls of one value each (as a device calls), in random order,
    yielded as ``(labels, rows)`` of up to ``chunk`` calls at a time; for a randomizer whose
    ``repeated_value_calls`` says a call repeating one value is as many calls of it, calls of ``count`` copies
    of one input each (:func:`_repeated_value_calls`)."""
    handed = rng if handed is None else handed
    if randomizer.repeated_value_calls:
        yield from _repeated_value_calls(randomizer, inputs, count, rng, layout, handed)
        return
    labels = rng.permutation(np.repeat(np.arange(len(inputs)), count))
    for start in range(0, labels.size, chunk):
        part = labels[start:start + chunk]
        yield part, np.concatenate([_call(randomizer, inputs[[label]], handed, layout) for label in part.tolist()])


def _repeated_value_calls(randomizer: Randomizer, inputs: np.ndarray, count: int, rng: np.random.Generator,
                          layout: OutputLayout, handed: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``count`` outputs of every input, the inputs in random order, each from calls repeating that input alone (at
    most the call cap of :func:`_make_up` values a call): a sort or shuffle within a call moves no output to
    another input, and the calls cost what the mixed stages' do, not a Python call per output."""
    cap = max(1, min(CALL_VALUES, CALL_ENTRIES // max(layout.columns or 1, 1)))
    for index in rng.permutation(len(inputs)).tolist():
        for start in range(0, count, cap):
            labels = np.full(min(cap, count - start), index, dtype=np.int64)
            yield labels, _call(randomizer, inputs[labels], handed, layout)


def _call(randomizer: Randomizer, values: np.ndarray, rng: np.random.Generator, layout: OutputLayout) -> np.ndarray:
    """The rows of one call.  When a call raises, its values are called again one at a time (as devices call),
    and a value whose own call raises gets a refusal row (every number :data:`REFUSED_AS`): an exception is then
    what leaves the device, an output like any other, and one that depends on the value is a leak to certify.
    Refused only when every value raises alone before any call succeeded (the randomizer's own failure: one line
    naming it, the cause chained)."""
    try:
        return _rows(randomizer, values, rng, layout)
    except _Raised as raised:
        error = raised.__cause__
    pieces: list[np.ndarray | None] = []
    for value in values:  # a device's calls: one value each (only after a call raised)
        try:
            pieces.append(_rows(randomizer, value[None], rng, layout))
        except _Raised as raised:
            pieces.append(None)
            error = raised.__cause__
    if layout.columns is None:
        raise _failure(randomizer, values, error) from error
    width = layout.columns + 2 * len(layout.floats)
    return np.concatenate([np.full((1, width), REFUSED_AS) if piece is None else piece.astype(np.float64)
                           for piece in pieces])


class _Raised(Exception):
    """The randomizer raised (its exception is the cause)."""


def _rows(randomizer: Randomizer, values: np.ndarray, rng: np.random.Generator, layout: OutputLayout) -> np.ndarray:
    try:
        outputs = randomizer.sample(values, rng)
        if randomizer.features is not None:
            outputs = randomizer.features(outputs)
    except MemoryError:
        raise
    except Exception as error:  # the randomizer's own exception: _call decides
        raise _Raised() from error
    rows = as_columns(outputs, randomizer.name, layout)
    if rows.shape[0] != len(values):
        raise InvalidParameterError(
            f"The 'randomizer' {randomizer.name} must return one output per input value: given {len(values)} values, "
            f"it returned {rows.shape[0]} outputs."
        )
    return rows


def _failure(randomizer: Randomizer, values: np.ndarray, error) -> InvalidParameterError:
    return InvalidParameterError(
        f"The 'randomizer' {randomizer.name} raised {type(error).__name__} when called with {len(values)} "
        f"values, and on each of them alone: {error}. (An exception that depends on the private value is itself a "
        f"leak when it leaves the device: the audit certifies it as an output when other calls pass.)"
    )
