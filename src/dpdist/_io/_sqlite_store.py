"""A SQLite file written by one thread and read by any: the relay's queue and the issuer's store stand on it.

SQLite in WAL mode with ``synchronous=FULL`` (a commit survives a power cut, not
only a killed process) and foreign keys checked.  One writer thread (a
:class:`~._single_writer.SingleWriter`) owns the writing connection: a write is
a function of that connection, run in its own ``BEGIN IMMEDIATE ... COMMIT``
(rolled back if it raises), and its future is resolved once the commit returned.
Writes made ``together`` (the relay's reports) that wait at the same time share
one transaction and one fsync: if one raises, none of them is written and each
caller gets the error.  Reads run on a connection of the reading thread's own.
"""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import Future
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from ._single_writer import SingleWriter

__all__ = ["SQLiteStore"]

_BUSY_TIMEOUT_S = 30


class _Job(NamedTuple):
    function: Callable
    args: tuple
    together: bool


class SQLiteStore:
    """The SQLite file at ``path`` with ``schema`` (statements run at every open: ``CREATE ... IF NOT EXISTS``).

    ``schema_version``: kept in ``PRAGMA user_version``, migrated forward only: a file of a newer version is refused
    (``sqlite3.DatabaseError`` naming ``owner``); a file of an older one (not new: it has tables) runs
    ``migrations[k](connection)`` for each version ``k`` from its own up, each with the version it reaches in one
    transaction, before ``schema``.  ``name``: the writer thread's.  ``marker``: a table every file of ``owner``'s has
    had (the relay queue's ``reports``): a file with tables but not that one is another's (an issuer's store given as
    a relay's queue), refused naming its tables rather than read as a newer or older version.
    """

    def __init__(self, path: str, schema: Sequence[str], *, name: str, schema_version: int | None = None,
                 owner: str = "dpdist", migrations: Mapping[int, Callable[[sqlite3.Connection], None]] | None = None,
                 marker: str | None = None):
        self.path = path
        self._connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=_BUSY_TIMEOUT_S)
        for pragma in ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON"):
            self._connection.execute(pragma)
        if schema_version is not None:
            self._check_owner(owner, marker)
            self._migrate(int(schema_version), owner, migrations or {})
        for statement in schema:
            self._connection.execute(statement)
        if schema_version is not None:
            self._connection.execute(f"PRAGMA user_version={int(schema_version)}")
        self._reader = threading.local()
        self._writer = _Transactions(self._connection, name=name)

    def _check_owner(self, owner: str, marker: str | None) -> None:
        tables = {row[0] for row in self._connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if marker is not None and tables and marker not in tables:
            self._connection.close()
            shown = ", ".join(sorted(tables)[:6]) + (", ..." if len(tables) > 6 else "")
            raise sqlite3.DatabaseError(f"{self.path} is no {owner} file: it has the tables {shown} of another database, "
                                        f"not {owner}'s {marker!r}")

    def _migrate(self, version: int, owner: str, migrations: Mapping[int, Callable[[sqlite3.Connection], None]]) -> None:
        found = self._connection.execute("PRAGMA user_version").fetchone()[0]
        if found > version:
            self._connection.close()
            raise sqlite3.DatabaseError(f"{self.path} has {owner} schema version {found}, newer than this dpdist's {version}")
        if not self._connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
            return  # a new file: the schema as it is now
        for step in range(found, version):
            if step not in migrations:
                continue
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                migrations[step](self._connection)
                self._connection.execute(f"PRAGMA user_version={step + 1}")
                self._connection.execute("COMMIT")
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise

    def write(self, function: Callable[..., Any], *args: Any, together: bool = False) -> Future:
        """A future of ``function(connection, *args)``, run in a write transaction and resolved once it committed;
        ``together``: in one transaction with the other ``together`` writes waiting (see the module)."""
        return self._writer.submit(_Job(function, args, together))

    def read(self) -> sqlite3.Connection:
        """This thread's reading connection."""
        connection = getattr(self._reader, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=_BUSY_TIMEOUT_S)
            self._reader.connection = connection
        return connection

    def close(self) -> None:
        """Write what is waiting, end the writer thread and close the writing connection."""
        self._writer.stop(timeout=30)
        self._connection.close()


class _Transactions(SingleWriter):
    """The writer thread: the ``together`` jobs of a group in one transaction, every other job in its own."""

    def __init__(self, connection: sqlite3.Connection, *, name: str):
        super().__init__(name=name)
        self.connection = connection

    def write(self, items: list) -> list:
        outcomes: list = [None] * len(items)
        together = [index for index, job in enumerate(items) if job.together]
        if together:
            try:
                results = self._transaction(lambda: [items[index].function(self.connection, *items[index].args)
                                                     for index in together])
            except BaseException as error:  # the transaction is gone: none of them is written
                results = [error] * len(together)
            for index, result in zip(together, results):
                outcomes[index] = result
        for index, job in enumerate(items):
            if not job.together:
                try:
                    outcomes[index] = self._transaction(lambda: job.function(self.connection, *job.args))
                except BaseException as error:
                    outcomes[index] = error
        return outcomes

    def _transaction(self, run: Callable[[], Any]) -> Any:
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            result = run()
            self.connection.execute("COMMIT")
        except BaseException:
            try:
                self.connection.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise
        return result
