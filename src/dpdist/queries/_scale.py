"""Each person's rows of a query bounded before its releases, alike in one process and on a Dask or Spark cluster.

A query with ``privacy_id`` first keeps, of each person, at most ``max_groups`` groups and ``max_contributions`` rows
in each: per-person reservoirs (:mod:`dpdist.distributed._reservoirs`) keyed by a salted hash of the id, whose row
priorities come from one counter-based stream indexed by the row's position in the table.  The rows kept are then a
function of the rows, their order and the seed alone, not of how the table is cut into partitions: a Dask DataFrame
or a PySpark one bounded partition by partition (its reservoirs merged by a tree reduction) keeps the rows a pandas frame of the same
rows in the same order keeps, and the query's releases, run on those rows with the same seed, are the same numbers.

On Dask and Spark the table is read three times (the partitions' lengths and missing ids and keys; the reservoirs; the
rows kept), four with private keys (their (person, key) pairs first: :mod:`~dpdist.queries._private_keys`), and only the rows kept come to this process: at most persons x ``max_groups`` x ``max_contributions`` rows
of the columns the query reads.  Rows of keys outside public ``keys``, and rows whose id or a key is missing, are left
out before the bounding (per-row filters: stable transformations, each person's rows depending on their own rows
only); ids and keys are compared by one rule here and in one process (:mod:`~dpdist.queries._values`), so no value is
refused on either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import warnings

import numpy as np

from .._rng import root_seed_sequence
from .._ids import text_codes
from .._missing import missing_mask
from ..errors import ContributionBoundWarning, MissingValuesWarning
from ..distributed._hashing import hash_ids
from ..distributed._reservoirs import Reservoir, reservoir_of_block, salt_of
from ..frame._tables import Engine, _values, computed, narwhals
from ._private_keys import KeyPairs, key_pairs, merged_pairs
from ._values import ids as staged_ids, staged as staged_values, texts

#: a private selection of keys: the pairs of all the rows -> the keys shown, ``{text: value}``
Chooser = Callable[[KeyPairs], dict]

__all__ = ["Bounding", "kept_rows", "cluster_of", "cluster_bounded"]


def _pair_keys(columns: Sequence[np.ndarray], kinds: Sequence[str]) -> np.ndarray:
    """Each row's group as one string, what the bounding hashes: the key columns' texts (:func:`~._values.texts`,
    equal exactly where the release's groups are), each after its length where there are several (no text can run
    into the next)."""
    parts = [texts(column, kind) for column, kind in zip(columns, kinds)]
    if len(parts) == 1:
        return parts[0]
    return np.fromiter(("".join(f"{len(text)}:{text}" for text in row) for row in zip(*parts)), dtype=object,
                       count=len(parts[0]))


def _public(keys: list | None, kinds: Sequence[str]) -> np.ndarray | None:
    if keys is None:
        return None
    tuples = [key if isinstance(key, tuple) else (key,) for key in keys]
    if not tuples:
        return np.array([], dtype=object)
    return _pair_keys([np.array([key[i] for key in tuples], dtype=object) for i in range(len(kinds))], kinds)


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
    missing : int
        The rows left out before the bounding because their id or a key is missing (null, NaN).
    """

    rows: int
    groups: int | None = None
    max_contributions: int | None = None
    max_groups: int | None = None
    missing: int = 0


