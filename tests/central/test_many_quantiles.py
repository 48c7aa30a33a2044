"""Many quantiles at once (dpdist.central.many_quantiles): ``quantiles`` takes numpy's argument order."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpdist import central
from dpdist.errors import InvalidParameterError
import math
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from dpdist import local
from dpdist.errors import DPDistError


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


@pytest.mark.parametrize("bounds", [(0.0, 1e-320), (0.0, 1e-310), (1e15, 1e15 + 1)])
def test_degenerate_bounds_are_refused_by_name(bounds):
    with pytest.raises(InvalidParameterError, match=r"'bounds' parameter .*room for 2\*\*22 distinct grid steps"):
        central.quantiles(np.zeros(3), [0.5], epsilon=1.0, bounds=bounds, method="tree", rng=0)
    with pytest.raises(InvalidParameterError, match=r"'bounds' parameter of SW"):
        local.make("sw", epsilon=1.0, bounds=bounds)


_FLOATS = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def _quantile_calls(draw):
    lo = draw(_FLOATS)
    hi = lo + draw(st.one_of(st.floats(min_value=5e-324, max_value=1e308), st.sampled_from([1e-300, 1e-5, 1.0, 1e10])))
    n = draw(st.integers(0, 30))
    kind = draw(st.sampled_from(["inside", "anything", "missing"]))
    if kind == "inside" and math.isfinite(hi):
        x = draw(st.lists(st.floats(min_value=lo, max_value=hi), min_size=n, max_size=n))
    elif kind == "missing":
        x = [math.nan] * n
    else:
        x = draw(st.lists(st.floats(), min_size=n, max_size=n))
    q = sorted(set(draw(st.lists(st.floats(min_value=0.001, max_value=0.999), min_size=1, max_size=5))))
    method = draw(st.sampled_from(["tree", "aq", "jointexp", "slice"]))
    options = {"interval_share": draw(st.sampled_from([None, 0.3]))} if method in ("aq", "jointexp") else {}
    return {"x": np.array(x, dtype=float), "q": q, "epsilon": draw(st.sampled_from([1e-3, 0.1, 1.0, 10.0, 50.0])),
            "bounds": (lo, hi), "method": method, **options}


# 150 generated calls (0.4 CPU-s): the whole suite; the fast loop keeps the two cases found here, the degenerate
# bounds (test_degenerate_bounds_are_refused_by_name), and every quantile method's finite values on empty, single,
# many and out-of-bounds data (tests/central/test_common.py, test_every_release_returns_a_result_whatever_the_data)
@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(_quantile_calls())
@example({"x": np.zeros(0), "q": [0.5], "epsilon": 1e-3, "bounds": (0.0, 1e-320), "method": "tree"})  # was NaN
@example({"x": np.array([1e15]), "q": [0.5], "epsilon": 1.0, "bounds": (1e15, 1e15 + 1), "method": "tree"})
def test_no_nan_leaves_quantiles(call):
    x = call.pop("x")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            released = central.quantiles(x, rng=0, **call)
    except DPDistError:
        return  # a refusal names its argument; what must not happen is a NaN or a raw exception
    for name in ("values", "low", "high"):
        value = getattr(released, name)
        assert value is None or not np.isnan(np.asarray(value, dtype=float)).any(), (name, value, call)
