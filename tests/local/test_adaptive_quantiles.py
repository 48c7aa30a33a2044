"""Adaptive multi-round LDP quantiles: the per-round randomizer and the whole search."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError
from dpdist.local import AdaptiveQuantiles, adaptive_quantiles


def _rank_error(x, values, q):
    return np.abs(np.searchsorted(np.sort(x), values, side="right") / x.size - q)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_the_round_randomizer_channel_is_exactly_epsilon_ldp(epsilon):
    protocol = local.make("threshold", epsilon=epsilon, bounds=(0.0, 8.0), grid_size=8, cuts=[2, 5, 7])
    values = np.arange(8) + 0.5  # one value per cell: every distinct row of the channel
    channel = protocol.channel(values)
    p = protocol.keep_probability
    assert p / (1 - p) <= np.exp(epsilon) and p / (1 - p) > np.exp(epsilon) * (1 - 1e-12)
    assert np.allclose(channel.sum(axis=1), 1.0)
    below = np.floor(values)[:, None] < np.array([2, 5, 7])[None, :]
    assert np.array_equal(channel[:, 1::2], np.where(below, p, 1 - p) / 3)  # bit 1 on cut j
    assert np.array_equal(channel[:, 0::2], np.where(below, 1 - p, p) / 3)
    ratios = channel.max(axis=0) / channel.min(axis=0)
    assert ratios.max() <= np.exp(epsilon)
    assert protocol.guarantee.model == "local" and protocol.guarantee.epsilon == epsilon


def test_cuts_are_checked():
    with pytest.raises(InvalidParameterError, match="'cuts'"):
        local.make("threshold", epsilon=1.0, grid_size=8, cuts=[3, 2])
    with pytest.raises(InvalidParameterError, match=r"The 'cuts' parameter of THRESHOLD must be all below 'grid_size' = 8 \(cuts lie in \[1, grid_size - 1\]\)\. Got \(8,\) instead"):
        local.make("threshold", epsilon=1.0, grid_size=8, cuts=[8])
    assert local.make("threshold", epsilon=1.0, grid_size=8).cuts == (4,)


def test_round_estimate_debiases_each_cut_within_its_standard_error():
    """Each cut's fraction is unbiased with the plug-in variance: 6 per-cut z-scores all within 4 (seeded)."""
    protocol = local.make("threshold", epsilon=1.0, bounds=(0.0, 1.0), grid_size=100, cuts=[10, 30, 50, 70, 90, 95])
    rng = np.random.default_rng(3)
    x = rng.beta(2, 5, 60_000)
    details = protocol.estimate(protocol.simulate(x, rng=4)).details
    truth = np.array([np.mean(x < c / 100) for c in protocol.cuts])
    z = (np.array(details["cdf"]) - truth) / np.sqrt(details["variance"])
    assert np.all(np.abs(z) < 4), z


def test_rounds_use_disjoint_groups_and_ask_inside_the_brackets():
    plan = AdaptiveQuantiles([0.5], epsilon=1.0, bounds=(0.0, 1.0), rounds=3, grid_size=256)
    sizes = plan.group_sizes(6001)
    assert sizes.sum() == 6001 and list(sizes) == sorted(sizes)
    x = np.random.default_rng(0).uniform(size=60_000)
    first = plan.protocol(0, [])
    assert plan.first_splits == 15 and first.cuts == tuple(range(16, 256, 16))  # 16 x 4 x 4 = 256: single cells
    history = [first.simulate(x[:10_000], rng=1)]
    (a, b), = plan.brackets(history)
    # a search bracket: from a cut confidently below 1/2 to one confidently above, on round 1's cuts (every 16 cells).
    # A cut's SE is 0.5 / (2p - 1) / sqrt(667) = 0.042 in rank, 11 cells: each end lies within 2 SE of the margin
    # plus up to 2 SE of noise plus one spacing of the median, 4 x 11 + 16 = 60 cells
    assert a % 16 == 0 and b % 16 == 0 and a < 128 < b and b - a <= 2 * 60
    second = plan.protocol(1, history)
    assert second.round == 2 and set(second.cuts) <= set(range(a, b + 1)) and {a, b} <= set(second.cuts)
    with pytest.raises(InvalidParameterError, match="round 2 needs the aggregates of the 2 round"):
        plan.protocol(2, history)


