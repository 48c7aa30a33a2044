"""Issue 34, item 1: amplification by shuffling from each protocol's exact channel.

The bound is checked against the exact privacy loss of the shuffled output (the
multiset of n reports, computed exactly by convolution) on tiny n and d, for every
arrangement of the other users' values; and the closed form against the figure the
issue quotes (eps0 = 4, n = 1e6, delta = 1e-8: ~0.23).
"""

import itertools
import math

import numpy as np
import pytest

from dpdist import amplification, local, privacy
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError


def _multiset_law(rows: list[np.ndarray]) -> dict[tuple, float]:
    """Law of the count vector of independent reports with the given output laws (exact convolution)."""
    law = {tuple([0] * rows[0].size): 1.0}
    for row in rows:
        step: dict[tuple, float] = {}
        for counts, p in law.items():
            for y, q in enumerate(row):
                if q > 0:
                    key = counts[:y] + (counts[y] + 1,) + counts[y + 1 :]
                    step[key] = step.get(key, 0.0) + p * q
        law = step
    return law


def _exact_deltas(channel: np.ndarray, n: int, epsilons) -> np.ndarray:
    """Largest hockey-stick divergence of the shuffled multiset over neighbours (user 1 changed, others any)."""
    d = channel.shape[0]
    worst = np.zeros(len(epsilons))
    for others in itertools.combinations_with_replacement(range(d), n - 1):
        laws = [_multiset_law([channel[x], *(channel[o] for o in others)]) for x in range(d)]
        keys = sorted(set().union(*laws))
        table = np.array([[law.get(key, 0.0) for key in keys] for law in laws])  # (first user's value, multiset)
        for x0, x1 in itertools.permutations(range(d), 2):
            gaps = table[x0][None, :] - np.exp(np.asarray(epsilons))[:, None] * table[x1][None, :]
            worst = np.maximum(worst, np.maximum(gaps, 0.0).sum(axis=1))
    return worst


@pytest.mark.parametrize("name, params, n", [
    ("grr", {"epsilon": 1.0, "domain_size": 2}, 6),
    ("grr", {"epsilon": 2.0, "domain_size": 3}, 5),
    ("oue", {"epsilon": 1.5, "domain_size": 2}, 4),
])
def test_the_bound_lies_above_the_exact_loss_of_the_shuffled_multiset(name, params, n):
    protocol = local.make(name, **params)
    channel = protocol.channel()
    logs = np.log(channel)
    epsilon0 = float(np.max(logs.max(axis=0) - logs.min(axis=0)))
    clone = amplification.clone_probability(channel)
    assert clone >= math.exp(-epsilon0) - 1e-12  # the channel's clone probability is never below FMT21's
    epsilons = np.linspace(0.0, epsilon0, 17)[:-1]
    for epsilon, exact in zip(epsilons, _exact_deltas(channel, n, epsilons)):
        assert exact <= amplification.numerical_delta(epsilon, epsilon0, n, clone) + 1e-12, epsilon
        assert exact <= amplification.numerical_delta(epsilon, epsilon0, n) + 1e-12, epsilon


def test_grr_clone_probability_is_two_over_e_eps_plus_one():
    for d in (2, 5, 16):
        channel = local.make("grr", epsilon=3.0, domain_size=d).channel()
        assert amplification.clone_probability(channel) == pytest.approx(2 / (math.exp(3.0) + 1))


def test_the_closed_form_reproduces_the_quoted_figure_and_the_numerical_bound_is_tighter():
    assert amplification.closed_form_epsilon(4.0, 10**6, 1e-8) == pytest.approx(0.2264, abs=1e-4)
    for n in (10**5, 10**6, 10**8):
        numerical = amplification.numerical_epsilon(4.0, n, 1e-8)
        assert 0 < numerical < amplification.closed_form_epsilon(4.0, n, 1e-8)
        # a larger clone probability (GRR's channel) only tightens it
        assert amplification.numerical_epsilon(4.0, n, 1e-8, 2 / (math.exp(4.0) + 1)) < numerical
    assert amplification.closed_form_epsilon(8.0, 1000, 1e-8) == math.inf  # outside Theorem 3.1's condition


