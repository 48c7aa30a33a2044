"""What memoized protocols promise when a device's value changes.

The memo is keyed by the value (or its hash), so which permanent response a
report comes from shows the pattern of changes: the old claims (m * eps_inf for m
distinct values; LOLOHA's g * eps_inf) fail on the exact joint law.  The stated
guarantees now are ``stable_guarantee`` (an unchanged value, any number of reports)
and ``epsilon_over_changes(T)`` / ``guarantee_over(T)`` (any two histories of T
reports), proved here and by ``dpdist.testing.check_reports_over_time``.
"""

import itertools
import math

import numpy as np
import pytest

from dpdist import local, testing
from dpdist.errors import InvalidParameterError
from dpdist.privacy import PrivacyGuarantee, sequential
from dpdist.testing._over_time import all_histories, history_log_laws, largest_loss, memo_channels


def _exact_loss(proto, histories) -> float:
    permanent, instantaneous = memo_channels(proto)
    return largest_loss(history_log_laws(permanent, instantaneous, np.asarray(histories)))


def _constant_and_alternating(reports: int) -> list[list[int]]:
    return [[0] * reports, [t % 2 for t in range(reports)]]


def test_l_grr_audit_numbers_and_the_bound_that_holds():
    """The audit's case: l-grr d=2, eps_inf 1, eps_1 0.5; the loss passes 2 eps_inf (the old claim) by T = 8."""
    proto = local.make("l-grr", epsilon=1.0, epsilon_1=0.5, domain_size=2)
    pair = _exact_loss(proto, _constant_and_alternating(8))
    assert pair == pytest.approx(4.10, abs=0.01)  # the audit's figure for (v,v,...) against (v,w,v,w,...)
    every = _exact_loss(proto, all_histories(2, 8))
    assert every > 2 * proto.epsilon_longitudinal  # the old claim does not hold ...
    assert every <= proto.epsilon_over_changes(8)  # ... the stated one does
    twelve = _exact_loss(proto, _constant_and_alternating(12))
    assert twelve == pytest.approx(6.46, abs=0.01)
    assert twelve <= proto.epsilon_over_changes(12)


def test_l_osue_and_loloha_audit_numbers():
    losue = local.make("l-osue", epsilon=1.0, epsilon_1=0.5, domain_size=2)
    loss = _exact_loss(losue, all_histories(2, 4))
    assert loss <= losue.epsilon_over_changes(4)
    loloha = local.make("loloha", epsilon=1.0, epsilon_1=0.5, domain_size=4, variant="binary", hash_prime=5)
    loss = _exact_loss(loloha, _constant_and_alternating(10))
    assert loss > loloha.hash_range * loloha.epsilon_longitudinal  # LOLOHA's Theorem 2 claim
    assert loss <= loloha.epsilon_over_changes(10)


