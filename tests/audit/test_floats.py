"""Floating-point noise: an output support that depends on the input is certified (the float's bits are columns)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpdist import audit
from dpdist.audit._floats import bit_columns
from dpdist.central import noise


def test_bit_columns_are_the_exponent_and_the_lowest_set_bit():
    values = np.array([[1.0], [0.5], [3.0], [2.0**-53], [1 + 2.0**-52], [0.0], [5e-324], [-6.0]])
    assert bit_columns(values).tolist() == [[1, 0], [0, -1], [2, 0], [-52, -53], [1, -52], [0, -1100], [-1073, -1074],
                                            [3, 1]]


def textbook_laplace(values):
    """x + numpy.random.laplace(scale): the textbook float Laplace (Mironov 2012's porous outputs)."""
    values = np.asarray(values, dtype=np.float64)
    return values + np.random.laplace(0.0, 1.0, values.size)


def test_a_textbook_float_laplace_is_certified_to_violate():
    result = audit.audit(textbook_laplace, epsilon=1.0, domain=(0.0, 1.0), samples=20_000, rng=0)
    assert result.violates and result.certified_epsilon > 2.0


def test_without_the_bit_columns_the_same_laplace_passes():
    """The leak is in the bits alone: binned values see a correct Laplace."""
    result = audit.audit(lambda v, rng: np.asarray(v) + rng.laplace(0.0, 1.0, len(v)), epsilon=1.0, domain=(0.0, 1.0),
                         samples=20_000, rng=0, float_bits=False)
    assert result.verdict == "no violation found"


def test_a_textbook_float_gaussian_is_certified_against_its_epsilon_delta():
    """x + N(0, sigma^2) with sigma for (1, 1e-5)-DP: its rounding artefacts break the claim."""
    sigma = np.sqrt(2 * np.log(1.25 / 1e-5))

    def gaussian(values, rng):
        return np.asarray(values, dtype=np.float64) + rng.normal(0.0, sigma, len(values))

    result = audit.audit(gaussian, epsilon=1.0, domain=(0.0, 1.0), samples=20_000, rng=0, delta=1e-5)
    assert result.violates


@pytest.mark.parametrize("mechanism", ["laplace", pytest.param("gaussian", marks=pytest.mark.slow)])
@pytest.mark.slow  # 0.39 CPU-s: a seeded audit
def test_dpdist_discrete_samplers_are_cleared(mechanism):
    """dpdist's central noise (a public grid plus exact discrete noise) has the same bits for every input: its Laplace
    mechanism on each value as its own query, and its Gaussian mechanism's grid and discrete Gaussian for one value."""
    if mechanism == "laplace":
        def release(values, rng):
            return noise.laplace_mechanism(values, 1.0, 1.0, rng, each_coordinate=True)
        delta = 0.0
    else:
        delta = 1e-5
        step = noise.secure_grid_step(1.0)
        sigma = noise.zcdp_gaussian_sigma(1.0, delta, 1.0 / step + 1.0)
        variance = Fraction(math.ceil(sigma**2 * 2**noise.VARIANCE_BITS), 2**noise.VARIANCE_BITS)

        def release(values, rng):  # noise.gaussian_mechanism of one value, for many values at once
            grid = np.round(np.asarray(values) / step).astype(np.int64)
            return (grid + noise.discrete_gaussian(len(grid), variance, rng)).astype(np.float64) * step
    samples = 20_000 if mechanism == "laplace" else 4000  # the exact discrete Gaussian draws ~10^5 values a second
    result = audit.audit(release, epsilon=1.0, domain=(0.0, 1.0), samples=samples, rng=0, delta=delta)
    assert result.verdict == "no violation found"


def _counts(rows):
    """The count of each dataset of a batched release (rows padded with NaN)."""
    return np.count_nonzero(~np.isnan(rows), axis=1).astype(np.float64)


def textbook_count(noise_name):
    """A count plus textbook float noise for (1, 0) (Laplace of scale 1) or (1, 1e-5) (Gaussian of the classic sigma)."""
    sigma = np.sqrt(2 * np.log(1.25 / 1e-5))

    def release(rows, rng):
        draws = rng.laplace(0.0, 1.0, len(rows)) if noise_name == "laplace" else rng.normal(0.0, sigma, len(rows))
        return _counts(rows) + draws

    return release, (0.0 if noise_name == "laplace" else 1e-5)


def correct_count(name):
    """A count with a correct epsilon = 1 mechanism: dpdist's grid Laplace, its integer Laplace, geometric noise."""
    keep = 1 - math.exp(-1.0)
    releases = {
        "dpdist laplace": lambda rows, rng: noise.laplace_mechanism(_counts(rows), 1.0, 1.0, rng, each_coordinate=True),
        "dpdist integer laplace": lambda rows, rng: noise.laplace_mechanism(_counts(rows), 1, 1.0, rng,
                                                                            integer_valued=True),
        "geometric": lambda rows, rng: _counts(rows) + rng.geometric(keep, len(rows)) - rng.geometric(keep, len(rows)),
    }
    return releases[name]


@pytest.mark.parametrize("noise_name", ["laplace", "gaussian"])
def test_a_count_plus_textbook_float_noise_is_flagged_at_the_central_defaults(noise_name):
    """At a count of 1 against 2 the outputs near 0 lie on a float grid one count reaches and the other does not."""
    release, delta = textbook_count(noise_name)
    result = audit.central(release, 1.0, domain=(0.0, 1.0), delta=delta, batched=True, rng=0)
    assert result.violates and "a count near 0" in result.witness["datasets"]


@pytest.mark.slow
@pytest.mark.parametrize("noise_name", ["laplace", "gaussian"])
def test_textbook_float_counts_are_flagged_in_19_of_20_default_audits(noise_name):
    release, delta = textbook_count(noise_name)
    flagged = sum(audit.central(release, 1.0, domain=(0.0, 1.0), delta=delta, batched=True, rng=seed).violates
                  for seed in range(20))
    assert flagged >= 19


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dpdist laplace", "dpdist integer laplace", "geometric"])
def test_correct_counts_are_never_flagged_at_the_central_defaults(name):
    flagged = [seed for seed in range(20)
               if audit.central(correct_count(name), 1.0, domain=(0.0, 1.0), batched=True, rng=seed).violates]
    assert flagged == []