def _listed(ids: np.ndarray, key_columns: Sequence[np.ndarray], kinds: Sequence[str], id_kind: str,
            keys: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    """``(positions, ids, groups, missing)``: the rows the bounding considers (a present id and key, of a listed key
    when ``keys`` are public texts), their ids as compared (:func:`~._values.ids`) and their groups' texts, and how
    many rows have a missing id or key (left out: a per-row filter, 1-stable)."""
    present = ~np.logical_or.reduce([missing_mask(np.asarray(column)) for column in (ids, *key_columns)])
    rows = np.flatnonzero(present)
    groups = _pair_keys([column[rows] for column in key_columns], kinds) if key_columns else None
    if groups is not None and keys is not None:
        chosen = np.isin(groups, keys)
        rows, groups = rows[chosen], groups[chosen]
    return rows, staged_ids(np.asarray(ids)[rows], id_kind), groups, int(np.count_nonzero(~present))


def _pairs(ids: np.ndarray, groups: np.ndarray, key_columns: Sequence[np.ndarray], kinds: Sequence[str],
           salt: Any) -> KeyPairs:
    """The distinct (person, key) pairs of the rows considered (:func:`_listed`'s ids and groups, and their key
    columns), each person their id's keyed hash as the reservoirs hash it, each key's value as the query compares it."""
    columns = [staged_values(np.asarray(column), kind) for column, kind in zip(key_columns, kinds)]
    return key_pairs(hash_ids(ids, salt.ids), groups, columns)


def _shown(shown: dict) -> np.ndarray:
    """The texts of the keys shown, as :func:`_listed` takes public keys."""
    return np.array(list(shown), dtype=object)


def _bounded(rows: np.ndarray, ids: np.ndarray, groups: np.ndarray | None, start: int, unit: tuple, salt: Any,
             root: np.random.SeedSequence) -> Reservoir:
    """The reservoir of the rows ``start + rows`` (its values: the rows' positions in the table)."""
    k, m = unit
    offsets = start + rows.astype(np.int64)
    return reservoir_of_block(ids, offsets.astype(np.float64), k, m, salt, root, 0, groups, offsets=offsets)


def _run(seed: int | None) -> tuple[Any, np.random.SeedSequence]:
    root = root_seed_sequence(seed)
    return salt_of(root, secure=seed is None), root


def kept_rows(ids: np.ndarray, key_columns: Sequence[np.ndarray], kinds: Sequence[str], id_kind: str,
              keys: list | None, unit: tuple, seed: int | None,
              choose: Chooser | None = None) -> tuple[np.ndarray, Bounding, dict | None]:
    """The positions, increasing, of the rows kept of a table held in this process (``unit``: ``(k, m)``; the key
    columns of ``kinds`` and the ids of ``id_kind``, :mod:`~._values`), what the bounding left out, and, with
    ``choose`` (private keys), the keys it showed of all the rows' pairs (:mod:`~._private_keys`), among which the rows
    are bounded."""
    from ..central._contributions import person_codes  # lazy: loads scipy (0.4-2 s)

    salt, root = _run(seed)
    rows, staged, groups, missing = _listed(ids, key_columns, kinds, id_kind, _public(keys, kinds))
    shown = None
    if choose is not None and groups is not None:
        shown = choose(_pairs(staged, groups, [np.asarray(column)[rows] for column in key_columns], kinds, salt))
        among = np.isin(groups, _shown(shown))
        rows, staged, groups = rows[among], staged[among], groups[among]
    kept = np.sort(_bounded(rows, staged, groups, 0, unit, salt, root).values.astype(np.int64))
    if kept.size == rows.size:  # nothing left out by the bounding: nothing more to count
        return kept, Bounding(0, 0, missing=missing), shown
    persons = person_codes("dpdist.query", staged, rows.size).astype(np.int64)
    coded = None if groups is None else text_codes(groups)  # the groups' texts (:func:`_pair_keys`)
    group_codes = np.zeros(rows.size, dtype=np.int64) if coded is None else coded[0]
    width = int(group_codes.max()) + 1
    pairs, pair_of_row, rows_per_pair = np.unique(persons * width + group_codes, return_inverse=True,
                                                  return_counts=True)  # one int64 per (person, group)
    kept_pairs = np.unique(pair_of_row.reshape(-1)[np.searchsorted(rows, kept)])
    return kept, Bounding(int(rows.size - kept.size), int(len(pairs) - kept_pairs.size), int(rows_per_pair.max()),
                          int(np.bincount(pairs // width).max()), missing), shown


def cluster_of(table: Any) -> str | None:
    """``"dask"`` or ``"pyspark"`` for a Dask or a PySpark DataFrame, else None (importing neither)."""
    root = type(table).__module__.split(".")[0]
    return root if root in ("dask", "pyspark") else None


def _read(part: Any, names: Sequence[str]) -> list[np.ndarray]:
    """A partition's columns as a table in one process reads them (:meth:`dpdist.frame._tables.Table.values`), so
    that the cluster and one process compare the same values."""
    nw = narwhals()
    return [_values(nw.from_native(part[name], series_only=True)) for name in names]


def _summary(index: int, part: Any, privacy_id: str, by: Sequence[str]) -> list[int]:
    """A partition's rows, and its rows whose id or a key is missing (left out)."""
    columns = _read(part, [privacy_id, *by])
    return [len(part), int(np.count_nonzero(np.logical_or.reduce([missing_mask(column) for column in columns])))]


def _part_reservoir(index: int, part: Any, starts: list, privacy_id: str, by: Sequence[str], kinds: dict,
                    unit: tuple, keys: np.ndarray | None, salt: Any, root: np.random.SeedSequence) -> Reservoir:
    ids, *columns = _read(part, [privacy_id, *by])
    rows, staged, groups, _ = _listed(ids, columns, [kinds[name] for name in by], kinds[privacy_id], keys)
    return _bounded(rows, staged, groups, starts[index], unit, salt, root)


def _part_pairs(index: int, part: Any, privacy_id: str, by: Sequence[str], kinds: dict, salt: Any) -> KeyPairs:
    """A partition's distinct (person, key) pairs, as :func:`kept_rows` counts them in one process."""
    ids, *columns = _read(part, [privacy_id, *by])
    rows, staged, groups, _ = _listed(ids, columns, [kinds[name] for name in by], kinds[privacy_id], None)
    assert groups is not None  # mapped with key columns only: private keys are a group-by's
    return _pairs(staged, groups, [column[rows] for column in columns], [kinds[name] for name in by], salt)


def _part_rows(index: int, part: Any, starts: list, kept: np.ndarray) -> Any:
    inside = kept[(kept >= starts[index]) & (kept < starts[index] + len(part))]
    return part.iloc[inside - starts[index]]


class _Partitions:
    """A Dask or Spark frame's partitions, each a pandas DataFrame in its task: mapped in order, or reduced."""

    def __init__(self, frame: Any, columns: list[str], engine: str):
        self.columns, self.engine = columns, engine
        self.frame = frame[columns] if engine == "dask" else frame.select(*columns)
        if engine == "dask":  # optimized (projections, predicates) but not fused: fusing tokenizes the expression
            # tree over and over, seconds for a deep WHERE, more than the work itself
            self.parts = self.frame.optimize(fuse=False).to_delayed(optimize_graph=False)
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

    def empty(self) -> Any:
        """A pandas DataFrame of no rows of the columns' types (a frame of no partition)."""
        if self.engine == "dask":
            return self.frame._meta
        return self.frame.limit(0).toPandas()

    def close(self) -> None:
        if self.engine != "dask":
            self.parts.unpersist()


def cluster_bounded(frame: Any, engine: str, columns: list[str], privacy_id: str, by: Sequence[str],
                    keys: list | None, unit: tuple, kinds: dict[str, str], seed: int | None,
                    choose: Chooser | None = None) -> tuple[Any, Bounding, dict | None]:
    """The rows of a Dask or PySpark DataFrame (its ``columns``) that :func:`kept_rows` keeps of the same rows in one
    process, as a pandas DataFrame, how many rows it left out (the pairs and bounds that would keep them are not
    counted on the cluster), and the keys ``choose`` showed (the partitions' pairs merged: one more pass).  An error of
    the engine is refused naming its type only (:func:`computed`)."""
    parts = _Partitions(frame, columns, engine)
    try:
        return computed("dpdist.query", Engine(engine, True), columns,
                        lambda: _bounded_parts(parts, privacy_id, by, keys, unit, kinds, seed, choose))
    finally:
        parts.close()


def _bounded_parts(parts: "_Partitions", privacy_id: str, by: Sequence[str], keys: list | None, unit: tuple,
                   kinds: dict[str, str], seed: int | None, choose: Chooser | None) -> tuple[Any, Bounding, dict | None]:
    import pandas as pd  # lazy: Dask's and pyspark[sql]'s own dependency

    summaries = np.array(parts.map(_summary, privacy_id, by), dtype=np.int64).reshape(-1, 2)
    starts = np.concatenate([[0], np.cumsum(summaries[:, 0])[:-1]]).astype(int).tolist()
    salt, root = _run(seed)
    public, shown = _public(keys, [kinds[name] for name in by]), None
    if choose is not None and by:
        shown = choose(merged_pairs(parts.map(_part_pairs, privacy_id, by, kinds, salt)))
        public = _shown(shown)
    reservoir = parts.merged(_part_reservoir, starts, privacy_id, by, kinds, unit, public, salt, root)
    kept = np.sort(reservoir.values.astype(np.int64)) if reservoir is not None else np.zeros(0, dtype=np.int64)
    rows = parts.map(_part_rows, starts, kept)
    left_out = Bounding(0 if reservoir is None else reservoir.dropped, missing=int(summaries[:, 1].sum()))
    return (pd.concat(rows, ignore_index=True) if rows else parts.empty()), left_out, shown


def warn_left_out(bounding: Bounding, missing: dict[str, int], policy: Any, statistics: Sequence[Any],
                  max_contributions: int, max_groups: int) -> None:
    """Tell the caller of a query, the holder of the data, what it left out: the rows of a missing id or key and, of
    each statistic, the rows of a missing value (``missing``: ``{label: rows}``, left out or counted as ``policy``), in
    a :class:`~dpdist.errors.MissingValuesWarning`; what bounding each person's rows left out of each statistic and
    the bounds that would keep every row, in a :class:`~dpdist.errors.ContributionBoundWarning`.  The numbers are in
    the warnings' ``count`` and ``details``, never their messages (which may reach a log) nor any release."""
    holes = {label: rows for label, rows in missing.items() if rows}
    if bounding.missing or holes:
        done = "left out" if policy == "drop" else f"counted as {policy!r}"
        warnings.warn(MissingValuesWarning(
            "dpdist.query: rows whose id or key is missing (null, NaN) were left out of every statistic, and rows "
            f"whose value is missing {done} in each statistic of that column (missing={policy!r}); a query refuses "
            "no value. How many of each is in this warning's 'count' and 'details', for you, the holder of the data: "
            "no release carries them.", bounding.missing + sum(holes.values()),
            {"ids_or_keys": bounding.missing, "statistics": holes}), stacklevel=4)  # the caller of Query.release
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
        "them.", bounding.rows, details), stacklevel=4)  # the caller of Query.release
