"""The inputs the conformance checks feed a protocol: fixed, seeded and kind-aware.

A ``"frequency"`` or ``"heavy_hitters"`` protocol takes items ``0 .. domain_size - 1`` (``tags.takes_items``); a ``"numerical"``
protocol takes reals in ``bounds``; a ``"multi"`` protocol takes records of its
``attributes`` (each with ``categorical``, ``domain_size`` or ``bounds``), as an
``(n, k)`` float array.  Those attributes (and ``tags.kind``) are all the checks
assume about a protocol's inputs.
"""

from __future__ import annotations

import numpy as np

__all__ = ["channel_inputs", "population", "true_frequencies"]

#: the most items per categorical attribute whose records the multi-attribute channel check enumerates
_RECORD_ITEMS = 8


def channel_inputs(protocol, rng=None) -> np.ndarray:
    """The inputs whose channel rows the privacy checks compare.

    Every item for a frequency protocol; for a numerical one both bounds, the
    quartiles and three seeded uniform points in between.
    """
    if protocol.tags.takes_items:
        return np.arange(protocol.domain_size)
    if protocol.tags.kind == "multi":
        return _record_grid(protocol)
    lo, hi = protocol.bounds
    generator = np.random.default_rng(12345 if rng is None else rng)
    fixed = lo + (hi - lo) * np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    return np.concatenate([fixed, generator.uniform(lo, hi, 3)])


def population(protocol, n: int, rng=0) -> np.ndarray:
    """A fixed, non-uniform population of ``n`` values for the protocol.

    Items get weights proportional to ``(v + 1)^2``; reals follow a Beta(5, 2)
    law stretched over the bounds, so no check runs on a symmetric special case.
    """
    generator = np.random.default_rng(rng)
    if protocol.tags.takes_items:
        return _items(protocol.domain_size, n, generator)
    if protocol.tags.kind == "multi":
        return _records(protocol, n, generator)
    lo, hi = protocol.bounds
    return lo + (hi - lo) * generator.beta(5, 2, size=n)


def _items(d: int, n: int, generator) -> np.ndarray:
    weights = np.arange(1, d + 1, dtype=float) ** 2
    counts = np.floor(n * weights / weights.sum()).astype(int)
    counts[0] += n - counts.sum()
    return generator.permutation(np.repeat(np.arange(d), counts))


def _records(protocol, n: int, generator) -> np.ndarray:
    """Records whose attributes are correlated: each follows a shared Beta(5, 2) latent half of the time."""
    latent = generator.beta(5, 2, size=n)
    records = np.empty((n, len(protocol.attributes)))
    for j, attribute in enumerate(protocol.attributes):
        shared = generator.random(n) < 0.5
        if attribute.categorical:
            d = attribute.domain_size
            own = _items(d, n, generator)
            records[:, j] = np.where(shared, np.minimum((latent * d).astype(int), d - 1), own)
        else:
            lo, hi = attribute.bounds
            records[:, j] = lo + (hi - lo) * np.where(shared, latent, generator.beta(5, 2, size=n))
    return records


def _record_grid(protocol) -> np.ndarray:
    """Every record of the first items of each categorical attribute and three points of each numerical one."""
    axes = []
    for attribute in protocol.attributes:
        if attribute.categorical:
            axes.append(np.arange(min(attribute.domain_size, _RECORD_ITEMS), dtype=float))
        else:
            lo, hi = attribute.bounds
            axes.append(np.array([lo, (lo + hi) / 2, hi]))
    grids = np.meshgrid(*axes, indexing="ij")
    return np.stack([grid.ravel() for grid in grids], axis=1)


def true_frequencies(protocol, values) -> np.ndarray:
    """The frequencies an unbiased protocol estimates: the item histogram, or for a multi-attribute protocol
    the histograms of its categorical attributes one after another."""
    values = np.asarray(values)
    if protocol.tags.kind != "multi":
        return np.bincount(values, minlength=protocol.domain_size) / values.size
    parts = [
        np.bincount(values[:, j].astype(np.int64), minlength=attribute.domain_size) / values.shape[0]
        for j, attribute in enumerate(protocol.attributes)
        if attribute.categorical
    ]
    return np.concatenate(parts)
