"""The conformance kit's entry points: ``check_protocol`` runs every check a protocol's tags call for (its failures on
broken protocols: test_checks.py), ``parametrize_with_checks`` lists them for pytest under ``check_id``'s names."""

from __future__ import annotations


from dpdist import testing
from dpdist.local.frequency.grr import GRR


def test_parametrize_with_checks_lists_every_check_the_tags_call_for():
    grr = GRR(epsilon=1.0, domain_size=3)
    mark = testing.parametrize_with_checks([grr])
    names = [param.values[1].__name__ for param in mark.args[1]]
    assert names == [check.__name__ for check in testing.checks_for(grr)]
    assert "check_channel_is_epsilon_ldp" in names and "check_simulate_matches_privatize" in names
    assert [param.id for param in mark.args[1]][0] == "grr[epsilon=1.0,domain_size=3]-check_config_round_trip"


def test_check_protocol_passes_an_honest_protocol_and_check_id_names_it():
    grr = GRR(epsilon=1.0, domain_size=3)
    testing.check_protocol(grr)
    assert testing.check_id(grr) == "grr[epsilon=1.0,domain_size=3]"
    assert testing.check_id(grr, testing.checks_for(grr)[0]) == "grr[epsilon=1.0,domain_size=3]-check_config_round_trip"
