"""The relay's durable queue: sealed reports in, shuffled batches out, every step committed before it is acknowledged.

An :class:`~dpdist._io._sqlite_store.SQLiteStore` (WAL, ``synchronous=FULL``: a commit survives a power
cut, not only a killed process; one writer thread commits every write): reports that arrive together
are inserted in one transaction (group commit), and each request is answered after its transaction
commits.

``reports``
    one row per accepted report: a 16-byte key (SHA-256 of campaign and the device's report id: a
    retry with the same id is the same report, even sealed again, as a device that restarts must),
    the message while the report waits (the device's token, if the campaign takes tokens, then the
    sealed report), its envelope (:data:`SEALED_V1`: dpdist's own; :data:`OHTTP`: an RFC 9458
    encapsulated request) and its ``enc`` (the HPKE encapsulated key the device drew for it: the same
    sealed bytes sent again under another report id are that report, ``duplicate``, not a second
    one).  Forming a batch moves the bytes into the batch and clears them here; key and ``enc`` stay,
    so a late retry or a replay is still recognised.  No address, no time.
``tokens``
    the nonce of every Privacy Pass token spent (per campaign), with the key of the report it admitted: a
    token admits one report, so the same token with another report id is refused (``token_spent``), and
    the same report sent again with its token is that report (``duplicate``).  Kept after forwarding.
``identities``
    the identity document (:mod:`dpdist._wire._identity`) of each campaign, and its pin, as the collector served it when
    the relay first admitted a report of the campaign: every report of the campaign must be made under it
    (the device says its pin), and its tokens must be bound to it.  Kept for good.
``batches``
    a formed batch: a random id, the campaign, its count and its body (the sealed reports in an order
    drawn with the CSPRNG, framed), kept until the collector acknowledges it, so that a retry after a
    crash sends the same id and the same bytes and the collector counts it once.  A batch takes the
    campaign's oldest waiting reports (at most ``max_size``) of each envelope of which at least
    ``min_size`` wait: the collector tells the two envelopes apart, so each envelope's part of a batch
    is at least K reports on its own (docs/how-to/ohttp.md, "Oblivious HTTP through dpdist's relay").

Schema version 1 (``PRAGMA user_version``) added ``reports.envelope`` and ``reports.enc`` to a queue of
version 0 (its waiting reports are dpdist's envelope; their ``enc`` unknown).
``dropped``
    per campaign, how many waiting reports the relay's admin dropped (:meth:`RelayQueue.drop_waiting`).
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from concurrent.futures import Future
from dataclasses import dataclass

from .._io._sqlite_store import SQLiteStore
from .._wire._frames import frame

__all__ = ["OHTTP", "RelayQueue", "SEALED_V1", "Batch"]

SCHEMA_VERSION = 1

#: a report's envelope: dpdist's own, deprecated (:mod:`dpdist._wire._envelope`), or an RFC 9458 request (:mod:`dpdist._wire._ohttp_report`)
SEALED_V1, OHTTP = 1, 2
_ENVELOPE_NAMES = {SEALED_V1: "sealed_v1", OHTTP: "ohttp"}
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS reports (key BLOB PRIMARY KEY, campaign TEXT NOT NULL, sealed BLOB, "
    "envelope INTEGER NOT NULL DEFAULT 1, enc BLOB)",
    "CREATE INDEX IF NOT EXISTS waiting ON reports (campaign) WHERE sealed IS NOT NULL",
    "CREATE UNIQUE INDEX IF NOT EXISTS encs ON reports (campaign, enc) WHERE enc IS NOT NULL",
    "CREATE TABLE IF NOT EXISTS tokens (campaign TEXT NOT NULL, nonce BLOB NOT NULL, key BLOB NOT NULL, PRIMARY KEY (campaign, nonce))",
    "CREATE TABLE IF NOT EXISTS identities (campaign TEXT PRIMARY KEY, pin TEXT NOT NULL, identity BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS batches (batch_id TEXT PRIMARY KEY, campaign TEXT NOT NULL, count INTEGER NOT NULL, "
    "body BLOB, state TEXT NOT NULL DEFAULT 'pending', detail TEXT)",
    "CREATE TABLE IF NOT EXISTS dropped (campaign TEXT PRIMARY KEY, reports INTEGER NOT NULL)",
)


@dataclass(frozen=True)
class Batch:
    batch_id: str
    campaign: str
    count: int
    body: bytes


def report_key(campaign: str, report_id: str) -> bytes:
    return hashlib.sha256(campaign.encode() + b"\x00" + report_id.encode()).digest()[:16]


class RelayQueue:
    """The queue in one SQLite file (module docstring); thread-safe, one writer thread."""

    def __init__(self, path: str):
        self.path = path
        self._store = SQLiteStore(path, _SCHEMA, name="dpdist-relay-writer", schema_version=SCHEMA_VERSION,
                                  owner="dpdist relay queue", migrations={0: _add_envelopes}, marker="reports")

    # ------------------------------------------------------------------ the API (futures)
    def accept(self, campaign: str, report_id: str, message: bytes, nonce: bytes | None = None, *,
               envelope: int = SEALED_V1, enc: bytes | None = None) -> Future:
        """A future of ``"new"``, ``"duplicate"`` (the id, or the ``enc``, seen before) or ``"token_spent"``
        (``nonce``, the token's, admitted another report), resolved once durable."""
        return self._store.write(_accept, campaign, report_key(campaign, report_id), message, nonce, envelope, enc,
                                 together=True)

    def form_batch(self, campaign: str, min_size: int, max_size: int) -> Future:
        """A future of the new :class:`Batch` of the campaign's oldest waiting reports, shuffled, or None if fewer than ``min_size`` wait."""
        return self._store.write(_form_batch, campaign, min_size, max_size)

    def pin_identity(self, campaign: str, pin: str, identity: bytes) -> Future[tuple[str, bytes]]:
        """A future of the ``(pin, identity)`` the campaign is pinned to: these, if it had none, else the earlier."""
        return self._store.write(_pin_identity, campaign, pin, identity)

    def drop_waiting(self, campaign: str) -> Future:
        """A future of how many of the campaign's waiting reports were dropped (counted in ``dropped``), with their
        report keys and token nonces: they were never delivered, so the same report sent again is a new one."""
        return self._store.write(_drop_waiting, campaign)

    def settle(self, batch_id: str, state: str, detail: str | None = None) -> Future:
        """Mark a batch ``delivered`` or ``refused`` (its body dropped)."""
        return self._store.write(_settle, batch_id, state, detail)

    # ------------------------------------------------------------------ reads (any thread)
    def _read(self) -> sqlite3.Connection:
        return self._store.read()

    def pinned(self, campaign: str) -> tuple[str, bytes] | None:
        """The ``(pin, identity)`` the campaign is pinned to, or None."""
        row = self._read().execute("SELECT pin, identity FROM identities WHERE campaign = ?", (campaign,)).fetchone()
        return None if row is None else (row[0], bytes(row[1]))

    def waiting(self) -> dict[str, int]:
        """Reports waiting per campaign."""
        rows = self._read().execute("SELECT campaign, COUNT(*) FROM reports WHERE sealed IS NOT NULL GROUP BY campaign")
        return dict(rows.fetchall())

    def known(self, campaign: str, report_id: str) -> bool:
        """Whether the relay accepted a report of ``campaign`` under ``report_id`` (waiting or forwarded)."""
        return self._read().execute("SELECT 1 FROM reports WHERE key = ?", (report_key(campaign, report_id),)).fetchone() is not None

    def waiting_in(self, campaign: str, envelope: int) -> int:
        """Reports of ``campaign`` in ``envelope`` waiting for a batch."""
        return int(self._read().execute("SELECT COUNT(*) FROM reports WHERE campaign = ? AND envelope = ? AND sealed IS NOT NULL",
                                        (campaign, envelope)).fetchone()[0])

    def pending_batch_ids(self) -> list[str]:
        """Batches formed and not yet acknowledged, oldest first."""
        rows = self._read().execute("SELECT batch_id FROM batches WHERE state = 'pending' ORDER BY rowid")
        return [row[0] for row in rows.fetchall()]

    def batch(self, batch_id: str) -> Batch:
        """A formed batch, with its body."""
        campaign, count, body = self._read().execute(
            "SELECT campaign, count, body FROM batches WHERE batch_id = ?", (batch_id,)
        ).fetchone()
        return Batch(batch_id, campaign, int(count), bytes(body))

    def status(self) -> dict:
        """Reports waiting per campaign (and per campaign and envelope: each envelope's part of a batch waits for K of
        its own), batches and their reports by state, reports dropped per campaign."""
        read = self._read()
        batches = dict(read.execute("SELECT state, COUNT(*) FROM batches GROUP BY state").fetchall())
        forwarded = dict(read.execute("SELECT state, COALESCE(SUM(count), 0) FROM batches GROUP BY state").fetchall())
        dropped = dict(read.execute("SELECT campaign, reports FROM dropped WHERE reports > 0").fetchall())
        by_envelope: dict[str, dict[str, int]] = {}
        for campaign, envelope, count in read.execute("SELECT campaign, envelope, COUNT(*) FROM reports WHERE sealed IS NOT"
                                                      " NULL GROUP BY campaign, envelope"):
            by_envelope.setdefault(campaign, {})[_ENVELOPE_NAMES.get(envelope, str(envelope))] = count
        return {"waiting": self.waiting(), "waiting_by_envelope": by_envelope, "batches": batches,
                "reports_in_batches": forwarded, "dropped": dropped}

    def close(self) -> None:
        self._store.close()


def _add_envelopes(connection) -> None:
    """Queue version 0 -> 1: each report's envelope (the waiting ones are dpdist's) and ``enc`` (unknown for them)."""
    connection.execute("ALTER TABLE reports ADD COLUMN envelope INTEGER NOT NULL DEFAULT 1")
    connection.execute("ALTER TABLE reports ADD COLUMN enc BLOB")


def _accept(connection, campaign: str, key: bytes, message: bytes, nonce: bytes | None, envelope: int,
            enc: bytes | None) -> str:
    """``"new"``, ``"duplicate"`` (this report id, or these sealed bytes, were accepted before) or ``"token_spent"``
    (its token admitted another report), inside the group's transaction."""
    if connection.execute("SELECT 1 FROM reports WHERE key = ?", (key,)).fetchone() is not None:
        return "duplicate"
    if enc is not None and connection.execute("SELECT 1 FROM reports WHERE campaign = ? AND enc = ?",
                                              (campaign, enc)).fetchone() is not None:
        return "duplicate"  # the same sealed bytes (the device's HPKE ephemeral key) replayed under another report id
    if nonce is not None:
        spent = connection.execute("INSERT OR IGNORE INTO tokens (campaign, nonce, key) VALUES (?, ?, ?)",
                                   (campaign, nonce, key)).rowcount == 0
        if spent:
            return "token_spent"
    connection.execute("INSERT INTO reports (key, campaign, sealed, envelope, enc) VALUES (?, ?, ?, ?, ?)",
                       (key, campaign, message, envelope, enc))
    return "new"


def _form_batch(connection, campaign: str, min_size: int, max_size: int) -> Batch | None:
    """The campaign's oldest waiting reports of each envelope of which at least ``min_size`` wait, at most ``max_size``
    in all, shuffled together (the module docstring); None if no envelope has ``min_size`` waiting."""
    counts = connection.execute("SELECT envelope, COUNT(*), MIN(rowid) FROM reports WHERE campaign = ? AND sealed IS NOT NULL"
                                " GROUP BY envelope ORDER BY MIN(rowid)", (campaign,)).fetchall()
    rows: list = []
    for envelope, count, _ in counts:
        take = min(int(count), max_size - len(rows))
        if take >= min_size:
            rows += connection.execute("SELECT rowid, sealed FROM reports WHERE campaign = ? AND envelope = ? AND sealed IS NOT"
                                       " NULL ORDER BY rowid LIMIT ?", (campaign, envelope, take)).fetchall()
    if not rows:
        return None
    sealed = [bytes(row[1]) for row in rows]
    secrets.SystemRandom().shuffle(sealed)  # the order the collector sees: drawn with the CSPRNG
    batch = Batch(secrets.token_hex(16), campaign, len(sealed), frame(sealed))
    connection.execute("INSERT INTO batches (batch_id, campaign, count, body) VALUES (?, ?, ?, ?)", (batch.batch_id, campaign, batch.count, batch.body))
    connection.executemany("UPDATE reports SET sealed = NULL WHERE rowid = ?", [(row[0],) for row in rows])
    return batch


def _pin_identity(connection, campaign: str, pin: str, identity: bytes) -> tuple[str, bytes]:
    connection.execute("INSERT OR IGNORE INTO identities (campaign, pin, identity) VALUES (?, ?, ?)", (campaign, pin, identity))
    row = connection.execute("SELECT pin, identity FROM identities WHERE campaign = ?", (campaign,)).fetchone()
    return row[0], bytes(row[1])


def _drop_waiting(connection, campaign: str) -> int:
    connection.execute("DELETE FROM tokens WHERE campaign = ? AND key IN "
                       "(SELECT key FROM reports WHERE campaign = ? AND sealed IS NOT NULL)", (campaign, campaign))
    dropped = connection.execute("DELETE FROM reports WHERE campaign = ? AND sealed IS NOT NULL", (campaign,)).rowcount
    connection.execute("INSERT INTO dropped (campaign, reports) VALUES (?, ?) "
                       "ON CONFLICT (campaign) DO UPDATE SET reports = reports + excluded.reports", (campaign, dropped))
    return dropped


def _settle(connection, batch_id: str, state: str, detail: str | None) -> None:
    connection.execute("UPDATE batches SET state = ?, body = NULL, detail = ? WHERE batch_id = ?", (state, detail, batch_id))
