"""The state file format: a versioned binary file written atomically, and its ingest journal.

This module knows states only as their fields (config, n, statistic, rejected
counts), never as :class:`~dpdist.local.Aggregator` objects:
:mod:`dpdist._io._state` builds aggregators on top of it.

Layout::

    magic      8 bytes  b"DPDISTS\\n"
    version    uint16 little-endian  (STATE_VERSION)
    length     uint32 little-endian  (bytes of the header)
    header     UTF-8 JSON: {"config", "n", "rejected", "dtype", "size", "crc32",
                            "journal": {"bytes", "crc32", "entries"}, "header_crc32"}
    statistic  the sufficient statistic, raw little-endian bytes

The report files a state has ingested are recorded in one of two places, so
that every write of the state is ONE atomic file replacement:

* :func:`write_state` (:func:`dpdist.io.save_state`) puts
  them in the header (``"ingested"``: identity -> record) and commits an empty
  journal.  The state file is then self-contained: a writer killed at any
  moment leaves the old state or the new one, each with its own records, and
  :func:`read_state` with ``journal=False`` (``dpdist estimate --state``)
  never needs a journal.
* ``dpdist aggregate`` commits files one at a time in the *ingest journal*
  ``<state>.ingested``, one JSON line each: ``{"keys": [identities], "file",
  "n", "rejected"}`` (identities from :func:`dpdist._io._dedupe.file_identities`).
  The journal is append-only and the state header commits its prefix (length
  and CRC-32):

  1. :func:`append_ingested` truncates the journal to the committed length,
     appends the new lines (the first append after :func:`write_state` also
     moves the header's records into the journal) and fsyncs;
  2. then replaces the state file atomically with the new statistic and the
     new committed length (and no header records).

  A crash between 1 and 2 leaves the old state and journal lines past the
  committed length, which readers ignore: the file is neither counted nor
  recorded.  So the state is always the old one or the new one, never a file
  counted twice, and each ingested file costs O(1) in the number of files
  already ingested (the journal is read once, when the state is loaded).

A write never rewrites the committed prefix of a journal in place, which is
what made a save unsafe (replacing the journal, then the state: a kill between
the two would leave a state that never loads again).
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
from .._types import PathLike

__all__ = ["STATE_VERSION", "EMPTY_JOURNAL", "journal_path", "write_state", "append_ingested", "read_state"]

STATE_MAGIC = b"DPDISTS\n"
STATE_VERSION = 1
_PREFIX = struct.Struct("<8sHI")
#: the journal record of a state with no ingested file
EMPTY_JOURNAL = {"bytes": 0, "crc32": 0, "entries": 0}


def journal_path(path: PathLike) -> Path:
    """The ingest journal beside a state file: ``<state>.ingested``."""
    path = Path(path)
    return path.with_name(path.name + ".ingested")


def _journal_line(keys: list[str], record: dict) -> bytes:
    return (json.dumps({"keys": list(keys), **record}, sort_keys=True) + "\n").encode()


def write_state(path, fields: dict, ingested: dict[str, dict] | None = None) -> dict[str, int]:
    """Write a self-contained state to ``path`` atomically; return its (empty) journal record.

    Parameters
    ----------
    path : str or Path
        Destination; replaced atomically (temp file, fsync, rename, fsync of the directory).
    fields : dict
        ``config`` (dict), ``n`` (int), ``statistic`` (ndarray), ``rejected`` (dict).
    ingested : dict, optional
        Identity -> record of the report files already added, stored in the state's
        header (use :func:`append_ingested` to add files one at a time).

    The state commits an empty journal, so a journal left beside it by earlier
    runs is no longer part of it; it is removed once the new state is durable (a
    crash before that leaves it unread, and the next append truncates it).
    """
    _write_state(path, fields, dict(EMPTY_JOURNAL), ingested or {})
    journal_path(path).unlink(missing_ok=True)
    return dict(EMPTY_JOURNAL)


def append_ingested(
    path, fields: dict, journal: dict[str, int], keys: list[str], record: dict, pending: dict[str, dict] | None = None
) -> dict[str, int]:
    """Commit one more ingested file; return the new journal record.

    ``fields`` is the state that already holds the file's reports.  ``pending``
    are the records the state's header holds (written by :func:`write_state`);
    they are moved into the journal with this file's line.  Appends the lines,
    then replaces the state atomically; cost O(1) in the number of files
    already in the journal (see the module docstring for the crash guarantees).
    """
    groups: dict[str, list[str]] = {}  # one line per file: its identities share one record
    for key, entry in (pending or {}).items():
        groups.setdefault(json.dumps(entry, sort_keys=True), []).append(key)
    lines = b"".join(_journal_line(group, json.loads(entry)) for entry, group in groups.items())
    lines += _journal_line(keys, record)
    committed = journal["bytes"]
    with open(journal_path(path), "ab") as handle:
        handle.truncate(committed)  # drop lines of a run that crashed before committing them
        handle.write(lines)
        handle.flush()
        os.fsync(handle.fileno())
    journal = {
        "bytes": committed + len(lines),
        "crc32": zlib.crc32(lines, journal["crc32"]),
        "entries": journal["entries"] + len(groups) + 1,
    }
    _write_state(path, fields, journal, {})
    return journal


def _write_state(path, fields: dict, journal: dict[str, int], ingested: dict[str, dict]) -> None:
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
    if ingested:
        header_fields["ingested"] = {str(key): dict(entry) for key, entry in ingested.items()}
    header = json.dumps({**header_fields, "header_crc32": _header_checksum(header_fields)}, sort_keys=True).encode()
    with atomic_writer(path) as handle:
        handle.write(_PREFIX.pack(STATE_MAGIC, STATE_VERSION, len(header)))
        handle.write(header)
        handle.write(payload)


def _header_checksum(fields: dict) -> int:
    """CRC-32 of the header's canonical JSON (every field but the checksum itself)."""
    return zlib.crc32(json.dumps(fields, sort_keys=True).encode())


def read_state(
    path, expected_config: dict | None = None, *, journal: bool = True
) -> tuple[dict, dict[str, dict], dict[str, int], dict[str, dict]]:
    """Read a state written by :func:`write_state` or :func:`append_ingested`.

    Returns its fields, the ingested files (identity -> record: the header's and
    the journal's), the journal record, and the header's records alone (those
    the next :func:`append_ingested` moves into the journal).  The fields are
    checked against the file's checksums only; the caller validates them as an
    aggregator state (:meth:`dpdist.local.Aggregator.from_dict`).  With
    ``expected_config``, the state's config must equal it, else
    :class:`~dpdist.errors.IncompatibleStateError` names both configs.  With
    ``journal=False`` the journal file is not read (nor needed): the ingested
    files are then the header's only.
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
        raise IncompatibleStateError(f"{source!r} is not a dpdist state file (its first bytes are not a state file's; they "
                                     "are not shown: they may be data).")
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
    in_header = header.get("ingested", {})  # written by write_state (or before the journal existed)
    if not isinstance(in_header, dict) or not all(isinstance(entry, dict) for entry in in_header.values()):
        raise IncompatibleStateError(f"The state file {source!r} has an unreadable list of ingested files.")
    record = header.get("journal", dict(EMPTY_JOURNAL))
    ingested = dict(in_header)
    if journal:
        ingested.update(_read_journal(path, record, source))
    return fields, ingested, dict(record), dict(in_header)


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
