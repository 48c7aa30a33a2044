"""Contribution bounding at scale (issue 65 item 4), in one process: the keyed hash of the ids, the per-person
reservoirs and their exact merge, the group-by on the driver."""

from __future__ import annotations

import functools
import itertools
import random
import warnings

import numpy as np
import pytest
from scipy import stats

from dpdist import central, distributed
from dpdist._rng import root_seed_sequence
from dpdist.distributed._hashing import hash_ids, siphash24
from dpdist.distributed._reservoirs import reservoir_of_block, salt_of
from dpdist.errors import IncompatibleStateError, InvalidParameterError, MissingValuesError

pd_hashing = pytest.importorskip("pandas._libs.hashing")


def test_the_hash_is_siphash_2_4_as_the_paper_and_pandas_compute_it():
    # the paper's reference vectors (key 00..0f; messages 00..0e of 0 and 15 bytes)
    messages = np.zeros((2, 16), dtype=np.uint8)
    messages[1, :15] = np.arange(15)
    assert siphash24(bytes(range(16)), messages, np.array([0, 15])).tolist() == [0x726FDB47DD0E0E31, 0xA129CA6149BE45E5]
    key = b"salt of one run!"
    words = np.array(["", "a", "seven77", "eight888", "nine99999", "é漢字", "x" * 41], dtype=object)
    np.testing.assert_array_equal(hash_ids(words, key), pd_hashing.hash_object_array(words, key.decode(), "utf8"))
    numbers = np.array([0, 1, -1, 2**62, -(2**63)], dtype=np.int64)
    as_bytes = np.array([int(v).to_bytes(8, "little", signed=True) for v in numbers], dtype=object)
    np.testing.assert_array_equal(hash_ids(numbers, key), pd_hashing.hash_object_array(as_bytes, key.decode(), "utf8"))
    # one person, one hash, whatever the column's type: an integral float is the integer, a U array the strings
    np.testing.assert_array_equal(hash_ids(np.array([3.0, -0.0]), key), hash_ids(np.array([3, 0]), key))
    np.testing.assert_array_equal(hash_ids(np.array(["ab", "c"]), key), hash_ids(np.array(["ab", "c"], object), key))
    assert hash_ids(np.array([3]), key) != hash_ids(np.array([3]), b"another salt!!!!")


def _table(persons=1_500, seed=0):
    rng = np.random.default_rng(seed)
    ids = np.repeat(np.arange(persons), rng.geometric(0.1, persons))
    rng.shuffle(ids)
    return ids, rng.random(ids.size), rng.integers(0, 12, ids.size)


def _cut(columns, size):
    return [tuple(column[start:start + size] for column in columns) for start in range(0, columns[0].size, size)]


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


def test_the_reservoir_is_released_per_person_and_per_group_on_the_driver():
    ids, values, groups = _table()
    kept = distributed.bound_blocks(_cut((ids, values), 1_000), 4, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every person already within the bound: nothing more left out
        released = kept.release(central.quantiles, [0.5], epsilon=1.0, bounds=(0, 1), rng=2)
    assert released.guarantee.unit == "person" and abs(released.values[0] - 0.5) < 0.05
    grouped = distributed.bound_blocks(_cut((ids, values, groups), 1_000), 4, max_groups=2, seed=1)
    shown = distributed.group_release(grouped, central.count, epsilon=0.5, selection_epsilon=0.5,
                                      selection_delta=1e-6, rng=3)
    assert list(shown.keys()) == list(range(12)) and shown.guarantee.epsilon == pytest.approx(1.5)
    assert shown.details["selection"]["rule"].startswith("truncated geometric")
    listed = distributed.group_release(grouped, central.cdf, epsilon=1.0, bounds=(0, 1), groups=[0, 99], rng=3)
    assert list(listed.keys()) == [0, 99] and listed.guarantee.epsilon == pytest.approx(2.0)


def test_bad_bounding_is_refused_by_name():
    with pytest.raises(InvalidParameterError, match="'max_contributions'"):
        distributed.bound_blocks([(np.array([1]), np.array([0.5]))], 0)
    with pytest.raises(InvalidParameterError, match="'max_groups' argument .* goes with 'groups'"):
        distributed.bound_blocks([(np.array([1]), np.array([0.5]))], 1, max_groups=2)
    with pytest.raises(InvalidParameterError, match="ids for 2 values"):
        distributed.bound_blocks([(np.array([1]), np.array([0.5, 0.2]))], 1)
    with pytest.raises(MissingValuesError, match="missing ids") as refused:
        distributed.bound_blocks([(np.array([1.0, np.nan, np.nan]), np.array([0.5, 0.2, 0.1]))], 1)
    assert refused.value.count == 2 and "2" not in str(refused.value).replace("2 ", "")
    with pytest.raises(InvalidParameterError, match="with 'groups'"):
        distributed.group_release(distributed.bound_blocks([(np.array([1]), np.array([0.5]))], 1), central.count,
                                  epsilon=1.0)
