"""The service's connections to its database (``serve/_database``): one per thread that uses it, and none left open
by a thread that has ended.

The worker threads of the server's thread pool come and go (AnyIO ends one idle for 10 s and starts another under
load); a connection kept for the process's shutdown outlived its thread, so under sustained load a PostgreSQL server
ran out of connections (``too many clients``) and the service answered 503 ``database_unavailable`` ("unreachable")
to every request of a new thread, until it was restarted.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest

from dpdist.serve._database import Database


def _in_threads(database: Database, count: int) -> None:
    for _ in range(count):
        thread = threading.Thread(target=lambda: database.execute("SELECT 1"))
        thread.start()
        thread.join()


def _open_files(path: Path) -> int:
    """How many of this process's file descriptors are open on ``path`` (one per SQLite connection)."""
    opened = 0
    for descriptor in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):
            opened += os.readlink(descriptor) == str(path)
    return opened


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc (Linux)")
def test_a_thread_that_ended_leaves_no_connection_open(tmp_path):
    path = tmp_path / "service.sqlite"
    database = Database(str(path))
    try:
        database.execute("SELECT 1")  # this thread's, kept while it runs
        before = _open_files(path)
        _in_threads(database, 50)  # 50 threads one after the other, each ended before the next opens its own
        assert _open_files(path) <= before + 2  # the last threads (SQLite may finish closing one at the next call): 50 more before
        assert database.execute("SELECT 2") == [(2,)]  # this thread's connection stays
        _in_threads(database, 1)
        assert _open_files(path) <= before + 2
    finally:
        database.close()
    assert _open_files(path) == 0


@pytest.mark.parametrize("url, dialect, stored", [
    ("POSTGRESQL://u:pw@127.0.0.1:1/db", "postgresql", "postgresql://u:pw@127.0.0.1:1/db"),
    ("Postgres://127.0.0.1:1/db", "postgresql", "postgres://127.0.0.1:1/db"),
    ("SQLite:///campaigns.sqlite", "sqlite", "sqlite:///campaigns.sqlite"),
    ("campaigns.sqlite", "sqlite", "campaigns.sqlite"),
])
def test_a_url_scheme_is_read_in_any_case(url, dialect, stored):
    """A scheme is case-insensitive (RFC 3986, 3.1): ``POSTGRESQL://`` is PostgreSQL, not a SQLite file of that name;
    libpq reads a lower-case scheme only, so the URL kept for connecting has it lower-cased (nothing is connected here)."""
    database = Database(url)
    assert (database.dialect, database.url) == (dialect, stored)
