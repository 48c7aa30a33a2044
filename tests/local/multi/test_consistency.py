"""The consistency map of marginals (dpdist.local.multi._consistency): the map and its adjoint are transposes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpdist.local.multi._consistency import Consistency


def test_the_consistency_map_and_its_adjoint_are_transposes():
    rng = np.random.default_rng(0)
    sets = list(itertools.combinations(range(4), 2)) + [(0, 1, 2)]
    consistency = Consistency(sets, [2, 3, 4, 3], rng.uniform(0.5, 2.0, len(sets)))
    x = [rng.normal(size=shape) for shape in consistency.shapes]
    y = [rng.normal(size=shape) for shape in consistency.shapes]
    left = sum(float((a * b).sum()) for a, b in zip(consistency.apply(x, total=None), y))
    right = sum(float((a * b).sum()) for a, b in zip(x, consistency.adjoint(y)))
    assert left == pytest.approx(right, rel=1e-12)
    consistent = consistency.apply(x)
    assert consistency.violation(consistent) < 1e-12
    assert all(table.sum() == pytest.approx(1.0) for table in consistent)
