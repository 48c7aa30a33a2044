"""The accountants against independently computed exact compositions: never below them, never looser than basic.

The exact loss of k reports of k-ary randomized response (GRR) is computed here in closed form, apart from the
package: for the pair of inputs (x0, x1), one report's loss is +eps (the report is x0, probability p), -eps (it is
x1, q) or 0, so k reports lose eps (A - B) with (A, B, rest) multinomial (k; p, q, 1 - p - q): for d = 2 a scaled
binomial.  Any valid (epsilon, delta) statement of k reports is at least this pair's exact epsilon.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from scipy import special

from dpdist import accounting, local
from dpdist.errors import IncompatibleStateError, InvalidParameterError
from dpdist.privacy import PrivacyGuarantee


def grr_probabilities(epsilon: float, d: int) -> tuple[float, float]:
    e = math.exp(epsilon)
    return e / (e + d - 1), 1 / (e + d - 1)


def exact_grr_delta(epsilon: float, d: int, k: int, target: float) -> float:
    """delta(target) of k reports of GRR's pair, summed over the multinomial counts (A, B) in log space."""
    mass, loss = _grr_masses(epsilon, d, k)
    return float(np.sum(mass * np.maximum(-np.expm1(np.minimum(target - loss, 700.0)), 0.0)))


