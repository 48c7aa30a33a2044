"""Randomized responses composed on the lattice (the ledgers' statement): exact on it, bracketing off it, and
within dp_accounting's discretization error of dp_accounting's own composition of the same pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import accounting
from dpdist.accounting._randomized_response import composed_randomized_response
from dpdist.privacy import local_guarantee


def exact(groups: list[tuple[float, int]], delta: float) -> float:
    """The exact epsilon of the groups' randomized responses: their losses' product enumerated, every atom kept."""
    losses, masses = np.zeros(1), np.ones(1)
    for epsilon, count in groups:
        for _ in range(count):
            p = math.exp(epsilon) / (1 + math.exp(epsilon))
            losses = np.concatenate([losses + epsilon, losses - epsilon])
            masses = np.concatenate([masses * p, masses * (1 - p)])
            losses, inverse = np.unique(np.round(losses, 12), return_inverse=True)
            masses = np.bincount(inverse, weights=masses)
    low, high = 0.0, float(losses.max())
    while high - low > 1e-12:
        middle = 0.5 * (low + high)
        above = np.sum(masses * np.maximum(-np.expm1(middle - losses), 0.0))
        low, high = (middle, high) if above > delta else (low, middle)
    return high


def test_on_the_lattice_it_is_the_exact_composition():
    assert composed_randomized_response([(0.1, 365)], 1e-8) == pytest.approx(11.9521834, abs=1e-6)
    groups = [(0.5, 12), (1.25, 4), (0.0625, 30)]
    assert composed_randomized_response(groups, 1e-6) == pytest.approx(exact(groups, 1e-6), rel=1e-9)


@pytest.mark.parametrize("groups, delta", [([(0.123456, 20), (0.98765, 3)], 1e-6), ([(0.33333, 40)], 1e-8),
                                           ([(2.71828, 2), (0.0101, 50)], 1e-4)])
def test_off_the_lattice_rounding_up_and_down_bracket_the_exact_composition(groups, delta):
    truth = exact(groups, delta)
    upper = composed_randomized_response(groups, delta)
    lower = composed_randomized_response(groups, delta, rounding="down")
    assert lower <= truth * (1 + 1e-9) and truth <= upper * (1 + 1e-9)
    assert upper - lower <= 0.01 * truth


def test_dp_accounting_agrees_within_its_discretization_error():
    groups = [(0.1, 200), (0.37, 30), (1.3, 3), (2.0, 1)]
    losses = [accounting.PrivacyLoss.of_guarantee(local_guarantee(epsilon)) for epsilon, count in groups
              for _ in range(count)]
    theirs = accounting.state(accounting.sequential(losses), 1e-6, "pld")
    ours = composed_randomized_response(groups, 1e-6)
    assert abs(ours - theirs.epsilon) <= theirs.error
    assert composed_randomized_response([], 1e-6) == 0.0 and composed_randomized_response([(0.5, 0)], 1e-6) == 0.0
