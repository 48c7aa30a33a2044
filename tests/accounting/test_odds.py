"""What an attacker can learn: the best guess of a device's value against its channel enumerated and against the
randomizer itself, over a year of reports, and a membership test's power against the known curves and an attack run
on releases."""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy import optimize, stats

from dpdist import accounting, central, local
from dpdist.accounting import guess_bound, guess_odds, tradeoff
from dpdist.accounting._odds import _times, percent
from dpdist.errors import InvalidParameterError
from dpdist.local.ledger import PrivacyLedger
from dpdist.postprocess import project_simplex
from dpdist.privacy import PrivacyGuarantee
from conformance._examples import CASES, case_id, make
from odds_support import FRESH, over_eight

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
#: cases of over 0.25 CPU-s (channels of millions of outputs; a year's composed loss), in the whole suite only
HEAVY = {"hcms": EPSILONS, "flh": (2.0, 4.0, 8.0), "olh": (8.0,)}
YEAR = (1, 2, 7, 30, 365)
#: the level of every Clopper-Pearson interval (two-sided): a seeded run fails by chance with at most this chance
LEVEL = 0.999


def _law(protocol) -> np.ndarray | None:
    """One report's law over the 8 values (a numerical protocol: its bins), None where it cannot be enumerated."""
    try:
        if protocol.tags.kind == "numerical":
            matrix = getattr(protocol, "transition_matrix", None)
            return None if matrix is None else np.asarray(matrix()).T
        return protocol.channel()
    except (NotImplementedError, MemoryError, InvalidParameterError):
        return None


def _enumerated(protocol, prior=None, law=None) -> float:
    """The Bayes-optimal guess by its definition: for each output, the posterior's most likely value, right with the
    prior-weighted likelihood of that value (a numerical protocol: its equal bins, uniform within each)."""
    law = _law(protocol) if law is None else law
    weights = np.full(law.shape[0], 1.0 / law.shape[0]) if prior is None else np.asarray(prior) / np.sum(prior)
    posterior = weights[:, None] * law  # each output's column: the prior times the likelihood
    return float(posterior[np.argmax(posterior, axis=0), np.arange(law.shape[1])].sum())


def _powered(channel: np.ndarray, reports: int) -> np.ndarray:
    """The channel of ``reports`` fresh reports of one value (outputs: every sequence)."""
    out = channel
    for _ in range(reports - 1):
        out = (out[:, :, None] * channel[:, None, :]).reshape(channel.shape[0], -1)
    return out


def _interval(successes: int, trials: int) -> tuple[float, float]:
    found = stats.binomtest(successes, trials).proportion_ci(LEVEL, method="exact")
    return found.low, found.high


# ---------------------------------------------------------------------------------------------- one report
def _cases(epsilons, heavy=HEAVY):
    """Every protocol of fresh reports over 8 values (tests/odds_support.py) at every epsilon; the heavy ones in the
    whole suite only."""
    return [pytest.param(name, epsilon, id=f"{name}-{epsilon:g}",
                         marks=[pytest.mark.slow] if epsilon in heavy.get(name, ()) else [])
            for name in FRESH for epsilon in epsilons]


@pytest.mark.parametrize(("name", "epsilon"), _cases(EPSILONS))
def test_one_reports_odds_are_the_channels_enumerated_or_the_certified_bound(name, epsilon):
    protocol = over_eight(name, epsilon)
    odds, law = guess_odds(protocol), _law(protocol)
    assert odds.chance == 1 / 8
    if law is None:  # its channel cannot be enumerated: the bound of any epsilon-LDP report, said to be one
        assert odds.exact == (False,) and odds.probability[0] == pytest.approx(guess_bound(epsilon, chance=1 / 8))
    else:
        assert odds.exact == (True,)
        assert odds.probability[0] == pytest.approx(_enumerated(protocol, law=law), rel=1e-9)
    assert 1 / 8 <= odds.probability[0] <= guess_bound(epsilon, chance=1 / 8) * (1 + 1e-12)


def test_grrs_one_report_is_the_closed_form_and_no_protocol_does_worse():
    protocol = local.make("grr", epsilon=1.0, domain_size=8)
    assert guess_odds(protocol).probability[0] == pytest.approx(math.e / (math.e + 7))  # 0.28 against 0.125
    assert guess_bound(1.0, chance=1 / 8) == pytest.approx(math.e / (math.e + 7))
    for name in ("oue", "ss", "hr", "sue"):  # every other 1-LDP protocol guesses no better
        assert guess_odds(local.make(name, epsilon=1.0, domain_size=8)).probability[0] < math.e / (math.e + 7)


