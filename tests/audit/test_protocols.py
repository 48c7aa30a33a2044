"""A protocol as a randomizer to audit (dpdist.audit._protocols)."""

from __future__ import annotations


import pytest

from dpdist import audit
from dpdist.errors import InvalidParameterError


# public helpers of dpdist.audit accept what they cannot mean.
def test_protocol_randomizer_refuses_a_non_protocol():
    with pytest.raises(InvalidParameterError, match="protocol"):
        audit.protocol_randomizer(42)
