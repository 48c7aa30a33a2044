"""The base of every rule (``dpdist._validation._rule``): a rule that wraps another; one parameter checked against its
rule."""

from __future__ import annotations

import pytest

from dpdist._validation import Constraint, Integer, Interval, Wrapper, check_param
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError


def test_check_param_returns_the_coerced_value_or_names_parameter_value_and_rule():
    assert check_param("make('grr')", "domain_size", 4.0, Integer(low=2)) == 4
    with pytest.raises(InvalidParameterError, match=r"^The 'domain_size' parameter of make\('grr'\) must be an int >= 2\. "
                                                    r"Got 1 instead\.$"):
        check_param("make('grr')", "domain_size", 1, Integer(low=2))
    with pytest.raises(InvalidPrivacyParameterError, match="'epsilon'"):
        check_param("f", "epsilon", -1.0, Interval(0, 1, privacy=True))


def test_a_refusal_shows_at_most_200_characters_of_the_value():
    with pytest.raises(InvalidParameterError) as refused:
        check_param("f", "x", "y" * 10_000, Integer())
    assert "'" + "y" * 199 in str(refused.value) and "y" * 200 not in str(refused.value)  # the quote is one of them


def test_a_rule_that_raises_type_error_is_refused_like_value_error():
    class Picky(Constraint):
        def check(self, value):
            return len(value)

        def describe(self):
            return "something with a length"

    assert check_param("f", "x", "abc", Picky()) == 3
    with pytest.raises(InvalidParameterError, match="something with a length. Got 3"):
        check_param("f", "x", 3, Picky())
    assert Picky().invalid_examples() == [] and Picky().error is InvalidParameterError


def test_a_wrapper_is_its_inner_rule_in_every_respect_it_does_not_override():
    inner = Interval(0, 1, privacy=True)
    wrapped = Wrapper(inner)
    assert wrapped.error is inner.error is InvalidPrivacyParameterError
    assert wrapped.check(0.5) == inner.check(0.5) and wrapped.describe() == inner.describe()
    assert wrapped.invalid_examples() == inner.invalid_examples() and wrapped.shown(2.0) == inner.shown(2.0)
    with pytest.raises(InvalidPrivacyParameterError, match=r"'epsilon' parameter of f must be .* Got 2\.0 instead"):
        check_param("f", "epsilon", 2.0, wrapped)
