"""General wave ``gw`` (paper 003, Def. 5.1, sec. 6.4): trapezoid and triangle waves.

Statistical tests are seeded; each states its tolerance and why.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpdist import local
from dpdist.errors import InvalidParameterError, OutOfDomainError
from dpdist.local.numerical._wave_shape import WaveShape, mutual_information_b

SHAPES = [{"shape": "triangle"}] + [{"shape": "trapezoid", "ratio": r} for r in (0.2, 0.4, 0.6, 0.8)]


def max_log_ratio(matrix: np.ndarray, axis: int) -> float:
    return float(np.max(np.log(matrix.max(axis=axis)) - np.log(matrix.min(axis=axis))))


def wasserstein_to_beta(dist, a=5.0, b=2.0) -> float:
    grid = np.linspace(0.0, 1.0, 20_001)
    return float(np.mean(np.abs(dist.cdf(grid) - stats.beta.cdf(grid, a, b))))


@pytest.mark.parametrize("ratio", [0.0, 0.2, 0.5, 0.8, 1.0])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_wave_satisfies_definition_5_1(ratio, epsilon):
    b = mutual_information_b(epsilon)
    shape = WaveShape(epsilon, b, ratio)
    e = math.exp(epsilon)
    # the weight is drawn on the 2^-53 grid, the largest with peak <= e^eps q for a peak width shrunk
    # by 2^-30 (WaveShape): q and the peak are the paper's within 1e-8, the ratio never above e^eps
    assert shape.q == pytest.approx(1 / (1 + 2 * b + (e - 1) * b * (1 + ratio)), rel=1e-8)
    # (1) W = q outside [-b, b]; q <= W <= e^eps q everywhere; the peak reaches e^eps q
    z = np.linspace(-1.5, 1.5, 30_001)
    density = shape.density(z)
    np.testing.assert_allclose(density[np.abs(z) > b], shape.q, rtol=1e-13)
    assert density.min() >= shape.q * (1 - 1e-13) and density.max() <= e * shape.q * (1 + 1e-13)
    assert e * shape.q * (1 - 1e-8) <= shape.peak <= e * shape.q
    # (2) the integral over [-b, b] is 1 - q (adaptive quadrature with the kinks as break points)
    a1, a2 = shape.half_widths
    kinks = sorted({-b, -(a1 - a2), a1 - a2, b})
    total = sum(integrate.quad(shape.density, lo, hi, epsabs=1e-13)[0] for lo, hi in zip(kinks[:-1], kinks[1:]))
    assert total == pytest.approx(1 - shape.q, abs=1e-10)
    # flat top of width 2 r b at the peak (e^eps q up to the grid rounding above); linear sides
    top = np.abs(z) < ratio * b * (1 - 1e-9)
    np.testing.assert_allclose(density[top], shape.peak, rtol=1e-12)
    side = (np.abs(z) > ratio * b + 1e-9) & (np.abs(z) < b - 1e-9)
    expected = shape.q + (shape.peak - shape.q) * (b - np.abs(z[side])) / (b - ratio * b)
    np.testing.assert_allclose(density[side], expected, rtol=1e-10)


def test_bump_cdf_and_its_integral_are_consistent():
    shape = WaveShape(1.0, 0.3, 0.4)
    x = np.linspace(-0.5, 0.5, 2001)
    # G is the integral of the bump, K the integral of G (trapezoid rule on a fine grid)
    bump = (shape.density(x) - shape.q) / shape.weight
    np.testing.assert_allclose(shape.bump_cdf(x), integrate.cumulative_trapezoid(bump, x, initial=0), atol=1e-6)
    np.testing.assert_allclose(
        shape.bump_cdf_integral(x), integrate.cumulative_trapezoid(shape.bump_cdf(x), x, initial=0), atol=1e-6
    )
    np.testing.assert_allclose(shape.bump_cdf_integral(np.array([0.31, 2.0])), [0.31, 2.0], rtol=1e-15)


@pytest.mark.parametrize("params", SHAPES, ids=lambda p: f"{p['shape']}-{p.get('ratio')}")
@pytest.mark.parametrize("bins, output_bins", [(2, 3), (7, 13), (64, 100), (100, 37), (512, 512)])
def test_channel_and_transition_matrix_are_exact_and_epsilon_ldp(params, bins, output_bins):
    epsilon = 1.0
    protocol = local.make("gw", epsilon=epsilon, bins=bins, output_bins=output_bins, **params)
    inputs = np.concatenate([[0.0, 0.5, 1.0], np.random.default_rng(0).uniform(0, 1, 30)])
    channel = protocol.channel(inputs)
    np.testing.assert_allclose(channel.sum(axis=1), 1.0, atol=1e-12)
    q_mass = protocol._mechanism.shape.q * protocol._mechanism.width
    assert channel.min() >= q_mass * (1 - 1e-12)  # every bucket reachable from every input
    assert max_log_ratio(channel, axis=0) <= epsilon * (1 + 1e-12)
    matrix = protocol.transition_matrix()
    np.testing.assert_allclose(matrix.sum(axis=0), 1.0, atol=1e-9)
    assert matrix.min() > 0 and max_log_ratio(matrix, axis=1) <= epsilon * (1 + 1e-9)


@pytest.mark.parametrize("params", [SHAPES[0], SHAPES[2]], ids=["triangle", "trapezoid-0.4"])
def test_matrix_averages_the_channel_and_privatize_samples_it(params):
    protocol = local.make("gw", epsilon=1.5, bins=4, output_bins=10, **params)
    points = (np.arange(4000) + 0.5) / 4000
    for i in range(4):  # column i = channel averaged over bin i (midpoint rule, error ~1e-7)
        np.testing.assert_allclose(
            protocol.transition_matrix()[:, i], protocol.channel((i + points) / 4).mean(axis=0), atol=1e-6
        )
    for value in (0.0, 0.41, 1.0):
        reports = protocol.privatize(np.full(100_000, value), rng=4)
        result = stats.chisquare(np.bincount(reports, minlength=10), 100_000 * protocol.channel([value])[0])
        assert result.pvalue > 1e-6 / 3  # level 1e-6, Bonferroni over 3 inputs


@pytest.mark.parametrize("params", [SHAPES[0], SHAPES[3]], ids=["triangle", "trapezoid-0.6"])
def test_ems_recovers_beta_5_2(params):
    # Tolerance as for sw (tests/local/numerical/test_sw.py): 0.02 vs 0.21 for the uniform guess; the paper's
    # Fig. 5 shows the other shapes within a factor ~2 of SW, whose W1 here is ~0.005-0.01.
    protocol = local.make("gw", epsilon=1.0, bins=64, **params)
    values = np.random.default_rng(5).beta(5, 2, 50_000)
    estimate = protocol.estimate(protocol.privatize(values, rng=6))
    assert estimate.details["converged"] and estimate.method == "gw"
    assert wasserstein_to_beta(estimate) < 0.02
    em = protocol.estimate(protocol.privatize(values, rng=6), method="em")
    trace = em.details["loglikelihood"]
    assert np.all(np.diff(trace) >= -1e-9 * abs(trace[-1]))  # EM never lowers the likelihood


def test_parameters_and_errors():
    assert local.make("gw", epsilon=1.0).ratio == 0.5
    assert local.make("gw", epsilon=1.0, shape="triangle").ratio == 0.0
    assert local.make("gw", epsilon=2.0).b == pytest.approx(mutual_information_b(2.0))
    with pytest.raises(InvalidParameterError, match="ratio"):
        local.make("gw", epsilon=1.0, shape="triangle", ratio=0.3)
    for bad in (0.0, 1.0, 1.5, math.nan):
        with pytest.raises(InvalidParameterError, match="ratio"):
            local.make("gw", epsilon=1.0, ratio=bad)
    with pytest.raises(InvalidParameterError, match="shape"):
        local.make("gw", epsilon=1.0, shape="square")
    with pytest.raises(InvalidParameterError, match="discrete"):
        local.make("gw", epsilon=1.0, discrete=True)
    protocol = local.make("gw", epsilon=1.0, bins=8, bounds=(-1.0, 1.0))
    for values in ([1.5], [math.nan], [math.inf]):
        with pytest.raises(OutOfDomainError, match="values"):
            protocol.privatize(values, clip=False)  # the default clip=True clips them (test_clipping.py)
