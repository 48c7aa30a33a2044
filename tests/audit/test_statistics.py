"""The audit's statistics (dpdist.audit._statistics)."""

from __future__ import annotations


import pytest

from dpdist import audit
from dpdist.errors import InvalidParameterError


@pytest.mark.parametrize("k, n, a", [(5, 3, 0.01), (1, 3, 2.0), (-1, 3, 0.01)])
def test_clopper_pearson_refuses_impossible_counts_or_levels(k, n, a):
    with pytest.raises(InvalidParameterError):
        audit.clopper_pearson_lower(k, n, a)
