"""Campaigns, their aggregates and their batch ids, in one database (tables: :mod:`._schema`).

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
(:data:`~._campaigns.ARRIVAL_RESOLUTION_MS`), the resolution of the dashboard's
history: no finer timing of a device's report is kept.

Ingest (:meth:`Store.ingest`) adds a batch's contribution to the aggregate with
:meth:`~dpdist.local.Aggregator.merge` and inserts its batch row (and raw
reports) in ONE transaction, so after a crash the aggregate equals the sum of
the batches recorded, and a batch is either counted and recorded or neither.
The caller acknowledges only after the commit returned.

Every refusal is a :class:`~._refusals.Refusal` (a domain error: the HTTP
layer, :mod:`._http`, gives it its status).
"""

from __future__ import annotations

import json
import secrets
from typing import Iterator

import numpy as np

from ..errors import IncompatibleStateError
from ._campaigns import (
    BATCH_ID,
    BOUND_BATCH_ID,
    Campaign,
    Gate,
    arrival_ms,
    check_campaign_id,
    check_config,
    check_max_reports,
    iso_time,
    now_ms,
    token_sha256,
)
from ._database import Database
from ._limits import DEFAULT_MAX_STATISTIC_BYTES
from ._refusals import Conflict, Forbidden, InvalidRequest, NotFound, Refusal
from ._schema import create_schema

__all__ = ["Store", "MAX_TOKENS_PER_REQUEST"]

#: most enrollment tokens one request issues
MAX_TOKENS_PER_REQUEST = 10_000


def _statistic_bytes(statistic: np.ndarray) -> bytes:
    return np.ascontiguousarray(statistic, dtype=statistic.dtype.newbyteorder("<")).tobytes()