@pytest.mark.parametrize("name", [pytest.param(name, marks=[pytest.mark.slow] if name in HEAVY else [])
                                  for name in FRESH])
def test_one_reports_odds_are_what_the_randomizer_gives_an_attacker(name):
    """The Bayes attacker run on reports the randomizer draws: its success rate covers the stated probability."""
    protocol = over_eight(name, 1.0)
    law = _law(protocol)
    if law is None:
        pytest.skip(f"{name}'s channel cannot be enumerated over 8 values: no Bayes attacker to run")
    rng = np.random.default_rng([len(name), 97])
    trials = 20_000
    if protocol.tags.kind == "numerical":
        values = rng.uniform(0.0, 1.0, trials)
        truth = np.minimum((values * 8).astype(int), 7)
    else:
        truth = values = rng.integers(0, 8, trials)
    guesses = np.argmax(law[:, protocol.report_index(protocol.privatize(values, rng))], axis=0)
    low, high = _interval(int(np.sum(guesses == truth)), trials)
    assert low <= guess_odds(protocol).probability[0] <= high


def test_a_given_prior_is_enumerated_and_chance_is_its_largest_weight():
    prior = np.array([0.4, 0.2, 0.1, 0.1, 0.08, 0.06, 0.04, 0.02])
    for name in ("grr", "oue", "ss", "hr"):
        protocol = local.make(name, epsilon=2.0, domain_size=8)
        odds = guess_odds(protocol, prior=prior * 10)  # weights: normalized
        assert odds.prior == "given" and odds.chance == pytest.approx(0.4)
        assert odds.probability[0] == pytest.approx(_enumerated(protocol, prior), rel=1e-12)
        assert odds.probability[0] <= guess_bound(2.0, chance=0.4)
    with pytest.raises(InvalidParameterError, match="one weight per candidate value \\(8\\)"):
        guess_odds(local.make("grr", epsilon=1.0, domain_size=8), prior=[0.5, 0.5])


def test_an_estimate_projected_onto_the_shares_is_a_prior():
    protocol = local.make("oue", epsilon=1.0, domain_size=8)
    estimate = protocol.estimate(protocol.privatize(np.zeros(200, dtype=int), rng=3))
    assert estimate.frequencies.min() < 0  # unbiased: no prior
    with pytest.raises(InvalidParameterError, match="non-negative weights"):
        guess_odds(protocol, prior=estimate.frequencies)
    prior = project_simplex(estimate.frequencies)
    odds = guess_odds(protocol, prior=prior)
    assert odds.chance == pytest.approx(prior.max()) and odds.probability[0] <= guess_bound(1.0, chance=prior.max())


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_protocols_one_report_lies_between_chance_and_its_epsilons_bound(case):
    protocol = make(case)
    if protocol.tags.kind in ("key_value", "heavy_hitters") and getattr(protocol, "domain_size", None) is None:
        pytest.skip("no domain to guess in")
    try:
        odds = guess_odds(protocol, ranges=4)
    except InvalidParameterError as refused:
        assert "cannot state" in str(refused)
        return
    epsilon = odds.epsilon
    assert odds.chance <= odds.probability[0] <= guess_bound(epsilon, chance=odds.chance) * (1 + 1e-9) + 1e-12


# ---------------------------------------------------------------------------------------------- the bound
def test_the_bound_holds_for_every_channel_a_guarantee_allows():
    """The largest success any channel meeting the guarantee on the guess's events can have (a linear program over
    the chance of each guess under each value) is at most the bound, and reaches it under a uniform prior."""
    rng = np.random.default_rng([4, 97])
    for _ in range(60):
        d, epsilon = int(rng.integers(2, 6)), float(rng.uniform(0.0, 3.0))
        delta = float(rng.choice([0.0, rng.uniform(0.0, 0.2)]))
        prior = rng.dirichlet(np.ones(d)) if rng.random() < 0.7 else np.full(d, 1 / d)
        largest = _largest_success(prior, epsilon, delta)
        bound = guess_bound(epsilon, delta, chance=float(prior.max()))
        assert largest <= bound + 1e-9
        if np.all(prior == prior[0]):
            assert largest == pytest.approx(bound, abs=1e-7)


