"""Fixtures of the DataFrame tests."""

from __future__ import annotations


import numpy as np
import pytest



@pytest.fixture
def pandas_table():
    pd = pytest.importorskip("pandas")
    return pd.DataFrame({"age": np.arange(100.0), "group": [0, 1] * 50})
