"""Each person's rows of a query bounded before its releases, alike in one process and on a Dask or Spark cluster.

A query with ``privacy_id`` first keeps, of each person, at most ``max_groups`` groups and ``max_contributions`` rows
in each: per-person reservoirs (:mod:`dpdist.distributed._reservoirs`) keyed by a salted hash of the id, whose row
priorities come from one counter-based stream indexed by the row's position in the table.  The rows kept are then a
function of the rows, their order and the seed alone, not of how the table is cut into partitions: a Dask DataFrame
or a PySpark one bounded partition by partition (its reservoirs merged by a tree reduction) keeps the rows a pandas frame of the same
rows in the same order keeps, and the query's releases, run on those rows with the same seed, are the same numbers.

On Dask and Spark the table is read three times (the partitions' lengths and missing cells; the reservoirs; the rows kept), and
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

__all__ = ["kept_rows", "cluster_of", "cluster_bounded"]


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


def cluster_of(table: Any) -> str | None:
    """``"dask"`` or ``"pyspark"`` for a Dask or a PySpark DataFrame, else None (importing neither)."""
    root = type(table).__module__.split(".")[0]
    return root if root in ("dask", "pyspark") else None


def _summary(index: int, part: Any, by: Sequence[str], refused: Sequence[str]) -> list[int]:
    """A partition's rows, rows of a missing key, and missing cells of each column whose missing values are refused."""
    keys = int(part[list(by)].isna().any(axis=1).sum()) if by else 0
    return [len(part), keys, *(int(part[name].isna().sum()) for name in refused)]


def _part_reservoir(index: int, part: Any, starts: list, privacy_id: str, by: Sequence[str], unit: tuple,
                    keys: np.ndarray | None, salt: Any, root: np.random.SeedSequence) -> Reservoir:
    return _bounded(part[privacy_id].to_numpy(), [part[name].to_numpy() for name in by], starts[index], unit, keys,
                    salt, root)


def _part_rows(index: int, part: Any, starts: list, kept: np.ndarray) -> Any:
    inside = kept[(kept >= starts[index]) & (kept < starts[index] + len(part))]
    return part.iloc[inside - starts[index]]


class _Partitions:
    """A Dask or Spark frame's partitions, each a pandas DataFrame in its task: mapped in order, or reduced."""

    def __init__(self, frame: Any, columns: list[str], engine: str):
        self.columns, self.engine = columns, engine
        if engine == "dask":
            self.parts = frame[columns].to_delayed()
        else:  # computed once for the three passes: the rows' positions must not change between them
            from pyspark import StorageLevel  # lazy: optional extra dpdist[spark]

            self.parts = frame.select(*columns).rdd.persist(StorageLevel.MEMORY_AND_DISK)

    def _spark(self, function: Any, args: tuple) -> Any:
        import pandas as pd  # lazy: pyspark[sql]'s own dependency

        columns = self.columns
        return self.parts.mapPartitionsWithIndex(
            lambda index, rows: [function(index, pd.DataFrame.from_records(list(rows), columns=columns), *args)])

    def map(self, function: Any, *args: Any) -> list:
        """``function(index, part, *args)`` of every partition, in order."""
        if self.engine != "dask":
            return self._spark(function, args).collect()
        from dask.base import compute  # lazy: optional extra dpdist[dask]
        from dask.delayed import delayed

        return list(compute(*[delayed(function)(i, part, *args) for i, part in enumerate(self.parts)]))

    def merged(self, function: Any, *args: Any) -> Reservoir | None:
        """The reservoirs ``function(index, part, *args)`` of the partitions merged by a tree reduction."""
        if self.engine != "dask":
            states = self._spark(function, args)
            return states.treeReduce(Reservoir.merge, depth=2) if states.getNumPartitions() else None
        from dask.delayed import delayed  # lazy: optional extra dpdist[dask]

        from ..distributed.dask import _merge_reservoirs, _tree_merge  # lazy: needs Dask, an optional extra

        states = [delayed(function, pure=True)(i, part, *args) for i, part in enumerate(self.parts)]
        return _tree_merge(states, None, 8, _merge_reservoirs, None).compute() if states else None

    def close(self) -> None:
        if self.engine != "dask":
            self.parts.unpersist()


def cluster_bounded(frame: Any, engine: str, columns: list[str], privacy_id: str, by: Sequence[str],
                    keys: list | None, unit: tuple, refused: Sequence[str], seed: int | None) -> Any:
    """The rows of a Dask or PySpark DataFrame (its ``columns``) that :func:`kept_rows` keeps of the same rows in one
    process, as a pandas DataFrame; a missing key, or a missing value of a column in ``refused``, is refused first."""
    import pandas as pd  # lazy: Dask's and pyspark[sql]'s own dependency

    parts = _Partitions(frame, columns, engine)
    try:
        summaries = np.array(parts.map(_summary, by, refused), dtype=np.int64).reshape(-1, 2 + len(refused))
        total = summaries.sum(axis=0)
        holed = [name for name, missing in zip(refused, total[2:]) if missing]
        for count, what in ((total[1], f"a missing key in {list(by)}"),
                            (total[2:].sum(), f"missing values in {holed}")):
            if count:
                raise MissingValuesError(f"dpdist.query refuses rows with {what} (how many is in this error's "
                                         "'count'): drop them in the table's engine, or pass missing='drop'. Nothing "
                                         "was released.", int(count))
        starts = np.concatenate([[0], np.cumsum(summaries[:, 0])[:-1]]).astype(int).tolist()
        salt, root = _run(seed)
        reservoir = parts.merged(_part_reservoir, starts, privacy_id, by, unit, _public(keys, by), salt, root)
        kept = np.sort(reservoir.values.astype(np.int64)) if reservoir is not None else np.zeros(0, dtype=np.int64)
        rows = parts.map(_part_rows, starts, kept)
    finally:
        parts.close()
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame({name: [] for name in columns})
