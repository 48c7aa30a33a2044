"""The operations behind the routes: who may do what, and a batch's way from its body to the database.

:class:`Service` is synchronous (the endpoints run its methods in a thread
pool) and knows nothing of HTTP: it raises :class:`~._refusals.Refusal`.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import threading

from ..errors import InvalidParameterError
from ._campaigns import check_batch_id, token_sha256
from ._database import open_database
from ._ingest import decode_body, record_file_ids
from ._limits import DEFAULT_MAX_BODY_BYTES, BodyBudget, Limits, RateLimiter
from ._refusals import Conflict, Forbidden, InvalidRequest, Refusal, Unauthorized
from ._store import Store

__all__ = ["Service"]

LOG = logging.getLogger("dpdist.serve")

#: refusals of a whole batch counted under the campaign's ``refused_batches`` (besides every 400)
_COUNTED = frozenset({"malformed_batch", "batch_id_mismatch", "too_many_records", "too_many_rows", "campaign_full",
                      "contribution_limit", "batch_of_another_campaign"})


class Service:
    """The service of one database: its campaigns, limits and admission checks."""

    def __init__(self, db_url: str, *, admin_token: str, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, limits: Limits | None = None):
        if not isinstance(admin_token, str) or len(admin_token) < 16:
            raise InvalidParameterError(
                "The admin token (DPDIST_ADMIN_TOKEN or --admin-token) must be set, at least 16 characters long."
            )
        if not isinstance(max_body_bytes, int) or max_body_bytes < 1024:
            raise InvalidParameterError(f"The '--max-body-bytes' option must be an int >= 1024. Got {max_body_bytes!r}.")
        self._admin_sha256 = hashlib.sha256(admin_token.encode()).digest()
        self.max_body_bytes = max_body_bytes
        self.limits = (limits or Limits(max_inflight_bytes=max(Limits.max_inflight_bytes, max_body_bytes))).check(max_body_bytes)
        self.budget = BodyBudget(self.limits.max_inflight_bytes)
        self.rate = RateLimiter(self.limits.rate_limit, self.limits.rate_burst)
        self.store = Store(open_database(db_url), max_statistic_bytes=self.limits.max_statistic_bytes)
        self._retention: threading.Event | None = None

    # ------------------------------------------------------------------ life
    def start(self) -> None:
        """Start the background work (the retention task, if ``--retention-days`` is set)."""
        if self.limits.retention_days is not None and self._retention is None:
            self._retention = threading.Event()
            self.store.purge(int(self.limits.retention_days * 86_400_000))  # before the first request
            threading.Thread(target=self._purge_forever, args=(self._retention,), name="dpdist-retention", daemon=True).start()

    def close(self) -> None:
        """Stop the background work and close the database's connections."""
        if self._retention is not None:
            self._retention.set()
            self._retention = None
        self.store.db.close()

    def _purge_forever(self, stop: threading.Event, every_s: float = 3600.0) -> None:
        period_ms = int(self.limits.retention_days * 86_400_000)
        while not stop.wait(every_s):
            try:
                self.store.purge(period_ms)
            except Exception:  # a database outage: try again next time
                LOG.warning("retention: deleting expired data failed; retrying in %.0f s", every_s, exc_info=True)

    # ------------------------------------------------------------------ who
    def check_admin(self, token: str) -> None:
        """Refuse unless ``token`` is the admin token (constant-time compare)."""
        offered = hashlib.sha256(token.encode()).digest()
        if not hmac.compare_digest(offered, self._admin_sha256):
            raise Unauthorized("unauthorized", "This route needs the admin token (Authorization: Bearer ...).")

    def admit(self, campaign_id: str, batch_id: str | None, token: str) -> None:
        """The checks made before a batch's body is read (its campaign, token, state and limits)."""
        gate = self.store.gate(campaign_id, batch_id, token)
        if gate.enrollment:
            if gate.enrollment_left is None:
                raise Unauthorized("unauthorized", f"Campaign {campaign_id!r} needs an enrollment token (Authorization: Bearer ...).")
        elif gate.submit_token_sha256 is not None and not hmac.compare_digest(token_sha256(token), gate.submit_token_sha256):
            raise Unauthorized("unauthorized", f"Campaign {campaign_id!r} needs its submit token (Authorization: Bearer ...).")
        if gate.batch_recorded or batch_id is None:
            return  # a retry gets its acknowledgement (and a batch named by its records' file id is read first)
        if gate.state == "created":
            raise Conflict("campaign_not_open", f"Campaign {campaign_id!r} is not open yet; it accepts no reports.")
        if gate.state == "closed":
            raise Conflict("campaign_closed", f"Campaign {campaign_id!r} is closed; it accepts no more reports.")
        if gate.max_reports is not None and gate.n >= gate.max_reports:
            self.store.count_refused(campaign_id, "campaign_full")
            raise Conflict("campaign_full", f"Campaign {campaign_id!r} accepts at most {gate.max_reports} reports (max_reports); it is full.")
        if gate.enrollment and gate.enrollment_left <= 0:
            self.store.count_refused(campaign_id, "contribution_limit")
            raise Forbidden(
                "contribution_limit", f"This enrollment token of campaign {campaign_id!r} has sent all the reports it was issued for."
            )

    # ------------------------------------------------------------------ batches
    def submit(self, campaign_id: str, batch_id: str | None, body: bytes, content_type: str, token: str) -> dict:
        """Decode, validate and count one batch exactly once; its acknowledgement (after the commit)."""
        campaign = self.store.get(campaign_id)
        enrollment = token_sha256(token) if campaign.enrollment else None
        if not campaign.enrollment and not campaign.check_submit_token(token):
            raise Unauthorized("unauthorized", f"Campaign {campaign_id!r} needs its submit token (Authorization: Bearer ...).")
        if batch_id is None:
            batch_id = self._counted(campaign_id, batch_id_of_records, body, content_type, self.limits.max_records, count_400=False)
        check_batch_id(batch_id)
        kind = (content_type or "").split(";")[0].strip().lower()
        digest = hashlib.sha256(kind.encode() + b"\n" + body).hexdigest()
        if campaign.state != "open":  # a retry of an acknowledged batch still gets its acknowledgement
            return self.store.ingest(campaign_id, batch_id, digest, None, 0, None)
        protocol = campaign.protocol
        batch = self._counted(campaign_id, decode_body, protocol, body, content_type, batch_id, self.limits)
        contribution = protocol.aggregator().add_batch(batch)
        raw = None
        if campaign.keep_reports:
            import numpy as np

            raw = np.ascontiguousarray(batch.reports, dtype=protocol.report_format.dtype)
        return self._counted(
            campaign_id, self.store.ingest, campaign_id, batch_id, digest, contribution, batch.n_read, raw, enrollment_sha256=enrollment
        )

    def _counted(self, campaign_id: str, step, *args, count_400: bool = True, **kwargs):
        """Run ``step``; a refusal of the whole batch is counted under the campaign's ``refused_batches``."""
        try:
            return step(*args, **kwargs)
        except Refusal as refusal:
            if (count_400 and isinstance(refusal, InvalidRequest)) or refusal.code in _COUNTED:
                self.store.count_refused(campaign_id, refusal.code)
            raise

    def refuse_oversized(self, campaign_id: str) -> None:
        """Count a body over the size limit against its campaign (if there is one)."""
        try:
            self.store.count_refused(campaign_id, "too_large")
        except Refusal:
            pass  # unknown campaign: nothing to count against


def batch_id_of_records(body: bytes, content_type: str, max_records: int | None = None) -> str:
    """A binary batch without a batch id in the URL is identified by its records' file id."""
    binary = (content_type or "").startswith("application/octet-stream")
    ids = set(record_file_ids(body, max_records)) if binary else {None}
    if len(ids) != 1 or None in ids:
        raise InvalidRequest(
            "batch_id_required",
            "A batch needs a batch id: PUT it to /api/campaigns/{campaign}/batches/{batch_id}, or POST dpdist "
            "report records that all carry the same file id.",
        )
    return ids.pop()
