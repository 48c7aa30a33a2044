"""Gaussian thresholding of private keys: weights, thresholds, the bounding of each person's keys, and the guarantee
checked exactly on small instances."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from scipy import special, stats

from dpdist import audit
from dpdist.central import _gaussian_noise as gaussian_noise
from dpdist.central import _selection as selection
from dpdist.central._selection import GaussianThresholding, bounded_pairs, person_key_pairs
from dpdist.central.noise import gaussian_delta
from dpdist.errors import InvalidPrivacyParameterError


@pytest.mark.parametrize("method", ["gaussian", "weighted_gaussian", "adaptive"])
@pytest.mark.parametrize("epsilon, delta, keys", [(1.0, 1e-5, 1), (1.0, 1e-5, 50), (0.3, 1e-8, 7), (4.0, 1e-3, 300)])
def test_each_threshold_is_the_smallest_that_keeps_a_persons_own_keys_within_its_delta(method, epsilon, delta, keys):
    thresholding = GaussianThresholding.of(method, epsilon, delta, keys)
    lattice, rounds = thresholding.plan
    degrees = np.arange(1, keys + 1)
    weights = thresholding.weight(degrees)
    variance = 0
    for earlier, numbers in enumerate(rounds):
        variance += numbers.t * numbers.s  # the second round thresholds the sum of both rounds' noisy weights
        slack = 2 * earlier * gaussian_noise.rounding_distance(gaussian_noise.MIN_SIGMA)

        def alone(threshold, held):  # P(some key only the person holds is shown), bounded as the module states
            tails = special.ndtr(-(threshold - held - 1) / math.sqrt(variance)) + slack
            return float(np.max(-np.expm1(degrees * np.log1p(-tails))))

        def shown_alone(threshold):
            return alone(threshold, weights) + (alone(threshold, 2 * weights) + alone(threshold, weights)) * earlier

        assert shown_alone(numbers.threshold) <= numbers.threshold_delta
        assert shown_alone(numbers.threshold - 1) > numbers.threshold_delta * (1 - 1e-6)
    p = sum(r.threshold_delta for r in rounds)  # one round: epsilon' = epsilon + ln(1 - p); two: e^epsilon p
    gaussian_epsilon, thresholds = (epsilon + math.log1p(-p), p) if len(rounds) == 1 else (epsilon, math.exp(epsilon) * p)
    mu = math.sqrt(sum(2 * r.rho for r in rounds))
    slack = (1 + math.exp(gaussian_epsilon)) * keys * sum(gaussian_noise.rounding_distance(r.sigma) for r in rounds)
    spent = gaussian_delta(1 / mu, gaussian_epsilon, 1.0) + thresholds + slack
    assert spent <= delta
    assert spent > delta * 0.95  # and nearly all of it is spent (the rounding slack is bounded at MIN_SIGMA)
    assert thresholding.guarantee("person").epsilon == epsilon


@pytest.mark.parametrize("degrees", [[1, 2, 3, 4, 5, 7, 16, 50, 99, 100, 10_000], list(range(1, 200))])
def test_a_persons_weights_have_l2_norm_at_most_one_lattice_unit_exactly(degrees):
    thresholding = GaussianThresholding.of("weighted_gaussian", 1.0, 1e-5, 10_000)
    lattice, _ = thresholding.plan
    weights = thresholding.weight(np.array(degrees))
    assert weights.dtype == np.int64
    for degree, weight in zip(degrees, weights.tolist()):
        assert degree * weight * weight <= lattice * lattice < degree * (weight + 1) ** 2  # floor(L / sqrt(d)), exactly


def test_gaussian_thresholding_weighs_every_kept_key_alike():
    thresholding = GaussianThresholding.of("gaussian", 1.0, 1e-5, 16)
    lattice, _ = thresholding.plan
    assert set(thresholding.weight(np.array([1, 3, 16])).tolist()) == {lattice // 4}


def test_pairs_count_the_rows_of_each_person_and_key():
    pairs = person_key_pairs(np.array([2, 0, 2, 2, 0]), np.array([5, 9, 5, 1, 9]))
    assert pairs.tolist() == [[0, 9, 2], [2, 1, 1], [2, 5, 2]]


def test_each_person_keeps_a_uniformly_random_choice_of_their_keys():
    pairs = person_key_pairs(np.array([0, 0, 0, 0, 1, 1]), np.array([5, 6, 7, 8, 6, 7]))  # one row each
    rng = np.random.default_rng(5)
    seen = {}
    for _ in range(1200):
        kept = pairs[bounded_pairs(pairs, 2, rng)]
        assert sorted(kept[kept[:, 0] == 1, 1].tolist()) == [6, 7]  # person 1 holds 2 keys: both kept
        chosen = tuple(sorted(kept[kept[:, 0] == 0, 1].tolist()))
        seen[chosen] = seen.get(chosen, 0) + 1
    assert len(seen) == 6 and stats.chisquare(list(seen.values())).pvalue > 1e-3


def test_each_person_keeps_the_keys_they_hold_most_rows_of():
    pairs = person_key_pairs(np.array([0] * 6 + [1]), np.array([5, 5, 5, 6, 7, 7, 5]))
    kept = pairs[bounded_pairs(pairs, 2, np.random.default_rng(0))]
    assert kept[kept[:, 0] == 0, 1].tolist() == [5, 7]


@pytest.mark.parametrize("epsilon, delta, named", [(1e-4, 1e-12, "raise delta"), (1e-7, 1e-5, "raise epsilon")])
def test_a_budget_too_small_for_the_noise_is_refused(epsilon, delta, named):
    with pytest.raises(InvalidPrivacyParameterError, match=named):
        GaussianThresholding.of("adaptive", epsilon, delta, 10).plan


# ---------------------------------------------------------------- the guarantee, exactly, on small instances
@functools.lru_cache(maxsize=8)
def _upper_tails(variance: int) -> tuple[int, np.ndarray]:
    """``(radius, upper)``: ``upper[c + radius]`` = P(Y >= c), Y discrete Gaussian of this variance (summed over
    +-60 sigma)."""
    radius = 60 * math.isqrt(variance) + 60
    support = np.arange(-radius, radius + 1)
    pmf = np.exp(-support.astype(float) ** 2 / (2 * variance))
    pmf /= pmf.sum()
    return radius, np.cumsum(pmf[::-1])[::-1]


def _tail(variance: int, c: int) -> float:
    radius, upper = _upper_tails(variance)
    return float(upper[c + radius]) if -radius <= c <= radius else float(c < -radius)


def _weights(thresholding, key_sets, already) -> dict:
    """Each key's weight in a round: every person spreads theirs over their keys not in ``already`` (all kept)."""
    totals: dict = {}
    for keys in key_sets:
        mine = [key for key in keys if key not in already]
        for key in mine:
            totals[key] = totals.get(key, 0) + int(thresholding.weight(np.array([len(mine)]))[0])
    return totals


