"""Campaigns, their aggregates and their batch ids, in one database.

Tables (the same DDL on SQLite and PostgreSQL, see :mod:`._database`):

``campaigns``
    id (public name), config (JSON), state (created/open/closed), the hash of
    the optional submit token, whether raw reports are kept, and the campaign's
    aggregate: ``n``, the sufficient statistic (raw little-endian bytes of the
    protocol's statistic dtype), rejected reports by reason, refused batches by
    reason, the number of batches.
``batches``
    (campaign, batch id) -> SHA-256 of the request body, time, rows read,
    reports accepted, rejected by reason.  The primary key is the no-batch-twice
    rule: a retried batch finds its row and gets the stored acknowledgement.
``reports``
    optional raw reports (the valid reports of each batch, in the protocol's
    wire layout) for ``dpdist campaign export``.
``enrollments``
    optional per-device enrollment tokens of a campaign: the SHA-256 of each
    token and the reports it may still send (decremented in the ingest
    transaction, so a token never sends more than it was issued for).
``bound_batch_ids``
    batch ids derived from random file ids (32 hex digits, optionally
    ``.partK``) or from content (``sha256-...``), each bound to the one campaign
    that counted it: the same batch replayed into another campaign is refused.

Arrival times (``received_ms``) are stored rounded down to the minute
(:data:`ARRIVAL_RESOLUTION_MS`), the resolution of the dashboard's history:
no finer timing of a device's report is kept.

Ingest (:meth:`Store.ingest`) adds a batch's contribution to the aggregate and
inserts its batch row (and raw reports) in ONE transaction, so after a crash
the aggregate equals the sum of the batches recorded, and a batch is either
counted and recorded or neither.  The caller acknowledges only after the
commit returned.
"""

from __future__ import annotations

import builtins  # the Store.list method hides the list type inside the class
import hashlib
import hmac
import json
import re
import time
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from ..errors import DPDistError, IncompatibleStateError
from ._database import Database

__all__ = ["Store", "Campaign", "ServiceError", "CAMPAIGN_ID", "BATCH_ID"]

SCHEMA_VERSION = 2  # 2: campaigns.max_reports and .enrollment, tables enrollments and bound_batch_ids
#: largest request body the service reads (a batch of 10^4 OUE reports with d = 1024 is 1.3 MB)
DEFAULT_MAX_BODY_BYTES = 16 << 20
CAMPAIGN_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
BATCH_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
STATES = ("created", "open", "closed")
#: arrival times are kept to the minute (the dashboard's history needs no finer)
ARRIVAL_RESOLUTION_MS = 60_000
#: largest campaign statistic (the protocol's statistic_size x its dtype) accepted at creation
DEFAULT_MAX_STATISTIC_BYTES = 64 << 20
#: batch ids that dpdist clients derive from random file ids or from content: unique per service
BOUND_BATCH_ID = re.compile(r"[0-9a-f]{32}(\.part[0-9]+)?|sha256-[0-9a-f]{1,93}")
#: most enrollment tokens one request issues
MAX_TOKENS_PER_REQUEST = 10_000


class ServiceError(DPDistError):
    """A refusal with an HTTP status and a short machine-readable code (sent as a JSON body).

    ``close``: the answer closes the connection (the request's body was not read);
    ``retry_after``: seconds for a ``Retry-After`` header.
    """

    close: bool = False
    retry_after: int | None = None

    def __init__(self, status: int, code: str, detail: str):
        super().__init__(detail)
        self.status, self.code, self.detail = status, code, detail


