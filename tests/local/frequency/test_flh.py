"""FLH: the public family, O(n + S d) aggregation, the exact aggregate sampler, the family's bias."""

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import IncompatibleStateError, InvalidParameterError, MalformedReportError
from dpdist.local import Aggregator
from dpdist.local.frequency import _hashing
from dpdist.local.frequency.flh import family_seeds

_MASK = (1 << 64) - 1


def _splitmix64(seed: int, index: int) -> int:
    """Scalar SplitMix64 with Python integers (the test oracle)."""
    z = (seed + (index + 1) * 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


@pytest.mark.parametrize("family_seed, prime", [(0, 2**31 - 1), (12345, 7), (2**63 - 1, 101)])
def test_family_seeds_follow_the_integer_recipe(family_seed, prime):
    seeds = family_seeds(family_seed, 50, prime)
    expected = [_splitmix64(family_seed, j) % ((prime - 1) * prime) for j in range(50)]
    assert seeds.tolist() == expected


def test_support_counts_equal_hashing_each_report():
    protocol = local.make("flh", epsilon=2.0, domain_size=37, hash_count=50)
    values = np.random.default_rng(1).integers(0, 37, size=5000)
    reports = protocol.privatize(values, rng=2)
    aggregator = protocol.aggregator().add(reports)
    seeds = family_seeds(0, 50, 2**31 - 1)[reports[:, 0].astype(np.int64)]
    naive = np.zeros(37)
    for item in range(37):  # test oracle: hash every report against the item
        naive[item] = np.sum(_hashing.hash_items(seeds, item, 2**31 - 1, protocol.hash_range) == reports[:, 1])
    np.testing.assert_array_equal(protocol.support_counts(aggregator), naive)
    assert aggregator.statistic.sum() == 5000 and aggregator.statistic.size == 50 * protocol.hash_range


def test_conditional_bias_of_the_default_estimator_matches_the_collision_fractions():
    protocol = local.make("flh", epsilon=1.0, domain_size=6, hash_count=5, hash_prime=7)
    f = np.array([0.4, 0.3, 0.1, 0.1, 0.05, 0.05])
    expected_support = f @ protocol.channel()  # E[T/n], exact
    table = protocol.channel().shape[1]
    assert table == 5 * protocol.hash_range
    p, q = protocol.support_probabilities()
    hashed = protocol.hash_table()  # (S, d)
    support = np.array([expected_support.reshape(5, -1)[np.arange(5), hashed[:, v]].sum() for v in range(6)])
    mean_estimate = (support - q) / (p - q)
    collide = (hashed[:, :, None] == hashed[:, None, :]).mean(axis=0)  # A_{vv'}
    c = _hashing.collision_probability(7, protocol.hash_range)
    off = collide - c
    np.fill_diagonal(off, 0.0)
    np.testing.assert_allclose(mean_estimate - f, off @ f / (1 - c), atol=1e-12)


@pytest.mark.slow  # 0.28 CPU-s: a law checked from repeated draws
def test_simulate_equals_privatize_in_law_on_both_sampler_paths(monkeypatch):
    # the conformance suite checks the per-item multinomial path; force the per-user one too
    from dpdist.local.frequency import flh as flh_module

    protocol = local.make("flh", epsilon=1.5, domain_size=5, hash_count=4)
    values = np.repeat(np.arange(5), [50, 30, 10, 5, 5])
    expected = values.size * (np.bincount(values, minlength=5) / values.size) @ protocol.channel()
    for cells in (flh_module._MULTINOMIAL_CELLS, 0):
        monkeypatch.setattr(flh_module, "_MULTINOMIAL_CELLS", cells)
        generator = np.random.default_rng(7)
        tables = np.array([protocol.simulate(values, rng=generator).statistic for _ in range(3000)])
        assert np.all(tables.sum(axis=1) == values.size)
        # each cell count is a sum of independent Bernoullis: mean within 5 standard errors
        variance = (values[:, None] == np.arange(5)).T.sum(axis=1) @ (protocol.channel() * (1 - protocol.channel()))
        z = np.abs(tables.mean(axis=0) - expected) / np.sqrt(variance / 3000)
        assert np.all(z < 5.5), z


def test_reports_are_validated_and_out_of_range_rows_counted():
    protocol = local.make("flh", epsilon=1.0, domain_size=5, hash_count=10)
    reports = protocol.privatize(np.arange(5), rng=0)
    assert reports.shape == (5, 2) and reports.dtype == np.uint8
    bad = reports.astype(np.int64)
    bad[0, 0] = 10
    bad[1, 1] = protocol.hash_range
    bad[2, 0] = -1
    aggregator = protocol.aggregator().add(bad)
    assert aggregator.n == 2
    assert aggregator.rejected == {"function_out_of_range": 2, "value_out_of_range": 1}
    with pytest.raises(MalformedReportError, match=r"\(n, 2\)"):
        protocol.aggregator().add(reports[:, :1])


def test_parameters_are_checked():
    with pytest.raises(InvalidParameterError, match="hash_count x hash_range"):
        local.make("flh", epsilon=1.0, domain_size=10, hash_count=2**23, hash_range=4)
    with pytest.raises(InvalidParameterError, match="prime"):
        local.make("flh", epsilon=1.0, domain_size=4, hash_prime=9)
    with pytest.raises(InvalidParameterError, match="domain_size"):
        local.make("flh", epsilon=1.0, domain_size=12, hash_prime=11)


def test_a_state_whose_table_does_not_sum_to_n_is_rejected():
    protocol = local.make("flh", epsilon=1.0, domain_size=5, hash_count=3)
    state = protocol.simulate(np.arange(5).repeat(20), rng=0).to_dict()
    state["n"] = 99
    with pytest.raises(IncompatibleStateError, match="sum to n"):
        Aggregator.from_dict(state)


def test_different_family_seeds_give_different_configs_that_do_not_merge():
    first = local.make("flh", epsilon=1.0, domain_size=5, hash_count=3)
    second = local.make("flh", epsilon=1.0, domain_size=5, hash_count=3, family_seed=1)
    with pytest.raises(IncompatibleStateError):
        first.aggregator().merge(second.aggregator())
