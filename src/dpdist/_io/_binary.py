"""Compact versioned binary records of report batches.

A record is::

    magic      8 bytes  b"DPDISTR\\n"
    version    uint16 little-endian  (RECORD_VERSION)
    length     uint32 little-endian  (bytes of the header)
    header     UTF-8 JSON: {"config", "dtype" (NumPy descr), "shape", "payload_bytes", "crc32",
               "file_id" (optional: 32 lower-case hex digits, the same in every record of a file)}
    payload    the raw C-order array bytes (bit-packed protocols are already packed)

A file is a sequence of records, so a writer can stream batches.  Decoding
never unpickles: the dtype must be plain data (no Python objects).
"""

from __future__ import annotations

import io
import json
import math
import struct
import zlib
from typing import TYPE_CHECKING, Any, BinaryIO, Collection, Iterator

import numpy as np

from .. import _json
from .._types import ArrayLike
from ..errors import MalformedReportError
from ..local import ReportBatch, from_config
from ._identity import check_file_id

if TYPE_CHECKING:
    from ..local import LocalProtocol

__all__ = ["RECORD_MAGIC", "RECORD_VERSION", "encode_record", "decode_record", "iter_records", "count_record_rows"]

RECORD_MAGIC = b"DPDISTR\n"
RECORD_VERSION = 1
_PREFIX = struct.Struct("<8sHI")
_MAX_HEADER_BYTES = 1 << 20


def encode_record(protocol: LocalProtocol, reports: ArrayLike, file_id: str | None = None) -> bytes:
    """One record holding ``reports`` (validated first: invalid reports are never written).

    ``file_id`` (see :func:`dpdist._io._identity.new_file_id`) names the file the
    record belongs to, so ingest paths can tell a re-submitted file from a
    different file with the same bytes.
    """
    array = _checked_for_writing(protocol, reports)
    payload = np.ascontiguousarray(array).tobytes()
    fields: dict[str, Any] = {
        "config": protocol.config(),
        "dtype": np.lib.format.dtype_to_descr(array.dtype),
        "shape": list(array.shape),
        "payload_bytes": len(payload),
        "crc32": zlib.crc32(payload),
    }
    if file_id is not None:
        fields["file_id"] = check_file_id(file_id, "encode_record")
    header = json.dumps(fields, sort_keys=True).encode()
    return _PREFIX.pack(RECORD_MAGIC, RECORD_VERSION, len(header)) + header + payload


def _checked_for_writing(protocol, reports) -> np.ndarray:
    """Validate with the protocol's checks (all rows must be valid) and cast to its wire layout."""
    report_format = protocol.report_format
    try:
        batch = protocol.validate_reports(reports, on_invalid="raise")
    except MalformedReportError as error:
        raise MalformedReportError(f"Reports to write: {error} Only valid reports are written.") from None
    array = np.asarray(batch.reports)
    if array.dtype != report_format.dtype:
        array = array.astype(report_format.dtype)
    return array