def _second_given(first_weight, first_variance, second_weight, numbers, present_first, shown_first) -> float:
    """P(a key not shown by the first round is shown by the second | its first round's outcome), exactly: the sum of
    both noisy weights at the second threshold (a key absent from the first round draws its first noise then)."""
    radius, upper = _upper_tails(first_variance)
    support = np.arange(-radius, radius + 1)
    pmf = -np.diff(np.append(upper, 0.0))  # P(Z1 = z)
    below = np.ones_like(pmf, dtype=bool) if not present_first else first_weight + support < shown_first
    second = np.array([_tail(numbers.t * numbers.s, numbers.threshold - first_weight - z - second_weight)
                       for z in support[below]])
    return float(np.sum(pmf[below] * second))


def _law(thresholding, key_sets, keys):
    """{frozenset shown: probability} of the selection on the persons ``key_sets`` (max_keys covers them), exactly."""
    _, rounds = thresholding.plan
    first_weights = _weights(thresholding, key_sets, frozenset())
    variance = rounds[0].t * rounds[0].s
    present = sorted(first_weights)
    law: dict = {}
    for shown in itertools.product((0, 1), repeat=len(present)):
        first = frozenset(k for k, s in zip(present, shown) if s)
        p = math.prod(_tail(variance, rounds[0].threshold - first_weights[k]) if s
                      else 1 - _tail(variance, rounds[0].threshold - first_weights[k]) for k, s in zip(present, shown))
        if len(rounds) == 1:
            law[first] = law.get(first, 0.0) + p
            continue
        second_weights = _weights(thresholding, key_sets, first)
        eligible = sorted((set(present) - first) | set(second_weights))
        chances = []
        for key in eligible:
            joint = _second_given(first_weights.get(key, 0), variance, second_weights.get(key, 0), rounds[1],
                                  key in first_weights, rounds[0].threshold)
            not_first = 1 - _tail(variance, rounds[0].threshold - first_weights[key]) if key in first_weights else 1.0
            chances.append(joint / not_first if not_first > 0 else 0.0)  # given the first round did not show it
        for more in itertools.product((0, 1), repeat=len(eligible)):
            q = math.prod(c if m else 1 - c for c, m in zip(chances, more))
            union = first | frozenset(k for k, m in zip(eligible, more) if m)
            law[union] = law.get(union, 0.0) + p * q
    return law


def _divergence(first, second, epsilon):
    return sum(max(0.0, p - math.exp(epsilon) * second.get(o, 0.0)) for o, p in first.items())


@pytest.fixture
def small_lattice(monkeypatch):
    """Noise of at least 16 steps (a lattice of 8 to 16 steps per unit): small enough to sum its law exactly."""
    monkeypatch.setattr(selection, "MIN_SIGMA", 16.0)
    monkeypatch.setattr(gaussian_noise, "MIN_SIGMA", 16.0)
    monkeypatch.setattr(selection, "_MIN_LATTICE_BITS", 2)
    selection._calibrated.cache_clear()
    yield
    selection._calibrated.cache_clear()


