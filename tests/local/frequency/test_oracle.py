"""What every frequency oracle shares (dpdist.local.frequency._oracle): the estimate from reports or from the
aggregate, post-processing and significance options, the simulation's fast path."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError
from dpdist import metrics

#: the domain, population and budget of the estimation options' tests
D, N, EPSILON = 64, 100_000, 1.0


def test_estimate_from_reports_equals_estimate_from_aggregator():
    protocol = local.make("oue", epsilon=2.0, domain_size=30)
    reports = protocol.privatize(np.random.default_rng(1).integers(0, 30, 5000), rng=2)
    from_reports = protocol.estimate(reports)
    from_aggregator = protocol.estimate(protocol.aggregator().add(reports))
    np.testing.assert_array_equal(from_reports.frequencies, from_aggregator.frequencies)


@pytest.mark.parametrize("method", ["clip", "clip-normalize", "norm", "norm-sub", "base-pos", "simplex"])
def test_postprocessing_options(method):
    protocol = local.make("grr", epsilon=1.0, domain_size=50)
    values = np.random.default_rng(0).zipf(2.0, 3000) % 50
    estimate = protocol.estimate(protocol.simulate(values, rng=1), postprocess=method)
    assert estimate.postprocess == method
    if method in ("clip-normalize", "norm", "norm-sub", "simplex"):
        assert estimate.frequencies.sum() == pytest.approx(1.0)
    if method != "norm":
        assert estimate.frequencies.min() >= 0


def test_significance_threshold_zeroes_items_below_eq6_of_paper_001():
    protocol = local.make("oue", epsilon=1.0, domain_size=100)
    values = np.zeros(10_000, dtype=int)  # all mass on item 0
    estimate = protocol.estimate(protocol.simulate(values, rng=3), significance=0.05)
    threshold = estimate.details["significance_threshold"]
    # eq. 6: Phi^-1(1 - alpha/d) * sqrt(Var*), Var* = q(1-q) / (n (p-q)^2)
    p, q = protocol.support_probabilities()
    expected = 3.2905267314919255 * math.sqrt(q * (1 - q) / (10_000 * (p - q) ** 2))
    assert threshold == pytest.approx(expected, rel=1e-9)
    assert estimate.frequencies[0] > 0.9
    assert np.all((estimate.frequencies[1:] == 0) | (estimate.frequencies[1:] >= threshold))


def test_estimate_rejects_unknown_options_and_bad_significance():
    protocol = local.make("grr", epsilon=1.0, domain_size=5)
    aggregator = protocol.simulate([0, 1, 2], rng=0)
    with pytest.raises(InvalidParameterError, match="unknown option"):
        protocol.estimate(aggregator, smoothing=True)
    with pytest.raises(InvalidParameterError, match="significance"):
        protocol.estimate(aggregator, significance=1.5)
    with pytest.raises(InvalidParameterError, match="postprocess"):
        protocol.estimate(aggregator, postprocess="magic")


def test_simulate_is_fast_path_for_large_n():
    # O(d) aggregate sampling: 10^6 users with d = 8 must give exact counts summing to n
    protocol = local.make("grr", epsilon=1.0, domain_size=8)
    aggregator = protocol.simulate(np.zeros(1_000_000, dtype=np.int32), rng=0)
    assert aggregator.n == 1_000_000 and aggregator.statistic.sum() == 1_000_000


PROTOCOLS = ["sue", "olh", "hr", "ss"]


def _population():
    truth = np.full(D, 0.3 / (D - 4))
    truth[[3, 17, 40, 63]] = [0.3, 0.2, 0.12, 0.08]
    counts = np.round(truth * N).astype(int)
    counts[0] += N - counts.sum()
    return np.repeat(np.arange(D), counts), counts / N


def _aggregate(protocol, values):
    return protocol.simulate(values, rng=8)


@functools.cache
def _campaign(name):
    """The protocol and its aggregate of the shared population, built once per protocol (the 14 tests below read
    it only: estimating never changes an aggregator)."""
    protocol = local.make(name, epsilon=EPSILON, domain_size=D)
    return protocol, _aggregate(protocol, _population()[0])


@pytest.mark.parametrize("name", PROTOCOLS)
@pytest.mark.parametrize("postprocess", ["clip", "norm", "norm-sub", "base-pos", "simplex", "clip-normalize"])
def test_postprocessed_estimates_are_consistent(name, postprocess):
    protocol, aggregator = _campaign(name)
    _, truth = _population()
    raw = protocol.estimate(aggregator)
    processed = protocol.estimate(aggregator, postprocess=postprocess)
    assert processed.postprocess == postprocess
    if postprocess in ("norm-sub", "simplex", "clip-normalize"):
        assert np.all(processed.frequencies >= 0) and processed.frequencies.sum() == pytest.approx(1.0)
    if postprocess == "norm":
        assert processed.frequencies.sum() == pytest.approx(1.0)
    # post-processing only uses the estimate: it cannot move a consistent estimate far
    assert metrics.l1(processed, truth) <= metrics.l1(raw, truth) + 0.2


@pytest.mark.parametrize("name", PROTOCOLS)
def test_heavy_hitters_are_found_without_false_positives(name):
    protocol, aggregator = _campaign(name)
    _, truth = _population()
    estimate = protocol.estimate(aggregator, significance=0.05, postprocess="clip")
    # threshold 0.05: heavy items have f >= 0.08 and the rest f <= 0.006; the standard error is
    # below 0.01 for every protocol here, so each side is > 3 standard errors from the threshold
    assert np.sqrt(protocol.variance(N)[0]) < 0.01
    counts = metrics.true_false_positives(estimate, truth, 0.05)
    assert counts == (4, 0)


@pytest.mark.parametrize("name", PROTOCOLS)
def test_significance_threshold_zeroes_the_estimates_below_it(name):
    protocol, aggregator = _campaign(name)
    estimate = protocol.estimate(aggregator, significance=0.05)
    threshold = estimate.details["significance_threshold"]
    kept = estimate.frequencies[estimate.frequencies != 0]
    assert np.all(kept >= threshold) and 0 < threshold < 0.1