def read_header(stream: BinaryIO, source: str) -> dict | None:
    """The next record's header (``None`` at the end of the stream)."""
    prefix = stream.read(_PREFIX.size)
    if not prefix:
        return None
    if len(prefix) < _PREFIX.size:
        raise MalformedReportError(f"{source}: truncated record prefix ({len(prefix)} bytes).")
    magic, version, length = _PREFIX.unpack(prefix)
    if magic != RECORD_MAGIC:
        raise MalformedReportError(f"{source}: not a dpdist report record (its first bytes are not {RECORD_MAGIC!r}; "
                                   "they are not shown: they may be data).")
    if version != RECORD_VERSION:
        raise MalformedReportError(
            f"{source}: report record version {version} is not supported (this dpdist reads {RECORD_VERSION})."
        )
    if length > _MAX_HEADER_BYTES:
        raise MalformedReportError(f"{source}: record header of {length} bytes exceeds {_MAX_HEADER_BYTES}.")
    raw = stream.read(length)
    try:
        header = _json.loads(raw.decode())
        dtype = _dtype_of(header["dtype"])
        shape = tuple(_whole(size) for size in header["shape"])
        payload_bytes = _whole(header["payload_bytes"])
        config = header.get("config")
        file_id = header.get("file_id")
        if file_id is not None:
            file_id = check_file_id(file_id, source)
    except KeyError as error:
        raise MalformedReportError(f"{source}: unreadable record header (no {error} field).") from None
    except (UnicodeDecodeError, ValueError, TypeError, AttributeError, SyntaxError) as error:  # SyntaxError: numpy's
        # descr parser on a dtype string such as ",u1" (a malformed record, refused as one: never a 500 for its group)
        raise MalformedReportError(f"{source}: unreadable record header ({error}).") from None
    if not isinstance(config, dict):
        got = "no such field" if "config" not in header else f"{config!r:.80}"
        raise MalformedReportError(
            f"{source}: record header has no protocol config: its 'config' field must be the config object of the "
            f"protocol that wrote the reports (io.encode_record writes it). Got {got}."
        )
    # a size past int64 ("shape": [10**30]) or a sub-array dtype ("(2,)u1": its rows would not have the shape said) is
    # no report batch's either: refused as malformed, never an OverflowError or ValueError (a 500 for its body, and
    # for every body of its group)
    if dtype.hasobject or dtype.subdtype is not None or len(shape) < 1 or min(shape) < 0 or max(shape) >= _INT64:
        raise MalformedReportError(f"{source}: record header has dtype {dtype}, shape {shape!r:.200}: not a report batch.")
    if payload_bytes != _int64_product(shape) * dtype.itemsize:
        raise MalformedReportError(
            f"{source}: record payload of {payload_bytes} bytes does not match dtype {dtype} and shape {shape}."
        )
    return {
        "config": config,
        "dtype": dtype,
        "shape": shape,
        "payload_bytes": payload_bytes,
        "crc32": header.get("crc32"),
        "file_id": file_id,
    }


def _whole(number: Any) -> int:
    """A header's size: a JSON integer (``true``, ``1.5`` or ``"1"`` is no size; ``int`` took them as 1)."""
    if type(number) is not int:
        raise ValueError(f"a size must be an integer, got {number!r:.40}")
    return number


_DTYPES: dict[str, np.dtype] = {}
_INT64 = 1 << 63


def _dtype_of(descr) -> np.dtype:
    """``np.lib.format.descr_to_dtype`` of a header's descr (a plain one, such as ``"|u1"``, read once per process)."""
    if not isinstance(descr, str):
        return np.lib.format.descr_to_dtype(_as_descr(descr))
    dtype = _DTYPES.get(descr)
    if dtype is None:
        dtype = np.lib.format.descr_to_dtype(_as_descr(descr))
        if len(_DTYPES) > 64:
            _DTYPES.clear()
        _DTYPES[descr] = dtype
    return dtype


def _int64_product(shape: tuple) -> int:
    """``int(np.prod(shape, dtype=np.int64))`` of a shape of ints in [0, 2**63) (wrapping around as NumPy's int64
    does), without NumPy's cost per call."""
    product = math.prod(shape) % (1 << 64)
    return product - (1 << 64) if product >= _INT64 else product


def _as_descr(descr: Any) -> Any:
    """JSON turned the descr's tuples into lists; turn them back."""
    if not isinstance(descr, list):
        return descr
    fields = []
    for name, kind, *shape in descr:
        fields.append((name, _as_descr(kind), *(tuple(s) for s in shape)))
    return fields


_CONFIGS: dict[int, list] = {}


def _known(protocol) -> list:
    """``[protocol, its config, the separators of its config's JSON or None until asked]``, kept once per protocol
    object (a service decodes every request's record against the same protocol object)."""
    seen = _CONFIGS.get(id(protocol))
    if seen is not None and seen[0] is protocol:  # the entry holds the protocol: its id is not reused meanwhile
        return seen
    if len(_CONFIGS) > 256:
        _CONFIGS.clear()
    seen = _CONFIGS[id(protocol)] = [protocol, protocol.config(), None]
    return seen


