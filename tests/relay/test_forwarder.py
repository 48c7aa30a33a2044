"""The relay's delivery of batches to the collector (dpdist.relay._forwarder): a batch is marked delivered only on the
collector's acknowledgement of that batch (any 2xx was once, so a proxy's page in front of the collector lost a
whole batch of reports)."""

from __future__ import annotations

import asyncio
import base64
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


# ------------------------------------------------ the collector's answer bounded in bytes and time, logged safely
_TOKEN = "relay-token-0123456789"


class _DetailStore(_Store):
    """A queue that keeps what a refused batch is settled with (the detail the relay's status shows)."""

    def __init__(self):
        super().__init__()
        self.details: list[str | None] = []

    def settle(self, batch_id: str, state: str, detail: str | None = None) -> Future:
        self.details.append(detail)
        return super().settle(batch_id, state, detail)


def _deliver_to(handler, store: _Store | None = None, deadline: float = 60.0):
    """Deliver one batch to a collector answering with ``handler``; (settled, the store), bounded at 20 s."""
    store = store or _Store()

    async def deliver():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="http://collector") as client:
            forwarder = Forwarder(store, client, relay_token=_TOKEN, min_batch=1, max_batch=10,  # type: ignore[arg-type]
                                  deadline=deadline)
            return await asyncio.wait_for(forwarder.deliver(Batch("b1", "c", 3, b"sealed reports")), 20)

    return asyncio.run(deliver()), store


class _Bomb(httpx.AsyncByteStream):
    """A gzip answer of ``size`` zero bytes once decoded (about 1,000 times fewer on the wire), sent in pieces of
    ``piece`` bytes; counts the pieces read."""

    def __init__(self, size: int, piece: int = 16 << 10):
        import zlib
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        zeros = bytes(1 << 20)
        self.data = b"".join(packer.compress(zeros) for _ in range(size >> 20)) + packer.flush()
        self.piece, self.sent = piece, 0

    async def __aiter__(self):
        for start in range(0, len(self.data), self.piece):
            self.sent += 1
            yield self.data[start:start + self.piece]


def test_a_gzip_bomb_answer_is_read_no_further_than_the_limit_and_the_batch_is_sent_again(caplog):
    """An acknowledgement is read up to ``ACK_ANSWER_BYTES`` (1 MiB; at 128 MiB a gzip answer of
    ``[{},{},...]`` took the relay to 1.4 GB per attempt while parsed)."""
    bomb = _Bomb(32 << 20, piece=1 << 10)  # 32 MiB of zeros: ~32 kB on the wire, in 32 pieces of 1 KiB

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-encoding": "gzip", "content-type": "application/json"}, stream=bomb)

    with caplog.at_level("WARNING", logger="dpdist.relay"):
        settled, store = _deliver_to(handler)
    assert settled is False and store.settled == []  # not delivered: sent again later with the same id and bytes
    pieces = -(-len(bomb.data) // bomb.piece)
    assert bomb.sent < pieces // 4, (bomb.sent, pieces)  # reading stopped soon after 1 MiB decoded, not at 32 MiB
    assert "is larger than dpdist reads (HTTP 200, application/json, more than 1 MiB once decoded)" in caplog.text
    assert "will retry" in caplog.text


@pytest.mark.parametrize("slow", ["head", "body"])
def test_a_collector_trickling_its_answer_does_not_hold_the_delivery(slow, caplog):
    async def handler(request: httpx.Request) -> httpx.Response:
        if slow == "head":
            await asyncio.sleep(60)  # the head never comes in time

        async def trickle():
            for _ in range(600):  # one byte every 0.1 s: a minute of answer
                await asyncio.sleep(0.1)
                yield b" "

        return httpx.Response(200, stream=_Trickle(trickle()))

    with caplog.at_level("WARNING", logger="dpdist.relay"):
        settled, store = _deliver_to(handler, deadline=0.5)  # wait_for(20 s) around: a hold fails the test
    assert settled is False and store.settled == []
    assert "ReadTimeout" in caplog.text and "was not whole 0.5 s" in caplog.text and "will retry" in caplog.text


class _Trickle(httpx.AsyncByteStream):
    def __init__(self, chunks):
        self.chunks = chunks

    async def __aiter__(self):
        async for chunk in self.chunks:
            yield chunk


def test_a_refusal_is_logged_and_kept_as_one_line_without_the_relays_token_or_control_characters(caplog):
    encoded = base64.b64encode(f"relay:{_TOKEN}".encode()).decode()
    body = {"error": "campaign_not_open", "detail": f"\x1b[2J\x1b[31mred\nINFO: fake line {_TOKEN} Basic {encoded}"}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, content=json.dumps(body).encode())

    store = _DetailStore()
    with caplog.at_level("WARNING", logger="dpdist.relay"):
        settled, _ = _deliver_to(handler, store)
    assert settled is True and store.settled == [("b1", "refused")]  # a 400 is for good, as before
    (record,) = [record for record in caplog.records if "refused batch" in record.getMessage()]
    for text in (record.getMessage(), store.details[0]):
        assert text is not None
        assert _TOKEN not in text and encoded not in text, text
        assert not any(character in text for character in "\x1b\x07\n\r"), text
        assert "400 campaign_not_open: \\x1b[2J\\x1b[31mred\\nINFO: fake line *** Basic " in text, text