@pytest.mark.parametrize("method", ["gaussian", "weighted_gaussian", "adaptive"])
def test_adding_a_person_moves_the_law_of_the_keys_shown_within_epsilon_delta(small_lattice, method):
    """Keys 0..3; the person holds keys 0 and 3 (3 held by nobody else), the others hold 0, 1, 2 in overlapping sets
    heavy enough that key 0 is usually shown by the first round.  The hockey-stick divergence at e^epsilon both ways
    is at most delta, exactly (no sampling)."""
    epsilon, delta = 1.0, 0.05
    thresholding = GaussianThresholding.of(method, epsilon, delta, 4)
    others = [{0, 1}] * 30 + [{0, 2}] * 12 + [{1}] * 6
    with_person = _law(thresholding, [*others, {0, 3}], range(4))
    without = _law(thresholding, others, range(4))
    assert abs(sum(with_person.values()) - 1) < 1e-9
    added, removed = _divergence(with_person, without, epsilon), _divergence(without, with_person, epsilon)
    assert added <= delta and removed <= delta
    assert sum(p for shown, p in with_person.items() if 3 in shown) <= delta / 2  # the key held by one person


def test_a_threshold_at_a_single_persons_weight_breaks_the_guarantee(small_lattice, monkeypatch):
    """The check above fails on a broken mechanism: thresholds lowered to one person's weight show the key held by
    that person alone half of the time."""
    monkeypatch.setattr(selection, "_threshold", lambda lattice, *args: lattice)
    thresholding = GaussianThresholding.of("weighted_gaussian", 1.0, 0.05, 4)
    with_person, without = _law(thresholding, [{3}], range(4)), _law(thresholding, [], range(4))
    assert _divergence(with_person, without, 1.0) > 0.4


@pytest.mark.parametrize("method", ["gaussian", "weighted_gaussian", "adaptive"])
def test_keys_held_by_many_persons_are_shown_and_a_key_held_by_one_is_not(method):
    rng = np.random.default_rng(11)
    persons = np.repeat(np.arange(400), 2)
    keys = np.tile([0, 1], 400)
    keys[1::2] = np.arange(1, 401)  # each person: key 0 (shared) and a key of their own
    shown = GaussianThresholding.of(method, 1.0, 1e-5, 2).select(persons, keys, rng)
    assert shown.tolist() == [0]


# ---------------------------------------------------------------- sampled checks of the guarantee (slow)
@pytest.mark.slow
@pytest.mark.parametrize("method", ["weighted_gaussian", "adaptive"])
def test_keys_held_by_one_person_are_shown_no_more_often_than_the_thresholds_delta_allows(method):
    """A person holding 4 keys nobody else holds, among 200 persons of shared keys: over 20,000 selections at
    delta 0.05, the frequency with which any of the 4 is shown is, by its Clopper-Pearson lower bound (level 1e-3),
    at most the thresholds' delta (half of delta; with two rounds that over e^epsilon)."""
    from dpdist.audit._statistics import clopper_pearson_lower

    thresholding = GaussianThresholding.of(method, 1.0, 0.05, 4)
    persons = np.append(np.repeat(np.arange(200), 2), [200] * 4)
    keys = np.append(np.tile([0, 1], 200), [10, 11, 12, 13])
    rng = np.random.default_rng(12)
    runs = 20_000
    shown = sum(bool(np.isin(thresholding.select(persons, keys, rng), [10, 11, 12, 13]).any()) for _ in range(runs))
    allowed = sum(numbers.threshold_delta for numbers in thresholding.plan[1])
    assert float(clopper_pearson_lower(shown, runs, 1e-3)) <= allowed
    assert shown > 0  # the bound is near: the unique keys are shown at times


@pytest.mark.slow
@pytest.mark.parametrize("method", ["gaussian", "weighted_gaussian", "adaptive"])
def test_an_audit_finds_no_violation_when_a_person_of_many_keys_is_added(method):
    """The keys shown, as indicators, with and without a person holding 6 keys (3 shared, 3 their own): no event
    certifies an epsilon above the claim (dpdist.audit.central, Clopper-Pearson bounds)."""
    epsilon, delta = 1.0, 1e-3
    thresholding = GaussianThresholding.of(method, epsilon, delta, 6)
    rng = np.random.default_rng(13)
    background = (np.repeat(np.arange(40), 3), rng.integers(0, 3, size=120))
    person = (np.full(6, 99), np.array([0, 1, 2, 20, 21, 22]))
    with_person = (np.append(background[0], person[0]), np.append(background[1], person[1]))

    def release(dataset, generator):
        shown = thresholding.select(dataset[0], dataset[1], generator)
        return np.isin([0, 1, 2, 20, 21, 22], shown).astype(float)

    result = audit.central(release, epsilon, [(background, with_person)], delta=delta, samples=6000, rng=14)
    assert result.verdict == "no violation found"