@dataclass(frozen=True)
class Campaign:
    """One row of ``campaigns``, decoded."""

    id: str
    config: dict
    state: str
    submit_token_sha256: str | None
    keep_reports: bool
    export_file_id: str
    created_ms: int
    opened_ms: int | None
    closed_ms: int | None
    n: int
    statistic: np.ndarray
    rejected: dict[str, int]
    refused: dict[str, int]
    batches: int
    max_reports: int | None = None
    enrollment: bool = False

    @property
    def protocol(self):
        return _protocol(json.dumps(self.config, sort_keys=True))

    def aggregator(self):
        """The campaign's aggregate as a validated :class:`~dpdist.local.Aggregator`."""
        from ..local import Aggregator

        return Aggregator.from_dict(
            {
                "config": self.config,
                "n": self.n,
                "statistic": self.statistic.tolist(),
                "rejected": self.rejected,
            },
            self.protocol,
        )

    def check_submit_token(self, token: str | None) -> bool:
        """Whether ``token`` opens this campaign for submission (constant-time compare)."""
        if self.submit_token_sha256 is None:
            return True
        offered = hashlib.sha256((token or "").encode()).hexdigest()
        return hmac.compare_digest(offered, self.submit_token_sha256)

    def summary(self) -> dict[str, Any]:
        """Public fields for the admin API (never the token hash)."""
        return {
            "campaign": self.id,
            "state": self.state,
            "config": self.config,
            "submit_token_required": self.submit_token_sha256 is not None,
            "keep_reports": self.keep_reports,
            "created_at": _iso(self.created_ms),
            "opened_at": _iso(self.opened_ms),
            "closed_at": _iso(self.closed_ms),
            "n": self.n,
            "rejected": dict(self.rejected),
            "refused_batches": dict(self.refused),
            "batches": self.batches,
            "max_reports": self.max_reports,
            "enrollment": self.enrollment,
        }


@dataclass(frozen=True)
class Gate:
    """What the service checks before it reads a batch's body (a light row: no statistic)."""

    id: str
    state: str
    submit_token_sha256: str | None
    enrollment: bool
    max_reports: int | None
    n: int
    batch_recorded: bool
    enrollment_left: int | None  # reports the offered enrollment token may still send (None: not a token of it)


_PROTOCOLS: dict[str, Any] = {}


def _protocol(config_key: str):
    """Protocols by canonical config (building one can be costly, e.g. a wavelet design)."""
    protocol = _PROTOCOLS.get(config_key)
    if protocol is None:
        from ..local import from_config

        protocol = from_config(json.loads(config_key))
        if len(_PROTOCOLS) > 256:
            _PROTOCOLS.clear()
        _PROTOCOLS[config_key] = protocol
    return protocol


def _iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _arrival_ms() -> int:
    """Now, rounded down to :data:`ARRIVAL_RESOLUTION_MS` (the only arrival time stored)."""
    return _now_ms() // ARRIVAL_RESOLUTION_MS * ARRIVAL_RESOLUTION_MS


def token_sha256(token: str | None) -> str:
    return hashlib.sha256((token or "").encode()).hexdigest()


def _statistic_bytes(statistic: np.ndarray) -> bytes:
    return np.ascontiguousarray(statistic, dtype=statistic.dtype.newbyteorder("<")).tobytes()


def check_campaign_id(campaign_id) -> str:
    if not isinstance(campaign_id, str) or not CAMPAIGN_ID.fullmatch(campaign_id):
        raise ServiceError(
            400,
            "invalid_campaign_id",
            f"A campaign id must be 1-64 characters of a-z, 0-9, '_' and '-', starting with a letter or digit. "
            f"Got {campaign_id!r}.",
        )
    return campaign_id


def check_batch_id(batch_id) -> str:
    if not isinstance(batch_id, str) or not BATCH_ID.fullmatch(batch_id):
        raise ServiceError(
            400, "invalid_batch_id", f"A batch id must be 1-128 characters of A-Z, a-z, 0-9, '.', '_' and '-'. Got {batch_id!r}."
        )
    return batch_id


def check_config(config, max_statistic_bytes: int = DEFAULT_MAX_STATISTIC_BYTES):
    """The protocol of a campaign config, or a 400 naming what is wrong.

    A protocol whose aggregate (``statistic_size`` entries of ``statistic_dtype``)
    would take more than ``max_statistic_bytes`` is refused before anything of
    that size is allocated (the server holds one copy per campaign and per batch
    being added).
    """
    from ..local import from_config

    if not isinstance(config, dict):
        raise ServiceError(400, "invalid_config", f"The 'config' must be a JSON object (a protocol config). Got {config!r}.")
    try:
        protocol = from_config(config)
        size = int(protocol.statistic_size)
        needed = size * np.dtype(protocol.statistic_dtype).itemsize
        if needed <= max_statistic_bytes:
            protocol.report_format.dtype  # a protocol whose reports have no wire format is refused here
    except DPDistError as error:
        raise ServiceError(400, "invalid_config", f"The 'config' is not a valid protocol config: {error}") from None
    except (TypeError, ValueError) as error:
        raise ServiceError(400, "invalid_config", f"The 'config' is not a valid protocol config: {error}") from None
    if needed > max_statistic_bytes:
        raise ServiceError(
            400,
            "statistic_too_large",
            f"The 'config' ({protocol.name}) needs a statistic of {size:,} {np.dtype(protocol.statistic_dtype).name} "
            f"counts, {_bytes_text(needed)} of memory per copy; this server allows at most "
            f"{_bytes_text(max_statistic_bytes)} (--max-statistic-bytes). Use a smaller domain.",
        )
    return protocol


