"""The issuer's state in one SQLite file: keys, credentials, and the answers it gave (every write committed before it is answered).

An :class:`~dpdist._io._sqlite_store.SQLiteStore` (WAL, ``synchronous=FULL``: a commit survives a power
cut, not only a killed process); one writer thread owns the writing connection and runs each write in
its own ``BEGIN IMMEDIATE`` transaction; requests read through their own connections.  Schema version
:data:`SCHEMA_VERSION` (``PRAGMA user_version``), migrated forward only.

``keys``
    one row per key name: the token key (DER SPKI, public), the **private key (PKCS #8 DER, not
    encrypted)**: whoever reads this file can mint tokens for every campaign; protect it (and its
    backups) as the issuer's secret; and ``tokens_each``, the key's ceiling: no credential of the key
    gives more tokens (published with the key; a campaign's guarantee counts a credential as that many
    reports).  Schema version 1 had no ceiling: migrating sets each key's to the most tokens any of its
    credentials was minted with, or :data:`MAX_TOKENS_EACH` for a key without credentials.
``credentials``
    one row per credential: SHA-256 of the credential (the credential itself is shown once, when
    minted, and never stored), its key name, ``tokens_each`` and ``remaining``.
``issued``
    one row per token issued: the credential's hash, SHA-256 of the TokenRequest and the
    TokenResponse sent, so that a retry of the same request gets the same answer and spends nothing.
    The blinded message says nothing about the token it becomes (blind signatures): this table
    links credentials to issuance events, not to tokens.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import time
from concurrent.futures import Future
from dataclasses import dataclass

from .._io._sqlite_store import SQLiteStore

__all__ = ["IssuerStore", "KeyRecord", "MAX_TOKENS_EACH", "SCHEMA_VERSION", "credential_hash"]

SCHEMA_VERSION = 2
#: tokens one credential may give, at most (and the ceiling of a key migrated from schema version 1 without credentials)
MAX_TOKENS_EACH = 10_000
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS keys (name TEXT PRIMARY KEY, token_key BLOB NOT NULL, private_key BLOB NOT NULL, "
    f"created REAL NOT NULL, tokens_each INTEGER NOT NULL DEFAULT {MAX_TOKENS_EACH})",
    "CREATE TABLE IF NOT EXISTS credentials (hash BLOB PRIMARY KEY, key_name TEXT NOT NULL REFERENCES keys (name), "
    "tokens_each INTEGER NOT NULL, remaining INTEGER NOT NULL CHECK (remaining >= 0))",
    "CREATE INDEX IF NOT EXISTS credentials_of_key ON credentials (key_name)",
    "CREATE TABLE IF NOT EXISTS issued (credential BLOB NOT NULL, request BLOB NOT NULL, response BLOB NOT NULL, "
    "PRIMARY KEY (credential, request)) WITHOUT ROWID",
)


def credential_hash(credential: str) -> bytes:
    """What the store keeps of a credential: SHA-256 of its ASCII bytes (a credential has 256 random bits)."""
    return hashlib.sha256(credential.encode("ascii")).digest()


@dataclass(frozen=True)
class KeyRecord:
    name: str
    token_key: bytes
    private_key: bytes  # PKCS #8 DER
    tokens_each: int  # the key's ceiling: the most tokens a credential of it gives


class IssuerStore:
    """The issuer's SQLite file (module docstring); thread-safe: one writer thread, a reading connection per thread."""

    def __init__(self, path: str):
        self.path = path
        self._store = SQLiteStore(path, _SCHEMA, name="dpdist-issuer-writer", schema_version=SCHEMA_VERSION, owner="issuer",
                                  migrations={1: _migrate_from_version_1}, marker="keys")

    # ------------------------------------------------------------------ writes (futures, resolved once committed)
    def add_key(self, name: str, token_key: bytes, private_key: bytes, tokens_each: int) -> Future:
        """A future of True (added, with the ceiling ``tokens_each``) or False (a key of that name exists: nothing changed)."""
        return self._store.write(_add_key, name, token_key, private_key, tokens_each)

    def mint(self, name: str, count: int, tokens_each: int) -> Future:
        """A future of ``count`` fresh credentials for key ``name``, each good for ``tokens_each`` tokens (None: no such key;
        the key's ceiling, an int, when ``tokens_each`` is above it: nothing minted)."""
        return self._store.write(_mint, name, count, tokens_each)

    def issue(self, credential: bytes, request: bytes, response: bytes) -> Future:
        """Record one token issued to ``credential`` (a hash) for ``request`` (a hash), if it has one left.

        A future of ``("issued", response)``, ``("again", stored response)`` (this request was answered
        before: the stored answer, nothing spent) or ``("exhausted", None)``.
        """
        return self._store.write(_issue, credential, request, response)

    # ------------------------------------------------------------------ reads (any thread)
    def _read(self) -> sqlite3.Connection:
        return self._store.read()

    def key(self, name: str) -> KeyRecord | None:
        row = self._read().execute("SELECT name, token_key, private_key, tokens_each FROM keys WHERE name = ?", (name,)).fetchone()
        return None if row is None else KeyRecord(row[0], bytes(row[1]), bytes(row[2]), int(row[3]))

    def token_keys(self) -> list[tuple[str, bytes, int]]:
        """Every key's name, token key and ceiling (``tokens_each``), oldest first."""
        rows = self._read().execute("SELECT name, token_key, tokens_each FROM keys ORDER BY created, name").fetchall()
        return [(row[0], bytes(row[1]), int(row[2])) for row in rows]

    def credential(self, credential: bytes) -> tuple[str, int] | None:
        """The key name and the tokens left of a credential (its hash), or None."""
        row = self._read().execute("SELECT key_name, remaining FROM credentials WHERE hash = ?", (credential,)).fetchone()
        return None if row is None else (row[0], int(row[1]))

    def answered(self, credential: bytes, request: bytes) -> bytes | None:
        """The response already given to this credential for this request, or None."""
        row = self._read().execute("SELECT response FROM issued WHERE credential = ? AND request = ?", (credential, request)).fetchone()
        return None if row is None else bytes(row[0])

    def status(self) -> dict[str, dict[str, int]]:
        """Per key: its ceiling (``tokens_each``), credentials minted, tokens they allow, tokens issued, tokens left."""
        rows = self._read().execute(
            "SELECT k.name, k.tokens_each, COUNT(c.hash), COALESCE(SUM(c.tokens_each), 0), COALESCE(SUM(c.remaining), 0) "
            "FROM keys k LEFT JOIN credentials c ON c.key_name = k.name GROUP BY k.name ORDER BY k.created, k.name"
        ).fetchall()
        return {name: {"tokens_each": int(ceiling), "credentials": int(count), "tokens": int(tokens),
                       "issued": int(tokens - left), "remaining": int(left)}
                for name, ceiling, count, tokens, left in rows}

    def close(self) -> None:
        self._store.close()


