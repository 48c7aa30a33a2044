"""Fixed-size blocks of users and their random streams.

Block ``b`` of a run with root seed ``s`` draws from
``numpy.random.default_rng(SeedSequence(s).spawn(b + 1)[b])``, i.e. the child
``SeedSequence(s, spawn_key=(b,))``: independent streams that do not depend on
how many blocks there are or on which worker runs them (NumPy's parallel
random guide).  ``dpdist privatize`` and :mod:`dpdist.distributed` both use it,
so a run is reproducible from its seed and block size alone.
"""

from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np

__all__ = ["root_seed_sequence", "block_generator", "rechunk"]


def root_seed_sequence(seed) -> np.random.SeedSequence:
    """``SeedSequence(seed)`` (fresh OS entropy for ``None``); an existing SeedSequence is kept."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    return np.random.SeedSequence(seed)


def block_generator(root: np.random.SeedSequence, index: int) -> np.random.Generator:
    """The generator of block ``index``: the ``index``-th child of ``root`` (as ``root.spawn`` would give)."""
    child = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, int(index)), pool_size=root.pool_size)
    return np.random.default_rng(child)


def rechunk(arrays: Iterable[np.ndarray], block_size: int) -> Iterator[np.ndarray]:
    """Re-cut a stream of 1-D arrays into blocks of exactly ``block_size`` (the last may be shorter)."""
    pending: list[np.ndarray] = []
    held = 0
    for array in arrays:
        while array.size:
            take = min(block_size - held, array.size)
            pending.append(array[:take])
            held += take
            array = array[take:]
            if held == block_size:
                yield np.concatenate(pending)
                pending, held = [], 0
    if held:
        yield np.concatenate(pending)
