"""Aggregation and simulation on Spark: the counterpart of :mod:`dpdist.distributed.dask`.

Each partition of a Spark RDD (a list of report-file parts, a list of blocks of users) becomes one
aggregator state in one task (``mapPartitions``; a DataFrame's partitions through ``mapInArrow``),
and the states are merged on the executors by ``treeReduce`` (``depth`` levels), so the driver only
ever receives a few small states.  Merging adds integer statistics, so the result equals the
one-process aggregation, and :func:`dpdist.distributed.aggregate_files` and
:func:`dpdist.distributed.simulate` on Dask, exactly, whatever the cluster and the schedule.
Install with ``pip install dpdist[spark]`` (PySpark; Spark needs Java 17 or later).

>>> from dpdist import local                                       # doctest: +SKIP
>>> from dpdist.distributed import spark
>>> agg = spark.aggregate_files(["r1.parquet", "r2.parquet"], proto, spark=session)
>>> blocks = session.sparkContext.range(100, numSlices=100).map(lambda b: (b, make_block(b)))
>>> agg = spark.simulate(proto, blocks, seed=7)     # == distributed.simulate_blocks(proto, all blocks, 7)
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import numpy as np

from .._rng import root_seed_sequence
from .._types import PathLike
from .._validation import (Described, InstanceOf, Integer, NamedInstanceOf, OneOf, Optional, Options, check_param,
                           validate_params)
from ..errors import DatasetUnavailableError, InvalidParameterError
from ._parts import PATHS, file_parts, merge_states, state_of_file_part
from ._reservoirs import Reservoir, Salt, check_bounds, empty_reservoir, reservoir_of_block, salt_of
from .blocks import simulate_block

if TYPE_CHECKING:
    from ..local import Aggregator, LocalProtocol

__all__ = ["aggregate_files", "simulate", "bound_contributions"]


def _require_pyspark() -> Any:
    """The ``pyspark`` module, or a refusal naming the extra to install."""
    try:
        import pyspark  # lazy: optional extra dpdist[spark]
    except ImportError:
        raise DatasetUnavailableError("dpdist.distributed.spark needs PySpark: install dpdist[spark] (and Java 17+).") from None
    return pyspark


#: a SparkSession or a SparkContext (None: the active session's)
_SPARK = Optional(OneOf((NamedInstanceOf("pyspark.sql", ("SparkSession",), "a SparkSession"),
                         NamedInstanceOf("pyspark", ("SparkContext",), "a SparkContext")),
                        "a SparkSession or a SparkContext"))


def _context(spark: Any, owner: str) -> Any:
    """The SparkContext of ``spark`` (:data:`_SPARK`), or of the active session."""
    _require_pyspark()
    from pyspark.sql import SparkSession  # lazy: optional extra dpdist[spark]

    if spark is None:
        spark = SparkSession.getActiveSession()
        if spark is None:
            raise InvalidParameterError(
                f"The 'spark' parameter of {owner} must be a SparkSession or a SparkContext: none was given and no "
                "session is active (SparkSession.builder.getOrCreate() first)."
            )
    return spark.sparkContext if isinstance(spark, SparkSession) else spark


#: the root of a simulation's random streams (never None: the CSPRNG would give no reproducible blocks)
_SEED = InstanceOf((int, np.integer, np.random.SeedSequence), "an int or a SeedSequence")
#: the levels of ``treeReduce`` merging the states
_DEPTH = Described(Integer(low=1), "an int >= 1 (levels of treeReduce)")


def _reduce(states: Any, protocol: LocalProtocol, depth: int) -> Aggregator:
    """``treeReduce`` of an RDD of one state per partition (an RDD of no partition: the empty state)."""
    if states.getNumPartitions() == 0:
        return protocol.aggregator()
    return states.treeReduce(merge_states, depth=depth)


# ---------------------------------------------------------------------- report files
def _states_of_parts(protocol: LocalProtocol, parts: Iterable[tuple[str, int | None]]) -> Iterator[Aggregator]:
    """One state per partition: the parts it holds, read and added one after the other."""
    state = protocol.aggregator()
    for path, row_group in parts:
        state.merge(state_of_file_part(protocol, path, row_group))
    yield state


@validate_params({"paths": PATHS, "spark": _SPARK, "depth": _DEPTH}, owner="distributed.spark.aggregate_files")
def aggregate_files(paths: PathLike | Iterable[PathLike], protocol: LocalProtocol | None = None, *, spark: Any = None,
                    depth: int = 2) -> Aggregator:
    """Aggregate report files on a Spark cluster: one task per Parquet row group (or binary file).

    Parameters
    ----------
    paths : str, Path or list of them
        Report files written by :func:`dpdist.io.write_reports` / ``dpdist privatize`` (Parquet or dpdist
        binary); the executors must see the same paths (a shared file system).  A file given twice (same file
        id, or same content for files without one) raises :class:`~dpdist.errors.IncompatibleStateError`.
    protocol : LocalProtocol, optional
        Default: the config embedded in the first file.  Rows written under another config are rejected as
        ``"other_config"``.
    spark : SparkSession or SparkContext, optional
        Default: the active session.
    depth : int
        Levels of ``treeReduce`` merging the parts' states.

    Returns
    -------
    Aggregator
        Equal to :func:`dpdist.distributed.aggregate_files` (Dask) and to ``dpdist aggregate`` on the same files.
    """
    owner = "distributed.spark.aggregate_files"
    context = _context(spark, owner)
    protocol, parts = file_parts(paths, protocol, owner)
    states = context.parallelize(parts, len(parts)).mapPartitions(lambda part: _states_of_parts(protocol, part))
    return _reduce(states, protocol, depth)


# ---------------------------------------------------------------------- simulation
def _states_of_blocks(protocol: LocalProtocol, root: np.random.SeedSequence,
                      blocks: Iterable[tuple[Any, Any]]) -> Iterator[tuple[np.ndarray, list, Aggregator]]:
    """One ``(indices, bad indices, state)`` per partition: each ``(index, values)`` block simulated with the stream of
    its index, merged; the indices go to the driver, which refuses the run if one came twice (:func:`simulate`).  An
    index that is not an integer >= 0 is not simulated but returned (its repr), for the driver to refuse by name."""
    state, indices, bad = protocol.aggregator(), [], []
    for index, values in blocks:
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)) or index < 0:
            bad.append(repr(index)[:40])
            continue
        state.merge(simulate_block(protocol, np.asarray(values), root, int(index)))
        indices.append(int(index))
    yield np.asarray(indices, dtype=np.int64), bad, state


def _merge_blocks(first: tuple, second: tuple) -> tuple:
    """Two partitions' ``(indices, bad indices, state)`` as one (the ``treeReduce`` of :func:`simulate`)."""
    return np.concatenate([first[0], second[0]]), first[1] + second[1], merge_states(first[2], second[2])


