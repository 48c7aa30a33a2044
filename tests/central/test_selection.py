"""Gaussian thresholding of private keys: weights, thresholds, the bounding of each person's keys, and the guarantee
checked exactly on small instances."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from scipy import special, stats

from dpdist.central import _selection as selection
from dpdist.central._selection import GaussianThresholding, bounded_pairs, person_key_pairs
from dpdist.central.noise import zcdp_delta
from dpdist.errors import InvalidPrivacyParameterError


@pytest.mark.parametrize("method", ["gaussian", "weighted_gaussian", "adaptive"])
@pytest.mark.parametrize("epsilon, delta, keys", [(1.0, 1e-5, 1), (1.0, 1e-5, 50), (0.3, 1e-8, 7), (4.0, 1e-3, 300)])
def test_each_threshold_is_the_smallest_that_keeps_a_persons_own_keys_within_its_delta(method, epsilon, delta, keys):
    thresholding = GaussianThresholding.of(method, epsilon, delta, keys)
    lattice, rounds = thresholding.plan
    degrees = np.arange(1, keys + 1)
    weights = thresholding.weight(degrees)
    for numbers in rounds:
        sigma = math.sqrt(numbers.t * numbers.s)

        def shown_alone(threshold):  # P(some key held by the person alone is shown), bounded as the module states
            tails = special.ndtr(-(threshold - weights - 1) / sigma)
            return -np.expm1(degrees * np.log1p(-tails))

        assert np.all(shown_alone(numbers.threshold) <= numbers.threshold_delta)
        assert np.any(shown_alone(numbers.threshold - 1) > numbers.threshold_delta * (1 - 1e-6))
    gaussian_epsilon = epsilon + math.log1p(-sum(r.threshold_delta for r in rounds))
    spent = zcdp_delta(sum(r.rho for r in rounds), gaussian_epsilon) + sum(r.threshold_delta for r in rounds)
    assert spent <= delta * (1 + 1e-9)
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
    pairs = person_key_pairs(np.array([0, 0, 0, 0, 1, 1]), np.array([5, 6, 7, 8, 6, 7]))
    pairs[:, 2] = 1  # no row counts: every key alike
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


def test_a_budget_too_small_for_the_noise_is_refused():
    with pytest.raises(InvalidPrivacyParameterError, match="raise epsilon or delta"):
        GaussianThresholding.of("adaptive", 1e-4, 1e-12, 10).plan


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


def _round_law(thresholding, numbers, key_sets, candidates, already):
    """{frozenset shown: probability} of one round over ``candidates`` (keys not yet shown), each person spreading
    their weight over their keys among them (all kept: max_keys covers them)."""
    totals = dict.fromkeys(candidates, 0)
    for keys in key_sets:
        mine = [key for key in keys if key not in already]
        if mine:
            weight = int(thresholding.weight(np.array([len(mine)]))[0])
            for key in mine:
                totals[key] += weight
    variance = numbers.t * numbers.s
    present = [key for key in candidates if any(key in keys and key not in already for keys in key_sets)]
    law = {}
    for shown in itertools.product((0, 1), repeat=len(present)):
        p = math.prod(_tail(variance, numbers.threshold - totals[k]) if s
                      else 1 - _tail(variance, numbers.threshold - totals[k]) for k, s in zip(present, shown))
        key = frozenset(k for k, s in zip(present, shown) if s)
        law[key] = law.get(key, 0.0) + p
    return law


def _law(thresholding, key_sets, keys):
    _, rounds = thresholding.plan
    law = {frozenset(): 1.0}
    for numbers in rounds:
        after = {}
        for shown, p in law.items():
            for more, q in _round_law(thresholding, numbers, key_sets, keys, shown).items():
                after[shown | more] = after.get(shown | more, 0.0) + p * q
        law = after
    return law


def _divergence(first, second, epsilon):
    return sum(max(0.0, p - math.exp(epsilon) * second.get(o, 0.0)) for o, p in first.items())


@pytest.fixture
def small_lattice(monkeypatch):
    """A lattice of 8 steps per unit: the noise is small enough to sum its law exactly."""
    monkeypatch.setattr(selection, "_LATTICE_BITS", 3)
    monkeypatch.setattr(selection, "_MIN_LATTICE_BITS", 3)
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


def test_a_threshold_at_a_single_persons_weight_breaks_the_guarantee(small_lattice):
    """The check above fails on a broken mechanism: the threshold lowered to one person's weight shows the key held
    by that person alone half of the time."""
    epsilon, delta = 1.0, 0.05
    thresholding = GaussianThresholding.of("weighted_gaussian", epsilon, delta, 4)
    lattice, (numbers,) = thresholding.plan
    broken = selection.Round(numbers.t, numbers.s, lattice, numbers.threshold_delta, numbers.rho)
    law = _round_law(thresholding, broken, [{3}], range(4), frozenset())
    assert _divergence(law, {frozenset(): 1.0}, epsilon) > 0.4


@pytest.mark.parametrize("method", ["gaussian", "weighted_gaussian", "adaptive"])
def test_keys_held_by_many_persons_are_shown_and_a_key_held_by_one_is_not(method):
    rng = np.random.default_rng(11)
    persons = np.repeat(np.arange(400), 2)
    keys = np.tile([0, 1], 400)
    keys[1::2] = np.arange(1, 401)  # each person: key 0 (shared) and a key of their own
    shown = GaussianThresholding.of(method, 1.0, 1e-5, 2).select(persons, keys, rng)
    assert shown.tolist() == [0]