@functools.lru_cache(maxsize=8)
def _grr_masses(epsilon: float, d: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The multinomial masses of (A, B) and their losses eps (A - B), computed once per (epsilon, d, k): a bisection
    reads them ~40 times (k = 365: 134,000 log-gamma terms each time)."""
    p, q = grr_probabilities(epsilon, d)
    a, b = np.meshgrid(np.arange(k + 1), np.arange(k + 1), indexing="ij")
    ok = a + b <= k
    rest = np.where(ok, k - a - b, 0)
    rest_log = math.log1p(-p - q) if d > 2 else 0.0
    log_mass = (special.gammaln(k + 1) - special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(rest + 1)
                + a * math.log(p) + b * math.log(q) + rest * rest_log)
    mass = np.where(ok & ((rest == 0) | (d > 2)), np.exp(log_mass), 0.0)
    return mass, epsilon * (a - b)


def exact_grr_epsilon(epsilon: float, d: int, k: int, delta: float) -> float:
    """The smallest epsilon with exact_grr_delta <= delta, by bisection to 1e-10."""
    low, high = 0.0, k * epsilon
    if exact_grr_delta(epsilon, d, k, 0.0) <= delta:
        return 0.0
    while high - low > 1e-10 * max(high, 1.0):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if exact_grr_delta(epsilon, d, k, middle) > delta else (low, middle)
    return high


def test_the_closed_form_reproduces_the_issues_exact_values():
    assert exact_grr_epsilon(0.1, 2, 365, 1e-8) == pytest.approx(11.95, abs=0.005)
    assert exact_grr_epsilon(0.1, 16, 365, 1e-8) == pytest.approx(3.90, abs=0.005)


@pytest.mark.parametrize("d, exact", [(2, 11.95), (16, 3.90)])
def test_a_year_of_daily_grr_is_within_5_percent_of_exact_never_below_and_a_third_of_the_sum(d, exact):
    daily = accounting.protocol_loss(local.make("grr", epsilon=0.1, domain_size=d))
    year = accounting.sequential([daily] * 365)
    truth = exact_grr_epsilon(0.1, d, 365, 1e-8)
    tightest = accounting.state(year, 1e-8)
    assert tightest.accountant == "pld"
    # never below exact: the exact composition meets delta at the stated epsilon (to rounding; truth is the top of a
    # bisection bracket of width 1e-10 relative, so it may lie above an epsilon stated exactly)
    assert exact_grr_delta(0.1, d, 365, tightest.epsilon) <= 1e-8 * (1 + 1e-9)
    assert tightest.epsilon <= 1.05 * truth
    assert tightest.epsilon <= 0.35 * 36.5
    assert tightest.epsilon - truth <= tightest.error  # within the stated discretization error
    assert accounting.state(year, 1e-8, "basic").epsilon == pytest.approx(36.5)


# k = 100 reports at epsilon 1 and 4 are dp_accounting FFTs of 10^6-10^7 lattice points (0.2-0.7 CPU-s each, 2.6 of
# this test's 3.2): the whole suite only; every accountant is still checked at k = 100 (epsilon 0.1) and at epsilon
# 1 and 4 (k = 1, 10) in the fast loop, on every d and delta.
CASES = [(epsilon, d, k, delta) if k < 100 or epsilon < 1.0
         else pytest.param(epsilon, d, k, delta, marks=pytest.mark.slow)
         for epsilon, d, k, delta in itertools.product((0.1, 1.0, 4.0), (2, 3, 16), (1, 10, 100), (1e-6, 1e-9))]


@pytest.mark.parametrize("epsilon, d, k, delta", CASES)
def test_no_accountant_states_less_than_the_exact_composition_or_more_than_basic(epsilon, d, k, delta):
    loss = accounting.protocol_loss(local.make("grr", epsilon=epsilon, domain_size=d), reports=k)
    truth = exact_grr_epsilon(epsilon, d, k, delta)
    for name in accounting.ACCOUNTANTS:
        stated = accounting.state(loss, delta, name).epsilon
        assert truth * (1 - 1e-9) - 1e-12 <= stated <= k * epsilon * (1 + 1e-12), name


def _exact_product_epsilon(pairs: list[tuple[np.ndarray, np.ndarray]], delta: float) -> float:
    """The exact epsilon of a product of pairs (every combination of their atoms enumerated)."""
    losses, masses = np.zeros(1), np.ones(1)
    for values, weights in pairs:
        losses = (losses[:, None] + values[None, :]).ravel()
        masses = (masses[:, None] * weights[None, :]).ravel()

    def delta_at(target: float) -> float:
        return float(np.sum(masses * np.maximum(-np.expm1(target - losses), 0.0)))

    low, high = 0.0, float(losses.max())
    while high - low > 1e-10:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if delta_at(middle) > delta else (low, middle)
    return high


@pytest.mark.parametrize("seed", range(4))
def test_heterogeneous_campaigns_compose_above_their_exact_product_and_below_basic(seed):
    """Eight campaigns of GRR with random epsilons and domains: each accountant between the exact product of the
    campaigns' pairs (enumerated) and the sum."""
    rng = np.random.default_rng(seed)
    protocols = [local.make("grr", epsilon=float(rng.uniform(0.05, 3.0)), domain_size=int(rng.integers(2, 40)))
                 for _ in range(8)]
    losses = [accounting.protocol_loss(protocol) for protocol in protocols]
    pairs = []
    for protocol in protocols:
        p, q = grr_probabilities(protocol.epsilon, protocol.domain_size)
        eps = protocol.epsilon
        pairs.append((np.array([eps, -eps, 0.0]), np.array([p, q, 1 - p - q])))
    total = accounting.sequential(losses)
    truth = _exact_product_epsilon(pairs, 1e-6)
    basic = sum(protocol.epsilon for protocol in protocols)
    for name in accounting.ACCOUNTANTS:
        assert truth - 1e-9 <= accounting.state(total, 1e-6, name).epsilon <= basic * (1 + 1e-12), name


def test_parallel_composition_is_the_worst_part():
    small = accounting.protocol_loss(local.make("grr", epsilon=0.5, domain_size=4))
    large = accounting.protocol_loss(local.make("oue", epsilon=2.0, domain_size=8))
    both = accounting.parallel([small, large, small])
    assert both.guarantee.epsilon == 2.0 and both.rho == pytest.approx(large.rho)
    worst = accounting.state(large, 1e-6, "pld").epsilon
    assert worst - 1e-9 <= accounting.state(both, 1e-6, "pld").epsilon <= 2.0
    assert accounting.parallel([small, small]).distribution == small.distribution


def test_an_accountant_that_cannot_state_a_charge_refuses_it_by_name():
    approximate = accounting.PrivacyLoss.of_guarantee(PrivacyGuarantee(1.0, 1e-7, "replace", "central"))
    with pytest.raises(InvalidParameterError, match="'zcdp' accountant cannot state .* no zCDP"):
        accounting.state(approximate, 1e-6, "zcdp")
    with pytest.raises(InvalidParameterError, match="'basic' accountant cannot state"):
        accounting.state(approximate, 1e-8, "basic")
    bare = accounting.PrivacyLoss(approximate.guarantee, None, None, "a release from another library")
    with pytest.raises(InvalidParameterError, match="'pld' accountant cannot state .* no privacy loss distribution"):
        accounting.state(bare, 1e-6, "pld")
    assert accounting.state(approximate, 1e-6).accountant in ("basic", "pld")


def test_the_discrete_laplace_loss_is_exact_and_the_gaussian_states_its_rho():
    laplace = accounting.discrete_laplace(1.0, sensitivity=3)
    assert laplace.distribution.largest == pytest.approx(1.0)
    k = np.arange(-200, 201)
    a = 1.0 / 3
    upper = np.exp(-a * np.abs(k)) * math.tanh(a / 2)
    lower = np.exp(-a * np.abs(k - 3)) * math.tanh(a / 2)
    exact = float(np.sum(np.maximum(upper - math.exp(0.4) * lower, 0.0)))
    assert laplace.distribution.delta(0.4) == pytest.approx(exact, rel=1e-9)
    gauss = accounting.gaussian(2.0, 1.0, delta=1e-6)
    assert gauss.rho == pytest.approx(0.125)
    assert accounting.state(gauss, 1e-6, "pld").epsilon < accounting.state(gauss, 1e-6, "zcdp").epsilon


def test_describe_ends_with_the_assumptions_and_is_unchanged_without_any():
    """A statement, a loss and a budget's account write their assumptions after their one line, in one form; with none,
    the line is what it was."""
    one = accounting.PrivacyLoss.of_guarantee(PrivacyGuarantee(1.0, 0.0, "replace", "central"))
    assert one.assumptions == () and one.describe() == ("1-differential privacy (central, replace one record), 0.5-zCDP, "
                                                        "a privacy loss distribution (any 1-DP mechanism)")
    statement = accounting.state(one, 1e-8, "basic")
    assert statement.assumptions == ()
    assert statement.describe() == "(1, 1e-08)-DP (central, replace) over 1 mechanism(s) by basic composition"
    assumed = accounting.state(one.assuming("a; b"), 1e-8, "basic")
    assert assumed.describe() == f"{statement.describe()}; assuming: a; b"
    two = accounting.state(accounting.sequential([one.assuming("the shuffler does not collude"), one]), 1e-8, "basic")
    assert two.describe() == ("(2, 1e-08)-DP (central, replace) over 2 mechanism(s) by basic composition; assuming: "
                              f"(1) the shuffler does not collude; (2) {accounting.FRESH_RANDOMNESS}")
    assert accounting.sequential([one, one]).describe().endswith(f"; assuming: {accounting.FRESH_RANDOMNESS}")
    assert accounting.Statement.from_dict(two.to_dict()).describe() == two.describe()
    approximate = accounting.PrivacyLoss.of_guarantee(PrivacyGuarantee(1.0, 1e-6, "replace", "central")).assuming("x")
    with pytest.raises(InvalidParameterError) as refusal:  # a refusal names the loss within its sentence: no assumptions
        accounting.state(approximate, 1e-8, "zcdp")
    assert f"cannot state {approximate.describe(assumptions=False)} at delta 1e-08: " in str(refusal.value)
    assert "assuming" not in str(refusal.value) and approximate.describe().endswith("; assuming: x")


def test_a_loss_round_trips_through_json_and_refuses_a_damaged_field():
    loss = accounting.sequential([accounting.protocol_loss(local.make("grr", epsilon=0.3, domain_size=5))] * 3)
    again = accounting.PrivacyLoss.from_dict(loss.to_dict())
    assert again == loss
    damaged = loss.to_dict()
    damaged["distribution"]["parts"][0]["count"] = "3"
    with pytest.raises(IncompatibleStateError, match=r"in 'distribution', .*'parts\[0\]\.count' must be an integer"):
        accounting.PrivacyLoss.from_dict(damaged)
    damaged["distribution"]["parts"][0]["count"] = 3
    del damaged["rho"]
    with pytest.raises(IncompatibleStateError, match="'rho' is missing"):
        accounting.PrivacyLoss.from_dict(damaged)


def test_a_campaign_of_many_reports_is_one_value_and_states_what_the_list_of_its_reports_does():
    """reports=k composes k copies of one pair on its own lattice (no list of k losses): at k = 365 it states what the
    explicit list states, and 10^9 reports of GRR are stated below basic composition, never below the exact figure
    (the exact composition's delta at the stated epsilon is within delta)."""
    grr = local.make("grr", epsilon=0.1, domain_size=16)
    campaign = accounting.protocol_loss(grr, reports=365)
    listed = accounting.sequential([accounting.protocol_loss(grr)] * 365)
    assert campaign.distribution == listed.distribution and campaign.guarantee == listed.guarantee
    assert accounting.state(campaign, 1e-8).epsilon == accounting.state(listed, 1e-8).epsilon
    assert exact_grr_delta(0.1, 16, 365, accounting.state(campaign, 1e-8).epsilon) <= 1e-8 * (1 + 1e-9)
    year = accounting.state(accounting.protocol_loss(grr, reports=10**9), 1e-8)
    assert year.accountant == "pld" and year.epsilon < 0.01 * 10**8


def test_repeated_refuses_a_count_that_is_not_a_positive_integer_by_name():
    one = accounting.protocol_loss(local.make("grr", epsilon=0.1, domain_size=2))
    for bad in (0, -3, 2.5, "10"):
        with pytest.raises(InvalidParameterError, match="times"):
            accounting.repeated(one, bad)


@pytest.mark.parametrize("call, named", [
    (lambda: accounting.gaussian(1e300, 1.0, delta=1e-6), "sigma"),
    (lambda: accounting.gaussian(1e-300, 1.0, delta=1e-6), "sigma"),
    (lambda: accounting.gaussian("1", 1.0, delta=1e-6), "sigma"),
    (lambda: accounting.gaussian(1.0, 1.0, delta=None), "delta"),
    (lambda: accounting.gaussian(1e90, 1.0, delta=1e-6), "delta"),  # (0, 1e-6)-DP: no epsilon > 0 to state
    (lambda: accounting.discrete_laplace(1.0, sensitivity=10**9), "sensitivity"),
    (lambda: accounting.discrete_laplace("1"), "epsilon"),
])
def test_a_mechanisms_argument_out_of_reach_is_refused_by_name(call, named):
    with pytest.raises(InvalidParameterError, match=f"'{named}'"):
        call()


@pytest.mark.slow  # 0.82 CPU-s: an exact loss over a large support
def test_a_discrete_laplace_of_large_sensitivity_is_stated_exactly_in_blocks():
    """10^5 atoms: the Renyi divergences are read a block of orders at a time (no orders-by-atoms matrix of 6e7
    entries); pure epsilon, at most its epsilon at any delta."""
    loss = accounting.discrete_laplace(1.0, sensitivity=10**5)
    assert len(loss.distribution.losses) == 10**5 + 1
    assert 0.0 < loss.rho <= 0.5
    assert accounting.state(loss, 1e-6).epsilon <= 1.0
