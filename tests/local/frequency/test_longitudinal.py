"""Memoized two-round protocols l-grr and l-osue: eps_1 per report, eps_inf over any number of reports."""

import itertools
import json

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import IncompatibleStateError, InvalidParameterError
from dpdist.local.frequency.longitudinal import MemoizedClient

CASES = [
    ("l-grr", {"epsilon": 3.0, "epsilon_1": 1.0, "domain_size": 4}),
    ("l-grr", {"epsilon": 1.0, "epsilon_1": 0.3, "domain_size": 3}),
    ("l-osue", {"epsilon": 3.0, "epsilon_1": 1.0, "domain_size": 3}),
    ("l-osue", {"epsilon": 1.0, "epsilon_1": 0.8, "domain_size": 2}),
]


def _loss(channel: np.ndarray) -> float:
    """Largest privacy loss of a channel: max over outputs and input pairs of log P[x,y]/P[x',y]."""
    logs = np.log(channel)
    return float(np.max(logs.max(axis=0) - logs.min(axis=0)))


@pytest.mark.parametrize("name, params", CASES)
def test_one_report_is_exactly_eps_1(name, params):
    proto = local.make(name, **params)
    loss = _loss(proto.channel())
    assert loss <= params["epsilon_1"] + 1e-12
    assert loss == pytest.approx(proto.epsilon_per_report)
    assert loss > params["epsilon_1"] - 1e-6  # the IRR budget is not wasted
    # the chain equals the composition of its rounds
    assert np.allclose(proto.permanent_channel() @ proto.instantaneous_channel(), proto.channel(), atol=1e-15)


@pytest.mark.parametrize("name, params", CASES)
@pytest.mark.parametrize("reports", [1, 2, 3])
def test_the_adversary_who_sees_every_report_of_one_value_learns_at_most_eps_inf(name, params, reports):
    proto = local.make(name, **params)
    prr, irr = proto.permanent_channel(), proto.instantaneous_channel()
    outputs = irr.shape[1]
    joint = np.zeros((prr.shape[0], outputs**reports))
    for column, sequence in enumerate(itertools.product(range(outputs), repeat=reports)):
        joint[:, column] = prr @ np.prod(irr[:, list(sequence)], axis=1)
    loss = _loss(joint)
    assert loss <= params["epsilon"] + 1e-9
    assert loss <= proto.epsilon_longitudinal + 1e-9
    if reports == 1:
        assert loss == pytest.approx(proto.epsilon_per_report)
    # more reports leak more, up to eps_inf: the memo is what keeps it bounded
    assert loss >= _loss(proto.channel()) - 1e-12


@pytest.mark.parametrize("name, params", CASES)
def test_client_memoizes_the_permanent_response(name, params):
    proto = local.make(name, **params)
    device = proto.client()
    first = [device.report(1, rng=seed) for seed in range(3)]
    memo = device.to_dict()
    assert list(memo["memo"]) == ["1"]
    restored = MemoizedClient.from_dict(json.loads(json.dumps(memo)))
    assert restored.to_dict() == memo
    # the reports are IRR draws of one memoized value: their law is a row of the IRR channel
    reports = np.array([restored.report(1, rng=seed) for seed in range(2000)])
    index = proto.report_index(reports if reports.ndim == 2 else reports)
    memoized = np.asarray(restored.memo[1])
    row_index = int(proto.report_index(memoized[None, ...])[0])
    expected = proto.instantaneous_channel()[row_index]
    observed = np.bincount(index, minlength=expected.size) / index.size
    # 5 standard errors of a proportion over 2000 draws
    assert np.all(np.abs(observed - expected) <= 5 * np.sqrt(expected * (1 - expected) / 2000) + 1e-12)
    assert len(first) == 3


def test_memo_state_is_checked():
    with pytest.raises(IncompatibleStateError):
        MemoizedClient.from_dict({"config": local.make("l-osue", epsilon=2.0, epsilon_1=1.0, domain_size=9).config(), "memo": {"1": [1]}})
    with pytest.raises(InvalidParameterError):
        MemoizedClient(local.make("grr", epsilon=1.0, domain_size=3))


@pytest.mark.parametrize(
    "name, memo",
    [
        ("l-grr", {"abc": 1}), ("l-grr", {"1.5": 1}), ("l-grr", {"1": None}), ("l-grr", {"1": True}),
        ("l-osue", {"1": ["x"]}), ("l-osue", {"1": [300]}), ("l-osue", {"1": None}), ("l-osue", {"-1": [1]}),
    ],
)
def test_a_damaged_memo_is_an_incompatible_state_not_an_internal_error(name, memo):
    """A memo file is read from disk: keys like 'abc', values like None or 300 raised ValueError, TypeError or
    OverflowError, which ``dpdist privatize --memo`` reported as a bug of dpdist."""
    config = local.make(name, epsilon=2.0, epsilon_1=1.0, domain_size=8).config()
    with pytest.raises(IncompatibleStateError):
        MemoizedClient.from_dict({"config": config, "memo": memo})


@pytest.mark.parametrize("name", ["l-grr", "l-osue"])
def test_epsilon_1_must_be_below_epsilon(name):
    with pytest.raises(InvalidParameterError, match="epsilon_1"):
        local.make(name, epsilon=1.0, epsilon_1=1.0, domain_size=4)


@pytest.mark.parametrize("name", ["l-grr", "l-osue"])
def test_each_round_is_estimated_without_bias(name):
    proto = local.make(name, epsilon=2.0, epsilon_1=1.0, domain_size=8)
    values = np.random.default_rng(0).zipf(1.6, 50_000) % 8
    truth = np.bincount(values, minlength=8) / values.size
    estimate = proto.estimate(proto.privatize(values, rng=1))
    z = (estimate.frequencies - truth) / np.sqrt(proto.variance(values.size, truth))
    assert np.max(np.abs(z)) < 4.5  # 8 items, each N(0, 1)
