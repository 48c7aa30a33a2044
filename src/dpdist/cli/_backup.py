"""``dpdist backup SOURCE DEST``: an online copy of one of dpdist's SQLite files, consistent while its process runs.

The service's database, the relay's queue and the issuer's store are SQLite files in WAL mode; copying the file alone
misses the commits still in its ``-wal`` file, and copying both while a writer commits can tear them. This command
copies through SQLite's backup API in one step: one read transaction, so the copy is the database as of one commit,
and in WAL mode the writers go on committing while it reads (they are never blocked). The copy is written beside
``DEST`` under a temporary name, checked (``PRAGMA integrity_check``), fsynced and renamed into place (its owner's
only: it holds keys), so a ``DEST`` that exists is a whole backup. The same command restores: ``dpdist backup backup.sqlite campaigns.sqlite`` with the
service stopped and the old file (and its ``-wal``/``-shm``) moved aside. A PostgreSQL database is backed up with
``pg_dump`` ([operate the service](docs/how-to/operate-the-service.md)).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .._io._atomic import atomic_path
from .._validation import AllOf, ExistingFile, SQLiteFile, validate_params
from ..errors import InvalidParameterError
from ._commands import HELP

__all__ = ["add_commands", "backup_sqlite"]

#: seconds the copy waits for a lock the database's writer holds (a checkpoint) before it gives up
_BUSY_TIMEOUT_S = 30.0


def add_commands(subparsers) -> None:
    backup = subparsers.add_parser(
        "backup",
        help=HELP["backup"],
        description="Copy a SQLite file of dpdist (dpdist serve's --db, dpdist relay's queue, dpdist issuer's store) "
        "to DEST while its process runs: SQLite's backup API, one consistent snapshot, checked and renamed into "
        "place. DEST must not exist. Restore with the same command, the process stopped: dpdist backup "
        "BACKUP DB. A postgresql:// database is backed up with pg_dump --format=custom.",
    )
    backup.add_argument("source", metavar="SOURCE", help="the SQLite file to copy (it must exist)")
    backup.add_argument("destination", metavar="DEST", help="the copy's path (it must not exist)")
    backup.set_defaults(handler=_run_backup)


def _run_backup(args) -> int:
    copied = backup_sqlite(args.source, args.destination)
    print(f"dpdist backup: {args.source} -> {args.destination}: {copied['pages']} pages, {copied['bytes']} bytes, "
          "integrity ok")
    return 0


#: what each argument of :func:`backup_sqlite` must be
_RULES = {
    "source": AllOf((SQLiteFile(), ExistingFile()), "the path of an existing SQLite file (a postgresql:// database is "
                    "backed up with pg_dump --format=custom)"),
    "destination": SQLiteFile("the path of the copy"),
}


def _check_free(destination: str) -> Path:
    """``destination`` and its ``-wal`` file do not exist: a backup never overwrites, and SQLite would replay a ``-wal``
    left beside a restored file onto it."""
    target = Path(destination)
    for taken in (target, Path(f"{target}-wal")):
        if taken.exists():
            raise InvalidParameterError(
                f"The 'destination' parameter of dpdist backup must be a path that does not exist. Got "
                f"{destination!r}, and {str(taken)!r} exists: a backup never overwrites a file (to restore, move the "
                "old database and its -wal and -shm files aside first).")
    return target


@validate_params(_RULES, owner="dpdist backup")
def backup_sqlite(source: str, destination: str) -> dict:
    """Copy the SQLite database ``source`` to ``destination`` (which must not exist) through SQLite's backup API, in
    one read transaction while other processes write; the copy is checked, fsynced and renamed into place.

    Returns ``{"pages": ..., "bytes": ...}`` of the copy. Raises :class:`~dpdist.errors.InvalidParameterError` for a
    PostgreSQL URL, a missing source, an existing destination (or its ``-wal`` file) and a copy that fails its
    integrity check (the copy is written to a temporary file beside ``destination``, readable by its owner only,
    and renamed into place fsynced: :func:`~dpdist._io._atomic.atomic_path`).
    """
    origin, target = Path(source), _check_free(destination)
    with atomic_path(target, private=True) as partial:  # it holds keys: its owner's only
        reader = sqlite3.connect(f"{origin.resolve().as_uri()}?mode=ro", uri=True, timeout=_BUSY_TIMEOUT_S)
        writer = sqlite3.connect(partial, isolation_level=None)
        try:
            reader.backup(writer)  # pages=-1: the whole database in one step, one snapshot
            writer.execute("PRAGMA journal_mode=DELETE")  # the copy stands alone: no -wal beside it
            verdict = writer.execute("PRAGMA integrity_check").fetchone()[0]
            pages = writer.execute("PRAGMA page_count").fetchone()[0]
        finally:
            writer.close()
            reader.close()
        if verdict != "ok":
            raise InvalidParameterError(f"The copy of the 'source' parameter of dpdist backup ({source!r}) fails "
                                        f"SQLite's integrity check ({verdict}): the source is damaged; nothing was "
                                        "written to destination.")
    return {"pages": pages, "bytes": target.stat().st_size}
