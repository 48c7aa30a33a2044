"""The operations behind the routes: who may do what, and a batch's way from its body to a group commit.

:class:`Service` knows nothing of HTTP: it raises :class:`~dpdist._guard._refusals.Refusal`.
A batch's way (docs/explanation/service-at-scale.md, "Population scale"): a bound on the batches being served (beyond it 503
``busy`` with ``Retry-After`` at once, before the body is read), admission from a
short-lived cache of open campaigns (no database read for a device of an open
campaign), then the group commit (:mod:`._committer`) whose answer comes only
after the batch is durable; a small body is decoded by the committer with its
group (:mod:`._group_bodies`), a large one in a worker thread before.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from starlette.concurrency import run_in_threadpool

from .._io._single_writer import COSTLY_SHARE
from .._validation import InstanceOf, Integer, Optional, Token, validate_params
from ._address_share import AddressShare
from ._backpressure import Backpressure
from ._campaigns import BATCH_ID, CampaignRow, Creation, check_batch_id, token_sha256
from ._committer import GroupCommitter
from ._database import open_database
from ._estimate_cache import EstimateCache
from ._group import RECORDED, Arrival, Refused
from ._group_bodies import COUNTED, PendingBody, aggregate_work
from ._ingest import DECODED_KINDS, decode_body, media_type, record_file_ids
from ._limits import DEFAULT_MAX_BODY_BYTES, BodyBudget, Limits, RateLimiter
from .._guard._refusals import Busy, Conflict, Forbidden, InvalidRequest, NotFound, Refusal, Unauthorized
from ._relayed import RelayedCampaigns
from ._rounds import ROUND_NAME, RoundCampaigns
from ._shared_reads import SharedReads
from ._store import Store

if TYPE_CHECKING:
    from ..local import ReportBatch

__all__ = ["Service"]

LOG = logging.getLogger("dpdist.serve")

#: bodies up to this size are decoded by the committer with their group (larger ones in a worker thread first)
INLINE_BODY_BYTES = 64 << 10
#: seconds an open campaign's settings are reused by admission (the group commit checks them again)
CACHE_S = 2.0
#: a lagging event loop refuses new batches only while it serves at least this many (a few requests on a busy
#: machine are late because the machine is busy, and refusing them would not help)
MIN_SHED = 16


class Service:
    """The service of one database: its campaigns, limits, admission and group commits."""

    @validate_params({  # once per server (dpdist serve states the same rules for its options)
        "admin_token": Token(16, "a token of at least 16 printable ASCII characters (the admin token)", spaces=True),
        "previous_admin_token": Optional(Token(16, "a token of at least 16 printable ASCII characters (the admin token "
                                               "being replaced)", spaces=True)),
        "max_body_bytes": Integer(low=1024),
        "limits": Optional(InstanceOf(Limits, "a dpdist._guard.Limits")),
    }, owner="Service")
    def __init__(self, db_url: str, *, admin_token: str, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, limits: Limits | None = None,
                 relay_token: str | None = None, previous_relay_token: str | None = None,
                 previous_admin_token: str | None = None):
        # the admin token, and while it rotates the one it replaces
        self._admin_sha256s = tuple(hashlib.sha256(token.encode()).digest() for token in (admin_token, previous_admin_token)
                                    if token)
        self.max_body_bytes = max_body_bytes
        self.limits = (limits or Limits(max_inflight_bytes=max(Limits.max_inflight_bytes, max_body_bytes))).check(max_body_bytes)
        self.budget: BodyBudget = self.limits.budget(max_body_bytes)  # the pool, a share per address, the anonymous half
        self.rate = RateLimiter(self.limits.rate_limit, self.limits.rate_burst)
        self.address_share = AddressShare(self.limits.rate_limit, self.limits.rate_burst)  # warns once
        self.store = Store(open_database(db_url), max_statistic_bytes=self.limits.max_statistic_bytes)
        self.committer = GroupCommitter(self.store, delay_s=self.limits.commit_delay, max_group_cost=self.limits.max_batch_work)
        self.queued = 0  # batches between their admission and their answer (event loop only)
        self.pressure = Backpressure()
        self._slot = _Slot(self)  # what slot() gives: it holds nothing of a batch (one for all of them)
        self._open: dict[str, tuple[float, CampaignRow]] = {}
        self._counted: dict[str, tuple[float, int]] = {}  # capped open campaigns: (when read, reports counted) (admission)
        self._creations = SharedReads()  # refused tokens' checks against the database (admission)
        self._retention: threading.Event | None = None
        self.estimates = EstimateCache(self.store)
        self.relayed = RelayedCampaigns(self.store, relay_token, previous_relay_token)  # campaigns collected through a relay
        self.rounds = RoundCampaigns(self.store, changed=self.changed)  # campaigns that run in rounds

    # ------------------------------------------------------------------ life
    def start(self) -> None:
        """Start the background work: group commits, the retention task (if ``--retention-days`` is set)."""
        self.estimates.reopen()  # (a lifespan run again: closed by the last one's end)
        self.committer.start()
        if self.limits.retention_days is not None and self._retention is None:
            self._retention = threading.Event()
            self.store.purge(int(self.limits.retention_days * 86_400_000))  # before the first request
            threading.Thread(target=self._purge_forever, args=(self._retention,), name="dpdist-retention", daemon=True).start()

    def close(self) -> None:
        """Commit what waits, fold the log, stop the background work and close the database's connections."""
        if self._retention is not None:
            self._retention.set()
            self._retention = None
        self.committer.stop()
        self.estimates.close()
        self.store.db.close()

    def _purge_forever(self, stop: threading.Event, every_s: float = 3600.0) -> None:
        assert self.limits.retention_days is not None, "retention is on"
        period_ms = int(self.limits.retention_days * 86_400_000)
        while not stop.wait(every_s):
            try:
                self.store.purge(period_ms)
            except Exception:  # a database outage: try again next time
                LOG.warning("retention: deleting expired data failed; retrying in %.0f s", every_s, exc_info=True)

    # ------------------------------------------------------------------ who
    def check_admin(self, token: str) -> None:
        """Refuse unless ``token`` is the admin token, or the previous one while it rotates (constant-time compares)."""
        offered = hashlib.sha256(token.encode()).digest()
        if not any([hmac.compare_digest(offered, known) for known in self._admin_sha256s]):  # each compared
            raise Unauthorized("unauthorized", "This route needs the admin token (Authorization: Bearer ...).")

    def changed(self, campaign_id: str) -> None:
        """An admin changed the campaign: admission reads it again."""
        self._open.pop(campaign_id, None)
        self._counted.pop(campaign_id, None)

    async def settings(self, campaign_id: str) -> CampaignRow:
        """The campaign's settings: from the cache while it is open, else from the database (404 if unknown)."""
        return (await self._settings(campaign_id))[0]

    def _cached(self, campaign_id: str) -> CampaignRow | None:
        """The open campaign's settings cached less than :data:`CACHE_S` ago, else None."""
        cached = self._open.get(campaign_id)
        return cached[1] if cached is not None and time.monotonic() - cached[0] < CACHE_S else None

    async def _settings(self, campaign_id: str) -> tuple[CampaignRow, bool]:
        """:meth:`settings`, and whether they came from the cache."""
        cached = self._cached(campaign_id)
        if cached is not None:
            return cached, True
        row = await run_in_threadpool(self.store.row, campaign_id)
        if row.state == "open":
            if len(self._open) > 4096:
                self._open.clear()
            self._open[campaign_id] = (time.monotonic(), row)
        else:
            self._open.pop(campaign_id, None)
        return row, False

    async def creation(self, campaign_id: str) -> Creation:
        """The campaign's creation as the database has it now (404 if unknown), read without its config; concurrent
        requests share one read (:mod:`._shared_reads`: one in flight per campaign, each answer read after it was
        asked)."""
        creation = await self._creations.get(campaign_id, functools.partial(self.store.creation, campaign_id))
        if creation is None:
            raise NotFound("unknown_campaign", f"There is no campaign {campaign_id!r}.")
        return creation

    # ------------------------------------------------------------------ admission
    def slot(self) -> _Slot:
        """A place among the batches being served (from admission to answer), or 503 ``busy`` with ``Retry-After`` at
        once, before the body is read, when the process is past its capacity (:mod:`._backpressure`): the work
        waiting is bounded (``--max-queue``) and its answers stay fast.  ``with service.slot(): ...`` (a class, not a
        generator's context manager: every batch request takes one).  The place is taken as it is given: the ``with``
        statement follows at once."""
        self.take_slot()
        return self._slot

    def take_slot(self) -> None:
        """:meth:`slot` without a context manager (a flat request path, whose ``finally`` calls :meth:`free_slot`):
        503 ``busy`` past the capacity, else one more batch served."""
        self.pressure.watch()
        if self.queued >= self.limits.max_queue or (self.queued >= MIN_SHED and self.pressure.overloaded):
            why = (f"is serving {self.queued} batches, its limit (--max-queue)" if self.queued >= self.limits.max_queue
                   else "cannot answer more batches in time")
            raise Busy("busy", f"The server {why}; retry the same batch later.", retry_after=self.pressure.retry_after(),
                       close=True)
        self.queued += 1

    def free_slot(self, served: bool) -> None:
        """The end of a place :meth:`take_slot` took (``served``: the batch was acknowledged, as a ``with`` block of
        :meth:`slot` ending without an exception)."""
        try:
            if served:
                self.pressure.acknowledged()
        finally:
            self.queued -= 1

    def admitted(self, campaign_id: str, token: str) -> CampaignRow | None:
        """What :meth:`admit` answers when it needs nothing awaited, else None (then :meth:`admit`): the usual batch
        (its open campaign's settings cached, no enrollment, no cap, and ``token`` opens it)."""
        cached = self._open.get(campaign_id)  # as _cached, one call less (every batch asks)
        if cached is None or time.monotonic() - cached[0] >= CACHE_S:
            return None
        row = cached[1]
        if row.state != "open" or row.enrollment or row.max_reports is not None:
            return None
        return row if row.submit_token_sha256 is None or row.check_submit_token(token) else None

    async def admit(self, campaign_id: str, batch_id: str | None, token: str, *, again: bool = True) -> CampaignRow:
        """The checks made before a batch's body is read: campaign, token, state and limits.

        Another process may have deleted the campaign and created it again under its id since its settings were cached:
        a token that does not open the cached settings (a submit token, or an enrollment token the campaign does not
        know) is checked against the campaign's creation as the database has it (:meth:`creation`: no config read,
        shared by concurrent requests), and the cached settings are replaced only when the campaign was created again;
        a refusal as full (counted by a group commit, which reads the campaign) of a campaign created again since is
        made again against the new campaign (``again``: once).  A token refused by a relayed or rounds campaign is
        answered 409 ``relayed_campaign`` or ``rounds_campaign`` (where its reports go), however the request came here.
        """
        row = self._cached(campaign_id)  # the usual case without a coroutine of its own: cached, no enrollment
        row, cached = (row, True) if row is not None else await self._settings(campaign_id)
        opens, left = (row.check_submit_token(token), None) if not row.enrollment else await self._opens(row, token)
        if not opens:  # checked against the campaign's creation as the database has it (one narrow read, shared)
            creation = await self.creation(campaign_id)
            if cached and not creation.made(row):  # created again since it was cached: the new settings replace it
                row = await self._replaced(creation)
                opens, left = await self._opens(row, token)
            if not opens:
                raise await self._unauthorized(row, creation)
        spent = left is not None and left <= 0
        if batch_id is None or (row.state == "open" and not spent and (row.max_reports is None or not await self._full(row))):
            return row  # a batch named by its records' file id is read first; the group commit checks the rest
        if row.state != "open":
            if await run_in_threadpool(self._recorded, campaign_id, batch_id):
                return row  # a retry gets its acknowledgement
            if row.state == "created":
                raise Conflict("campaign_not_open", f"Campaign {campaign_id!r} is not open yet; it accepts no reports.")
            raise await self._closed(row, batch_id)
        if not spent and ROUND_NAME.search(campaign_id) and (await run_in_threadpool(self.store.row, campaign_id)).state == "closed":
            # a round that filled up and closed since admission cached it: stale (other campaigns skip the read)
            if await run_in_threadpool(self._recorded, campaign_id, batch_id):
                return row
            raise await self._closed(row, batch_id)
        # full, or the token spent: refused and counted in the next group commit, unless the batch id was counted
        # before (a retry then gets its acknowledgement): one item of a group, no read of its own
        reason = "contribution_limit" if spent else "campaign_full"
        try:
            if not await self.count_refused(campaign_id, reason, batch_id, unless_recorded=True,
                                            campaign_file_id=row.export_file_id):
                return row
        except Conflict as refusal:
            if refusal.code != "campaign_changed" or not again:
                raise
            self.changed(campaign_id)
            return await self.admit(campaign_id, batch_id, token, again=False)
        if spent:
            raise Forbidden(
                "contribution_limit", f"This enrollment token of campaign {campaign_id!r} has sent all the reports it was issued for."
            )
        raise Conflict("campaign_full", f"Campaign {campaign_id!r} accepts at most {row.max_reports} reports (max_reports); it is full.")

    async def _opens(self, row: CampaignRow, token: str) -> tuple[bool, int | None]:
        """Whether ``token`` opens the campaign ``row``, and the reports its enrollment token has left (None: a
        campaign without enrollment)."""
        if not row.enrollment:
            return row.check_submit_token(token), None
        left = await run_in_threadpool(self.store.enrollment_left, row.id, token)
        return left is not None, left

    async def _replaced(self, creation: Creation) -> CampaignRow:
        """The settings of the campaign created again as ``creation``: the cached ones if another request read them
        already, else read (they replace the cached ones, and its cached count is dropped)."""
        cached = self._open.get(creation.id)
        if cached is not None and creation.made(cached[1]):
            return cached[1]
        self.changed(creation.id)
        return (await self._settings(creation.id))[0]

    async def _unauthorized(self, row: CampaignRow, creation: Creation) -> Refusal:
        """The refusal of a token that does not open the campaign ``row`` (``creation``: as the database has it)."""
        if creation.export_file_id == row.export_file_id:
            refusal = (self.relayed.direct_refusal(creation)  # a relayed campaign's submit token is known to no one: say why
                       or (await run_in_threadpool(self.rounds.direct_refusal, creation) if creation.rounds else None))
            if refusal is not None:
                return refusal
        if row.enrollment:
            return Unauthorized("unauthorized", f"Campaign {row.id!r} needs an enrollment token (Authorization: Bearer ...).")
        return Unauthorized("unauthorized", f"Campaign {row.id!r} needs its submit token (Authorization: Bearer ...).")

    async def _full(self, row: CampaignRow) -> bool:
        """Whether a capped campaign is full as admission knows it: its count read at most :data:`CACHE_S` ago, plus what
        this process counted since (a campaign found not full may have filled up since: the group commit checks the
        cap exactly; a full one stays full until its cap changes)."""
        if row.max_reports is None:
            return False
        cached = self._counted.get(row.id)
        if cached is None or time.monotonic() - cached[0] >= CACHE_S:
            n = (await run_in_threadpool(self.store.totals, row.id)).n
            if len(self._counted) > 4096:
                self._counted.clear()
            cached = self._counted[row.id] = (time.monotonic(), n)
        return cached[1] >= row.max_reports

    def _counted_more(self, campaign_id: str, accepted: int) -> None:
        """This process counted ``accepted`` more reports into a capped campaign (admission's count follows)."""
        cached = self._counted.get(campaign_id)
        if cached is not None:
            self._counted[campaign_id] = (cached[0], cached[1] + accepted)

    def _recorded(self, campaign_id: str, batch_id: str) -> bool:
        return bool(BATCH_ID.fullmatch(batch_id)) and self.store.recorded(campaign_id, batch_id)

    # ------------------------------------------------------------------ batches
    async def submit(self, row: CampaignRow, batch_id: str | None, body: bytes, content_type: str, token: str, *,
                     again: bool = True) -> dict:
        """Decode, validate and count one batch exactly once; its acknowledgement (after its group's commit).

        A batch whose campaign was deleted and created again under its id by another process since ``row`` was read
        (admission's cache) is admitted, decoded and counted again against the campaign as it now is (``again``: once;
        a second change in between is a 409 ``campaign_changed``).
        """
        campaign_id = row.id
        if batch_id is None:
            batch_id = await self.counted(campaign_id, batch_id_of_records, body, content_type, self.limits.max_records,
                                           count_400=False)
        batch_id = check_batch_id(batch_id)
        kind = media_type(content_type)
        digest = _digest(kind, body)
        enrollment = token_sha256(token) if row.enrollment else None
        try:
            if row.state != "open":  # a retry of an acknowledged batch still gets its acknowledgement
                return await self.count(row, batch_id, digest, None)
            if len(body) <= INLINE_BODY_BYTES and kind in DECODED_KINDS:  # decoded by the committer, with its group
                # as _commit, one coroutine less a batch
                ack = await self.committer.commit(self._pending(row, batch_id, digest, body, content_type, enrollment))
                if row.max_reports is not None and not ack["duplicate"]:
                    self._counted_more(campaign_id, ack["accepted"])
                return ack
            batch = await self.counted(campaign_id, decode_body, row.protocol, body, content_type, batch_id, self.limits,
                                        inline=len(body) <= INLINE_BODY_BYTES, batch_id=batch_id)
            return await self.count(row, batch_id, digest, batch, enrollment_sha256=enrollment)
        except Conflict as refusal:
            return await self.conflicted(refusal, row, batch_id, body, content_type, token, again=again)

    def usual_arrival(self, row: CampaignRow, batch_id: str | None, body: bytes, content_type: str) -> Arrival | None:
        """The arrival :meth:`submit` hands to the group commit for the usual batch (an open campaign without enrollment
        or cap, its batch id in the path, a small body of a kind the committer decodes), else None (then
        :meth:`submit`); an invalid batch id refused as :meth:`submit` refuses it.  Its caller awaits
        ``committer.commit`` and hands a :class:`Conflict` to :meth:`conflicted`, as :meth:`submit` does."""
        if batch_id is None or row.state != "open" or row.enrollment or row.max_reports is not None:
            return None
        if not BATCH_ID.fullmatch(batch_id):
            check_batch_id(batch_id)  # refused (400), as submit refuses it
        kind = _KINDS.get(content_type)
        if kind is None:
            kind = media_type(content_type)
            if len(_KINDS) < 64:  # the few content types devices send (a client's own strings: bounded)
                _KINDS[content_type] = kind
        if len(body) > INLINE_BODY_BYTES or kind not in DECODED_KINDS:
            return None
        return self._pending(row, batch_id, _digest(kind, body), body, content_type)

    def _pending(self, row: CampaignRow, batch_id: str, digest: str, body: bytes, content_type: str,
                 enrollment: str | None = None) -> Arrival:
        """The arrival of a batch the committer decodes with its group (its body pending), for the group commit."""
        return Arrival(row.id, batch_id, digest, None, 0, 0, enrollment_sha256=enrollment,
                       campaign_file_id=row.export_file_id,
                       pending=PendingBody(row.protocol, body, content_type, self.limits, row.keep_reports))

    async def conflicted(self, refusal: Conflict, row: CampaignRow, batch_id: str, body: bytes, content_type: str,
                         token: str, *, again: bool = True) -> dict:
        """What :meth:`submit` answers when the group commit refused its batch with ``refusal``: a campaign changed since
        admission admitted, decoded and counted again (``again``: once), a closed round's refusal, or ``refusal``."""
        if refusal.code == "campaign_changed":
            self.changed(row.id)  # admission's cached row was the old campaign's: read it again
            if not again:
                raise refusal
            row = await self.admit(row.id, batch_id, token)
            return await self.submit(row, batch_id, body, content_type, token, again=False)
        if refusal.code != "campaign_closed":
            raise refusal
        raise await self._closed(row, batch_id) from None

    async def _closed(self, row: CampaignRow, batch_id: str | None) -> Refusal:
        """The refusal of a new batch for a closed campaign: ``stale_round`` (counted once per batch id) for a round
        that is over."""
        stale = await run_in_threadpool(self.rounds.stale_refusal, row.id)
        if stale is None:
            return Conflict("campaign_closed", f"Campaign {row.id!r} is closed; it accepts no more reports.")
        await self.count_refused(row.id, "stale_round", batch_id)
        return stale

    async def count(self, row: CampaignRow, batch_id: str, digest: str, batch: ReportBatch | None, *,
                    enrollment_sha256: str | None = None, received_ms: int | None = None, tokens: list | None = None,
                    smallest_group: int | None = None, reports: list | None = None) -> dict:
        """Count a decoded and validated batch (a :class:`~dpdist.local.ReportBatch` of ``row``'s protocol) exactly once
        under ``batch_id``; its acknowledgement once its group committed, or its :class:`~dpdist._guard._refusals.Refusal` raised.

        The one way into the group commits, whatever carried the reports: :meth:`submit` after reading a request's body,
        or another transport's collector (``digest``: what identifies the batch's content, so that a retry under the
        same id is told apart from another batch reusing it; ``received_ms``: the arrival time to store instead of the
        group's minute, as for a relayed campaign; ``tokens``: a relayed batch's token nonces, spent when it counts;
        ``smallest_group``: a relayed batch's admitted reports of the envelope it holds fewest of, what its size counts
        as in the campaign's smallest batch; ``reports``: a relayed batch's reports' encapsulated keys, recorded when it
        counts, so that no copy of one counts again).  The group commit checks the campaign again (open, its cap, the
        enrollment token's reports left, a batch id counted by another campaign, and that it is still the campaign
        ``row`` is: else 409 ``campaign_changed``, nothing counted).  ``batch`` None: the campaign was not open, only
        an acknowledgement already recorded answers.
        """
        if batch is None:
            return await self.committer.commit(Arrival(row.id, batch_id, digest, None, 0, 0, received_ms=received_ms,
                                                       campaign_file_id=row.export_file_id))
        raw = None
        if row.keep_reports:
            raw = np.ascontiguousarray(batch.reports, dtype=row.protocol.report_format.dtype).tobytes()
        accepted = row.protocol.report_format.count(batch.reports)
        work, aggregate = accepted * row.protocol.aggregation_work, aggregate_work(row.protocol)
        counted = None
        if work > max(self.limits.max_batch_work // COSTLY_SHARE, aggregate):  # counted here, in a thread, not on the
            # committer's, when the reports cost more than an aggregate of their own holds (a 68 KB body of GRR reports
            # at d = 8*10^6 held a 64 MB aggregate until its group: 42 at once, 4.2 GB)
            counted, work = await run_in_threadpool(_counted, row.protocol, batch), 0
        work += aggregate  # the group's aggregate of the campaign, built and encoded there
        return await self._commit(row, Arrival(row.id, batch_id, digest, batch, accepted, batch.n_read, raw,
                                               enrollment_sha256, received_ms, list(tokens or ()), row.export_file_id,
                                               smallest_group=smallest_group, reports=list(reports or ()),
                                               work=work, counted=counted))

    async def _commit(self, row: CampaignRow, arrival: Arrival) -> dict:
        """The acknowledgement of ``arrival`` once its group committed (admission's count of a capped campaign
        follows), or its refusal raised."""
        ack = await self.committer.commit(arrival)
        if row.max_reports is not None and not ack["duplicate"]:
            self._counted_more(row.id, ack["accepted"])
        return ack

    async def counted(self, campaign_id: str, step: Callable[..., Any], *args: Any, count_400: bool = True,
                      inline: bool = True, batch_id: str | None = None) -> Any:
        """Run ``step`` (on the event loop, or in a thread); a refusal of the whole batch (``batch_id``, if known) is
        counted under the campaign's ``refused_batches``."""
        try:
            return step(*args) if inline else await run_in_threadpool(step, *args)
        except Refusal as refusal:
            if (count_400 and isinstance(refusal, InvalidRequest)) or refusal.code in COUNTED:
                await self.count_refused(campaign_id, refusal.code, batch_id)
            raise

    async def count_refused(self, campaign_id: str, reason: str, batch_id: str | None = None, *,
                            unless_recorded: bool = False, campaign_file_id: str | None = None) -> bool:
        """Count a batch refused as a whole against its campaign (in the next group commit): once per batch id and
        reason (a client that lost the answer and sends the batch again is not counted again), or each time if the
        batch id is not known.  ``unless_recorded``: not if the batch id was counted before (then False: the batch
        is not refused, its retry gets its acknowledgement); ``campaign_file_id``: the campaign refused is this creation
        of it (else 409 ``campaign_changed``, nothing counted)."""
        named = batch_id if batch_id is not None and BATCH_ID.fullmatch(batch_id) else None
        try:
            outcome = await self.committer.commit(Refused(campaign_id, reason, named, unless_recorded, campaign_file_id))
        except NotFound:
            if unless_recorded:
                raise  # admission's campaign was deleted since: 404, as a request coming a moment later would get
            return True  # unknown campaign: nothing to count against
        return outcome != RECORDED


class _Slot:
    """A batch's place taken by :meth:`Service.slot` (as it gave this): counted among the batches being served until the
    ``with`` block ends; a block that ends without an exception counts as a batch acknowledged (:mod:`._backpressure`).
    It keeps nothing of a batch: one serves every ``with`` block, however many are open at once."""

    __slots__ = ("service",)

    def __init__(self, service: Service):
        self.service = service

    def __enter__(self) -> None:
        pass  # taken by Service.slot

    def __exit__(self, kind, value, traceback) -> None:
        self.service.free_slot(kind is None)


#: content type -> its media type (:func:`._ingest.media_type`), for the usual batch
_KINDS: dict[str, str] = {}


def _digest(kind: str, body: bytes) -> str:
    """What identifies a batch's content (its media type and body): a retry under the same id is told apart from
    another batch reusing it."""
    return hashlib.sha256(kind.encode() + b"\n" + body).hexdigest()


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
    (batch_id,) = ids
    assert batch_id is not None
    return batch_id


def _counted(protocol, batch: ReportBatch):
    """An aggregator of ``batch`` alone: its reports counted before its group commit, off the committer's thread (a
    relayed batch of 10,000 OLH reports at d = 10^5 held the committer, and every campaign's batches, 6.4 s),
    merged into its campaign's log row there."""
    return protocol.aggregator().add_batch(batch)
