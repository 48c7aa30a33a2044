"""The state file format: a versioned binary file written atomically, and its ingest journal.

This module knows states only as their fields (config, n, statistic, rejected
counts), never as :class:`~dpdist.local.Aggregator` objects, so that
``Aggregator.save``/``load`` can use it without an import cycle:
:mod:`dpdist._io._state` builds aggregators on top of it.

Layout::

    magic      8 bytes  b"DPDISTS\\n"
    version    uint16 little-endian  (STATE_VERSION)
    length     uint32 little-endian  (bytes of the header)
    header     UTF-8 JSON: {"config", "n", "rejected", "dtype", "size", "crc32",
                            "journal": {"bytes", "crc32", "entries"}, "header_crc32"}
    statistic  the sufficient statistic, raw little-endian bytes

Beside it, the *ingest journal* ``<state>.ingested`` lists the report files
already added, one JSON line each: ``{"keys": [identities], "file", "n",
"rejected"}`` (identities from :func:`dpdist._io._dedupe.file_identities`), so
``dpdist aggregate`` can refuse to count a file twice.  The journal is
append-only and the state header commits its prefix (length and CRC-32):

1. :func:`append_ingested` truncates the journal to the committed length,
   appends the new lines and fsyncs;
2. then replaces the state file atomically with the new statistic and the new
   committed length.

A crash between 1 and 2 leaves the old state and journal lines past the
committed length, which readers ignore: the file is neither counted nor
recorded.  So the state is always the old one or the new one, never a file
counted twice, and each ingested file costs O(1) in the number of files already
ingested (the journal is read once, when the state is loaded).  States written
before the journal existed (an ``"ingested"`` dict in the header) still load.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path

import numpy as np

from .. import _json
from ..errors import IncompatibleStateError, InvalidParameterError
from ._atomic import atomic_writer

__all__ = ["STATE_VERSION", "EMPTY_JOURNAL", "journal_path", "write_state", "append_ingested", "read_state"]

STATE_MAGIC = b"DPDISTS\n"
STATE_VERSION = 1
_PREFIX = struct.Struct("<8sHI")
#: the journal record of a state with no ingested file
EMPTY_JOURNAL = {"bytes": 0, "crc32": 0, "entries": 0}


def journal_path(path) -> Path:
    """The ingest journal beside a state file: ``<state>.ingested``."""
    path = Path(path)
    return path.with_name(path.name + ".ingested")


def _journal_line(keys: list[str], record: dict) -> bytes:
    return (json.dumps({"keys": list(keys), **record}, sort_keys=True) + "\n").encode()


def write_state(path, fields: dict, ingested: dict[str, dict] | None = None) -> dict[str, int]:
    """Write a state to ``path`` atomically, with a new journal; return the journal record.

    Parameters
    ----------
    path : str or Path
        Destination; replaced atomically (temp file, fsync, rename, fsync of the directory).
    fields : dict
        ``config`` (dict), ``n`` (int), ``statistic`` (ndarray), ``rejected`` (dict).
    ingested : dict, optional
        Identity -> record of the report files already added; written as a new
        journal (use :func:`append_ingested` to add files one at a time).
    """
    lines = b"".join(_journal_line([key], record) for key, record in (ingested or {}).items())
    if lines or journal_path(path).exists():
        with atomic_writer(journal_path(path)) as handle:
            handle.write(lines)
    journal = {"bytes": len(lines), "crc32": zlib.crc32(lines), "entries": len(ingested or {})}
    _write_state(path, fields, journal)
    return journal


def append_ingested(path, fields: dict, journal: dict[str, int], keys: list[str], record: dict) -> dict[str, int]:
    """Commit one more ingested file; return the new journal record.

    ``fields`` is the state that already holds the file's reports.  Appends the
    file's journal line, then replaces the state atomically; cost O(1) in the
    number of files already ingested (see the module docstring for the crash
    guarantees).
    """
    line = _journal_line(keys, record)
    committed = journal["bytes"]
    with open(journal_path(path), "ab") as handle:
        handle.truncate(committed)  # drop lines of a run that crashed before committing them
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())
    journal = {
        "bytes": committed + len(line),
        "crc32": zlib.crc32(line, journal["crc32"]),
        "entries": journal["entries"] + 1,
    }
    _write_state(path, fields, journal)
    return journal


def _write_state(path, fields: dict, journal: dict[str, int]) -> None:
    statistic = np.ascontiguousarray(fields["statistic"])
    statistic = statistic.astype(statistic.dtype.newbyteorder("<"))
    payload = statistic.tobytes()
    header_fields = {
        "config": fields["config"],
        "n": int(fields["n"]),
        "rejected": {str(k): int(v) for k, v in fields["rejected"].items()},
        "dtype": statistic.dtype.str,
        "size": int(statistic.size),
        "crc32": zlib.crc32(payload),
        "journal": journal,
    }
    header = json.dumps({**header_fields, "header_crc32": _header_checksum(header_fields)}, sort_keys=True).encode()
    with atomic_writer(path) as handle:
        handle.write(_PREFIX.pack(STATE_MAGIC, STATE_VERSION, len(header)))
        handle.write(header)
        handle.write(payload)


def _header_checksum(fields: dict) -> int:
    """CRC-32 of the header's canonical JSON (every field but the checksum itself)."""
    return zlib.crc32(json.dumps(fields, sort_keys=True).encode())