@pytest.mark.parametrize(
    "name, params",
    [
        ("l-grr", {"epsilon": 1.0, "epsilon_1": 0.5, "domain_size": 2}),
        ("l-grr", {"epsilon": 4.0, "epsilon_1": 1.0, "domain_size": 3}),
        ("l-osue", {"epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 2}),
        ("loloha", {"epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 6, "variant": "binary", "hash_prime": 7}),
        ("loloha", {"epsilon": 4.0, "epsilon_1": 2.0, "domain_size": 6, "hash_prime": 7}),
    ],
)
@pytest.mark.slow  # 0.63 CPU-s: a law checked from repeated draws
def test_the_over_time_check_holds_for_every_history(name, params):
    testing.check_reports_over_time(local.make(name, **params))


def test_the_bound_is_not_vacuous_for_two_keys():
    """For K = 2 keys the bound grows at eps_I / 2 per report, the exact loss's rate; it stays within 1.6x of it."""
    proto = local.make("l-grr", epsilon=1.0, epsilon_1=0.5, domain_size=2)
    for reports in (8, 10):
        exact = _exact_loss(proto, all_histories(2, reports))
        assert exact <= proto.epsilon_over_changes(reports) <= 1.6 * exact


# 6,000 devices per history are 2 CPU-s: every cell's expected count above 34 (the rarest cell has probability
# 0.0058)
@pytest.mark.slow  # a law checked from repeated draws
def test_the_real_client_samples_the_exact_joint_law():
    """The exact check is about the shipped client: MemoizedClient's reports of (0,1,0,1,...) follow the joint law.

    Statistic: the number of 1-reports on odd and on even days (T = 6), chi-square against the exact law
    at level 1e-6 (6,000 devices per history).
    """
    from scipy import stats

    proto = local.make("l-grr", epsilon=1.0, epsilon_1=0.5, domain_size=2)
    reports, devices = 6, 6000
    rng = np.random.default_rng(27)
    permanent, instantaneous = memo_channels(proto)
    for history in _constant_and_alternating(reports):
        law = np.exp(history_log_laws(permanent, instantaneous, np.array([history]))[0])
        sequences = np.array(list(itertools.product(range(2), repeat=reports)))
        cells = sequences[:, 0::2].sum(axis=1) * (reports // 2 + 1) + sequences[:, 1::2].sum(axis=1)
        expected = np.bincount(cells, weights=law, minlength=(reports // 2 + 1) ** 2) * devices
        observed = np.zeros_like(expected)
        for _ in range(devices):
            device = proto.client()
            outs = np.array([int(device.report(value, rng)) for value in history])
            observed[outs[0::2].sum() * (reports // 2 + 1) + outs[1::2].sum()] += 1
        keep = expected > 0
        p_value = stats.chisquare(observed[keep], expected[keep]).pvalue
        assert p_value > 1e-6, (history, p_value)


def test_guarantees_are_values_with_their_relation():
    proto = local.make("l-grr", epsilon=4.0, epsilon_1=1.0, domain_size=8)
    stable = proto.stable_guarantee
    assert (stable.epsilon, stable.neighbouring, stable.model) == (pytest.approx(4.0), "stable", "local")
    assert "unchanged" in stable.describe()
    over = proto.guarantee_over(16)
    assert over.neighbouring == "history" and over.reports == 16
    assert over.epsilon == pytest.approx(proto.epsilon_over_changes(16))
    assert over.epsilon > 8  # the docs' old example said 2 x eps_inf = 8 for a value that changes once
    assert "16 report(s)" in over.describe() and "histories" in over.describe()
    assert over.to_dict()["reports"] == 16
    # two memo streams on one device compose sequentially, reports add up
    both = sequential([over, proto.guarantee_over(4)])
    assert both.reports == 20 and both.epsilon == pytest.approx(over.epsilon + proto.epsilon_over_changes(4))
    with pytest.raises(InvalidParameterError, match="reports"):
        PrivacyGuarantee(1.0, 0.0, "history", "local")
    with pytest.raises(InvalidParameterError, match="'model' parameter of PrivacyGuarantee must be 'local' when neighbouring='stable'"):
        PrivacyGuarantee(1.0, 0.0, "stable", "central")


def test_dbitflippm_states_no_finite_bound_over_changes():
    proto = local.make("dbitflippm", epsilon=2.0, domain_size=4)
    assert proto.epsilon_over_changes(1) == pytest.approx(proto.epsilon_per_report)
    assert math.isinf(proto.epsilon_over_changes(2))
    with pytest.raises(InvalidParameterError, match="whether its value changed"):
        proto.guarantee_over(2)
    assert proto.stable_guarantee.epsilon == pytest.approx(proto.epsilon_longitudinal)


def test_epsilon_over_changes_checks_its_argument():
    proto = local.make("l-grr", epsilon=2.0, epsilon_1=1.0, domain_size=3)
    for bad in (0, -1, 1.5, "3", True):
        with pytest.raises(InvalidParameterError, match="reports"):
            proto.epsilon_over_changes(bad)
