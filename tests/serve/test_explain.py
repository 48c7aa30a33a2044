"""The explain route's attacker section: from the campaign's config alone, the odds a device's value is guessed and a
test's trade-off curves, as dpdist.accounting states them."""

from __future__ import annotations

import json

import pytest

from dpdist import local
from dpdist.accounting import guess_odds, tradeoff
from dpdist.serve._explain import CURVE, REPORTS, attacker


def _attacker(config: dict) -> dict:
    return attacker(json.dumps(config, sort_keys=True))


def test_the_attacker_section_is_guess_odds_and_tradeoff_of_the_config():
    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
    protocol = local.make("grr", epsilon=1.0, domain_size=8)
    section = _attacker(config)
    assert section["guess"] == json.loads(json.dumps(guess_odds(protocol, REPORTS).to_dict()))
    assert section["kept"]["probability"] == [section["guess"]["probability"][0]] * len(REPORTS)
    assert section["sentence"] == guess_odds(protocol).sentence()
    assert section["tradeoff"]["tpr"] == pytest.approx(tradeoff(protocol.guarantee).tpr)
    first, year = section["curves"]
    assert first["label"] == "one report" and first["exact"] and len(first["fpr"]) == len(CURVE) == 51
    assert year["label"] == "365 reports of one value" and all(b >= a for a, b in zip(first["tpr"], year["tpr"]))


def test_a_memoized_campaign_states_its_memos_odds_and_no_kept_report():
    section = _attacker({"protocol": "l-grr", "epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 8})
    assert section["kept"] is None and section["guess"]["over"] == "memo"
    assert section["curves"][1]["label"] == "365 reports of one value through its memo"
    assert section["guess"]["probability"][-1] == pytest.approx(section["guess"]["probability"][1])  # epsilon_inf's bound
