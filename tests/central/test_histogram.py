"""Histogram queries, the baseline of sec. II-B (dpdist.central.histogram)."""

import numpy as np
import pytest

from dpdist import central


def test_histogram_without_noise_is_the_exact_histogram():
    x = np.random.default_rng(0).normal(0, 1, 1000).clip(-4, 4)
    dist = central.histogram_queries(x, 1e12, (-4, 4), 16, rng=0)
    counts = np.histogram(x, bins=np.linspace(-4, 4, 17))[0]
    np.testing.assert_allclose(dist.probabilities, counts / counts.sum(), atol=1e-9)
    np.testing.assert_allclose(dist.edges, np.linspace(-4, 4, 17))


@pytest.mark.parametrize("neighbouring,sensitivity", [("replace", 2.0), ("add-remove", 1.0)])
@pytest.mark.slow  # 0.28 CPU-s: a noise scale from 300 releases
def test_histogram_noise_matches_the_laplace_scale(neighbouring, sensitivity):
    x = np.full(10_000, 0.5)
    epsilon, runs = 1.0, 300
    b = sensitivity / epsilon
    releases = [central.histogram_queries(x, epsilon, (0, 4), 4, rng=s, neighbouring=neighbouring) for s in range(runs)]
    assert releases[0].details["noise_scale"] == b
    # all data in bin 0; after "clip" the 3 empty bins keep S = sum of max(Laplace(b), 0), so 1 - p0 ~ S / n.
    # E[max(L, 0)] = b / 2 and Var[max(L, 0)] = b^2 - b^2 / 4, hence E[S] = 3b/2 and Var[S] = 9 b^2 / 4
    mass_outside = np.array([1 - r.probabilities[0] for r in releases])
    standard_error = np.sqrt(9 * b * b / 4) / x.size / np.sqrt(runs)
    assert abs(mass_outside.mean() - 1.5 * b / x.size) < 5 * standard_error


@pytest.mark.parametrize("postprocess", ["clip", "norm-sub", "isotonic"])
@pytest.mark.parametrize("secure", [False, True])
def test_histogram_outputs_a_valid_cdf(postprocess, secure):
    x = np.random.default_rng(1).beta(10, 2, 500)
    rng = None if secure else 3
    dist = central.histogram_queries(x, 0.1, (0, 1), 40, rng=rng, secure=secure, postprocess=postprocess)
    assert np.all(dist.probabilities >= 0) and dist.cumulative[-1] == 1
    assert dist.details["budget"] == {"histogram": 0.1} and dist.details["secure"] is secure


def test_histogram_secure_counts_are_integers():
    from dpdist._rng import check_rng
    from dpdist.central.noise import laplace_mechanism

    noisy = laplace_mechanism(
        np.array([10.0, 0.0, 5.0]), 2.0, 0.5, check_rng(None, secure=True), integer_valued=True
    )
    assert np.all(noisy == np.round(noisy))


