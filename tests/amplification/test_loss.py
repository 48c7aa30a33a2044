"""A relayed campaign's rounds as a PrivacyLoss: dpdist's composition and dp_accounting's, on the same pair."""

from __future__ import annotations

import pytest

from accounting_support import dp_accounting_pld
from dpdist import accounting, local
from dpdist.amplification import SHUFFLE_ASSUMPTIONS, shuffled_loss


@pytest.mark.slow  # two accountants over thirty rounds at n = 10**5, 0.4 CPU-s: the next test composes rounds in the fast loop
def test_thirty_relay_rounds_stay_at_0889_and_dp_accounting_agrees_within_its_discretization():
    grr = local.make("grr", epsilon=4.0, domain_size=3)
    loss = shuffled_loss(grr, 10**5, 1e-8, rounds=30)
    assert loss.guarantee.epsilon <= 0.889
    assert set(SHUFFLE_ASSUMPTIONS) <= set(loss.assumptions)
    through = accounting.epsilon_at(loss.distribution, 1e-8)
    assert through == pytest.approx(loss.guarantee.epsilon, rel=1e-12)  # one pair on its own lattice: no rounding
    ((atoms, rounds),) = loss.distribution.parts
    theirs = dp_accounting_pld(atoms).self_compose(rounds).get_epsilon_for_delta(1e-8)
    assert loss.guarantee.epsilon <= theirs <= loss.guarantee.epsilon + rounds * 1e-4  # rounded up to 1e-4 each round


def test_relayed_rounds_compose_with_other_charges_in_a_session():
    from dpdist.budget import BudgetSession

    session = BudgetSession(2.0, 1e-8, accountant="pld")
    session.charge(shuffled_loss(local.make("grr", epsilon=4.0, domain_size=3), 10**5, 1e-8, rounds=30), "relayed")
    session.campaign(local.make("grr", epsilon=0.1, domain_size=16), reports=30)
    relayed_alone = 0.889
    assert relayed_alone < session.spent.epsilon < relayed_alone + 3.0 and session.spent.accountant == "pld"
    assert session.spent.epsilon == pytest.approx(session.spent.epsilon_at(1e-8, "pld"))
