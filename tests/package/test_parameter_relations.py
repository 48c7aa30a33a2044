"""The relations a parameter table states between arguments (``validate_params(..., relations=...)``) generate their
bad-input tests, as the rules of single arguments do in ``test_parameter_tables.py``.

Every relation carries a ``counterexample``: arguments each valid by its own rule that break it.  The function called
with it must refuse it before it runs, by :class:`~dpdist.errors.InvalidParameterError` naming the argument, the
function, the value and what the relation allows.
"""

from __future__ import annotations

import pytest

from dpdist._validation import PARAMETER_TABLES, Implies, Integer, Options, validate_params
from dpdist.errors import InvalidParameterError

from .test_parameter_tables import MODULES

TABLES = [table for table in PARAMETER_TABLES if table.module in MODULES and table.relations]
CASES = [
    pytest.param(table, relation, id=f"{table.function.__module__}.{table.function.__qualname__}-{relation.name}-{index}")
    for table in TABLES
    for index, relation in enumerate(table.relations)
]


def test_some_table_states_relations():
    assert CASES, "no parameter table states a relation"


@pytest.mark.parametrize("table, relation", CASES)
def test_a_counterexample_of_a_relation_is_refused_naming_the_argument(table, relation):
    leading = [None] if table.method else []  # self or cls: never reached, the table is checked first
    for name, value in relation.counterexample.items():  # each argument passes its own rule
        if name in table.rules:
            table.rules[name].check(value)
    with pytest.raises(InvalidParameterError) as raised:
        table.function(*leading, **relation.counterexample)
    message = str(raised.value)
    assert f"'{relation.name}'" in message and table.owner in message, message
    assert relation.describe({**table.defaults, **relation.counterexample}) in message, message


def test_a_relation_sees_the_defaults_of_the_arguments_not_given():
    @validate_params({"every": Options(("day", "release")), "releases": Integer(low=1)},
                     relations=(Implies("releases", None, "every", ("release",)),))
    def plan(n, every="day", releases=None):
        return n, every, releases

    assert plan(3) == (3, "day", None)
    assert plan(3, "release", 2) == (3, "release", 2)
    with pytest.raises(InvalidParameterError, match=r"The 'releases' parameter of .*plan must be given \(not None\) "
                                                    r"when every='release'\. Got None instead\."):
        plan(3, every="release")
