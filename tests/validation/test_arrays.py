"""Rules of arrays (``dpdist._validation._arrays``): vectors, probabilities, dtypes, real arrays."""

from __future__ import annotations

import numpy as np

from dpdist._validation import DType, Integer, NumericRows, Probabilities, RealArray, Vector, Weights
from rule_support import assert_rule


def test_a_vector_checks_every_item():
    rule = Vector(Integer(low=0))
    assert_rule(rule, [])
    assert rule.check((1, 2.0)) == [1, 2] and rule.check(np.arange(3)) == [0, 1, 2]


def test_probabilities_closed_and_open():
    assert_rule(Probabilities(), [])
    assert_rule(Probabilities(closed=False), [])
    np.testing.assert_array_equal(Probabilities().check(0.0), [0.0])
    np.testing.assert_array_equal(Probabilities().check([0.0, 1.0]), [0.0, 1.0])
    np.testing.assert_array_equal(Probabilities(closed=False).check([0.25]), [0.25])


def test_a_dtype_is_what_numpy_reads_as_one():
    assert_rule(DType(), [("<u4", np.dtype("<u4")), (np.uint8, np.dtype(np.uint8))])


def test_a_real_array_checks_shape_range_and_order():
    rule = RealArray("a grid", ndims=(1,), min_size=2, low=0.0, high=1.0, increasing="strictly", width=None)
    assert_rule(rule, [])
    np.testing.assert_array_equal(rule.check([0, 0.5, 1]), [0.0, 0.5, 1.0])
    weakly = RealArray("a curve", increasing="weakly", tolerance=1e-9)
    np.testing.assert_array_equal(weakly.check([0.0, 1.0, 1.0 - 1e-12]), [0.0, 1.0, 1.0 - 1e-12])
    assert_rule(RealArray("pairs", ndims=(2,), width=2), [])
    assert RealArray("values", private=True).shown(np.arange(6).reshape(2, 3)) == "an array of shape (2, 3)"


def test_numbers_or_rows_of_numbers_are_returned_as_given_and_a_pair_may_be_left_to_bounds():
    rule = NumericRows(2, 4, "inputs", not_pairs=True)
    rows = [[1, 2], [3, 4]]
    assert_rule(rule, [((1, 2, 3), (1, 2, 3))])
    assert rule.check(rows) is rows
    assert rule.shown(np.arange(100)) == "ndarray of shape (100,)"


def test_weights_are_non_negative_with_a_positive_sum():
    assert_rule(Weights(), [])
    np.testing.assert_array_equal(Weights().check([0, 2, 1]), [0.0, 2.0, 1.0])
