"""A database written by an earlier ``dpdist serve`` keeps working (forward-only migrations).

Each test writes a database exactly as an earlier schema had it (the DDL of that
release, written out here, not derived from today's), with campaigns, batches and
an aggregate, then opens it with today's service: the aggregate, the counts, the
history, the no-batch-twice rule and the binding of batch ids survive, and new
batches add to the old aggregate.  SQLite, and PostgreSQL (slow).
"""

from __future__ import annotations

import hashlib
import json
import uuid
import warnings

import numpy as np
import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from dpdist import io, local
from serve_support import ADMIN_TOKEN, database_url

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8, "version": 1}
MINUTE = 60_000

SCHEMA_1 = [
    "CREATE TABLE dpdist_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE campaigns (id TEXT PRIMARY KEY, config TEXT NOT NULL, state TEXT NOT NULL, submit_token_sha256 TEXT,"
    " keep_reports INTEGER NOT NULL, export_file_id TEXT NOT NULL, created_ms BIGINT NOT NULL, opened_ms BIGINT,"
    " closed_ms BIGINT, n BIGINT NOT NULL, statistic_dtype TEXT NOT NULL, statistic {blob} NOT NULL, rejected TEXT NOT NULL,"
    " refused TEXT NOT NULL, batches BIGINT NOT NULL)",
    "CREATE TABLE batches (campaign_id TEXT NOT NULL REFERENCES campaigns(id), batch_id TEXT NOT NULL,"
    " body_sha256 TEXT NOT NULL, received_ms BIGINT NOT NULL, n_read BIGINT NOT NULL, accepted BIGINT NOT NULL,"
    " rejected TEXT NOT NULL, PRIMARY KEY (campaign_id, batch_id))",
    "CREATE INDEX batches_by_time ON batches (campaign_id, received_ms)",
    "CREATE TABLE reports (campaign_id TEXT NOT NULL, batch_id TEXT NOT NULL, received_ms BIGINT NOT NULL, n BIGINT NOT NULL,"
    " payload {blob} NOT NULL, PRIMARY KEY (campaign_id, batch_id),"
    " FOREIGN KEY (campaign_id, batch_id) REFERENCES batches(campaign_id, batch_id))",
]
SCHEMA_2 = [
    *SCHEMA_1,
    "ALTER TABLE campaigns ADD COLUMN max_reports BIGINT",
    "ALTER TABLE campaigns ADD COLUMN enrollment INTEGER NOT NULL DEFAULT 0",
    "CREATE TABLE enrollments (token_sha256 TEXT PRIMARY KEY, campaign_id TEXT NOT NULL REFERENCES campaigns(id),"
    " reports_left BIGINT NOT NULL, issued_ms BIGINT NOT NULL)",
    "CREATE INDEX enrollments_by_campaign ON enrollments (campaign_id)",
    "CREATE TABLE bound_batch_ids (batch_id TEXT PRIMARY KEY, campaign_id TEXT NOT NULL REFERENCES campaigns(id))",
    "CREATE INDEX bound_batch_ids_by_campaign ON bound_batch_ids (campaign_id)",
]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def db_url(request, tmp_path):
    with database_url(request.param, tmp_path, name="old.sqlite") as url:
        yield url


def digest(body: bytes, kind: str = "application/octet-stream") -> str:
    return hashlib.sha256(kind.encode() + b"\n" + body).hexdigest()


