"""Tests of dpdist.local.deconvolution (paper 001, Fang et al., IEEE S&P 2023)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError, InvalidValueTypeError
from dpdist.local.deconvolution import METHODS, deconvolve, noise_power_spectrum
from dpdist.local import ProtocolTags


def smooth_frequencies(domain_size: int) -> np.ndarray:
    """Two Gaussian bumps on a cycle: a smooth distribution like the paper's taxi times."""
    x = np.arange(domain_size) / domain_size
    f = np.exp(-(((x - 0.35) / 0.08) ** 2)) + 0.6 * np.exp(-(((x - 0.75) / 0.05) ** 2)) + 0.05
    return f / f.sum()


def values_with_frequencies(frequencies: np.ndarray, n: int) -> np.ndarray:
    """Exactly round(n f) copies of every item (deterministic, so f is known exactly)."""
    counts = np.floor(frequencies * n).astype(int)
    counts[np.argmax(counts)] += n - counts.sum()
    return np.repeat(np.arange(frequencies.size), counts)


def plain_estimate(counts, n, p, q):
    return (counts / n - q) / (p - q)  # eq. 1


def paper_transfer_vector(d, p, q):
    h = np.full(d, q)
    h[0] = p
    return h  # Theorem 1: h = [p*, q*, ..., q*]


# ------------------------------------------------------------------ the inverse-filter identity
def test_inverse_filter_equals_plain_estimate_for_grr():
    proto = local.make("grr", epsilon=1.5, domain_size=50)
    values = values_with_frequencies(smooth_frequencies(50), 3000)
    counts = proto.support_counts(proto.simulate(values, rng=1))
    p, q = proto.support_probabilities()
    g = counts / values.size
    inverse = np.fft.ifft(np.fft.fft(g) / np.fft.fft(paper_transfer_vector(50, p, q)))
    plain = plain_estimate(counts, values.size, p, q)
    np.testing.assert_allclose(inverse.real, plain, rtol=0, atol=1e-9)
    np.testing.assert_allclose(inverse.imag, 0, atol=1e-9)
    # the module's inverse filter, and DW with a zero noise spectrum (W = 1/H), are the same vector
    for method in ("inverse", "dw", "iiw"):
        result, _ = deconvolve(counts, p, q, values.size, method, noise_spectrum=0.0, protocol=proto)
        np.testing.assert_allclose(result, plain, rtol=0, atol=1e-9)


def test_inverse_filter_differs_from_plain_estimate_only_at_dc_for_oue():
    # For OUE, sum(g) is random, so G0/H0 and eq. 1 disagree by a constant (see deconvolve Notes).
    d, n = 40, 3000
    proto = local.make("oue", epsilon=1.0, domain_size=d)
    counts = proto.support_counts(proto.simulate(values_with_frequencies(smooth_frequencies(d), n), rng=2))
    p, q = proto.support_probabilities()
    g = counts / n
    inverse = np.fft.ifft(np.fft.fft(g) / np.fft.fft(paper_transfer_vector(d, p, q))).real
    plain = plain_estimate(counts, n, p, q)
    shift = (g.sum() / (p + (d - 1) * q) - (g.sum() - d * q) / (p - q)) / d
    np.testing.assert_allclose(inverse - plain, shift, rtol=0, atol=1e-9)
    assert abs(shift) > 1e-6  # the total of OUE supports really is random
    result, _ = deconvolve(counts, p, q, n, "inverse", protocol=proto)
    np.testing.assert_allclose(result, inverse, rtol=0, atol=1e-9)


