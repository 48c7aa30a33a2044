"""Rules of a domain (``dpdist._validation._domains``): numerical bounds, labels, item ids, alphabets."""

from __future__ import annotations

import numpy as np

from dpdist._validation import BOUNDS_CELLS, Alphabet, Bounds, ItemIds, Labels, Span
from rule_support import assert_rule


def test_bounds_are_a_finite_increasing_pair_with_room_for_the_finest_grid():
    assert_rule(Bounds(), [((0, 1), (0.0, 1.0)), ([-5.5, 2], (-5.5, 2.0)), (np.array([1e6, 2e6]), (1e6, 2e6))])
    room = BOUNDS_CELLS * np.spacing(1e6)  # the narrowest width at 1e6 that leaves every grid step distinct
    assert Bounds().check((1e6, 1e6 + 2 * room)) == (1e6, 1e6 + 2 * room)
    try:
        Bounds().check((1e6, 1e6 + room / 2))
    except ValueError:
        pass
    else:
        raise AssertionError("bounds narrower than the finest grid passed")


def test_labels_are_distinct_non_empty_strings():
    assert_rule(Labels(), [(("a", "b"), ("a", "b")), (["x", "y", "z"], ("x", "y", "z"))])
    assert_rule(Labels(max_size=2), [(("a", "b"), ("a", "b"))])
    try:
        Labels(max_size=2).check(["a", "b", "c"])
    except ValueError:
        pass
    else:
        raise AssertionError("three labels passed a rule of at most two")


def test_item_ids_read_lists_one_int_and_comma_separated_text():
    assert_rule(ItemIds(), [(3, (3,)), ("3, 7", (3, 7)), ((0, 5), (0, 5)), (np.int64(4), (4,))])


def test_an_alphabet_is_distinct_characters():
    assert_rule(Alphabet(max_size=3), [("abc", "abc"), ("a", "a")])
    assert "distinct characters" in Alphabet().describe()


def test_a_span_is_a_finite_pair_low_at_most_high():
    assert_rule(Span(), [((0, 1), (0.0, 1.0)), ([2.5, 2.5], (2.5, 2.5)), (np.array([-1, 3]), (-1.0, 3.0))])