def test_delta_is_monotone_and_the_bisection_meets_it():
    epsilon = amplification.numerical_epsilon(2.0, 10**4, 1e-6)
    assert amplification.numerical_delta(epsilon, 2.0, 10**4) <= 1e-6
    assert amplification.numerical_delta(epsilon * 0.99, 2.0, 10**4) > 1e-6
    deltas = [amplification.numerical_delta(e, 2.0, 10**4) for e in np.linspace(0, 2.0, 12)]
    assert all(a >= b for a, b in zip(deltas, deltas[1:]))


def test_the_guarantee_is_a_central_value_that_composes_over_rounds():
    protocol = local.make("grr", epsilon=4.0, domain_size=8)
    one = amplification.shuffled_guarantee(protocol, 10**6, 1e-8)
    assert one.model == "central" and one.neighbouring == "replace" and one.delta == 1e-8
    assert one.epsilon < 0.05 < amplification.shuffled_guarantee(protocol, 10**6, 1e-8, method="closed-form").epsilon
    rounds = privacy.sequential([one] * 10)
    assert rounds.epsilon == pytest.approx(10 * one.epsilon) and rounds.delta == pytest.approx(1e-7)
    tiny = amplification.shuffled_guarantee(protocol, 2, 1e-8)
    assert tiny.epsilon <= protocol.guarantee.epsilon + 1e-9  # never weaker than the local guarantee


def test_bad_arguments_name_themselves():
    with pytest.raises(InvalidPrivacyParameterError, match="epsilon0"):
        amplification.numerical_epsilon(-1.0, 100, 1e-6)
    with pytest.raises(InvalidPrivacyParameterError, match="delta"):
        amplification.closed_form_epsilon(1.0, 100, 0.0)
    with pytest.raises(InvalidParameterError, match="'n'"):
        amplification.numerical_epsilon(1.0, 1, 1e-6)
    with pytest.raises(InvalidParameterError, match="memoizes"):  # rounds share the memo: no per-round guarantee
        amplification.shuffled_guarantee(local.make("l-grr", epsilon=2.0, epsilon_1=1.0, domain_size=4), 100, 1e-6)
    with pytest.raises(InvalidParameterError, match="method"):
        amplification.shuffled_guarantee(local.make("grr", epsilon=1.0, domain_size=2), 100, 1e-6, method="best")


def _binary_rr_exact_delta(epsilon0: float, n: int, epsilon: float, ones: int) -> float:
    """Exact hockey-stick divergence of the number of 1-reports of n binary-RR users (user 1 changed, `ones` others hold 1)."""
    from scipy import signal, stats

    p = math.exp(epsilon0) / (1 + math.exp(epsilon0))
    others = np.maximum(signal.fftconvolve(stats.binom.pmf(np.arange(ones + 1), ones, p),
                                           stats.binom.pmf(np.arange(n - ones), n - 1 - ones, 1 - p)), 0.0)
    first_one = np.concatenate([others * (1 - p), [0]]) + np.concatenate([[0], others * p])
    first_zero = np.concatenate([others * p, [0]]) + np.concatenate([[0], others * (1 - p)])
    gap = np.exp(epsilon)
    return max(np.maximum(first_one - gap * first_zero, 0).sum(), np.maximum(first_zero - gap * first_one, 0).sum())


@pytest.mark.parametrize("epsilon0", [0.5, 2.0])
def test_at_realistic_n_the_bound_holds_and_is_tight_for_binary_randomized_response(epsilon0):
    """n = 10^4 binary-RR users: the exact loss of their shuffled count meets delta at the bound, and not at 0.8x it."""
    n, delta = 10**4, 1e-8
    channel = local.make("grr", epsilon=epsilon0, domain_size=2).channel()
    epsilon = amplification.numerical_epsilon(epsilon0, n, delta, amplification.clone_probability(channel))
    arrangements = (0, n // 4, n // 2, n - 1)
    assert max(_binary_rr_exact_delta(epsilon0, n, epsilon, ones) for ones in arrangements) <= delta
    if epsilon0 == 0.5:  # within 25% of the exact loss
        assert max(_binary_rr_exact_delta(epsilon0, n, 0.8 * epsilon, ones) for ones in arrangements) > delta