# ------------------------------------------------------------------ the noise power spectrum
def test_noise_power_spectrum_is_eq_9_summed_over_items():
    d, n, f = 30, 777, smooth_frequencies(30)
    for name in ("grr", "oue"):
        proto = local.make(name, epsilon=2.0, domain_size=d)
        p, q = proto.support_probabilities()
        sigma_sq = (q * (1 - q) + f * (p - q) * (1 - p - q)) / n  # eq. 9, item by item
        spectrum = noise_power_spectrum(d, p, q, n, protocol=proto)
        np.testing.assert_allclose(spectrum[1:], sigma_sq.sum(), rtol=1e-12)
        expected_dc = 0.0 if name == "grr" else sigma_sq.sum()  # the KRR exception P0 = 0
        assert spectrum[0] == pytest.approx(expected_dc, rel=1e-12, abs=0)
    # GRR: d times eq. 13 (the f = 0 variance) plus (p - q)(1 - p - q)/n, in closed form
    e = math.exp(2.0)
    assert noise_power_spectrum(d, e / (e + d - 1), 1 / (e + d - 1), n)[5] == pytest.approx(
        d * (e + d - 2) / (n * (e + d - 1) ** 2) + (e - 1) / (e + d - 1) * (d - 2) / (e + d - 1) / n, rel=1e-12
    )


def empirical_noise_periodogram(proto, frequencies, n, repeats):
    """Average of |FFT(g - f*h)|^2 over repeats of the exact aggregate sampler."""
    d = proto.domain_size
    values = values_with_frequencies(frequencies, n)
    f = np.bincount(values, minlength=d) / n
    p, q = proto.support_probabilities()
    expected_g = f * (p - q) + q  # f * h (Theorem 1)
    rng = np.random.default_rng(2023)
    total = np.zeros(d)
    dc_values = np.empty(repeats)
    for r in range(repeats):
        noise = proto.support_counts(proto.simulate(values, rng=rng)) / n - expected_g
        spectrum = np.fft.fft(noise)
        total += np.abs(spectrum) ** 2
        dc_values[r] = spectrum[0].real
    return total / repeats, dc_values


# Tolerances.  N_k is a sum of many independent terms, so it is nearly complex Gaussian and
# |N_k|^2 / P_k ~ Exp(1) (chi-square with 2 dof, halved) for 0 < k < d/2: the mean of R repeats
# has relative standard error 1/sqrt(R); the real bins k = 0, d/2 have chi-square(1) spread,
# sqrt(2/R).  Per bin we allow 5 * sqrt(2/R).  Averaged over the d/2 - 1 independent bins
# 0 < k < d/2, the relative standard error is 1/sqrt(R (d/2 - 1)); we allow 5 of those.
REPEATS, DOMAIN, USERS = 10_000, 64, 2_000


