"""Rules of one number or flag (``dpdist._validation._scalars``)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpdist._validation import Boolean, Even, Integer, Interval, Options, PowerOfTwo, Prime, is_prime
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError
from rule_support import assert_rule


def test_an_interval_takes_finite_reals_by_its_closed_ends_and_refuses_the_rest():
    assert_rule(Interval(0.0, 1.0, closed="left"), [(0, 0.0), (0.5, 0.5), (np.float32(0.25), 0.25), (Fraction(1, 4), 0.25)])
    assert_rule(Interval(0.0, 1.0, closed="right"), [(1, 1.0)])
    for closed, ends in (("both", [0.0, 1.0]), ("neither", [])):
        rule = Interval(0.0, 1.0, closed=closed)
        assert [end for end in (0.0, 1.0) if _takes(rule, end)] == ends
    assert not _takes(Interval(), True)  # a bool is not a number here
    assert Interval(0, 1, closed="left").describe() == "a finite float >= 0 and < 1"


def test_a_privacy_interval_refuses_with_the_privacy_error():
    assert Interval(0, 1, privacy=True).error is InvalidPrivacyParameterError
    assert Interval(0, 1).error is InvalidParameterError
    assert_rule(Interval(1e-6, 30.0, closed="both", privacy=True), [(1, 1.0)])


def test_an_integer_takes_whole_floats_and_refuses_fractions_bools_and_text():
    assert_rule(Integer(low=2, high=5), [(2, 2), (5.0, 5), (np.int64(3), 3)])
    assert not any(_takes(Integer(), bad) for bad in (True, 2.5, "2", None))
    assert Integer(low=1).describe() == "an int >= 1" and Integer(high=1).describe() == "an int <= 1"


def test_powers_of_two_and_primes():
    assert_rule(PowerOfTwo(low=2, high=1024), [(2, 2), (1024, 1024)])
    assert not _takes(PowerOfTwo(), 48)
    assert_rule(Prime(low=3), [(3, 3), (2**31 - 1, 2**31 - 1)])
    assert [n for n in range(30) if is_prime(n)] == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]
    assert not is_prime(3215031751)  # a strong pseudoprime to bases 2, 3, 5 and 7: the 12 bases catch it
    assert is_prime(2**61 - 1) and not is_prime((2**31 - 1) * (2**61 - 1))


def test_options_and_booleans():
    assert_rule(Options(("a", "b")), [("a", "a"), ("b", "b")])
    assert Options(("a", 1)).describe() == "one of 'a', 1"
    assert_rule(Boolean(), [(True, True), (np.bool_(False), False)])
    assert not _takes(Boolean(), 1)


def _takes(rule, value) -> bool:
    try:
        rule.check(value)
    except (ValueError, TypeError):
        return False
    return True


@pytest.mark.parametrize("value", [math.nan, math.inf, 10**309], ids=["nan", "inf", "beyond-the-floats"])
def test_an_interval_refuses_what_is_not_a_finite_float(value):
    assert not _takes(Interval(), value)


def test_even_ints():
    assert_rule(Even(low=2), [(2, 2), (16, 16), (4.0, 4)])
    assert 3 in Even(low=2).invalid_examples() and Even(low=2).describe() == "an even int >= 2"
