"""Which ids are one person (``_ids.py``): equal values of one kind, exactly; two kinds refused by name, never converted
(NumPy made ``[1, "1", 2.0]`` the strings ``"1", "1", "2.0"``)."""

from __future__ import annotations

import datetime

import numpy as np
import pytest

from dpdist._ids import id_array, id_kind, ids_missing, text_codes, type_label
from dpdist.errors import InvalidValueTypeError


def test_kinds_of_python_and_numpy_types():
    for kind_of in (int, float, bool, np.int64, np.uint8, np.float32, np.bool_):
        assert id_kind(kind_of) == "number"
    assert [id_kind(t) for t in (str, np.str_, bytes, np.bytes_)] == ["string", "string", "bytes", "bytes"]
    assert [id_kind(t) for t in (datetime.datetime, np.datetime64, datetime.date, np.timedelta64)] == [
        "datetime", "datetime", "date", "timedelta"]
    assert id_kind(tuple) == "tuple"


def test_a_list_of_two_kinds_is_refused_with_the_types_seen():
    with pytest.raises(InvalidValueTypeError, match=r"The 'privacy_id' argument of f must hold ids of one kind: numbers"
                                                    r".*Got ids of several kinds: number \(float, int\), string \(str\)"):
        id_array("f", [1, "1", 2.0])
    with pytest.raises(InvalidValueTypeError, match=r"'user' argument .*bytes \(bytes\), string \(str\)"):
        id_array("f", np.array(["a", b"a"], dtype=object), "user")


def test_ints_and_floats_are_kept_as_python_numbers_and_one_kind_passes_through():
    mixed = id_array("f", [2**53 + 1, 2.0**53, np.int64(3)])
    assert mixed.dtype == object and [type(v) for v in mixed] == [int, float, int]
    assert id_array("f", [1, 2]).dtype == np.int64 and id_array("f", ["a", "b"]).dtype.kind == "U"
    typed = np.array([1.0, 2.0])
    assert id_array("f", typed) is typed


def test_missing_ids_are_no_kind_and_are_found():
    ids = id_array("f", [1, None, float("nan"), 2.0])
    np.testing.assert_array_equal(ids_missing(ids), [False, True, True, False])
    np.testing.assert_array_equal(ids_missing(np.array(["2024-01-01", "NaT"], dtype="datetime64[D]")), [False, True])
    assert type_label(np.array([1, "a", None], dtype=object)) == "object of int, str"
    assert type_label(np.array(["a"])) == "str" and type_label(np.array([1])) == "int64"


def _partition(codes) -> set[frozenset[int]]:
    """Which rows are one person, whatever the codes' names."""
    rows: dict = {}
    for row, code in enumerate(codes):
        rows.setdefault(code, set()).add(row)
    return {frozenset(group) for group in rows.values()}


def test_numpy_and_python_floats_in_one_object_array_are_compared_exactly_as_on_a_cluster():
    """NumPy 2 has ``np.float32(0.1) == 0.1`` and ``== 0.1000000001`` (the
    Python float rounded to float32), so ``np.unique`` split the person ``np.float32(0.1)`` into several; by exact
    value the one-process rule and the cluster's (``distributed.bound_blocks``, exact hashes) are one."""
    from dpdist import distributed
    from dpdist.central._contributions import person_codes

    choices = [np.float32(0.1), 0.1, 0.1000000001, np.float16(0.1), float(np.float16(0.1)), np.float32(0.5), 0.5]
    rng = np.random.default_rng(0)
    for trial in range(200):
        rows = int(rng.integers(3, 40))
        picks = rng.integers(0, len(choices), rows)
        ids = np.empty(rows, dtype=object)
        ids[:] = [choices[i] for i in picks]
        codes = person_codes("f", ids, rows)
        assert _partition(codes) == _partition([float(choices[i]) for i in picks]), trial  # exact values
        kept = distributed.bound_blocks([(ids, np.arange(rows, dtype=float))], rows, seed=trial)
        cluster = np.empty(rows, dtype=np.uint64)
        cluster[kept.values.astype(int)] = kept.hashes
        assert _partition(codes) == _partition(cluster.tolist()), trial
    assert id_array("f", np.array([np.float32(0.1), 0.1], dtype=object)).tolist() == [float(np.float32(0.1)), 0.1]


def test_text_codes_are_equal_exactly_where_the_strings_are_and_none_for_other_values():
    texts = np.array(["b", "a\x00", "a", "b", "\ud800", "a", ""], dtype=object)
    codes, firsts = text_codes(texts)
    assert codes.tolist() == [0, 1, 2, 0, 3, 2, 4] and firsts.tolist() == [0, 1, 2, 4, 6]
    for mixed in ([1, "1"], ["a", ["a"]], [b"a", "a"]):
        assert text_codes(np.array(mixed + [None], dtype=object)[:-1]) is None