# OUE's 10,000 repeats are 0.35 CPU-s: the full suite; the fast loop's 2,500 keep the bounds above at that R (per
# bin 5 sqrt(2/R) = 14%, the grand mean 5 / sqrt(R (d/2 - 1)) = 1.8%: a spectrum 5% off still fails)
@pytest.mark.parametrize("repeats", [2_500, pytest.param(REPEATS, marks=pytest.mark.slow)])
def test_empirical_noise_spectrum_matches_eq_20_for_oue(repeats):
    proto = local.make("oue", epsilon=1.0, domain_size=DOMAIN)
    p, q = proto.support_probabilities()
    analytic = noise_power_spectrum(DOMAIN, p, q, USERS, protocol=proto)
    assert analytic[0] > 0  # independent bits: no DC exception
    measured, _ = empirical_noise_periodogram(proto, smooth_frequencies(DOMAIN), USERS, repeats)
    np.testing.assert_array_less(np.abs(measured / analytic - 1), 5 * math.sqrt(2 / repeats))
    inner = slice(1, DOMAIN // 2)
    grand_error = 5 / math.sqrt(repeats * (DOMAIN // 2 - 1))
    assert abs(measured[inner].mean() / analytic[1] - 1) < grand_error


# 0.4 CPU-s of repeated estimates: the whole suite; the fast loop keeps the same empirical spectrum against eq. 20
# in test_empirical_noise_spectrum_matches_eq_20_for_oue and GRR's zero DC term exactly in
# test_noise_power_spectrum_is_eq_9_summed_over_items
@pytest.mark.slow
def test_empirical_noise_spectrum_matches_eq_20_for_grr_with_zero_dc():
    proto = local.make("grr", epsilon=1.0, domain_size=DOMAIN)
    p, q = proto.support_probabilities()
    analytic = noise_power_spectrum(DOMAIN, p, q, USERS, protocol=proto)
    measured, dc_values = empirical_noise_periodogram(proto, smooth_frequencies(DOMAIN), USERS, REPEATS)
    # P0 = 0: every GRR report supports exactly one item, so sum(g) = 1 = sum(f*h) in every sample
    assert analytic[0] == 0.0
    np.testing.assert_allclose(dc_values, 0.0, atol=1e-12)
    np.testing.assert_array_less(np.abs(measured[1:] / analytic[1:] - 1), 5 * math.sqrt(2 / REPEATS))
    # Grand mean: the exact GRR value (1 - (p-q)^2)/n (noise_power_spectrum Notes) within 5 standard
    # errors; eq. 20 additionally within its documented model gap q(1 + p - q)/n.
    inner = slice(1, DOMAIN // 2)
    grand_error = 5 / math.sqrt(REPEATS * (DOMAIN // 2 - 1))
    exact = (1 - (p - q) ** 2) / USERS
    assert abs(measured[inner].mean() / exact - 1) < grand_error
    gap = q * (1 + p - q) / USERS
    assert exact - analytic[1] == pytest.approx(gap, rel=1e-9)
    assert abs(measured[inner].mean() - analytic[1]) < grand_error * exact + gap


# ------------------------------------------------------------------ accuracy on a smooth distribution
@pytest.mark.parametrize("name", ["grr", "oue"])
def test_wiener_filters_reduce_mse_on_a_smooth_distribution(name):
    # Reference: the exact expected MSE of the plain estimate, mean_v Var[f_v] (eq. 2).  Averaged
    # over 5 seeds the filters reach 0.29 (GRR) / 0.37 (OUE) of it with IIW and 0.42 / 0.52 with DW;
    # we require 0.5 and 0.7: more than 6 standard deviations of the 5-seed average (about 0.02).
    d, n = 200, 100_000
    f = smooth_frequencies(d)
    proto = local.make(name, epsilon=2.0, domain_size=d)
    values = values_with_frequencies(f, n)
    f = np.bincount(values, minlength=d) / n
    reference = proto.variance(n, f).mean()
    mse = {"none": [], "dw": [], "iiw": []}
    for seed in range(5):
        aggregate = proto.simulate(values, rng=seed)
        mse["none"].append(np.mean((proto.estimate(aggregate).frequencies - f) ** 2))
        for method in ("dw", "iiw"):
            mse[method].append(np.mean((proto.estimate(aggregate, deconvolve=method).frequencies - f) ** 2))
    assert np.mean(mse["none"]) == pytest.approx(reference, rel=0.25)  # 5 x 200 items: sd ~ 5%
    assert np.mean(mse["dw"]) < 0.7 * reference
    assert np.mean(mse["iiw"]) < 0.5 * reference
    assert np.mean(mse["iiw"]) < np.mean(mse["dw"])


def algorithm_1_transcribed(g, h, noise_power, iterations, start_from_g=False):
    """Algorithm 1 of paper 001 line by line, full complex FFTs, eq. 16 in its first form."""
    G, H = np.fft.fft(g), np.fft.fft(h)
    signal_power = np.abs(G) ** 2 if start_from_g else np.abs(G / H) ** 2
    W = np.conj(H) / (np.abs(H) ** 2 + noise_power / signal_power)
    F = W * G
    for _ in range(iterations):
        correction = noise_power / (np.abs(H) ** 2 + noise_power / signal_power)
        signal_power = np.abs(F) ** 2 + correction
        W = np.conj(H) / (np.abs(H) ** 2 + noise_power / signal_power)
        F = W * G
    return np.fft.ifft(F).real


@pytest.mark.parametrize("name, d", [("grr", 33), ("oue", 40)])
def test_matches_a_direct_transcription_of_algorithm_1(name, d):
    n = 4000
    proto = local.make(name, epsilon=1.0, domain_size=d)
    counts = proto.support_counts(proto.simulate(values_with_frequencies(smooth_frequencies(d), n), rng=8))
    p, q = proto.support_probabilities()
    g, h = counts / n, paper_transfer_vector(d, p, q)
    noise = noise_power_spectrum(d, p, q, n, protocol=proto)
    for method, iterations, from_g in (("dw", 0, False), ("iiw", 30, False), ("iiw-g", 12, True)):
        options = {} if method == "dw" else {"iterations": iterations}
        result, _ = deconvolve(counts, p, q, n, method, protocol=proto, **options)
        expected = algorithm_1_transcribed(g, h, noise, iterations, start_from_g=from_g)
        np.testing.assert_allclose(result, expected, rtol=0, atol=1e-12)


def test_iiw_trace_path_and_dw_as_zero_iterations():
    d, n = 128, 20_000
    proto = local.make("oue", epsilon=1.0, domain_size=d)
    counts = proto.support_counts(proto.simulate(values_with_frequencies(smooth_frequencies(d), n), rng=3))
    p, q = proto.support_probabilities()
    dw, dw_details = deconvolve(counts, p, q, n, "dw", protocol=proto)
    assert "convergence" not in dw_details
    zero, _ = deconvolve(counts, p, q, n, "iiw", iterations=0)
    np.testing.assert_allclose(zero, dw, rtol=0, atol=1e-12)  # F(0) of Alg. 1 is DW
    result, details = deconvolve(counts, p, q, n, "iiw", iterations=30, keep_path=True)
    assert details["iterations"] == 30 and details["convergence"].shape == (30,)
    assert details["convergence"][-1] < 0.1 * details["convergence"][0]
    assert details["path"].shape == (31, d)
    np.testing.assert_allclose(details["path"][0], dw, atol=1e-12)
    np.testing.assert_allclose(details["path"][-1], result, atol=1e-12)
    # each step's recorded change is the relative L2 change of the estimate
    steps = np.linalg.norm(np.diff(details["path"], axis=0), axis=1) / np.linalg.norm(details["path"][1:], axis=1)
    np.testing.assert_allclose(details["convergence"], steps, rtol=1e-8)
    early, early_details = deconvolve(counts, p, q, n, "iiw", iterations=30, tolerance=details["convergence"][4])
    assert early_details["iterations"] < 30
    np.testing.assert_allclose(early, details["path"][early_details["iterations"]], atol=1e-12)
    started_from_g, g_details = deconvolve(counts, p, q, n, "iiw-g", iterations=5)
    assert g_details["iterations"] == 5 and not np.allclose(started_from_g, details["path"][5])


# ------------------------------------------------------------------ AMRP
def test_amrp_is_reproducible_and_undoes_its_permutations():
    d, n = 100, 10_000
    proto = local.make("grr", epsilon=2.0, domain_size=d)
    aggregate = proto.simulate(values_with_frequencies(smooth_frequencies(d), n), rng=4)
    first = proto.estimate(aggregate, deconvolve="amrp", permutations=20, rng=11)
    again = proto.estimate(aggregate, deconvolve="amrp", permutations=20, rng=np.random.default_rng(11))
    other = proto.estimate(aggregate, deconvolve="amrp", permutations=20, rng=12)
    np.testing.assert_array_equal(first.frequencies, again.frequencies)
    assert not np.allclose(first.frequencies, other.frequencies)
    assert first.details["permutations"] == 20 and first.details["base"] == "dw"
    # With no noise every filter is the inverse filter, which commutes with permutations: any
    # mistake in restoring the original order would show here.
    counts = proto.support_counts(aggregate)
    p, q = proto.support_probabilities()
    for base in ("dw", "iiw", "iiw-g"):
        restored, _ = deconvolve(counts, p, q, n, "amrp", permutations=7, base=base, noise_spectrum=0.0, rng=1)
        np.testing.assert_allclose(restored, plain_estimate(counts, n, p, q), atol=1e-9)


# ------------------------------------------------------------------ smoothing baselines
def test_smoothing_and_gaussian_filters():
    d, n = 20, 1000
    p, q = 0.5, 0.1
    counts = np.full(d, q * n)
    counts[7] = p * n  # the plain estimate is the point mass at item 7
    smooth, _ = deconvolve(counts, p, q, n, "smooth")
    expected = np.zeros(d)
    expected[[6, 7, 8]] = [0.25, 0.5, 0.25]  # eq. 25
    np.testing.assert_allclose(smooth, expected, atol=1e-12)
    counts_at_edge = np.roll(counts, -7)  # point mass at item 0: wraps around by default
    wrapped, _ = deconvolve(counts_at_edge, p, q, n, "smooth")
    np.testing.assert_allclose(wrapped[[d - 1, 0, 1]], [0.25, 0.5, 0.25], atol=1e-12)
    mirrored, _ = deconvolve(counts_at_edge, p, q, n, "smooth", boundary="nearest")
    np.testing.assert_allclose(mirrored[[0, 1]], [0.75, 0.25], atol=1e-12)
    sigma = 1.5
    gaussian, details = deconvolve(counts, p, q, n, "gf", sigma=sigma)
    offsets = np.arange(-6, 7)  # truncated at 4 sigma
    kernel = np.exp(-(offsets**2) / (2 * sigma**2))
    expected = np.zeros(d)
    expected[7 + offsets] = kernel / kernel.sum()
    np.testing.assert_allclose(gaussian, expected, atol=1e-12)
    assert details["sigma"] == sigma
    # GF-DW is DW fed with the spectrum of the Gaussian-filtered estimate
    proto = local.make("oue", epsilon=1.0, domain_size=64)
    noisy = proto.support_counts(proto.simulate(values_with_frequencies(smooth_frequencies(64), 5000), rng=5))
    p, q = proto.support_probabilities()
    smoothed, _ = deconvolve(noisy, p, q, 5000, "gf", sigma=3.0)
    gf_dw, _ = deconvolve(noisy, p, q, 5000, "gf-dw", sigma=3.0)
    dw_prior, _ = deconvolve(noisy, p, q, 5000, "dw", signal_spectrum=np.abs(np.fft.fft(smoothed)) ** 2)
    np.testing.assert_allclose(gf_dw, dw_prior, atol=1e-12)


def test_estimate_hook_returns_post_processed_frequency_estimate():
    proto = local.make("oue", epsilon=1.0, domain_size=64)
    aggregate = proto.simulate(values_with_frequencies(smooth_frequencies(64), 5000), rng=6)
    for method in METHODS:
        estimate = proto.estimate(aggregate, deconvolve=method, postprocess="simplex", rng=0)
        assert estimate.frequencies.shape == (64,) and estimate.frequencies.min() >= 0
        assert estimate.frequencies.sum() == pytest.approx(1.0)
        assert estimate.details["deconvolution"] == method


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "kwargs",
    [
        {"method": "wiener"},
        {"method": "dw", "iterations": 3},
        {"method": "iiw", "iterations": -1},
        {"method": "iiw", "iterations": 2.5},
        {"method": "iiw", "tolerance": -0.1},
        {"method": "iiw", "keep_path": "yes"},
        {"method": "amrp", "permutations": 0},
        {"method": "amrp", "base": "smooth"},
        {"method": "amrp", "rng": -3},
        {"method": "gf", "sigma": 0.0},
        {"method": "gf", "sigma": math.inf},
        {"method": "smooth", "boundary": "circular"},
        {"method": "smooth", "sigma": 1.0},
        {"method": "dw", "signal_spectrum": -np.ones(8)},
        {"method": "dw", "noise_spectrum": math.nan},
        {"method": "dw", "fixed_support_size": "yes"},
    ],
)
def test_bad_methods_and_options_raise(kwargs):
    with pytest.raises(InvalidParameterError):
        deconvolve(np.full(8, 10.0), 0.5, 0.2, 40, **kwargs)


@pytest.mark.parametrize(
    "args, error",
    [
        ((np.ones((2, 4)), 0.5, 0.2, 10), InvalidValueTypeError),
        ((np.ones(1), 0.5, 0.2, 10), InvalidValueTypeError),
        ((np.array(["a", "b"]), 0.5, 0.2, 10), InvalidValueTypeError),
        ((np.array([1.0, -1.0]), 0.5, 0.2, 10), InvalidParameterError),
        ((np.array([1.0, math.inf]), 0.5, 0.2, 10), InvalidParameterError),
        ((np.ones(4), 0.2, 0.5, 10), InvalidParameterError),
        ((np.ones(4), 1.5, 0.2, 10), InvalidParameterError),
        ((np.ones(4), 0.5, 0.2, 0), InvalidParameterError),
    ],
)
def test_bad_inputs_raise_with_the_argument_named(args, error):
    with pytest.raises(error, match="support_counts|p_star|q_star|'n'"):
        deconvolve(*args, method="dw")


def test_bad_spectrum_shape_and_hook_errors():
    with pytest.raises(InvalidValueTypeError, match="noise_spectrum"):
        deconvolve(np.ones(8), 0.5, 0.2, 10, "dw", noise_spectrum=np.ones(5))
    proto = local.make("grr", epsilon=1.0, domain_size=8)
    aggregate = proto.simulate(np.arange(8).repeat(5), rng=0)
    with pytest.raises(InvalidParameterError, match="'deconvolve' parameter of GRR.estimate"):
        proto.estimate(aggregate, deconvolve="nope")
    with pytest.raises(InvalidParameterError, match="length domain_size = 8"):
        deconvolve(np.ones(9), 0.5, 0.2, 10, "dw", protocol=proto)
    with pytest.raises(InvalidParameterError, match="domain_size"):
        noise_power_spectrum(1, 0.5, 0.2, 10)


def test_fixed_support_size_is_read_from_any_protocol():
    class DeclaresFixedSupport:
        name = "some-future-protocol"
        tags = ProtocolTags(kind="frequency", fixed_support_size=True)
        domain_size = 8

    assert noise_power_spectrum(8, 0.5, 0.1, 10, protocol=DeclaresFixedSupport())[0] == 0.0
    assert noise_power_spectrum(8, 0.5, 0.1, 10, protocol=local.make("oue", epsilon=1.0, domain_size=8))[0] > 0
    assert noise_power_spectrum(8, 0.5, 0.1, 10, fixed_support_size=True)[0] == 0.0
    _, details = deconvolve(np.full(8, 3.0), 0.5, 0.1, 10, "dw", protocol=DeclaresFixedSupport())
    assert details["fixed_support_size"] is True


def test_a_protocol_that_is_not_a_frequency_protocol_is_refused_by_name():
    numerical = local.make("sw", epsilon=1.0)
    with pytest.raises(InvalidParameterError, match=r"'protocol' parameter of deconvolve .* Got SW \(tags.kind "
                                                    "'numerical'\\)"):
        deconvolve(np.full(8, 3.0), 0.5, 0.1, 10, "dw", protocol=numerical)
    with pytest.raises(InvalidParameterError, match="'protocol' parameter of noise_power_spectrum"):
        noise_power_spectrum(8, 0.5, 0.1, 10, protocol=object())
