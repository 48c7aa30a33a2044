"""LOLOHA (dpdist.local.frequency.loloha), memoized per bucket: eps_1 per report, eps_inf over any number of reports."""

import itertools
import json

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import IncompatibleStateError, InvalidParameterError, OutOfDomainError
from dpdist.local.frequency._bucket_client import BucketMemoClient
from dpdist.local.frequency._longitudinal import _chain, _grr_keeps, _grr_probabilities
from dpdist.local.frequency.dbitflippm import bucketize
from dpdist.local.frequency.loloha import optimal_hash_range
from dpdist.testing import max_privacy_loss

LOLOHA = [
    {"epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 5, "hash_prime": 7},  # g = 3
    {"epsilon": 4.0, "epsilon_1": 1.5, "domain_size": 4, "hash_prime": 5, "variant": "binary"},
    {"epsilon": 1.0, "epsilon_1": 0.6, "domain_size": 3, "hash_prime": 5},
]



# ---------------------------------------------------------------------- loloha
@pytest.mark.parametrize("params", LOLOHA)
def test_loloha_one_report_is_exactly_eps_1(params):
    proto = local.make("loloha", **params)
    loss = max_privacy_loss(proto.channel())
    assert loss <= params["epsilon_1"] + 1e-12
    assert loss > params["epsilon_1"] - 1e-6  # the IRR budget is not wasted
    assert loss == pytest.approx(proto.epsilon_per_report)
    assert proto.epsilon_longitudinal == pytest.approx(params["epsilon"])


def _loloha_joint(proto, reports: int, memoized: bool) -> np.ndarray:
    """The adversary's view of ``reports`` reports of one value, enumerated here from the algorithm."""
    g, prime = proto.hash_range, proto.params["hash_prime"]
    grr = lambda p, q: np.full((g, g), q) + np.eye(g) * (p - q)  # noqa: E731
    prr, irr = grr(proto._p1, proto._q1), grr(proto._p2, proto._q2)
    seeds = (prime - 1) * prime
    columns = []
    for sequence in itertools.product(range(g), repeat=reports):
        if memoized:  # one PRR draw x', then independent IRR draws of it
            given_hash = prr @ np.prod(irr[:, list(sequence)], axis=1)
        else:  # a broken device that redraws the PRR every day
            given_hash = np.prod((prr @ irr)[:, list(sequence)], axis=1)
        columns.append(given_hash)
    law = np.array(columns).T  # (hash value, sequence)
    a, b = 1 + np.arange(seeds) // prime, np.arange(seeds) % prime
    hashed = (a[None, :] * np.arange(proto.domain_size)[:, None] + b[None, :]) % prime % g
    return (law[hashed] / seeds).reshape(proto.domain_size, -1)


@pytest.mark.parametrize("params", LOLOHA)
@pytest.mark.parametrize("reports", [1, 2, 3, 4])
def test_loloha_adversary_who_sees_every_report_of_one_value_learns_at_most_eps_inf(params, reports):
    proto = local.make("loloha", **params)
    joint = _loloha_joint(proto, reports, memoized=True)
    assert np.allclose(joint, proto.repeated_channel(reports), atol=1e-15)
    loss = max_privacy_loss(joint)
    assert loss <= params["epsilon"] + 1e-9
    assert loss >= max_privacy_loss(proto.channel()) - 1e-12  # more reports never leak less


def test_loloha_without_the_memo_the_adversary_exceeds_eps_inf():
    """The check above can fail: redrawing the PRR every report leaks more than eps_inf after a few reports."""
    proto = local.make("loloha", **LOLOHA[0])
    assert max_privacy_loss(_loloha_joint(proto, 4, memoized=False)) > LOLOHA[0]["epsilon"]


def test_loloha_optimal_hash_range_is_near_the_exact_variance_minimum():
    """The closed form (sec. 4.3) against the exact variance at f = 0 over g = 2..399: within 6 %."""
    for epsilon, epsilon_1 in [(0.5, 0.25), (1.0, 0.5), (2.0, 1.0), (4.0, 1.0), (6.0, 3.0), (3.0, 2.5)]:
        def variance(g):
            first, second = (_grr_probabilities(keep, g) for keep in _grr_keeps(g, epsilon, epsilon_1))
            p = _chain(*first, *second)[0]
            return (1 / g) * (1 - 1 / g) / (p - 1 / g) ** 2

        best = min(variance(g) for g in range(2, 400))
        assert variance(optimal_hash_range(epsilon, epsilon_1)) <= 1.06 * best
    assert local.make("loloha", epsilon=4.0, epsilon_1=2.0, domain_size=9, variant="binary").hash_range == 2


def test_loloha_client_memoizes_seed_and_hash_value():
    proto = local.make("loloha", **LOLOHA[0])
    device = proto.client()
    first = device.report(1, rng=0)
    state = device.to_dict()
    restored = BucketMemoClient.from_dict(json.loads(json.dumps(state)))
    assert restored.to_dict() == state
    (bucket, memoized), = restored.memo.items()
    reports = np.array([restored.report(1, rng=seed) for seed in range(2000)])
    assert np.all(reports[:, 0] == first[0])  # the hash seed is drawn once
    expected = np.full(proto.hash_range, proto._q2)
    expected[memoized] = proto._p2
    observed = np.bincount(reports[:, 1].astype(np.int64), minlength=proto.hash_range) / 2000
    assert np.all(np.abs(observed - expected) <= 5 * np.sqrt(expected * (1 - expected) / 2000))
    # another value with the same hash reuses the memo: the memo never holds more than g entries
    for value in range(proto.domain_size):
        restored.report(value, rng=value)
    assert len(restored.memo) <= proto.hash_range


# ---------------------------------------------------------------------- dbitflippm


def test_loloha_estimator_is_unbiased_with_its_variance():
    proto = local.make("loloha", epsilon=3.0, epsilon_1=1.0, domain_size=30)
    values = np.random.default_rng(0).zipf(1.5, 40_000) % 30
    truth = np.bincount(values, minlength=30) / values.size
    estimate = proto.estimate(proto.privatize(values, rng=1))
    z = (estimate.frequencies - truth) / np.sqrt(proto.variance(values.size, truth))
    assert np.max(np.abs(z)) < 5.0  # 30 items: P(max > 5) < 2e-5


def test_bad_parameters_name_themselves():
    with pytest.raises(InvalidParameterError, match="epsilon_1"):
        local.make("loloha", epsilon=1.0, epsilon_1=1.0, domain_size=4)
    with pytest.raises(InvalidParameterError, match="variant"):
        local.make("loloha", epsilon=2.0, epsilon_1=1.0, domain_size=4, variant="best")
    with pytest.raises(InvalidParameterError, match="sampled_bits"):
        local.make("dbitflippm", epsilon=1.0, domain_size=4, sampled_bits=5)
    with pytest.raises(InvalidParameterError, match="sampled_bits"):
        local.make("dbitflippm", epsilon=1.0, domain_size=4, sampled_bits=0)
    with pytest.raises(InvalidParameterError, match="bucket_count"):
        bucketize([1, 2], 10, 11)
    with pytest.raises(OutOfDomainError):
        bucketize([10], 10, 5)
    assert bucketize([0, 1, 9], 10, 5).tolist() == [0, 0, 4]


def test_loloha_seeds_above_2_53_are_written_as_decimal_strings_and_read_back_exactly():
    """A LOLOHA seed reaches (P-1)P ~ 2^62: JavaScript would round it as a JSON number (clients/js reads the string)."""
    proto = local.make("loloha", epsilon=3.0, epsilon_1=1.0, domain_size=10)
    big = (2**31 - 2) * (2**31 - 1) - 12345  # the largest seeds are near 2^62
    device = proto.client(randomness=[big])
    report = device.report(7, rng=3)
    state = json.loads(json.dumps(device.to_dict()))
    assert state["randomness"] == [str(big)]
    restored = BucketMemoClient.from_dict(state)
    assert restored.randomness.tolist() == [big]
    assert restored.report(7, rng=4)[0] == report[0] == big  # the seed travels in every report
    small = BucketMemoClient.from_dict(dict(state, randomness=[12345], memo={}))
    assert small.to_dict()["randomness"] == [12345]
    for bad in (["12x"], [1.5], ["-"], [True], "12345"):
        with pytest.raises(IncompatibleStateError):
            BucketMemoClient.from_dict(dict(state, randomness=bad))
