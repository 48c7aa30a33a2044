"""Private group keys: cross-group bounding and truncated geometric partition selection."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from dpdist.central._partitions import (
    bounded_groups,
    check_selection,
    keep_probabilities,
    selected_groups,
)
from dpdist.errors import InvalidPrivacyParameterError


@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-6), (0.1, 1e-9), (0.01, 2**-40), (3.0, 0.2)])
def test_keep_probabilities_meet_both_bounds_of_the_recursion_in_exact_arithmetic(epsilon, delta):
    """Desfontaines et al. 2022, Thm. 1: pi(n) <= e^eps pi(n-1) + delta and 1 - pi(n-1) <= e^eps (1 - pi(n)) + delta,
    checked at 60 digits (the table's values are dyadic: exact), and pi is the largest such up to the margins."""
    table = keep_probabilities(100_000, epsilon, delta)
    stop = int(np.argmax(table >= 1.0)) + 2 if table[-1] >= 1.0 else table.size
    with mpmath.workdps(60):
        growth, d = mpmath.exp(mpmath.mpf(epsilon)), mpmath.mpf(delta)
        for before, after in zip(table[: stop - 1], table[1:stop]):
            before, after = mpmath.mpf(float(before)), mpmath.mpf(float(after))
            assert after <= growth * before + d
            assert 1 - before <= growth * (1 - after) + d
            assert after >= before
    assert table[0] == 0.0 and table[1] == pytest.approx(delta, rel=1e-6)
    if delta <= (1 - delta) / (math.exp(epsilon) + 1):  # pi(1) below the switch: pi(2) is of the first phase
        assert table[2] == pytest.approx(delta * (1 + math.exp(epsilon)), rel=1e-6)
    assert np.all(table * 2.0**53 == np.floor(table * 2.0**53))  # dyadic: the draw keeps with probability pi exactly


def test_a_group_of_n_persons_is_kept_with_probability_pi_n():
    epsilon, delta = 1.0, 1e-3
    table = keep_probabilities(10, epsilon, delta)
    rng = np.random.default_rng(3)
    for n in (1, 3, 6):
        persons = np.arange(n * 4_000)  # 4,000 groups of n persons each
        groups = np.repeat(np.arange(4_000), n)
        kept = selected_groups(persons, groups, epsilon, delta, 1, rng).size
        assert stats.binomtest(kept, 4_000, table[n]).pvalue > 1e-4, (n, kept, table[n])


@pytest.mark.parametrize("draws", [3_000, pytest.param(12_000, marks=pytest.mark.slow)])
def test_each_person_keeps_the_groups_of_most_rows_ties_at_random_with_all_their_rows_there(draws):
    persons = np.array([0, 0, 0, 0, 0, 0, 0, 1, 1])
    groups = np.array([5, 6, 7, 8, 6, 5, 9, 5, 9])  # person 0: two rows in 5 and 6, one in 7, 8, 9; person 1: 5, 9
    rng = np.random.default_rng(8)
    seen = {7: 0, 8: 0, 9: 0}
    for _ in range(draws):
        kept = bounded_groups(persons, groups, 3, rng)
        assert {7, 8} <= set(kept.tolist())  # person 1 holds 2 groups: all kept
        mine = kept[persons[kept] == 0]
        chosen = set(groups[mine].tolist())
        assert {5, 6} < chosen and len(chosen) == 3  # the two groups of two rows, and one of the others
        in_chosen = np.isin(groups, list(chosen))
        assert np.array_equal(mine, np.flatnonzero((persons == 0) & in_chosen))  # every row there
        seen[(chosen - {5, 6}).pop()] += 1
    assert stats.chisquare(list(seen.values())).pvalue > 1e-3  # ties: each of 7, 8, 9 equally likely


def test_the_selection_is_epsilon_delta_per_person_exactly_on_a_small_instance():
    """Three groups; the person holds rows in all three and is bounded to 2 (a random pair of them).  The law of the
    set of groups kept, with and without the person, exactly: the hockey-stick divergence at e^eps (the delta an
    (eps, delta) guarantee allows) at most delta both ways; where the person is alone in its groups it is 0.9975
    delta (tight); unbounded (in all three groups) it is 1.49 delta."""
    epsilon, delta, m = 1.0, 1e-2, 2
    table = keep_probabilities(10, epsilon / m, delta / m)
    for others in ([0, 0, 0], [0, 1, 3]):  # distinct persons already in each group
        _check_divergence(others, table, epsilon, delta)


def _check_divergence(others, table, epsilon, delta):
    def law(counts_laws):
        outcome = {}
        for weight, counts in counts_laws:
            for kept in itertools.product((0, 1), repeat=3):
                p = weight * math.prod(table[c] if k else 1 - table[c] for k, c in zip(kept, counts))
                outcome[kept] = outcome.get(kept, 0.0) + p
        return outcome

    pairs = list(itertools.combinations(range(3), 2))
    with_person = law([(1 / 3, [c + (g in pair) for g, c in enumerate(others)]) for pair in pairs])
    without = law([(1.0, others)])
    for first, second in ((with_person, without), (without, with_person)):
        divergence = sum(max(0.0, first[o] - math.exp(epsilon) * second[o]) for o in first)
        assert divergence <= delta * (1 + 1e-9)
    if others == [0, 0, 0]:
        alone = sum(max(0.0, with_person[o] - math.exp(epsilon) * without[o]) for o in with_person)
        assert alone > 0.99 * delta
        loose = law([(1.0, [c + 1 for c in others])])  # the person in all three groups (no bound): more than delta
        assert sum(max(0.0, loose[o] - math.exp(epsilon) * without[o]) for o in loose) > 1.4 * delta


@pytest.mark.parametrize("epsilon, delta, m, named", [
    (None, 1e-6, 1, "'selection_epsilon'"), (0.0, 1e-6, 1, "'selection_epsilon'"), (1.0, None, 1, "'selection_delta'"),
    (1.0, 0.0, 1, "'selection_delta'"), (1.0, 1.0, 1, "'selection_delta'"), (1.0, 1e-12, 2, "2\\*\\*-40")])
def test_a_selection_budget_is_refused_by_name(epsilon, delta, m, named):
    with pytest.raises(InvalidPrivacyParameterError, match=named):
        check_selection("f", epsilon, delta, m)
