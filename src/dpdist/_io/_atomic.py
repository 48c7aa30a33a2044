"""Files replaced whole or not at all, durably; the clean-up of writes a kill interrupted; an exclusive lock.

:func:`atomic_path` yields a temporary path in the destination's folder
(``.NAME.PID-RANDOM.tmp``) for the caller to write; then the file is fsynced,
renamed over the destination with ``os.replace`` (atomic on POSIX and Windows)
and the folder fsynced, so the rename itself survives a power cut.  A crash at
any moment leaves either the old file or the new one, never a mixture.  On an
error the temporary file is deleted; a kill between the steps leaves it behind,
and :func:`remove_stale_temporaries` deletes those whose writer is gone.
:func:`atomic_writer` is the same with an open binary file,
:func:`write_text_atomically` with a text.  Every file dpdist writes whole goes
through here: states, ledgers, budgets, journals, releases, explain tables,
token files, the experiments' cells, tables, reports and pages.

Links.  A rename replaces the *name* it is given: through a symbolic link it
would put a regular file in the link's place, and a file with several hard
links would keep its old content under its other names.  A budget file or a
device ledger reached by two names would then fork into two accounts on its
first write, each with its own budget.  So every destination and every lock
goes through :func:`real_path`: a symbolic link is followed to the file it
names (the lock and the write are the real file's, whichever name was given),
and a file with more than one hard link is refused by name (no name of it is
"the" file: the others could not be followed).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from pathlib import Path
from typing import IO, Iterator

from .._types import PathLike
from ..errors import DPDistError, InvalidParameterError

__all__ = ["atomic_path", "atomic_writer", "write_text_atomically", "remove_stale_temporaries", "exclusive_lock",
           "real_path"]

#: ``.NAME.PID-RANDOM.tmp``: the writer's process id, so that a clean-up knows whether it is gone
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)-[0-9a-f]+\.tmp$")
#: Where the writer's process cannot be checked (not POSIX), a temporary file this old is stale.
_STALE_SECONDS = 3600.0


def real_path(path: PathLike) -> Path:
    """The file ``path`` names: its symbolic links followed (to a file that may not exist yet), absolute.

    Raises
    ------
    InvalidParameterError
        The file has more than one hard link (module docstring): replacing it would split its names into two files.
    """
    real = Path(os.path.realpath(path))
    try:
        links = os.stat(real).st_nlink
    except OSError:  # not there yet (or unreadable: the write or the read says so)
        return real
    if links > 1 and real.is_file():
        named = "" if os.fspath(path) == os.fspath(real) else f" (named {os.fspath(path)!r})"
        raise InvalidParameterError(
            f"The file {str(real)!r}{named} has {links} hard links: dpdist replaces it whole on every write, which "
            "would leave its other names holding the old content, a second account of its own. Keep one name for it "
            "(copy it, or replace the other names with symbolic links, which are followed)."
        )
    return real


@contextlib.contextmanager
def atomic_path(path: PathLike, *, private: bool = False) -> Iterator[Path]:
    """Yield a temporary path to write; on success it durably replaces ``path``, on error it is deleted.

    ``path`` is first resolved by :func:`real_path`: through a symbolic link the file it names is replaced (the
    link stays), and a file with several hard links is refused.  The new file keeps the mode of the file it
    replaces (else the umask's default); with ``private`` only its owner may read or write it (group and other
    bits cleared).  The folder must exist.
    """
    path = real_path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    try:
        yield temporary
        _settle(temporary, _mode_for(path) & (0o700 if private else 0o7777))
        _replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def atomic_writer(path: PathLike, private: bool = False) -> Iterator[IO[bytes]]:
    """Context manager yielding a binary file; on success it atomically and durably replaces ``path``
    (:func:`atomic_path`)."""
    with atomic_path(path, private=private) as temporary, open(temporary, "wb") as handle:
        yield handle


def write_text_atomically(path: PathLike, text: str, *, private: bool = False) -> Path:
    """Replace ``path`` with ``text`` (:func:`atomic_path`, UTF-8); the path."""
    with atomic_path(path, private=private) as temporary:
        temporary.write_text(text, encoding="utf-8")
    return Path(path)


def remove_stale_temporaries(folder: PathLike, name: str | None = None) -> int:
    """Delete the temporary files of :func:`atomic_path` in ``folder`` (of destination ``name`` only, if given) whose
    writer is gone; return how many."""
    removed = 0
    for candidate in Path(folder).glob(".*.tmp"):
        match = _TEMPORARY.match(candidate.name)
        if match is None or (name is not None and match["name"] != name) or not candidate.is_file():
            continue
        if not _writer_alive(int(match["pid"]), candidate):
            candidate.unlink(missing_ok=True)
            removed += 1
    return removed


def _mode_for(path: Path) -> int:
    """The destination's mode if it exists, else what ``open`` would give (0o666 minus the umask)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _settle(temporary: Path, mode: int) -> None:
    """The written file's final mode, then its data and mode on the disk before it is renamed (else a power cut may
    leave the new name on no data).  Opened while its mode is still 0o600: a read-only final mode is no obstacle."""
    descriptor = os.open(temporary, os.O_RDWR)
    try:
        os.chmod(temporary, mode)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _replace(temporary: Path, path: Path) -> None:
    """The rename, then the folder's fsync: the rename itself is durable."""
    os.replace(temporary, path)
    _fsync_directory(path.parent)


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


@contextlib.contextmanager
def exclusive_lock(path, owner: str, *, wait: float = 0.0):
    """Hold an exclusive advisory lock on ``path + '.lock'``, ``path`` resolved by :func:`real_path` (so two names of
    one file, a symbolic link and its target, take the same lock; a hard-linked file is refused).

    If another process holds it, fail at once (``wait=0``, the default) or retry for up to
    ``wait`` seconds (for short critical sections such as a budget charge).
    """
    path = real_path(path)
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
