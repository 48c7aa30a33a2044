"""The single-process simulation of blocks of users: block ``b`` draws from the ``b``-th child of the root seed."""

from __future__ import annotations

import numpy as np

from dpdist import local
from dpdist.distributed import simulate_blocks
from dpdist.distributed.blocks import simulate_block

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}


def test_each_block_draws_from_its_own_child_of_the_root_seed():
    grr = local.from_config(GRR)
    blocks = [np.arange(100) % 8, np.arange(57) % 3, np.full(31, 7)]
    expected = grr.aggregator()
    for index, values in enumerate(blocks):
        expected.merge(grr.simulate(values, rng=np.random.default_rng(np.random.SeedSequence(11).spawn(index + 1)[index])))
    assert simulate_blocks(grr, blocks, seed=11) == expected
    assert simulate_blocks(grr, blocks, seed=np.random.SeedSequence(11)) == expected
    assert simulate_block(grr, blocks[2], np.random.SeedSequence(11), 2) == grr.simulate(
        blocks[2], rng=np.random.default_rng(np.random.SeedSequence(11, spawn_key=(2,))))
    assert simulate_blocks(grr, blocks, seed=12) != expected and expected.n == 188
