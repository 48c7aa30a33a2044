"""The document reader's fast path for lists of numbers (dpdist._number_lists) says yes only where the per-entry code
accepts every entry, with the same values: random lists drawn from plain numbers and from the values a corrupted
document holds (NaN, infinity, booleans, strings, numpy scalars, ints too large for a float, out of the limits)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist._documents import ABSOLUTE, RELATIVE, _same_value, check_document, read_numbers, read_value
from dpdist._number_lists import follow_number_schema, plain_list, plain_numbers, same_numbers
from dpdist.errors import MalformedDocumentError

_ODD = [math.nan, math.inf, -math.inf, True, False, "1", np.float64(0.5), np.int64(3), 10**400, 2**60 + 1, -2.0, 1.5,
        None, [1.0]]
_SCHEMAS = [{"type": "number"}, {"type": ["number", "null"]}, {"type": "integer"}, {"type": ["integer", "null"]},
            {"type": "number", "minimum": 0, "maximum": 1}, {"type": "number", "exclusiveMinimum": 0,
                                                               "exclusiveMaximum": 1.0},
            {"type": "number", "enum": [0.5]}, {"type": "string"}]


def _lists(seed: int, count: int = 400) -> list[list]:
    rng = np.random.default_rng(seed)
    lists = []
    for _ in range(count):
        size = int(rng.integers(0, 9))
        plain = [float(x) for x in rng.uniform(0, 1, size)]
        if rng.random() < 0.3:
            plain = [int(x) for x in rng.integers(0, 3, size)]
        for _ in range(int(rng.integers(0, 3)) if size else 0):
            plain[int(rng.integers(0, size))] = _ODD[int(rng.integers(0, len(_ODD)))]
        lists.append(plain)
    return lists


def _accepts(check, *arguments) -> bool:
    try:
        check(*arguments)
    except (MalformedDocumentError, OverflowError, TypeError):
        return False
    return True


@pytest.mark.parametrize("schema", _SCHEMAS)
def test_a_list_passes_at_once_only_where_every_entry_passes(schema):
    said_yes = 0
    for entries in _lists(1):
        if follow_number_schema(entries, schema):
            said_yes += 1
            assert all(_accepts(check_document, entry, schema, "t") for entry in entries), entries
    assert said_yes > 0 or schema.get("enum") or schema["type"] == "string"


def test_numbers_read_at_once_are_the_numbers_read_one_by_one():
    read = 0
    for entries in _lists(2):
        at_once = plain_numbers(entries)
        if at_once is None:
            continue
        read += 1
        one_by_one = np.array([math.nan if entry is None else float(entry) for entry in entries])
        assert all(entry is None or (type(entry) in (int, float) and math.isfinite(entry)) for entry in entries)
        np.testing.assert_array_equal(at_once, one_by_one)
        np.testing.assert_array_equal(read_numbers(entries, "t", "x"), one_by_one)
    assert read > 50


@pytest.mark.parametrize("kind", [float, int, str, float | None])
def test_lists_read_at_once_are_the_lists_read_one_by_one(kind):
    for entries in _lists(3) + [["a", "b", "c", "d"], ["a", "b", 1, "d"]]:
        at_once = plain_list(kind if kind in (float, int, str) else float, entries, math.nan if kind is float else None)
        if at_once is None:
            continue
        one_by_one = [read_value(kind, entry, "t", "x") for entry in entries]
        assert [type(value) for value in at_once] == [type(value) for value in one_by_one]
        assert np.array_equal(np.array(at_once, dtype=object), np.array(one_by_one, dtype=object)) or all(
            (a is b) or (a == b) or (isinstance(a, float) and math.isnan(a) and math.isnan(b))
            for a, b in zip(at_once, one_by_one))


def test_lists_compared_at_once_are_the_same_entry_by_entry():
    rng = np.random.default_rng(4)
    agreed = 0
    for entries in _lists(5):
        if not entries:
            continue
        for written in (list(entries), [x * (1 + 1e-10) if type(x) is float else x for x in entries],
                        [x + 1e-11 if type(x) is float else x for x in entries],
                        [x * (1 + 1e-8) if type(x) is float else x for x in entries],
                        np.asarray(rng.uniform(0, 1, len(entries))), np.full(len(entries), math.nan)):
            if same_numbers(written, entries, RELATIVE, ABSOLUTE):
                agreed += 1
                assert all(_same_value(mine, theirs) for mine, theirs in zip(written, entries)), (written, entries)
    assert agreed > 50
