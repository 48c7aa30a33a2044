"""Campaigns, their aggregates and their batch ids, in one database (tables: :mod:`._schema`).

``campaigns``
    id (public name), config (JSON), state (created/open/closed), the hash of
    the optional submit token, whether raw reports are kept, the statistic's
    dtype, the optional cap ``max_reports`` and whether devices enroll.
``campaign_parts``, ``ingest_log``, ``arrivals``
    the aggregate (``n``, the statistic, rejected reports and refused batches by
    reason, the number of batches) as folded parts plus a log of group commits,
    and the accepted reports per minute: :mod:`._aggregates`, :mod:`._group`.
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
    SQLite binds them by the batch rows themselves (keyed by batch id first) and
    keeps here only those whose rows retention deleted (:mod:`._schema`, version 8).

Arrival times (``received_ms``, ``minute_ms``) are stored rounded down to the
minute (:data:`~._campaigns.ARRIVAL_RESOLUTION_MS`), the resolution of the
dashboard's history: no finer timing of a device's report is kept.

Batches are counted by group commits (:meth:`Store.commit`, :mod:`._group`); the
caller acknowledges a batch only after its group's commit returned.  Every
refusal is a :class:`~dpdist._guard._refusals.Refusal` (a domain error: the HTTP layer,
:mod:`._http`, gives it its status).
"""

from __future__ import annotations

import builtins  # the Store.list method hides the list type inside the class
import json
import secrets
from typing import Any, Iterator

import numpy as np

from .._io._identity import new_file_id
from ._aggregates import PARTS, fold, history, read_aggregate, read_totals, unfolded
from ._campaigns import (
    BOUND_BATCH_ID,
    Campaign,
    CampaignRow,
    Creation,
    check_campaign_id,
    check_config,
    check_max_reports,
    now_ms,
    token_sha256,
)
from ._database import Database, DatabaseUnavailableError
from ._group import Arrival, commit_group
from ._limits import DEFAULT_MAX_STATISTIC_BYTES
from .._guard._refusals import Conflict, InvalidRequest, NotFound, Refusal
from ._schema import create_schema

__all__ = ["Store", "MAX_TOKENS_PER_REQUEST"]

#: most enrollment tokens one request issues
MAX_TOKENS_PER_REQUEST = 10_000
#: times a group whose transaction lost a deadlock (PostgreSQL) runs again
_CONFLICT_RETRIES = 5
_COLUMNS = (
    "id, config, state, submit_token_sha256, keep_reports, export_file_id, created_ms, opened_ms, closed_ms,"
    " statistic_dtype, max_reports, enrollment"
)


def _row(values) -> CampaignRow:
    (cid, config, state, token, keep, file_id, created, opened, closed, dtype, max_reports, enrollment) = values
    return CampaignRow(
        id=cid, config=json.loads(config), state=state, submit_token_sha256=token, keep_reports=bool(keep),
        export_file_id=file_id, created_ms=int(created), opened_ms=None if opened is None else int(opened),
        closed_ms=None if closed is None else int(closed), statistic_dtype=dtype,
        max_reports=None if max_reports is None else int(max_reports), enrollment=bool(enrollment),
    )