def _largest_success(prior: np.ndarray, epsilon: float, delta: float) -> float:
    d = prior.size
    chance = np.zeros((d, d))  # chance[x, z]: the guess is x when the value is z
    objective = -np.diag(prior).ravel()
    above = []
    for x in range(d):
        for z in range(d):
            if z != x:  # P(guess x | x) <= e^eps P(guess x | z) + delta
                row = chance.copy()
                row[x, x], row[x, z] = 1.0, -math.exp(epsilon)
                above.append(row.ravel())
    sums = []
    for z in range(d):  # the guesses under each value sum to one
        row = chance.copy()
        row[:, z] = 1.0
        sums.append(row.ravel())
    found = optimize.linprog(objective, A_ub=np.array(above), b_ub=np.full(len(above), delta), A_eq=np.array(sums),
                             b_eq=np.ones(d), bounds=(0, 1))
    return -found.fun


# ---------------------------------------------------------------------------------------------- a year of reports
@pytest.mark.parametrize("name", ["grr", "oue", "sue"])
def test_fresh_reports_odds_are_the_powered_channels_enumerated(name):
    for d in (2, 3, 5):
        for epsilon in (0.5, 2.0):
            protocol = local.make(name, epsilon=epsilon, domain_size=d)
            reports = (1, 2, 3) if name != "grr" or d > 3 else (1, 2, 3, 4)
            odds = guess_odds(protocol, reports)
            assert all(odds.exact)
            enumerated = [_enumerated_power(protocol, r) for r in reports]
            np.testing.assert_allclose(odds.probability, enumerated, rtol=1e-12, atol=1e-15)


def _enumerated_power(protocol, reports: int) -> float:
    law = _powered(protocol.channel(), reports)
    return float(np.max(law, axis=0).sum() / law.shape[0])


#: a year's odds at 0.5 and 8 over the registry (1.1 CPU-s) in the whole suite; the fast loop takes epsilon 1, where a
#: year of fresh reports gives the value away and one report does not
YEAR_IN_THE_FULL_SUITE = {name: EPSILONS if name in ("cp", "flh") else (0.5, 8.0, *HEAVY.get(name, ())) for name in FRESH}


@pytest.mark.parametrize(("name", "epsilon"), _cases((0.5, 1.0, 8.0), YEAR_IN_THE_FULL_SUITE))
def test_a_year_of_daily_reports_with_and_without_memoization(name, epsilon):
    protocol = over_eight(name, epsilon)
    fresh, kept = guess_odds(protocol, YEAR), guess_odds(protocol, YEAR, over="kept")
    one = fresh.probability[0]
    assert kept.probability == (one,) * len(YEAR)  # a kept report says no more the 365th time
    assert kept.exact == fresh.exact[:1] * len(YEAR)
    for i, j in itertools.combinations(range(len(YEAR)), 2):  # more reports guess no worse than an exact fewer
        assert fresh.probability[j] >= fresh.probability[i] - 1e-12 or not fresh.exact[i], (YEAR[i], YEAR[j])
    assert fresh.probability[-1] <= 1.0
    exact_counts = name in ("grr", "oue", "sue")  # GRR's reports' counts, the unary encodings' bit counts
    later = (exact_counts,) * (len(YEAR) - 1)
    assert fresh.exact == fresh.exact[:1] + later
    if epsilon >= 1.0:  # a year of fresh reports gives the value away; a kept report does not
        assert fresh.probability[-1] > 0.999 and one < 0.999 or epsilon == 8.0


def test_grrs_exact_year_is_what_the_most_reported_value_guesses():
    protocol = local.make("grr", epsilon=0.5, domain_size=8)
    odds = guess_odds(protocol, [30, 365])
    rng = np.random.default_rng([30, 97])
    devices = 4000
    for reports, stated in zip(odds.reports, odds.probability):
        values = rng.integers(0, 8, devices)
        drawn = protocol.privatize(np.repeat(values, reports), rng).reshape(devices, reports)
        counts = np.stack([(drawn == item).sum(axis=1) for item in range(8)], axis=1)
        best = counts == counts.max(axis=1, keepdims=True)
        success = best[np.arange(devices), values] / best.sum(axis=1)  # ties split evenly
        low, high = _interval(int(round(success.sum())), devices)
        assert low - 1e-3 <= stated <= high + 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ss", "hr", "olh"])
