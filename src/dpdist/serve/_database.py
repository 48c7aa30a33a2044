"""One SQL code path over SQLite (``sqlite3``) and PostgreSQL (``psycopg`` 3).

The service writes plain SQL with ``?`` placeholders; :class:`Database` hands
each thread its own connection and translates the few differences between the
two engines (placeholder style, binary column type, how a write transaction
starts and how a row is locked for update).  Connections run in autocommit mode
and every change happens inside an explicit ``BEGIN ... COMMIT`` from
:meth:`Database.transaction`, so a caller that returns from it knows the change
is durable (SQLite in WAL mode with ``synchronous=FULL`` fsyncs the log at each
commit; PostgreSQL's default ``synchronous_commit=on`` does the same).

When the database cannot answer (PostgreSQL down or restarted, SQLite locked,
a full disk), the driver's error is raised as :class:`DatabaseUnavailableError`
with a short ``reason``; the service answers it with 503 and logs it through
:class:`OutageLog`: one line per error class while the outage lasts, one when
the database answers again.  A connection the server dropped is replaced once,
inside this layer, where that cannot count anything twice: before ``BEGIN`` and
before a read outside a transaction.

PostgreSQL charges a round trip (and psycopg about 100 us of the client's CPU)
per statement, so a transaction can send its first statements with ``BEGIN``
(:meth:`Database.transaction`'s ``first``: locks, reads, and writes that only
its ``COMMIT`` keeps) and its last writes with ``COMMIT``
(:meth:`Database.execute_at_commit`: writes whose rows nobody reads), each as one
multi-statement query (psycopg's ``ClientCursor``: client-side binding,
PostgreSQL's simple query protocol, statements run in order and the first error
stops the rest); a transaction whose every statement is known beforehand is one
query with both (:meth:`Database.at_once`).  On SQLite, where a statement is a
function call, they run one by one as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import logging
import select
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence
from urllib.parse import unquote

from .._redact import redacted_repr
from .._validation import Constraint, sqlite_name_problem, validate_params
from ..errors import DPDistError, InvalidParameterError

__all__ = ["Database", "DatabaseUnavailableError", "OutageLog", "open_database"]

_SQLITE_BUSY_TIMEOUT_S = 60.0
_PG_CONNECT_TIMEOUT_S = 10
LOG = logging.getLogger("dpdist.serve.database")

#: Why the database could not answer (the values of ``DatabaseUnavailableError.reason``).
REASONS = ("unreachable", "locked", "disk_full", "read_only", "timeout", "io_error", "conflict", "other")


class DatabaseUnavailableError(DPDistError):
    """The database could not answer: ``reason`` is one of :data:`REASONS`; the driver's error is ``__cause__``."""

    def __init__(self, reason: str, error: BaseException):
        self.reason = reason
        self.error_class = f"{type(error).__module__.split('.')[0]}.{type(error).__name__}"
        self.summary = " ".join(str(error).split())[:300]
        super().__init__(f"The database is unavailable ({reason}): {self.error_class}: {self.summary}")


def _sqlite_reason(error: sqlite3.Error) -> str | None:
    """The reason of a SQLite error that means "cannot answer now", else None (a bug: let it propagate)."""
    if not isinstance(error, sqlite3.OperationalError):
        return None
    name = getattr(error, "sqlite_errorname", "") or ""  # Python >= 3.11
    text = str(error).lower()
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
        return "locked"
    if name == "SQLITE_FULL" or "disk is full" in text:
        return "disk_full"
    if name.startswith("SQLITE_READONLY") or "readonly" in text:
        return "read_only"
    if name.startswith("SQLITE_IOERR") or "disk i/o error" in text:
        return "io_error"
    if name.startswith("SQLITE_CANTOPEN") or "unable to open" in text:
        return "unreachable"
    return None  # e.g. "no such table", a syntax error: a bug of the service, not an outage