def _config_of(protocol) -> dict:
    """``protocol.config()``, built once per protocol object (building its config dict each time cost a few
    microseconds a request)."""
    return _known(protocol)[1]


def config_separators(protocol) -> int:
    """The ``","`` in ``protocol``'s config as JSON, counted once per protocol object (a JSON batch may carry the
    config; counting them for each batch cost in proportion to the config: 10.6 ms at 100k labels, 43 ms at 400k)."""
    known = _known(protocol)
    if known[2] is None:
        known[2] = json.dumps(known[1]).count(",")
    return known[2]


def decode_payload(protocol, header: dict, payload: bytes, source: str) -> ReportBatch:
    """Check a record's payload against ``protocol``; reject its rows by reason when they do not fit."""
    if len(payload) != header["payload_bytes"]:
        raise MalformedReportError(f"{source}: truncated record payload ({len(payload)} of {header['payload_bytes']} bytes).")
    if header["crc32"] is not None and zlib.crc32(payload) != header["crc32"]:
        raise MalformedReportError(f"{source}: record payload fails its CRC-32 check (corrupted).")
    n = header["shape"][0]
    if header["config"] != _config_of(protocol):
        return protocol.report_format.rejected(n, "other_config", protocol.config())
    layout = protocol.report_format
    if tuple(header["shape"][1:]) != layout.row_shape:
        return layout.rejected(n, "wrong_shape", protocol.config())
    array = np.frombuffer(payload, dtype=header["dtype"]).reshape(header["shape"])
    invalid = {}
    if array.dtype != layout.dtype:
        if not (np.issubdtype(array.dtype, np.integer) and np.issubdtype(layout.dtype, np.integer)):
            raise MalformedReportError(f"{source}: reports of dtype {array.dtype} cannot be read as dtype {layout.dtype}.")
        array, out_of_range = layout.fit(array)  # unrepresentable rows are out of range
        invalid = {"out_of_range": out_of_range}
    return protocol.validate_reports(array, invalid=invalid)


def decode_record(data: bytes, protocol: LocalProtocol | None = None, source: str = "report record") -> ReportBatch:
    """Decode one record; with ``protocol=None`` the record's own config is used."""

    stream = io.BytesIO(data)
    header = read_header(stream, source)
    if header is None:
        raise MalformedReportError(f"{source}: empty input, expected a report record.")
    protocol = protocol if protocol is not None else _protocol_of(header["config"], source)
    batch = decode_payload(protocol, header, stream.read(header["payload_bytes"]), source)
    if stream.read(1):
        raise MalformedReportError(f"{source}: trailing bytes after the record.")
    return batch


def iter_records(
    stream: BinaryIO, protocol=None, source: str = "report stream", *, skip_file_ids: Collection[str] = frozenset()
) -> Iterator[ReportBatch]:
    """Decode every record of a stream, in order (bounded memory: one record at a time).

    Records whose file id is in ``skip_file_ids`` are passed over unread (the
    parts of a concatenated file that were already counted).
    """
    while (header := read_header(stream, source)) is not None:
        if header["file_id"] is not None and header["file_id"] in skip_file_ids:
            stream.seek(header["payload_bytes"], 1)
            continue
        if protocol is None:
            protocol = _protocol_of(header["config"], source)
        yield decode_payload(protocol, header, stream.read(header["payload_bytes"]), source)


def count_record_rows(stream: BinaryIO, source: str = "report stream", *, skip_file_ids=frozenset()) -> int:
    """Total rows of a record stream (but those of ``skip_file_ids``), from the headers only."""
    return sum(
        header["shape"][0] for header in iter_headers(stream, source) if header["file_id"] not in skip_file_ids
    )


def iter_headers(stream: BinaryIO, source: str = "report stream") -> Iterator[dict]:
    """Every record header of a stream, seeking over the payloads."""
    while (header := read_header(stream, source)) is not None:
        yield header
        stream.seek(header["payload_bytes"], 1)


def _protocol_of(config, source):
    try:
        return from_config(config)
    except Exception as error:  # a bad embedded config makes the record unreadable
        raise MalformedReportError(f"{source}: the embedded config {config!r} is not valid ({error}).") from None
