"""The rng argument and the secure (CSPRNG) generator."""

from __future__ import annotations

import numpy as np
import pytest
from randomgen import AESCounter

from dpdist._rng import check_rng, secure_generator
from dpdist.errors import InvalidParameterError


def test_seeds_generators_and_none():
    assert isinstance(check_rng(None), np.random.Generator)
    np.testing.assert_array_equal(check_rng(5).random(3), check_rng(5).random(3))
    generator = np.random.default_rng(1)
    assert check_rng(generator) is generator
    np.testing.assert_array_equal(
        check_rng(np.random.SeedSequence(3)).random(2), np.random.default_rng(np.random.SeedSequence(3)).random(2)
    )


@pytest.mark.parametrize("bad", [-1, 1.5, "seed", True, object()])
def test_bad_rng_values_are_rejected(bad):
    with pytest.raises(InvalidParameterError, match="'rng'"):
        check_rng(bad)


def test_secure_generator_is_aes_counter_and_unseedable():
    generator = check_rng(secure=True)
    assert isinstance(generator.bit_generator, AESCounter)
    assert not np.array_equal(secure_generator().random(4), secure_generator().random(4))
    with pytest.raises(InvalidParameterError, match="secure"):
        check_rng(3, secure=True)

