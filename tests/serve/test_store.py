"""A batch id of the bound form is counted by one campaign only, however it is kept (schema version 8).

SQLite binds an id by its batch rows (keyed by batch id first) and, once
retention deleted them, by ``bound_batch_ids``; PostgreSQL by ``bound_batch_ids``'
key as it counts.  Both: the same id claimed by two campaigns in one group is
counted by the first only; an id counted before is refused to every other
campaign, also after retention; a database of version 7 keeps its batches,
kept reports and bindings through the migration; the lookups of a group's
recorded batches use the key, never a scan of the table.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from dpdist import local
from dpdist.serve._database import open_database
from dpdist.serve._group import Arrival, _stored
from dpdist.serve._store import Store
from serve_support import database_url

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
PROTOCOL = local.from_config(GRR)
DAY_MS = 86_400_000


def _arrival(campaign: str, batch_id: str, value: int = 1, store: Store | None = None) -> Arrival:
    batch = PROTOCOL.validate_reports(PROTOCOL.privatize(np.array([value]), rng=value))
    return Arrival(campaign, batch_id, f"{value:064x}", batch, 1, 1)


def _store(url: str, *campaigns: str) -> Store:
    store = Store(open_database(url))
    for campaign in campaigns:
        store.create(campaign, GRR)
        store.transition(campaign, "open")
    return store


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_an_id_claimed_by_two_campaigns_in_one_group_is_counted_by_the_first(kind, tmp_path):
    bound, free = "ab" * 16, "my-own-id"
    with database_url(kind, tmp_path) as url:
        store = _store(url, "a", "b")
        try:
            outcomes = store.commit([_arrival("b", bound), _arrival("a", bound, 2), _arrival("a", free), _arrival("b", free)])
            assert [getattr(outcome, "code", "counted") for outcome in outcomes] == [
                "batch_of_another_campaign", "counted", "counted", "counted"]  # the first in (id, campaign) order: "a"
            assert (store.get("a").n, store.get("b").n) == (2, 1)
            again = store.commit([_arrival("b", bound), _arrival("a", bound, 2)])
            assert again[0].code == "batch_of_another_campaign" and again[1]["duplicate"] is True
            assert store.get("b").refused == {"batch_of_another_campaign": 1}  # once per batch id and reason
        finally:
            store.db.close()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_one_relayed_report_in_two_batches_of_one_group_counts_once(kind, tmp_path):
    """Two relayed batches opened side by side carry one report (its HPKE enc): the group commit counts the first and
    refuses the other whole, ``replayed_report``, leaving neither its reports nor its tokens recorded."""
    with database_url(kind, tmp_path) as url:
        store = _store(url, "r")
        try:
            first, second, third = _arrival("r", "b1"), _arrival("r", "b2", 2), _arrival("r", "b3", 3)
            first.reports, first.tokens = ["e1"], ["t1"]
            second.reports, second.tokens = ["e2", "e1"], ["t2"]
            third.reports, third.tokens = ["e3"], ["t1"]  # another batch spending t1: token_spent, its enc not kept
            outcomes = store.commit([first, second, third])
            assert [getattr(outcome, "code", "counted") for outcome in outcomes] == ["counted", "replayed_report", "token_spent"]
            assert store.get("r").n == 1
            assert sorted(store.db.execute("SELECT enc FROM relayed_reports")) == [("e1",)]
            assert store.db.execute("SELECT nonce FROM relayed_tokens") == [("t1",)]
        finally:
            store.db.close()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_an_id_stays_bound_after_retention_deleted_its_batch_rows(kind, tmp_path):
    bound = "cd" * 16
    with database_url(kind, tmp_path) as url:
        store = _store(url, "old", "new")
        try:
            assert store.commit([_arrival("old", bound)])[0]["duplicate"] is False
            store.transition("old", "closed")
            assert store.purge(0, at_ms=store.row("old").closed_ms + DAY_MS)["batches"] == 1
            assert store.db.execute("SELECT COUNT(*) FROM batches") == [(0,)]
            (outcome,) = store.commit([_arrival("new", bound)])
            assert outcome.code == "batch_of_another_campaign"
            store.delete("old")  # deleting the campaign releases its ids
            assert store.commit([_arrival("new", bound)])[0]["duplicate"] is False
        finally:
            store.db.close()


def test_a_group_reads_its_recorded_batches_by_their_key(tmp_path):
    store = _store(str(tmp_path / "c.sqlite"), "a")
    try:
        plans = []
        connection = store.db.connection()
        execute = store.db.execute

        def planned(statement, parameters=()):
            if statement.startswith("SELECT") and "FROM batches" in statement:
                plans.extend(row[-1] for row in connection.execute("EXPLAIN QUERY PLAN " + statement, parameters))
            return execute(statement, parameters)

        store.db.execute = planned
        items = [_arrival("a", f"{k:032x}") for k in range(3)]
        store.commit(items)
        assert len(_stored(store.db, items)) == 3
        store.commit(items)  # duplicates: their stored acknowledgements are read
        assert plans and not [plan for plan in plans if plan.startswith("SCAN")], plans
    finally:
        store.db.close()


def _as_version_8(path: str) -> None:
    """Today's SQLite database back to schema 8: ``batches`` keyed by (campaign, batch id), no index by campaign."""
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA foreign_keys=OFF")
        connection.execute("CREATE TABLE batches_v8 (campaign_id TEXT NOT NULL, batch_id TEXT NOT NULL,"
                           " body_sha256 TEXT NOT NULL, received_ms BIGINT NOT NULL, n_read BIGINT NOT NULL,"
                           " accepted BIGINT NOT NULL, rejected TEXT NOT NULL, PRIMARY KEY (campaign_id, batch_id))")
        connection.execute("INSERT INTO batches_v8 SELECT * FROM batches")
        connection.execute("DROP TABLE batches")
        connection.execute("ALTER TABLE batches_v8 RENAME TO batches")
        connection.execute("UPDATE dpdist_meta SET value = '8' WHERE key = 'schema_version'")


