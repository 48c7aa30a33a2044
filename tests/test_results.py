"""The result contract: every estimate meets dpdist.estimates.Estimate, and protocols keep class settings."""

from __future__ import annotations

import numpy as np
import pytest

from dpdist import central, local
from dpdist.estimates import Distribution, Estimate, FrequencyEstimate, MeanEstimate, MeanVarianceEstimate
from dpdist.local.numerical.binning import Binning
from dpdist.local.numerical.sw import SquareWave

X = np.random.default_rng(0).beta(2, 5, size=2000)


def _local_estimate(name):
    if name in local.available("frequency"):
        protocol = local.make(name, epsilon=2.0, domain_size=6)
        values = np.random.default_rng(1).integers(0, 6, 2000)
    else:
        protocol = local.make(name, epsilon=2.0)
        values = X
    return protocol.estimate(protocol.aggregator().add(protocol.privatize(values, rng=2)))


def _mean_variance():
    protocol = local.make("pm", epsilon=1.0)
    mean = protocol.estimate(protocol.simulate(X[:1000], rng=1))
    deviation_protocol = protocol.deviation_protocol(mean.mean)
    deviation = deviation_protocol.estimate(deviation_protocol.simulate((X[1000:] - mean.mean) ** 2, rng=2))
    return MeanVarianceEstimate(mean.mean, deviation.mean, mean.mean, mean, deviation)


RESULTS = {
    "frequency": lambda: _local_estimate("oue"),
    "distribution (local)": lambda: _local_estimate("sw"),
    "mean": lambda: _local_estimate("pm"),
    "mean and variance": _mean_variance,
    "distribution (central)": lambda: central.histogram_queries(X, 1.0, (0.0, 1.0), 16, rng=0),
}


@pytest.mark.parametrize("kind", RESULTS)
def test_every_estimate_meets_the_result_protocol(kind):
    result = RESULTS[kind]()
    assert isinstance(result, Estimate)
    assert isinstance(result.method, str) and result.epsilon > 0 and isinstance(result.details, dict)
    assert result.guarantee is not None and result.guarantee.epsilon == pytest.approx(result.epsilon)
    summary = result.summary()
    assert summary and all(isinstance(k, str) and np.isfinite(v) for k, v in summary.items())
    columns = result.table()
    lengths = {np.asarray(c).shape for c in columns.values()}
    assert len(lengths) == 1 and len(next(iter(lengths))) == 1, lengths


def test_summaries_hold_the_headline_numbers():
    frequency = RESULTS["frequency"]()
    items, shares = frequency.top_k(5)
    assert list(frequency.summary().values()) == list(shares)
    assert list(frequency.summary()) == [f"item {i}" for i in items]
    assert frequency.method == frequency.protocol == "oue"
    distribution = RESULTS["distribution (central)"]()
    assert distribution.summary() == {
        "mean": distribution.mean(), "std": np.sqrt(distribution.var()), "median": float(distribution.quantile(0.5))
    }
    np.testing.assert_array_equal(distribution.table()["cdf"], distribution.cumulative[1:])
    mean = RESULTS["mean"]()
    assert mean.summary() == {"mean": mean.mean, "standard_error": mean.standard_error}
    both = RESULTS["mean and variance"]()
    assert both.summary()["var"] == both.var and both.details["n_mean"] == 1000


def test_a_non_estimate_does_not_meet_the_protocol():
    assert not isinstance(np.zeros(3), Estimate)
    assert not isinstance({"method": "x"}, Estimate)


# ---------------------------------------------------------------------- class-level settings
def test_instances_do_not_overwrite_class_level_settings():
    continuous = SquareWave(epsilon=1.0, bins=8)
    discrete = SquareWave(epsilon=1.0, bins=8, discrete=True)
    assert discrete.tags.exact_simulate and not continuous.tags.exact_simulate
    assert SquareWave.tags.exact_simulate is False and SquareWave.tags.kind == "numerical"
    for protocol in (continuous, discrete):
        assert "tags" not in vars(protocol) and "statistic_dtype" not in vars(protocol)
    binning = Binning(epsilon=1.0, bins=8, oracle="oue")
    assert binning.statistic_dtype == binning.oracle.statistic_dtype
    assert "statistic_dtype" not in vars(binning)
    hierarchy = local.make("hh", epsilon=1.0, bins=8, branching=2)
    assert "statistic_dtype" not in vars(hierarchy) and hierarchy.statistic_dtype in (np.int64, np.float64)
    assert local.available("numerical").count("sw") == 1
