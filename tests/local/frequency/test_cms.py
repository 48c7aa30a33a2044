"""``cms``: Apple's count-mean sketch (an m-bit report, a k x m sketch)."""

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError, MalformedReportError


def test_the_estimate_is_unbiased_with_the_stated_variance():
    protocol = local.make("cms", epsilon=2.0, domain_size=50, hash_count=64, width=16)
    values = np.repeat(np.arange(5), [400, 300, 200, 80, 20])
    truth = np.bincount(values, minlength=50) / values.size
    runs = np.array([protocol.estimate(protocol.simulate(values, rng=seed)).frequencies for seed in range(400)])
    variance = protocol.variance(values.size, truth)
    collision = 1 / 16
    bias_bound = math.sqrt(np.sum(truth**2) * collision / (64 * (1 - collision)))
    assert np.all(np.abs(runs.mean(axis=0) - truth) <= 5 * np.sqrt(variance / runs.shape[0]) + 4 * bias_bound)
    assert np.median(runs.var(axis=0) / variance) == pytest.approx(1.0, abs=0.25)


def test_the_support_counts_equal_apples_sketch_formula():
    protocol = local.make("cms", epsilon=1.0, domain_size=30, hash_count=8, width=64)
    values = np.arange(30).repeat(5)
    reports = protocol.privatize(values, rng=3)
    bits = np.unpackbits(reports[:, 1:].view(np.uint8), axis=1, bitorder="little")[:, :64]
    x = 2.0 * bits - 1.0
    half = math.exp(0.5)
    c_eps = (half + 1) / (half - 1)
    sketch = np.zeros((8, 64))
    np.add.at(sketch, reports[:, 0].astype(int), 8 * (c_eps / 2 * x + 0.5))  # Apple Alg. 2
    hashed = protocol._hashed(np.arange(8)[:, None], np.arange(30)[None, :])
    apple = (64 / 63) * (sketch[np.arange(8)[:, None], hashed].mean(axis=0) - values.size / 64)
    ours = protocol.estimate(reports).frequencies * values.size
    np.testing.assert_allclose(ours, apple, rtol=0.02, atol=1.0)


def test_reports_pack_the_bits_and_refuse_spare_bits():
    protocol = local.make("cms", epsilon=1.0, domain_size=100, hash_count=4, width=8)
    reports = protocol.privatize(np.arange(100), rng=0)
    assert reports.shape == (100, 2) and reports.dtype == np.uint64 and np.all(reports[:, 1] < 256)
    bad = reports[:3].copy()
    bad[0, 1] |= np.uint64(1 << 9)
    bad[1, 0] = np.uint64(4)
    aggregator = protocol.aggregator().add(bad)
    assert aggregator.n == 1 and aggregator.rejected == {"bits_out_of_range": 1, "function_out_of_range": 1}
    with pytest.raises(MalformedReportError, match="uint64"):
        protocol.aggregator().add(reports.astype(np.int64))


def test_bad_parameters_name_the_argument():
    with pytest.raises(InvalidParameterError, match=r"'width'.*a power of 2.*Got 100"):
        local.make("cms", epsilon=1.0, domain_size=10, width=100)
    with pytest.raises(InvalidParameterError, match="hash_count"):
        local.make("cms", epsilon=1.0, domain_size=10, hash_count=2**16, width=1024)
