"""dBitFlipPM (dpdist.local.frequency.dbitflippm), memoized per bucket: its epsilon per report and over any number of
reports, a change of bucket, the client's state, an unbiased estimator; at d = 2^26 a batch whose reports would not
fit is refused naming how many fit, and the exact simulation keeps O(b) memory and the law of privatize."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import IncompatibleStateError, InvalidParameterError
from dpdist.local.frequency._bucket_client import BucketMemoClient
from dpdist.testing import max_privacy_loss


def test_dbitflippm_refuses_a_batch_whose_reports_would_not_fit(monkeypatch):
    from dpdist import _validation

    monkeypatch.setattr(_validation._shared, "MAX_ALLOCATION_BYTES", 2**24)  # the same arithmetic, at 16 MiB
    protocol = local.make("dbitflippm", epsilon=1.0, domain_size=2**20)  # d = b: reports of 8 MiB each
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidParameterError, match=re.escape(
                "The 'values' argument of DBITFLIPPM.privatize holds 3 values: their reports (2 x sampled_bits = "
                "2,097,152 uint32 each) would need 0.0 GiB") + r".*Privatize at most 2 values at a time"):
            protocol.privatize(np.arange(3), rng=0)
        assert protocol.privatize(np.arange(2), rng=0).shape == (2, 2**21)


def test_dbitflippm_at_two_to_the_26_buckets_refuses_ten_reports_and_names_how_many_fit():
    protocol = local.make("dbitflippm", epsilon=1.0, domain_size=2**26)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidParameterError, match=r"'values' argument .* 10 values: .* 5\.0 GiB .*Privatize at "
                                                        r"most 4 values at a time"):
            protocol.privatize(np.arange(10), rng=0)  # was a MemoryError (5 GiB of int64 indices, then 5 GiB of reports)


def test_dbitflippm_with_every_bucket_sampled_simulates_in_order_b_memory():
    import tracemalloc

    b = 2**20  # a fault of 8b bytes per user is still 800 GB here; 2**22 only made the test 4x slower
    protocol = local.make("dbitflippm", epsilon=1.0, domain_size=b)
    tracemalloc.start()
    try:
        aggregator = protocol.simulate(np.arange(100_000) % 7, rng=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the statistic (2b int64) and a few b-sized temporaries; privatizing was 8b bytes per user (0.8 TB here)
    assert aggregator.n == 100_000 and peak < 5 * 16 * b, f"{peak / 2**20:.0f} MiB"
    assert np.all(aggregator.statistic[b:] == 100_000)  # every user samples every bucket


@pytest.mark.filterwarnings("ignore::dpdist.errors.EachValueANewUserWarning")
def test_dbitflippm_exact_simulate_has_the_law_of_privatize():
    # d = b: simulate draws Binomial(c_v, p) + Binomial(n - c_v, q) per bucket; privatize then add, the same law
    protocol = local.make("dbitflippm", epsilon=1.0, domain_size=5)
    values = np.repeat(np.arange(5), [400, 300, 200, 80, 20])
    simulated = np.array([protocol.simulate(values, rng=seed).statistic for seed in range(300)], dtype=float)
    added = np.array([protocol.aggregator().add(protocol.privatize(values, rng=1000 + seed)).statistic
                      for seed in range(300)], dtype=float)
    p, q, counts = protocol._bit_p, protocol._bit_q, np.bincount(values, minlength=5)
    mean = counts * p + (values.size - counts) * q
    sd = np.sqrt(counts * p * (1 - p) + (values.size - counts) * q * (1 - q))
    for statistic in (simulated, added):
        assert np.all(statistic[:, 5:] == values.size)
        assert np.all(np.abs(statistic[:, :5].mean(axis=0) - mean) < 4 * sd / np.sqrt(300))
        assert np.all(np.abs(statistic[:, :5].std(axis=0) / sd - 1) < 0.2)


DBITFLIP = [
    {"epsilon": 1.0, "domain_size": 5, "sampled_bits": 2},
    {"epsilon": 3.0, "domain_size": 4},
    {"epsilon": 2.0, "domain_size": 6, "sampled_bits": 1},
]


@pytest.mark.parametrize("params", DBITFLIP)
def test_dbitflippm_one_report_is_exactly_its_epsilon(params):
    proto = local.make("dbitflippm", **params)
    loss = max_privacy_loss(proto.channel())
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
    loss = max_privacy_loss(joint)
    assert loss <= params["epsilon"] + 1e-9
    assert loss == pytest.approx(proto.epsilon_longitudinal, abs=1e-6)
    # a device without the memo (fresh bits every day) leaks more than eps_inf
    fresh = np.stack([np.kron(row, np.kron(row, row)) for row in proto.channel()]) if reports == 3 else None
    if fresh is not None:
        assert max_privacy_loss(fresh) > proto.epsilon_longitudinal + 0.1


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
    assert max_privacy_loss(changed) == pytest.approx(proto.epsilon_for_buckets(2), abs=1e-6)
    steady = np.stack([joint(v, v) for v in range(b)])
    assert max_privacy_loss(steady) == pytest.approx(proto.epsilon_for_buckets(1), abs=1e-6)
    with np.errstate(divide="ignore"):
        mixed = max_privacy_loss(np.stack([joint(0, 0), joint(0, 1)]))
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


def test_dbitflippm_rejects_malformed_rows():
    proto = local.make("dbitflippm", epsilon=2.0, domain_size=6, sampled_bits=2)
    rows = np.array([[1, 4, 0, 1], [4, 1, 0, 1], [1, 6, 0, 1], [1, 4, 2, 0], [-1, 4, 0, 0]])
    _, bad = proto.check_reports(rows)
    assert bad["index_out_of_range_or_unsorted"].tolist() == [False, True, True, False, True]
    assert bad["bit_not_0_or_1"].tolist() == [False, False, False, True, False]


def test_the_ranked_variance_is_its_closed_form_of_the_variance_over_the_domain():
    # it went through arrays of the domain's size: 6.6 s and 3 GB at d = 10^8
    n = 10**6
    for d in (5, 64, 1000):
        protocol = local.make("dbitflippm", epsilon=1.0, domain_size=d)
        assert protocol.ranked_variance(n) == pytest.approx(float(np.mean(protocol.variance(n, np.full(d, 1 / d)))), rel=1e-12)
        frequencies = np.zeros(d)
        frequencies[:2] = 0.5
        worst = max(float(np.mean(protocol.variance(n))), float(protocol.variance(n, frequencies)[0]))
        assert protocol.ranked_variance(n, 0.5) == pytest.approx(worst, rel=1e-12)
