"""The parameter tables of functions (``dpdist._validation.validate_params``) generate their bad-input tests.

Every function that states the rules of its arguments in a table is found in ``PARAMETER_TABLES`` once its module
is imported (the modules that name ``validate_params`` are imported here); every rule's ``invalid_examples`` is then
passed to the function, one argument at a time, and must be refused before the function runs, by the rule's error,
naming the parameter and the value.  Every default must pass its rule (a caller may pass it explicitly).  This is
what the conformance suite does with a protocol's ``_constraints``.
"""

from __future__ import annotations

import importlib
import inspect
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import dpdist
from dpdist._validation import (
    PARAMETER_TABLES,
    Boolean,
    Bytes,
    InstanceOf,
    Integer,
    Interval,
    Items,
    NamedInstanceOf,
    Text,
    TupleOf,
    validate_params,
)
from dpdist.errors import InvalidParameterError

SOURCE = Path(dpdist.__file__).parent


def _modules_with_tables() -> list[str]:
    names = []
    for path in sorted(SOURCE.rglob("*.py")):
        if "_validation" not in path.parts and "@validate_params(" in path.read_text():
            parts = path.relative_to(SOURCE.parent).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = _modules_with_tables()
for _module in MODULES:
    importlib.import_module(_module)
TABLES = [table for table in PARAMETER_TABLES if table.module in MODULES]
CASES = [
    pytest.param(table, name, example, id=f"{table.function.__module__}.{table.function.__qualname__}-{name}-{index}")
    for table in TABLES
    for name, rule in table.rules.items()
    for index, example in enumerate(rule.invalid_examples())
]
DEFAULTS = [
    pytest.param(table, name, id=f"{table.function.__module__}.{table.function.__qualname__}-{name}")
    for table in TABLES
    for name in table.defaults
]


def test_every_module_that_states_a_table_registers_it():
    assert MODULES, "no module states a parameter table"
    registered = {table.module for table in TABLES}
    assert registered == set(MODULES), sorted(set(MODULES) - registered)


@pytest.mark.parametrize("table, name, example", CASES)
def test_a_bad_argument_is_refused_naming_it_and_its_value(table, name, example):
    leading = [None] if table.method else []  # self or cls: never reached, the table is checked first
    rule = table.rules[name]
    with pytest.raises(rule.error) as raised:
        table.function(*leading, **{name: example})
    message = str(raised.value)
    assert f"'{name}'" in message and table.owner in message and rule.shown(example) in message, message
    assert rule.describe() in message, message


@pytest.mark.parametrize("table, name", DEFAULTS)
def test_every_default_passes_its_rule(table, name):
    table.rules[name].check(table.defaults[name])


def test_a_table_checks_positional_and_keyword_arguments_and_passes_the_checked_values_on():
    @validate_params({"n": Integer(low=1), "share": Interval(0.0, 1.0, closed="neither"), "flag": Boolean()})
    def function(x, n=3, *, share=0.5, flag=False):
        return x, n, share, flag

    assert function("x", 2.0, share=1 / 4, flag=True) == ("x", 2, 0.25, True)
    assert isinstance(function("x", 2.0)[1], int)
    with pytest.raises(InvalidParameterError, match=r"The 'n' parameter of .*function must be an int >= 1\. Got 0"):
        function("x", 0)
    with pytest.raises(InvalidParameterError, match="'n'"):
        function("x", n=0)
    with pytest.raises(InvalidParameterError, match="'flag'"):
        function("x", flag="yes")
    assert inspect.signature(function).parameters["share"].default == 0.5  # the signature is the function's

    @validate_params({"key": Bytes(32), "session": InstanceOf(dict, "a session")})
    def keyed(key, session=None):
        return key

    with pytest.raises(InvalidParameterError, match=r"must be 32 bytes\. Got 5 bytes instead") as raised:
        keyed(b"SECRE")  # a key of the wrong length: its bytes are not shown
    assert "SECRE" not in str(raised.value)
    with pytest.raises(InvalidParameterError, match=r"must be a session\. Got list instead"):
        keyed(bytes(32), session=["private", "rows"])  # an object: its type only
    with pytest.raises(TypeError, match="names no parameter"):
        validate_params({"missing": Boolean()})(lambda x: x)


def test_items_tuples_and_an_optional_packages_classes_are_rules():
    levels = Items(Interval(0.0, 1.0, closed="both"), "levels in [0, 1]", min_length=1)
    assert levels.check(np.array([0.5, 1])) == (0.5, 1.0) and levels.check(x / 4 for x in range(3)) == (0.0, 0.25, 0.5)
    for bad in ([], [[0.5]], [0.5, 2.0], "0.5", {"a": 0.5}, 0.5):
        with pytest.raises(ValueError):
            levels.check(bad)
    assert levels.shown([0.5, 2.0]) == "a list whose item 1 is 2.0"
    edges = Items(Interval(), "edges", min_length=2, increasing=True)
    assert edges.check([0, 1]) == (0.0, 1.0)
    with pytest.raises(ValueError):
        edges.check([0.0, 0.0])
    pair = TupleOf((Text(), Integer(low=1)), "a (name, count) pair")
    assert pair.check(["a", 2.0]) == ("a", 2)
    for bad in (("a",), ("a", 0), (3, 1), "a1"):
        with pytest.raises(ValueError):
            pair.check(bad)
    missing = NamedInstanceOf("dpdist_no_such_package.keys", ("Key",), "a key")
    with pytest.raises(ValueError):  # the package is not imported: no object of its classes exists
        missing.check(object())
    present = NamedInstanceOf("fractions", ("Fraction",), "a fraction")
    assert present.check(Fraction(1, 3)) == Fraction(1, 3) and present.shown(Fraction(1, 3)) == "Fraction"
    with pytest.raises(ValueError):
        present.check(1 / 3)
