"""``loloha``: longitudinal local hashing (Arcolezi et al., EDBT 2023)."""

import itertools
import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import IncompatibleStateError, InvalidParameterError
from dpdist.local.frequency.loloha import HashedMemoizedClient


def _max_log_ratio(channel):
    return float(np.max(np.log(channel.max(axis=0) / channel.min(axis=0))))


@pytest.mark.parametrize("epsilon, epsilon_1, g", [(2.0, 1.0, None), (4.0, 0.5, 2), (3.0, 2.9, 5)])
def test_one_report_is_epsilon_1_and_the_memo_epsilon_inf_exactly(epsilon, epsilon_1, g):
    protocol = local.make("loloha", epsilon=epsilon, epsilon_1=epsilon_1, domain_size=6, hash_count=8, hash_range=g)
    assert _max_log_ratio(protocol.channel()) == pytest.approx(epsilon_1, abs=1e-9)
    assert _max_log_ratio(protocol.permanent_channel()) == pytest.approx(epsilon, abs=1e-9)
    assert protocol.epsilon_per_report == pytest.approx(epsilon_1) and protocol.epsilon_longitudinal == pytest.approx(epsilon)


def test_an_adversary_seeing_t_reports_of_one_value_learns_at_most_epsilon_inf():
    protocol = local.make("loloha", epsilon=2.0, epsilon_1=1.0, domain_size=5, hash_count=4, hash_range=3)
    g, keep_1, keep_2 = protocol.hash_range, protocol._keep_1, protocol._keep_2
    permanent = np.full((g, g), (1 - keep_1) / g) + np.eye(g) * keep_1  # P[s | bucket]
    instantaneous = np.full((g, g), (1 - keep_2) / g) + np.eye(g) * keep_2  # P[y | s]
    worst = 0.0
    for T in (1, 2, 4, 6):
        for transcript in itertools.product(range(g), repeat=T):
            # P[y_1..y_T | bucket b] = sum_s P[s | b] prod_t P[y_t | s]; the function j is public
            per_bucket = permanent @ np.prod(instantaneous[:, list(transcript)], axis=1)
            worst = max(worst, math.log(per_bucket.max() / per_bucket.min()))
    assert worst <= 2.0 + 1e-9
    assert worst > 1.9  # long transcripts approach epsilon_inf: the bound is tight


def test_a_device_keeps_one_function_and_at_most_g_memos_however_its_value_changes():
    protocol = local.make("loloha", epsilon=3.0, epsilon_1=1.0, domain_size=1000, hash_range=4)
    device = protocol.client()
    reports = [device.report(value, rng=i) for i, value in enumerate(range(0, 1000, 7))]
    assert len({int(r[0]) for r in reports}) == 1 and len(device.memo) <= 4
    assert protocol.epsilon_over_changes == pytest.approx(4 * 3.0)
    restored = HashedMemoizedClient.from_dict(device.to_dict())
    assert restored.function == device.function and restored.memo == device.memo
    with pytest.raises(IncompatibleStateError):
        HashedMemoizedClient(protocol, {"function": 10**9, "memo": {}})


def test_the_estimate_is_unbiased_with_the_stated_variance():
    protocol = local.make("loloha", epsilon=4.0, epsilon_1=1.0, domain_size=20, hash_count=256)
    values = np.repeat(np.arange(4), [500, 300, 150, 50])
    truth = np.bincount(values, minlength=20) / values.size
    runs = np.array([protocol.estimate(protocol.simulate(values, rng=seed)).frequencies for seed in range(400)])
    variance = protocol.variance(values.size, truth)
    bias_bound = math.sqrt(np.sum(truth**2) / (protocol.hash_count * (protocol.hash_range - 1)))
    assert np.all(np.abs(runs.mean(axis=0) - truth) <= 5 * np.sqrt(variance / 400) + 4 * bias_bound)
    assert np.median(runs.var(axis=0) / variance) == pytest.approx(1.0, abs=0.25)
    direct = np.array([protocol.estimate(protocol.privatize(values, rng=seed)).frequencies for seed in range(100)])
    assert np.all(np.abs(direct.mean(axis=0) - truth) <= 5 * np.sqrt(variance / 100) + 4 * bias_bound)


def test_bad_budgets_name_the_argument():
    with pytest.raises(InvalidParameterError, match="epsilon_1"):
        local.make("loloha", epsilon=1.0, epsilon_1=2.0, domain_size=10)
