"""The relations between a protocol's parameters (``_relations``: ``epsilon_1`` below ``epsilon``, ``domain_size`` at
most ``hash_prime``, ...) generate their bad-input tests, as each parameter's own rule does in the conformance suite.

Every relation carries a ``counterexample``: values each valid by its own rule that break it.  Built over an example
of the protocol (``examples_*.py``), it must be refused by :class:`~dpdist.errors.InvalidParameterError` naming the
parameter, the protocol, the value and what the relation allows; the examples themselves keep every relation.
"""

from __future__ import annotations

import pytest

import dpdist.local as local
from dpdist._validation import check_params
from dpdist.errors import InvalidParameterError
from dpdist.local._registry import registered_class

from ._examples import EXAMPLES

CASES = [
    pytest.param(name, relation, id=f"{name}-{relation.name}")
    for name in local.available()
    for relation in registered_class(name)._relations
]


def _example(name: str) -> dict:
    """The first example of ``name`` with no label domain (a counterexample may set ``domain_size``)."""
    return next(params for params in EXAMPLES[name] if "labels" not in params)


def test_relations_are_declared():
    assert CASES, "no protocol declares a relation between its parameters"


@pytest.mark.parametrize("name, relation", CASES)
def test_a_counterexample_of_a_relation_is_refused_naming_the_parameter(name, relation):
    cls = registered_class(name)
    params = {**cls._defaults, **_example(name), **relation.counterexample}
    checked = check_params(name, params, cls._constraints)  # each value passes its own rule
    assert not relation.holds(checked)
    with pytest.raises(InvalidParameterError) as raised:
        local.make(name, **{**_example(name), **relation.counterexample})
    message = str(raised.value)
    protocol = cls.__new__(cls)
    assert f"'{relation.name}'" in message and protocol.display_name in message, message
    assert relation.describe(checked) in message and repr(checked[relation.name]) in message, message


@pytest.mark.parametrize("name, relation", CASES)
def test_the_examples_keep_every_relation(name, relation):
    cls = registered_class(name)
    for params in EXAMPLES[name]:
        assert relation.holds({**cls._defaults, **local.make(name, **params).params}), params