def test_the_bound_over_a_month_is_above_the_attack_on_the_randomizer(name):
    """Thirty fresh reports: the most-supported value (the Bayes guess under a uniform prior for these two-level
    channels) does no better than the stated bound."""
    protocol = over_eight(name, 0.5)
    rng = np.random.default_rng([31, len(name), 97])
    devices, reports = 3000, 30
    law = protocol.channel()
    values = rng.integers(0, 8, devices)
    indices = protocol.report_index(protocol.privatize(np.repeat(values, reports), rng)).reshape(devices, reports)
    scores = np.log(law)[:, indices].sum(axis=2).T  # each device's log-likelihood of every value
    best = scores >= scores.max(axis=1, keepdims=True) - 1e-9
    success = best[np.arange(devices), values] / best.sum(axis=1)
    low, _ = _interval(int(round(success.sum())), devices)
    assert low <= guess_odds(protocol, reports).probability[0]


def test_a_memoized_protocols_odds_stop_at_its_permanent_response():
    protocol = local.make("l-grr", epsilon=2.0, epsilon_1=1.0, domain_size=8)
    odds = guess_odds(protocol, YEAR)
    assert odds.over == "memo" and odds.exact[0] and not any(odds.exact[1:])
    assert odds.probability[0] == pytest.approx(_enumerated(protocol))
    ceiling = guess_bound(2.0, chance=1 / 8)  # the permanent response's own odds: GRR at epsilon_inf = 2
    np.testing.assert_allclose(odds.probability[1:], ceiling, rtol=1e-12)
    assert guess_odds(local.make("grr", epsilon=1.0, domain_size=8), 365).probability[0] > 0.999 > ceiling


def test_a_ledger_admits_the_reports_its_budget_allows():
    protocol = local.make("grr", epsilon=1.0, domain_size=8)
    ledger = PrivacyLedger(budget=10.0)
    odds = guess_odds(protocol, [1, 7, 365], ledger=ledger)
    assert odds.sent == (1, 7, 10)
    assert odds.at(365) == pytest.approx(guess_odds(protocol, 10).probability[0])
    ledger.report(protocol, np.array([3, 3, 3]), collector="local")
    assert guess_odds(protocol, 365, ledger=ledger).sent == (10,)  # three sent, seven more admitted


def test_the_sentence_names_the_chance_baseline_its_prior_and_what_holds_for_any_prior():
    odds = guess_odds(local.make("grr", epsilon=1.0, domain_size=8))
    assert odds.sentence() == "Someone who sees your report can guess your value with a probability of 28%, against " \
                              "12.5% by chance, if every answer is equally likely; whatever else they know, at most " \
                              "2.72 times a blind guess."
    assert "at most" in guess_odds(local.make("pm", epsilon=1.0, bounds=(0.0, 1.0))).sentence()
    skewed = guess_odds(local.make("grr", epsilon=1.0, domain_size=8), prior=[20, 1, 1, 1, 1, 1, 1, 1])
    assert "if answers are as common as assumed; whatever else they know, at most 2.72 times" in skewed.sentence()


@pytest.mark.slow  # a bound checked over 50 random priors, 0.3 CPU-s: the skewed prior's sentence above stays
def test_no_prior_lets_the_best_guess_beat_the_blind_one_by_more_than_its_times():
    protocol = local.make("grr", epsilon=1.0, domain_size=8)
    for prior in np.random.default_rng(5).dirichlet(np.full(8, 0.3), size=50):
        odds = guess_odds(protocol, [1, 3], prior=prior)
        assert odds.chance * (1 - 1e-12) <= odds.probability[0] <= odds.times[0] * odds.chance
        assert odds.times == pytest.approx((math.e, 8.0))  # e^3 > 8 values: S <= 1 <= 8 pi*
    assert guess_odds(local.make("grr", epsilon=3.0, domain_size=8)).times == (8.0,)  # e^3 > 8: success <= 1
    memo = guess_odds(local.make("l-grr", epsilon=4.0, epsilon_1=1.0, domain_size=8), [1, 7], over="kept")
    assert memo.times == pytest.approx((math.e, math.e)) and "at most 2.72 times" in memo.sentence()
    assert guess_odds(local.make("l-grr", epsilon=2.0, epsilon_1=1.0, domain_size=100), 7).times[0] <= math.exp(2.0)
    assert [_times(value) for value in (math.e, 2.0, 9.999, 22026.47)] == ["2.72", "2", "10", "22,100"]  # rounded up


