"""The inputs the conformance checks feed a protocol: fixed, seeded and kind-aware.

A ``"frequency"`` or ``"heavy_hitters"`` protocol takes items ``0 .. domain_size - 1`` (``tags.takes_items``); a ``"numerical"``
protocol takes reals in ``bounds``.  Those two attributes (and ``tags.kind``) are
all the checks assume about a protocol's inputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .._types import Seed

if TYPE_CHECKING:
    from ..local import LocalProtocol

__all__ = ["channel_inputs", "population"]


def domain_size(protocol: LocalProtocol) -> int:
    """``protocol.domain_size``, which a protocol whose ``tags.takes_items`` has."""
    return int(cast(Any, protocol).domain_size)


def bounds(protocol: LocalProtocol) -> tuple[float, float]:
    """``protocol.bounds``, which a ``"numerical"`` protocol has."""
    low, high = cast(Any, protocol).bounds
    return float(low), float(high)


def channel_inputs(protocol: LocalProtocol, rng: Seed = None) -> np.ndarray:
    """The inputs whose channel rows the privacy checks compare.

    Every item for a frequency protocol; for a numerical one both bounds, the
    quartiles and three seeded uniform points in between.
    """
    if protocol.tags.takes_items:
        return np.arange(domain_size(protocol))
    lo, hi = bounds(protocol)
    generator = np.random.default_rng(12345 if rng is None else rng)
    fixed = lo + (hi - lo) * np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    return np.concatenate([fixed, generator.uniform(lo, hi, 3)])


def population(protocol: LocalProtocol, n: int, rng: Seed = 0) -> np.ndarray:
    """A fixed, non-uniform population of ``n`` values for the protocol.

    Items get weights proportional to ``(v + 1)^2``; reals follow a Beta(5, 2)
    law stretched over the bounds, so no check runs on a symmetric special case.
    """
    generator = np.random.default_rng(rng)
    if protocol.tags.takes_items:
        d = domain_size(protocol)
        weights = np.arange(1, d + 1, dtype=float) ** 2
        counts = np.floor(n * weights / weights.sum()).astype(int)
        counts[0] += n - counts.sum()
        return generator.permutation(np.repeat(np.arange(d), counts))
    lo, hi = bounds(protocol)
    return lo + (hi - lo) * generator.beta(5, 2, size=n)
