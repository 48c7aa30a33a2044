"""A time-of-day campaign (opm-circular) reports the circular mean and wraps times around midnight.

Its estimate said the linear mean (875 min where the circular mean was 1158: a population around 23:00 has a
linear mean near noon), gave it intervals from the CDF band that bound the linear mean, and clipped times past
midnight to 00:00 instead of wrapping them (25:00 is 01:00).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import ClippedValuesWarning
from dpdist.estimates import Distribution

DAY = 1440.0


def _circular_mean(minutes: np.ndarray) -> float:
    resultant = np.mean(np.exp(2j * np.pi * minutes / DAY))
    return float(np.angle(resultant) % (2 * np.pi) * DAY / (2 * np.pi))


def _late_evening(n: int, seed: int) -> np.ndarray:
    return np.mod(np.random.default_rng(seed).normal(23 * 60, 90, n), DAY)  # around 23:00, over midnight


def test_the_mean_of_a_circular_estimate_is_the_circular_mean():
    protocol = local.make("opm-circular", epsilon=2.0, bounds=(0, DAY))
    minutes = _late_evening(20_000, 1)
    estimate = protocol.estimate(protocol.simulate(minutes, rng=2))
    truth = _circular_mean(minutes)
    assert abs(minutes.mean() - truth) > 300  # the linear mean is hours away
    # the circular standard deviation is 90 min: the mean of 20,000 reports at epsilon 2 is within 15 minutes
    assert estimate.period == DAY and abs(estimate.mean() - truth) < 15
    assert math.sqrt(estimate.var()) == pytest.approx(90, rel=0.1)
    document = estimate.to_dict()
    assert document["period"] == DAY and document["mean"] == estimate.mean() == estimate.summary()["mean"]
    assert Distribution.from_dict(document).mean() == estimate.mean()  # the period travels with the JSON
    assert "circular mean" in estimate.describe()


def test_the_circular_mean_is_exact_for_piecewise_uniform_bins():
    # all the mass on [0, 60) and [1380, 1440): the mean direction is midnight, the resultant sin(pi/12)/(pi/12)
    probabilities = np.zeros(24)
    probabilities[[0, 23]] = 0.5
    clock = Distribution.uniform_bins(probabilities, (0, DAY), details={"period": DAY})
    assert clock.mean() in (pytest.approx(0.0, abs=1e-9), pytest.approx(DAY, abs=1e-9))
    resultant = math.sin(math.pi / 12) / (math.pi / 12)
    assert math.sqrt(clock.var()) == pytest.approx(math.sqrt(-2 * math.log(resultant)) * DAY / (2 * math.pi), rel=1e-12)
    assert math.isnan(Distribution.uniform_bins(np.full(24, 1 / 24), (0, DAY), details={"period": DAY}).mean())


def test_the_served_estimate_gives_no_linear_mean_interval_and_says_circular_mean():
    from dpdist.cli._estimate_text import estimate_lines
    from dpdist.serve._uncertainty import served_estimate

    protocol = local.make("opm-circular", epsilon=2.0, bounds=(0, DAY), bins=128)
    minutes = _late_evening(5_000, 3)
    aggregate = protocol.simulate(minutes, rng=4)
    document = served_estimate(protocol, aggregate, protocol.estimate(aggregate), level=0.95, width=None, replicates=20,
                               target_n=10_000, options={})
    assert abs(document["mean"] - _circular_mean(minutes)) < 30
    kinds = [interval["quantity"] for interval in document["intervals"]]
    assert "mean" not in kinds and "quantile" in kinds and "cdf" in kinds  # fixed-n and anytime alike
    assert any(line.startswith("circular mean") for line in estimate_lines(document))


def test_times_outside_the_day_wrap_around_instead_of_clipping_to_midnight():
    protocol = local.make("opm-circular", epsilon=2.0, bounds=(0, DAY))
    wrapped, moved = protocol.clip_values([1500.0, -30.0, 700.0, DAY, np.nan])
    assert moved == 3 and np.array_equal(wrapped, [60.0, 1410.0, 700.0, DAY, 0.0])  # NaN: missing, to lo
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reports = protocol.privatize([1500.0] * 4000, rng=5)
    assert any(issubclass(w.category, ClippedValuesWarning) and "wrapped around the circle" in str(w.message) for w in caught)
    estimate = protocol.estimate(protocol.aggregator().add(reports))
    assert abs(estimate.mean() - 60.0) < 15  # 01:00, where clipping put it at 00:00 (1440)
    interval = local.make("opm", epsilon=2.0, bounds=(0, DAY))
    assert np.array_equal(interval.clip_values([1500.0, -30.0])[0], [DAY, 0.0])  # an interval still clips


def test_the_command_line_wraps_a_column_of_times(tmp_path):
    from dpdist.cli._deploy import ColumnValues

    prepare = ColumnValues(local.make("opm-circular", epsilon=1.0, bounds=(0, DAY)), "minute")
    assert np.array_equal(prepare(np.array([1500.0, 30.0])), [60.0, 30.0])
    assert prepare.notes() == ["1 value(s) outside the bounds [0, 1440] wrapped around the circle (counted here, never "
                               "sent; --no-clip refuses them)"]
