"""Issue 17: dbitflippm and loloha, memoized per bucket: eps_1 per report, eps_inf over any number of reports."""

import itertools
import json

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import IncompatibleStateError, InvalidParameterError, OutOfDomainError
from dpdist.local.frequency._bucket_client import BucketMemoClient
from dpdist.local.frequency.dbitflippm import bucketize
from dpdist.local.frequency._longitudinal import _chain, _grr_keeps, _grr_probabilities
from dpdist.local.frequency.loloha import optimal_hash_range

LOLOHA = [
    {"epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 5, "hash_prime": 7},  # g = 3
    {"epsilon": 4.0, "epsilon_1": 1.5, "domain_size": 4, "hash_prime": 5, "variant": "binary"},
    {"epsilon": 1.0, "epsilon_1": 0.6, "domain_size": 3, "hash_prime": 5},
]
DBITFLIP = [
    {"epsilon": 1.0, "domain_size": 5, "sampled_bits": 2},
    {"epsilon": 3.0, "domain_size": 4},
    {"epsilon": 2.0, "domain_size": 6, "sampled_bits": 1},
]


def _loss(channel: np.ndarray) -> float:
    """Largest log ratio of one output's probabilities across inputs (outputs of probability 0 everywhere dropped)."""
    channel = channel[:, channel.max(axis=0) > 0]
    with np.errstate(divide="ignore"):
        logs = np.log(channel)
    return float(np.max(logs.max(axis=0) - logs.min(axis=0)))


# ---------------------------------------------------------------------- loloha
@pytest.mark.parametrize("params", LOLOHA)
def test_loloha_one_report_is_exactly_eps_1(params):
    proto = local.make("loloha", **params)
    loss = _loss(proto.channel())
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
    loss = _loss(joint)
    assert loss <= params["epsilon"] + 1e-9
    assert loss >= _loss(proto.channel()) - 1e-12  # more reports never leak less


def test_loloha_without_the_memo_the_adversary_exceeds_eps_inf():
    """The check above can fail: redrawing the PRR every report leaks more than eps_inf after a few reports."""
    proto = local.make("loloha", **LOLOHA[0])
    assert _loss(_loloha_joint(proto, 4, memoized=False)) > LOLOHA[0]["epsilon"]


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
@pytest.mark.parametrize("params", DBITFLIP)
def test_dbitflippm_one_report_is_exactly_its_epsilon(params):
    proto = local.make("dbitflippm", **params)
    loss = _loss(proto.channel())
    expected = params["epsilon"] if proto.sampled_bits > 1 else params["epsilon"] / 2
    assert loss <= expected + 1e-12
    assert loss > expected - 1e-6
    assert loss == pytest.approx(proto.epsilon_per_report, abs=1e-6)


@pytest.mark.parametrize("params", DBITFLIP)
@pytest.mark.parametrize("reports", [2, 3])
def test_dbitflippm_adversary_who_sees_every_report_of_one_value_learns_at_most_eps_inf(params, reports):
    """Simulate the devices: T reports of one value are identical, so the joint law is the one-report channel."""
    proto = local.make("dbitflippm", **params)
    outputs = proto.channel().shape[1]
    joint = np.zeros((proto.domain_size, outputs**reports))
    rng = np.random.default_rng(7)
    for value in range(proto.domain_size):
        device = proto.client()
        days = np.array([device.report(value, rng=rng) for _ in range(reports)])
        assert np.all(days == days[0])  # nothing but the memo is reported
    diagonal = sum(np.arange(outputs) * outputs**t for t in range(reports))
    joint[:, diagonal] = proto.channel()
    loss = _loss(joint)
    assert loss <= params["epsilon"] + 1e-9
    assert loss == pytest.approx(proto.epsilon_longitudinal, abs=1e-6)
    # a device without the memo (fresh bits every day) leaks more than eps_inf
    fresh = np.stack([np.kron(row, np.kron(row, row)) for row in proto.channel()]) if reports == 3 else None
    if fresh is not None:
        assert _loss(fresh) > proto.epsilon_longitudinal + 0.1


@pytest.mark.parametrize("params", DBITFLIP)
def test_dbitflippm_a_value_that_changes_bucket_costs_eps_per_bucket_and_shows_the_change(params):
    """The exact law of two days' reports (same sampled indices, one memo per bucket).

    Sequences with one change (v, w), v != w, against each other: loss 2 eps_1, as stated by
    epsilon_for_buckets(2). Against a sequence without a change (v, v): unbounded, since (v, v)
    never gives two different reports: the change itself is visible.
    """
    proto = local.make("dbitflippm", **params)
    b, d = proto.domain_size, proto.sampled_bits
    one_day = proto.channel()  # (b, subsets * 2^d), column = subset * 2^d + bits
    subsets = one_day.shape[1] // 2**d
    per_subset = one_day.reshape(b, subsets, 2**d) * subsets  # law of the bits given the subset
    pairs = [(v, w) for v in range(b) for w in range(b)]

    def joint(v, w):
        if v == w:  # the memo is replayed: the second day repeats the first
            law = np.zeros((subsets, 2**d, 2**d))
            law[:, np.arange(2**d), np.arange(2**d)] = per_subset[v]
        else:
            law = per_subset[v][:, :, None] * per_subset[w][:, None, :]
        return (law / subsets).ravel()

    changed = np.stack([joint(v, w) for v, w in pairs if v != w])
    assert np.allclose(changed.sum(axis=1), 1.0)
    assert _loss(changed) == pytest.approx(proto.epsilon_for_buckets(2), abs=1e-6)
    steady = np.stack([joint(v, v) for v in range(b)])
    assert _loss(steady) == pytest.approx(proto.epsilon_for_buckets(1), abs=1e-6)
    with np.errstate(divide="ignore"):
        mixed = _loss(np.stack([joint(0, 0), joint(0, 1)]))
    assert mixed == np.inf


def test_dbitflippm_client_state_round_trip_and_checks():
    proto = local.make("dbitflippm", epsilon=2.0, domain_size=6, sampled_bits=2)
    device = proto.client()
    today = device.report(4, rng=1)
    state = json.loads(json.dumps(device.to_dict()))
    restored = BucketMemoClient.from_dict(state)
    assert np.array_equal(restored.report(4, rng=99), today)
    bad = dict(state, randomness=[3, 1])
    with pytest.raises(IncompatibleStateError):
        BucketMemoClient.from_dict(bad)
    with pytest.raises(IncompatibleStateError):
        BucketMemoClient.from_dict(dict(state, memo={"4": [1, 2]}))
    # a key that is not an item (ValueError before) and a memo without the randomness its buckets were drawn under
    with pytest.raises(IncompatibleStateError):
        BucketMemoClient.from_dict(dict(state, memo={"x": state["memo"][next(iter(state["memo"]))]}))
    with pytest.raises(IncompatibleStateError, match="no randomness"):
        BucketMemoClient.from_dict(dict(state, randomness=None))
    with pytest.raises(InvalidParameterError):
        BucketMemoClient(local.make("grr", epsilon=1.0, domain_size=3))


@pytest.mark.parametrize("sampled_bits", [1, 3, 16])
def test_dbitflippm_estimator_is_unbiased_with_its_variance(sampled_bits):
    proto = local.make("dbitflippm", epsilon=1.0, domain_size=16, sampled_bits=sampled_bits)
    values = np.random.default_rng(0).zipf(1.5, 40_000) % 16
    truth = np.bincount(values, minlength=16) / values.size
    estimate = proto.estimate(proto.privatize(values, rng=1))
    z = (estimate.frequencies - truth) / np.sqrt(proto.variance(values.size, truth))
    assert np.max(np.abs(z)) < 4.8  # 16 items, each ~N(0, 1): P(max > 4.8) < 3e-5


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


def test_dbitflippm_rejects_malformed_rows():
    proto = local.make("dbitflippm", epsilon=2.0, domain_size=6, sampled_bits=2)
    rows = np.array([[1, 4, 0, 1], [4, 1, 0, 1], [1, 6, 0, 1], [1, 4, 2, 0], [-1, 4, 0, 0]])
    _, bad = proto.check_reports(rows)
    assert bad["index_out_of_range_or_unsorted"].tolist() == [False, True, True, False, True]
    assert bad["bit_not_0_or_1"].tolist() == [False, False, False, True, False]


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
