"""The limits of a share's interval (dpdist.estimates._intervals.share_limits): in [0, 1], never of zero width, and
covering as often as the interval before them; every frequency protocol's intervals at epsilon 0.5-4 (slow)."""

from __future__ import annotations

import numpy as np
import pytest

from dpdist import local
from dpdist.estimates._intervals import share_limits


def test_an_interval_below_zero_keeps_its_half_width_and_one_inside_stays():
    low, high = share_limits([-0.30, -0.05, 0.10, 0.95, 1.2, -np.inf], [-0.10, 0.05, 0.20, 1.15, 1.4, np.inf])
    np.testing.assert_allclose(low, [0.0, 0.0, 0.10, 0.9, 0.9, -np.inf])
    np.testing.assert_allclose(high, [0.10, 0.05, 0.20, 1.0, 1.0, np.inf])
    # wholly below 0 it was [0, 0] when clipped alone: a certainty no noisy estimate has
    assert np.all((high - low)[:5] > 0)


def test_the_limits_cover_at_least_as_often_as_the_interval_before_them():
    # c ~ N(p, s^2), the interval c +- 1.96 s, at shares from 0 to 4 s: the limits cover wherever it covers
    rng = np.random.default_rng(7)
    s, half = 0.01, 1.959964 * 0.01
    for p in (0.0, 0.002, 0.01, 0.02, 0.04):
        c = p + s * rng.standard_normal(200_000)
        before = (c - half <= p) & (p <= c + half)
        low, high = share_limits(c - half, c + half)
        after = (low <= p) & (p <= high)
        assert np.all(after[before]) and np.all(high - low > 0)
        assert after.mean() >= before.mean()


def _shares(k: int) -> np.ndarray:
    """Eight items, two of them rare (1.1% and 0.5%: where CP's interval was [0, 0] in 3 of 480 item-runs)."""
    shares = np.array([0.35, 0.22, 0.15, 0.1, 0.08, 0.054, 0.011, 0.005])
    return shares[:k] / shares[:k].sum()


@pytest.mark.slow  # 19 protocols x 4 epsilons x 20 collections of 20,000 reports: about 40 CPU-s
@pytest.mark.parametrize("name", local.available("frequency"))
def test_no_frequency_protocol_releases_a_zero_width_interval_for_an_item_present(name):
    k, n = 8, 20_000
    shares = _shares(k)
    extra = {"epsilon_1": None} if "epsilon_1" in local.parameter_names(name) else {}
    for epsilon in (0.5, 1.0, 2.0, 4.0):
        options = {key: epsilon / 2 for key in extra}
        protocol = local.make(name, epsilon=epsilon, domain_size=k, **options)
        for run in range(20):
            rng = np.random.default_rng([run, int(epsilon * 10)])
            values = rng.permutation(np.repeat(np.arange(k), rng.multinomial(n, shares)))
            estimate = protocol.estimate(protocol.simulate(values, rng=rng))
            if not estimate.has_intervals:  # no interval at all ((-inf, inf)), and the reason says why
                assert estimate.details.get("no_interval"), name
                continue
            low, high = estimate.confidence_interval(0.95)
            assert np.all(high - low > 0), (name, epsilon, run, low, high)