# ---------------------------------------------------------------------------------------------- membership
def test_a_bound_is_rounded_up_and_chance_to_the_nearest():
    """An attacker's figure is never shown below it (28.049% is at most 28.1%), an exact one stays (0.28 is 28%, not
    the 28.0000000000000004 of its float times 100), a probability below 1 never reads 100%; chance is rounded to the
    nearest, half up in decimal (1/32 is 3.13%, as in each client)."""
    assert [percent(v, bound=True) for v in (0.28049, 0.28, 0.2800000000001, 0.99999995, 1.0, 0.0)] == \
        ["28.1%", "28%", "28%", "99.999995%", "100%", "0%"]
    assert [percent(v) for v in (0.28049, 1 / 32, 0.3145, 0.99999995)] == ["28%", "3.13%", "31.5%", "99.999995%"]
    values = np.random.default_rng(5).uniform(0.0, 1.0, 2000) ** 4
    shown = np.array([float(percent(v, bound=True)[:-1]) for v in values])
    assert np.all(shown >= 100 * values * (1 - 1e-11)) and np.all(shown <= 100 * values * (1 + 1e-2))


def test_a_pure_guarantees_curve_is_randomized_responses():
    curve = tradeoff(PrivacyGuarantee(1.0, 0.0, "add-remove", "central"))
    np.testing.assert_allclose(curve.tpr, [math.e * a for a in (0.01, 0.05, 0.1)])
    assert not curve.exact and curve.test == "whether one record is in the data"
    high = tradeoff(PrivacyGuarantee(1.0, 0.0, "add-remove", "central"), fpr=[0.9])
    assert high.tpr[0] == pytest.approx(1 - math.exp(-1) * 0.1)
    year = tradeoff(accounting.protocol_loss(local.make("pm", epsilon=2.0, bounds=(0.0, 1.0)), 365), fpr=[0.0, 0.5])
    assert year.tpr == (0.0, 1.0)  # e^730 x a false-positive rate of 0 is 0, never NaN
    worst = tradeoff(accounting.PrivacyLoss.of_guarantee(PrivacyGuarantee(1.0, 0.0, "add-remove", "central")))
    assert worst.tpr == curve.tpr and not worst.exact  # a loss made of the guarantee alone is no mechanism's own
    approximate = tradeoff(PrivacyGuarantee(1.0, 1e-3, "replace", "central", unit="person"))
    np.testing.assert_allclose(approximate.tpr, [math.e * a + 1e-3 for a in (0.01, 0.05, 0.1)])
    assert approximate.test == "which of two values one person's rows hold"


def test_the_gaussian_curve_is_exact_alone_and_composed():
    normal = NormalDist()
    alone = tradeoff(accounting.gaussian(2.0, delta=1e-6))
    assert alone.exact
    np.testing.assert_allclose(alone.tpr, [normal.cdf(normal.inv_cdf(a) + 0.5) for a in (0.01, 0.05, 0.1)])
    four = tradeoff(accounting.sequential([accounting.gaussian(2.0, delta=1e-6)] * 4))
    np.testing.assert_allclose(four.tpr, [normal.cdf(normal.inv_cdf(a) + 1.0) for a in (0.01, 0.05, 0.1)])


def test_a_discrete_laplaces_curve_is_its_neyman_pearson_tests():
    epsilon, sensitivity = 1.0, 3
    curve = tradeoff(accounting.discrete_laplace(epsilon, sensitivity), fpr=np.linspace(0.0, 1.0, 41))
    assert curve.exact
    np.testing.assert_allclose(curve.tpr, _neyman_pearson(epsilon / sensitivity, sensitivity, curve.fpr), atol=1e-9)


def _neyman_pearson(a: float, shift: int, fpr) -> np.ndarray:
    """The most powerful test of Z + shift against Z, Z discrete Laplace of parameter a: reject the largest
    likelihood ratios first, randomized at the boundary."""
    support = np.arange(-60, 61)
    null = np.exp(-a * np.abs(support))
    null /= null.sum()
    alternative = np.exp(-a * np.abs(support - shift))
    alternative /= alternative.sum()
    order = np.argsort(-(np.log(alternative) - np.log(null)), kind="stable")
    x = np.concatenate([[0.0], np.cumsum(null[order])])
    y = np.concatenate([[0.0], np.cumsum(alternative[order])])
    return np.interp(fpr, x, y)


