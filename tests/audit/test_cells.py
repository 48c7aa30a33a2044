"""The events of the black-box audit (dpdist.audit._cells): real outputs on few inputs are binned, so the
events have power."""

from __future__ import annotations


import numpy as np
import pytest

from dpdist import audit


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
