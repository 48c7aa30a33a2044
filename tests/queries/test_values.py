"""Which values of a query are equal (``_values.py``): one rule per type of the schema, each value on its own."""

from __future__ import annotations

import decimal

import numpy as np
import pytest

from dpdist.errors import InvalidParameterError
from dpdist.queries._values import check_keys, kind_of, staged, texts

nw = pytest.importorskip("narwhals.stable.v2")


def test_numbers_are_one_text_per_value_whatever_their_type():
    """An int64 1, a float64 1.0, a boolean true, a Python 1 and a Decimal 1.0 are "1"; 2**53 + 1 and 2.0**53 stay
    two; -0.0 is 0; every other float its shortest round-trip text, in typed arrays as in Python numbers."""
    assert texts(np.array([1, 2**53 + 1]), "number").tolist() == ["1", "9007199254740993"]
    assert texts(np.array([1.0, 2.0**53, -0.0, 0.1, 1e20, np.inf]), "number").tolist() == [
        "1", "9007199254740992", "0", "0.1", "100000000000000000000", "inf"]
    assert texts(np.array([True, False]), "boolean").tolist() == ["1", "0"]
    python = np.array([1, 1.0, np.float32(0.5), decimal.Decimal("1.00"), decimal.Decimal("0.10")], dtype=object)
    assert texts(python, "number").tolist() == ["1", "1", "0.5", "1", "0.1"]
    rng = np.random.default_rng(0)
    floats = rng.standard_normal(10_000) * 10.0 ** rng.integers(-30, 30, 10_000)
    assert texts(floats, "number").tolist() == texts(floats.astype(object), "number").tolist()


def test_any_other_value_is_its_text_each_on_its_own():
    values = np.array(["a", 1, 1.0, None, [3], b"x"], dtype=object)
    assert staged(values, "text").tolist() == ["a", "1", "1.0", None, "[3]", "b'x'"]
    one = staged(values[:1], "text")
    assert one.tolist() == ["a"] and staged(np.array(["a", 2], dtype=object), "text")[0] == one[0]


def test_the_kinds_come_from_the_schema():
    assert [kind_of(dtype) for dtype in (nw.Boolean(), nw.Int8(), nw.Float32(), nw.Datetime(), nw.String(),
                                         nw.Object(), nw.List(nw.Int64()))] == [
        "boolean", "number", "number", "instant", "text", "text", "text"]


def test_a_public_key_not_of_its_columns_kind_is_refused_by_name():
    kinds, schema = {"region": "text", "age": "number"}, {"region": nw.String(), "age": nw.Int64()}
    check_keys("q", [("north", 30), ("south", 40.5)], ("region", "age"), kinds, schema)
    for key, named in ((("north", True), "numbers .* column 'age'"), ((1, 30), "strings .* column 'region'")):
        with pytest.raises(InvalidParameterError, match=named):
            check_keys("q", [("north", 30), key], ("region", "age"), kinds, schema)
