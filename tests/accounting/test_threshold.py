"""Sample-and-threshold's accountant against an independent enumeration of every released count, in exact arithmetic.

The released laws are written here from ``math.comb`` (no scipy), every count of other holders up to a bound far past
the worst one: the accountant's add/remove delta must equal the enumeration's maximum.  Replace neighbours are
enumerated twice: every device's coin with the whole released histogram (exact fractions, the divergence to 50
digits) and, at the ladder's threshold, every pair of counts' product law; the accountant's replace delta must equal
the maximum and never lie below it.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from dpdist.accounting import _threshold
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


def released_histograms(a: int, b: int, target: str, p: Fraction, threshold: int) -> dict:
    """The mechanism's whole output law, every device's coin enumerated: the target holds ``target``, ``a`` other
    devices hold "v", ``b`` hold "w" and one holds "u"; ``{released histogram: probability}``, exactly."""
    items = [target] + ["v"] * a + ["w"] * b + ["u"]
    law: dict = {}
    for coins in itertools.product((0, 1), repeat=len(items)):
        counts = Counter(item for item, coin in zip(items, coins) if coin)
        shown = tuple(sorted((item, count) for item, count in counts.items() if count >= threshold))
        law[shown] = law.get(shown, Fraction(0)) + p ** sum(coins) * (1 - p) ** (len(items) - sum(coins))
    return law


def digits(value: Fraction) -> mpmath.mpf:
    return mpmath.mpf(value.numerator) / value.denominator


def enumerated_replace(epsilon: float, p: Fraction, threshold: int, holders: int) -> mpmath.mpf:
    """The largest hockey-stick divergence, either way, between the target holding "v" and holding "w", over every
    ``a, b < holders`` (50 digits)."""
    mpmath.mp.dps = 50
    factor, best = mpmath.exp(epsilon), mpmath.mpf(0)
    for a, b in itertools.product(range(holders), repeat=2):
        first, second = released_histograms(a, b, "v", p, threshold), released_histograms(a, b, "w", p, threshold)
        for one, other in ((first, second), (second, first)):
            total = sum(max(digits(one.get(key, Fraction(0))) - factor * digits(other.get(key, Fraction(0))), 0)
                        for key in set(one) | set(other))
            best = max(best, total)
    return best


def loose(epsilon: float, p: float, threshold: int) -> float:
    """The replace bound through ``A0 <= A1/(1-p)`` on both counts (each count moved by its worst ratio)."""
    return min(1.0, _direction_delta(epsilon + math.log1p(-p), p, threshold, "add") / (1 - p))


@pytest.mark.parametrize("epsilon, p, threshold", [(0.1, Fraction(1, 5), 2), (0.2, Fraction(1, 10), 2),
                                                   (0.5, Fraction(1, 10), 3), (1.0, Fraction(3, 10), 2),
                                                   (1.0, Fraction(1, 4), 1)])
@pytest.mark.slow  # 1.6 CPU-s: enumerates every device's coin
def test_the_replace_delta_is_the_enumerated_maximum_of_every_devices_coin(epsilon, p, threshold):
    """Worst pairs of counts (4, 2), (4, 3), (4, 5), (1, any), (0, any): inside the enumerated 6 x 6; the bound
    through A0 <= A1/(1-p) on both counts is 1.3-2.1x these."""
    truth = enumerated_replace(epsilon, p, threshold, 6)
    stated = threshold_delta(epsilon, float(p), threshold, neighbouring="replace")
    assert stated >= truth and stated == pytest.approx(float(truth), rel=1e-8)
    assert stated < loose(epsilon, float(p), threshold)


def counted_replace(epsilon: float, p: Fraction, threshold: int, old: int, new: int, first: int = 0) -> float:
    """The largest divergence over the pairs of counts ``first <= a < old``, ``first <= b < new`` of other holders,
    each pair's product law written out whole (laws from ``math.comb``, exact until the hockey stick's floats)."""
    laws = {}
    for n in range(first, max(old, new)):
        keys = sorted(set(released(n + 1, p, threshold)), key=lambda key: -1 if key is None else key)
        laws[n] = tuple(np.array([float(released(m, p, threshold).get(key, 0)) for key in keys]) for m in (n + 1, n))
    factor = math.exp(epsilon)
    return max(float(np.maximum(np.outer(laws[a][0], laws[b][1]) - factor * np.outer(laws[a][1], laws[b][0]), 0).sum())
               for a in range(first, old) for b in range(first, new))


@pytest.mark.parametrize("epsilon, p, threshold, old, new", [(1.0, Fraction(1, 4), 20, 40, 90),
                                                             (1.0, Fraction(21, 200), 20, 40, 140)])
def test_the_replace_delta_is_the_counted_maximum_at_the_ladders_threshold(epsilon, p, threshold, old, new):
    """The worst pairs (26, 64) and (28, 121); the bound through A0 <= A1/(1-p) on both counts is 27x and 5x these."""
    truth = counted_replace(epsilon, p, threshold, old, new)
    stated = threshold_delta(epsilon, float(p), threshold, neighbouring="replace")
    assert stated >= truth and stated == pytest.approx(truth, rel=1e-8)
    assert stated < loose(epsilon, float(p), threshold) / 4


@pytest.mark.slow  # 1.0 CPU-s: a threshold search over two grids
def test_a_threshold_past_the_first_grid_starts_the_grid_below_it():
    """K = 300, p = 4/5: fewer than 298 other holders release nothing, as 298 do; the worst pair is near (330, 400)."""
    truth = counted_replace(1.0, Fraction(4, 5), 300, 340, 440, first=298)
    stated = threshold_delta(1.0, 0.8, 300, neighbouring="replace")
    assert stated >= truth and stated == pytest.approx(truth, rel=1e-7)
    with pytest.raises(InvalidPrivacyParameterError, match="threshold of 5,001"):
        threshold_delta(1.0, 0.5, 5_001, neighbouring="replace")


def test_a_grid_cut_short_states_a_bound_above_the_exact_delta(monkeypatch):
    exact = threshold_delta(0.5, 0.02, 20, neighbouring="replace")  # exact once its grid reaches 512 holders
    monkeypatch.setattr(_threshold, "_GRID_MAX", 64)
    bounded = threshold_delta(0.5, 0.02, 20, neighbouring="replace")
    assert exact < bounded <= loose(0.5, 0.02, 20)


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


@pytest.mark.slow  # 0.85 CPU-s: an enumerated guarantee
def test_nebulas_deployed_parameters_meet_its_stated_guarantee_with_room():
    """Brave's P3A: K = 20, p = 0.105 for a stated central (1, 1e-8); the exact account needs far less epsilon."""
    assert threshold_delta(1.0, 0.105, 20) == pytest.approx(6.48e-15, rel=1e-2)
    assert threshold_epsilon(0.105, 20, 1e-8) == pytest.approx(0.318, abs=1e-3)
    assert threshold_epsilon(0.105, 20, 1e-8, neighbouring="replace") == pytest.approx(0.322, abs=1e-3)


