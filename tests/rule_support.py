"""What every rule of ``dpdist._validation`` must do, checked by the tests of each kind (tests/validation/).

A rule takes its valid values (coerced as it says), and refuses each of its ``invalid_examples`` through
``check_param`` with the rule's error, a message that names the parameter, shows the value and says what is allowed.
"""

from __future__ import annotations

import pytest

from dpdist._validation import Constraint, check_param


def assert_rule(rule: Constraint, valid: list[tuple], *, name: str = "x") -> None:
    """``valid``: pairs of a value the rule must take and what it must return."""
    for value, coerced in valid:
        assert check_param("f()", name, value, rule) == coerced, value
    examples = rule.invalid_examples()
    assert examples, f"{rule!r} names no invalid example: the generated bad-input tests would test nothing"
    for bad in examples:
        with pytest.raises(rule.error) as refused:
            check_param("f()", name, bad, rule)
        message = str(refused.value)
        assert f"{name!r}" in message and rule.describe() in message and rule.shown(bad) in message, message
