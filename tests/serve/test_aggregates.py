"""Stored pieces merged at once (``serve/_aggregates._merged_at_once``) give what merging them one by one gives.

A fold (about one log row per group commit) and every read of a campaign's
aggregate merge its stored pieces.  Each piece is validated as
:meth:`Aggregator.from_dict` validates it; from :data:`AT_ONCE` pieces on, the
statistics are checked as one block (:func:`statistics_possible`) and summed
once.  The result must be the per-piece merge's, byte for byte, and any corrupt
piece must be refused with the per-piece path's own error.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import dpdist.serve._aggregates as aggregates
from dpdist import local
from dpdist.errors import IncompatibleStateError
from dpdist.local._state_validation import statistic_problem, statistics_possible
from dpdist.serve._deltas import encode_delta, statistic_bytes

CONFIGS = {
    "grr": {"protocol": "grr", "epsilon": 1.0, "domain_size": 8},  # every report adds 1
    "ss": {"protocol": "ss", "epsilon": 1.0, "domain_size": 8},  # every report adds k
    "olh": {"protocol": "olh", "epsilon": 1.0, "domain_size": 16},
    "haar-hrr": {"protocol": "haar-hrr", "epsilon": 1.0, "bins": 16, "bounds": [0, 1]},  # signed, its own check
    "sw": {"protocol": "sw", "epsilon": 1.0},
}


def _values(name: str, rng, size: int):
    return rng.random(size) if name in ("haar-hrr", "sw") else rng.integers(0, 8, size)


def _rows(name: str, pieces: int, seed: int = 3) -> list[tuple]:
    """A stored part (kind 0) then ``pieces - 1`` log rows, each a real aggregate of a few reports."""
    protocol, rng = local.from_config(CONFIGS[name]), np.random.default_rng(seed)
    rows = []
    for index in range(pieces):
        aggregate = protocol.aggregator()
        aggregate.add(protocol.privatize(_values(name, rng, int(rng.integers(1, 6))), rng=rng))
        if index % 3 == 1:
            aggregate.rejected = {"out_of_range": index, "malformed": 1}
        statistic = aggregate.statistic.astype("<i8")
        stored = statistic_bytes(statistic) if index == 0 else encode_delta(statistic)
        rows.append((0 if index == 0 else 1, aggregate.n, stored, json.dumps(aggregate.rejected),
                     json.dumps({"malformed_batch": index % 2}), index))
    return rows


def _one_by_one(monkeypatch, protocol, rows):
    monkeypatch.setattr(aggregates, "AT_ONCE", 1 << 30)
    try:
        return aggregates._merge_rows(protocol, "<i8", rows)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("pieces", [aggregates.AT_ONCE, 40])
def test_pieces_merged_at_once_are_what_merging_them_one_by_one_gives(monkeypatch, name, pieces):
    protocol, rows = local.from_config(CONFIGS[name]), _rows(name, pieces)
    assert aggregates._merged_at_once(protocol, "<i8", rows) is not None  # the block path is taken
    together, refused, batches = aggregates._merge_rows(protocol, "<i8", rows)
    alone, refused_alone, batches_alone = _one_by_one(monkeypatch, protocol, rows)
    assert together.statistic.dtype == alone.statistic.dtype and together.statistic.tobytes() == alone.statistic.tobytes()
    assert (together.n, list(together.rejected.items())) == (alone.n, list(alone.rejected.items()))
    assert (refused, batches) == (refused_alone, batches_alone)


def _corrupt(rows: list[tuple], index: int, how: str) -> list[tuple]:
    kind, n, statistic, rejected, refused, batches = rows[index]

    def stored(values: list[int]) -> bytes | None:
        array = np.array(values, np.int64)
        return statistic_bytes(array) if kind == 0 else encode_delta(array)

    changes = {
        "one too many": lambda: (n, stored([n + 1] + [0] * 7), rejected),  # n + 1 reports' worth, each adds 1
        "negative": lambda: (n, stored([-1, n + 1] + [0] * 6), rejected),
        "n too small": lambda: (0, statistic, rejected),
        "n negative": lambda: (-1, statistic, rejected),
        "n a float": lambda: (1.5, statistic, rejected),
        "rejected not json": lambda: (n, statistic, "{oops"),
        "rejected negative": lambda: (n, statistic, '{"x": -1}'),
        "short statistic": lambda: (n, statistic[:-8] if kind == 0 else b"D\x00\x01\x02", rejected),
        "unknown form": lambda: (n, b"Q\x00" if kind else b"\x00" * 5, rejected),
    }
    n, statistic, rejected = changes[how]()
    return [*rows[:index], (kind, n, statistic, rejected, refused, batches), *rows[index + 1:]]


@pytest.mark.parametrize("how", ["one too many", "negative", "n too small", "n negative", "n a float", "rejected not json",
                                 "rejected negative", "short statistic", "unknown form"])
@pytest.mark.parametrize("index", [0, 5, 11])
def test_a_corrupt_piece_among_many_is_refused_as_merging_one_by_one_refuses_it(monkeypatch, how, index):
    protocol = local.from_config(CONFIGS["grr"])
    rows = _corrupt(_rows("grr", 12), index, how)
    with pytest.raises(Exception) as alone:
        _one_by_one(monkeypatch, protocol, rows)
    with pytest.raises(Exception) as together:
        aggregates._merge_rows(protocol, "<i8", rows)
    assert type(together.value) is type(alone.value) and str(together.value) == str(alone.value)
    assert isinstance(together.value, (IncompatibleStateError, ValueError))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_block_is_possible_exactly_when_every_row_is(name):
    protocol, rng = local.from_config(CONFIGS[name]), np.random.default_rng(11)
    rows = _rows(name, 6, seed=5)
    pieces = [np.frombuffer(rows[0][2], "<i8")] + [aggregates.decode_delta(row[2], "<i8", protocol.statistic_size)
                                                   for row in rows[1:]]
    counts = [row[1] for row in rows]
    for trial in range(60):
        values = np.array(pieces, dtype=np.float64)
        ns = list(counts)
        if trial:  # one change of one entry or count: some are still possible, most are not
            row, column = int(rng.integers(0, len(rows))), int(rng.integers(0, values.shape[1]))
            change = rng.choice(["plus one", "minus one", "half", "count up", "count down", "nan"])
            if change == "count up":
                ns[row] += 1
            elif change == "count down":
                ns[row] = max(0, ns[row] - 1)
            else:
                values[row, column] += {"plus one": 1.0, "minus one": -1.0, "half": 0.5, "nan": np.nan}[change]
        expected = all(statistic_problem(protocol, values[k], ns[k]) is None for k in range(len(ns)))
        assert statistics_possible(protocol, values, ns) == expected
