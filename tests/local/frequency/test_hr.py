"""Hadamard response: the fast transform, the block design, and the exact variance."""

import math

import numpy as np
import pytest
from scipy import linalg

from dpdist import local
from dpdist.errors import OutOfDomainError
from dpdist.local._walsh_hadamard import fast_walsh_hadamard


@pytest.mark.parametrize("size", [1, 2, 8, 64])
def test_fast_walsh_hadamard_equals_the_sylvester_matrix_product(size):
    data = np.random.default_rng(0).integers(-50, 50, size=(3, size))
    np.testing.assert_array_equal(fast_walsh_hadamard(data), data @ linalg.hadamard(size).T)


@pytest.mark.parametrize("d", [2, 7, 8, 1000])
def test_high_privacy_form_uses_k_equal_two_to_ceil_log2_d_plus_one(d):
    protocol = local.make("hr", epsilon=0.5, domain_size=d)
    assert protocol.blocks == 1 and protocol.output_size == 2 ** math.ceil(math.log2(d + 1))
    e = math.exp(0.5)
    assert protocol.support_probabilities() == pytest.approx((e / (e + 1), 0.5))


def test_sets_have_half_a_block_and_pairwise_quarter_overlaps():
    protocol = local.make("hr", epsilon=4.0, domain_size=40)
    assert protocol.blocks > 1
    member = protocol.in_set(np.arange(40)[:, None], np.arange(protocol.output_size)[None, :])
    b = protocol.block_size
    np.testing.assert_array_equal(member.sum(axis=1), b // 2)
    overlap = member.astype(int) @ member.T.astype(int)
    block = np.arange(40) // (b - 1)
    same_block = block[:, None] == block[None, :]
    off_diagonal = ~np.eye(40, dtype=bool)
    assert np.all(overlap[same_block & off_diagonal] == b // 4)
    assert np.all(overlap[~same_block] == 0)
    np.testing.assert_array_equal(np.sort(protocol._set_members(np.arange(40)), axis=1),
                                  np.sort(np.nonzero(member)[1].reshape(40, -1), axis=1))


def test_a_device_of_a_hundred_million_items_privatizes_in_little_memory():
    # the table of every item's block and column took 1.6 GB at this domain, on every device that built HR
    import tracemalloc

    tracemalloc.start()
    try:
        protocol = local.make("hr", epsilon=4.0, domain_size=10**8)
        reports = protocol.privatize([0, 12_345_678, 10**8 - 1], rng=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert protocol.blocks > 1 and peak < 8 << 20, peak
    assert reports.shape == (3,) and np.all(reports < protocol.output_size)


def test_in_set_refuses_items_outside_the_domain():
    protocol = local.make("hr", epsilon=4.0, domain_size=40)
    for items in ([40], [-1]):
        with pytest.raises(OutOfDomainError, match=r"'items' argument of HR.in_set must be item indices in \[0, 40\)"):
            protocol.in_set(items, [0])


@pytest.mark.slow  # 3,000 repeated estimates (0.5 CPU-s); the exact sampler's tests below simulate HR fast
def test_block_variance_formula_matches_repeated_simulation():
    protocol = local.make("hr", epsilon=3.0, domain_size=30)
    assert protocol.blocks > 1
    values = np.repeat(np.arange(30), np.arange(1, 31) * 20)
    truth = np.bincount(values) / values.size
    generator = np.random.default_rng(7)
    repeats = 3000
    estimates = np.array([protocol.estimate(protocol.simulate(values, rng=generator)).frequencies
                          for _ in range(repeats)])
    variance = protocol.variance(values.size, truth)
    # mean within 5 standard errors of the mean; variance ratio within 5 x sqrt(2/(R-1)) (normal approx.)
    assert np.all(np.abs(estimates.mean(axis=0) - truth) < 5 * np.sqrt(variance / repeats))
    assert np.all(np.abs(estimates.var(axis=0, ddof=1) / variance - 1) < 5 * math.sqrt(2 / (repeats - 1)))


def test_both_branches_of_the_exact_sampler_agree_with_privatize():
    protocol = local.make("hr", epsilon=1.0, domain_size=12)
    values = np.repeat(np.arange(12), 30)
    generator = np.random.default_rng(3)
    repeats = 600
    statistics = {}
    for label, cells in (("multinomial", 1 << 22), ("per-user", 0)):
        import dpdist.local.frequency.hr as module

        saved, module._MULTINOMIAL_CELLS = module._MULTINOMIAL_CELLS, cells
        try:
            statistics[label] = np.array([protocol.simulate(values, rng=generator).statistic for _ in range(repeats)])
        finally:
            module._MULTINOMIAL_CELLS = saved
    channel = protocol.channel(values)
    expected = channel.sum(axis=0)
    for label, sample in statistics.items():
        # each output count: sum of independent Bernoullis; mean within 5 standard errors
        sd = np.sqrt((channel * (1 - channel)).sum(axis=0) / repeats)
        assert np.all(np.abs(sample.mean(axis=0) - expected) < 5 * sd), label


def test_the_random_draws_do_not_depend_on_keeping_the_item_or_on_the_value():
    # a device's time is its work: with one seed, the same random stream whether the item is kept or not
    protocol = local.make("hr", epsilon=2.0, domain_size=20)
    for seed in range(20):
        states = set()
        for keep in (0.0, 1.0):
            protocol._keep = keep
            for value in (0, 7, 19):
                rng = np.random.default_rng(seed)
                report = protocol.privatize([value], rng=rng)
                assert bool(protocol.in_set(value, report.astype(np.int64))[0]) or keep == 0.0
                states.add(str(rng.bit_generator.state))
        assert len(states) == 1
