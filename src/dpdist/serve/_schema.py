"""The tables of ``dpdist serve`` and their forward-only migrations (one DDL for SQLite and PostgreSQL).

``dpdist_meta`` holds ``schema_version``.  A database of an older version is
migrated forward, step by step, in one transaction when the service opens it; a
database of a newer version is refused (this dpdist cannot know what it would break).

Version history:

1. the first service (campaigns, batches, reports);
2. (reports a campaign accepts, docs/how-to/run-a-campaign.md) ``campaigns.max_reports`` and ``.enrollment``, tables ``enrollments``
   and ``bound_batch_ids``;
3. (population scale) the aggregate leaves the campaign's row: it is the sum of the
   campaign's ``campaign_parts`` (at most :data:`~._aggregates.PARTS`, folded) and of
   the rows of ``ingest_log`` not folded yet (one per group commit of one process,
   its ``writer``); ``arrivals`` keeps the accepted reports per minute (the
   history), folded from the log as well (:mod:`._aggregates`).  The hot tables
   (``batches``, ``ingest_log``, ``arrivals``) reference no campaign row: a foreign
   key check would lock it (PostgreSQL ``FOR KEY SHARE``) in every ingest
   transaction of every process; the ingest and deletion paths keep them
   consistent under the campaign's lock instead.
4. (anonymous collection) ``relayed_campaigns``;
5. (population scale) ``refused_batch_ids``: a batch id refused for a counted reason is counted once (a client that
   did not get the answer and sends the batch again is refused again, not counted again);
   ``relayed_campaigns.smallest_batch``: the running minimum of a relayed campaign's batch sizes (its
   public config reads it instead of scanning its batches).
6. (campaigns in rounds) ``round_campaigns``: the plan, group sizes and current round of each campaign that runs
   in rounds (adaptive LDP quantiles, :mod:`._rounds`).
7. ``relayed_campaigns.identity``: the identity document a device trusts (config, key, relay URL, issuer;
   :mod:`dpdist._wire._identity`), NULL for relayed campaigns made before (they have no issuer: no
   admission, no central guarantee); ``relayed_tokens``: the Privacy Pass token nonces each relayed
   campaign's counted batches spent; ``smallest_batch`` becomes the smallest number of *admitted* reports
   of a batch (messages the collector could not open no longer count toward it), recomputed.
8. (Oblivious HTTP) ``ohttp_keys``: the gateway's key ring (:mod:`._ohttp_keys`); ``relayed_campaigns.ohttp_private_key``
   (the X25519 key of a relayed campaign's Oblivious HTTP key configuration, NULL for campaigns made before) and
   ``.sealed_v1`` (whether its relay still admits reports in dpdist's own envelope).
9. (the durable floor) SQLite: ``batches`` keyed by (batch id, campaign) with an index by campaign, so
   that one B-tree insert per batch keeps both rules: a batch counted once per campaign (the key) and a batch id of
   the bound form counted by one campaign only (a read of the same index, under SQLite's one write lock:
   :func:`._group._bind`).  ``bound_batch_ids`` then holds only the ids whose batch rows retention deleted
   (:meth:`._store.Store.purge`) and those of older versions.  PostgreSQL keeps its keys (its group commits of many
   processes run side by side: ``bound_batch_ids``' key binds an id atomically).
10. (a relay cannot count one report twice) ``relayed_reports``: the HPKE encapsulated key (``enc``, drawn afresh for
    each sealing, in either envelope) of each report a relayed campaign's counted batches opened, keyed by
    (campaign, enc): a copy of a report is refused (``replayed_report``) whatever token a relay attaches to it.
"""

from __future__ import annotations

import json

from ..errors import IncompatibleStateError
from ._database import Database

__all__ = ["SCHEMA_VERSION", "create_schema"]

SCHEMA_VERSION = 10
#: the advisory lock that serializes schema creation and migration (PostgreSQL); not a campaign id
_SCHEMA_LOCK = "dpdist schema"


def _tables(db: Database) -> list[str]:
    blob = db.blob
    log_id = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY" if db.dialect == "postgresql" else "INTEGER PRIMARY KEY"
    return [
        "CREATE TABLE IF NOT EXISTS dpdist_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS campaigns ("
        " id TEXT PRIMARY KEY, config TEXT NOT NULL, state TEXT NOT NULL, submit_token_sha256 TEXT,"
        " keep_reports INTEGER NOT NULL, export_file_id TEXT NOT NULL, created_ms BIGINT NOT NULL,"
        " opened_ms BIGINT, closed_ms BIGINT, statistic_dtype TEXT NOT NULL, max_reports BIGINT,"
        " enrollment INTEGER NOT NULL DEFAULT 0)",
        *_part_tables(blob, log_id),
        *_batches(db),
        "CREATE TABLE IF NOT EXISTS reports ("
        " campaign_id TEXT NOT NULL, batch_id TEXT NOT NULL, received_ms BIGINT NOT NULL, n BIGINT NOT NULL,"
        f" payload {blob} NOT NULL, PRIMARY KEY (campaign_id, batch_id),"
        " FOREIGN KEY (campaign_id, batch_id) REFERENCES batches(campaign_id, batch_id))",
        *_ENROLLMENTS,
        _RELAYED_CAMPAIGNS,
        _RELAYED_TOKENS,
        _RELAYED_REPORTS,
        _REFUSED_BATCH_IDS,
        _ROUND_CAMPAIGNS,
        _OHTTP_KEYS,
    ]


