"""The rules added by tables-b (``dpdist._validation._tables_b``, issue 63): each takes its valid values and refuses
each of its ``invalid_examples`` naming the parameter, the value and what is allowed."""

from __future__ import annotations

import numpy as np
import pytest
from rule_support import assert_rule

from dpdist._validation import (
    AllOf,
    AttributeIn,
    Bounds,
    Even,
    HasMethod,
    InstanceOf,
    Integer,
    Interval,
    Items,
    MappingOf,
    NumericRows,
    OneOf,
    Registered,
    Satisfies,
    ShownBy,
    Text,
    Token,
    check_relations,
)
from dpdist.errors import InvalidParameterError


def test_a_token_is_printable_ascii_without_surrounding_spaces_and_shown_by_its_length():
    rule = Token(16)
    assert_rule(rule, [("relay-token-0123456789", "relay-token-0123456789")])
    assert rule.shown("s\u00e9cret-token-0123") == "a str of 17 characters" and rule.shown(None) == "a NoneType"
    assert_rule(Token(16, "an admin token", spaces=True), [(" admin-token-0123456 ", " admin-token-0123456 ")])
    assert_rule(Token(0, "a token"), [("", "")])


def test_even_ints():
    assert_rule(Even(low=2), [(2, 2), (16, 16), (4.0, 4)])
    assert 3 in Even(low=2).invalid_examples() and Even(low=2).describe() == "an even int >= 2"


def test_a_mapping_checks_its_keys_its_values_and_the_values_of_named_keys():
    rule = MappingOf(Text(), Items(None, "values", min_length=1), "a grid", named=(("n", Items(Integer(low=1), "ns")),))
    assert_rule(rule, [({"epsilon": [1, 2]}, {"epsilon": (1, 2)}), ({"n": [3]}, {"n": (3,)})])
    given = {"epsilon": [1, 2]}
    assert MappingOf(Text(), Items(None, "values"), "a grid", as_given=True).check(given) is given
    assert rule.shown({"n": [0]}) == "a dict with the keys ['n'] whose 'n' is a list whose item 0 is 0"
    assert rule.shown({3: [1]}) == "a dict with the keys ['3'] whose key 3 is refused"


def test_objects_by_a_method_or_an_attribute():
    assert_rule(HasMethod("upper", "an object with an upper()"), [("text", "text")])
    rule = AttributeIn(np.ndarray, "ndim", (1,), "a 1-D array")
    vector = np.zeros(3)
    assert rule.check(vector) is vector
    assert_rule(rule, [])
    with pytest.raises(ValueError):
        rule.check(np.zeros((2, 2)))


def test_numbers_or_rows_of_numbers_are_returned_as_given_and_a_pair_may_be_left_to_bounds():
    rule = NumericRows(2, 4, "inputs", not_pairs=True)
    rows = [[1, 2], [3, 4]]
    assert_rule(rule, [((1, 2, 3), (1, 2, 3))])
    assert rule.check(rows) is rows
    assert rule.shown(np.arange(100)) == "ndarray of shape (100,)"


def test_all_of_and_shown_by_and_registered():
    bounds = AllOf((InstanceOf(tuple, "a tuple"), Bounds()), "bounds as a tuple")
    assert_rule(bounds, [((0, 1), (0.0, 1.0))])
    with pytest.raises(ValueError):
        bounds.check([0, 1])
    shown = ShownBy(OneOf((Integer(low=2), NumericRows(2, 64, "")), "d or inputs"), NumericRows(2, 64, ""))
    assert shown.shown(np.arange(100)) == "ndarray of shape (100,)" and shown.check(3) == 3
    names = ["a"]
    registered = Registered(lambda: names, "a registered name")
    assert_rule(registered, [("a", "a")])
    names.append("b")  # a registry that grows: the rule reads it when it checks
    assert registered.check("b") == "b" and registered.describe() == "a registered name: one of ['a', 'b']"


def test_satisfies_holds_a_rule_when_another_argument_is_given_or_absent():
    low = Satisfies("low", Interval(0.0, float("inf")), "favourable", why="both ends")
    check_relations("f()", {"low": 0.0, "favourable": None}, [low])
    with pytest.raises(InvalidParameterError, match=r"The 'low' parameter of f\(\) must be a finite float > 0 when "
                                                    r"'favourable' is given \(both ends\)\. Got 0\.0 instead\."):
        check_relations("f()", {"low": 0.0, "favourable": "low"}, [low])
    named = Satisfies("name", Text(), "file", absent=True)
    check_relations("f()", {"name": None, "file": "data.csv"}, [named])
    with pytest.raises(InvalidParameterError, match="when 'file' is None"):
        check_relations("f()", {"name": None, "file": None}, [named])
