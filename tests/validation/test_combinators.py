"""Rules made of rules (``dpdist._validation._combinators``): Optional, Described, OneOf."""

from __future__ import annotations

import numpy as np
import pytest

from dpdist._validation import (
    AllOf,
    Bounds,
    Described,
    Distinct,
    InstanceOf,
    Integer,
    Interval,
    Items,
    NumericRows,
    OneOf,
    Optional,
    Options,
    Registered,
    ShownBy,
    Text,
)
from dpdist.errors import InvalidPrivacyParameterError
from rule_support import assert_rule


def test_optional_takes_none_and_keeps_the_inner_rule_s_error():
    rule = Optional(Interval(0, 1, privacy=True))
    assert_rule(rule, [(None, None), (0.5, 0.5)])
    assert rule.error is InvalidPrivacyParameterError and None not in rule.invalid_examples()
    assert rule.describe() == "None or a finite float > 0 and < 1"


def test_described_says_the_rule_in_its_own_words():
    rule = Described(Interval(0, 600, closed="right"), "a number of seconds in (0, 600]")
    assert_rule(rule, [(600, 600.0)])
    assert rule.describe() == "a number of seconds in (0, 600]"


def test_one_of_returns_what_the_first_rule_that_takes_the_value_returns():
    rule = OneOf((Integer(low=1), Options(("auto",))), "an int >= 1 or 'auto'")
    assert_rule(rule, [(3, 3), (4.0, 4), ("auto", "auto")])
    assert 0 in rule.invalid_examples() and "auto" not in rule.invalid_examples()
    assert OneOf((Text(),), "text").invalid_examples() == [3, b"bytes", ""]


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


def test_distinct_refuses_an_item_given_twice_with_the_inner_rule_s_error():
    rule = Distinct(Items(Text(), "names"), "distinct names")
    assert_rule(rule, [(["a", "b"], ("a", "b"))])
    assert ["a", "a"] in rule.invalid_examples() and rule.error is Items(Text(), "names").error
