"""A bare None is no values: privatize, simulate and channel refuse it naming 'values' (a numerical protocol used to
read it as one missing value and clip it to lo)."""

from __future__ import annotations

import pytest

from conformance._examples import EXAMPLES
from dpdist import local
from dpdist.errors import DPDistError, InvalidParameterError
from dpdist.local._registry import registered_class

#: every registered numerical protocol, each with its first conformance example
NUMERICAL = sorted(name for name in EXAMPLES if registered_class(name).tags.kind == "numerical")
FREQUENCY = sorted(name for name in EXAMPLES if registered_class(name).tags.kind == "frequency")


@pytest.mark.parametrize("name", NUMERICAL)
@pytest.mark.parametrize("method", ["privatize", "simulate"])
def test_a_numerical_protocol_refuses_none_as_values(name, method):
    protocol = local.make(name, **EXAMPLES[name][0])
    with pytest.raises(InvalidParameterError, match=r"The 'values' parameter of .*\. Got None instead"):
        getattr(protocol, method)(None, rng=0)
    with pytest.raises(InvalidParameterError, match="'values'"):
        getattr(protocol, method)(None, rng=0, clip=False)


@pytest.mark.parametrize("name", NUMERICAL)
def test_the_channel_of_a_numerical_protocol_needs_the_values(name):
    protocol = local.make(name, **EXAMPLES[name][0])
    for call in (lambda: protocol.channel(), lambda: protocol.channel(None)):
        with pytest.raises(InvalidParameterError, match=r"The 'values' parameter of .*channel must be given .*Got None"):
            call()


@pytest.mark.parametrize("name", FREQUENCY)
@pytest.mark.parametrize("method", ["privatize", "simulate"])
def test_a_frequency_oracle_refuses_none_as_values(name, method):
    protocol = local.make(name, **EXAMPLES[name][0])
    with pytest.raises(DPDistError, match="'values'"):
        getattr(protocol, method)(None, rng=0)