def read_state(path, expected_config: dict | None = None) -> tuple[dict, dict[str, dict], dict[str, int]]:
    """Read a state written by :func:`write_state`: its fields, ingested files and journal record.

    The fields are checked against the file's checksums only; the caller validates
    them as an aggregator state (:meth:`dpdist.local.Aggregator.from_dict`).  With
    ``expected_config``, the state's config must equal it, else
    :class:`~dpdist.errors.IncompatibleStateError` names both configs.
    """
    path = Path(path)
    source = str(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InvalidParameterError(f"The state file {source!r} cannot be read ({error.strerror}).") from None
    if len(data) < _PREFIX.size:
        raise IncompatibleStateError(f"{source!r} is not a dpdist state file (only {len(data)} bytes).")
    magic, version, length = _PREFIX.unpack_from(data)
    if magic != STATE_MAGIC:
        raise IncompatibleStateError(f"{source!r} is not a dpdist state file (magic {magic!r}).")
    if version != STATE_VERSION:
        raise IncompatibleStateError(
            f"The state file {source!r} has format version {version}; this dpdist reads version {STATE_VERSION}."
        )
    start = _PREFIX.size + length
    try:
        header = _json.loads(data[_PREFIX.size : start].decode())
        stored_checksum = header.pop("header_crc32")
        config = header["config"]
        dtype = np.dtype(header["dtype"])
        size = int(header["size"])
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise IncompatibleStateError(f"The state file {source!r} has an unreadable header ({error}).") from None
    if _header_checksum(header) != stored_checksum:
        raise IncompatibleStateError(f"The state file {source!r} is corrupted (its header fails its check).")
    payload = data[start:]
    if dtype.hasobject or len(payload) != size * dtype.itemsize or zlib.crc32(payload) != header.get("crc32"):
        raise IncompatibleStateError(f"The state file {source!r} is truncated or corrupted (statistic fails its check).")
    if expected_config is not None and expected_config != config:
        raise IncompatibleStateError(
            f"The state file {source!r} holds config {config}, which differs from the protocol's config "
            f"{expected_config}."
        )
    fields = {
        "config": config,
        "n": header.get("n"),
        "statistic": np.frombuffer(payload, dtype=dtype),
        "rejected": header.get("rejected", {}),
    }
    ingested = dict(header.get("ingested", {}))  # states written before the journal
    journal = header.get("journal", dict(EMPTY_JOURNAL))
    ingested.update(_read_journal(path, journal, source))
    return fields, ingested, dict(journal)


def _read_journal(path, journal, source: str) -> dict[str, dict]:
    """The committed journal lines (identity -> record); lines past the committed length are ignored."""
    try:
        length, crc, entries = int(journal["bytes"]), int(journal["crc32"]), int(journal["entries"])
    except (KeyError, TypeError, ValueError):
        raise IncompatibleStateError(f"The state file {source!r} has an unreadable journal record.") from None
    if length == 0:
        return {}
    try:
        with open(journal_path(path), "rb") as handle:
            data = handle.read(length)
    except OSError as error:
        raise IncompatibleStateError(
            f"The ingest journal {str(journal_path(path))!r} of {source!r} cannot be read ({error.strerror}); "
            "keep it beside the state file."
        ) from None
    if len(data) != length or zlib.crc32(data) != crc:
        raise IncompatibleStateError(f"The ingest journal {str(journal_path(path))!r} is truncated or corrupted.")
    ingested: dict[str, dict] = {}
    lines = data.splitlines()
    if len(lines) != entries:
        raise IncompatibleStateError(f"The ingest journal {str(journal_path(path))!r} is corrupted.")
    for line in lines:
        entry = json.loads(line)
        for key in entry.pop("keys"):
            ingested[key] = entry
    return ingested