def test_the_largest_sampling_probability_at_the_ladders_target():
    """(1, 1e-8), K = 20, replace: 0.2497 (0.249771, rounded down) (the bound through A0 <= A1/(1-p) on both counts allows 0.207)."""
    assert threshold_sampling(1.0, 1e-8, 20, neighbouring="replace") == pytest.approx(0.24977, abs=1e-4)


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
    for epsilon in (math.inf, math.nan, -1.0):
        with pytest.raises(InvalidPrivacyParameterError, match="'epsilon'"):
            threshold_delta(epsilon, 0.1, 20)
        with pytest.raises(InvalidPrivacyParameterError, match="'epsilon'"):
            threshold_sampling(epsilon, 1e-8, 20)
    for delta in (math.nan, 0.0, 1.0, -1e-8):
        with pytest.raises(InvalidPrivacyParameterError, match="'delta'"):
            threshold_sampling(1.0, delta, 20)


@pytest.mark.parametrize("neighbouring", ["add-remove", "replace"])
def test_a_huge_epsilon_states_the_lone_targets_release_never_less(neighbouring):
    # past e^700 delta is read at 700: at least p^K, the chance a target with K - 1 others is what releases its item
    assert threshold_delta(1e6, 0.1, 20, neighbouring=neighbouring) >= 0.1**20