def _postgresql_reason(error: BaseException) -> str | None:
    import psycopg  # lazy: loads psycopg (PostgreSQL only)

    if isinstance(error, psycopg.InterfaceError):  # "the connection is closed"
        return "unreachable"
    if not isinstance(error, (psycopg.OperationalError, psycopg.errors.ReadOnlySqlTransaction)):
        return None
    state = getattr(error, "sqlstate", None) or ""
    if not state or state.startswith(("08", "57P")):  # no server answer, connection failure, shutdown
        return "unreachable"
    if state == "53100":
        return "disk_full"
    if state == "25006":
        return "read_only"
    if state in ("57014", "55P03"):  # statement timeout, lock not available
        return "timeout" if state == "57014" else "locked"
    if state.startswith("40"):  # deadlock detected, serialization failure: the transaction may simply run again
        return "conflict"
    return "other"


class OutageLog:
    """Logs a database outage in a few lines, not a traceback per request.

    The first error of each class (reason and driver error type) is logged with its message;
    repeats are counted and summed up every ``every_s`` seconds while they go on; the first success
    that ends them logs one line with the counts.  Thread-safe; a success costs one attribute read.
    """

    def __init__(self, logger: logging.Logger = LOG, every_s: float = 300.0):
        self.logger, self.every_s = logger, every_s
        self.enabled = False  # the service turns it on once it runs: errors at start-up are the CLI's to report
        self._lock = threading.Lock()
        self._classes: dict[tuple[str, str], list] = {}  # (reason, class) -> [count, first, last logged]
        self.errors: dict[str, int] = {reason: 0 for reason in REASONS}  # all time, for the metrics
        self.reconnects = 0

    def failed(self, error: DatabaseUnavailableError) -> None:
        now = time.monotonic()
        key = (error.reason, error.error_class)
        count, since = 0, 0.0  # (set below for a repeated error)
        with self._lock:
            self.errors[error.reason] = self.errors.get(error.reason, 0) + 1
            if not self.enabled:
                return
            entry = self._classes.get(key)
            if entry is None:
                self._classes[key] = [1, now, now]
                first = True
            else:
                entry[0] += 1
                first = False
                if now - entry[2] < self.every_s:
                    return
                entry[2] = now
                count, since = entry[0], now - entry[1]
        if first:
            self.logger.error(
                "database unavailable (%s): %s: %s [repeats are counted, not logged, until it answers again]",
                error.reason, error.error_class, error.summary,
            )
        else:
            self.logger.error("database still unavailable (%s): %s, %d errors in %.0f s", error.reason, error.error_class, count, since)

    def succeeded(self, write: bool) -> None:
        """An operation succeeded: a write ends every error class, a read only ``unreachable`` (a locked or
        full SQLite, a read-only server still answer reads)."""
        if not self._classes:
            return
        with self._lock:
            ended = {key: entry for key, entry in self._classes.items() if write or key[0] == "unreachable"}
            for key in ended:
                del self._classes[key]
        classes = ended
        if classes:
            total = sum(entry[0] for entry in classes.values())
            since = time.monotonic() - min(entry[1] for entry in classes.values())
            kinds = ", ".join(f"{reason} {name} x{entry[0]}" for (reason, name), entry in sorted(classes.items()))
            self.logger.warning("database available again after %d error(s) in %.0f s (%s)", total, since, kinds)


_POSTGRESQL = ("postgresql://", "postgres://")
_SQLITE_URL = "sqlite:///"


@dataclass(frozen=True)
class _DatabaseUrl(Constraint):
    """A database: a SQLite file's path (``campaigns.sqlite``, ``sqlite:///campaigns.sqlite``) or a ``postgresql://``
    URL (either scheme in any case); not an in-memory database, a SQLite URI filename (``file:...``), libpq's
    ``key=value`` string nor a URL of another scheme (``postgresql:host`` without ``//``, ``sqlite://``), which SQLite
    would open as a file of that name.  Shown without its password, with why it is refused."""

    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or _problem(value) is not None:
            raise ValueError
        return value

    def describe(self) -> str:
        return ("a SQLite file path or a postgresql:// URL (not an in-memory database, which would lose every report at "
                "exit, nor a SQLite URI filename file:..., a URL of another scheme or libpq's key=value string)")

    def invalid_examples(self) -> list:
        return [3, "", " ", ":memory:", "sqlite:///", "sqlite:///:memory:", "sqlite://", "sqlite:x.sqlite",
                "postgresql:alice:pw@h", "postgresql:x", "file:s.sqlite?mode=memory", "file::memory:?cache=shared",
                "FILE:s.sqlite", "sqlite:///file:s?mode=memory", "host=h port=1 user=alice password=pw",
                "sqlite:///:memory:?cache=shared", "sqlite:///%3Amemory%3A", "sqlite:///s.sqlite?mode=memory&uri=true"]

    def shown(self, value: Any) -> str:
        if not isinstance(value, str):
            return type(value).__name__
        problem = _problem(value) if value.strip() else None
        return redacted_repr(value) + (f" ({problem})" if problem is not None else "")