class Store:
    """Campaigns and their aggregates in a :class:`~._database.Database`.

    ``writer``: this process's id in the ingest log (default: a fresh random one); its log rows are folded into
    part ``writer % PARTS`` of each campaign.
    """

    def __init__(self, database: Database, *, max_statistic_bytes: int = DEFAULT_MAX_STATISTIC_BYTES, writer: int | None = None):
        self.db = database
        self.max_statistic_bytes = max_statistic_bytes
        self.writer = secrets.randbits(62) if writer is None else int(writer)
        #: the ids of the campaigns this process read from the database (public ids, the ones a ``full`` access line
        #: names: :mod:`._access`); a campaign deleted since stays in it
        self.campaign_ids: set[str] = set()
        create_schema(database)

    # ------------------------------------------------------------------ reading
    def row(self, campaign_id: str, *, lock: bool = False) -> CampaignRow:
        """A campaign's settings (404 if unknown); ``lock``: in a transaction, hold off ingest and other changes."""
        check_campaign_id(campaign_id)
        if lock:
            self.db.lock_name(campaign_id, shared=False)
        rows = self.db.execute(f"SELECT {_COLUMNS} FROM campaigns WHERE id = ?" + (self.db.for_update if lock else ""), (campaign_id,))
        if not rows:
            raise NotFound("unknown_campaign", f"There is no campaign {campaign_id!r}.")
        self.campaign_ids.add(campaign_id)
        return _row(rows[0])

    def creation(self, campaign_id: str) -> Creation | None:
        """The campaign's creation and token settings, read without its config (None if unknown): one indexed read whose
        cost does not grow with the config's size (:class:`~._campaigns.Creation`), what admission checks a refused
        token against."""
        check_campaign_id(campaign_id)
        rows = self.db.execute(
            "SELECT export_file_id, state, submit_token_sha256, enrollment,"
            " EXISTS (SELECT 1 FROM relayed_campaigns r WHERE r.campaign_id = c.id AND r.export_file_id = c.export_file_id),"
            " EXISTS (SELECT 1 FROM round_campaigns r WHERE r.campaign_id = c.id AND r.export_file_id = c.export_file_id)"
            " FROM campaigns c WHERE c.id = ?", (campaign_id,))
        if not rows:
            return None
        self.campaign_ids.add(campaign_id)
        file_id, state, token, enrollment, relayed, rounds = rows[0]
        return Creation(campaign_id, file_id, state, token, bool(enrollment), bool(relayed), bool(rounds))

    def get(self, campaign_id: str, *, statistic: bool = False) -> Campaign:
        """A campaign with its aggregate's counts; ``statistic``: and its statistic (every part and log row merged)."""
        row = self.row(campaign_id)
        if statistic:
            aggregate, refused, batches = read_aggregate(self.db, row.id, row.protocol, row.statistic_dtype)
            return Campaign(**vars(row), n=aggregate.n, rejected=aggregate.rejected, refused=refused, batches=batches,
                            statistic=aggregate.statistic)
        return self._with_counts([row])[0]

    def list(self) -> builtins.list[Campaign]:
        rows = [_row(values) for values in self.db.execute(f"SELECT {_COLUMNS} FROM campaigns ORDER BY created_ms, id")]
        self.campaign_ids.update(row.id for row in rows)
        return self._with_counts(rows)

    def _with_counts(self, rows: builtins.list[CampaignRow]) -> builtins.list[Campaign]:
        """Campaigns with their counts (the parts' and log's JSON counts, no statistic)."""
        counts: dict[str, builtins.list[Any]] = {row.id: [0, {}, {}, 0] for row in rows}
        for start in range(0, len(rows), 400):
            ids = [row.id for row in rows[start : start + 400]]
            marks = ", ".join("?" * len(ids))
            for campaign_id, n, rejected, refused, batches in self.db.execute(
                f"SELECT campaign_id, n, rejected, refused, batches FROM campaign_parts WHERE campaign_id IN ({marks})"
                f" UNION ALL SELECT campaign_id, n, rejected, refused, batches FROM ingest_log WHERE campaign_id IN ({marks})",
                (*ids, *ids),
            ):
                entry = counts[campaign_id]
                entry[0] += int(n)
                entry[3] += int(batches)
                for index, text in ((1, rejected), (2, refused)):
                    for reason, number in json.loads(text).items():
                        entry[index][reason] = entry[index].get(reason, 0) + int(number)
        return [Campaign(**vars(row), n=c[0], rejected=c[1], refused=c[2], batches=c[3]) for row in rows for c in [counts[row.id]]]

    def totals(self, campaign_id: str):
        """The counts of a campaign's aggregate, cheaply (:class:`~._aggregates.Totals`)."""
        return read_totals(self.db, [campaign_id])[campaign_id]

    def history(self, campaign_id: str, points: int = 200) -> builtins.list[dict]:
        """Cumulative accepted reports over time, in at most ``points`` (+1) time buckets."""
        return history(self.db, self.row(campaign_id).id, points)

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

    def enrollment_left(self, campaign_id: str, token: str | None) -> int | None:
        """Reports the enrollment token ``token`` may still send to the campaign (None: not one of its tokens)."""
        found = self.db.execute(
            "SELECT reports_left FROM enrollments WHERE token_sha256 = ? AND campaign_id = ?", (token_sha256(token), campaign_id)
        )
        return int(found[0][0]) if found else None

    def recorded(self, campaign_id: str, batch_id: str) -> bool:
        return bool(self.db.execute("SELECT 1 FROM batches WHERE campaign_id = ? AND batch_id = ?", (campaign_id, batch_id)))

    # ------------------------------------------------------------------ campaigns
    def create(
        self,
        campaign_id: str,
        config: dict,
        *,
        submit_token: str | None = None,
        keep_reports: bool = False,
        max_reports: int | None = None,
        enrollment: bool = False,
        devices_read: int | None = None,
    ) -> Campaign:
        """A new campaign in state ``created``; 409 if the id is taken (safe under concurrent creates).

        ``max_reports`` caps the reports the campaign accepts (a batch that would
        pass it is refused whole, 409 ``campaign_full``); ``enrollment`` makes every
        submission need an enrollment token (:meth:`enroll`) instead of a shared
        submit token; ``devices_read``: the most bytes of its public config answer
        devices read (None: ``DEVICE_CONFIG_BYTES``; through a relay, its pages').
        """
        check_campaign_id(campaign_id)
        protocol = check_config(config, self.max_statistic_bytes, devices_read)
        if submit_token is not None and (not isinstance(submit_token, str) or len(submit_token) < 16):
            raise InvalidRequest("invalid_submit_token", "A submit token must be a string of at least 16 characters.")
        max_reports = check_max_reports(max_reports)
        if not isinstance(enrollment, bool):
            raise InvalidRequest("invalid_enrollment", f"'enrollment' must be true or false. Got {enrollment!r}.")
        if enrollment and submit_token is not None:
            raise InvalidRequest(
                "invalid_enrollment", "A campaign takes either a shared submit token or per-device enrollment tokens, not both."
            )
        token_hash = None if submit_token is None else token_sha256(submit_token)
        with self.db.transaction():
            inserted = self.db.rowcount(
                f"INSERT INTO campaigns ({_COLUMNS}) VALUES (?, ?, 'created', ?, ?, ?, ?, NULL, NULL, ?, ?, ?)"
                " ON CONFLICT (id) DO NOTHING",
                (campaign_id, json.dumps(protocol.config(), sort_keys=True), token_hash, int(bool(keep_reports)), new_file_id(),
                 now_ms(), _dtype(protocol), max_reports, int(enrollment)),
            )
        if inserted != 1:
            raise Conflict("campaign_exists", f"A campaign {campaign_id!r} already exists; choose another id.")
        return self.get(campaign_id)

    def set_config(self, campaign_id: str, config: dict, **changes) -> Campaign:
        """Replace the config of a campaign that is not open yet (state ``created``); also ``max_reports=`` if given."""
        protocol = check_config(config, self.max_statistic_bytes)
        max_reports = check_max_reports(changes["max_reports"]) if "max_reports" in changes else None
        with self.db.transaction():
            campaign = self.row(campaign_id, lock=True)
            if campaign.state != "created":
                raise Conflict(
                    "config_frozen", f"Campaign {campaign_id!r} is {campaign.state}: its config cannot change (create a new campaign)."
                )
            self.db.execute(
                "UPDATE campaigns SET config = ?, statistic_dtype = ?, max_reports = ? WHERE id = ?",
                (json.dumps(protocol.config(), sort_keys=True), _dtype(protocol),
                 max_reports if "max_reports" in changes else campaign.max_reports, campaign_id),
            )
        return self.get(campaign_id)

    def transition(self, campaign_id: str, target: str) -> Campaign:
        """``created -> open -> closed``; opening an open campaign (or closing a closed one) is a no-op.

        Closing waits for the group commits counting batches into the campaign (their shared lock): once it
        returned, no batch is counted into the campaign any more.
        """
        allowed = {"open": ("created", "open"), "closed": ("open", "closed")}[target]
        with self.db.transaction():
            campaign = self.row(campaign_id, lock=True)
            if campaign.state not in allowed:
                raise Conflict("wrong_state", f"Campaign {campaign_id!r} is {campaign.state}; it cannot become {target}.")
            if campaign.state != target:
                column = "opened_ms" if target == "open" else "closed_ms"
                self.db.execute(f"UPDATE campaigns SET state = ?, {column} = ? WHERE id = ?", (target, now_ms(), campaign_id))
        return self.get(campaign_id)

    def enroll(self, campaign_id: str, count, reports) -> builtins.list[str]:
        """Issue ``count`` enrollment tokens, each good for ``reports`` reports to this campaign; store their SHA-256.

        The tokens are returned once (the server keeps only their hashes).
        """
        for name, value, high in (("count", count, MAX_TOKENS_PER_REQUEST), ("reports", reports, 2**53)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
                raise InvalidRequest("invalid_enrollment", f"'{name}' must be an integer in [1, {high}]. Got {value!r}.")
        tokens = [secrets.token_urlsafe(24) for _ in range(count)]
        with self.db.transaction():
            campaign = self.row(campaign_id, lock=True)
            if not campaign.enrollment:
                raise Conflict(
                    "enrollment_off", f"Campaign {campaign_id!r} was not created with enrollment; it takes no enrollment tokens."
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
        """Delete a campaign with everything stored for it (aggregate, history, batch records, kept reports, tokens)."""
        with self.db.transaction():
            self.row(campaign_id, lock=True)
            reports = self.db.rowcount("DELETE FROM reports WHERE campaign_id = ?", (campaign_id,))
            batches = self.db.rowcount("DELETE FROM batches WHERE campaign_id = ?", (campaign_id,))
            for table in ("ingest_log", "campaign_parts", "arrivals", "enrollments", "bound_batch_ids", "refused_batch_ids"):
                self.db.execute(f"DELETE FROM {table} WHERE campaign_id = ?", (campaign_id,))
            self.db.execute("DELETE FROM campaigns WHERE id = ?", (campaign_id,))
        return {"campaign": campaign_id, "deleted": True, "batches": int(batches), "kept_report_batches": int(reports)}

    def purge(self, retention_ms: int, at_ms: int | None = None) -> dict:
        """Apply a retention period: kept raw reports older than it, and the per-batch records, history and
        enrollment tokens of campaigns closed for longer than it, are deleted (aggregates and estimates stay)."""
        cutoff = (now_ms() if at_ms is None else at_ms) - int(retention_ms)
        closed = [row[0] for row in self.db.execute("SELECT id FROM campaigns WHERE state = 'closed' AND closed_ms < ?", (cutoff,))]
        for campaign_id in closed:
            self.fold(campaign_id, rows_of="all")  # the log's minutes of arrival go too
        with self.db.transaction():
            reports = self.db.rowcount("DELETE FROM reports WHERE received_ms < ?", (cutoff,))
            batches = 0
            for campaign_id in closed:
                reports += self.db.rowcount("DELETE FROM reports WHERE campaign_id = ?", (campaign_id,))
                self._keep_bound(campaign_id)
                batches += self.db.rowcount("DELETE FROM batches WHERE campaign_id = ?", (campaign_id,))
                self.db.execute("DELETE FROM arrivals WHERE campaign_id = ?", (campaign_id,))
                self.db.execute("DELETE FROM enrollments WHERE campaign_id = ?", (campaign_id,))
                self.db.execute("DELETE FROM refused_batch_ids WHERE campaign_id = ?", (campaign_id,))
        return {"kept_report_batches": int(reports), "batches": int(batches), "closed_campaigns": len(closed)}

    def _keep_bound(self, campaign_id: str) -> None:
        """SQLite, in a transaction: the batch ids of :data:`~._campaigns.BOUND_BATCH_ID`'s form that the campaign's
        batch rows bind (schema version 8) stay bound in ``bound_batch_ids`` once the rows are deleted (PostgreSQL
        binds them there as it counts them)."""
        if self.db.dialect != "sqlite":
            return
        ids = [row[0] for row in self.db.execute("SELECT batch_id FROM batches WHERE campaign_id = ?", (campaign_id,))
               if BOUND_BATCH_ID.fullmatch(row[0])]
        for start in range(0, len(ids), 400):
            chunk = ids[start : start + 400]
            self.db.execute(f"INSERT INTO bound_batch_ids (batch_id, campaign_id) VALUES {', '.join(['(?, ?)'] * len(chunk))}"
                            " ON CONFLICT (batch_id) DO NOTHING", tuple(value for batch_id in chunk for value in (batch_id, campaign_id)))

    # ------------------------------------------------------------------ ingest
    def commit(self, items: builtins.list) -> builtins.list:
        """Commit a group of :class:`~._group.Arrival` and :class:`~._group.Refused` items in one transaction (run again
        if it lost a deadlock); per item its acknowledgement, None or its :class:`Refusal`."""
        for attempt in range(_CONFLICT_RETRIES + 1):
            try:
                return commit_group(self.db, self.writer, items)
            except DatabaseUnavailableError as error:
                if error.reason != "conflict" or attempt == _CONFLICT_RETRIES:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def ingest(self, campaign_id: str, batch_id: str, body_sha256: str, batch, *, raw=None,
               enrollment_sha256: str | None = None) -> dict:
        """Count one validated batch (a :class:`~dpdist.local.ReportBatch`) exactly once, as a group of one; its
        acknowledgement, or its :class:`Refusal` raised."""
        row = self.row(campaign_id)
        raw_bytes = None if raw is None else bytes(memoryview(raw))
        accepted = row.protocol.report_format.count(batch.reports)
        (outcome,) = self.commit([Arrival(campaign_id, batch_id, body_sha256, batch, accepted, batch.n_read, raw_bytes,
                                          enrollment_sha256, campaign_file_id=row.export_file_id)])
        if isinstance(outcome, Refusal):
            raise outcome
        return outcome

    def fold(self, campaign_id: str, *, rows_of=None) -> int:
        """Fold log rows of a campaign into this process's part (``rows_of``: default this writer's; ``"orphans"``,
        ``"all"``); how many were folded."""
        row = self.row(campaign_id)
        return fold(self.db, campaign_id, row.protocol, row.statistic_dtype, rows_of=self.writer if rows_of is None else rows_of,
                    part=self.writer % PARTS)

    def unfolded(self, rows_of=None) -> builtins.list[str]:
        """The campaigns with log rows of this writer (or ``"orphans"``, ``"all"``)."""
        return unfolded(self.db, self.writer if rows_of is None else rows_of)


def _dtype(protocol) -> str:
    return np.dtype(protocol.statistic_dtype).newbyteorder("<").str
