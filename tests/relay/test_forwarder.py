"""The relay's delivery of batches to the collector (dpdist.relay._forwarder): a batch is marked delivered only on the
collector's acknowledgement of that batch (issue 61: any 2xx was, so a proxy's page in front of the collector lost a
whole batch of reports)."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import Future

import httpx
import pytest

pytest.importorskip("starlette")

from dpdist.relay._forwarder import Forwarder  # noqa: E402
from dpdist.relay._queue import Batch  # noqa: E402


class _Store:
    """What the forwarder asks of its queue when it delivers: settle a batch."""

    def __init__(self):
        self.settled: list[tuple[str, str]] = []

    def settle(self, batch_id: str, state: str, detail: str | None = None) -> Future:
        self.settled.append((batch_id, state))
        done: Future = Future()
        done.set_result(None)
        return done


def _ack(campaign: str, batch_id: str) -> dict:
    return {"campaign": campaign, "batch_id": batch_id, "n_read": 3, "accepted": 3, "rejected": {}, "duplicate": False}


@pytest.mark.parametrize("answer, delivered", [
    (httpx.Response(200, json=_ack("c", "b1")), True),
    (httpx.Response(200, json=_ack("c", "b0")), False),  # another batch's acknowledgement
    (httpx.Response(200, json=_ack("d", "b1")), False),  # another campaign's
    (httpx.Response(200, text="<html>maintenance</html>"), False),  # a proxy's page
    (httpx.Response(200, content=json.dumps(_ack("c", "b1")).encode()[:30]), False),  # cut short
])
def test_a_batch_is_delivered_only_by_the_collectors_acknowledgement_of_it(answer, delivered):
    sent = []

    async def deliver():
        async def handler(request: httpx.Request) -> httpx.Response:
            sent.append((request.url.path, request.content))
            return answer

        async with httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="http://collector") as client:
            store = _Store()
            forwarder = Forwarder(store, client, relay_token="relay-token-0123456789", min_batch=1, max_batch=10)  # type: ignore[arg-type]
            settled = await forwarder.deliver(Batch("b1", "c", 3, b"sealed reports"))
            return settled, store.settled

    settled, marks = asyncio.run(deliver())
    assert sent == [("/api/campaigns/c/relayed/b1", b"sealed reports")]
    assert settled is delivered and marks == ([("b1", "delivered")] if delivered else [])  # else: delivered again later
