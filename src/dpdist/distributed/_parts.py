"""What the Dask and Spark back ends share: report files cut into parts, a part's aggregator state, merging states.

A part is one Parquet row group or one whole dpdist binary file: the unit of one task on any
cluster.  A state is an :class:`~dpdist.local.Aggregator`; merging adds integer statistics, so
states merged in any grouping and order equal the one-process aggregate exactly.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable

from .._io._arrow import reports_from_arrow
from .._io._dedupe import check_distinct_files
from .._io._files import file_format, iter_report_batches, protocol_of_file
from .._types import PathLike
from .._validation import Items, OneOf
from .._validation import PathLike as PathRule

if TYPE_CHECKING:
    from ..local import Aggregator, LocalProtocol

__all__ = ["file_parts", "state_of_file_part", "merge_states"]


#: ``paths`` of the functions that read report files: one path or a non-empty list of them
PATHS = OneOf((PathRule(), Items(PathRule(), "a non-empty list of paths", min_length=1)),
              "a path (a non-empty str or os.PathLike) or a non-empty list of them")


def file_parts(paths: PathLike | Iterable[PathLike], protocol: LocalProtocol | None, owner: str
               ) -> tuple[LocalProtocol, list[tuple[str, int | None]]]:
    """``(protocol, parts)`` of report files: the protocol given or the first file's, and ``(path, row group)``
    per Parquet row group (``(path, None)`` for a binary file); a file given twice is refused."""
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)  # at least one: the tables of PATHS
    check_distinct_files(paths, owner)  # one no-file-twice rule, as in `dpdist aggregate`
    protocol = protocol if protocol is not None else protocol_of_file(paths[0])
    parts: list[tuple[str, int | None]] = []
    for path in map(str, paths):
        if file_format(path) == "parquet":
            import pyarrow.parquet as pq  # lazy: optional extra (pyarrow)

            parts += [(path, group) for group in range(pq.ParquetFile(path).metadata.num_row_groups)]
        else:
            parts.append((path, None))
    return protocol, parts


def state_of_file_part(protocol: LocalProtocol, path: str, row_group: int | None) -> Aggregator:
    """State of one Parquet row group, or of a whole dpdist binary file (``row_group=None``)."""
    aggregator = protocol.aggregator()
    if row_group is None:
        for batch in iter_report_batches(path, protocol):
            aggregator.add_batch(batch)
        return aggregator
    import pyarrow.parquet as pq  # lazy: optional extra (pyarrow)

    with pq.ParquetFile(path, pre_buffer=False) as parquet:
        table = parquet.read_row_group(row_group, use_threads=False).replace_schema_metadata(parquet.schema_arrow.metadata)
    return aggregator.add_batch(reports_from_arrow(table, protocol, f"{path} row group {row_group}"))


def merge_states(*states: Aggregator) -> Aggregator:
    """A new state, the sum of ``states`` (none of them changed)."""
    merged = states[0].copy()
    for state in states[1:]:
        merged.merge(state)
    return merged