def _migrate_from_version_1(connection: sqlite3.Connection) -> None:
    """Schema 1 -> 2: each key's ceiling, the most tokens any of its credentials gives (module docstring); in the
    migration's transaction (:class:`~dpdist._io._sqlite_store.SQLiteStore`)."""
    connection.execute(f"ALTER TABLE keys ADD COLUMN tokens_each INTEGER NOT NULL DEFAULT {MAX_TOKENS_EACH}")
    connection.execute("UPDATE keys SET tokens_each = (SELECT MAX(c.tokens_each) FROM credentials c WHERE c.key_name = keys.name) "
                       "WHERE EXISTS (SELECT 1 FROM credentials c WHERE c.key_name = keys.name)")


def _add_key(connection: sqlite3.Connection, name: str, token_key: bytes, private_key: bytes, tokens_each: int) -> bool:
    inserted = connection.execute(
        "INSERT OR IGNORE INTO keys (name, token_key, private_key, created, tokens_each) VALUES (?, ?, ?, ?, ?)",
        (name, token_key, private_key, time.time(), tokens_each),
    ).rowcount
    return bool(inserted)


def _mint(connection: sqlite3.Connection, name: str, count: int, tokens_each: int) -> list[str] | int | None:
    row = connection.execute("SELECT tokens_each FROM keys WHERE name = ?", (name,)).fetchone()
    if row is None:
        return None
    if tokens_each > int(row[0]):
        return int(row[0])  # above the key's published ceiling: nothing minted
    credentials = [secrets.token_urlsafe(32) for _ in range(count)]  # 256 bits each
    connection.executemany(
        "INSERT INTO credentials (hash, key_name, tokens_each, remaining) VALUES (?, ?, ?, ?)",
        [(credential_hash(credential), name, tokens_each, tokens_each) for credential in credentials],
    )
    return credentials


def _issue(connection: sqlite3.Connection, credential: bytes, request: bytes, response: bytes) -> tuple[str, bytes | None]:
    stored = connection.execute("SELECT response FROM issued WHERE credential = ? AND request = ?", (credential, request)).fetchone()
    if stored is not None:
        return "again", bytes(stored[0])
    spent = connection.execute("UPDATE credentials SET remaining = remaining - 1 WHERE hash = ? AND remaining > 0", (credential,)).rowcount
    if not spent:
        return "exhausted", None
    connection.execute("INSERT INTO issued (credential, request, response) VALUES (?, ?, ?)", (credential, request, response))
    return "issued", response
