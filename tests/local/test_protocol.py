"""The protocol contract's entry points (dpdist.local._protocol): ``make`` names a misspelt parameter and takes names
in any case."""

from __future__ import annotations


import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError
import warnings
import numpy as np
from dpdist.errors import EachValueANewUserWarning


def test_make_names_a_misspelt_parameter_rather_than_a_missing_one():
    with pytest.raises(InvalidParameterError) as raised:
        local.make("oue", eps=1.0, domain_size=8)
    message = str(raised.value)
    assert "unknown parameter(s) ['eps']" in message and "did you mean 'epsilon'" in message
    assert "needs" not in message
    with pytest.raises(InvalidParameterError, match="did you mean 'epsilon'"):
        local.make("auto", eps=1.0, domain_size=8)
    with pytest.raises(InvalidParameterError, match="did you mean 'postprocess'"):
        proto = local.make("grr", epsilon=1.0, domain_size=4)
        proto.estimate(proto.simulate([0, 1], rng=0), postproces="norm")


def test_make_takes_protocol_names_in_any_case():
    assert local.make("OUE", epsilon=1.0, domain_size=8) == local.make("oue", epsilon=1.0, domain_size=8)
    assert local.make("L_GRR", epsilon=2.0, epsilon_1=1.0, domain_size=4).name == "l-grr"
    assert local.make("Auto", epsilon=1.0, domain_size=4).name == "grr"
    with pytest.raises(InvalidParameterError, match="Got 'OEU' instead \\(did you mean 'oue'\\?\\)"):
        local.make("OEU", epsilon=1.0, domain_size=8)


def test_longitudinal_privatize_warns_that_each_value_is_a_new_user():
    proto = local.make("l-osue", epsilon=2.0, epsilon_1=1.0, domain_size=4)
    with pytest.warns(EachValueANewUserWarning, match="different user.*client\\(\\)"):
        proto.privatize([0, 1, 1], rng=0)
    with warnings.catch_warnings():  # one device through its memo: no warning
        warnings.simplefilter("error")
        client = proto.client()
        client.report(1, np.random.default_rng(0))
        local.make("grr", epsilon=1.0, domain_size=4).privatize([0, 1], rng=0)


@pytest.mark.parametrize("make, values, kwargs, named", [
    (lambda: local.make("sw", epsilon=1, bounds=(0, 100)), [2**70], {"clip": False}, "SW.simulate must lie in bounds"),
    (lambda: local.make("grr", epsilon=1, domain_size=4), None, {}, "GRR.simulate must be a 1-D array of ints. Got None"),
    (lambda: local.make("grr", epsilon=1, domain_size=4), [9], {}, "GRR.simulate must hold integers in [0, 4)"),
    (lambda: local.make("oue", epsilon=1, domain_size=4), [9], {}, "OUE.simulate must hold integers in [0, 4)"),
])
def test_a_refusal_of_simulates_values_names_simulate(make, values, kwargs, named):
    """``sw.simulate([2**70], clip=False)`` said "of SW.privatize"; ``privatize`` still says
    privatize."""
    from dpdist.errors import InvalidValueTypeError, OutOfDomainError

    protocol = make()
    with pytest.raises((OutOfDomainError, InvalidValueTypeError)) as refused:
        protocol.simulate(values, rng=1, **kwargs)
    assert str(refused.value).startswith("The 'values' argument of " + named), str(refused.value)
    with pytest.raises((OutOfDomainError, InvalidValueTypeError), match=r"\.privatize "):
        protocol.privatize(values, rng=1, **kwargs)
