"""Report batches as Arrow tables and Parquet files.

Columns follow the protocol's ``report_format`` (:class:`dpdist.local.ReportFormat`): a plain report is one
column ``report``; a structured report has one column per field.  A field with
a per-row shape ``(k,)`` of bytes (bit-packed vectors) is ``fixed_size_binary``
(compact in Parquet); of wider integers, ``fixed_size_list``.  The protocol
config, the layout and the format version are in the schema metadata.

Reading also accepts tables written by other tools: ``binary`` and ``list``
columns whose rows may have the wrong length (rejected as ``wrong_shape``),
nulls (``missing``) and wider integer types (values that do not fit are
``out_of_range``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _json
from .._types import ArrayLike
from ..errors import MalformedReportError
from ..local import ReportBatch, ReportFormat
from ..local._report_format import fit_values
from ._binary import _checked_for_writing, _protocol_of
from ._identity import check_file_id
from ._pyarrow import require_pyarrow

if TYPE_CHECKING:
    from ..local import LocalProtocol

__all__ = ["arrow_to_array", "ARROW_FORMAT", "ARROW_VERSION", "reports_to_arrow", "reports_from_arrow"]

ARROW_FORMAT = "dpdist-reports"
ARROW_VERSION = 1
_PLAIN_COLUMN = "report"


def _fields(layout: ReportFormat):
    """``(column name, base dtype, values per row)`` of each column; 0 values per row means a scalar."""
    if layout.dtype.names is not None and layout.row_shape:
        raise MalformedReportError(f"Structured reports with rows of shape {layout.row_shape} have no Arrow layout.")
    fields = []
    for name, base, shape in layout.value_columns():
        if base.names is not None:
            raise MalformedReportError(f"The nested report field {name!r} has no Arrow layout.")
        fields.append((name or _PLAIN_COLUMN, base, int(np.prod(shape)) if shape else 0))
    return fields


def reports_to_arrow(protocol: LocalProtocol, reports: ArrayLike, file_id: str | None = None) -> Any:
    """An Arrow table of ``reports`` (validated; all must be valid) with the config in its metadata.

    ``file_id`` (32 hex digits, see :mod:`dpdist._io._identity`) is stored as
    ``dpdist.file_id`` in the schema metadata when given.
    """
    pa = require_pyarrow()

    array = _checked_for_writing(protocol, reports)
    layout = protocol.report_format
    n = array.shape[0]
    columns, names = [], []
    for name, base, width in _fields(layout):
        values = array if layout.dtype.names is None else array[name]
        values = np.ascontiguousarray(values).reshape(n, width) if width else np.ascontiguousarray(values)
        if not width:
            column = pa.array(values)
        elif base.itemsize == 1 and base.kind == "u":
            column = pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), n, [None, pa.py_buffer(values.tobytes())])
        else:
            column = pa.FixedSizeListArray.from_arrays(pa.array(values.reshape(-1)), width)
        columns.append(column)
        names.append(name)
    metadata = {
        "dpdist.format": ARROW_FORMAT,
        "dpdist.version": str(ARROW_VERSION),
        "dpdist.config": json.dumps(protocol.config(), sort_keys=True),
        "dpdist.dtype": json.dumps(np.lib.format.dtype_to_descr(layout.dtype)),
        "dpdist.row_shape": json.dumps(list(layout.row_shape)),
    }
    if file_id is not None:
        metadata["dpdist.file_id"] = check_file_id(file_id, "reports_to_arrow")
    return pa.Table.from_arrays(columns, names=names, metadata=metadata)


def file_id_of_schema(schema, source: str) -> str | None:
    """The ``dpdist.file_id`` of a schema's metadata (``None`` for files written before file ids)."""
    raw = (schema.metadata or {}).get(b"dpdist.file_id")
    if raw is None:
        return None
    return check_file_id(raw.decode(errors="replace"), source)


def config_of_schema(schema, source: str):
    """The config in a schema's metadata, or ``None`` for a table written by another tool."""
    metadata = schema.metadata or {}
    if b"dpdist.config" not in metadata:
        return None
    if metadata.get(b"dpdist.format") != ARROW_FORMAT.encode():
        raise MalformedReportError(f"{source}: schema metadata format {metadata.get(b'dpdist.format')!r} is not {ARROW_FORMAT!r}.")
    version = metadata.get(b"dpdist.version", b"")
    if version != str(ARROW_VERSION).encode():
        raise MalformedReportError(
            f"{source}: report table version {version.decode(errors='replace')!r} is not supported "
            f"(this dpdist reads {ARROW_VERSION})."
        )
    try:
        return _json.loads(metadata[b"dpdist.config"])
    except ValueError as error:
        raise MalformedReportError(f"{source}: unreadable config in the schema metadata ({error}).") from None


def reports_from_arrow(table: Any, protocol: LocalProtocol | None = None, source: str = "report table") -> ReportBatch:
    """Read an Arrow table (or record batch) of reports; invalid rows are rejected and counted.

    Parameters
    ----------
    table : pyarrow.Table or pyarrow.RecordBatch
    protocol : LocalProtocol, optional
        The protocol to check against.  ``None`` uses the config in the
        metadata.  A table whose metadata names another config has all its
        rows rejected as ``"other_config"``; a table without dpdist metadata
        is read as reports of ``protocol``.
    """
    pa = require_pyarrow()
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    config = config_of_schema(table.schema, source)
    if protocol is None:
        if config is None:
            raise MalformedReportError(f"{source}: no dpdist config in the schema metadata; pass the protocol.")

        protocol = _protocol_of(config, source)
    n = table.num_rows
    if config is not None and config != protocol.config():
        return protocol.report_format.rejected(n, "other_config", protocol.config())
    array, invalid = arrow_to_array(table, protocol, source)
    return protocol.validate_reports(array, invalid=invalid)


