"""The single-process counterpart of :func:`dpdist.distributed.simulate` (no Dask needed)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

import numpy as np

from .._rng import block_generator, root_seed_sequence

if TYPE_CHECKING:
    from ..local import Aggregator, LocalProtocol

__all__ = ["simulate_blocks", "simulate_block"]


def simulate_block(protocol: LocalProtocol, values: np.ndarray, root: np.random.SeedSequence, index: int) -> Aggregator:
    """Aggregator of block ``index``: ``protocol.simulate`` with the block's own random stream."""
    return protocol.simulate(values, rng=block_generator(root, index))


def simulate_blocks(protocol: LocalProtocol, blocks: Iterable[np.ndarray], seed: int | np.random.SeedSequence) -> Aggregator:
    """Simulate consecutive blocks of users in one process; equals the distributed result for the same seed.

    Parameters
    ----------
    protocol : LocalProtocol
    blocks : iterable of 1-D arrays
        The users' values, block by block (the same cut as the Dask array's chunks).
    seed : int or SeedSequence
        Root seed; block ``b`` uses the ``b``-th child of ``SeedSequence(seed)``.
    """
    root = root_seed_sequence(seed)
    aggregator = protocol.aggregator()
    for index, values in enumerate(blocks):
        aggregator.merge(simulate_block(protocol, values, root, index))
    return aggregator