def _problem(url: str) -> str | None:
    """Why ``url`` names no database (None when it does: :class:`_DatabaseUrl`)."""
    lowered = url.strip().lower()
    if lowered.startswith(_POSTGRESQL):
        return None
    if lowered.startswith(_SQLITE_URL):
        path = url.strip()[len(_SQLITE_URL):]
        if unquote(path.partition("?")[0]).strip() == ":memory:":  # sqlite:///:memory:?cache=shared, %3Amemory%3A
            return "an in-memory database, which would lose everything at exit"
        if "?" in path:  # SQLAlchemy's ?mode=memory&uri=true: dpdist reads no query, SQLite named a file with it
            return "a sqlite:/// URL with a query (?...), which dpdist does not read: give the file's path"
        return sqlite_name_problem(path)
    return sqlite_name_problem(url, (_SQLITE_URL,))


#: a database: a SQLite file's path or a ``postgresql://`` URL (:class:`_DatabaseUrl`)
DATABASE_URL = _DatabaseUrl()


class Database:
    """A connection factory and the dialect of one database (``"sqlite"`` or ``"postgresql"``)."""

    @validate_params({"url": DATABASE_URL}, owner="the database")
    def __init__(self, url: str):
        if url.strip().lower().startswith(_POSTGRESQL):  # ' postgresql://...' (a space pasted in) was a SQLite path
            url = url.strip()
        scheme, separator, rest = url.partition("://")
        if separator and url.lower().startswith(_POSTGRESQL):  # libpq reads the scheme in lower case only
            url = f"{scheme.lower()}://{rest}"
        self.url = url
        self.dialect = "postgresql" if url.startswith(_POSTGRESQL) else "sqlite"
        self._local = threading.local()
        # (connection, the thread that opened it, the lock that thread holds while it uses it): closed at close(), or
        # when a thread opens one after its own ended (a thread pool's idle workers end and new ones start: their
        # connections would stay open until PostgreSQL refused new ones, "too many clients")
        self._connections: list[tuple[Any, threading.Thread, Any]] = []
        self._lock = threading.Lock()
        self._guards: dict[int, Any] = {}  # thread id -> the lock it holds while it runs statements (:meth:`_in_use`)
        self._closed: set[int] = set()  # ids of connections close() closed that a living thread still holds
        self.outages = OutageLog()
        if self.dialect == "sqlite":
            path = url.strip()[len(_SQLITE_URL) :] if url.strip().lower().startswith(_SQLITE_URL) else url  # a file
            self._path = str(Path(path))
        else:
            try:
                import psycopg  # noqa: F401  # lazy: loads psycopg (PostgreSQL only), tried
            except ImportError:  # pragma: no cover - the serve extra installs it
                raise InvalidParameterError(
                    "A postgresql:// database needs psycopg: install dpdist[serve]."
                ) from None

    # ------------------------------------------------------------------ dialect
    @property
    def blob(self) -> str:
        return "BYTEA" if self.dialect == "postgresql" else "BLOB"

    @property
    def for_update(self) -> str:
        """Row-lock clause of a SELECT in a write transaction (SQLite locks the whole file at BEGIN)."""
        return " FOR UPDATE" if self.dialect == "postgresql" else ""

    def lock_name(self, name: str, *, shared: bool) -> None:
        """In a transaction, lock ``name`` (a campaign id) until its end: ``shared`` locks coexist, an exclusive one
        waits for them all and holds off new ones.  PostgreSQL: an advisory lock (no row is written); SQLite: nothing
        to do, ``BEGIN IMMEDIATE`` holds the whole database."""
        if self.dialect == "sqlite":
            return
        self.execute(*self.lock_statement(name, shared=shared))

    @staticmethod
    def lock_statement(name: str, *, shared: bool) -> tuple[str, tuple]:
        """PostgreSQL's statement of :meth:`lock_name` (for :meth:`transaction`'s ``first``)."""
        key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
        return ("SELECT pg_advisory_xact_lock_shared(?)" if shared else "SELECT pg_advisory_xact_lock(?)", (key,))

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s") if self.dialect == "postgresql" else statement

    # ------------------------------------------------------------------ connections
    def connection(self):
        connection = getattr(self._local, "connection", None)
        # closed: PostgreSQL restarted, or close() closed it (this thread was not running a statement on it)
        if connection is not None and (getattr(connection, "closed", False) or id(connection) in self._closed):
            self._discard()
            connection = None
        if connection is None:
            try:
                connection = self._connect()
            except Exception as error:
                raise self._unavailable(error) from error
            self._local.connection = connection
            guard = self._in_use()
            with self._lock:
                ended = [entry for entry in self._connections if not entry[1].is_alive()]
                self._connections = [entry for entry in self._connections if entry[1].is_alive()]
                if len(self._guards) > 4 * len(self._connections) + 64:  # the locks of threads that ended
                    alive = {thread.ident for thread in threading.enumerate()}
                    self._guards = {ident: guard for ident, guard in self._guards.items() if ident in alive}
                self._connections.append((connection, threading.current_thread(), guard))
                # the id of a closed connection freed since (its thread ended) may be this one's: not closed
                self._closed.discard(id(connection))
            for stale, _, _ in ended:  # their threads ended: nobody uses them again
                with contextlib.suppress(Exception):
                    stale.close()
        return connection

    def _connect(self):
        if self.dialect == "sqlite":
            connection = sqlite3.connect(
                self._path, timeout=_SQLITE_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            connection.execute("PRAGMA foreign_keys=ON")
            return connection
        import psycopg  # lazy: loads psycopg (PostgreSQL only)

        if "connect_timeout" in self.url:
            return psycopg.connect(self.url, autocommit=True)
        return psycopg.connect(self.url, autocommit=True, connect_timeout=_PG_CONNECT_TIMEOUT_S)

    def _in_use(self):
        """This thread's lock, held while it runs statements on its connection (:meth:`execute`, :meth:`rowcount`,
        :meth:`transaction`, :meth:`at_once`): :meth:`close` closes no connection of another thread under it."""
        guard = self._guards.get(threading.get_ident())
        if guard is None:  # (per thread, not per connection: close() lets go of this thread's connection meanwhile)
            with self._lock:
                guard = self._guards.setdefault(threading.get_ident(), threading.RLock())
        return guard

    def _discard(self) -> None:
        """Forget this thread's connection (closed): the next call opens a new one."""
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.close()
            with self._lock:
                self._connections = [entry for entry in self._connections if entry[0] is not connection]
                self._closed.discard(id(connection))

    def _reason(self, error: BaseException) -> str | None:
        if isinstance(error, DatabaseUnavailableError):
            return error.reason
        if self.dialect == "sqlite":
            return _sqlite_reason(error) if isinstance(error, sqlite3.Error) else None
        return _postgresql_reason(error)

    def _unavailable(self, error: BaseException) -> BaseException:
        """``error`` as a :class:`DatabaseUnavailableError` (counted and logged once per class), or as it is."""
        if isinstance(error, DatabaseUnavailableError):
            return error
        reason = self._reason(error)
        if reason is None:
            return error
        if reason == "unreachable":
            self._discard()
        wrapped = DatabaseUnavailableError(reason, error)
        self.outages.failed(wrapped)
        return wrapped

    def _retrying(self, operation):
        """Run ``operation(connection)``; if the server dropped the connection, once more on a new one.

        Only for what cannot have changed anything: ``BEGIN`` and reads outside a transaction.
        """
        try:
            return operation(self.connection())
        except DatabaseUnavailableError:
            raise
        except Exception as error:
            if self._reason(error) != "unreachable":
                raise self._unavailable(error) from error
            self._discard()
            with self._lock:
                self.outages.reconnects += 1
        try:
            return operation(self.connection())
        except DatabaseUnavailableError:
            raise
        except Exception as error:
            raise self._unavailable(error) from error

    def execute(self, statement: str, parameters: tuple = ()) -> list[tuple]:
        """Run one statement on this thread's connection; return its rows (empty for writes)."""
        with self._in_use():
            return self._execute(statement, parameters)

    def _execute(self, statement: str, parameters: tuple) -> list[tuple]:
        sql = self._sql(statement)

        def run(connection):
            cursor = connection.execute(sql, parameters)
            return [] if cursor.description is None else [tuple(row) for row in cursor.fetchall()]

        if not getattr(self._local, "in_transaction", False) and statement.lstrip()[:6].upper() == "SELECT":
            rows = self._retrying(run)
        else:
            try:
                rows = run(self.connection())
            except DatabaseUnavailableError:
                raise
            except Exception as error:
                raise self._unavailable(error) from error
        if not getattr(self._local, "in_transaction", False):
            self.outages.succeeded(write=False)
        return rows

    def _together(self, connection, statements: Sequence[tuple[str, tuple]]) -> list[list[tuple]]:
        """PostgreSQL: ``statements`` as one query (one round trip, in order); the rows of each."""
        import psycopg  # lazy: loads psycopg (PostgreSQL only)

        cursor = psycopg.ClientCursor(connection)
        cursor.execute("; ".join(self._sql(statement) for statement, _ in statements),  # pyright: ignore[reportArgumentType]  (dpdist's own statements)
                       tuple(value for _, parameters in statements for value in parameters))
        results = []
        while True:
            results.append([] if cursor.description is None else [tuple(row) for row in cursor.fetchall()])
            if not cursor.nextset():
                return results

    def at_once(self, statements: Sequence[tuple[str, tuple]], marker: str) -> bool:
        """:meth:`_at_once`, this thread's connection in use meanwhile."""
        with self._in_use():
            return self._at_once(statements, marker)

    def _at_once(self, statements: Sequence[tuple[str, tuple]], marker: str) -> bool:
        """PostgreSQL: ``BEGIN``, ``statements`` and ``COMMIT`` as ONE query (one round trip, :func:`_exec_at_once`);
        True once committed.  False, with nothing committed, when a statement raised the error whose message holds
        ``marker`` (the caller's own check: the transaction is rolled back) or found its prepared statement gone, or
        when this thread has no connection that is known to be alive (none yet, the server sent something while it was
        idle, as a server that shut down does, or it failed while statements were prepared): :meth:`transaction`
        replaces such a connection before it writes, this cannot know whether its ``COMMIT`` ran once it was sent.  Any other error as :meth:`transaction` raises it (the transaction rolled back
        or, if the connection failed after sending, possibly committed: as a failed ``COMMIT``)."""
        connection = getattr(self._local, "connection", None)
        if connection is None or connection.closed or _has_input(connection):
            return False
        held = getattr(self._local, "prepared", None)
        if held is None or held[0] is not connection:  # a new connection holds no prepared statement
            held = self._local.prepared = (connection, set())
        try:
            _prepare(connection, statements, held[1])
        except Exception as error:  # nothing written yet: a dropped connection is the ordinary path's to replace
            if self._reason(error) == "unreachable":
                return False
            raise self._unavailable(error) from error
        try:
            _exec_at_once(connection, [("BEGIN", ()), *statements, ("COMMIT", ())], held[1])
        except Exception as error:
            with contextlib.suppress(Exception):
                connection.execute("ROLLBACK")
            state = getattr(error, "sqlstate", None)
            if state == "26000":  # its prepared statements are gone (a pooler's DISCARD ALL): prepared again next time
                held[1].clear()
                return False
            if state == "22P02" and marker in str(error):
                return False
            raise self._unavailable(error) from error
        self.outages.succeeded(write=True)
        return True

    def execute_at_commit(self, statement: str, parameters: tuple = ()) -> None:
        """In a transaction, a write whose rows nobody reads: sent with ``COMMIT`` (PostgreSQL: one round trip for
        them all), run now on SQLite.  Its failure fails the commit (the transaction is rolled back)."""
        if self.dialect == "sqlite":
            self.execute(statement, parameters)
            return
        self._local.at_commit.append((statement, parameters))

    def insert_new(self, into: str, values: str, key: str, returning: str) -> str:
        """The statement inserting the rows ``values`` (``VALUES (?, ?), ...`` or a ``SELECT``) into ``into`` (a table
        and its columns) but those whose ``key`` (the table's one unique key) is recorded, and returning ``returning``
        of the rows it inserted.

        SQLite: ``INSERT OR IGNORE`` (the same rows: its key is the table's only unique constraint and the rows hold no
        NULL).  A multi-row ``ON CONFLICT DO NOTHING`` into a table with NOT NULL columns may still abort halfway, so
        SQLite keeps a statement journal for it, in a temporary file: the batch rows of a group of 14 one-report batches
        cost the committer 210 us of CPU that way, 110-120 this way (``benchmarks/bench_commit_group.py``).
        PostgreSQL: ``ON CONFLICT (key) DO NOTHING``.
        """
        if self.dialect == "sqlite":
            return f"INSERT OR IGNORE INTO {into} {values} RETURNING {returning}"
        return f"INSERT INTO {into} {values} ON CONFLICT ({key}) DO NOTHING RETURNING {returning}"

    def rowcount(self, statement: str, parameters: tuple = ()) -> int:
        """Run one write statement; return how many rows it changed."""
        try:
            with self._in_use():
                return self.connection().execute(self._sql(statement), parameters).rowcount  # pyright: ignore[reportArgumentType]  (psycopg's stubs take literal SQL only; these statements are dpdist's own)
        except DatabaseUnavailableError:
            raise
        except Exception as error:
            raise self._unavailable(error) from error

    @contextlib.contextmanager
    def transaction(self, first: Sequence[tuple[str, tuple]] = ()) -> Iterator[list[list[tuple]]]:
        """:meth:`_transaction`, this thread's connection in use until its end."""
        with self._in_use(), self._transaction(first) as rows:
            yield rows

    @contextlib.contextmanager
    def _transaction(self, first: Sequence[tuple[str, tuple]] = ()) -> Iterator[list[list[tuple]]]:
        """``BEGIN`` (SQLite: ``BEGIN IMMEDIATE``, the write lock at once) ... ``COMMIT``; rollback on error.

        ``first``: statements ``(sql, parameters)`` that lock, read, or write what only this transaction's ``COMMIT``
        keeps (a dropped connection is replaced and they run again: its transaction was rolled back), run right after
        ``BEGIN`` (PostgreSQL: in its round trip); yields the rows of each.
        """
        if self.dialect == "sqlite":
            connection = self._retrying(lambda connection: (connection.execute("BEGIN IMMEDIATE"), connection)[1])
            self._local.in_transaction = True
            try:
                rows = [self.execute(statement, parameters) for statement, parameters in first]
            except BaseException:
                self._local.in_transaction = False
                with contextlib.suppress(Exception):
                    connection.execute("ROLLBACK")
                raise
        else:
            def begin(connection):
                try:
                    return connection, self._together(connection, [("BEGIN", ()), *first])[1:]
                except Exception:
                    with contextlib.suppress(Exception):
                        connection.execute("ROLLBACK")
                    raise

            connection, rows = self._retrying(begin)
            self._local.in_transaction = True
        self._local.at_commit = []
        try:
            try:
                yield rows
            except BaseException as error:
                with contextlib.suppress(Exception):
                    connection.execute("ROLLBACK")
                if isinstance(error, Exception) and not isinstance(error, DatabaseUnavailableError):
                    wrapped = self._unavailable(error)
                    if wrapped is not error:
                        raise wrapped from error
                raise
            try:
                if self._local.at_commit:
                    self._together(connection, [*self._local.at_commit, ("COMMIT", ())])
                else:
                    connection.execute("COMMIT")
            except Exception as error:
                with contextlib.suppress(Exception):
                    connection.execute("ROLLBACK")
                raise self._unavailable(error) from error
        finally:
            self._local.in_transaction = False
            self._local.at_commit = []
        self.outages.succeeded(write=True)

    def ping(self, timeout_s: float) -> None:
        """Check on a new connection, within about ``timeout_s``, that a write transaction could start now.

        SQLite: the file opens (never created here) and ``BEGIN IMMEDIATE`` takes the write lock (a
        reader would pass while a writer holds it in WAL mode).  PostgreSQL: a connection opens,
        ``SELECT 1`` answers and the server accepts writes (not a read-only standby).  Raises
        :class:`DatabaseUnavailableError`; nothing is written.
        """
        try:
            if self.dialect == "sqlite":
                uri = Path(self._path).resolve().as_uri() + "?mode=rw"
                connection = sqlite3.connect(uri, uri=True, timeout=timeout_s, isolation_level=None)
                try:
                    connection.execute("BEGIN IMMEDIATE")
                    connection.execute("ROLLBACK")
                finally:
                    connection.close()
                return
            import psycopg  # lazy: loads psycopg (PostgreSQL only)

            with psycopg.connect(self.url, autocommit=True, connect_timeout=max(2, int(round(timeout_s)))) as server:
                server.execute(f"SET statement_timeout = {int(timeout_s * 1000)}")  # pyright: ignore[reportArgumentType, reportCallIssue]  (an int the service computed; psycopg's stubs want literal SQL)
                server.execute("SELECT 1")
                row = server.execute("SHOW transaction_read_only").fetchone()
            if row is not None and row[0] == "on":
                import psycopg.errors  # lazy: loads psycopg (PostgreSQL only)

                raise psycopg.errors.ReadOnlySqlTransaction("the server accepts no writes (transaction_read_only = on)")
        except Exception as error:
            if not type(error).__module__.startswith(("sqlite3", "psycopg")):
                raise
            raise DatabaseUnavailableError(self._reason(error) or "other", error) from error

    def close(self) -> None:
        """Close every connection but one another thread is running statements on right now (a request the shutdown
        cancelled still reads in its worker thread): closing it under a statement crashed the process in SQLite
        (SIGSEGV in 13 of 20 shutdowns with estimates in flight).  That one is closed by a later close(),
        or once its thread ended.  A thread whose connection was closed opens a new one at its next statement."""
        me = threading.current_thread()
        with self._lock:
            entries, self._connections = self._connections, []
        busy = []
        while entries:
            connection, owner, guard = entries.pop()
            if not owner.is_alive():
                with contextlib.suppress(Exception):
                    connection.close()
            elif owner is me or guard.acquire(blocking=False):  # not under a statement of its thread: closed now
                try:
                    with contextlib.suppress(Exception):
                        connection.close()
                    with self._lock:  # (before its thread can run again: it opens a new one there, connection())
                        self._closed.add(id(connection))
                finally:
                    if owner is not me:
                        guard.release()
            else:  # a statement or a transaction of its thread runs on it: it goes on there (a
                # transaction whose thread was handed a new connection went on outside itself), closed by a later
                # close(), or once its thread ended (connection())
                busy.append((connection, owner, guard))
        with self._lock:
            self._connections.extend(busy)


def open_database(url: str) -> Database:
    """A :class:`Database` for a SQLite path (``campaigns.sqlite``) or a ``postgresql://`` URL."""
    return Database(url)  # the url: Database's table


def _has_input(connection) -> bool:
    """Whether a PostgreSQL connection between transactions has something to read: the server spoke while it was
    idle (a shut-down or restarted server's last words, or its closing the socket)."""
    try:
        poll = select.poll()  # (not select.select: any descriptor number, a server holds thousands of sockets)
        poll.register(connection.pgconn.socket, select.POLLIN)
        return bool(poll.poll(0))  # no wait
    except Exception:  # noqa: BLE001 - OSError, or psycopg's error for a connection that is gone
        return True


def _exec_at_once(connection, statements: Sequence[tuple[str, tuple]], prepared: set[str]) -> None:
    """Run ``statements`` (``?`` placeholders) as one query through libpq itself (psycopg's cursor spent about 30 us
    of Python a round trip on its query conversion and result objects).  A statement with parameters runs as
    ``EXECUTE`` of the statement :func:`_prepare` prepared once per connection (``prepared``: the names this
    connection holds; the server parses and plans it once, not every group), its parameters inlined as libpq quotes
    them.  Raises
    psycopg's error of the statement that failed (the rest did not run), ``OperationalError`` when the connection
    failed."""
    pgconn, encoding = connection.pgconn, connection.info.encoding
    parts = []
    for statement, parameters in statements:
        if not parameters:
            parts.append(statement)
            continue
        name = _NAMES[statement]
        if name not in prepared:
            raise ValueError(f"internal: statement {name} is not prepared on this connection")
        parts.append(f"EXECUTE {name}({', '.join(_literals(connection, parameters, encoding))})")
    _result(pgconn, pgconn.exec_("; ".join(parts).encode(encoding)), encoding)  # waits without the GIL


def _prepare(connection, statements: Sequence[tuple[str, tuple]], prepared: set[str]) -> None:
    """Prepare on ``connection`` (outside any transaction) each of ``statements`` with parameters that it does not
    hold yet (``prepared``: the names it holds), under the name of its text (:data:`_NAMES`)."""
    pgconn, encoding = connection.pgconn, connection.info.encoding
    for statement, parameters in statements:
        if not parameters:
            continue
        name = _NAMES.get(statement)
        if name is None:
            name = _NAMES.setdefault(statement, f"dpdist_at_once_{next(_NUMBERS)}")  # a fresh number (threads)
        if name not in prepared:
            pieces = statement.split("?")
            numbered = "".join(f"{piece}${number}" for number, piece in enumerate(pieces[:-1], 1)) + pieces[-1]
            _result(pgconn, pgconn.exec_(f"PREPARE {name} AS {numbered}".encode(encoding)), encoding)
            prepared.add(name)


#: statement text -> the name it is prepared under on every connection (:func:`_prepare`)
_NAMES: dict[str, str] = {}
_NUMBERS = itertools.count()


def _result(pgconn, result, encoding: str) -> None:
    """Nothing if libpq's ``result`` (the last of a query) succeeded; else psycopg's error of it."""
    import psycopg  # lazy: loads psycopg (PostgreSQL only)

    if result.status == psycopg.pq.ExecStatus.COMMAND_OK or result.status == psycopg.pq.ExecStatus.TUPLES_OK:
        return
    if pgconn.status == psycopg.pq.ConnStatus.BAD or not result.error_field(psycopg.pq.DiagnosticField.SQLSTATE):
        raise psycopg.OperationalError(result.get_error_message(encoding) or "the connection failed")
    raise psycopg.errors.error_from_result(result, encoding)


def _literals(connection, parameters: tuple, encoding: str) -> list[str]:
    """Each of ``parameters`` as an SQL literal: None, an int, a string (libpq's ``PQescapeLiteral``) or bytes
    (``PQescapeByteaConn``, as ``bytea``); anything else as psycopg renders it."""
    import psycopg.pq  # lazy: loads psycopg (PostgreSQL only)
    import psycopg.sql

    escaping = psycopg.pq.Escaping(connection.pgconn)
    literals = []
    for value in parameters:
        if value is None:
            literals.append("NULL")
        elif type(value) is int:
            literals.append(str(value))
        elif type(value) is str:
            literals.append(escaping.escape_literal(value.encode(encoding)).decode(encoding))
        elif type(value) is bytes:
            literals.append(f"'{escaping.escape_bytea(value).decode('ascii')}'::bytea")
        else:
            literals.append(psycopg.sql.Literal(value).as_string(connection))
    return literals