def _batches(db: Database, table: str = "batches") -> list[str]:
    """The batch rows' table (SQLite: keyed by batch id first, and indexed by campaign; see version 8)."""
    key = "batch_id, campaign_id" if db.dialect == "sqlite" else "campaign_id, batch_id"
    return [
        f"CREATE TABLE IF NOT EXISTS {table} ("
        " campaign_id TEXT NOT NULL, batch_id TEXT NOT NULL, body_sha256 TEXT NOT NULL,"
        " received_ms BIGINT NOT NULL, n_read BIGINT NOT NULL, accepted BIGINT NOT NULL, rejected TEXT NOT NULL,"
        f" PRIMARY KEY ({key}))",
        *(["CREATE INDEX IF NOT EXISTS batches_by_campaign ON batches (campaign_id)"] if db.dialect == "sqlite" else []),
    ]


def _part_tables(blob: str, log_id: str) -> list[str]:
    return [
        "CREATE TABLE IF NOT EXISTS campaign_parts ("
        " campaign_id TEXT NOT NULL REFERENCES campaigns(id), part BIGINT NOT NULL, n BIGINT NOT NULL,"
        f" statistic {blob}, rejected TEXT NOT NULL, refused TEXT NOT NULL, refusals BIGINT NOT NULL,"
        " batches BIGINT NOT NULL, PRIMARY KEY (campaign_id, part))",
        f"CREATE TABLE IF NOT EXISTS ingest_log (id {log_id}, campaign_id TEXT NOT NULL, writer BIGINT NOT NULL,"
        f" minute_ms BIGINT NOT NULL, n BIGINT NOT NULL, statistic {blob}, rejected TEXT NOT NULL, refused TEXT NOT NULL,"
        " refusals BIGINT NOT NULL, batches BIGINT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS ingest_log_by_writer ON ingest_log (campaign_id, writer)",
        "CREATE TABLE IF NOT EXISTS arrivals (campaign_id TEXT NOT NULL, minute_ms BIGINT NOT NULL, part BIGINT NOT NULL,"
        " n BIGINT NOT NULL, batches BIGINT NOT NULL, PRIMARY KEY (campaign_id, minute_ms, part))",
    ]


_ENROLLMENTS = [
    "CREATE TABLE IF NOT EXISTS enrollments ("
    " token_sha256 TEXT PRIMARY KEY, campaign_id TEXT NOT NULL REFERENCES campaigns(id),"
    " reports_left BIGINT NOT NULL, issued_ms BIGINT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS enrollments_by_campaign ON enrollments (campaign_id)",
    "CREATE TABLE IF NOT EXISTS bound_batch_ids ("
    " batch_id TEXT PRIMARY KEY, campaign_id TEXT NOT NULL REFERENCES campaigns(id))",
    "CREATE INDEX IF NOT EXISTS bound_batch_ids_by_campaign ON bound_batch_ids (campaign_id)",
]


#: the key pair and relay of each campaign collected through a shuffling relay (serve/_relayed.py)
_RELAYED_CAMPAIGNS = (
    "CREATE TABLE IF NOT EXISTS relayed_campaigns ("
    " campaign_id TEXT NOT NULL, export_file_id TEXT NOT NULL, relay_token_sha256 TEXT NOT NULL,"
    " public_key TEXT NOT NULL, private_key TEXT NOT NULL, delta DOUBLE PRECISION NOT NULL, smallest_batch BIGINT,"
    " identity TEXT, ohttp_private_key TEXT, sealed_v1 INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (campaign_id, export_file_id))"
)

#: the Oblivious HTTP gateway's key ring (serve/_ohttp_keys.py): one row per key id (0-255), retired keys kept until reused
_OHTTP_KEYS = (
    "CREATE TABLE IF NOT EXISTS ohttp_keys (key_id INTEGER PRIMARY KEY, public_key TEXT NOT NULL, private_key TEXT NOT NULL,"
    " created_ms BIGINT NOT NULL, retired_ms BIGINT)"
)

