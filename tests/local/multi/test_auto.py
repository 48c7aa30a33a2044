"""``multi-auto`` (dpdist.local.multi.auto): the multi-attribute protocol of least variance within an attribute-level cap."""

from __future__ import annotations


import numpy as np
import pytest

from dpdist import local
from dpdist.errors import (InvalidParameterError)


_SCHEMA = [{"name": f"a{i}", "domain_size": d} for i, d in enumerate([2, 5, 10, 20, 7])]


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0, 8.0])
def test_multi_auto_prefers_smp_without_an_attribute_level_cap(epsilon):
    proto = local.make("multi-auto", epsilon=epsilon, attributes=_SCHEMA, expected_reports=100_000)
    rows = {row["protocol"]: row for row in proto.auto_choice["candidates"]}
    assert proto.name == "smp" and rows["rsfd"]["variance"] > rows["smp"]["variance"]
    assert proto.auto_choice["reason"].startswith("smp: mean per-item variance")
    estimate = proto.estimate(proto.simulate(np.zeros((100, 5), dtype=int), rng=0))
    assert estimate.details["auto_choice"]["chosen"] == "smp"


@pytest.mark.parametrize("cap", [0.3, 0.8, 1.5])
def test_multi_auto_meets_an_attribute_level_cap_with_every_candidate(cap):
    proto = local.make("multi-auto", epsilon=4.0, attributes=_SCHEMA, attribute_epsilon=cap)
    assert proto.attribute_guarantee.epsilon <= cap * (1 + 1e-12) and proto.epsilon <= 4.0
    for row in proto.auto_choice["candidates"]:
        assert row["attribute_epsilon"] <= cap * (1 + 1e-12) and row["epsilon"] <= 4.0
    variances = {row["protocol"]: row["variance"] for row in proto.auto_choice["candidates"]}
    assert proto.name == min(variances, key=variances.get)


def test_multi_auto_scores_numerical_attributes_by_a_stated_proxy_and_refuses_bad_input():
    schema = _SCHEMA[:2] + [{"name": "x", "bounds": [0, 1], "protocol": "sw", "options": {"bins": 64}}]
    rows = {row["protocol"]: row for row in local.multi.auto.compare_multi_protocols(epsilon=1.0, attributes=schema)}
    assert not rows["rsfd"]["eligible"] and "categorical attributes" in rows["rsfd"]["reason"]
    assert any("binning with 64 bins" in note for note in rows["smp"]["notes"])
    with pytest.raises(InvalidParameterError, match="unknown parameter"):
        local.make("multi-auto", epsilon=1.0, attributes=schema, eps=2)
    with pytest.raises(InvalidParameterError, match=r"The 'attributes' parameter of .*multi-auto.* must be given \(not None\) \(a list of 1 to .*\)\. Got None"):
        local.make("multi-auto", epsilon=1.0)
