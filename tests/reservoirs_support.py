"""A table of persons with several rows each, cut in blocks: shared by tests/distributed/test_reservoirs.py and
test_groups.py."""

from __future__ import annotations

import numpy as np


def table(persons=1_500, seed=0):
    rng = np.random.default_rng(seed)
    ids = np.repeat(np.arange(persons), rng.geometric(0.1, persons))
    rng.shuffle(ids)
    return ids, rng.random(ids.size), rng.integers(0, 12, ids.size)


def cut(columns, size):
    return [tuple(column[start:start + size] for column in columns) for start in range(0, columns[0].size, size)]