#: the Privacy Pass token nonces (hex) spent by each relayed campaign's counted batches (serve/_relayed.py)
_RELAYED_TOKENS = "CREATE TABLE IF NOT EXISTS relayed_tokens (campaign_id TEXT NOT NULL, nonce TEXT NOT NULL, PRIMARY KEY (campaign_id, nonce))"

#: the HPKE encapsulated keys (hex) of the reports each relayed campaign's counted batches opened (serve/_relayed.py)
_RELAYED_REPORTS = "CREATE TABLE IF NOT EXISTS relayed_reports (campaign_id TEXT NOT NULL, enc TEXT NOT NULL, PRIMARY KEY (campaign_id, enc))"

#: the batch ids refused for each counted reason (serve/_group.py): each is counted once under refused_batches
_REFUSED_BATCH_IDS = (
    "CREATE TABLE IF NOT EXISTS refused_batch_ids ("
    " campaign_id TEXT NOT NULL, batch_id TEXT NOT NULL, reason TEXT NOT NULL, PRIMARY KEY (campaign_id, batch_id, reason))"
)

#: the plan, group sizes and current round (1-based) of each campaign that runs in rounds (serve/_rounds.py)
_ROUND_CAMPAIGNS = (
    "CREATE TABLE IF NOT EXISTS round_campaigns ("
    " campaign_id TEXT NOT NULL, export_file_id TEXT NOT NULL, plan TEXT NOT NULL, sizes TEXT NOT NULL,"
    " round BIGINT NOT NULL, submit_token_sha256 TEXT, keep_reports INTEGER NOT NULL,"
    " PRIMARY KEY (campaign_id, export_file_id))"
)


def _version(db: Database) -> int | None:
    """The schema version of the database (None: a new, empty database)."""
    if db.dialect == "sqlite":
        query = "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'dpdist_meta'"
    else:
        query = "SELECT table_name FROM information_schema.tables WHERE table_name = 'dpdist_meta' AND table_schema = current_schema()"
    if not db.execute(query):
        return None
    rows = db.execute("SELECT value FROM dpdist_meta WHERE key = 'schema_version'")
    return int(rows[0][0]) if rows else None


def _from_1(db: Database) -> None:
    """1 -> 2: two columns of ``campaigns``, two tables, and the batch ids bound to the campaigns that counted them."""
    db.execute("ALTER TABLE campaigns ADD COLUMN max_reports BIGINT")
    db.execute("ALTER TABLE campaigns ADD COLUMN enrollment INTEGER NOT NULL DEFAULT 0")
    for statement in _ENROLLMENTS:
        db.execute(statement)
    db.execute(
        "INSERT INTO bound_batch_ids (batch_id, campaign_id) SELECT batch_id, MIN(campaign_id) FROM batches"
        " WHERE 1 = 1 GROUP BY batch_id ON CONFLICT (batch_id) DO NOTHING"
    )


def _from_2(db: Database) -> None:
    """2 -> 3: each campaign's aggregate becomes its part 0; its batches' arrivals become the history."""
    log_id = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY" if db.dialect == "postgresql" else "INTEGER PRIMARY KEY"
    for statement in _part_tables(db.blob, log_id):
        db.execute(statement)
    for campaign_id, n, statistic, rejected, refused, batches in db.execute(
        "SELECT id, n, statistic, rejected, refused, batches FROM campaigns"
    ):
        db.execute(
            "INSERT INTO campaign_parts (campaign_id, part, n, statistic, rejected, refused, refusals, batches)"
            " VALUES (?, 0, ?, ?, ?, ?, ?, ?)",
            (campaign_id, n, statistic, rejected, refused, sum(json.loads(refused).values()), batches),
        )
    db.execute(
        "INSERT INTO arrivals (campaign_id, minute_ms, part, n, batches) SELECT campaign_id, received_ms, 0, SUM(accepted),"
        " COUNT(*) FROM batches GROUP BY campaign_id, received_ms"
    )
    db.execute("DROP INDEX IF EXISTS batches_by_time")  # the history reads arrivals now
    for column in ("n", "statistic", "rejected", "refused", "batches"):
        db.execute(f"ALTER TABLE campaigns DROP COLUMN {column}")
    if db.dialect == "postgresql":  # a row lock on the campaign per ingest transaction: see the module
        db.execute("ALTER TABLE batches DROP CONSTRAINT IF EXISTS batches_campaign_id_fkey")


def _from_3(db: Database) -> None:
    """3 -> 4: the relayed campaigns' table (a version-3 service made it at start-up, hence IF NOT EXISTS)."""
    version_4 = _RELAYED_CAMPAIGNS.replace(" smallest_batch BIGINT,", "").replace(" identity TEXT,", "")
    db.execute(version_4.replace(" ohttp_private_key TEXT, sealed_v1 INTEGER NOT NULL DEFAULT 1,", ""))  # as version 4 had it


