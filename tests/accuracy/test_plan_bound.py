"""The plan's proof that a composed loss's epsilon lies above a value: never wrong, and it holds where a plan needs it."""

from __future__ import annotations

import pytest

from dpdist import local
from dpdist.accounting import Atoms, Composed, GaussianLoss, protocol_loss, state
from dpdist.accuracy._plan_bound import surely_above


@pytest.mark.parametrize("name, epsilon, campaigns", [("grr", 2.0, 20), ("grr", 0.5, 52), ("oue", 1.0, 12),
                                                      ("grr", 4.0, 3)])
def test_a_proof_is_never_wrong_where_the_composition_can_check_it(name, epsilon, campaigns):
    """Wherever the bound says "above", the PLD accountant's epsilon (an upper bound on the exact one) is above too;
    the bound is checked at targets up to the PLD's own value, so some say "above" and the largest does not."""
    loss = protocol_loss(local.make(name, epsilon=epsilon, domain_size=8), campaigns)
    pld = state(loss, 1e-8, "pld").epsilon
    answers = [surely_above(loss.distribution, 1e-8, share * pld) for share in (0.05, 0.2, 0.4, 0.6, 0.8, 1.0)]
    assert answers[-1] is False and any(answers), answers
    assert answers == sorted(answers, reverse=True)  # a proof at a target holds at every smaller one


def test_a_year_of_campaigns_at_the_targets_epsilon_each_is_proved_above_without_composing():
    loss = protocol_loss(local.make("grr", epsilon=4.0, domain_size=16), 365)
    assert surely_above(loss.distribution, 1e-8, 4.0)
    near = protocol_loss(local.make("grr", epsilon=0.1, domain_size=16), 365)  # 3.90 by PLD: no proof at 4
    assert not surely_above(near.distribution, 1e-8, 4.0) and not surely_above(near.distribution, 1e-8, 3.0)


def test_what_the_bound_cannot_read_is_left_to_the_composition():
    assert not surely_above(None, 1e-8, 0.1)
    assert not surely_above(GaussianLoss(0.5), 1e-8, 0.1)
    assert not surely_above(Composed(((Atoms((5.0,), (0.5,), 0.5), 100),)), 1e-8, 0.1)  # an infinite loss
    assert surely_above(Composed(((Atoms((5.0, -1.0), (0.9, 0.1)), 100),)), 1e-8, 0.1)
