"""Aggregation and simulation on a Dask cluster.

Each partition (a block of a Dask array, a partition of a Dask DataFrame, a row
group of a Parquet report file) becomes one aggregator state in a task; the
states are merged by a tree reduction with ``split_every`` states per merge
task.  Merging adds integer statistics, so the result equals the one-process
aggregation exactly, whatever the cluster and the schedule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, cast

import numpy as np

from .._io._arrow import reports_from_arrow
from .._rng import root_seed_sequence
from .._types import PathLike
from .._validation import Boolean, Described, InstanceOf, Integer, NamedInstanceOf, OneOf, Optional, ShownBy, validate_params
from ..errors import DatasetUnavailableError, InvalidParameterError
from ._parts import PATHS, file_parts, merge_states, state_of_file_part
from ._reservoirs import Reservoir, check_bounds, empty_reservoir, reservoir_of_block, salt_of
from .blocks import simulate_block

if TYPE_CHECKING:
    from ..local import LocalProtocol

__all__ = ["aggregate", "aggregate_files", "simulate", "bound_contributions"]


def _require_dask() -> Any:
    """``dask.delayed``, or a refusal naming the extra to install."""
    try:
        import dask.array  # noqa: F401  # lazy: optional extra dpdist[dask]
        from dask.delayed import delayed  # lazy: optional extra dpdist[dask]
    except ImportError:
        raise DatasetUnavailableError(
            "dpdist.distributed needs Dask: install dpdist[dask] (dask[array,dataframe] and distributed)."
        ) from None
    return delayed


#: the root of a simulation's random streams (never None: the CSPRNG would give no reproducible blocks)
_SEED = InstanceOf((int, np.integer, np.random.SeedSequence), "an int or a SeedSequence")
#: a Dask array (its report rows) or a Dask DataFrame (the columns of dpdist.io.reports_to_arrow), shown by its type
_REPORTS = ShownBy(OneOf((NamedInstanceOf("dask.array", ("Array",), "a dask.array.Array"),
                          NamedInstanceOf("dask.dataframe", ("DataFrame",), "a dask.dataframe.DataFrame")),
                         "a dask.array.Array or a dask.dataframe.DataFrame (aggregate_files reads paths)"),
                   NamedInstanceOf("dask.array", ("Array",), ""))
#: a column of a table held in Dask (its chunks or partitions: the blocks), shown by its type
_COLUMN = ShownBy(OneOf((NamedInstanceOf("dask.array", ("Array",), "a 1-D dask.array.Array", ndim=1),
                         NamedInstanceOf("dask.dataframe", ("Series",), "a dask.dataframe.Series")),
                        "a 1-D dask.array.Array or a dask.dataframe.Series"),
                  NamedInstanceOf("dask.array", ("Array",), ""))
#: the states merged per task of the tree reduction
_SPLIT_EVERY = Described(Integer(low=2), "an int >= 2 (states merged per task)")


def _tree_merge(states: list, protocol, split_every: int, merge: Any = merge_states, empty: Any = None):
    """Merge delayed states level by level, ``split_every`` at a time; one delayed state at the top (``empty()`` or
    the protocol's empty aggregator when there is none)."""
    delayed = _require_dask()
    if not states:
        return delayed(empty if empty is not None else protocol.aggregator)()
    while len(states) > 1:
        states = [
            delayed(merge, pure=True)(*states[i : i + split_every])
            for i in range(0, len(states), split_every)
        ]
    return states[0]


def _finish(result, compute: bool):
    return result.compute() if compute else result


# ---------------------------------------------------------------------- reports
def _state_of_block(protocol, block):
    return protocol.aggregator().add(np.asarray(block))


def _state_of_frame(protocol, frame):
    import pyarrow as pa  # lazy: optional extra (pyarrow)


    table = pa.Table.from_pandas(frame, preserve_index=False)
    return protocol.aggregator().add_batch(reports_from_arrow(table, protocol, "Dask partition"))


@validate_params({"reports": _REPORTS, "split_every": _SPLIT_EVERY, "compute": Boolean()}, owner="distributed.aggregate")
def aggregate(reports: Any, protocol: LocalProtocol, *, split_every: int = 8, compute: bool = True) -> Any:
    """Aggregate an in-memory Dask collection of reports.

    Parameters
    ----------
    reports : dask.array.Array or dask.dataframe.DataFrame
        A Dask array in the protocol's report format (chunked along the rows
        only), or a DataFrame with the columns of :func:`dpdist.io.reports_to_arrow`
        (e.g. ``dask.dataframe.read_parquet`` of report files).  Invalid rows
        are rejected and counted by reason, as by ``Aggregator.add``.
    protocol : LocalProtocol
    split_every : int
        States merged per task of the tree reduction.
    compute : bool
        Return the merged :class:`~dpdist.local.Aggregator` (default) or the
        Dask ``Delayed`` that computes it.
    """
    delayed = _require_dask()
    import dask.array as da  # lazy: optional extra dpdist[dask]

    if isinstance(reports, da.Array):
        reports = cast(Any, reports)  # dask's stubs lack to_delayed and take rechunk's chunks as a string
        if any(len(chunks) > 1 for chunks in reports.chunks[1:]):
            reports = reports.rechunk({axis: -1 for axis in range(1, reports.ndim)})
        parts = reports.to_delayed().reshape(-1)
        states = [delayed(_state_of_block, pure=True)(protocol, part) for part in parts]
    else:  # a Dask DataFrame: the table's rule
        states = [delayed(_state_of_frame, pure=True)(protocol, part) for part in reports.to_delayed()]
    return _finish(_tree_merge(states, protocol, split_every), compute)


@validate_params({"paths": PATHS, "split_every": _SPLIT_EVERY, "compute": Boolean()}, owner="distributed.aggregate_files")
def aggregate_files(
    paths: PathLike | Iterable[PathLike], protocol: LocalProtocol | None = None, *, split_every: int = 8, compute: bool = True
) -> Any:
    """Aggregate report files on the cluster: one task per Parquet row group (or binary file).

    Parameters
    ----------
    paths : str, Path or list of them
        Report files written by :func:`dpdist.io.write_reports` / ``dpdist privatize``
        (Parquet or dpdist binary); the workers must see the same paths.  A
        file given twice (same file id, or same content for files without one)
        raises :class:`~dpdist.errors.IncompatibleStateError`.
    protocol : LocalProtocol, optional
        Default: the config embedded in the first file.  Rows written under
        another config are rejected as ``"other_config"``.
    """
    delayed = _require_dask()

    protocol, parts = file_parts(paths, protocol, "distributed.aggregate_files")
    states = [delayed(state_of_file_part, pure=True)(protocol, path, group) for path, group in parts]
    return _finish(_tree_merge(states, protocol, split_every), compute)


# ---------------------------------------------------------------------- simulation
@validate_params({"values": _COLUMN, "split_every": _SPLIT_EVERY, "compute": Boolean(), "seed": _SEED},
                 owner="distributed.simulate")
def simulate(
    protocol: LocalProtocol, values: Any, seed: int | np.random.SeedSequence, *, split_every: int = 8, compute: bool = True
) -> Any:
    """Simulate the aggregate of a population held in a Dask array (10^8+ users).

    Block ``b`` of ``values`` is simulated with ``protocol.simulate`` and the
    generator of the ``b``-th child of ``SeedSequence(seed)``, so the result
    equals :func:`dpdist.distributed.simulate_blocks` over the same blocks,
    and does not depend on the number of workers.  Memory per task is one
    block of values.

    Parameters
    ----------
    protocol : LocalProtocol
    values : dask.array.Array or dask.dataframe.Series
        1-D array of the users' values (lazily generated blocks are fine), or a column of a
        Dask DataFrame (``frame["age"]``; its partitions are the blocks).
    seed : int or numpy.random.SeedSequence
        Root seed (required: a distributed simulation must be reproducible).
    """
    delayed = _require_dask()

    blocks = _column_blocks(values)
    root = root_seed_sequence(seed)
    states = [delayed(simulate_block, pure=True)(protocol, block, root, index) for index, block in enumerate(blocks)]
    return _finish(_tree_merge(states, protocol, split_every), compute)


# ---------------------------------------------------------------------- contribution bounding
def _merge_reservoirs(*states: Reservoir) -> Reservoir:
    return Reservoir.merge_all(list(states))


def _column_blocks(column: Any) -> list:
    """The delayed blocks of a column (:data:`_COLUMN`): a 1-D Dask array's chunks, a Dask Series' partitions (one
    pandas Series each)."""
    import dask.array as da  # lazy: optional extra dpdist[dask]

    if isinstance(column, da.Array):
        return list(cast(Any, column).to_delayed().reshape(-1))  # dask's stubs lack to_delayed
    return list(cast(Any, column).to_delayed())


@validate_params({"values": _COLUMN, "privacy_id": _COLUMN, "groups": Optional(_COLUMN), "split_every": _SPLIT_EVERY,
                  "compute": Boolean()}, owner="distributed.bound_contributions")
def bound_contributions(values: Any, privacy_id: Any, max_contributions: int, *, groups: Any = None,
                        max_groups: int | None = None, seed: int | np.random.SeedSequence | None = None,
                        split_every: int = 8, compute: bool = True) -> Any:
    """Bound each person's rows of a table held in Dask (10^8 rows and more): per-person reservoirs, merged exactly.

    Block ``b`` (a chunk, or a partition of a Dask Series) keeps, for each person (the keyed hash of their id),
    the ``max_contributions`` rows of smallest priority from the ``b``-th random stream; the states merge by a tree
    reduction to one :class:`~dpdist.distributed._reservoirs.Reservoir`, equal to
    :func:`dpdist.distributed.bound_blocks` of the same blocks and seed (:mod:`dpdist.distributed._reservoirs`).
    Release it on the driver: ``reservoir.release(central.quantiles, q, epsilon=..., bounds=...)``, or per group
    (``groups``): ``distributed.group_release(reservoir, ...)``.

    Parameters
    ----------
    values, privacy_id : dask.array.Array or dask.dataframe.Series
        The values and each row's person, cut into the same blocks (``groups`` too: each row's group key).  The ids
        are numbers (by exact value: ``1`` in an int64 block and ``1.0`` in a float64 one are one person), strings or
        bytes, of one kind in every block: blocks of two kinds (``1`` and ``"1"``) are refused when they merge
        (:mod:`dpdist.distributed._hashing`); dates are refused (cast them first).
    max_contributions : int
        Rows kept per person (per person and group, with ``groups``).
    max_groups : int, optional
        With ``groups``: the groups kept per person, a uniformly random choice (default 1).
    seed : int or SeedSequence, optional
        ``None``: a secret salt and CSPRNG streams; a seed: reproducible, for research only.
    split_every, compute
        As in :func:`aggregate`.
    """
    delayed = _require_dask()
    owner = "distributed.bound_contributions"
    k, m = check_bounds(owner, max_contributions, max_groups, groups is not None)
    columns = [_column_blocks(values), _column_blocks(privacy_id)]
    if groups is not None:
        columns.append(_column_blocks(groups))
    if len({len(blocks) for blocks in columns}) != 1:
        raise InvalidParameterError(f"The columns given to {owner} must be cut into the same blocks. Got "
                                    f"{[len(blocks) for blocks in columns]} blocks.")
    root = root_seed_sequence(seed)
    salt = salt_of(root, secure=seed is None)
    states = [delayed(reservoir_of_block, pure=True)(ids, part, k, m, salt, root, index, *rest)
              for index, (part, ids, *rest) in enumerate(zip(*columns))]
    empty = _empty_reservoir(k, m, salt, groups is not None)
    return _finish(_tree_merge(states, None, split_every, _merge_reservoirs, empty), compute)


def _empty_reservoir(k, m, salt, grouped):
    return lambda: empty_reservoir(k, m, salt, grouped)
