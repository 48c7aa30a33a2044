"""Each person's rows of a query bounded before its releases, alike in one process and on a Dask cluster.

A query with ``privacy_id`` first keeps, of each person, at most ``max_groups`` groups and ``max_contributions`` rows
in each: per-person reservoirs (:mod:`dpdist.distributed._reservoirs`) keyed by a salted hash of the id, whose row
priorities come from one counter-based stream indexed by the row's position in the table.  The rows kept are then a
function of the rows, their order and the seed alone, not of how the table is cut into partitions: a Dask DataFrame
bounded partition by partition (its reservoirs merged by a tree reduction) keeps the rows a pandas frame of the same
rows in the same order keeps, and the query's releases, run on those rows with the same seed, are the same numbers.

On Dask the table is read three times (the partitions' lengths and missing cells; the reservoirs; the rows kept), and
only the rows kept come to this process: at most persons x ``max_groups`` x ``max_contributions`` rows of the columns
the query reads.  Rows of keys outside public ``keys`` are left out before the bounding (a per-row filter on public
values: a stable transformation, each person's rows depending on their own rows only).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._rng import root_seed_sequence
from ..errors import MissingValuesError
from ..distributed._reservoirs import Reservoir, reservoir_of_block, salt_of

__all__ = ["kept_rows", "is_dask", "dask_bounded"]


def _pair_keys(columns: Sequence[np.ndarray]) -> np.ndarray:
    """Each row's group as one string (the key columns' texts, joined by a unit separator): what the bounding hashes."""
    text = np.asarray(columns[0]).astype(str)
    for column in columns[1:]:
        text = np.char.add(np.char.add(text, "\x1f"), np.asarray(column).astype(str))
    return text


def _public(keys: list | None, by: Sequence[str]) -> np.ndarray | None:
    if keys is None:
        return None
    tuples = [key if isinstance(key, tuple) else (key,) for key in keys]
    return _pair_keys([np.array([key[i] for key in tuples], dtype=object) for i in range(len(by))]) if tuples \
        else np.array([], dtype=str)


def _bounded(ids: np.ndarray, key_columns: Sequence[np.ndarray], start: int, unit: tuple, keys: np.ndarray | None,
             salt: Any, root: np.random.SeedSequence) -> Reservoir:
    """The reservoir of rows ``start, start + 1, ...`` (its values: the rows' positions in the table)."""
    k, m = unit
    offsets = start + np.arange(len(ids), dtype=np.int64)
    groups = _pair_keys(key_columns) if key_columns else None
    if groups is not None and keys is not None:
        listed = np.isin(groups, keys)
        ids, offsets, groups = ids[listed], offsets[listed], groups[listed]
    return reservoir_of_block(ids, offsets.astype(np.float64), k, m, salt, root, 0, groups, offsets=offsets)


def _run(seed: int | None) -> tuple[Any, np.random.SeedSequence]:
    root = root_seed_sequence(seed)
    return salt_of(root, secure=seed is None), root


def kept_rows(ids: np.ndarray, key_columns: Sequence[np.ndarray], by: Sequence[str], keys: list | None, unit: tuple,
              seed: int | None) -> np.ndarray:
    """The positions, increasing, of the rows kept of a table held in this process (``unit``: ``(k, m)``)."""
    salt, root = _run(seed)
    reservoir = _bounded(np.asarray(ids), key_columns, 0, unit, _public(keys, by), salt, root)
    return np.sort(reservoir.values.astype(np.int64))


def is_dask(table: Any) -> bool:
    """Whether ``table`` is a Dask DataFrame (without importing Dask when it is not loaded)."""
    return type(table).__module__.split(".")[0] == "dask"


def _summary(part: Any, by: Sequence[str], refused: Sequence[str]) -> list[int]:
    """A partition's rows, rows of a missing key, and missing cells of each column whose missing values are refused."""
    keys = int(part[list(by)].isna().any(axis=1).sum()) if by else 0
    return [len(part), keys, *(int(part[name].isna().sum()) for name in refused)]


def _part_reservoir(part: Any, start: int, privacy_id: str, by: Sequence[str], unit: tuple, keys: np.ndarray | None,
                    salt: Any, root: np.random.SeedSequence) -> Reservoir:
    return _bounded(part[privacy_id].to_numpy(), [part[name].to_numpy() for name in by], start, unit, keys, salt, root)


def _part_rows(part: Any, start: int, kept: np.ndarray) -> Any:
    inside = kept[(kept >= start) & (kept < start + len(part))]
    return part.iloc[inside - start]


def dask_bounded(frame: Any, columns: list[str], privacy_id: str, by: Sequence[str], keys: list | None, unit: tuple,
                 refused: Sequence[str], seed: int | None, split_every: int = 8) -> Any:
    """The rows of the Dask DataFrame ``frame`` (its ``columns``) that :func:`kept_rows` keeps of the same rows in one
    process, as a pandas DataFrame; a missing key, or a missing value of a column in ``refused``, is refused first."""
    import dask  # lazy: optional extra dpdist[dask]
    from dask.delayed import delayed

    from ..distributed.dask import _merge_reservoirs, _tree_merge

    parts = frame[columns].to_delayed()
    summaries = np.array(dask.compute(*[delayed(_summary)(part, by, refused) for part in parts]),
                         dtype=np.int64).reshape(-1, 2 + len(refused))
    total = summaries.sum(axis=0)
    holed = [name for name, missing in zip(refused, total[2:]) if missing]
    for count, what in ((total[1], f"a missing key in {list(by)}"), (total[2:].sum(), f"missing values in {holed}")):
        if count:
            raise MissingValuesError(f"dpdist.query refuses rows with {what} (how many is in this error's 'count'): "
                                     "drop them in the table's engine, or pass missing='drop'. Nothing was released.",
                                     int(count))
    starts = np.concatenate([[0], np.cumsum(summaries[:, 0])[:-1]]).tolist()
    salt, root = _run(seed)
    public = _public(keys, by)
    states = [delayed(_part_reservoir, pure=True)(part, start, privacy_id, by, unit, public, salt, root)
              for part, start in zip(parts, starts)]
    reservoir = _tree_merge(states, None, split_every, _merge_reservoirs, None).compute() if states else None
    kept = np.sort(reservoir.values.astype(np.int64)) if reservoir is not None else np.zeros(0, dtype=np.int64)
    rows = dask.compute(*[delayed(_part_rows)(part, start, kept) for part, start in zip(parts, starts)])
    import pandas as pd  # lazy: Dask's own dependency

    return pd.concat(rows, ignore_index=True) if rows else frame[columns].head(0)