def test_a_refusal_that_is_no_dpdist_refusal_is_logged_by_its_status_and_size():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, content=f"<html>\x1b]0;PWNED\x07 {_TOKEN}</html>".encode())

    store = _DetailStore()
    settled, _ = _deliver_to(handler, store)
    assert settled is True and store.details[0] == "400 status 400 from collector (not a dpdist answer, 46 bytes)"


@pytest.mark.parametrize("answer", ["bomb", "slow head"])
def test_the_collectors_public_pages_are_read_bounded_too(answer, monkeypatch):
    """A config or identity GET (a device's submission waits on it) answered by a gzip bomb or a trickle is
    "collector unavailable" (503), not the relay's memory or a request held for ever."""
    from dpdist.relay._app import RelayError, _PublicPages

    monkeypatch.setattr("dpdist._http._deadline.MAX_ANSWER_BYTES", 1 << 20)
    monkeypatch.setattr("dpdist.relay._app.PAGE_DEADLINE_S", 0.5)
    bomb = _Bomb(16 << 20)

    async def handler(request: httpx.Request) -> httpx.Response:
        if answer == "slow head":
            await asyncio.sleep(60)
        return httpx.Response(200, headers={"content-encoding": "gzip", "content-type": "application/json"}, stream=bomb)

    async def get():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="http://collector") as client:
            return await asyncio.wait_for(_PublicPages(client).get("/api/campaigns/c/config"), 20)

    with pytest.raises(RelayError) as refused:
        asyncio.run(get())
    assert (refused.value.status, refused.value.code) == (503, "collector_unavailable")


def test_a_deeply_nested_answer_is_no_acknowledgement_in_one_line_not_a_traceback(caplog):
    """``{"campaign": [[[[...]]]]}`` 200,000 deep was a RecursionError traceback at each attempt."""
    deep = b'{"campaign":' + b"[" * 200_000 + b"]" * 200_000 + b"}"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=deep, headers={"content-type": "application/json"})

    with caplog.at_level("WARNING", logger="dpdist.relay"):
        settled, store = _deliver_to(handler)
    assert settled is False and store.settled == []
    assert "with a body that is not JSON" in caplog.text and "Traceback" not in caplog.text


@pytest.mark.parametrize("body", [b"[" * 200_000 + b"]" * 200_000, b"[1, 2]", b"<html>"])
def test_a_config_that_is_not_a_json_object_is_collector_unavailable(body):
    from dpdist.relay._app import RelayError, _PublicPages

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})

    async def config():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="http://collector") as client:
            return await _PublicPages(client).config("c")

    with pytest.raises(RelayError) as refused:
        asyncio.run(config())
    assert (refused.value.status, refused.value.code) == (503, "collector_unavailable")