def _checked_blocks(merged: tuple, owner: str) -> Aggregator:
    """The merged state, or a refusal naming block indices given twice (the same random stream drawn twice: the two
    blocks' noise would be correlated, not independent) or that are no index."""
    indices, bad, state = merged
    if bad:
        raise InvalidParameterError(
            f"The 'values' parameter of {owner} must pair each block with an index, an int >= 0 (it picks the block's "
            f"random stream). Got {len(bad)} other(s): {', '.join(bad[:5])}.")
    distinct, counts = np.unique(indices, return_counts=True)
    if np.any(counts > 1):
        twice = distinct[counts > 1]
        raise InvalidParameterError(
            f"The 'values' parameter of {owner} holds {twice.size} block index(es) more than once "
            f"({', '.join(str(int(index)) for index in twice[:5])}{', ...' if twice.size > 5 else ''}): block b draws "
            "the b-th random stream of the seed, so two blocks of one index draw the same stream and their noise is "
            "correlated, not independent. Give every block its own index (0, 1, 2, ...).")
    return state


def _frame_states(protocol: LocalProtocol, root: np.random.SeedSequence):
    """The ``mapInArrow`` function of a one-column DataFrame: its partition ``p`` is block ``p`` (its values in
    order), simulated with the ``p``-th stream; one row out per partition, the pickled state."""

    def states(batches):
        import pyarrow as pa  # lazy: runs on the executors (pyspark[sql] brings pyarrow)
        from pyspark import TaskContext  # lazy: optional extra dpdist[spark]

        task = TaskContext.get()
        assert task is not None  # (mapInArrow's function runs in a task)
        index = task.partitionId()
        columns = [batch.column(0).to_numpy(zero_copy_only=False) for batch in batches]
        values = np.concatenate(columns) if columns else np.zeros(0)
        state = simulate_block(protocol, values, root, index)
        yield pa.RecordBatch.from_pydict({"state": [pickle.dumps(state)]}, schema=pa.schema([("state", pa.binary())]))

    return states


@validate_params({"depth": _DEPTH, "seed": _SEED}, owner="distributed.spark.simulate")
def simulate(protocol: LocalProtocol, values: Any, seed: int | np.random.SeedSequence, *, depth: int = 2) -> Aggregator:
    """Simulate the aggregate of a population held on a Spark cluster (10^8+ users).

    Block ``b`` is simulated with ``protocol.simulate`` and the generator of the ``b``-th child of
    ``SeedSequence(seed)``, so the result equals :func:`dpdist.distributed.simulate_blocks` over the same
    blocks (and Dask's :func:`dpdist.distributed.simulate`), whatever the number of executors.

    Parameters
    ----------
    protocol : LocalProtocol
    values : pyspark.RDD or pyspark.sql.DataFrame
        An RDD of ``(block index, 1-D array of values)`` pairs (blocks made on the executors, e.g.
        ``sc.range(n_blocks, numSlices=n_blocks).map(lambda b: (b, make_block(b)))``; the indices are
        ``0, 1, ...``, each once: an index given twice would draw the same random stream twice, and is
        refused, as an index that is not an int >= 0, once the blocks are simulated), or a DataFrame
        of one numeric column whose partition ``p`` is block ``p`` (``frame.select("age")``; its values
        in the partition's order).
    seed : int or numpy.random.SeedSequence
        Root seed (required: a distributed simulation must be reproducible).
    depth : int
        Levels of ``treeReduce``.
    """
    owner = "distributed.spark.simulate"
    _require_pyspark()
    from pyspark import RDD  # lazy: optional extra dpdist[spark]
    from pyspark.sql import DataFrame  # lazy: optional extra dpdist[spark]

    root = root_seed_sequence(seed)
    if isinstance(values, RDD):
        blocks = values.mapPartitions(lambda pairs: _states_of_blocks(protocol, root, pairs))
        if blocks.getNumPartitions() == 0:
            return protocol.aggregator()
        return _checked_blocks(blocks.treeReduce(_merge_blocks, depth=depth), owner)
    if isinstance(values, DataFrame) and len(values.columns) == 1:
        states = values.mapInArrow(_frame_states(protocol, root), "state binary").rdd.map(
            lambda row: pickle.loads(row[0]))
    else:
        columns = f" with columns {values.columns}" if isinstance(values, DataFrame) else ""
        # the type only: the repr of a collection can be its whole (private) content
        raise InvalidParameterError(
            f"The 'values' parameter of {owner} must be an RDD of (block index, values) pairs or a Spark DataFrame of "
            f"one column. Got {type(values).__module__}.{type(values).__name__}{columns} instead."
        )
    return _reduce(states, protocol, depth)