def test_a_version_8_database_keeps_its_batches_reports_and_bindings(tmp_path):
    path = str(tmp_path / "v8.sqlite")
    store = Store(open_database(path))
    store.create("kept", GRR, keep_reports=True)
    store.transition("kept", "open")
    store.create("other", GRR)
    store.transition("other", "open")
    raw = np.array([3], dtype=np.uint8).tobytes()
    bound = _arrival("kept", "ef" * 16)
    bound.raw = raw
    assert store.commit([bound, _arrival("kept", "free-id", 4)])[0]["duplicate"] is False
    # a version-8 service bound every id in bound_batch_ids as it counted it
    store.db.execute("INSERT INTO bound_batch_ids VALUES (?, 'kept')", ("ef" * 16,))
    store.db.close()
    _as_version_8(path)
    with sqlite3.connect(path) as connection:
        assert "PRIMARY KEY (campaign_id, batch_id)" in connection.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'batches'").fetchone()[0]
    store = Store(open_database(path))
    try:
        schema = dict(store.db.execute("SELECT name, sql FROM sqlite_master WHERE tbl_name = 'batches'"))
        assert "PRIMARY KEY (batch_id, campaign_id)" in schema["batches"] and "batches_by_campaign" in schema
        assert store.db.execute("SELECT value FROM dpdist_meta WHERE key = 'schema_version'") == [("10",)]
        assert store.db.execute("PRAGMA foreign_keys") == [(1,)]  # on again after the migration
        assert store.db.execute("SELECT batch_id, payload FROM reports") == [("ef" * 16, raw)]
        with pytest.raises(sqlite3.IntegrityError):  # the kept reports still need their batch rows
            store.db.execute("DELETE FROM batches WHERE batch_id = ?", ("ef" * 16,))
        again = store.commit([_arrival("kept", "ef" * 16), _arrival("other", "ef" * 16), _arrival("kept", "free-id", 4)])
        assert [again[0]["duplicate"], again[1].code, again[2]["duplicate"]] == [True, "batch_of_another_campaign", True]
        assert store.get("kept").n == 2
    finally:
        store.db.close()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_a_group_of_one_campaign_is_refused_the_ids_another_campaign_counted(kind, tmp_path):
    """A group whose batches are all one campaign's (SQLite reads only the other campaigns' rows for it): an id that
    another campaign counted before is refused, ids this campaign counted before are duplicates, fresh ones count."""
    theirs, ours = "cd" * 16, "ef" * 16
    fresh = [f"{index:032x}" for index in range(1, 6)]
    with database_url(kind, tmp_path) as url:
        store = _store(url, "a", "b")
        try:
            assert store.commit([_arrival("a", theirs), _arrival("b", ours)])[0]["duplicate"] is False
            outcomes = store.commit([_arrival("b", fresh[0]), _arrival("b", theirs), _arrival("b", ours),
                                     *(_arrival("b", batch_id) for batch_id in fresh[1:])])
            assert outcomes[1].code == "batch_of_another_campaign" and outcomes[2]["duplicate"] is True
            assert [outcome["duplicate"] for index, outcome in enumerate(outcomes) if index not in (1, 2)] == [False] * 5
            assert (store.get("a").n, store.get("b").n) == (1, 6)
        finally:
            store.db.close()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_one_batch_twice_in_one_group_counts_once(kind, tmp_path):
    """The committer never puts one (campaign, batch id) twice in a group; a caller of ``Store.commit`` that does gets
    the batch counted once, the second answered as a duplicate of it."""
    with database_url(kind, tmp_path) as url:
        store = _store(url, "a")
        try:
            outcomes = store.commit([_arrival("a", "ab" * 16), _arrival("a", "ab" * 16), _arrival("a", "other")])
            assert [outcome["duplicate"] for outcome in outcomes] == [False, True, False]
            assert store.get("a").n == 2 and store.get("a").batches == 2
        finally:
            store.db.close()
