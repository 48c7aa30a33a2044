"""Issue 36 item 5: the dead ends a new user hit in the Python API.

Each test names the dead end it closes; each failed on the code before the fix.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpdist import central, local
from dpdist.errors import EachValueANewUserWarning, InvalidParameterError, InvalidValueTypeError


def test_make_names_a_misspelt_parameter_rather_than_a_missing_one():
    with pytest.raises(InvalidParameterError) as raised:
        local.make("oue", eps=1.0, domain_size=8)
    message = str(raised.value)
    assert "unknown parameter(s) ['eps']" in message and "did you mean 'epsilon'" in message
    assert "needs" not in message
    with pytest.raises(InvalidParameterError, match="did you mean 'epsilon'"):
        local.make("auto", eps=1.0, domain_size=8)
    with pytest.raises(InvalidParameterError, match="did you mean 'postprocess'"):
        proto = local.make("grr", epsilon=1.0, domain_size=4)
        proto.estimate(proto.simulate([0, 1], rng=0), postproces="norm")


def test_make_takes_protocol_names_in_any_case():
    assert local.make("OUE", epsilon=1.0, domain_size=8) == local.make("oue", epsilon=1.0, domain_size=8)
    assert local.make("L_GRR", epsilon=2.0, epsilon_1=1.0, domain_size=4).name == "l-grr"
    assert local.make("Auto", epsilon=1.0, domain_size=4).name == "grr"
    with pytest.raises(InvalidParameterError, match="Got 'OEU' instead \\(did you mean 'oue'\\?\\)"):
        local.make("OEU", epsilon=1.0, domain_size=8)


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


def test_categorical_protocols_take_whole_floats():
    """A pandas integer column with missing values dropped is float64: `GRR.privatize([0.0, 1.0])` was refused."""
    for name in ("grr", "oue", "olh", "hr"):
        proto = local.make(name, epsilon=1.0, domain_size=4)
        np.testing.assert_array_equal(proto.privatize([0.0, 1.0, 3.0], rng=5), proto.privatize([0, 1, 3], rng=5))
        assert proto.simulate(np.array([2.0, 2.0]), rng=1) == proto.simulate([2, 2], rng=1)
    grr = local.make("grr", epsilon=1.0, domain_size=4)
    with pytest.raises(InvalidValueTypeError, match="not whole numbers, e.g. 0.5"):
        grr.privatize([0.5, 1.0])
    with pytest.raises(InvalidValueTypeError, match="missing values"):
        grr.privatize([1.0, np.nan])


def test_longitudinal_privatize_warns_that_each_value_is_a_new_user():
    proto = local.make("l-osue", epsilon=2.0, epsilon_1=1.0, domain_size=4)
    with pytest.warns(EachValueANewUserWarning, match="different user.*client\\(\\)"):
        proto.privatize([0, 1, 1], rng=0)
    with warnings.catch_warnings():  # one device through its memo: no warning
        warnings.simplefilter("error")
        client = proto.client()
        client.report(1, np.random.default_rng(0))
        local.make("grr", epsilon=1.0, domain_size=4).privatize([0, 1], rng=0)


def test_central_quantiles_take_numpy_order():
    x = np.random.default_rng(3).uniform(0, 10, 2_000)
    q = [0.25, 0.5, 0.75]
    new = central.quantiles(x, q, epsilon=1.0, bounds=(0, 10), rng=4)
    keywords = central.quantiles(x, q=q, epsilon=1.0, bounds=(0, 10), rng=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the older order with q by keyword is not deprecated
        older = central.quantiles(x, 1.0, (0, 10), q=q, rng=4)
    with pytest.warns(DeprecationWarning, match="q second"):
        positional = central.quantiles(x, 1.0, (0, 10), q, rng=4)
    for release in (keywords, older, positional):
        np.testing.assert_array_equal(release.values, new.values)
    assert central.quantiles(x, 0.5, epsilon=1.0, bounds=(0, 10), rng=4).q.tolist() == [0.5]
    with pytest.raises(InvalidParameterError, match="epsilon"):
        central.quantiles(x, [0.5], (0, 10))  # numpy's order without the keywords
    with pytest.raises(InvalidParameterError, match="bounds"):
        central.quantiles(x, [0.5], epsilon=1.0)


def test_distributed_simulate_takes_a_dask_series_and_never_prints_a_repr():
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    from dpdist import distributed

    values = pd.Series(np.random.default_rng(0).integers(0, 8, 1_000), name="item")
    series = dd.from_pandas(values, npartitions=3)
    proto = local.make("grr", epsilon=1.0, domain_size=8)
    parts = [part.compute().to_numpy() for part in series.partitions]
    result = distributed.simulate(proto, series, seed=5)
    assert result == distributed.simulate_blocks(proto, parts, seed=5) and result.n == 1_000
    frame = dd.from_pandas(pd.DataFrame({"item": values, "secret": ["x" * 50] * 1_000}), npartitions=2)
    with pytest.raises(InvalidParameterError) as raised:
        distributed.simulate(proto, frame, seed=5)
    assert "DataFrame" in str(raised.value) and "xxxxx" not in str(raised.value) and len(str(raised.value)) < 300
