"""Per-person reservoirs (``distributed/_reservoirs.py``), in one process: a uniformly random choice of each person's
rows, the exact merge in any order, the secret salt, the refusals."""

from __future__ import annotations

import functools
import itertools
import random

import numpy as np
import pytest
from scipy import stats

from dpdist import central, distributed
from dpdist._rng import root_seed_sequence
from dpdist.distributed._reservoirs import reservoir_of_block, salt_of
from dpdist.errors import IncompatibleStateError, InvalidParameterError, InvalidValueTypeError, MissingValuesError

from reservoirs_support import cut as _cut, table as _table


@pytest.mark.parametrize("grouped", [False, True])
def test_merging_in_any_order_and_grouping_gives_the_one_process_state(grouped):
    ids, values, groups = _table()
    columns = (ids, values, groups) if grouped else (ids, values)
    root = root_seed_sequence(9)
    salt = salt_of(root, secure=False)
    parts = [reservoir_of_block(*block[:2], 3, 2 if grouped else 1, salt, root, index, *block[2:]) for index, block
             in enumerate(_cut(columns, 700))]
    one_process = distributed.bound_blocks(_cut(columns, 700), 3, max_groups=2 if grouped else None, seed=9)
    for trial in range(3):
        order = random.Random(trial).sample(range(len(parts)), len(parts))
        assert functools.reduce(lambda a, b: a.merge(b), [parts[i] for i in order]) == one_process
    pairs = [parts[i].merge(parts[i + 1]) if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    assert functools.reduce(lambda a, b: b + a, pairs) == one_process
    assert one_process.rows == ids.size and one_process.dropped == ids.size - one_process.kept
    persons = np.unique(one_process.hashes, return_inverse=True, return_counts=True)[2]
    if grouped:  # at most 3 rows per (person, group), 2 groups per person
        pairs_kept = np.unique(np.column_stack([one_process.hashes, one_process.groups]), axis=0)
        assert np.bincount(np.unique(pairs_kept[:, 0], return_inverse=True)[1]).max() <= 2
        assert persons.max() <= 6 and set(one_process.keys.values()) <= set(range(12))
    else:
        expected = np.minimum(np.bincount(ids), 3)
        assert sorted(persons.tolist()) == sorted(expected[expected > 0].tolist())
    assert distributed.bound_blocks(_cut(columns, 700), 3, max_groups=2 if grouped else None, seed=10) != one_process


@pytest.mark.parametrize("secure", [False, True])
def test_priorities_by_row_position_give_one_state_for_any_cut_of_the_table(secure):
    ids, values, groups = _table()
    root = root_seed_sequence(None if secure else 4)
    salt = salt_of(root, secure=secure)
    offsets = np.arange(ids.size)

    def bounded(cut):
        edges = [0, *cut, ids.size]
        return functools.reduce(lambda a, b: a.merge(b), [
            reservoir_of_block(ids[lo:hi], values[lo:hi], 2, 2, salt, root, index, groups[lo:hi], offsets[lo:hi])
            for index, (lo, hi) in enumerate(zip(edges[:-1], edges[1:]))])

    whole = bounded([])
    assert bounded([1, 700, 701, 1_900]) == whole and bounded([333]) == whole and whole.dropped > 0


@pytest.mark.slow  # a Monte Carlo of 1,500 seeded boundings (1 CPU-s); the other tests bound blocks in the fast loop
def test_each_person_keeps_a_uniformly_random_choice_of_rows_across_blocks():
    """A person's 5 rows in three blocks, k = 2: each of the 10 pairs kept with probability 1/10 (a fresh seed each)."""
    ids = [np.array([7, 1, 7]), np.array([2, 7]), np.array([7, 3, 7])]
    values = [np.array([0.0, 9.0, 1.0]), np.array([9.0, 2.0]), np.array([3.0, 9.0, 4.0])]
    pairs = {pair: i for i, pair in enumerate(itertools.combinations(range(5), 2))}
    seen = np.zeros(len(pairs))
    for seed in range(1_500):
        kept = distributed.bound_blocks(list(zip(ids, values)), 2, seed=seed)
        mine = sorted(int(v) for v in kept.values if v < 9)
        seen[pairs[tuple(mine)]] += 1
    assert stats.chisquare(seen).pvalue > 1e-3


def test_without_a_seed_the_salt_and_the_priorities_are_secret_and_fresh():
    ids, values, _ = _table(200)
    first = distributed.bound_blocks(_cut((ids, values), 500), 2)
    second = distributed.bound_blocks(_cut((ids, values), 500), 2)
    assert first.salt != second.salt and not np.array_equal(np.sort(first.hashes), np.sort(second.hashes))
    with pytest.raises(IncompatibleStateError, match="salt"):
        first.merge(second)


def test_bad_bounding_is_refused_by_name():
    with pytest.raises(InvalidParameterError, match="'max_contributions'"):
        distributed.bound_blocks([(np.array([1]), np.array([0.5]))], 0)
    with pytest.raises(InvalidParameterError, match="'max_groups' argument .* goes with 'groups'"):
        distributed.bound_blocks([(np.array([1]), np.array([0.5]))], 1, max_groups=2)
    with pytest.raises(InvalidParameterError, match="another number of ids than of values"):
        distributed.bound_blocks([(np.array([1]), np.array([0.5, 0.2]))], 1)
    with pytest.raises(MissingValuesError, match="missing ids") as refused:
        distributed.bound_blocks([(np.array([1.0, np.nan, np.nan]), np.array([0.5, 0.2, 0.1]))], 1)
    assert refused.value.count == 2 and "2" not in str(refused.value).replace("2 ", "")
    with pytest.raises(InvalidParameterError, match="with 'groups'"):
        distributed.group_release(distributed.bound_blocks([(np.array([1]), np.array([0.5]))], 1), central.count,
                                  epsilon=1.0)


# ---------------------------------------------------------------------- one person, one key, whatever the block's dtype
def _persons_and_rows(blocks, k=2):
    """(persons, rows kept of the most) after bounding ``blocks`` of (ids, values) in one process."""
    reservoir = distributed.bound_blocks(blocks, k, seed=3)
    _, counts = np.unique(reservoir.hashes, return_counts=True)
    return counts.size, int(counts.max(initial=0))


_ONE = np.ones(3)


@pytest.mark.parametrize("other", [np.array([1.0, 1.0, 1.0]), np.array([1, 1, 1], dtype=np.uint64),
                                   np.array([1, 1, 1], dtype=np.int8), np.array([True, True, True]),
                                   np.array([1, 1.0, np.int64(1)], dtype=object)])
def test_a_person_in_blocks_of_two_numeric_dtypes_is_one_person_as_in_memory(other):
    # person 1 holds 6 rows: 3 in an int64 block, 3 in a block of another numeric dtype; at k = 2 they keep 2 rows
    assert _persons_and_rows([(np.array([1, 1, 1]), _ONE)]) == (1, 2)
    assert _persons_and_rows([(np.array([1, 1, 1]), _ONE), (other, _ONE)]) == (1, 2)
    together = np.concatenate([np.array([1, 1, 1]), other])  # the one-process path on the same rows: one person
    assert set(central._contributions.person_codes("f", together, 6).tolist()) == {0}


@pytest.mark.parametrize("other", [np.array(["1", "1", "1"]), np.array(["1", "1", "1"], dtype=object),
                                   np.array([b"1", b"1", b"1"])])
def test_blocks_whose_ids_are_of_two_kinds_are_refused_by_name_not_counted_as_two_persons(other):
    # before: the int64 block and the str block were two persons, 2 + 2 = 4 rows kept of one person at k = 2
    for blocks in ([(np.array([1, 1, 1]), _ONE), (other, _ONE)], [(other, _ONE), (np.array([], dtype=object), _ONE[:0]),
                                                                  (np.array([1, 1, 1]), _ONE)]):
        with pytest.raises(InvalidValueTypeError, match=r"'privacy_id' ids of the blocks must be of one kind in every "
                                                        r"block: numbers \(.*\), strings or bytes.* Got .*int64"):
            distributed.bound_blocks(blocks, 2, seed=3)
    with pytest.raises(InvalidValueTypeError, match="one kind"):  # the one-process path refuses the same rows
        central._contributions.person_codes("f", [1, 1, 1, *other.tolist()], 6)


def test_ids_of_two_kinds_in_one_block_and_dates_are_refused_by_name():
    import datetime

    for ids in (np.array([1, "1", 2], dtype=object), np.array(["a", b"a", "b"], dtype=object)):
        with pytest.raises(InvalidValueTypeError, match="'privacy_id' ids of a block must be of one kind.*several"):
            distributed.bound_blocks([(ids, _ONE)], 2, seed=3)
    for ids in (np.array(["2024-01-01"] * 3, dtype="datetime64[D]"),
                np.array([datetime.datetime(2024, 1, 1)] * 3, dtype=object)):  # before: a RecursionError
        with pytest.raises(InvalidValueTypeError, match="'privacy_id' ids of a block must be numbers.*dates"):
            distributed.bound_blocks([(ids, _ONE)], 2, seed=3)


def test_numbers_are_keyed_by_exact_value_never_merged_by_their_bytes():
    # before: uint64 2**64 - 1 was int64 -1, and the float 1.5 the integer of the same 8 bytes: two persons as one
    big = np.array([2**64 - 1], dtype=np.uint64)
    assert _persons_and_rows([(np.array([-1]), _ONE[:1]), (big, _ONE[:1])], 1) == (2, 1)
    assert _persons_and_rows([(np.array([2.0**63]), _ONE[:1]), (np.array([2**63], dtype=np.uint64), _ONE[:1])], 1) == (1, 1)
    same_bytes = np.array([np.float64(1.5).view(np.int64)])
    assert _persons_and_rows([(np.array([1.5]), _ONE[:1]), (same_bytes, _ONE[:1])], 1) == (2, 1)
    exact = np.array([2**53 + 1, 2.0**53], dtype=object)  # as the one-process path: two persons, not rounded
    assert _persons_and_rows([(exact, _ONE[:2])], 1) == (2, 1)
    assert len(set(central._contributions.person_codes("f", list(exact), 2).tolist())) == 2