# ---------------------------------------------------------------------- contribution bounding
def _frame_reservoirs(k: int, m: int, salt: Salt, root: np.random.SeedSequence, grouped: bool):
    """The ``mapInArrow`` function of a frame of (id, value[, group]) columns: its partition ``p`` is block ``p``,
    bounded with the ``p``-th stream; one row out per partition, the pickled reservoir."""

    def states(batches):
        import pyarrow as pa  # lazy: runs on the executors (pyspark[sql] brings pyarrow)
        from pyspark import TaskContext  # lazy: optional extra dpdist[spark]

        task = TaskContext.get()
        assert task is not None  # (mapInArrow's function runs in a task)
        columns: list[list] = [[], [], []]
        for batch in batches:
            for position in range(batch.num_columns):
                columns[position].append(batch.column(position).to_numpy(zero_copy_only=False))
        ids, values, groups = [np.concatenate(parts) if parts else np.zeros(0) for parts in columns]
        state = reservoir_of_block(ids, values, k, m, salt, root, task.partitionId(), groups if grouped else None)
        yield pa.RecordBatch.from_pydict({"state": [pickle.dumps(state)]}, schema=pa.schema([("state", pa.binary())]))

    return states


@validate_params({"frame": NamedInstanceOf("pyspark.sql", ("DataFrame",), "a pyspark.sql.DataFrame"), "depth": _DEPTH},
                 owner="distributed.spark.bound_contributions")
def bound_contributions(frame: Any, column: str, privacy_id: str, max_contributions: int, *, groups: str | None = None,
                        max_groups: int | None = None, seed: int | np.random.SeedSequence | None = None,
                        depth: int = 2) -> Reservoir:
    """Bound each person's rows of a Spark DataFrame (10^8 rows and more): per-person reservoirs, merged exactly.

    Partition ``p`` of ``frame`` is block ``p`` (:func:`dpdist.distributed.bound_contributions` on Dask, the same
    reservoirs): for each person (the keyed hash of ``privacy_id``) its ``max_contributions`` rows of smallest
    priority from the ``p``-th stream, merged on the executors by ``treeReduce``.  The result equals
    :func:`dpdist.distributed.bound_blocks` of the partitions' rows in order, with the same seed.

    Parameters
    ----------
    frame : pyspark.sql.DataFrame
    column, privacy_id : str
        The numeric column released and the column of the persons' ids: numbers (by exact value), strings or bytes,
        compared exactly (:mod:`dpdist.distributed._hashing`; dates refused: cast them first).
    max_contributions : int
        Rows kept per person (per person and group, with ``groups``).
    groups : str, optional
        The column of the group keys (then :func:`dpdist.distributed.group_release`), ``max_groups`` of them per
        person, a uniformly random choice (default 1).
    seed : int or SeedSequence, optional
        ``None``: a secret salt and CSPRNG streams; a seed: reproducible, for research only.
    depth : int
        Levels of ``treeReduce``.
    """
    owner = "distributed.spark.bound_contributions"
    _require_pyspark()
    k, m = check_bounds(owner, max_contributions, max_groups, groups is not None)
    named = {"privacy_id": privacy_id, "column": column, **({"groups": groups} if groups is not None else {})}
    of_frame = Described(Options(tuple(frame.columns)), f"a column of the frame: {frame.columns}")
    names = [check_param(owner, argument, name, of_frame) for argument, name in named.items()]
    root = root_seed_sequence(seed)
    salt = salt_of(root, secure=seed is None)
    states = frame.select(*names).mapInArrow(_frame_reservoirs(k, m, salt, root, groups is not None),
                                                  "state binary").rdd.map(
        lambda row: pickle.loads(row[0]))
    if states.getNumPartitions() == 0:
        return empty_reservoir(k, m, salt, groups is not None)
    return states.treeReduce(Reservoir.merge, depth=depth)
