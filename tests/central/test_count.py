"""``central.count``: a count plus exact discrete Laplace noise, its exact interval, per record or per person."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpdist import central
from dpdist.errors import InvalidParameterError


@pytest.mark.slow  # a Monte Carlo of 6,000 releases (1 CPU-s); the per-person test releases a count in the fast loop
def test_the_noise_has_the_stated_spread_and_the_interval_covers_at_its_level():
    rng = np.random.default_rng(0)
    released = [central.count(np.zeros(300), 0.5, rng=rng) for _ in range(6_000)]
    counts = np.array([r.count for r in released])
    rho = math.exp(-0.5)
    assert released[0].standard_error == pytest.approx(math.sqrt(2 * rho) / (1 - rho))
    assert abs(counts.mean() - 300) < 4 * released[0].standard_error / math.sqrt(counts.size)
    assert counts.std() == pytest.approx(released[0].standard_error, rel=0.03)
    covered = np.mean([r.low <= 300 <= r.high for r in released])
    assert 0.95 <= covered <= 0.95 + 4 * math.sqrt(0.05 * 0.95 / counts.size) + 0.02  # exact tails: at least 0.95
    assert all(r.count == int(r.count) for r in released[:100])
    assert released[0].guarantee.epsilon == 0.5 and released[0].guarantee.neighbouring == "add-remove"


def test_per_person_the_noise_scales_with_the_rows_kept_per_person():
    ids = np.repeat(np.arange(100), 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release = central.count(np.zeros(1000), 1.0, rng=1, privacy_id=ids, max_contributions=4)
    assert release.details["noise_scale"] == pytest.approx(4.0) and release.guarantee.unit == "person"
    assert abs(release.count - 400) < 60


@pytest.mark.parametrize("level", [0, 1, 1.5, "0.9", True])
def test_a_bad_level_is_refused_by_name(level):
    with pytest.raises(InvalidParameterError, match="'level'"):
        central.count([1.0], 1.0, level=level)
