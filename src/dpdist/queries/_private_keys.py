"""The private keys of a query per person, chosen from all of each person's rows before any row is bounded.

A query with ``privacy_id`` and ``group_by(..., keys=None)`` shows the keys a selection of
:mod:`dpdist.central._partitions` chooses (``selection``: truncated geometric thresholding, Gaussian thresholding, the
weighted Gaussian mechanism or its two rounds), run on the distinct (person, key) pairs of *all* the rows with each
pair's number of rows: the selection bounds each person to the ``max_groups`` keys they hold most rows of itself (the
two-round method reroutes a person's weight to their keys not shown by the first round, among all their keys).  The
keys shown are then public: each person's rows are bounded among them (:mod:`dpdist.queries._scale`), and every
statistic is released over exactly those keys, an empty one too.  Selecting from the rows a uniform bounding had
already kept would hide from the selection the keys it did not keep, and the second round's rerouting with them.

The pairs are counted per block (one block in this process, a partition on Dask and Spark) and merged by summing the
rows of equal pairs: the merged pairs, and so the keys shown for a seed, are the same whatever the partitions.  A
person is their id's keyed hash (the bounding's salt, secret without a seed); a key is its columns' text
(:func:`dpdist.queries._scale._pair_keys`), released as the values of its first row.

**Guarantee.**  The selection is :math:`(\\varepsilon_s, \\delta_s)`-DP per person under add/remove (its method's
statement in :mod:`dpdist.central._partitions`), reading each person's pairs only; every statistic after it reads
the keys it showed as public values (sequential composition: :func:`dpdist._guarantee.sequential`).  Two persons
whose ids' 64-bit hashes collide are counted as one (probability below :math:`n^2 2^{-65}` for :math:`n` persons, as
the bounding's reservoirs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

__all__ = ["KeyPairs", "key_pairs", "merged_pairs", "shown_keys"]


@dataclass(frozen=True)
class KeyPairs:
    """Distinct (person, key) pairs, sorted by person then key text, with their rows, and each key's values."""

    persons: np.ndarray  # uint64: the persons' keyed hashes
    texts: np.ndarray  # each pair's key, as text
    rows: np.ndarray  # int64: the pair's rows
    values: dict[str, Any]  # each key's text -> its value (a tuple for several key columns)


def key_pairs(hashes: np.ndarray, texts: np.ndarray, key_columns: Sequence[np.ndarray]) -> KeyPairs:
    """The distinct pairs of a block's rows (their persons' hashes, keys' texts and key columns)."""
    firsts = np.unique(texts, return_index=True)[1]
    values = {str(texts[i]): _key([column[i] for column in key_columns]) for i in firsts.tolist()}
    return _distinct(np.asarray(hashes, dtype=np.uint64), np.asarray(texts), np.ones(len(texts), np.int64), values)


def merged_pairs(blocks: Sequence[KeyPairs]) -> KeyPairs:
    """The pairs of several blocks' rows: equal pairs' rows summed, each key's values from the first block."""
    values: dict[str, Any] = {}
    for block in reversed(blocks):
        values.update(block.values)
    if not blocks:
        return KeyPairs(np.zeros(0, np.uint64), np.zeros(0, dtype=str), np.zeros(0, np.int64), {})
    return _distinct(np.concatenate([b.persons for b in blocks]), np.concatenate([b.texts for b in blocks]),
                     np.concatenate([b.rows for b in blocks]), values)


def shown_keys(pairs: KeyPairs, method: str, epsilon: float, delta: float, max_groups: int,
               rng: np.random.Generator) -> dict[str, Any]:
    """The keys ``method`` shows at ``(epsilon, delta)`` per person (:func:`dpdist.central._partitions.select_pairs`):
    ``{text: value}``."""
    from ..central._partitions import select_pairs  # lazy: loads scipy (0.4-2 s)

    persons = np.unique(pairs.persons, return_inverse=True)[1].reshape(-1)
    texts, codes = np.unique(pairs.texts, return_inverse=True)
    table = np.column_stack([persons, codes.reshape(-1), pairs.rows]).astype(np.int64)  # sorted: person, key
    shown = select_pairs(table, method, epsilon, delta, max_groups, rng)
    return {str(texts[code]): pairs.values[str(texts[code])] for code in shown.tolist()}


def _distinct(persons: np.ndarray, texts: np.ndarray, rows: np.ndarray, values: dict) -> KeyPairs:
    keys, codes = np.unique(texts, return_inverse=True)
    codes = codes.reshape(-1)
    order = np.lexsort((codes, persons))
    persons, codes, rows = persons[order], codes[order], rows[order]
    first = np.ones(persons.size, dtype=bool)
    first[1:] = (persons[1:] != persons[:-1]) | (codes[1:] != codes[:-1])
    starts = np.flatnonzero(first)
    summed = np.add.reduceat(rows, starts) if starts.size else rows[:0]
    return KeyPairs(persons[starts], keys[codes[starts]], summed.astype(np.int64), values)


def _key(parts: list) -> Any:
    """A key as a group-by names it: a value (Python's) for one column, a tuple for several."""
    python = tuple(part.item() if isinstance(part, np.generic) else part for part in parts)
    return python[0] if len(python) == 1 else python
