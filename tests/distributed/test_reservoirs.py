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
from dpdist.errors import IncompatibleStateError, InvalidParameterError, MissingValuesError

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
    with pytest.raises(InvalidParameterError, match="ids for 2 values"):
        distributed.bound_blocks([(np.array([1]), np.array([0.5, 0.2]))], 1)
    with pytest.raises(MissingValuesError, match="missing ids") as refused:
        distributed.bound_blocks([(np.array([1.0, np.nan, np.nan]), np.array([0.5, 0.2, 0.1]))], 1)
    assert refused.value.count == 2 and "2" not in str(refused.value).replace("2 ", "")
    with pytest.raises(InvalidParameterError, match="with 'groups'"):
        distributed.group_release(distributed.bound_blocks([(np.array([1]), np.array([0.5]))], 1), central.count,
                                  epsilon=1.0)