def write_old_database(url: str, version: int) -> dict:
    """A database of schema ``version`` holding campaign "old" (open; three batches in two minutes, one refusal)."""
    from dpdist.serve._database import open_database

    protocol = local.from_config(GRR)
    rng = np.random.default_rng(5)
    batches = [(uuid.uuid4().hex, protocol.privatize(rng.integers(0, 8, size), rng=rng)) for size in (30, 20, 50)]
    expected = protocol.aggregator()
    db = open_database(url)
    with db.transaction():
        for statement in SCHEMA_1 if version == 1 else SCHEMA_2:
            db.execute(statement.format(blob=db.blob))
        for batch_id, reports in batches:
            expected.add(reports)
        t0 = 1_700_000_000_000 // MINUTE * MINUTE
        values = ("old", json.dumps(protocol.config(), sort_keys=True), "open", None, 0, uuid.uuid4().hex, t0, t0, None,
                  expected.n, "<i8", expected.statistic.astype("<i8").tobytes(), "{}", json.dumps({"malformed_batch": 1}),
                  len(batches))
        db.execute("INSERT INTO campaigns (id, config, state, submit_token_sha256, keep_reports, export_file_id, created_ms,"
                   " opened_ms, closed_ms, n, statistic_dtype, statistic, rejected, refused, batches) VALUES"
                   " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values)
        for minute, (batch_id, reports) in zip((0, 0, 3), batches):
            body = io.encode_record(protocol, reports, batch_id)
            db.execute("INSERT INTO batches (campaign_id, batch_id, body_sha256, received_ms, n_read, accepted, rejected)"
                       " VALUES ('old', ?, ?, ?, ?, ?, '{}')", (batch_id, digest(body), t0 + minute * MINUTE, len(reports), len(reports)))
            if version == 2:
                db.execute("INSERT INTO bound_batch_ids (batch_id, campaign_id) VALUES (?, 'old')", (batch_id,))
        db.execute("INSERT INTO dpdist_meta (key, value) VALUES ('schema_version', ?)", (str(version),))
    db.close()
    return {"batches": batches, "expected": expected, "t0": t0}


# the fast loop migrates from schema 2 (1.8 CPU-s); from schema 1 every later step runs (3.9 CPU-s): full suite
@pytest.mark.parametrize("version", [pytest.param(1, marks=pytest.mark.slow), 2])
def test_a_database_of_an_earlier_schema_keeps_its_aggregate_history_and_batch_ids(db_url, version, monkeypatch):
    from dpdist.serve import create_app
    from dpdist.serve._schema import SCHEMA_VERSION

    # the estimate after the new batch is computed again at once: the cache serves the last document for up to 2x the
    # CPU time of its last computation, and the first one in a fresh process pays the estimate's first imports (run
    # alone, this test read n = 100 for 124)
    monkeypatch.setattr("dpdist.serve._estimate_cache.SPACING", 0.0)

    old = write_old_database(db_url, version)
    protocol, expected = local.from_config(GRR), old["expected"]
    app = create_app(db_url, admin_token=ADMIN_TOKEN)
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    octet = {"Content-Type": "application/octet-stream"}
    try:
        with TestClient(app) as client:
            summary = client.get("/api/campaigns/old", headers=admin).json()
            assert (summary["n"], summary["batches"], summary["refused_batches"]) == (100, 3, {"malformed_batch": 1})
            history = client.get("/api/campaigns/old/history", headers=admin).json()["history"]
            assert [(point["n"], point["batches"]) for point in history] == [(50, 2), (100, 3)]
            estimate = client.get("/api/campaigns/old/estimate?postprocess=none", headers=admin).json()
            assert np.array_equal(estimate["estimate"]["frequencies"], protocol.estimate(expected, postprocess="none").frequencies)
            # a batch counted by the old server, sent again: acknowledged as a duplicate, not counted twice
            batch_id, reports = old["batches"][0]
            again = client.put(f"/api/campaigns/old/batches/{batch_id}", content=io.encode_record(protocol, reports, batch_id),
                               headers=octet)
            assert again.status_code == 200 and again.json()["duplicate"] is True
            # its id stays bound to the old campaign (schema 1's batch ids are bound by the migration to 2)
            client.post("/api/campaigns", json={"campaign": "new", "config": GRR}, headers=admin)
            client.post("/api/campaigns/new/open", headers=admin)
            replay = client.put(f"/api/campaigns/new/batches/{batch_id}", content=io.encode_record(protocol, reports, batch_id),
                                headers=octet)
            assert replay.status_code == 409 and replay.json()["error"] == "batch_of_another_campaign"
            # new batches add to the old aggregate
            fresh = protocol.privatize(np.arange(8).repeat(3), rng=9)
            assert client.put("/api/campaigns/old/batches/fresh", content=io.encode_record(protocol, fresh),
                              headers=octet).json()["accepted"] == 24
            expected.add(fresh)
            estimate = client.get("/api/campaigns/old/estimate?postprocess=none", headers=admin).json()
            assert estimate["n"] == 124
            assert np.array_equal(estimate["estimate"]["frequencies"], protocol.estimate(expected, postprocess="none").frequencies)
        version_now = app.state.service.store.db.execute("SELECT value FROM dpdist_meta WHERE key = 'schema_version'")
        assert version_now == [(str(SCHEMA_VERSION),)]
    finally:
        app.state.service.store.db.close()


def test_a_database_of_a_later_schema_is_refused(tmp_path):
    from dpdist.errors import IncompatibleStateError
    from dpdist.serve import create_app

    path = str(tmp_path / "future.sqlite")
    create_app(path, admin_token=ADMIN_TOKEN).state.service.store.db.close()
    import sqlite3

    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE dpdist_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(IncompatibleStateError, match="schema version 99"):
        create_app(path, admin_token=ADMIN_TOKEN)


#: the relayed campaigns' table of schema 4
RELAYED_4 = ("CREATE TABLE relayed_campaigns (campaign_id TEXT NOT NULL, export_file_id TEXT NOT NULL,"
             " relay_token_sha256 TEXT NOT NULL, public_key TEXT NOT NULL, private_key TEXT NOT NULL,"
             " delta DOUBLE PRECISION NOT NULL, PRIMARY KEY (campaign_id, export_file_id))")


def as_version_7(connection) -> None:
    """Today's SQLite database back to schema 7 (what schema 8 added, removed)."""
    connection.execute("DROP TABLE ohttp_keys")
    connection.execute("ALTER TABLE relayed_campaigns DROP COLUMN ohttp_private_key")
    connection.execute("ALTER TABLE relayed_campaigns DROP COLUMN sealed_v1")
    connection.execute("UPDATE dpdist_meta SET value = '7' WHERE key = 'schema_version'")


def as_version_6(connection) -> None:
    """Today's SQLite database back to schema 6 (what schemas 7 and 8 added, removed)."""
    as_version_7(connection)
    connection.execute("DROP TABLE relayed_tokens")
    connection.execute("ALTER TABLE relayed_campaigns DROP COLUMN identity")
    connection.execute("UPDATE dpdist_meta SET value = '6' WHERE key = 'schema_version'")


def as_version_4(connection) -> None:
    """Today's SQLite database back to schema 4 (what schemas 5, 6 and 7 added, removed)."""
    as_version_6(connection)
    connection.execute("DROP TABLE round_campaigns")
    connection.execute("DROP TABLE refused_batch_ids")
    connection.execute("ALTER TABLE relayed_campaigns DROP COLUMN smallest_batch")
    connection.execute("UPDATE dpdist_meta SET value = '4' WHERE key = 'schema_version'")


def test_a_version_3_database_gains_the_relayed_campaigns_table(tmp_path):
    """Version 3 made ``relayed_campaigns`` at a relay-aware service's start-up, or not at all: 3 -> 4 makes it once."""
    import sqlite3

    from dpdist.serve import create_app
    from dpdist.serve._schema import SCHEMA_VERSION

    for had_the_table in (False, True):
        path = str(tmp_path / f"v3-{had_the_table}.sqlite")
        create_app(path, admin_token=ADMIN_TOKEN).state.service.store.db.close()
        with sqlite3.connect(path) as connection:
            as_version_4(connection)
            connection.execute("DROP TABLE relayed_campaigns")
            if had_the_table:
                connection.execute(RELAYED_4)
            connection.execute("UPDATE dpdist_meta SET value = '3' WHERE key = 'schema_version'")
        app = create_app(path, admin_token=ADMIN_TOKEN)
        db = app.state.service.store.db
        try:
            assert db.execute("SELECT value FROM dpdist_meta WHERE key = 'schema_version'") == [(str(SCHEMA_VERSION),)]
            assert db.execute("SELECT COUNT(*) FROM relayed_campaigns") == [(0,)]
        finally:
            db.close()


def test_a_version_4_database_gains_refused_batch_ids_and_each_relayed_campaigns_smallest_batch(tmp_path):
    """4 -> 5: the smallest batch of a relayed campaign is read from its batches once, by the migration."""
    import sqlite3

    from dpdist.serve import create_app

    path = str(tmp_path / "v4.sqlite")
    create_app(path, admin_token=ADMIN_TOKEN).state.service.store.db.close()
    with sqlite3.connect(path) as connection:
        as_version_4(connection)
        for name in ("relayed", "empty"):
            connection.execute("INSERT INTO relayed_campaigns VALUES (?, 'f', 'h', 'p', 'k', 1e-8)", (name,))
        for batch_id, n_read in (("x", 70), ("y", 40), ("z", 90)):
            connection.execute("INSERT INTO batches VALUES ('relayed', ?, 's', 0, ?, ?, '{}')", (batch_id, n_read, n_read))
        connection.execute("INSERT INTO batches VALUES ('direct', 'w', 's', 0, 5, 5, '{}')")
    db = create_app(path, admin_token=ADMIN_TOKEN).state.service.store.db
    try:
        assert db.execute("SELECT campaign_id, smallest_batch FROM relayed_campaigns ORDER BY campaign_id") == [
            ("empty", None), ("relayed", 40)]
        assert db.execute("SELECT COUNT(*) FROM refused_batch_ids") == [(0,)]
    finally:
        db.close()


def test_a_version_5_database_gains_the_round_campaigns_table(tmp_path):
    """5 -> 6: the table of the campaigns that run in rounds; the campaigns already there stay."""
    import sqlite3

    from dpdist.serve import create_app
    from dpdist.serve._schema import SCHEMA_VERSION

    path = str(tmp_path / "v5.sqlite")
    service = create_app(path, admin_token=ADMIN_TOKEN).state.service
    service.store.create("old", GRR)
    service.store.db.close()
    with sqlite3.connect(path) as connection:
        as_version_6(connection)
        connection.execute("DROP TABLE round_campaigns")
        connection.execute("UPDATE dpdist_meta SET value = '5' WHERE key = 'schema_version'")
    db = create_app(path, admin_token=ADMIN_TOKEN).state.service.store.db
    try:
        assert db.execute("SELECT value FROM dpdist_meta WHERE key = 'schema_version'") == [(str(SCHEMA_VERSION),)]
        assert db.execute("SELECT COUNT(*) FROM round_campaigns") == [(0,)]
        assert db.execute("SELECT id FROM campaigns") == [("old",)]
    finally:
        db.close()


def test_a_version_6_database_counts_admitted_reports_and_has_no_identities(tmp_path):
    """6 -> 7: relayed campaigns made before have no identity (no issuer: no central guarantee), a table of spent tokens
    appears, and the smallest batch is recomputed from the reports the collector could read (``accepted``), not the
    messages it was sent (``n_read``, which counted messages it could not open)."""
    import sqlite3

    from dpdist.serve import create_app

    path = str(tmp_path / "v6.sqlite")
    create_app(path, admin_token=ADMIN_TOKEN).state.service.store.db.close()
    with sqlite3.connect(path) as connection:
        as_version_6(connection)
        connection.execute("INSERT INTO relayed_campaigns VALUES ('relayed', 'f', 'h', 'p', 'k', 1e-8, 100)")
        for batch_id, n_read, accepted in (("x", 100, 1), ("y", 120, 120)):
            connection.execute("INSERT INTO batches VALUES ('relayed', ?, 's', 0, ?, ?, '{}')", (batch_id, n_read, accepted))
    db = create_app(path, admin_token=ADMIN_TOKEN).state.service.store.db
    try:
        assert db.execute("SELECT smallest_batch, identity FROM relayed_campaigns") == [(1, None)]
        assert db.execute("SELECT COUNT(*) FROM relayed_tokens") == [(0,)]
    finally:
        db.close()


def test_a_version_7_database_gains_the_gateway_key_ring_and_relayed_campaigns_keep_their_envelope(tmp_path):
    """7 -> 8: an empty key ring (the service makes the first key when it starts), no Oblivious HTTP key for the relayed
    campaigns made before (their identities name none), and their relays still admit dpdist's own envelope."""
    import sqlite3

    from dpdist.serve import create_app

    path = str(tmp_path / "v7.sqlite")
    create_app(path, admin_token=ADMIN_TOKEN).state.service.store.db.close()
    with sqlite3.connect(path) as connection:
        as_version_7(connection)
        connection.execute("INSERT INTO relayed_campaigns VALUES ('relayed', 'f', 'h', 'p', 'k', 1e-8, 100, '{}')")
    db = create_app(path, admin_token=ADMIN_TOKEN).state.service.store.db
    try:
        assert db.execute("SELECT ohttp_private_key, sealed_v1 FROM relayed_campaigns") == [(None, 1)]
        assert db.execute("SELECT COUNT(*) FROM ohttp_keys") == [(0,)]
    finally:
        db.close()


@pytest.mark.slow
def test_services_starting_at_once_on_a_new_postgresql_create_one_schema(tmp_path):
    """Four processes' first start on one empty PostgreSQL database: each finds one schema, none fails."""
    from concurrent.futures import ThreadPoolExecutor

    from dpdist.serve._database import open_database
    from dpdist.serve._schema import SCHEMA_VERSION, create_schema

    def start(url: str) -> list:
        db = open_database(url)
        try:
            create_schema(db)
            return db.execute("SELECT value FROM dpdist_meta WHERE key = 'schema_version'")
        finally:
            db.close()

    with database_url("postgresql", tmp_path, name="new.sqlite") as url:
        with ThreadPoolExecutor(4) as pool:
            versions = list(pool.map(start, [url] * 4))
    assert versions == [[(str(SCHEMA_VERSION),)]] * 4


def test_a_version_9_database_gains_the_table_of_relayed_reports(tmp_path):
    """9 -> 10: the encapsulated keys of relayed reports (none known for the batches counted before), keyed by
    (campaign, enc): a second row of one report is refused by the key."""
    import sqlite3

    from dpdist.serve import create_app

    path = str(tmp_path / "v9.sqlite")
    create_app(path, admin_token=ADMIN_TOKEN).state.service.store.db.close()
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TABLE relayed_reports")
        connection.execute("UPDATE dpdist_meta SET value = '9' WHERE key = 'schema_version'")
    db = create_app(path, admin_token=ADMIN_TOKEN).state.service.store.db
    try:
        assert db.execute("SELECT COUNT(*) FROM relayed_reports") == [(0,)]
        db.execute("INSERT INTO relayed_reports (campaign_id, enc) VALUES ('c', 'ab')")
        with pytest.raises(sqlite3.IntegrityError):
            db.execute("INSERT INTO relayed_reports (campaign_id, enc) VALUES ('c', 'ab')")
    finally:
        db.close()
