"""What the auditor is given: a randomizer, as a function of input values, and what is known about it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


__all__ = ["Randomizer"]


@dataclass(frozen=True)
class Randomizer:
    """A local randomizer to audit.

    Attributes
    ----------
    sample : callable
        ``sample(values, rng) -> outputs``: one output per input value (a row of
        ``values`` for inputs that are rows, e.g. a device's history of ``T`` values),
        vectorized over the values.  ``rng`` is a ``numpy.random.Generator``; a randomizer
        that draws from its own source ignores it (and says so with ``seeded=False``).
    name : str
        Shown in the report.
    epsilon : float or None
        The epsilon it claims (``audit`` takes it from here when not given).
    domain : int, (low, high), array or None
        Its inputs: ``d`` items ``0..d-1``, real bounds, or the input values themselves
        (``audit`` takes them from here when not given).
    features : callable or None
        ``features(outputs) -> (n, k) numbers``: outputs as rows of numbers, for outputs
        that are not numbers (bytes, objects); a post-processing, so bounds stay valid.
    channel : callable or None
        ``channel(inputs) -> P[i, y]``, the stated output law of each input (white box).
    output_index : callable or None
        ``output_index(outputs) -> columns of channel`` (with ``channel``).
    seeded : bool
        Whether ``rng`` drives all of its randomness (a seeded audit then repeats exactly).
    hash_family : HashFamily or None
        A local-hashing randomizer's stated hash family: the audit then conditions its events on the
        hash (:mod:`dpdist.audit._hash_family`).
    notes : tuple of str
        What the adapter wants the report to say (e.g. a per-value Python loop inside a peer library).
    repeated_value_calls : bool
        Whether a call repeating one value ``k`` times gives what ``k`` calls of that value alone would
        (dpdist's protocols, whose ``privatize`` randomizes each value alone): the one-value stage is then drawn
        in such calls, one per input (:func:`~dpdist.audit._draws.draw_single`).  Outputs still cannot move
        between inputs (every value of such a call is the same, so a sort or shuffle within it hides nothing);
        what is taken on trust is only that a call of exactly one value behaves as a call of several copies.
    """

    sample: Callable[[np.ndarray, np.random.Generator], Any]
    name: str = "randomizer"
    epsilon: float | None = None
    domain: Any = None
    features: Callable[[Any], np.ndarray] | None = None
    channel: Callable[[np.ndarray], np.ndarray] | None = None
    output_index: Callable[[Any], np.ndarray] | None = None
    seeded: bool = True
    notes: tuple[str, ...] = field(default_factory=tuple)
    hash_family: Any = None
    repeated_value_calls: bool = False

    @property
    def white_box(self) -> bool:
        """Whether its channel is stated (and outputs can be placed in it)."""
        return self.channel is not None and self.output_index is not None
