"""The shared checks of inputs (dpdist._validation): categorical values given as whole floats are taken, others
named."""

from __future__ import annotations


import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidValueTypeError


def test_categorical_protocols_take_whole_floats():
    """A pandas integer column with missing values dropped is float64: `GRR.privatize([0.0, 1.0])` was refused."""
    for name in ("grr", "oue", "olh", "hr"):
        proto = local.make(name, epsilon=1.0, domain_size=4)
        np.testing.assert_array_equal(proto.privatize([0.0, 1.0, 3.0], rng=5), proto.privatize([0, 1, 3], rng=5))
        assert proto.simulate(np.array([2.0, 2.0]), rng=1) == proto.simulate([2, 2], rng=1)
    grr = local.make("grr", epsilon=1.0, domain_size=4)
    with pytest.raises(InvalidValueTypeError, match="not whole numbers, e.g. 0.5"):
        grr.privatize([0.5, 1.0])
    with pytest.raises(InvalidValueTypeError, match="missing values"):
        grr.privatize([1.0, np.nan])
