"""Which report file is which: random file ids, and the identity every ingest path dedupes on.

Two devices that each send the same few reports can produce byte-identical
files, so a content hash cannot tell a re-submission of one file from two
different files.  :class:`~dpdist.io.ReportWriter` therefore writes a random
128-bit *file id* into every file it makes (each binary record header, and the
Parquet schema metadata).  Every ingest path (``dpdist aggregate``,
:func:`dpdist.distributed.aggregate_files`, the collection service) keys its
no-file-twice rule on :func:`dpdist._io._dedupe.file_identities`: the file ids a
file carries, or for a file written before ids existed, its SHA-256 content
fingerprint.  This module only makes and checks ids; reading them out of a file
is :mod:`dpdist._io._dedupe`'s job (it needs the file formats, which need this).
"""

from __future__ import annotations

import hashlib
import re
import secrets

from ..errors import MalformedReportError
from .._types import PathLike

__all__ = ["new_file_id", "check_file_id", "file_fingerprint"]

_FILE_ID = re.compile(r"[0-9a-f]{32}")


def new_file_id() -> str:
    """A fresh random file id: 32 lower-case hex digits (128 bits from the OS CSPRNG)."""
    return secrets.token_hex(16)


def check_file_id(file_id, source: str) -> str:
    """``file_id`` if it is 32 lower-case hex digits, else :class:`MalformedReportError`."""
    if not isinstance(file_id, str) or not _FILE_ID.fullmatch(file_id):
        raise MalformedReportError(f"{source}: file id {file_id!r} is not 32 lower-case hex digits.")
    return file_id


def file_fingerprint(path: PathLike, block_bytes: int = 1 << 20) -> str:
    """``"sha256:<hex>"`` of a file's content (streamed; the name and timestamps do not matter)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(block_bytes):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"