class Store:
    """Campaigns and their aggregates in a :class:`~._database.Database`."""

    def __init__(self, database: Database, *, max_statistic_bytes: int = DEFAULT_MAX_STATISTIC_BYTES):
        self.db = database
        self.max_statistic_bytes = max_statistic_bytes
        create_schema(database)

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
            raise NotFound("unknown_campaign", f"There is no campaign {campaign_id!r}.")
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
            raise InvalidRequest("invalid_submit_token", "A submit token must be a string of at least 16 characters.")
        max_reports = check_max_reports(max_reports)
        if not isinstance(enrollment, bool):
            raise InvalidRequest("invalid_enrollment", f"'enrollment' must be true or false. Got {enrollment!r}.")
        if enrollment and submit_token is not None:
            raise InvalidRequest(
                "invalid_enrollment",
                "A campaign takes either a shared submit token or per-device enrollment tokens, not both.",
            )
        statistic = np.zeros(protocol.statistic_size, dtype=protocol.statistic_dtype)
        token_hash = None if submit_token is None else token_sha256(submit_token)
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
                    now_ms(),
                    statistic.dtype.newbyteorder("<").str,
                    _statistic_bytes(statistic),
                    max_reports,
                    int(enrollment),
                ),
            )
        if inserted != 1:
            raise Conflict("campaign_exists", f"A campaign {campaign_id!r} already exists; choose another id.")
        return self.get(campaign_id)

    def set_config(self, campaign_id: str, config: dict, **changes) -> Campaign:
        """Replace the config of a campaign that is not open yet (state ``created``); also ``max_reports=`` if given."""
        protocol = check_config(config, self.max_statistic_bytes)
        max_reports = check_max_reports(changes["max_reports"]) if "max_reports" in changes else None
        statistic = np.zeros(protocol.statistic_size, dtype=protocol.statistic_dtype)
        with self.db.transaction():
            campaign = self.get(campaign_id, lock=True)
            if campaign.state != "created":
                raise Conflict("config_frozen", f"Campaign {campaign_id!r} is {campaign.state}: its config cannot change (create a new campaign)."
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
                raise Conflict("wrong_state", f"Campaign {campaign_id!r} is {campaign.state}; it cannot become {target}.")
            if campaign.state != target:
                column = "opened_ms" if target == "open" else "closed_ms"
                self.db.execute(f"UPDATE campaigns SET state = ?, {column} = ? WHERE id = ?", (target, now_ms(), campaign_id))
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
                    raise Conflict(
                        "batch_id_reused",
                        f"Batch {batch_id!r} of campaign {campaign_id!r} was already received with different content; "
                        "a new batch needs a new batch id.",
                    )
                return _ack(campaign_id, batch_id, int(p_read), int(p_accepted), json.loads(p_rejected), duplicate=True)
            _check_open(campaign)
            if contribution is None:  # the caller saw the campaign before it opened: let the client retry
                raise Conflict("campaign_not_open", f"Campaign {campaign_id!r} was not open; retry the batch.")
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
            self._bind(campaign_id, batch_id)
            # the stored aggregate and the batch both pass the state validator: a row the statistic
            # alone contradicts (e.g. an n its counts cannot sum to) is refused, never extended
            merged = campaign.aggregator().merge(contribution)
            statistic, rejected = merged.statistic, merged.rejected
            now = arrival_ms()
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

    def _bind(self, campaign_id: str, batch_id: str) -> None:
        """Bind a batch id of :data:`BOUND_BATCH_ID`'s form to ``campaign_id``; refused if another campaign counted it."""
        if not BOUND_BATCH_ID.fullmatch(batch_id):
            return
        bound = self.db.rowcount(
            "INSERT INTO bound_batch_ids (batch_id, campaign_id) VALUES (?, ?) ON CONFLICT (batch_id) DO NOTHING",
            (batch_id, campaign_id),
        )
        if bound != 1:
            owner = self.db.execute("SELECT campaign_id FROM bound_batch_ids WHERE batch_id = ?", (batch_id,))
            if owner and owner[0][0] != campaign_id:
                raise Conflict(
                    "batch_of_another_campaign",
                    f"Batch {batch_id!r} was already counted by another campaign; a batch (a report file, or a "
                    "client's batch under its random id) is counted by one campaign only.",
                )

    # ------------------------------------------------------------------ before the body
    def gate(self, campaign_id: str, batch_id: str | None, token: str | None) -> Gate:
        """The checks made before a batch's body is read: one light query, no statistic (404 if unknown)."""
        check_campaign_id(campaign_id)
        rows = self.db.execute(
            "SELECT id, state, submit_token_sha256, enrollment, max_reports, n FROM campaigns WHERE id = ?", (campaign_id,)
        )
        if not rows:
            raise NotFound("unknown_campaign", f"There is no campaign {campaign_id!r}.")
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
    def enroll(self, campaign_id: str, count, reports) -> list[str]:
        """Issue ``count`` enrollment tokens, each good for ``reports`` reports to this campaign; store their SHA-256.

        The tokens are returned once (the server keeps only their hashes).
        """
        for name, value, high in (("count", count, MAX_TOKENS_PER_REQUEST), ("reports", reports, 2**53)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
                raise InvalidRequest("invalid_enrollment", f"'{name}' must be an integer in [1, {high}]. Got {value!r}.")
        tokens = [secrets.token_urlsafe(24) for _ in range(count)]
        with self.db.transaction():
            campaign = self.get(campaign_id, lock=True)
            if not campaign.enrollment:
                raise Conflict("enrollment_off", f"Campaign {campaign_id!r} was not created with enrollment; it takes no enrollment tokens."
                )
            if campaign.state == "closed":
                raise Conflict("campaign_closed", f"Campaign {campaign_id!r} is closed; it accepts no more reports.")
            now = now_ms()
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

    def purge(self, retention_ms: int, at_ms: int | None = None) -> dict:
        """Apply a retention period: kept raw reports older than it, and the per-batch records and enrollment
        tokens of campaigns closed for longer than it, are deleted (aggregates and estimates stay)."""
        cutoff = (now_ms() if at_ms is None else at_ms) - int(retention_ms)
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
    def history(self, campaign_id: str, points: int = 200) -> list[dict]:
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
            out.append({"time": iso_time(int(first) + (int(index) + 1) * bucket - 1), "n": total, "batches": batches})
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


def _campaign_full(campaign, incoming: int) -> Refusal:
    return Conflict(
        "campaign_full",
        f"Campaign {campaign.id!r} accepts at most {campaign.max_reports} reports (max_reports); it holds "
        f"{campaign.n}" + (f" and this batch has {incoming}." if incoming else "."),
    )


def _contribution_limit(campaign_id: str, incoming: int) -> Refusal:
    return Forbidden(
        "contribution_limit",
        f"This enrollment token of campaign {campaign_id!r} has fewer reports left than the batch's {incoming}; "
        "a device sends at most the reports its token was issued for.",
    )


def _check_open(campaign: Campaign) -> None:
    if campaign.state == "created":
        raise Conflict("campaign_not_open", f"Campaign {campaign.id!r} is not open yet; it accepts no reports.")
    if campaign.state == "closed":
        raise Conflict("campaign_closed", f"Campaign {campaign.id!r} is closed; it accepts no more reports.")


def _ack(campaign_id, batch_id, n_read, accepted, rejected, *, duplicate) -> dict:
    return {
        "campaign": campaign_id,
        "batch_id": batch_id,
        "n_read": int(n_read),
        "accepted": int(accepted),
        "rejected": {str(k): int(v) for k, v in rejected.items()},
        "duplicate": bool(duplicate),
    }

