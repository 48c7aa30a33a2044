"""A bare None is no values: privatize, simulate and channel refuse it naming 'values' (a numerical protocol used to
read it as one missing value and clip it to lo)."""

from __future__ import annotations

import pytest

from dpdist import local
from dpdist.errors import DPDistError, InvalidParameterError

NUMERICAL = ["sw", "gw", "hh", "haar-hrr", "pm", "sr", "opm", "binning", "threshold"]
FREQUENCY = ["grr", "oue", "olh", "hr"]


@pytest.mark.parametrize("name", NUMERICAL)
@pytest.mark.parametrize("method", ["privatize", "simulate"])
def test_a_numerical_protocol_refuses_none_as_values(name, method):
    protocol = local.make(name, epsilon=1.0, bounds=(0.0, 1.0))
    with pytest.raises(InvalidParameterError, match=r"The 'values' parameter of .*\. Got None instead"):
        getattr(protocol, method)(None, rng=0)
    with pytest.raises(InvalidParameterError, match="'values'"):
        getattr(protocol, method)(None, rng=0, clip=False)


@pytest.mark.parametrize("name", NUMERICAL + ["wavelet"])
def test_the_channel_of_a_numerical_protocol_needs_the_values(name):
    protocol = local.make(name, epsilon=1.0, bounds=(0.0, 1.0), **({"levels": 2} if name == "wavelet" else {}))
    for call in (lambda: protocol.channel(), lambda: protocol.channel(None)):
        with pytest.raises(InvalidParameterError, match=r"The 'values' parameter of .*channel must be given .*Got None"):
            call()


@pytest.mark.parametrize("name", FREQUENCY)
@pytest.mark.parametrize("method", ["privatize", "simulate"])
def test_a_frequency_oracle_refuses_none_as_values(name, method):
    protocol = local.make(name, epsilon=1.0, domain_size=4)
    with pytest.raises(DPDistError, match="'values'"):
        getattr(protocol, method)(None, rng=0)
