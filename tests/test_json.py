"""JSON from outside is parsed by one function, which refuses what Python's parser would turn into a
``RecursionError`` and, before parsing, a document of more values than its caller allows (48 MiB of
``[{},{},...]`` held 1.8 GB while parsed)."""

from __future__ import annotations

import tracemalloc

import pytest

from dpdist._json import loads, values_upper_bound


@pytest.mark.parametrize("text, counts", [
    ("1", (0, 1)),
    ("[]", (1, 2)),
    ('{"a": [1, 2, {"b": null}]}', (3, 8)),  # 3 containers; "a", [...], 1, 2, {...}, "b", null: 7 values, and one more
    ('["a,b", ":"]', (1, 5)),  # bytes inside strings count too: an upper bound
])
def test_the_count_is_at_least_every_value_and_container(text, counts):
    assert values_upper_bound(text) == counts
    assert values_upper_bound(text.encode()) == counts


def test_a_document_of_more_values_or_containers_than_allowed_is_refused_unparsed():
    text = b"[" + b"{}," * 99_999 + b"{}]"  # 100,001 containers, 200,001 values counted
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="more than 100,000 arrays and objects"):
            loads(text, most_containers=100_000)
        with pytest.raises(ValueError, match="more than 200,000 values"):
            loads(text, most_values=200_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak  # parsed, the 100,001 objects alone hold ~10 MB
    assert len(loads(text, most_values=200_001, most_containers=100_001)) == 100_000


def test_json_nested_deeper_than_python_parses_is_a_value_error():
    with pytest.raises(ValueError, match="nested too deeply"):
        loads("[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize("astral", ["😀".encode(), b"\\ud83d\\ude00", b"\\uD83D\\uDE00"])
def test_text_holding_a_character_past_u_ffff_counts_four_bytes_a_character(astral):
    """One such character makes Python keep the whole decoded text, and each string holding one, in 4 bytes a
    character (128 MiB of ``"😀a"`` strings held 2.24 GB)."""
    text = b'["' + astral + b'", "' + b"a" * 1000 + b'"]'
    with pytest.raises(ValueError, match="once decoded"):
        loads(text, most_text_bytes=4 * len(text) - 1)
    assert len(loads(text, most_text_bytes=4 * len(text))[1]) == 1000
    plain = b'["\\u00e9\\ud7ff", "' + "é".encode() * 500 + b'"]'  # within U+FFFF: not counted so
    assert len(loads(plain, most_text_bytes=len(plain))) == 2


def test_loads_within_a_bound_takes_the_values_those_bytes_should_hold():
    from dpdist._json import loads_within, most_values_within

    most_values, most_containers = most_values_within(1 << 20)
    assert (most_values, most_containers) == (131_072, 131_072)
    fitting = b"[" + b"0," * (most_values - 2) + b"0]"  # most_values - 1 values counted, and the array
    assert len(loads_within(fitting, 1 << 20)) == most_values - 1
    with pytest.raises(ValueError, match="more than 131,072 values"):
        loads_within(b"[" + b"0," * most_values + b"0]", 1 << 20)
