"""Sample-and-threshold's accountant against an independent enumeration of every released count, in exact arithmetic.

The released laws are written here from ``math.comb`` (no scipy), every count of other holders up to a bound far past
the worst one, and every pair of counts for replace neighbours: the accountant's add/remove delta must equal the
enumeration's maximum (it is exact), its replace delta must lie above every enumerated pair (an upper bound) and
within a factor of it.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import pytest

from dpdist.accounting._threshold import _direction_delta, threshold_delta, threshold_epsilon, threshold_sampling
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError


@functools.cache  # the enumerations ask for each law several times (read only)
def released(n: int, p: Fraction, threshold: int) -> dict:
    """The released law of one item's count among ``n`` holders: ``{count or None (suppressed): probability}``."""
    law: dict = {None: Fraction(0)}
    for s in range(n + 1):
        mass = math.comb(n, s) * p**s * (1 - p) ** (n - s)
        key = s if s >= threshold else None
        law[key] = law.get(key, Fraction(0)) + mass
    return law


def hockey(first: dict, second: dict, epsilon: float) -> float:
    factor = math.exp(epsilon)
    return sum(max(float(first.get(key, 0)) - factor * float(second.get(key, 0)), 0.0) for key in set(first) | set(second))


def enumerated_add_remove(epsilon: float, p: Fraction, threshold: int, holders: int) -> float:
    best = 0.0
    for n in range(holders):
        without, with_target = released(n, p, threshold), released(n + 1, p, threshold)
        best = max(best, hockey(with_target, without, epsilon), hockey(without, with_target, epsilon))
    return best


def enumerated_replace(epsilon: float, p: Fraction, threshold: int, holders: int) -> float:
    """Max over the counts (a, b) of other holders of the target's old and new items of the product pair's delta."""
    laws = [(released(n + 1, p, threshold), released(n, p, threshold)) for n in range(holders)]
    best = 0.0
    factor = math.exp(epsilon)
    for with_a, without_a in laws:
        for with_b, without_b in laws:
            for first, second in (((with_a, without_b), (without_a, with_b)), ((without_a, with_b), (with_a, without_b))):
                total = 0.0
                for x in set(with_a) | set(without_a):
                    for y in set(with_b) | set(without_b):
                        total += max(float(first[0].get(x, 0)) * float(first[1].get(y, 0))
                                     - factor * float(second[0].get(x, 0)) * float(second[1].get(y, 0)), 0.0)
                best = max(best, total)
    return best


@pytest.mark.parametrize("epsilon, p, threshold", [(1.0, Fraction(1, 5), 4), (0.5, Fraction(1, 10), 3),
                                                   (0.05, Fraction(1, 25), 2), (2.0, Fraction(2, 5), 6)])
def test_the_add_remove_delta_is_the_enumerated_maximum(epsilon, p, threshold):
    truth = enumerated_add_remove(epsilon, p, threshold, 80)
    assert threshold_delta(epsilon, float(p), threshold) == pytest.approx(truth, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("epsilon, p, threshold", [(1.0, Fraction(1, 5), 3), (0.1, Fraction(1, 5), 2),
                                                   (0.2, Fraction(1, 10), 2)])
def test_the_replace_delta_lies_above_every_enumerated_pair_and_near_the_worst(epsilon, p, threshold):
    """At (0.1, 1/5, 2) a replaced item loses more than an added one (0.0733 against 0.0659): the add/remove curve
    alone would understate it."""
    truth = enumerated_replace(epsilon, p, threshold, 14)
    stated = threshold_delta(epsilon, float(p), threshold, neighbouring="replace")
    assert truth <= stated <= 3.0 * truth


def enumerated_removal(epsilon: float, p: Fraction, threshold: int, holders: int) -> float:
    return max(hockey(released(n, p, threshold), released(n + 1, p, threshold), epsilon) for n in range(holders))


@pytest.mark.parametrize("epsilon, p, threshold", [(0.05, Fraction(1, 10), 2), (0.1, Fraction(1, 5), 2),
                                                   (0.3, Fraction(1, 5), 2)])
def test_the_removal_direction_is_the_enumerated_maximum_and_vanishes_past_log_one_over_one_minus_p(epsilon, p, threshold):
    truth = enumerated_removal(epsilon, p, threshold, 50)  # the worst count of other holders: 18 and 8
    assert _direction_delta(epsilon, float(p), threshold, "remove") == pytest.approx(truth, rel=1e-9, abs=1e-300)
    assert (truth == 0.0) == (epsilon >= -math.log1p(-float(p)))


def test_colluding_reports_lower_the_threshold_and_a_lone_target_costs_p():
    assert threshold_delta(1.0, 0.2, 6, colluding=2) == threshold_delta(1.0, 0.2, 4)
    assert threshold_delta(3.0, 0.01, 20, colluding=19) == pytest.approx(0.01, rel=1e-12)  # released alone: delta = p
    assert threshold_sampling(1.0, 1e-8, 20, colluding=20) == pytest.approx(1e-8, rel=1e-3)


def test_nebulas_deployed_parameters_meet_its_stated_guarantee_with_room():
    """Brave's P3A: K = 20, p = 0.105 for a stated central (1, 1e-8); the exact account needs far less epsilon."""
    assert threshold_delta(1.0, 0.105, 20) == pytest.approx(6.48e-15, rel=1e-2)
    assert threshold_epsilon(0.105, 20, 1e-8) == pytest.approx(0.318, abs=1e-3)
    assert threshold_epsilon(0.105, 20, 1e-8, neighbouring="replace") == pytest.approx(0.432, abs=1e-3)


@pytest.mark.parametrize("neighbouring", ["add-remove", "replace"])
def test_the_fitted_sampling_probability_is_the_largest_that_fits(neighbouring):
    p = threshold_sampling(1.0, 1e-8, 20, neighbouring=neighbouring)
    assert threshold_delta(1.0, p, 20, neighbouring=neighbouring) <= 1e-8
    assert threshold_delta(1.0, p * 1.001, 20, neighbouring=neighbouring) > 1e-8


def test_bad_parameters_are_refused_by_name():
    with pytest.raises(InvalidPrivacyParameterError, match="'p'"):
        threshold_delta(1.0, 1.0, 20)
    with pytest.raises(InvalidParameterError, match="'threshold'"):
        threshold_delta(1.0, 0.1, 0)
    with pytest.raises(InvalidParameterError, match="'colluding'"):
        threshold_delta(1.0, 0.1, 20, colluding=-1)
    with pytest.raises(InvalidParameterError, match="'neighbouring'"):
        threshold_delta(1.0, 0.1, 20, neighbouring="history")
    with pytest.raises(InvalidPrivacyParameterError, match="'delta'"):
        threshold_epsilon(0.1, 20, 0.0)
