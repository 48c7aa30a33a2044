"""Every accountant between an independently computed exact composition and basic composition, beyond GRR.

The exact compositions are written here from first principles, apart from dpdist's losses: k Gaussian mechanisms
are one Gaussian of ``sigma / sqrt(k)`` (Balle & Wang 2018, Thm. 8, closed form); a discrete Laplace pair's
privacy loss and OUE's (two independent bits) are enumerated from the mechanisms' own probabilities and their
products convolved exactly; the device ledger's statement lies between k-fold randomized response composed exactly
(a scaled binomial) and its pure sum.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import accounting, local
from dpdist.local.ledger import PrivacyLedger


def _normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def exact_gaussian_epsilon(mu: float, delta: float) -> float:
    """The exact epsilon at ``delta`` of a Gaussian of sensitivity over sigma ``mu`` (Balle & Wang's Thm. 8)."""

    def delta_at(epsilon: float) -> float:
        return _normal_cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * _normal_cdf(-epsilon / mu - mu / 2)

    low, high = 0.0, 100.0
    while high - low > 1e-10:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if delta_at(middle) > delta else (low, middle)
    return high


def exact_epsilon(losses: np.ndarray, masses: np.ndarray, delta: float) -> float:
    def delta_at(target: float) -> float:
        return float(np.sum(masses * np.maximum(-np.expm1(target - losses), 0.0)))

    low, high = 0.0, float(losses.max())
    while high - low > 1e-10:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if delta_at(middle) > delta else (low, middle)
    return high


def product(pairs) -> tuple[np.ndarray, np.ndarray]:
    """The loss and its law under P of independent mechanisms, each ``(losses, masses)``; equal losses merged."""
    losses, masses = np.zeros(1), np.ones(1)
    for values, weights in pairs:
        losses = np.round((losses[:, None] + values[None, :]).ravel(), 12)
        masses = (masses[:, None] * weights[None, :]).ravel()
        losses, inverse = np.unique(losses, return_inverse=True)
        masses = np.bincount(inverse, weights=masses)
    return losses, masses


def laplace_pair(epsilon: float, sensitivity: int) -> tuple[np.ndarray, np.ndarray]:
    """Discrete Laplace of parameter epsilon/sensitivity, a query moved by ``sensitivity``, enumerated on +-400."""
    a = epsilon / sensitivity
    k = np.arange(-400, 401)
    p = np.exp(-a * np.abs(k)) * math.tanh(a / 2)
    q = np.exp(-a * np.abs(k - sensitivity)) * math.tanh(a / 2)
    return np.log(p / q), p


def oue_pair(epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """OUE's worst pair: the two differing bits, independent; under the first input its bit is 1 w.p. 1/2, the
    other's w.p. q = 1/(e^eps + 1)."""
    p, q = 0.5, 1.0 / (math.exp(epsilon) + 1.0)
    own = (np.log([p / q, (1 - p) / (1 - q)]), np.array([p, 1 - p]))
    other = (np.log([q / p, (1 - q) / (1 - p)]), np.array([q, 1 - q]))
    return product([own, other])


@pytest.mark.parametrize("sigma, k", [(2.0, 1), (4.0, 10), (10.0, 100)])
def test_composed_gaussians_lie_between_their_closed_form_and_basic(sigma, k):
    delta = 1e-6
    each = accounting.gaussian(sigma, 1.0, delta=delta / k)
    total = accounting.sequential([each] * k)
    truth = exact_gaussian_epsilon(math.sqrt(k) / sigma, delta)
    basic = accounting.state(total, delta, "basic").epsilon
    assert basic == pytest.approx(k * each.guarantee.epsilon)
    for name in ("zcdp", "pld"):
        stated = accounting.state(total, delta, name).epsilon
        assert truth - 1e-9 <= stated <= basic * (1 + 1e-12), (name, truth, stated, basic)
    assert accounting.state(total, delta, "pld").epsilon <= 1.02 * truth


@pytest.mark.parametrize("epsilon, sensitivity, k", [(0.5, 1, 20), (1.0, 3, 5), (0.2, 2, 50)])
def test_composed_discrete_laplace_lies_between_its_enumeration_and_basic(epsilon, sensitivity, k):
    delta = 1e-7
    total = accounting.sequential([accounting.discrete_laplace(epsilon, sensitivity)] * k)
    truth = exact_epsilon(*product([laplace_pair(epsilon, sensitivity)] * k), delta)
    for name in accounting.ACCOUNTANTS:
        stated = accounting.state(total, delta, name).epsilon
        assert truth - 1e-7 <= stated <= k * epsilon * (1 + 1e-12), (name, truth, stated)


def test_a_mix_of_protocols_lies_between_its_exact_product_and_basic():
    """OUE and GRR campaigns of unequal epsilons: every accountant above the exact product of their pairs."""
    delta = 1e-6
    charges = [(accounting.protocol_loss(local.make("oue", epsilon=1.0, domain_size=32)), oue_pair(1.0))] * 4
    charges += [(accounting.protocol_loss(local.make("oue", epsilon=0.3, domain_size=4)), oue_pair(0.3))] * 3
    grr = local.make("grr", epsilon=0.7, domain_size=5)
    e = math.exp(0.7)
    charges += [(accounting.protocol_loss(grr), (np.array([0.7, -0.7, 0.0]), np.array([e, 1, 3]) / (e + 4)))] * 5
    total = accounting.sequential([loss for loss, _ in charges])
    truth = exact_epsilon(*product([pair for _, pair in charges]), delta)
    basic = 4 * 1.0 + 3 * 0.3 + 5 * 0.7
    for name in accounting.ACCOUNTANTS:
        stated = accounting.state(total, delta, name).epsilon
        assert truth - 1e-7 <= stated <= basic * (1 + 1e-12), (name, truth, stated)


def test_the_ledgers_statement_lies_between_its_reports_composed_exactly_and_its_sum():
    """A device's charges are stated never below its reports' pairs composed exactly (OUE's: the two differing bits),
    and never above the pure total the budget refuses by."""
    ledger = PrivacyLedger(budget=100.0)
    protocol = local.make("oue", epsilon=0.5, domain_size=8)
    for _ in range(40):
        ledger.report(protocol, [3], collector="https://collector.example", rng=0)
    truth = exact_epsilon(*product([oue_pair(0.5)] * 40), 1e-8)
    for name in accounting.ACCOUNTANTS:
        stated = ledger.statement(1e-8, name).epsilon
        assert truth - 1e-7 <= stated <= ledger.spent() * (1 + 1e-12), (name, truth, stated)
    assert ledger.spent() == pytest.approx(20.0)
