"""Baselines of sec. II-B: histogram queries and adaptive quantiles."""

import numpy as np
import pytest

from dpdist import central
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError, InvalidValueTypeError, OutOfDomainError


def test_histogram_without_noise_is_the_exact_histogram():
    x = np.random.default_rng(0).normal(0, 1, 1000).clip(-4, 4)
    dist = central.histogram_queries(x, 1e12, (-4, 4), 16, rng=0)
    counts = np.histogram(x, bins=np.linspace(-4, 4, 17))[0]
    np.testing.assert_allclose(dist.probabilities, counts / counts.sum(), atol=1e-9)
    np.testing.assert_allclose(dist.edges, np.linspace(-4, 4, 17))


@pytest.mark.parametrize("neighbouring,sensitivity", [("replace", 2.0), ("add-remove", 1.0)])
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


def test_adaptive_quantiles_without_noise_recovers_the_ecdf_at_the_knots():
    x = np.random.default_rng(2).lognormal(0, 0.5, 2000).clip(0, 5)
    dist = central.adaptive_quantiles(x, 1e12, (0, 5), 40, rng=0)
    knots_x, knots_q = np.array(dist.details["knots"]["x"]), np.array(dist.details["knots"]["q"])
    ecdf = np.searchsorted(np.sort(x), knots_x, side="right") / x.size
    np.testing.assert_allclose(knots_q, ecdf, atol=1e-9)
    # the splits go where the mass is: every gap between consecutive knots is below 2 / (iterations + 1)
    assert np.max(np.diff(knots_q)) < 2 / 41


def test_adaptive_quantiles_budget_and_validity():
    x = np.random.default_rng(3).normal(0, 1, 1000).clip(-4, 4)
    dist = central.adaptive_quantiles(x, 0.5, (-4, 4), 50, rng=1)
    assert dist.details["budget"] == {"per_iteration": 0.01, "iterations": 50}
    assert dist.details["noise_scale"] == pytest.approx(2 / 0.01)
    assert np.all(dist.probabilities >= 0) and dist.bins == 1024
    secure = central.adaptive_quantiles(x, 0.5, (-4, 4), 10, secure=True)
    assert np.all(secure.probabilities >= 0)


@pytest.mark.parametrize(
    "function,kwargs,error",
    [
        ("histogram_queries", {"bins": 0}, InvalidParameterError),
        ("histogram_queries", {"epsilon": float("inf")}, InvalidPrivacyParameterError),
        ("histogram_queries", {"postprocess": "median"}, InvalidParameterError),
        ("histogram_queries", {"neighbouring": "swap"}, InvalidParameterError),
        ("histogram_queries", {"x": [[0.1]]}, InvalidValueTypeError),
        ("histogram_queries", {"x": ["a"]}, InvalidValueTypeError),
        ("adaptive_quantiles", {"iterations": 0}, InvalidParameterError),
        ("adaptive_quantiles", {"x": [-0.1], "clip": False}, OutOfDomainError),
        ("adaptive_quantiles", {"rng": -1}, InvalidParameterError),
    ],
)
def test_bad_input_raises_a_named_error(function, kwargs, error):
    count = "bins" if function == "histogram_queries" else "iterations"
    arguments = {"x": [0.2, 0.4], "epsilon": 1.0, "bounds": (0, 1), count: 4, "rng": 0}
    arguments.update(kwargs)
    with pytest.raises(error):
        getattr(central, function)(**arguments)


def test_clip_true_clips_without_releasing_how_many():
    dist = central.histogram_queries([-1.0, 0.5, 3.0], 1.0, (0, 1), 4, rng=0)  # clip=True is the default
    assert dist.cdf(1.0) == 1.0
    # the number of clipped values is an un-noised count of the data: never released
    assert "clipped" not in dist.details


def test_add_remove_histogram_does_not_release_the_number_of_records():
    dist = central.histogram_queries([0.1, 0.5, 0.7], 1.0, (0, 1), 4, rng=0, neighbouring="add-remove")
    assert dist.n is None
    assert central.histogram_queries([0.1, 0.5, 0.7], 1.0, (0, 1), 4, rng=0).n == 3


@pytest.mark.parametrize("bad", [123456.789, float("nan")])
def test_out_of_domain_errors_quote_no_record_and_no_count(bad):
    # a central release refuses bad data without printing a raw record or an un-noised count
    from dpdist import central

    x = np.concatenate([np.random.default_rng(0).random(50), [bad, bad, bad]])
    for release in (central.cdf, central.histogram_queries, central.adaptive_quantiles):
        with pytest.raises(OutOfDomainError, match="'x'") as error:  # the strict mode; the default clips
            release(x, 1.0, (0, 1), rng=0, clip=False)
        assert "123456" not in str(error.value) and "nan" not in str(error.value) and "3" not in str(error.value)
