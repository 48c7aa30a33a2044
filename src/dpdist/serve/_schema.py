"""The tables of ``dpdist serve`` and their forward-only migrations (the same DDL on SQLite and PostgreSQL).

``dpdist_meta`` holds ``schema_version``.  A database of an older version is
migrated forward in one transaction when the service opens it; a database of a
newer version is refused (this dpdist cannot know what it would break).

Version history: 1, the first service; 2 (issue 29), ``campaigns.max_reports``
and ``.enrollment``, tables ``enrollments`` and ``bound_batch_ids``.
"""

from __future__ import annotations

from ..errors import IncompatibleStateError
from ._database import Database

__all__ = ["SCHEMA_VERSION", "create_schema"]

SCHEMA_VERSION = 2


def _tables(blob: str) -> list[str]:
    return [
        "CREATE TABLE IF NOT EXISTS dpdist_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS campaigns ("
        " id TEXT PRIMARY KEY, config TEXT NOT NULL, state TEXT NOT NULL, submit_token_sha256 TEXT,"
        " keep_reports INTEGER NOT NULL, export_file_id TEXT NOT NULL, created_ms BIGINT NOT NULL,"
        " opened_ms BIGINT, closed_ms BIGINT, n BIGINT NOT NULL, statistic_dtype TEXT NOT NULL,"
        f" statistic {blob} NOT NULL, rejected TEXT NOT NULL, refused TEXT NOT NULL, batches BIGINT NOT NULL,"
        " max_reports BIGINT, enrollment INTEGER NOT NULL DEFAULT 0)",
        "CREATE TABLE IF NOT EXISTS batches ("
        " campaign_id TEXT NOT NULL REFERENCES campaigns(id), batch_id TEXT NOT NULL, body_sha256 TEXT NOT NULL,"
        " received_ms BIGINT NOT NULL, n_read BIGINT NOT NULL, accepted BIGINT NOT NULL, rejected TEXT NOT NULL,"
        " PRIMARY KEY (campaign_id, batch_id))",
        "CREATE INDEX IF NOT EXISTS batches_by_time ON batches (campaign_id, received_ms)",
        "CREATE TABLE IF NOT EXISTS reports ("
        " campaign_id TEXT NOT NULL, batch_id TEXT NOT NULL, received_ms BIGINT NOT NULL, n BIGINT NOT NULL,"
        f" payload {blob} NOT NULL, PRIMARY KEY (campaign_id, batch_id),"
        " FOREIGN KEY (campaign_id, batch_id) REFERENCES batches(campaign_id, batch_id))",
        "CREATE TABLE IF NOT EXISTS enrollments ("
        " token_sha256 TEXT PRIMARY KEY, campaign_id TEXT NOT NULL REFERENCES campaigns(id),"
        " reports_left BIGINT NOT NULL, issued_ms BIGINT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS enrollments_by_campaign ON enrollments (campaign_id)",
        "CREATE TABLE IF NOT EXISTS bound_batch_ids ("
        " batch_id TEXT PRIMARY KEY, campaign_id TEXT NOT NULL REFERENCES campaigns(id))",
        "CREATE INDEX IF NOT EXISTS bound_batch_ids_by_campaign ON bound_batch_ids (campaign_id)",
    ]


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
    """Schema 1 (dpdist before issue 29): two columns more, two tables more, batch ids bound to their campaigns."""
    db.execute("ALTER TABLE campaigns ADD COLUMN max_reports BIGINT")
    db.execute("ALTER TABLE campaigns ADD COLUMN enrollment INTEGER NOT NULL DEFAULT 0")
    for statement in _tables(db.blob):
        db.execute(statement)
    db.execute(
        "INSERT INTO bound_batch_ids (batch_id, campaign_id) SELECT batch_id, MIN(campaign_id) FROM batches"
        " WHERE 1 = 1 GROUP BY batch_id ON CONFLICT (batch_id) DO NOTHING"
    )


#: version -> the step that migrates a database of that version to the next one
_MIGRATIONS = {1: _from_1}


def create_schema(db: Database) -> None:
    """Create the tables of a new database, or migrate an older one forward, in one transaction."""
    with db.transaction():
        version = _version(db)
        if version is None:
            for statement in _tables(db.blob):
                db.execute(statement)
            db.execute("INSERT INTO dpdist_meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            return
        if version > SCHEMA_VERSION or version not in (*_MIGRATIONS, SCHEMA_VERSION):
            raise IncompatibleStateError(
                f"The database {db.url!r} has dpdist schema version {version}; this dpdist uses {SCHEMA_VERSION}."
            )
        for step in range(version, SCHEMA_VERSION):
            _MIGRATIONS[step](db)
        db.execute("UPDATE dpdist_meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
