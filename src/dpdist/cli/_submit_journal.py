"""``dpdist submit --column``: a journal of the randomized batches, so a re-run resends, never re-randomizes.

Randomized values have no identity of their own: a run killed after some batches
were counted, then run again, used to randomize every row again and count the
counted ones twice (38,000-50,000 of 50,000 reports were doubled that way).
Now every row is randomized once, the batches are encoded as the exact request
bodies they will be, each under a fresh random batch id, and written to a
journal file (atomically, owner-only) *before* the first one is sent. A re-run of
the same command (same server, campaign, config, column, file content and memo)
finds the journal and sends the same bytes under the same batch ids; the server
counts a batch id once, so batches it already counted are acknowledged as
duplicates. The journal holds reports only (never values) and stays after the run,
so running the command again never counts the file twice.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from .._io._atomic import atomic_writer
from .._io._binary import read_header
from ..errors import InvalidParameterError
from ..io import encode_record, new_file_id

__all__ = ["journal_path", "write_journal", "journal_records", "check_journal_option", "data_digest"]


def _default_directory() -> Path:
    """``$DPDIST_CACHE_DIR/submit``, else ``$XDG_CACHE_HOME/dpdist/submit``, else ``~/.cache/dpdist/submit``."""
    if os.environ.get("DPDIST_CACHE_DIR"):
        return Path(os.environ["DPDIST_CACHE_DIR"]) / "submit"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "dpdist" / "submit"


def data_digest(data) -> str:
    """The SHA-256 of a data file's bytes (hex): what tells a journal of this file from one of another."""
    content = hashlib.sha256()
    with open(data, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            content.update(block)
    return content.hexdigest()


def journal_path(server: str, campaign: str, config: dict, column: str, data, memo: str | None, *,
                 device: str | None = None) -> Path:
    """Where the journal of this submission lives: keyed by everything that decides its reports (``device``: what
    tells two devices on one machine apart, their issuer credential: hashed, never stored)."""
    key = json.dumps(
        {
            "server": server.rstrip("/"),
            "campaign": campaign,
            "config": config,
            "column": column,
            "data": data_digest(data),
            "memo": None if memo is None else str(Path(memo).resolve()),
            **({} if device is None else {"device": hashlib.sha256(device.encode()).hexdigest()}),
        },
        sort_keys=True,
        default=str,
    )
    return _default_directory() / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.bin"


def write_journal(path: Path, protocol, batches: Iterable[np.ndarray]) -> int:
    """Encode each batch as one binary record under a fresh batch id, all written atomically; returns the count."""

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    written = 0
    with atomic_writer(path, private=True) as handle:
        for reports in batches:
            handle.write(encode_record(protocol, reports, new_file_id()))
            written += 1
    return written


def journal_records(path: Path) -> Iterator[tuple[str, bytes]]:
    """``(batch id, request body)`` of every batch in the journal, in order."""

    with open(path, "rb") as handle:
        while True:
            start = handle.tell()
            header = read_header(handle, str(path))
            if header is None:
                return
            handle.seek(header["payload_bytes"], 1)
            end = handle.tell()
            handle.seek(start)
            yield header["file_id"], handle.read(end - start)


def check_journal_option(path: Path, *, directory: bool) -> None:
    """Refuse a ``--journal`` that cannot hold a journal, naming the option (before anything is read or drawn)."""
    kind = "a directory (a campaign in rounds keeps one)" if directory else "a file"
    if path.exists() and path.is_dir() != directory:
        raise InvalidParameterError(f"The '--journal' option must name {kind}; {str(path)!r} is "
                                    f"{'a directory' if path.is_dir() else 'a file'}.")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise InvalidParameterError(f"The '--journal' option names {str(path)!r}, under {str(parent)!r}, which is not a "
                                    "directory.")
