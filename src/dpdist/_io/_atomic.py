"""Crash-safe file replacement and an exclusive lock.

:func:`atomic_writer` writes to a temporary file in the destination's
directory, flushes and fsyncs it, renames it over the destination with
``os.replace`` (atomic on POSIX) and fsyncs the directory so the rename
itself is durable.  A crash at any moment leaves either the old file or the
new one, never a mixture.  The environment variable
``DPDIST_TEST_SLEEP_BEFORE_RENAME`` (seconds) pauses between the fsync and the
rename; it exists so tests can kill a writer at the worst moment.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import IO, Iterator

from .._types import PathLike
from ..errors import DPDistError

__all__ = ["atomic_writer", "exclusive_lock", "SLEEP_BEFORE_RENAME_ENV"]

SLEEP_BEFORE_RENAME_ENV = "DPDIST_TEST_SLEEP_BEFORE_RENAME"


@contextlib.contextmanager
def atomic_writer(path: PathLike, private: bool = False) -> Iterator[IO[bytes]]:
    """Context manager yielding a binary file; on success it atomically replaces ``path``.

    The new file keeps the mode of the file it replaces (else the umask's default); with
    ``private`` only its owner may read or write it (group and other bits cleared).
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    handle = tempfile.NamedTemporaryFile(dir=directory, prefix=f".{path.name}.", suffix=".tmp", delete=False)
    try:
        os.chmod(handle.name, _mode_for(path) & (0o700 if private else 0o7777))
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        pause = float(os.environ.get(SLEEP_BEFORE_RENAME_ENV, "0") or 0)
        if pause > 0:
            time.sleep(pause)
        os.replace(handle.name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(handle.name)
        raise
    _fsync_directory(directory)


def _mode_for(path: Path) -> int:
    """The destination's mode if it exists, else what ``open`` would give (0o666 minus the umask)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_directory(directory: Path) -> None:
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(descriptor)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def exclusive_lock(path, owner: str, *, wait: float = 0.0):
    """Hold an exclusive advisory lock on ``path + '.lock'``.

    If another process holds it, fail at once (``wait=0``, the default) or retry for up to
    ``wait`` seconds (for short critical sections such as a budget charge).
    """
    try:
        import fcntl  # lazy: an optional dependency, tried
    except ImportError:  # pragma: no cover - Windows: no advisory lock
        yield
        return
    lock_path = Path(f"{path}.lock")
    deadline = time.monotonic() + wait
    with open(lock_path, "a+b") as handle:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise DPDistError(
                        f"{owner}: the state {str(path)!r} is locked by another process (lock file {str(lock_path)!r})."
                    ) from None
                time.sleep(0.01)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
