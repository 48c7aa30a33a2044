"""What the mean protocols PM and SR share (dpdist.local.numerical._mean): an unbiased mean with the analytic
variance, and the two-phase variance of paper 003 sec. 6.3."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpdist import local
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError, OutOfDomainError


@pytest.mark.parametrize("name, params", [("pm", {"grid": 128}), ("sr", {}), ("pm", {"grid": 4})])
def test_mean_is_unbiased_with_the_analytic_variance(name, params):
    protocol = local.make(name, epsilon=1.0, bounds=(10.0, 20.0), **params)
    values = 10 + 10 * np.random.default_rng(1).beta(5, 2, 1000)
    rng = np.random.default_rng(2)
    repeats = 400
    estimates = np.array([protocol.estimate(protocol.simulate(values, rng=rng)).mean for _ in range(repeats)])
    variance = protocol.mean_variance(values)
    # 5 standard errors of the average of the repeats
    assert abs(estimates.mean() - values.mean()) < 5 * math.sqrt(variance / repeats)
    # chi-square bounds on the sample variance at two-sided level 1e-6
    low, high = (stats.chi2.ppf(q, repeats - 1) / (repeats - 1) for q in (5e-7, 1 - 5e-7))
    assert low < estimates.var(ddof=1) / variance < high
    # the estimate's own variance (from the report histogram) is close to the exact one
    single = protocol.estimate(protocol.simulate(values, rng=rng))
    assert 0.8 < single.variance / variance < 1.25


@pytest.mark.parametrize("name", ["pm", "sr"])
def test_two_phase_variance(name):
    protocol = local.make(name, epsilon=2.0, bounds=(-1.0, 3.0), **({"grid": 256} if name == "pm" else {}))
    values = -1 + 4 * np.random.default_rng(3).beta(5, 2, 20_000)
    rng = np.random.default_rng(4)
    runs = [protocol.estimate_mean_variance(values, rng=rng) for _ in range(60)]
    for run in runs:
        assert run.mean_estimate.n == 10_000 and run.deviation_estimate.n == 10_000
        assert run.deviation_estimate.bounds == (0.0, max(3 - run.center, run.center + 1) ** 2)
    # E[var] = E[mean of (x - c)^2 over the phase-2 half] = sigma^2 + E[(mu - c)^2]: the paper's
    # estimator targets the spread around the broadcast centre.  Over 60 runs, 5 standard errors.
    targets = np.array([np.mean((values - run.center) ** 2) for run in runs])
    estimates = np.array([run.var for run in runs])
    errors = estimates - targets
    assert abs(errors.mean()) < 5 * errors.std(ddof=1) / math.sqrt(len(runs))
    # the reported standard error describes the spread of the phase-2 noise (within 30%)
    reported = np.mean([run.var_standard_error for run in runs])
    assert 0.7 < errors.std(ddof=1) / reported < 1.3
    # median over the runs within 10% of the true 0.41 (one run's sd is ~0.045, so the median's
    # standard error is ~0.008: the bound is 5 of them)
    assert abs(np.median(estimates) - values.var()) < 0.1 * values.var()


def test_deviation_protocol_and_argument_errors():
    protocol = local.make("pm", epsilon=1.0, bounds=(0.0, 10.0), grid=32)
    second = protocol.deviation_protocol(7.0)
    assert second.bounds == (0.0, 49.0) and second.params["grid"] == 32 and second.epsilon == 1.0
    assert protocol.deviation_protocol(-5.0).bounds == (0.0, 100.0)  # centre clipped into bounds
    with pytest.raises(InvalidParameterError, match="mean_fraction"):
        protocol.estimate_mean_variance([1.0, 2.0, 3.0], rng=0, mean_fraction=1.0)
    with pytest.raises(InvalidParameterError, match="values"):
        protocol.estimate_mean_variance([1.0], rng=0)
    with pytest.raises(OutOfDomainError, match="values"):
        protocol.estimate_mean_variance([1.0, 11.0], rng=0, clip=False)
    with pytest.raises(InvalidPrivacyParameterError, match="epsilon"):
        local.make("sr", epsilon=0.0)
    with pytest.raises(InvalidParameterError, match="grid"):
        local.make("pm", epsilon=1.0, grid=1)
