"""The inputs the conformance checks feed a protocol: fixed, seeded and kind-aware.

A ``"frequency"`` or ``"heavy_hitters"`` protocol takes items ``0 .. domain_size - 1`` (``tags.takes_items``); a ``"numerical"``
protocol takes reals in ``bounds``; a ``"multi"`` protocol takes records of its
``attributes`` (each with ``categorical``, ``domain_size`` or ``bounds``), as an
``(n, k)`` float array; a ``"key_value"`` protocol takes sets of (key, value) pairs of its
``domain_size`` keys, as an ``(n, d)`` float array of values in [-1, 1], NaN where a key is not held.
Those attributes (and ``tags.kind``) are all the checks assume about a protocol's inputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .._types import Seed

if TYPE_CHECKING:
    from ..local import LocalProtocol

__all__ = ["channel_inputs", "population", "true_frequencies"]

#: the most items per categorical attribute whose records the multi-attribute channel check enumerates
_RECORD_ITEMS = 8


def domain_size(protocol: LocalProtocol) -> int:
    """``protocol.domain_size``, which a protocol whose ``tags.takes_items`` has."""
    return int(cast(Any, protocol).domain_size)


def bounds(protocol: LocalProtocol) -> tuple[float, float]:
    """``protocol.bounds``, which a ``"numerical"`` protocol has."""
    low, high = cast(Any, protocol).bounds
    return float(low), float(high)


def record_attributes(protocol: LocalProtocol) -> tuple[Any, ...]:
    """``protocol.attributes``, which a ``"multi"`` protocol has (:class:`dpdist.local.multi.Attribute` values)."""
    return tuple(cast(Any, protocol).attributes)


def channel_inputs(protocol: LocalProtocol, rng: Seed = None) -> np.ndarray:
    """The inputs whose channel rows the privacy checks compare.

    Every item for a frequency protocol; for a numerical one both bounds, the
    quartiles and three seeded uniform points in between.
    """
    if protocol.tags.takes_items:
        return np.arange(domain_size(protocol))
    if protocol.tags.kind == "multi":
        return _record_grid(protocol)
    if protocol.tags.kind == "key_value":
        return _key_value_grid(domain_size(protocol))
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
        return _items(domain_size(protocol), n, generator)
    if protocol.tags.kind == "multi":
        return _records(protocol, n, generator)
    if protocol.tags.kind == "key_value":
        return _key_value_sets(domain_size(protocol), n, generator)
    lo, hi = bounds(protocol)
    return lo + (hi - lo) * generator.beta(5, 2, size=n)


def _items(d: int, n: int, generator: np.random.Generator) -> np.ndarray:
    weights = np.arange(1, d + 1, dtype=float) ** 2
    counts = np.floor(n * weights / weights.sum()).astype(int)
    counts[0] += n - counts.sum()
    return generator.permutation(np.repeat(np.arange(d), counts))


def _records(protocol: LocalProtocol, n: int, generator: np.random.Generator) -> np.ndarray:
    """Records whose attributes are correlated: each follows a shared Beta(5, 2) latent half of the time."""
    latent = generator.beta(5, 2, size=n)
    records = np.empty((n, len(record_attributes(protocol))))
    for j, attribute in enumerate(record_attributes(protocol)):
        shared = generator.random(n) < 0.5
        if attribute.categorical:
            d = attribute.domain_size
            own = _items(d, n, generator)
            records[:, j] = np.where(shared, np.minimum((latent * d).astype(int), d - 1), own)
        else:
            lo, hi = attribute.bounds
            records[:, j] = lo + (hi - lo) * np.where(shared, latent, generator.beta(5, 2, size=n))
    return records


def _record_grid(protocol: LocalProtocol) -> np.ndarray:
    """Every record of the first items of each categorical attribute and three points of each numerical one."""
    axes = []
    for attribute in record_attributes(protocol):
        if attribute.categorical:
            axes.append(np.arange(min(attribute.domain_size, _RECORD_ITEMS), dtype=float))
        else:
            lo, hi = attribute.bounds
            axes.append(np.array([lo, (lo + hi) / 2, hi]))
    grids = np.meshgrid(*axes, indexing="ij")
    return np.stack([grid.ravel() for grid in grids], axis=1)


#: the most keys whose every set the key-value channel check enumerates (4 states a key)
_SET_KEYS = 4


def _key_value_grid(d: int) -> np.ndarray:
    """Every set of the first keys, each absent (NaN) or held at -1, 0.25 or 1 (the law is linear in a value)."""
    keys = min(d, _SET_KEYS)
    grids = np.meshgrid(*[np.array([np.nan, -1.0, 0.25, 1.0])] * keys, indexing="ij")
    grid = np.full((4**keys, d), np.nan)
    grid[:, :keys] = np.stack([g.ravel() for g in grids], axis=1)
    return grid


def _key_value_sets(d: int, n: int, generator: np.random.Generator) -> np.ndarray:
    """Sets whose keys are held more often the higher the key (key ``k`` w.p. ``(k+1)/(d+1)``), values Beta(5, 2) on [-1, 1]."""
    held = generator.random((n, d)) < (np.arange(1, d + 1) / (d + 1))
    return np.where(held, 2.0 * generator.beta(5, 2, size=(n, d)) - 1.0, np.nan)


def true_frequencies(protocol: LocalProtocol, values: np.ndarray) -> np.ndarray:
    """The frequencies an unbiased protocol estimates: the item histogram, or for a multi-attribute protocol
    the histograms of its categorical attributes one after another."""
    values = np.asarray(values)
    if protocol.tags.kind != "multi":
        return np.bincount(values, minlength=domain_size(protocol)) / values.size
    parts = [
        np.bincount(values[:, j].astype(np.int64), minlength=attribute.domain_size) / values.shape[0]
        for j, attribute in enumerate(record_attributes(protocol))
        if attribute.categorical
    ]
    return np.concatenate(parts)
