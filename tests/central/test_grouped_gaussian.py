"""One Gaussian release over every key of a group-by: bounding, noise, intervals, guarantee, and audits of the
guarantee on a person of many keys added or removed (slow)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import audit
from dpdist.central._gaussian_noise import MIN_SIGMA, rounding_distance
from dpdist.central._grouped_gaussian import bounded_key_rows, grouped_gaussian, moved_values, noise_sd
from dpdist.central.noise import gaussian_delta


def _table(persons: int = 3000, keys: int = 400, seed: int = 0):
    """Persons of 1 to 12 distinct keys (1 to 4 rows in each), values in (0, 100)."""
    rng = np.random.default_rng(seed)
    held = rng.integers(1, 13, size=persons)
    owners = np.repeat(np.arange(persons), held)
    choices = np.argsort(rng.random((persons, keys)), axis=1)[:, :12]  # a random order of the keys per person
    codes = choices[owners, np.arange(owners.size) - np.repeat(np.cumsum(held) - held, held)]
    rows = rng.integers(1, 5, size=owners.size)
    ids, keys_of_rows = np.repeat(owners, rows), np.repeat(codes, rows)
    return ids, keys_of_rows, rng.uniform(0, 100, ids.size)


def test_each_person_keeps_the_keys_of_most_rows_and_k_rows_in_each():
    persons = np.array([0] * 7 + [1] * 2)
    keys = np.array([3, 3, 3, 5, 9, 9, 2, 3, 4])
    kept = bounded_key_rows(persons, keys, 2, 2, np.random.default_rng(1))
    mine = sorted(keys[kept][persons[kept] == 0].tolist())
    assert mine == [3, 3, 9, 9]  # keys 3 (3 rows) and 9 (2 rows), two rows each
    assert sorted(keys[kept][persons[kept] == 1].tolist()) == [3, 4]


@pytest.mark.parametrize("statistic", ["count", "persons", "sum"])
def test_the_noise_is_centred_with_the_stated_spread_and_the_intervals_cover(statistic):
    ids, keys, values = _table()
    m, k = 12, 4  # bounds no row: every person holds at most 12 keys and 4 rows in each
    release = grouped_gaussian(statistic, keys, ids, values, 400, epsilon=1.0, delta=1e-5, max_groups=m,
                               max_contributions=k, bounds=(0.0, 100.0), rng=np.random.default_rng(2))
    if statistic == "sum":
        truth = np.bincount(keys, values, minlength=400)
        noisy = np.array([r.value for r in release.results])
    else:
        truth = np.bincount(keys if statistic == "count" else np.unique(ids * 400 + keys) % 400, minlength=400)
        noisy = np.array([r.count for r in release.results])
    sigma = release.results[0].standard_error
    assert sigma == pytest.approx(noise_sd(statistic, 1.0, 1e-5, m, k, (0.0, 100.0)), rel=1e-3)
    residual = (noisy - truth) / sigma
    assert abs(residual.mean()) < 5 / math.sqrt(400) and abs(residual.var() - 1) < 5 * math.sqrt(2 / 400)
    covered = np.mean([r.low <= t <= r.high for r, t in zip(release.results, truth)])
    assert covered >= 0.95 - 5 * math.sqrt(0.95 * 0.05 / 400)


def test_means_lie_in_the_bounds_and_cover_the_truth_of_large_keys():
    ids, keys, values = _table(persons=20_000, keys=20)
    release = grouped_gaussian("mean", keys, ids, values, 20, epsilon=1.0, delta=1e-5, max_groups=12,
                               max_contributions=4, bounds=(0.0, 100.0), rng=np.random.default_rng(3))
    truth = np.bincount(keys, values) / np.bincount(keys)
    assert all(0 <= r.value <= 100 and r.low <= t <= r.high for r, t in zip(release.results, truth))


def test_a_histogram_per_key_has_shares_that_sum_to_one():
    ids, keys, values = _table(keys=30)
    release = grouped_gaussian("histogram", keys, ids, values, 30, epsilon=1.0, delta=1e-5, max_groups=12,
                               max_contributions=4, bounds=(0.0, 100.0), bins=8, rng=np.random.default_rng(4))
    for result in release.results:
        assert np.all(np.asarray(result.probabilities) >= 0) and math.isclose(float(np.sum(result.probabilities)), 1)


@pytest.mark.parametrize("statistic", ["count", "sum", "mean", "histogram"])
def test_the_release_spends_its_delta_at_its_epsilon_and_states_its_rho(statistic):
    ids, keys, values = _table(persons=200, keys=50)
    release = grouped_gaussian(statistic, keys, ids, values, 50, epsilon=0.7, delta=1e-6, max_groups=5,
                               max_contributions=3, bounds=(-10.0, 100.0), bins=6, rng=np.random.default_rng(5))
    mu = math.sqrt(2 * release.rho)
    slack = (1 + math.exp(0.7)) * moved_values(statistic, 5, 3, 6) * rounding_distance(MIN_SIGMA)
    assert gaussian_delta(1 / mu, 0.7, 1.0) + slack <= 1e-6
    assert release.guarantee.epsilon == 0.7 and release.guarantee.delta == 1e-6
    assert release.guarantee.unit == "person" and release.guarantee.neighbouring == "add-remove"


def test_counts_are_released_on_the_lattice_and_gaussian_beats_laplace_at_many_keys():
    ids, keys, values = _table(persons=100, keys=20)
    release = grouped_gaussian("count", keys, ids, values, 20, epsilon=1.0, delta=1e-5, max_groups=50,
                               max_contributions=1, rng=np.random.default_rng(6))
    assert all((r.count * 2.0**20).is_integer() for r in release.results)  # multiples of a power-of-two step
    laplace_sd = math.sqrt(2) * 50 / 1.0  # epsilon / m per key, sensitivity 1: scale m / epsilon
    assert noise_sd("count", 1.0, 1e-5, 50, 1) < laplace_sd / 2.5


# ---------------------------------------------------------------- audits (slow)
def _person_of_many_keys(statistic: str, m: int):
    """A background of persons, and a person holding m keys with 2 rows each (value 100 each), added or removed."""
    ids, keys, values = _table(persons=300, keys=m + 10, seed=7)
    extra = np.repeat(np.arange(m), 2)
    with_person = (np.append(ids, np.full(extra.size, 10**6)), np.append(keys, extra),
                   np.append(values, np.full(extra.size, 100.0)))
    return (ids, keys, values), with_person


@pytest.mark.slow
@pytest.mark.parametrize("statistic", ["count", "sum", "mean"])
def test_an_audit_finds_no_violation_when_a_person_of_many_keys_is_added(statistic):
    m, epsilon, delta = 10, 1.0, 1e-5
    without, with_person = _person_of_many_keys(statistic, m)

    def release(dataset, rng):
        ids, keys, values = dataset
        out = grouped_gaussian(statistic, keys, ids, values, m + 10, epsilon=epsilon, delta=delta, max_groups=m,
                               max_contributions=2, bounds=(0.0, 100.0), rng=rng)
        return np.array([getattr(r, "count", getattr(r, "value", 0.0)) for r in out.results[:m]])

    result = audit.central(release, epsilon, [(without, with_person)], delta=delta, samples=4000, rng=8)
    assert result.verdict == "no violation found"
    broken = audit.central(lambda dataset, rng: _sum_of(dataset, m) + rng.normal(size=m),
                           epsilon, [(without, with_person)], delta=delta, samples=4000, rng=8)
    assert broken.verdict == "violates"  # the same audit catches a release with a tenth of the noise


def _sum_of(dataset, m):
    ids, keys, values = dataset
    return np.bincount(keys, minlength=m)[:m].astype(float)
