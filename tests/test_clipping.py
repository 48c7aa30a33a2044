"""Issue 36 item 1: clipping for every numerical local protocol and the command line, by default.

One value outside the bounds aborted `privatize`, `submit` and the one-shot `estimate` ("Got 1398
value(s) outside") while `dpdist release` clipped.  Now `clip=True` (and `--clip`) is the default of
every numerical protocol, as of every central release: a value outside the bounds is randomized as
the nearest bound, the count is reported where the values are (a warning, a line of the command's
output) and never sent: the reports are exactly those of the clipped values.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import ClippedValuesWarning, OutOfDomainError

NUMERICAL = {
    "sw": {"bins": 16}, "gw": {"bins": 16}, "binning": {"bins": 8}, "hh": {"bins": 16}, "hh-admm": {"bins": 16},
    "haar-hrr": {"bins": 16}, "wavelet": {"n_users": 1_000}, "pm": {}, "sr": {},
}


def test_every_numerical_protocol_is_listed_here():
    assert sorted(NUMERICAL) == local.available("numerical")


@pytest.mark.parametrize("name", sorted(NUMERICAL))
def test_values_outside_the_bounds_are_randomized_as_the_nearest_bound(name):
    proto = local.make(name, epsilon=1.0, bounds=(10.0, 20.0), **NUMERICAL[name])
    values = np.array([12.0, 25.0, 9.0, -math.inf, math.inf, math.nan, 20.0, 10.0])
    clipped = np.array([12.0, 20.0, 10.0, 10.0, 20.0, 10.0, 20.0, 10.0])
    with pytest.warns(ClippedValuesWarning, match=r"5 of 8 value\(s\) outside the bounds \[10, 20\]"):
        reports = proto.privatize(values, rng=3)
    np.testing.assert_array_equal(reports, proto.privatize(clipped, rng=3, clip=False))
    with pytest.warns(ClippedValuesWarning):
        simulated = proto.simulate(values, rng=4)
    assert simulated == proto.simulate(clipped, rng=4, clip=False)
    with warnings.catch_warnings():  # nothing to clip: no warning
        warnings.simplefilter("error")
        proto.privatize(clipped, rng=3)
    with pytest.raises(OutOfDomainError, match="values"):
        proto.privatize(values, rng=3, clip=False)
    assert proto.clip_values(values)[1] == 5


def test_the_count_is_not_in_the_reports_or_their_config():
    """What leaves the device is the reports of the clipped values: the same bytes, whatever was clipped."""
    proto = local.make("sw", epsilon=1.0, bounds=(0.0, 1.0), bins=8)
    with pytest.warns(ClippedValuesWarning):
        outside = proto.privatize([0.5, 7.0, -3.0], rng=9)
    inside = proto.privatize([0.5, 1.0, 0.0], rng=9)
    assert outside.tobytes() == inside.tobytes() and outside.dtype == inside.dtype
    assert "clip" not in proto.config()


def test_the_two_phase_mean_and_variance_clips_too():
    proto = local.make("pm", epsilon=2.0, bounds=(0.0, 10.0))
    values = np.random.default_rng(0).uniform(0, 10, 4_000)
    with pytest.warns(ClippedValuesWarning, match="2 of 4000"):
        clipped = proto.estimate_mean_variance(np.r_[values[:-2], 50.0, -50.0], rng=1)
    assert clipped.mean == proto.estimate_mean_variance(np.r_[values[:-2], 10.0, 0.0], rng=1).mean
    with pytest.raises(OutOfDomainError):
        proto.estimate_mean_variance([1.0, 11.0], rng=0, clip=False)
