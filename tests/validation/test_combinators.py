"""Rules made of rules (``dpdist._validation._combinators``): Optional, Described, OneOf."""

from __future__ import annotations

from rule_support import assert_rule

from dpdist._validation import Described, Integer, Interval, OneOf, Optional, Options, Text
from dpdist.errors import InvalidPrivacyParameterError


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