def arrow_to_array(table, protocol, source: str):
    """The table's rows as an array in the protocol's report layout, and the masks of unreadable rows."""
    pa = require_pyarrow()
    n = table.num_rows
    layout = protocol.report_format
    array = layout.empty(n) if layout.dtype.names is not None else None
    invalid = {reason: np.zeros(n, dtype=bool) for reason in ("missing", "wrong_shape", "out_of_range")}
    for name, base, width in _fields(layout):
        if name not in table.column_names:
            raise MalformedReportError(
                f"{source}: {protocol.display_name} reports need the column(s) {[f[0] for f in _fields(layout)]}. "
                f"Got {table.column_names} instead."
            )
        column = table.column(name).combine_chunks() if n else pa.array([], type=table.column(name).type)
        values, masks = _column_values(column, base, width, n, f"{source}, column {name!r}")
        if array is None:  # plain reports: the column is the array
            array = values.reshape((n, *layout.row_shape))
        else:
            array[name] = values.reshape(array[name].shape)
        for reason, mask in masks.items():
            invalid[reason] |= mask
    return array, invalid


def _column_values(column, base: np.dtype, width: int, n: int, source: str):
    """Column as an array of ``base`` (``(n,)`` or ``(n, width)``) and its bad-row masks."""
    pa = require_pyarrow()
    import pyarrow.compute as pc  # lazy: optional extra (pyarrow)

    kind = column.type
    missing = np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool) if n else np.zeros(0, bool)
    if not width:
        if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)):
            raise MalformedReportError(f"{source}: expected numbers, got Arrow type {kind}.")
        raw = column.fill_null(0).to_numpy(zero_copy_only=False)
        values, out_of_range = fit_values(raw, base)
        return values, {"missing": missing, "out_of_range": out_of_range & ~missing}
    if pa.types.is_fixed_size_binary(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        row_bytes = width * base.itemsize
        # pyarrow.compute makes its functions at import and its stubs lack them: pyright cannot see them
        lengths = pc.binary_length(column).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)  # pyright: ignore[reportAttributeAccessIssue]
        good = (lengths == row_bytes) & ~missing
        if pa.types.is_fixed_size_binary(kind):
            data = np.frombuffer(column.buffers()[1], dtype=np.uint8)
            starts = (np.arange(n, dtype=np.int64) + column.offset) * kind.byte_width
        else:
            offset_type = np.int64 if pa.types.is_large_binary(kind) else np.int32
            offsets = np.frombuffer(column.buffers()[1], dtype=offset_type)[column.offset : column.offset + n + 1]
            data = np.frombuffer(column.buffers()[2], dtype=np.uint8) if column.buffers()[2] is not None else np.zeros(0, np.uint8)
            starts = offsets[:-1].astype(np.int64)
        if good.all() and (n < 2 or np.all(np.diff(starts) == row_bytes)):  # contiguous rows: one slice
            gathered = data[starts[0] : starts[0] + n * row_bytes].reshape(n, row_bytes) if n else np.zeros((0, row_bytes), np.uint8)
        else:
            gathered = np.zeros((n, row_bytes), dtype=np.uint8)
            gathered[good] = data[starts[good, None] + np.arange(row_bytes)]
        values = gathered.view(base.newbyteorder("<")).astype(base).reshape(n, width)
        return values, {"missing": missing, "wrong_shape": (lengths != row_bytes) & ~missing}
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        # (pyarrow.compute's functions again: made at import, missing from its stubs)
        lengths = pc.list_value_length(column).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)  # pyright: ignore[reportAttributeAccessIssue]
        flat = pc.list_flatten(column)  # pyright: ignore[reportAttributeAccessIssue]  (the same)
        if len(flat) != lengths.sum():
            raise MalformedReportError(f"{source}: list column with inconsistent lengths.")
        if not (pa.types.is_integer(flat.type) or pa.types.is_floating(flat.type) or pa.types.is_boolean(flat.type)):
            raise MalformedReportError(f"{source}: expected lists of numbers, got Arrow type {kind}.")
        child_missing = np.asarray(flat.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        child, child_out = fit_values(flat.fill_null(0).to_numpy(zero_copy_only=False), base)
        row_of_child = np.repeat(np.arange(n), lengths)
        missing = missing.copy()
        missing[row_of_child[child_missing]] = True
        out_of_range = np.zeros(n, dtype=bool)
        out_of_range[row_of_child[child_out]] = True
        good = (lengths == width) & ~missing
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if n else np.zeros(0, np.int64)
        values = np.zeros((n, width), dtype=base)
        values[good] = child[starts[good, None] + np.arange(width)]
        wrong = (lengths != width) & ~missing
        return values, {"missing": missing, "wrong_shape": wrong, "out_of_range": out_of_range & good}
    raise MalformedReportError(f"{source}: expected binary or list rows of {width} values, got Arrow type {kind}.")