def _from_4(db: Database) -> None:
    """4 -> 5: the refused batch ids (none known: the refusals counted so far stay counted), and each relayed
    campaign's smallest batch so far."""
    db.execute(_REFUSED_BATCH_IDS)
    db.execute("ALTER TABLE relayed_campaigns ADD COLUMN smallest_batch BIGINT")
    db.execute(
        "UPDATE relayed_campaigns SET smallest_batch = (SELECT MIN(n_read) FROM batches"
        " WHERE batches.campaign_id = relayed_campaigns.campaign_id)"
    )


def _from_5(db: Database) -> None:
    """5 -> 6: the rounds campaigns' table (adaptive LDP quantiles, serve/_rounds.py)."""
    db.execute(_ROUND_CAMPAIGNS)


def _from_6(db: Database) -> None:
    """6 -> 7: relayed campaigns' identities (none for the campaigns made before) and spent tokens; the smallest batch
    counts admitted reports only."""
    db.execute("ALTER TABLE relayed_campaigns ADD COLUMN identity TEXT")
    db.execute(_RELAYED_TOKENS)
    db.execute(
        "UPDATE relayed_campaigns SET smallest_batch = (SELECT MIN(accepted) FROM batches"
        " WHERE batches.campaign_id = relayed_campaigns.campaign_id)"
    )


def _from_7(db: Database) -> None:
    """7 -> 8: the Oblivious HTTP gateway's key ring (empty: the service makes its first key), relayed campaigns' Oblivious
    HTTP keys (none for the campaigns made before: their identities do not name one) and envelopes."""
    db.execute(_OHTTP_KEYS)
    db.execute("ALTER TABLE relayed_campaigns ADD COLUMN ohttp_private_key TEXT")
    db.execute("ALTER TABLE relayed_campaigns ADD COLUMN sealed_v1 INTEGER NOT NULL DEFAULT 1")


def _from_8(db: Database) -> None:
    """8 -> 9: SQLite's batch rows keyed by batch id first (the table made again, its rows copied; the foreign keys
    are off for the schema's transaction, :func:`create_schema`)."""
    if db.dialect != "sqlite":
        return
    db.execute(_batches(db, "batches_v9")[0])
    db.execute("INSERT INTO batches_v9 SELECT campaign_id, batch_id, body_sha256, received_ms, n_read, accepted, rejected"
               " FROM batches")
    db.execute("DROP TABLE batches")
    db.execute("ALTER TABLE batches_v9 RENAME TO batches")
    db.execute(_batches(db)[1])


def _from_9(db: Database) -> None:
    """9 -> 10: the encapsulated keys of relayed reports (none known for the batches counted before: a copy of one of
    their reports is refused by its token, spent, unless a relay attached another device's unspent token)."""
    db.execute(_RELAYED_REPORTS)


#: version -> the step that migrates a database of that version to the next one
_MIGRATIONS = {1: _from_1, 2: _from_2, 3: _from_3, 4: _from_4, 5: _from_5, 6: _from_6, 7: _from_7, 8: _from_8, 9: _from_9}


def create_schema(db: Database) -> None:
    """Create the tables of a new database, or migrate an older one forward, in one transaction.

    Services starting at once on one new PostgreSQL database take turns (an advisory lock): the
    first creates the schema, the others find it made.  SQLite: the foreign keys are off for the transaction (a
    table referenced by another is made again by a migration, as SQLite's ``ALTER TABLE`` documentation does it) and
    checked before it commits.
    """
    if db.dialect != "sqlite":
        _create_or_migrate(db)
        return
    db.execute("PRAGMA foreign_keys=OFF")  # outside the transaction: SQLite ignores it inside one
    try:
        _create_or_migrate(db)
    finally:
        db.execute("PRAGMA foreign_keys=ON")


def _create_or_migrate(db: Database) -> None:
    with db.transaction():
        db.lock_name(_SCHEMA_LOCK, shared=False)
        version = _version(db)
        if version is None:
            for statement in _tables(db):
                db.execute(statement)
            db.execute("INSERT INTO dpdist_meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            return
        if version > SCHEMA_VERSION or version not in (*_MIGRATIONS, SCHEMA_VERSION):
            raise IncompatibleStateError(
                f"The database {db.url!r} has dpdist schema version {version}; this dpdist uses {SCHEMA_VERSION}."
            )
        for step in range(version, SCHEMA_VERSION):
            _MIGRATIONS[step](db)
        if db.dialect == "sqlite" and db.execute("PRAGMA foreign_key_check"):
            raise IncompatibleStateError(f"The database {db.url!r} has rows that break its foreign keys; not migrated.")
        db.execute("UPDATE dpdist_meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
