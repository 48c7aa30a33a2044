"""Files written whole or not at all, and the clean-up of writes that a kill interrupted.

A file is written to ``<name>.tmp<pid>`` in its own folder and moved over ``<name>`` with
:func:`os.replace` (atomic on POSIX and Windows), so a reader or a killed run never sees a
half-written cache cell, table or report.  A kill between the two steps leaves the
temporary file behind; :func:`remove_stale_temporaries` deletes those of dead processes.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["atomic_path", "write_text_atomically", "remove_stale_temporaries"]

TEMPORARY_MARK = ".tmp"
#: Where the writer's process cannot be checked (not POSIX), a temporary file this old is stale.
_STALE_SECONDS = 3600.0


@contextmanager
def atomic_path(path) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``path``, on error it is deleted."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}{TEMPORARY_MARK}{os.getpid()}")
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_text_atomically(path, text: str) -> Path:
    with atomic_path(path) as temporary:
        temporary.write_text(text)
    return Path(path)


def remove_stale_temporaries(folder) -> int:
    """Delete the ``*.tmp<pid>`` files of ``folder`` whose writer is gone; return how many."""
    removed = 0
    for candidate in Path(folder).glob(f"*{TEMPORARY_MARK}*"):
        pid = candidate.name.rpartition(TEMPORARY_MARK)[2]
        if pid.isdigit() and candidate.is_file() and not _writer_alive(int(pid), candidate):
            candidate.unlink(missing_ok=True)
            removed += 1
    return removed


def _writer_alive(pid: int, path: Path) -> bool:
    if pid == os.getpid():
        return False  # this process is not writing it: its writes finish or clean up in atomic_path
    if os.name != "posix":  # os.kill(pid, 0) would terminate the process on Windows
        return time.time() - path.stat().st_mtime < _STALE_SECONDS
    try:
        os.kill(pid, 0)  # signal 0: only checks that the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True
