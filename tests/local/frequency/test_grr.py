"""GRR (dpdist.local.frequency.grr) beyond the conformance suite: closed forms, the report dtype, out-of-range reports."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import MalformedReportError


@pytest.mark.parametrize("epsilon, d", [(0.5, 2), (1.0, 10), (4.0, 1000)])
def test_grr_probabilities_are_the_closed_form(epsilon, d):
    protocol = local.make("grr", epsilon=epsilon, domain_size=d)
    p, q = protocol.support_probabilities()
    e = math.exp(epsilon)
    assert p == pytest.approx(e / (e + d - 1), rel=1e-15)
    assert q == pytest.approx(1 / (e + d - 1), rel=1e-15)
    assert math.log(p / q) == pytest.approx(epsilon, rel=1e-12)


def test_grr_reports_use_the_narrowest_dtype():
    assert local.make("grr", epsilon=1.0, domain_size=256).privatize([255], rng=0).dtype == np.uint8
    assert local.make("grr", epsilon=1.0, domain_size=257).privatize([256], rng=0).dtype == np.uint16


def test_out_of_range_reports_are_counted_and_valid_ones_kept():
    protocol = local.make("grr", epsilon=1.0, domain_size=4)
    reports = np.array([0, 1, 4, 3, -1, 2])
    aggregator = protocol.aggregator().add(reports)
    assert aggregator.n == 4
    assert aggregator.rejected == {"out_of_range": 2}
    np.testing.assert_array_equal(aggregator.statistic, [1, 1, 1, 1])
    with pytest.raises(MalformedReportError, match="row 2"):
        protocol.aggregator().add(reports, on_invalid="raise")


