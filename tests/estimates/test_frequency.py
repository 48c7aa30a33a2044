"""A frequency estimate (dpdist.estimates._frequency) is array-like, indexable and plots."""

from __future__ import annotations


import numpy as np
import pytest

from dpdist import local


def test_a_frequency_estimate_is_array_like_indexable_and_plots():
    import matplotlib

    matplotlib.use("Agg")
    proto = local.make("grr", epsilon=2.0, labels=["home", "cart", "help"])
    estimate = proto.estimate(proto.simulate(["home"] * 60 + ["cart"] * 30 + ["help"] * 10, rng=1))
    assert len(estimate) == 3
    np.testing.assert_array_equal(np.asarray(estimate), estimate.frequencies)
    assert estimate[0] == estimate.frequencies[0] == estimate["home"]
    np.testing.assert_array_equal(estimate[1:], estimate.frequencies[1:])
    assert list(estimate) == estimate.frequencies.tolist()
    with pytest.raises(KeyError, match="basket"):
        estimate["basket"]
    ax = estimate.plot(truth=[0.6, 0.3, 0.1])
    assert [tick.get_text() for tick in ax.get_xticklabels()] == ["home", "cart", "help"]
    assert len(estimate.plot(k=2).patches) == 2
