"""The events of the black-box audit (dpdist.audit._cells): real outputs on few inputs are binned, so the
events have power."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import audit
from dpdist.audit._cells import CellMap


# real outputs (Laplace noise) on few inputs at a small budget: the pilot's distinct reals fit in
# max_cells, so every event was a set of exact floats that fresh outputs never hit: certified 0, no power.
def _laplace(scale):
    def randomize(values, rng):
        values = np.asarray(values, dtype=np.float64)
        return values + rng.laplace(0.0, scale, values.size)
    return randomize


@pytest.mark.parametrize("domain, samples", [((0.0, 1.0), 1000), (2, 4000), (8, 1000)])
def test_real_outputs_on_few_inputs_are_binned(domain, samples):
    result = audit.audit(_laplace(1 / 3), epsilon=1.0, domain=domain, samples=samples, rng=0)  # true epsilon 3
    assert result.verdict == "violates"


def _grr(values, rng, d=8, epsilon=1.0):
    keep = math.exp(epsilon) / (math.exp(epsilon) + d - 1)
    other = (values + rng.integers(1, d, values.size)) % d
    return np.where(rng.random(values.size) < keep, values, other)


def test_a_leak_in_an_integers_low_bit_is_certified():
    """The GRR item in the high bits, 20 uniform bits, the item's parity in bit 0 (infinite loss,
    an event of probability 1/2): 'no violation found' at 100,000 outputs before, quantile bins never see bit 0."""

    def parity_leak(values, rng):
        values = np.asarray(values)
        return _grr(values, rng) * 2**22 + rng.integers(0, 2**20, values.size) * 2 + values % 2

    result = audit.audit(parity_leak, 1.0, 8, samples=20_000, rng=0)
    assert result.violates and result.certified_epsilon > 3.0 and "bit 0 of column 0" in result.witness["event"]


def test_a_leak_in_a_mantissa_bit_is_certified():
    """A float output whose mantissa bit 12 is the item's parity and whose last bit is always set (its exponent and
    lowest set bit do not depend on the item): certified through the float's bits."""

    def mantissa_leak(values, rng):
        values = np.asarray(values)
        out = _grr(values, rng).astype(float) + 1.0 + rng.random(values.size) * 0.5
        bits = (out.view(np.uint64) & ~np.uint64(1 << 12)) | (np.uint64(1 << 12) * (values % 2).astype(np.uint64))
        return (bits | np.uint64(1)).view(np.float64)

    result = audit.audit(mantissa_leak, 1.0, 8, samples=20_000, rng=0)
    assert result.violates and result.certified_epsilon > 3.0 and "bit 12 of column 0 (float bits)" in result.witness["event"]


def test_bit_planes_are_the_varying_bits_of_columns_of_many_values():
    rng = np.random.default_rng(0)
    pilot = np.column_stack([rng.integers(0, 2**10, 4000) * 4 + 1, rng.integers(0, 3, 4000), rng.random(4000)])
    cell_map = CellMap.fit(pilot, bins=16, max_cells=64)
    integer_bits = [bit for source, bit, as_float in cell_map.planes if source == 0 and not as_float]
    assert integer_bits == list(range(2, 12))  # bits 0 and 1 are constant (4 k + 1), bit 12 and above are 0
    assert all(as_float for source, _, as_float in cell_map.planes if source == 2)
    assert not any(source == 1 for source, _, _ in cell_map.planes)  # a column of few values: its values are its cells
    levels = cell_map.column_levels(pilot[:5], [3 + integer_bits.index(2)])
    assert np.array_equal(levels[:, 0], (pilot[:5, 0].astype(np.int64) >> 2) & 1)
    assert CellMap.fit(pilot, bins=16, max_cells=64, planes=False).planes == ()
