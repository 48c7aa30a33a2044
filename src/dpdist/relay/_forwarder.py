"""Forming shuffled batches of at least K reports and delivering them to the collector, exactly once.

Every ``interval`` seconds (sooner after a report arrives) the forwarder forms a batch for each
campaign with at least ``min_batch`` reports waiting (at most ``max_batch``, the oldest first, in
an order drawn with the CSPRNG; :mod:`._queue`), then delivers every formed batch:
``PUT {collector}/api/campaigns/{campaign}/relayed/{batch_id}`` with the relay's token.  The
collector counts a batch id once, so a delivery is retried with the same id and bytes until it is
acknowledged (by the collector's acknowledgement of that batch: :mod:`dpdist._http._acks`; another 2xx, a proxy's page or
a body cut short, is retried): after a network error, a 5xx, 408/425/429, and 401/403 (a wrong token is the
operator's to fix; the reports wait).  A batch the collector refuses for good (404: no such
campaign; 409: not open or not relayed; 400/413: it cannot read it) is marked refused, with the
answer, and its reports are not counted.

The answer is read bounded (:mod:`._collector`, :func:`dpdist._http._deadline.request_within_async`): the whole exchange within 60 s plus a second per 64 KiB of the batch,
at most 128 MiB of body once decoded.  A slower or larger answer is none: the batch is sent again later, with the same
id and bytes (the collector counts it once), as after a network error.  What the relay logs of an answer is the
collector's refusal as a client shows one (:func:`dpdist._http._answer.refusal_shown`: a dpdist code and its detail, escaped
and cut, else its status, host and size), and of a failure its kind and message; the relay's own secrets (its token,
its collector URL's password) are masked wherever either repeats them.

While traces are on (:mod:`dpdist._http._telemetry`), each attempt at a delivery is a span, the root of a trace of its
own, and carries its ``traceparent`` to the collector: it is neither a child of nor linked to the requests that brought
the batch's reports, so the collector's spans share a trace id with no device's request, and the relay's traces hold no
batch's membership.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from .._http import _telemetry
from .._http._acks import batch_ack_problem
from .._http._answer import refusal_shown
from .._http._deadline import ACK_ANSWER_BYTES, request_within_async, timeout
from .._redact import url_secrets
from .._shown import shown
from ._collector import ANSWER_DEADLINE_S, delivery_deadline
from ._queue import Batch, RelayQueue

__all__ = ["Forwarder", "RELAYED_BATCH_CONTENT_TYPE"]

RELAYED_BATCH_CONTENT_TYPE = "application/vnd.dpdist.relayed-batch"
_RETRY = {401, 403, 408, 425, 429}
_MAX_BACKOFF_S = 30.0
log = logging.getLogger("dpdist.relay")


class Forwarder:
    """The relay's delivery loop (module docstring)."""

    def __init__(self, store: RelayQueue, client, *, relay_token: str, min_batch: int, max_batch: int, interval: float = 0.5,
                 deadline: float = ANSWER_DEADLINE_S):
        self.store, self.client, self.relay_token, self.deadline = store, client, relay_token, deadline
        self.min_batch, self.max_batch, self.interval = min_batch, max_batch, interval
        self.wake = asyncio.Event()
        self._backoff = interval
        #: what the relay holds that no line it writes may show: its token, its collector URL's password
        self.secrets = (relay_token, *url_secrets(str(getattr(client, "base_url", ""))))

    async def run(self) -> None:
        while True:
            try:
                delivered_all = await self.step()
            except Exception:  # the loop never dies: log and try again later
                log.exception("relay forwarding step failed")
                delivered_all = False
            self._backoff = self.interval if delivered_all else min(_MAX_BACKOFF_S, self._backoff * 2)
            self.wake.clear()
            await asyncio.sleep(self.interval)  # at most one step per interval, however fast reports arrive
            if self._backoff > self.interval:  # a failed delivery waits its backoff, or a new report
                with contextlib.suppress(asyncio.TimeoutError):
                    async with timeout(self._backoff - self.interval):  # not wait_for: it can drop a cancellation
                        await self.wake.wait()

    async def step(self) -> bool:
        """Form what can be formed, deliver what is formed; whether every batch got a final answer."""
        for campaign, count in (await asyncio.to_thread(self.store.waiting)).items():
            while count >= self.min_batch:
                batch = await asyncio.wrap_future(self.store.form_batch(campaign, self.min_batch, self.max_batch))
                if batch is None:
                    break
                count -= batch.count
        settled = True
        for batch_id in await asyncio.to_thread(self.store.pending_batch_ids):
            batch = await asyncio.to_thread(self.store.batch, batch_id)
            settled = await self.deliver(batch) and settled
        return settled

    async def deliver(self, batch: Batch) -> bool:
        """One attempt; whether the batch is settled (acknowledged or refused for good)."""
        with _telemetry.span("dpdist.relay.deliver", {"dpdist.batch.reports": batch.count}, root=True) as counts:
            settled = counts["dpdist.batch.settled"] = await self._deliver(batch)
        return settled

    async def _deliver(self, batch: Batch) -> bool:
        try:
            response = await request_within_async(
                self.client, "PUT", f"/api/campaigns/{batch.campaign}/relayed/{batch.batch_id}",
                delivery_deadline(self.deadline, len(batch.body)), limit=ACK_ANSWER_BYTES, content=batch.body,
                headers=_telemetry.inject({"content-type": RELAYED_BATCH_CONTENT_TYPE,
                                           "authorization": f"Bearer {self.relay_token}"}),
            )
        except Exception as error:  # network, or no answer in time or size: maybe counted; same id next time
            log.warning("relay: batch %s of %s (%d bytes) not delivered (%s: %s); will retry", batch.batch_id, batch.campaign,
                        len(batch.body), type(error).__name__, shown(str(error), self.secrets, 300))
            return False
        if 200 <= response.status_code < 300:
            # only the collector's acknowledgement of this batch settles it: a proxy's page would lose the batch
            problem = batch_ack_problem(response, batch.campaign, batch.batch_id, batch.count)
            if problem is not None:
                log.warning("relay: batch %s of %s not delivered (%s); will retry", batch.batch_id, batch.campaign, problem)
                return False
            await asyncio.wrap_future(self.store.settle(batch.batch_id, "delivered"))
            return True
        if response.status_code >= 500 or response.status_code in _RETRY:
            log.warning("relay: collector answered %s to batch %s of %s; will retry", response.status_code, batch.batch_id, batch.campaign)
            return False
        detail = f"{response.status_code} {refusal_shown(response, self.secrets, 500)[1]}"  # one line, masked
        log.error("relay: collector refused batch %s of %s for good: %s", batch.batch_id, batch.campaign, detail)
        await asyncio.wrap_future(self.store.settle(batch.batch_id, "refused", detail))
        return True
