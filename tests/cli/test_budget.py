"""``dpdist budget create|show`` (dpdist.cli._budget): what the account's lines say of each charge."""

from __future__ import annotations

import pytest

from dpdist import local, privacy
from dpdist.amplification._accounting import assumptions_of
from dpdist.budget import BudgetSession
from dpdist.cli import main
from dpdist.privacy import PrivacyGuarantee


def test_budget_show_names_what_each_charge_is_derived_from(tmp_path, capsys):
    path = tmp_path / "team.json"
    BudgetSession.create(path, 4.0, 1e-8).campaign({"protocol": "grr", "epsilon": 0.1, "domain_size": 16}, reports=50)
    assert main(["budget", "show", str(path)]) == 0
    assert '"domain_size":16' in capsys.readouterr().out


def test_budget_show_ends_each_charge_with_the_assumptions_it_rests_on(tmp_path, capsys):
    """A shuffled round's charge line ends with the assumptions it rests on, by their numbers in the session's line (it
    stated a bare (epsilon, delta) before), each naming its own shuffle, so two rounds of other batch sizes are told
    apart; a plain charge's line assumes nothing."""
    path = tmp_path / "s.json"
    session = BudgetSession.create(path, 4.0, delta=1e-6)
    session.charge(PrivacyGuarantee(0.5, 0.0, "replace", "central"), "cdf")
    grr = local.make("grr", epsilon=4.0, domain_size=8)
    session.charge(privacy.shuffled(grr, n=1000, delta=1e-8), "relayed round")
    session.charge(privacy.shuffled(grr, n=5000, delta=1e-8), "bigger round")
    assert main(["budget", "show", str(path)]) == 0
    head, cdf, relayed, bigger, attacker = capsys.readouterr().out.splitlines()
    assert attacker == f"what an attacker can learn: {session.tradeoff().describe()}"
    assert attacker.startswith("what an attacker can learn: a test of which of two values one record holds, at false-")
    listed = session.spent.assumptions
    for line, n in ((relayed, 1000), (bigger, 5000)):
        numbers = [listed.index(text) + 1 for text in assumptions_of(n)]
        assert all(f"({number}) {text}" in head for number, text in zip(numbers, assumptions_of(n)))
        assert line.endswith(f"; assuming ({numbers[0]}), ({numbers[1]}) above") and line.count("assuming") == 1
        assert listed[numbers[1] - 1].startswith(f"the shuffle of n = {n}: ") and f"{n} distinct" in listed[numbers[1] - 1]
    assert "cdf: " in cdf and "assuming" not in cdf


@pytest.mark.parametrize("name", ["grr", "oue", "ss"])
@pytest.mark.slow  # 0.92 CPU-s: command lines end to end
def test_privatize_charges_a_budget_file_what_a_sessions_campaign_charges(tmp_path, capsys, name):
    """Each run charges one report per user at the protocol's exact loss, as BudgetSession.campaign does (it charged
    the protocol's bare epsilon, the worst case of an epsilon-DP randomizer: 20 runs of GRR d = 16 at 0.1 came to
    about twice the campaign's total at delta 1e-6); 20 runs cost what a campaign of 20 reports per device does."""
    budget, data = tmp_path / "b.json", tmp_path / "d.csv"
    data.write_text("x\n" + "\n".join(str(i % 16) for i in range(50)) + "\n")
    assert main(["budget", "create", str(budget), "--epsilon", "10", "--delta", "1e-6"]) == 0
    config = f'{{"protocol": "{name}", "epsilon": 0.1, "domain_size": 16}}'
    run = ["privatize", str(data), "--config", config, "--column", "x", "--out", str(tmp_path / "r.bin"),
           "--budget-file", str(budget)]
    protocol = local.make(name, epsilon=0.1, domain_size=16)
    session = BudgetSession(10.0, 1e-6)
    for runs in range(1, 21):
        assert main(run) == 0
        session.campaign(protocol)
        if runs in (1, 20):
            one = BudgetSession(10.0, 1e-6)
            one.campaign(protocol, reports=runs)
            assert BudgetSession.open(budget).spent.epsilon == pytest.approx(one.spent.epsilon, rel=1e-12)
    capsys.readouterr()
    charged = BudgetSession.open(budget).spent
    assert charged.epsilon == session.spent.epsilon and charged.accountant == session.spent.accountant == "pld"
    assert charged.epsilon < 0.8 * charged.epsilon_at(1e-6, "basic")