def test_a_compositions_curve_is_above_its_exact_one():
    """Ten randomized responses composed: the curve read off the composed loss is a bound, close to the exact."""
    epsilon, times = 1.0, 10
    curve = tradeoff(accounting.sequential([accounting.discrete_laplace(epsilon)] * times), fpr=np.linspace(0, 1, 21))
    assert not curve.exact
    ones = np.arange(times + 1)  # the likelihood ratio of k ones among ten: e^(eps (2k - 10))
    alternative = stats.binom.pmf(ones, times, math.exp(epsilon) / (1 + math.exp(epsilon)))[::-1]
    null = stats.binom.pmf(ones, times, 1 / (1 + math.exp(epsilon)))[::-1]
    exact = np.interp(curve.fpr, np.concatenate([[0], np.cumsum(null)]), np.concatenate([[0], np.cumsum(alternative)]))
    assert np.all(np.asarray(curve.tpr) >= exact - 1e-9)
    assert np.max(np.asarray(curve.tpr) - exact) < 0.01


def test_a_budget_sessions_curve_reads_its_spent_loss():
    from dpdist.budget import BudgetSession

    session = BudgetSession(4.0, 1e-6, neighbouring="add-remove", accountant="pld")
    for _ in range(4):
        session.charge(accounting.discrete_laplace(0.5))
    spent = session.spent
    assert spent is not None
    by_loss, by_guarantee = tradeoff(spent), tradeoff(PrivacyGuarantee(spent.epsilon, spent.delta, "add-remove", "central"))
    assert all(a <= b + 1e-12 for a, b in zip(by_loss.tpr, by_guarantee.tpr))


def _attack(release, present: np.ndarray, absent: np.ndarray, threshold: float, seed: int, runs: int):
    """Run ``release`` ``runs`` times on each data set; the test says "present" when its value is above ``threshold``."""
    rng = np.random.default_rng([seed, 97])
    yes = sum(release(present, rng) > threshold for _ in range(runs))
    no = sum(release(absent, rng) > threshold for _ in range(runs))
    return int(yes), int(no)


@pytest.mark.slow
@pytest.mark.parametrize("threshold", [1.5, 2.5])
def test_a_membership_attack_on_a_count_stays_under_its_curve(threshold):
    """The count of the data with and without one record: the test's true-positive rate (its lower Clopper-Pearson
    bound) stays under the curve at its false-positive rate (the upper bound), the count's own."""
    absent = np.zeros(100)
    present = np.zeros(101)
    guarantee = central.count(absent, 1.0, rng=0).guarantee

    def release(data, rng):
        return central.count(data, 1.0, rng=rng).count - 100

    runs = 20_000
    yes, no = _attack(release, present, absent, threshold, int(threshold * 10), runs)
    tpr_low, _ = _interval(yes, runs)
    _, fpr_high = _interval(no, runs)
    assert tpr_low <= tradeoff(guarantee, fpr=[fpr_high]).tpr[0]
    assert yes / runs > 0.8 * tradeoff(guarantee, fpr=[no / runs]).tpr[0]  # the count's test is nearly the best


@pytest.mark.slow
def test_a_membership_attack_on_a_histogram_bin_stays_under_its_curve():
    bounds, epsilon = (0.0, 1.0), 1.0
    absent = np.full(200, 0.05)
    present = np.append(absent, 0.95)  # one record in the last bin

    def release(data, rng):
        histogram = central.histogram_queries(data, epsilon, bounds, bins=4, rng=rng, neighbouring="add-remove")
        return histogram.probabilities[-1] * 200

    guarantee = central.histogram_queries(absent, epsilon, bounds, bins=4, rng=0, neighbouring="add-remove").guarantee
    runs = 6000
    yes, no = _attack(release, present, absent, 0.5, 5, runs)
    tpr_low, _ = _interval(yes, runs)
    _, fpr_high = _interval(no, runs)
    assert tpr_low <= tradeoff(guarantee, fpr=[fpr_high]).tpr[0]
