"""Reports as arrays (dpdist.local._reports): packed bit counts."""

from __future__ import annotations


import numpy as np
import pytest



@pytest.mark.parametrize("n_bits", [1, 7, 8, 9, 1024, 1031])
def test_packed_bit_counts_equal_unpacked_column_sums(n_bits):
    from dpdist.local._reports import count_packed_bits

    bits = np.random.default_rng(n_bits).random((3001, n_bits)) < 0.3
    packed = np.packbits(bits, axis=1)
    np.testing.assert_array_equal(count_packed_bits(packed, n_bits), bits.sum(axis=0))
