"""The rules several modules check and the allocation cap (``dpdist._validation._shared``); that every protocol uses
the one rule is checked in tests/package/test_shared_rules.py."""

from __future__ import annotations

import pytest

from dpdist._validation import (
    CENTRAL_EPSILON,
    DELTA,
    DOMAIN_SIZE,
    EPSILON,
    LOCAL_EPSILON,
    MAX_ALLOCATION_BYTES,
    _shared,
    check_allocation,
)
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError


def test_the_supported_ranges():
    assert (LOCAL_EPSILON.low, LOCAL_EPSILON.high, LOCAL_EPSILON.closed) == (1e-6, 30.0, "both")
    assert (CENTRAL_EPSILON.low, CENTRAL_EPSILON.high) == (1e-6, 1e12) and EPSILON is LOCAL_EPSILON
    assert LOCAL_EPSILON.error is CENTRAL_EPSILON.error is DELTA.error is InvalidPrivacyParameterError
    assert DELTA.closed == "neither" and (DOMAIN_SIZE.low, DOMAIN_SIZE.high) == (2, 2**31 - 1)


def test_an_allocation_past_the_cap_is_refused_naming_the_largest_allowed_value():
    check_allocation("GRR", "domain_size", MAX_ALLOCATION_BYTES // 8, 8, "the aggregate")
    with pytest.raises(InvalidParameterError) as refused:
        check_allocation("GRR", "domain_size", MAX_ALLOCATION_BYTES // 8 + 1, 8, "the aggregate (an int64 count per item)")
    message = str(refused.value)
    assert "'domain_size' parameter of GRR is 268,435,457" in message and "2.0 GiB" in message
    assert f"The largest allowed domain_size is {MAX_ALLOCATION_BYTES // 8:,}." in message


def test_the_cap_is_read_when_a_protocol_is_built(monkeypatch):
    monkeypatch.setattr(_shared, "MAX_ALLOCATION_BYTES", 2**20)  # what the memory tests of the protocols patch
    with pytest.raises(InvalidParameterError, match="1.0 MiB"):
        check_allocation("OUE", "domain_size", 2**18, 8, "the aggregate")
