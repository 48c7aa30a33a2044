"""Estimation options shared by the new oracles: post-processing, significance, heavy hitters."""

import numpy as np
import pytest

from dpdist import local, metrics

PROTOCOLS = ["sue", "olh", "hr", "ss"]
D, N, EPSILON = 64, 100_000, 1.0


def _population():
    truth = np.full(D, 0.3 / (D - 4))
    truth[[3, 17, 40, 63]] = [0.3, 0.2, 0.12, 0.08]
    counts = np.round(truth * N).astype(int)
    counts[0] += N - counts.sum()
    return np.repeat(np.arange(D), counts), counts / N


def _aggregate(protocol, values):
    return protocol.simulate(values, rng=8)


@pytest.mark.parametrize("name", PROTOCOLS)
@pytest.mark.parametrize("postprocess", ["clip", "norm", "norm-sub", "base-pos", "simplex", "clip-normalize"])
def test_postprocessed_estimates_are_consistent(name, postprocess):
    protocol = local.make(name, epsilon=EPSILON, domain_size=D)
    values, truth = _population()
    aggregator = _aggregate(protocol, values)
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
    protocol = local.make(name, epsilon=EPSILON, domain_size=D)
    values, truth = _population()
    estimate = protocol.estimate(_aggregate(protocol, values), significance=0.05, postprocess="clip")
    # threshold 0.05: heavy items have f >= 0.08 and the rest f <= 0.006; the standard error is
    # below 0.01 for every protocol here, so each side is > 3 standard errors from the threshold
    assert np.sqrt(protocol.variance(N)[0]) < 0.01
    counts = metrics.true_false_positives(estimate, truth, 0.05)
    assert counts == (4, 0)


@pytest.mark.parametrize("name", PROTOCOLS)
def test_significance_threshold_zeroes_the_estimates_below_it(name):
    protocol = local.make(name, epsilon=EPSILON, domain_size=D)
    values, _ = _population()
    estimate = protocol.estimate(_aggregate(protocol, values), significance=0.05)
    threshold = estimate.details["significance_threshold"]
    kept = estimate.frequencies[estimate.frequencies != 0]
    assert np.all(kept >= threshold) and 0 < threshold < 0.1
