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

from dataclasses import dataclass
from typing import Any, Sequence

import warnings

import numpy as np

from .._rng import root_seed_sequence
from ..errors import ContributionBoundWarning, MissingValuesError
from ..distributed._reservoirs import Reservoir, reservoir_of_block, salt_of

__all__ = ["Bounding", "kept_rows", "cluster_of", "cluster_bounded"]


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


@dataclass(frozen=True)
class Bounding:
    """What bounding each person's rows left out of the rows of the groups considered: for the holder of the data only
    (statistics of the private data, in no release).

    Attributes
    ----------
    rows : int
        The rows left out.
    groups : int or None
        The (person, group) pairs left out by ``max_groups`` (None where not counted: on a cluster).
    max_contributions, max_groups : int or None
        The least bounds that would keep every row: the most rows one person has in one group, the most groups one
        person has (None where not counted).
    """

    rows: int
    groups: int | None = None
    max_contributions: int | None = None
    max_groups: int | None = None


def _bounded(ids: np.ndarray, groups: np.ndarray | None, start: int, unit: tuple, keys: np.ndarray | None,
             salt: Any, root: np.random.SeedSequence) -> tuple[Reservoir, np.ndarray]:
    """The reservoir of rows ``start, start + 1, ...`` (its values: the rows' positions in the table), and which rows
    are of the groups considered (``groups``: each row's group as :func:`_pair_keys` writes it)."""
    k, m = unit
    offsets = start + np.arange(len(ids), dtype=np.int64)
    listed = np.ones(len(ids), dtype=bool) if groups is None or keys is None else np.isin(groups, keys)
    if not listed.all():
        ids, offsets, groups = ids[listed], offsets[listed], None if groups is None else groups[listed]
    return reservoir_of_block(ids, offsets.astype(np.float64), k, m, salt, root, 0, groups, offsets=offsets), listed


def _run(seed: int | None) -> tuple[Any, np.random.SeedSequence]:
    root = root_seed_sequence(seed)
    return salt_of(root, secure=seed is None), root


def kept_rows(ids: np.ndarray, key_columns: Sequence[np.ndarray], by: Sequence[str], keys: list | None, unit: tuple,
              seed: int | None) -> tuple[np.ndarray, Bounding]:
    """The positions, increasing, of the rows kept of a table held in this process (``unit``: ``(k, m)``), and what
    the bounding left out."""
    from ..central._contributions import person_codes  # lazy: loads scipy (0.4-2 s)

    salt, root = _run(seed)
    groups = _pair_keys(key_columns) if key_columns else None
    reservoir, listed = _bounded(np.asarray(ids), groups, 0, unit, _public(keys, by), salt, root)
    kept = np.sort(reservoir.values.astype(np.int64))
    if kept.size == listed.sum():  # nothing left out: nothing to count
        return kept, Bounding(0, 0)
    persons = person_codes("dpdist.query", np.asarray(ids)[listed], int(listed.sum()))
    group_codes = np.zeros(persons.size, dtype=np.int64) if groups is None else \
        np.unique(groups[listed], return_inverse=True)[1].reshape(-1)
    pairs, pair_of_row, rows_per_pair = np.unique(np.column_stack([persons, group_codes]), axis=0,
                                                  return_inverse=True, return_counts=True)
    kept_pairs = np.unique(pair_of_row.reshape(-1)[(np.cumsum(listed) - 1)[kept]])
    return kept, Bounding(int(listed.sum() - kept.size), int(len(pairs) - kept_pairs.size), int(rows_per_pair.max()),
                          int(np.bincount(pairs[:, 0]).max()))


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
    groups = _pair_keys([part[name].to_numpy() for name in by]) if by else None
    return _bounded(part[privacy_id].to_numpy(), groups, starts[index], unit, keys, salt, root)[0]


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
                    keys: list | None, unit: tuple, refused: Sequence[str], seed: int | None) -> tuple[Any, Bounding]:
    """The rows of a Dask or PySpark DataFrame (its ``columns``) that :func:`kept_rows` keeps of the same rows in one
    process, as a pandas DataFrame, and how many rows it left out (the pairs and bounds that would keep them are not
    counted on the cluster); a missing key, or a missing value of a column in ``refused``, is refused first."""
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
    left_out = Bounding(0 if reservoir is None else reservoir.dropped)
    return (pd.concat(rows, ignore_index=True) if rows else pd.DataFrame({name: [] for name in columns})), left_out


def warn_left_out(bounding: Bounding, statistics: Sequence[Any], max_contributions: int, max_groups: int) -> None:
    """Tell the caller of a query, the holder of the data, what bounding each person's rows left out of each statistic
    and the bounds that would keep every row, in a :class:`~dpdist.errors.ContributionBoundWarning`'s ``count`` and
    ``details`` (never its message, which may reach a log, nor any release)."""
    if not bounding.rows:
        return
    each = {statistic.label: statistic.left_out(bounding.rows, bounding.groups) for statistic in statistics}
    details = {"rows": bounding.rows, "groups": bounding.groups, "statistics": each,
               "keeps": {"max_contributions": bounding.max_contributions, "max_groups": bounding.max_groups}}
    warnings.warn(ContributionBoundWarning(
        f"dpdist.query: bounding each person to max_contributions={max_contributions} row(s) in each of at most "
        f"max_groups={max_groups} group(s) left rows out of {', '.join(each)}. How many were left out of "
        "each (rows; (person, group) pairs for persons()), and the max_contributions and max_groups that would keep "
        "every row, are in this warning's 'count' and 'details', for you, the holder of the data: no release carries "
        "them.", bounding.rows, details), stacklevel=3)  # the caller of Query.release
