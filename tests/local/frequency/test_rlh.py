"""RLH (dpdist.local.frequency.rlh; Fang, Chen & Liu, USENIX Security 2025): the hash range is the paper's rounded
optimum."""

from __future__ import annotations


import pytest

from dpdist import local
from dpdist.local.frequency.rlh import rlh_hash_range


@pytest.mark.parametrize("epsilon, d, expected", [(1.0, 128, 4), (4.0, 128, 47), (4.0, 2, 8), (0.5, 10, 3)])
def test_rlh_hash_range_is_the_papers_rounded_optimum(epsilon, d, expected):
    # expected: the authors' RLH(epsilon, d).g (fp/RLH.py, run side by side: benchmarks/bench_fang_oracles.py)
    assert rlh_hash_range(epsilon, d) == expected
    assert local.make("rlh", epsilon=epsilon, domain_size=d).hash_range == expected
