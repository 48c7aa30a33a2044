"""The values a protocol is given (``dpdist._validation._values``): integers of a domain, reals within bounds."""

from __future__ import annotations

import numpy as np
import pytest

from dpdist import local
from dpdist._validation import check_integer_values, check_real_values, clip_real_values, wrap_real_values
from dpdist.errors import InvalidValueTypeError, OutOfDomainError


def test_categorical_protocols_take_whole_floats():
    """A pandas integer column with missing values dropped is float64: `GRR.privatize([0.0, 1.0])` was refused."""
    for name in ("grr", "oue", "olh", "hr"):
        proto = local.make(name, epsilon=1.0, domain_size=4)
        np.testing.assert_array_equal(proto.privatize([0.0, 1.0, 3.0], rng=5), proto.privatize([0, 1, 3], rng=5))
        assert proto.simulate(np.array([2.0, 2.0]), rng=1) == proto.simulate([2, 2], rng=1)
    grr = local.make("grr", epsilon=1.0, domain_size=4)
    with pytest.raises(InvalidValueTypeError, match=r"Got 1 value\(s\) that are not whole numbers, the first at position 0 "
                                                    r"\(not shown: a user's value is private\)\.$"):
        grr.privatize([0.5, 1.0])
    with pytest.raises(InvalidValueTypeError, match="missing values"):
        grr.privatize([1.0, np.nan])


def test_integer_values_refused_by_count_and_position_never_by_value_and_the_wrong_dtype():
    """A value given to a protocol is a person's: a refusal says how many and where, not what (it said ``e.g. 4``)."""
    assert check_integer_values([0, 3], 4, owner="f").dtype == np.int64
    assert check_integer_values([], 4, owner="f").dtype == np.int64
    with pytest.raises(OutOfDomainError, match=r"must hold integers in \[0, 4\)\. Got 2 value\(s\) outside it, the first at "
                                               r"position 1 \(not shown: a user's value is private\)\.$"):
        check_integer_values([1, 4, -1], 4, owner="f")
    with pytest.raises(InvalidValueTypeError, match="dtype bool"):
        check_integer_values([True], 4, owner="f")
    with pytest.raises(InvalidValueTypeError, match=r"1-D array of ints. Got an array of shape \(1, 2\)"):
        check_integer_values([[1, 2]], 4, owner="f", name="items")


def test_real_values_checked_clipped_or_wrapped_into_the_bounds():
    np.testing.assert_array_equal(check_real_values([0.0, 1.0], (0.0, 1.0), owner="f"), [0.0, 1.0])
    with pytest.raises(OutOfDomainError):
        check_real_values([1.5], (0.0, 1.0), owner="f")
    clipped, outside = clip_real_values([-1.0, 0.5, 2.0], (0.0, 1.0), owner="f")
    np.testing.assert_array_equal(clipped, [0.0, 0.5, 1.0])
    assert outside == 2
    wrapped, moved = wrap_real_values([25.0, -1.0, 3.0], (0.0, 24.0), owner="f")
    np.testing.assert_allclose(wrapped, [1.0, 23.0, 3.0])
    assert moved == 2


def test_an_int_too_large_for_a_float_is_out_of_bounds_not_an_overflow():
    """``sw.simulate([10**309])`` raised a bare OverflowError.  Such an int is above any
    bound: clipped (as +inf is) with ``clip=True``, refused naming ``values`` with ``clip=False``, and a missing
    value beside it is still found by the ``missing`` policy."""
    huge = 10**309
    with pytest.raises(OutOfDomainError, match=r"^The 'values' argument of o must lie in bounds \[0, 100\]\. Got 1 value\(s\) "
                                               r"too large for a float, the first at position 1 \(not shown"):
        check_real_values([3, huge], (0, 100), owner="o")
    clipped, moved = clip_real_values([huge, -huge, 5, None], (0, 100), owner="o")
    assert clipped.tolist() == [100.0, 0.0, 5.0, 0.0] and moved == 3
    wrapped, moved = wrap_real_values([huge, 150], (0, 100), owner="o")
    assert wrapped.tolist() == [100.0, 50.0] and moved == 2
    sw = local.make("sw", epsilon=1, bounds=(0, 100))
    with pytest.warns(Warning, match="1 of 1 value"):
        assert sw.simulate([huge], rng=1).n == 1
    with pytest.raises(OutOfDomainError, match=r"'values' argument .* too large for a float"):
        sw.simulate([huge, None], rng=1, missing="drop", clip=False)
    with pytest.warns(Warning):
        assert sw.simulate([huge, 3, None], rng=1, missing="drop").n == 2