def _bytes_text(size: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def check_max_reports(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**53:
        raise ServiceError(400, "invalid_max_reports", f"'max_reports' must be null or an integer in [1, 2^53]. Got {value!r}.")
    return value


class Store:
    """Campaigns and their aggregates in a :class:`~._database.Database`."""

    def __init__(self, database: Database, *, max_statistic_bytes: int = DEFAULT_MAX_STATISTIC_BYTES):
        self.db = database
        self.max_statistic_bytes = max_statistic_bytes
        self._create_schema()

    # ------------------------------------------------------------------ schema
    def _create_schema(self) -> None:
        blob = self.db.blob
        statements = [
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
        with self.db.transaction():
            rows = self.db.execute("SELECT value FROM dpdist_meta WHERE key = 'schema_version'") if self._has_meta() else []
            if rows and rows[0][0] == "1":  # schema 1 (dpdist before issue 29): two columns more, two tables more
                self.db.execute("ALTER TABLE campaigns ADD COLUMN max_reports BIGINT")
                self.db.execute("ALTER TABLE campaigns ADD COLUMN enrollment INTEGER NOT NULL DEFAULT 0")
            for statement in statements:
                self.db.execute(statement)
            if rows and rows[0][0] == "1":
                self.db.execute(
                    "INSERT INTO bound_batch_ids (batch_id, campaign_id) SELECT batch_id, MIN(campaign_id) FROM batches"
                    " WHERE 1 = 1 GROUP BY batch_id ON CONFLICT (batch_id) DO NOTHING"
                )
                self.db.execute("UPDATE dpdist_meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
                rows = [(str(SCHEMA_VERSION),)]
            if not rows:
                self.db.execute("INSERT INTO dpdist_meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif rows[0][0] != str(SCHEMA_VERSION):
                raise IncompatibleStateError(
                    f"The database {self.db.url!r} has dpdist schema version {rows[0][0]}; this dpdist uses {SCHEMA_VERSION}."
                )

    def _has_meta(self) -> bool:
        if self.db.dialect == "sqlite":
            query = "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'dpdist_meta'"
        else:
            query = "SELECT table_name FROM information_schema.tables WHERE table_name = 'dpdist_meta' AND table_schema = current_schema()"
        return bool(self.db.execute(query))

    # ------------------------------------------------------------------ campaigns
    _COLUMNS = (
        "id, config, state, submit_token_sha256, keep_reports, export_file_id, created_ms, opened_ms, closed_ms,"
        " n, statistic_dtype, statistic, rejected, refused, batches, max_reports, enrollment"
    )

    def _campaign(self, row) -> Campaign:
        (cid, config, state, token, keep, file_id, created, opened, closed, n, dtype, statistic, rejected, refused, batches,
         max_reports, enrollment) = row
        return Campaign(
            id=cid,
            config=json.loads(config),
            state=state,
            submit_token_sha256=token,
            keep_reports=bool(keep),
            export_file_id=file_id,
            created_ms=int(created),
            opened_ms=None if opened is None else int(opened),
            closed_ms=None if closed is None else int(closed),
            n=int(n),
            statistic=np.frombuffer(bytes(statistic), dtype=np.dtype(dtype)).astype(np.dtype(dtype).newbyteorder("=")),
            rejected=json.loads(rejected),
            refused=json.loads(refused),
            batches=int(batches),
            max_reports=None if max_reports is None else int(max_reports),
            enrollment=bool(enrollment),
        )

    def get(self, campaign_id: str, *, lock: bool = False) -> Campaign:
        check_campaign_id(campaign_id)
        rows = self.db.execute(
            f"SELECT {self._COLUMNS} FROM campaigns WHERE id = ?" + (self.db.for_update if lock else ""), (campaign_id,)
        )
        if not rows:
            raise ServiceError(404, "unknown_campaign", f"There is no campaign {campaign_id!r}.")
        return self._campaign(rows[0])

    def list(self) -> list[Campaign]:
        return [self._campaign(row) for row in self.db.execute(f"SELECT {self._COLUMNS} FROM campaigns ORDER BY created_ms, id")]

    def create(
        self,
        campaign_id: str,
        config: dict,
        *,
        submit_token: str | None = None,
        keep_reports: bool = False,
        max_reports: int | None = None,
        enrollment: bool = False,
    ) -> Campaign:
        """A new campaign in state ``created``; 409 if the id is taken (safe under concurrent creates).

        ``max_reports`` caps the reports the campaign accepts (a batch that would
        pass it is refused whole, 409 ``campaign_full``); ``enrollment`` makes every
        submission need an enrollment token (:meth:`enroll`) instead of a shared
        submit token.
        """
        from .._io._identity import new_file_id

        check_campaign_id(campaign_id)
        protocol = check_config(config, self.max_statistic_bytes)
        if submit_token is not None and (not isinstance(submit_token, str) or len(submit_token) < 16):
            raise ServiceError(400, "invalid_submit_token", "A submit token must be a string of at least 16 characters.")
        max_reports = check_max_reports(max_reports)
        if not isinstance(enrollment, bool):
            raise ServiceError(400, "invalid_enrollment", f"'enrollment' must be true or false. Got {enrollment!r}.")
        if enrollment and submit_token is not None:
            raise ServiceError(
                400,
                "invalid_enrollment",
                "A campaign takes either a shared submit token or per-device enrollment tokens, not both.",
            )
        statistic = np.zeros(protocol.statistic_size, dtype=protocol.statistic_dtype)
        token_hash = None if submit_token is None else hashlib.sha256(submit_token.encode()).hexdigest()
        with self.db.transaction():
            inserted = self.db.rowcount(
                f"INSERT INTO campaigns ({self._COLUMNS}) VALUES (?, ?, 'created', ?, ?, ?, ?, NULL, NULL, 0, ?, ?, '{{}}', '{{}}', 0,"
                " ?, ?) ON CONFLICT (id) DO NOTHING",
                (
                    campaign_id,
                    json.dumps(protocol.config(), sort_keys=True),
                    token_hash,
                    int(bool(keep_reports)),
                    new_file_id(),
                    _now_ms(),
                    statistic.dtype.newbyteorder("<").str,
                    _statistic_bytes(statistic),
                    max_reports,
                    int(enrollment),
                ),
            )
        if inserted != 1:
            raise ServiceError(409, "campaign_exists", f"A campaign {campaign_id!r} already exists; choose another id.")
        return self.get(campaign_id)

    def set_config(self, campaign_id: str, config: dict, **changes) -> Campaign:
        """Replace the config of a campaign that is not open yet (state ``created``); also ``max_reports=`` if given."""
        protocol = check_config(config, self.max_statistic_bytes)
        max_reports = check_max_reports(changes["max_reports"]) if "max_reports" in changes else None
        statistic = np.zeros(protocol.statistic_size, dtype=protocol.statistic_dtype)
        with self.db.transaction():
            campaign = self.get(campaign_id, lock=True)
            if campaign.state != "created":
                raise ServiceError(
                    409, "config_frozen", f"Campaign {campaign_id!r} is {campaign.state}: its config cannot change (create a new campaign)."
                )
            self.db.execute(
                "UPDATE campaigns SET config = ?, statistic_dtype = ?, statistic = ?, max_reports = ? WHERE id = ?",
                (
                    json.dumps(protocol.config(), sort_keys=True),
                    statistic.dtype.newbyteorder("<").str,
                    _statistic_bytes(statistic),
                    max_reports if "max_reports" in changes else campaign.max_reports,
                    campaign_id,
                ),
            )
        return self.get(campaign_id)

    def transition(self, campaign_id: str, target: str) -> Campaign:
        """``created -> open -> closed``; opening an open campaign (or closing a closed one) is a no-op."""
        allowed = {"open": ("created", "open"), "closed": ("open", "closed")}[target]
        with self.db.transaction():
            campaign = self.get(campaign_id, lock=True)
            if campaign.state not in allowed:
                raise ServiceError(409, "wrong_state", f"Campaign {campaign_id!r} is {campaign.state}; it cannot become {target}.")
            if campaign.state != target:
                column = "opened_ms" if target == "open" else "closed_ms"
                self.db.execute(f"UPDATE campaigns SET state = ?, {column} = ? WHERE id = ?", (target, _now_ms(), campaign_id))
        return self.get(campaign_id)

    # ------------------------------------------------------------------ ingest
    def ingest(
        self,
        campaign_id: str,
        batch_id: str,
        body_sha256: str,
        contribution,
        n_read: int,
        raw: np.ndarray | None,
        *,
        enrollment_sha256: str | None = None,
        received_ms: int | None = None,
    ):
        """Add one batch's contribution (an Aggregator of its reports) exactly once; return the acknowledgement.

        A batch id already recorded returns its stored acknowledgement with
        ``"duplicate": true`` when the body is the same, and 409 when it is not.
        In the same transaction as the insert: a batch that would take the
        campaign past ``max_reports`` is refused (409 ``campaign_full``), the
        enrollment token (of a campaign with enrollment) is charged the batch's
        ``n_read`` reports or the batch is refused (403 ``contribution_limit``),
        and a batch id bound to the service (:data:`BOUND_BATCH_ID`) already
        counted by another campaign is refused (409 ``batch_of_another_campaign``).
        ``received_ms`` replaces the arrival time stored (a relayed campaign stores one time for all batches).
        """
        with self.db.transaction():
            campaign = self.get(campaign_id, lock=True)
            previous = self.db.execute(
                "SELECT body_sha256, n_read, accepted, rejected FROM batches WHERE campaign_id = ? AND batch_id = ?",
                (campaign_id, batch_id),
            )
            if previous:
                digest, p_read, p_accepted, p_rejected = previous[0]
                if digest != body_sha256:
                    raise ServiceError(
                        409,
                        "batch_id_reused",
                        f"Batch {batch_id!r} of campaign {campaign_id!r} was already received with different content; "
                        "a new batch needs a new batch id.",
                    )
                return _ack(campaign_id, batch_id, int(p_read), int(p_accepted), json.loads(p_rejected), duplicate=True)
            _check_open(campaign)
            if contribution is None:  # the caller saw the campaign before it opened: let the client retry
                raise ServiceError(409, "campaign_not_open", f"Campaign {campaign_id!r} was not open; retry the batch.")
            if campaign.config != contribution.config:
                raise IncompatibleStateError("internal: a batch was validated against another config")
            if campaign.max_reports is not None and campaign.n + contribution.n > campaign.max_reports:
                raise _campaign_full(campaign, contribution.n)
            if campaign.enrollment:
                charged = self.db.rowcount(
                    "UPDATE enrollments SET reports_left = reports_left - ?"
                    " WHERE token_sha256 = ? AND campaign_id = ? AND reports_left >= ?",
                    (int(n_read), enrollment_sha256 or "", campaign_id, int(n_read)),
                )
                if charged != 1:
                    raise _contribution_limit(campaign_id, n_read)
            if BOUND_BATCH_ID.fullmatch(batch_id):
                bound = self.db.rowcount(
                    "INSERT INTO bound_batch_ids (batch_id, campaign_id) VALUES (?, ?) ON CONFLICT (batch_id) DO NOTHING",
                    (batch_id, campaign_id),
                )
                if bound != 1:
                    owner = self.db.execute("SELECT campaign_id FROM bound_batch_ids WHERE batch_id = ?", (batch_id,))
                    if owner and owner[0][0] != campaign_id:
                        raise ServiceError(
                            409,
                            "batch_of_another_campaign",
                            f"Batch {batch_id!r} was already counted by another campaign; a batch (a report file, or a "
                            "client's batch under its random id) is counted by one campaign only.",
                        )
            # the stored aggregate and the batch both pass the state validator: a row the statistic
            # alone contradicts (e.g. an n its counts cannot sum to) is refused, never extended
            merged = campaign.aggregator().merge(contribution)
            statistic, rejected = merged.statistic, merged.rejected
            now = _arrival_ms() if received_ms is None else received_ms
            self.db.execute(
                "INSERT INTO batches (campaign_id, batch_id, body_sha256, received_ms, n_read, accepted, rejected)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (campaign_id, batch_id, body_sha256, now, n_read, contribution.n, json.dumps(contribution.rejected, sort_keys=True)),
            )
            self.db.execute(
                "UPDATE campaigns SET n = n + ?, statistic = ?, rejected = ?, batches = batches + 1 WHERE id = ?",
                (contribution.n, _statistic_bytes(statistic), json.dumps(rejected, sort_keys=True), campaign_id),
            )
            if raw is not None and campaign.keep_reports and contribution.n:
                self.db.execute(
                    "INSERT INTO reports (campaign_id, batch_id, received_ms, n, payload) VALUES (?, ?, ?, ?, ?)",
                    (campaign_id, batch_id, now, contribution.n, np.ascontiguousarray(raw).tobytes()),
                )
        return _ack(campaign_id, batch_id, n_read, contribution.n, dict(contribution.rejected), duplicate=False)

    # ------------------------------------------------------------------ before the body
    def gate(self, campaign_id: str, batch_id: str | None, token: str | None) -> Gate:
        """The checks made before a batch's body is read: one light query, no statistic (404 if unknown)."""
        check_campaign_id(campaign_id)
        rows = self.db.execute(
            "SELECT id, state, submit_token_sha256, enrollment, max_reports, n FROM campaigns WHERE id = ?", (campaign_id,)
        )
        if not rows:
            raise ServiceError(404, "unknown_campaign", f"There is no campaign {campaign_id!r}.")
        cid, state, token_hash, enrollment, max_reports, n = rows[0]
        recorded = False
        if batch_id is not None and BATCH_ID.fullmatch(batch_id):
            recorded = bool(
                self.db.execute("SELECT 1 FROM batches WHERE campaign_id = ? AND batch_id = ?", (campaign_id, batch_id))
            )
        left = None
        if enrollment:
            found = self.db.execute(
                "SELECT reports_left FROM enrollments WHERE token_sha256 = ? AND campaign_id = ?", (token_sha256(token), campaign_id)
            )
            left = int(found[0][0]) if found else None
        return Gate(cid, state, token_hash, bool(enrollment), None if max_reports is None else int(max_reports), int(n), recorded, left)

    # ------------------------------------------------------------------ enrollment
    def enroll(self, campaign_id: str, count, reports) -> builtins.list[str]:
        """Issue ``count`` enrollment tokens, each good for ``reports`` reports to this campaign; store their SHA-256.

        The tokens are returned once (the server keeps only their hashes).
        """
        import secrets

        for name, value, high in (("count", count, MAX_TOKENS_PER_REQUEST), ("reports", reports, 2**53)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
                raise ServiceError(400, "invalid_enrollment", f"'{name}' must be an integer in [1, {high}]. Got {value!r}.")
        tokens = [secrets.token_urlsafe(24) for _ in range(count)]
        with self.db.transaction():
            campaign = self.get(campaign_id, lock=True)
            if not campaign.enrollment:
                raise ServiceError(
                    409, "enrollment_off", f"Campaign {campaign_id!r} was not created with enrollment; it takes no enrollment tokens."
                )
            if campaign.state == "closed":
                raise ServiceError(409, "campaign_closed", f"Campaign {campaign_id!r} is closed; it accepts no more reports.")
            now = _now_ms()
            for token in tokens:
                self.db.execute(
                    "INSERT INTO enrollments (token_sha256, campaign_id, reports_left, issued_ms) VALUES (?, ?, ?, ?)",
                    (token_sha256(token), campaign_id, reports, now),
                )
        return tokens

    # ------------------------------------------------------------------ deletion and retention
    def delete(self, campaign_id: str) -> dict:
        """Delete a campaign with everything stored for it (aggregate, batch records, kept reports, tokens)."""
        with self.db.transaction():
            self.get(campaign_id, lock=True)
            reports = self.db.rowcount("DELETE FROM reports WHERE campaign_id = ?", (campaign_id,))
            batches = self.db.rowcount("DELETE FROM batches WHERE campaign_id = ?", (campaign_id,))
            self.db.execute("DELETE FROM enrollments WHERE campaign_id = ?", (campaign_id,))
            self.db.execute("DELETE FROM bound_batch_ids WHERE campaign_id = ?", (campaign_id,))
            self.db.execute("DELETE FROM campaigns WHERE id = ?", (campaign_id,))
        return {"campaign": campaign_id, "deleted": True, "batches": int(batches), "kept_report_batches": int(reports)}

    def purge(self, retention_ms: int, now_ms: int | None = None) -> dict:
        """Apply a retention period: kept raw reports older than it, and the per-batch records and enrollment
        tokens of campaigns closed for longer than it, are deleted (aggregates and estimates stay)."""
        cutoff = (_now_ms() if now_ms is None else now_ms) - int(retention_ms)
        with self.db.transaction():
            closed = [row[0] for row in self.db.execute("SELECT id FROM campaigns WHERE state = 'closed' AND closed_ms < ?", (cutoff,))]
            reports = self.db.rowcount("DELETE FROM reports WHERE received_ms < ?", (cutoff,))
            batches = 0
            for campaign_id in closed:
                reports += self.db.rowcount("DELETE FROM reports WHERE campaign_id = ?", (campaign_id,))
                batches += self.db.rowcount("DELETE FROM batches WHERE campaign_id = ?", (campaign_id,))
                self.db.execute("DELETE FROM enrollments WHERE campaign_id = ?", (campaign_id,))
        return {"kept_report_batches": int(reports), "batches": int(batches), "closed_campaigns": len(closed)}

    def count_refused(self, campaign_id: str, reason: str) -> None:
        """Count a batch refused as a whole (unreadable, too large, ...) against an existing campaign."""
        with self.db.transaction():
            campaign = self.get(campaign_id, lock=True)
            refused = dict(campaign.refused)
            refused[reason] = refused.get(reason, 0) + 1
            self.db.execute("UPDATE campaigns SET refused = ? WHERE id = ?", (json.dumps(refused, sort_keys=True), campaign_id))

    # ------------------------------------------------------------------ reading
    def history(self, campaign_id: str, points: int = 200) -> builtins.list[dict]:
        """Cumulative accepted reports over time, in at most ``points`` (+1) time buckets."""
        campaign = self.get(campaign_id)
        span = self.db.execute("SELECT MIN(received_ms), MAX(received_ms) FROM batches WHERE campaign_id = ?", (campaign_id,))
        first, last = span[0]
        if first is None:
            return []
        bucket = max(1, (int(last) - int(first)) // max(1, points) + 1)
        rows = self.db.execute(
            "SELECT (received_ms - ?) / ?, SUM(accepted), COUNT(*) FROM batches WHERE campaign_id = ?"
            " GROUP BY 1 ORDER BY 1",
            (int(first), bucket, campaign.id),
        )
        out, total, batches = [], 0, 0
        for index, accepted, count in rows:
            total += int(accepted)
            batches += int(count)
            out.append({"time": _iso(int(first) + (int(index) + 1) * bucket - 1), "n": total, "batches": batches})
        return out

    def iter_reports(self, campaign_id: str, page: int = 256) -> Iterator[tuple[int, bytes]]:
        """The kept raw reports of a campaign, batch by batch in arrival order: ``(n, payload)``."""
        after_ms, after_id = -1, ""
        while True:
            rows = self.db.execute(
                "SELECT received_ms, batch_id, n, payload FROM reports WHERE campaign_id = ?"
                " AND (received_ms > ? OR (received_ms = ? AND batch_id > ?)) ORDER BY received_ms, batch_id LIMIT ?",
                (campaign_id, after_ms, after_ms, after_id, page),
            )
            if not rows:
                return
            for received, batch_id, n, payload in rows:
                yield int(n), bytes(payload)
            after_ms, after_id = int(rows[-1][0]), rows[-1][1]


def _campaign_full(campaign, incoming: int) -> ServiceError:
    return ServiceError(
        409,
        "campaign_full",
        f"Campaign {campaign.id!r} accepts at most {campaign.max_reports} reports (max_reports); it holds "
        f"{campaign.n}" + (f" and this batch has {incoming}." if incoming else "."),
    )


def _contribution_limit(campaign_id: str, incoming: int) -> ServiceError:
    return ServiceError(
        403,
        "contribution_limit",
        f"This enrollment token of campaign {campaign_id!r} has fewer reports left than the batch's {incoming}; "
        "a device sends at most the reports its token was issued for.",
    )


def _check_open(campaign: Campaign) -> None:
    if campaign.state == "created":
        raise ServiceError(409, "campaign_not_open", f"Campaign {campaign.id!r} is not open yet; it accepts no reports.")
    if campaign.state == "closed":
        raise ServiceError(409, "campaign_closed", f"Campaign {campaign.id!r} is closed; it accepts no more reports.")


def _ack(campaign_id, batch_id, n_read, accepted, rejected, *, duplicate) -> dict:
    return {
        "campaign": campaign_id,
        "batch_id": batch_id,
        "n_read": int(n_read),
        "accepted": int(accepted),
        "rejected": {str(k): int(v) for k, v in rejected.items()},
        "duplicate": bool(duplicate),
    }

