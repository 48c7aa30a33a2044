"""Relations between parameters (``dpdist._validation._relations``); every protocol's and function's relations are
built with their counterexamples in tests/conformance/test_relations.py and tests/package/test_parameter_relations.py."""

from __future__ import annotations

import numpy as np
import pytest

from dpdist._validation import (
    Below,
    Differs,
    Either,
    Given,
    Implies,
    Interval,
    NoneWhen,
    PowerOf,
    SameSize,
    Satisfies,
    Text,
    check_relations,
)
from dpdist.errors import InvalidParameterError


def _refusal(relations, params) -> str:
    with pytest.raises(InvalidParameterError) as refused:
        check_relations("make('x')", params, relations)
    return str(refused.value)


def test_below_strict_counted_and_every_item():
    assert _refusal([Below("epsilon_1", "epsilon", why="a part of it")], {"epsilon_1": 2.0, "epsilon": 2.0}) == (
        "The 'epsilon_1' parameter of make('x') must be below 'epsilon' = 2.0 (a part of it). Got 2.0 instead.")
    check_relations("f", {"a": 2, "b": 2}, [Below("a", "b", strict=False)])
    check_relations("f", {"a": None, "b": 1}, [Below("a", "b")])
    assert "at most the number of 'labels' = 2" in _refusal([Below("k", "labels", strict=False, count=True)],
                                                            {"k": 3, "labels": ("a", "b")})
    assert "all below 'd' = 4" in _refusal([Below("items", "d", every=True)], {"items": (1, 4), "d": 4})


def test_same_size_either_and_none_when():
    assert "3 items long (as many as 'domain_size' says)" in _refusal([SameSize("labels", "domain_size")],
                                                                        {"labels": ("a", "b"), "domain_size": 3})
    check_relations("f", {"labels": ("a", "b"), "weights": np.ones(2)}, [SameSize("labels", "weights")])
    assert "given when 'n_users' is None" in _refusal([Either("levels", "n_users")], {"levels": None, "n_users": None})
    assert "given exactly when" in _refusal([Either("a", "b", exactly=True)], {"a": 1, "b": 2})
    assert "None when shape='triangle'" in _refusal([NoneWhen("ratio", "shape", "triangle")],
                                                     {"ratio": 0.5, "shape": "triangle"})


def test_implies_compares_scalars_only():
    rule = Implies("every", None, "releases", None, why="a schedule needs a period")
    assert "given (not None) when 'releases' is given" in _refusal([rule], {"releases": 3, "every": None})
    check_relations("f", {"releases": None, "every": None}, [rule])
    mode = Implies("mode", ("exact",), "grid", (np.array([1, 2]),))
    check_relations("f", {"grid": np.array([1, 2]), "mode": "fast"}, [mode])  # an array is none of the options


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


def test_given_power_of_and_differs():
    assert "given (not None) (no list of all inputs)" in _refusal([Given("values", why="no list of all inputs")],
                                                                  {"values": None})
    check_relations("f", {"bins": 64, "branching": 4}, [PowerOf("bins", "branching")])
    assert "a power of 'branching' = 4 (e.g. 16, 64)" in _refusal([PowerOf("bins", "branching")], {"bins": 32, "branching": 4})
    check_relations("f", {"bins": None, "branching": 4}, [PowerOf("bins", "branching")])
    assert "other than 'first' = 'age'" in _refusal([Differs("second", "first")], {"first": "age", "second": "age"})
    check_relations("f", {"first": "age", "second": np.array(["age"])}, [Differs("second", "first")])