def test_end_to_end_median_and_deciles_within_the_variance_bound():
    """Rank error of the median below 4 standard errors of one last-round cut's fraction, and each decile's
    released interval (simultaneous, 95%) covers its true quantile (seeded: one fixed draw)."""
    rng = np.random.default_rng(7)
    x = rng.lognormal(0.0, 1.0, 100_000).clip(0, 20)
    plan = AdaptiveQuantiles(np.arange(1, 10) / 10, epsilon=1.0, bounds=(0.0, 20.0))
    release = plan.run(x, rng=8)
    p = plan.protocol(0, []).keep_probability
    last = plan.group_sizes(x.size)[-1] / (plan.q.size * (plan.splits + 2))  # reports on one cut of the last round
    standard_error = 0.5 / (2 * p - 1) / np.sqrt(last)
    assert np.all(_rank_error(x, release.values, plan.q) < 4 * standard_error)
    truth = np.quantile(x, plan.q)
    assert np.all((release.low <= truth) & (truth <= release.high))
    assert np.all(np.diff(release.values) >= 0)
    median = adaptive_quantiles(x, [0.5], epsilon=1.0, bounds=(0.0, 20.0), rng=9)
    assert _rank_error(x, median.values, [0.5])[0] < 4 * 0.5 / (2 * p - 1) / np.sqrt(plan.group_sizes(x.size)[-1] / 5)
    assert median.guarantee.epsilon == 1.0 and median.guarantee.model == "local" and median.method == "adaptive"


def test_a_history_with_a_round_repeated_skipped_or_out_of_order_is_refused():
    x = np.random.default_rng(3).lognormal(0.0, 1.0, 4_000).clip(0, 20)
    plan = AdaptiveQuantiles([0.5], epsilon=1.0, bounds=(0.0, 20.0), rounds=3)
    history = []
    for index, size in enumerate(plan.group_sizes(x.size)):
        protocol = plan.protocol(index, history)
        history.append(protocol.aggregator().add(protocol.privatize(x[:size], rng=index)))
    plan.estimate(history)
    for bad, rounds in [([*history, history[-1]], "[1, 2, 3, 3]"), ([history[0], history[2]], "[1, 3]"),
                        ([history[1], history[0]], "[2, 1]")]:
        with pytest.raises(InvalidParameterError, match=re.escape(f"Got the rounds {rounds}")):
            plan.estimate(bad)


@pytest.mark.slow
def test_the_deciles_intervals_hold_together_at_their_level_when_few_users_answer():
    """At n = 1,000 a cut is asked of a few dozen users: the intervals of the nine deciles hold together in at least
    95% of runs (the data's own deciles).  Under that level the runs holding all nine are Binomial(200, >= 0.95);
    the test fails below its 1e-6 quantile, 173 (normal bounds with a plug-in variance held 165 of 200 here)."""
    q = np.arange(1, 10) / 10
    held = 0
    for run in range(200):
        x = np.random.default_rng(1000 + run).lognormal(10, 0.8, 1_000).clip(0, 300_000)
        release = adaptive_quantiles(x, q, epsilon=2.0, bounds=(0.0, 300_000.0), rng=run)
        truth = np.quantile(x, q, method="inverted_cdf")
        held += bool(np.all((release.low <= truth) & (truth <= release.high)))
    assert held >= 173


@pytest.mark.parametrize("kwargs, match", [
    ({"q": [0.0]}, "'q'"), ({"q": [1.5]}, "'q'"), ({"rounds": 0}, "'rounds'"), ({"epsilon": -1.0}, "'epsilon'"),
    ({"bounds": (1.0, 0.0)}, "'bounds'"), ({"splits": 0}, "'splits'"),
])
def test_bad_plans_are_refused_naming_the_argument(kwargs, match):
    arguments = {"q": [0.5], "epsilon": 1.0, "bounds": (0.0, 1.0), **kwargs}
    with pytest.raises(InvalidParameterError, match=match):
        AdaptiveQuantiles(arguments.pop("q"), **arguments)


def test_plan_config_round_trip_and_refusals():
    plan = AdaptiveQuantiles([0.1, 0.5], epsilon=2.0, bounds=(0.0, 5.0), rounds=3)
    assert AdaptiveQuantiles.from_config(plan.config()).config() == plan.config()
    with pytest.raises(InvalidParameterError, match=r"'config' parameter of AdaptiveQuantiles.from_config must be an adaptive quantile plan .* with the keys \['q', 'epsilon', 'bounds'\].*Got a dict with the keys \['epsilon', 'q'\]"):
        AdaptiveQuantiles.from_config({"q": [0.5], "epsilon": 1.0})
    with pytest.raises(InvalidParameterError, match="no round has reports"):
        plan.estimate([])
    other = local.make("threshold", epsilon=1.0, bounds=(0.0, 5.0))
    with pytest.raises(InvalidParameterError, match="'threshold' protocol with this plan's"):
        plan.estimate([other.simulate([1.0, 2.0], rng=0)])


def test_a_round_estimate_with_unanswered_cuts_is_json_safe():
    import json

    protocol = local.make("threshold", epsilon=1.0, grid_size=16, cuts=[2, 5, 9, 12])
    estimate = protocol.estimate(protocol.simulate([0.1, 0.2, 0.7], rng=0))  # 3 users: some cuts get no report
    assert None in estimate.details["cdf"] and len(estimate.details["reports"]) == 4
    json.dumps(estimate.to_dict(), allow_nan=False)
    assert np.isclose(estimate.probabilities.sum(), 1.0)