def test_a_public_page_is_read_up_to_a_mebibyte_and_the_pages_kept_stay_bounded(monkeypatch):
    """A config or identity page is a few KB: an answer over PAGE_ANSWER_BYTES is "collector unavailable", and the pages
    the relay keeps for a few seconds never hold more than PAGES_KEPT_BYTES (4,096 campaigns' answers of 128 MiB each
    could pile up before)."""
    from dpdist.relay._app import RelayError, _PublicPages
    from dpdist._http._deadline import PAGE_ANSWER_BYTES

    monkeypatch.setattr("dpdist.relay._app.PAGES_KEPT_BYTES", 3 * 1000)
    sizes = {"/big": PAGE_ANSWER_BYTES + 1}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"x" * sizes.get(request.url.path, 1000))

    async def run():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="http://collector") as client:
            pages = _PublicPages(client)
            with pytest.raises(RelayError) as refused:
                await pages.get("/big")
            assert (refused.value.status, refused.value.code) == (503, "collector_unavailable")
            kept = []
            for index in range(10):
                await pages.get(f"/page{index}")
                await pages.get(f"/page{index}", fresh=True)  # the same page again: counted once
                kept.append(pages.kept_bytes)
            return kept

    kept = asyncio.run(run())
    assert max(kept) <= 3 * 1000 and kept[:3] == [1000, 2000, 3000]


# ------------------------------------------------ shutdown: the forwarder ends at its first cancellation
class _Waiting(_Store):
    """A queue with one batch formed and not delivered, read at once (no thread: each run takes the same turns)."""

    def waiting(self) -> dict:
        return {}

    def pending_batch_ids(self) -> list[str]:
        return ["b1"]

    def batch(self, batch_id: str) -> Batch:
        return Batch(batch_id, "c", 3, b"sealed reports")


class _Watched(asyncio.Event):
    """The forwarder's wake-up, which says when the forwarder waits on it (its backoff after a failed delivery)."""

    def __init__(self):
        super().__init__()
        self.waited_on = asyncio.Event()

    async def wait(self):
        self.waited_on.set()
        return await super().wait()


async def _inline(function, *args):
    return function(*args)


async def _down(request: httpx.Request) -> httpx.Response:
    return httpx.Response(503, json={"error": "unavailable"})


async def _ends_at_one_cancellation(forwarder: Forwarder, task: asyncio.Task, wake_too: bool = False) -> bool:
    """Cancel the running forwarder once (and, with ``wake_too``, wake it in the same turn, as a report arriving at the
    shutdown does); whether it ended within 50 turns of the event loop (it ends in one or two).  Stopped for good after."""
    if wake_too:
        forwarder.wake.set()
    task.cancel()
    for _ in range(50):
        await asyncio.sleep(0)
    ended = task.done()
    while not task.done():  # a forwarder that went on: ended here, so that the next run starts alone
        task.cancel()
        await asyncio.wait({task}, timeout=1)
    return ended


def test_the_forwarder_ends_at_one_cancellation_in_whichever_turn_of_a_delivery_it_comes(monkeypatch):
    """The relay's shutdown cancels its forwarder once and waits for it.  Cancelled in each turn of the event loop of a
    delivery the collector refuses (the answer read under a deadline), and while it waits out its backoff as a report
    wakes it, it ends each time: a deadline that ran the read as a task of its own (``asyncio.wait_for``) dropped the
    cancellation when the answer came in the same turn, and the forwarder went on retrying for good."""
    monkeypatch.setattr(asyncio, "to_thread", _inline)

    async def cancelled_after(turns: int) -> bool:
        async with httpx.AsyncClient(transport=httpx.MockTransport(_down), base_url="http://collector") as client:
            forwarder = Forwarder(_Waiting(), client, relay_token=_TOKEN, min_batch=1, max_batch=10, interval=0.05)  # type: ignore[arg-type]
            task = asyncio.create_task(forwarder.run())
            for _ in range(turns):
                await asyncio.sleep(0)
            return await _ends_at_one_cancellation(forwarder, task)

    async def woken_in_its_backoff() -> bool:
        async with httpx.AsyncClient(transport=httpx.MockTransport(_down), base_url="http://collector") as client:
            forwarder = Forwarder(_Waiting(), client, relay_token=_TOKEN, min_batch=1, max_batch=10, interval=0.05)  # type: ignore[arg-type]
            forwarder.wake = _Watched()
            task = asyncio.create_task(forwarder.run())
            await forwarder.wake.waited_on.wait()
            return await _ends_at_one_cancellation(forwarder, task, wake_too=True)

    async def every_turn():
        # the first 30 turns span the whole delivery (it takes under 10); later ones fall in its sleep
        return [turns for turns in range(30) if not await cancelled_after(turns)], await woken_in_its_backoff()

    assert asyncio.run(every_turn()) == ([], True)
