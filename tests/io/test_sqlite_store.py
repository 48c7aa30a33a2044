"""The SQLite file of the relay and the issuer: one writer thread, a transaction per write, ``together`` writes sharing one."""

from __future__ import annotations

import sqlite3

import pytest

from dpdist._io._sqlite_store import SQLiteStore

SCHEMA = ("CREATE TABLE IF NOT EXISTS rows (key TEXT PRIMARY KEY, value INTEGER NOT NULL)",)


def _insert(connection, key, value):
    connection.execute("INSERT INTO rows (key, value) VALUES (?, ?)", (key, value))
    return key


def _rows(store):
    return dict(store.read().execute("SELECT key, value FROM rows").fetchall())


def test_a_write_is_committed_before_its_future_resolves_and_a_failed_one_leaves_nothing(tmp_path):
    store = SQLiteStore(str(tmp_path / "s.sqlite"), SCHEMA, name="test-store")
    assert store.write(_insert, "a", 1).result(10) == "a" and _rows(store) == {"a": 1}
    with pytest.raises(sqlite3.IntegrityError):
        store.write(_insert, "a", 2).result(10)  # the same key: rolled back
    assert store.read().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()
    assert _rows(SQLiteStore(str(tmp_path / "s.sqlite"), SCHEMA, name="again")) == {"a": 1}


def test_together_writes_share_a_transaction_that_fails_whole_and_the_others_stand_alone(tmp_path):
    store = SQLiteStore(str(tmp_path / "s.sqlite"), SCHEMA, name="test-store")
    store._writer.start()
    with store._writer._wake:  # hold the writer back while the writes queue up: one group
        futures = [store.write(_insert, "x", 1, together=True), store.write(_insert, "y", 2),
                   store.write(_insert, "x", 3, together=True)]
    for future in futures[::2]:
        with pytest.raises(sqlite3.IntegrityError):  # the second "x" failed the together transaction: no "x" at all
            future.result(10)
    assert futures[1].result(10) == "y" and _rows(store) == {"y": 2}
    store.close()


def test_a_file_of_a_newer_schema_version_is_refused_naming_its_owner(tmp_path):
    path = str(tmp_path / "s.sqlite")
    SQLiteStore(path, SCHEMA, name="test-store", schema_version=3).close()
    assert SQLiteStore(path, SCHEMA, name="test-store", schema_version=3).read().execute("PRAGMA user_version").fetchone()[0] == 3
    with pytest.raises(sqlite3.DatabaseError, match="has issuer schema version 3, newer than this dpdist's 2"):
        SQLiteStore(path, SCHEMA, name="test-store", schema_version=2, owner="issuer")


def test_a_file_of_another_owner_is_refused_naming_its_tables_not_as_a_newer_version(tmp_path):
    """The issuer's database given as the relay's --queue was "schema version 2, newer than this dpdist's 1"."""
    path = str(tmp_path / "issuer.sqlite")
    SQLiteStore(path, ("CREATE TABLE keys (name TEXT)",), name="test-store", schema_version=2, owner="issuer",
                marker="keys").close()
    with pytest.raises(sqlite3.DatabaseError, match="is no relay queue file: it has the tables keys of another database"):
        SQLiteStore(path, SCHEMA, name="test-store", schema_version=1, owner="relay queue", marker="rows")
    SQLiteStore(path, SCHEMA, name="test-store", schema_version=3, owner="issuer", marker="keys").close()  # its own
    SQLiteStore(str(tmp_path / "new.sqlite"), SCHEMA, name="test-store", schema_version=1, marker="rows").close()


def test_an_older_file_is_migrated_forward_step_by_step_and_a_new_one_starts_at_the_current_schema(tmp_path):
    path = str(tmp_path / "s.sqlite")
    SQLiteStore(path, SCHEMA, name="test-store", schema_version=1).write(_insert, "a", 1).result(10)
    schema = ("CREATE TABLE IF NOT EXISTS rows (key TEXT PRIMARY KEY, value INTEGER NOT NULL, twice INTEGER NOT NULL)",)
    ran = []

    def add_twice(connection):
        ran.append(1)
        connection.execute("ALTER TABLE rows ADD COLUMN twice INTEGER NOT NULL DEFAULT 0")
        connection.execute("UPDATE rows SET twice = 2 * value")

    store = SQLiteStore(path, schema, name="test-store", schema_version=2, migrations={1: add_twice})
    assert store.read().execute("SELECT key, twice FROM rows").fetchall() == [("a", 2)] and ran == [1]
    assert SQLiteStore(path, schema, name="again", schema_version=2, migrations={1: add_twice}) and ran == [1]
    fresh = SQLiteStore(str(tmp_path / "new.sqlite"), schema, name="new", schema_version=2, migrations={1: add_twice})
    assert fresh.read().execute("PRAGMA user_version").fetchone()[0] == 2 and ran == [1]
