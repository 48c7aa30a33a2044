"""Subset selection: subset size, exact subsets, closed-form probabilities, report checks."""

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError
from dpdist.local.frequency._oracle import pure_variance


@pytest.mark.parametrize("d", [16, 128, 1024, 16384])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0])
def test_subset_size_minimizes_the_variance_at_uniform_frequencies_over_every_k(epsilon, d):
    k = np.arange(1, d, dtype=np.float64)
    e = math.exp(epsilon)
    p = k * e / (k * e + d - k)
    q = p * (k - 1) / (d - 1) + (1 - p) * k / (d - 1)
    variance = pure_variance(p, q, 1, 1.0 / d)  # the measure auto ranks, for every k in 1 .. d-1
    protocol = local.make("ss", epsilon=epsilon, domain_size=d)
    assert protocol.subset_size == int(np.argmin(variance)) + 1
    assert protocol.config()["subset_size"] == protocol.subset_size


def test_a_config_without_subset_size_keeps_the_ceiling_rule_and_reads_back_unchanged():
    stored = {"protocol": "ss", "version": 1, "epsilon": 4.0, "domain_size": 128}
    protocol = local.from_config(stored)
    assert protocol.subset_size == math.ceil(128 / (math.exp(4.0) + 1)) == 3
    assert protocol.config() == stored
    assert local.make("ss", epsilon=4.0, domain_size=128).subset_size == 2


def test_an_inner_ss_keeps_the_ceiling_rule_its_config_was_written_with():
    params = {"epsilon": 1.0, "attributes": [{"name": "c", "domain_size": 128, "protocol": "ss"}]}
    fresh = local.make("smp", **params)
    rebuilt = local.from_config(fresh.config())
    ceiling = math.ceil(128 / (math.exp(fresh.inner_protocols[0].epsilon) + 1))
    assert fresh.inner_protocols[0].subset_size == rebuilt.inner_protocols[0].subset_size == ceiling


def test_subset_size_is_taken_as_given_and_refused_at_the_domain_size():
    protocol = local.make("ss", epsilon=1.0, domain_size=16, subset_size=7)
    assert protocol.subset_size == 7 and local.from_config(protocol.config()).subset_size == 7
    with pytest.raises(InvalidParameterError, match="'subset_size' parameter of SS must be below 'domain_size' = 16"):
        local.make("ss", epsilon=1.0, domain_size=16, subset_size=16)


def test_every_report_is_a_subset_of_exactly_k_distinct_items():
    protocol = local.make("ss", epsilon=1.0, domain_size=50)
    reports = protocol.privatize(np.random.default_rng(0).integers(0, 50, 4000), rng=1)
    bits = np.unpackbits(reports, axis=1)
    np.testing.assert_array_equal(bits[:, :50].sum(axis=1), protocol.subset_size)
    assert not bits[:, 50:].any()


def test_true_item_is_included_with_probability_p_in():
    epsilon, d, n = 1.0, 30, 40_000
    protocol = local.make("ss", epsilon=epsilon, domain_size=d)
    k, e = protocol.subset_size, math.exp(epsilon)
    p_in = k * e / (k * e + d - k)
    bits = np.unpackbits(protocol.privatize(np.full(n, 7), rng=2), axis=1, count=d)
    # binomial proportions, 5 standard errors
    assert abs(bits[:, 7].mean() - p_in) < 5 * math.sqrt(p_in * (1 - p_in) / n)
    q_other = p_in * (k - 1) / (d - 1) + (1 - p_in) * k / (d - 1)
    assert abs(bits[:, 3].mean() - q_other) < 5 * math.sqrt(q_other * (1 - q_other) / n)
    assert protocol.support_probabilities() == pytest.approx((p_in, q_other))


def test_channel_columns_follow_the_colex_rank_of_report_index():
    protocol = local.make("ss", epsilon=0.7, domain_size=6)
    k = protocol.subset_size
    channel = protocol.channel()
    assert channel.shape == (6, math.comb(6, k))
    ranks = protocol.report_index(protocol.privatize(np.zeros(500, dtype=int), rng=3))
    assert len(set(ranks.tolist())) > 1 and ranks.max() < channel.shape[1]
    # column of the subset {0, .., k-1} is rank 0: it holds item 0
    assert channel[0, 0] > channel[5, 0]


def test_reports_with_the_wrong_number_of_items_are_counted():
    protocol = local.make("ss", epsilon=1.0, domain_size=12)
    reports = protocol.privatize(np.arange(12), rng=4)
    reports[0] = np.packbits(np.r_[np.ones(protocol.subset_size + 1, bool), np.zeros(11 - protocol.subset_size, bool)])
    reports[1, -1] |= 1  # a padding bit
    aggregator = protocol.aggregator().add(reports)
    assert aggregator.n == 10
    assert aggregator.rejected == {"not_k_items": 1, "padding_bits_set": 1}


# 0.1-0.2 CPU-s each (30,000 draws an input): the fast loop one fill with removals one at a time and one in batches
@pytest.mark.parametrize("threshold, batched_removals", [
    *(pytest.param(threshold, False, marks=pytest.mark.slow) for threshold in (0, 40, 255)), (128, False),
    pytest.param(128, True, marks=pytest.mark.slow), (255, True)])
def test_every_first_fill_gives_the_exact_channel(threshold, batched_removals, monkeypatch):
    # the first fill's rate only changes how many additions or removals follow (0: additions only,
    # 255: removals in almost every row, at d = 8, k = 3), and removals run one candidate per round
    # or in batches; the law of the subsets must not change
    from dpdist.local.frequency import ss
    from dpdist.testing import assert_privatize_samples_channel, channel_inputs

    monkeypatch.setattr(ss, "_FEW_MEMBERS", 256 if batched_removals else 0)
    protocol = local.make("ss", epsilon=0.5, domain_size=8)
    protocol._key_threshold = threshold
    assert_privatize_samples_channel(protocol, channel_inputs(protocol), n_per_input=30_000, rng=threshold + 1)


def test_small_subsets_skip_the_bernoulli_fill_and_large_ones_start_near_their_size():
    from dpdist.local.frequency.ss import _key_threshold

    assert _key_threshold(10_000, 67) == 0  # eps = 5: k additions beat 9,999 Bernoulli cells
    # eps = 0.5, 2: a fill just below k/(d-1), so few additions and rarer removals follow
    for k in (3776, 1193):
        assert 0.9 * 256 * k / 9999 <= _key_threshold(10_000, k) <= 256 * k / 9999


@pytest.mark.parametrize("epsilon, d, threshold", [(5.0, 20, None), (3.0, 60, None), (0.5, 40, None), (3.0, 60, 40)])
def test_the_random_draws_do_not_depend_on_the_value_or_on_including_it(epsilon, d, threshold):
    # a device's time is its work: with the same seed, the sampler consumes the same random stream
    # whether the true item is included (p_in forced to 1) or not (forced to 0), and whatever the value
    protocol = local.make("ss", epsilon=epsilon, domain_size=d)
    if threshold is not None:
        protocol._key_threshold = threshold  # a first fill that needs additions and removals
    for seed in range(20):
        states = set()
        for p_in in (0.0, 1.0):
            protocol._p_in = p_in
            for value in (0, 3, d - 1):
                rng = np.random.default_rng(seed)
                bitmap = protocol._sample_bitmaps(np.array([value]), rng)
                assert bitmap[0].sum() == protocol.subset_size and bitmap[0, value] == bool(p_in)
                states.add(str(rng.bit_generator.state))
        assert len(states) == 1
