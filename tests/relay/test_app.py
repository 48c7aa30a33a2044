"""The relay (RFC 9458 requests in, shuffled batches of at least K out, exactly once).

The relay runs in process against a stand-in collector (an ASGI app that opens the reports with the
campaign's keys and counts each batch id once, as ``dpdist serve`` does); the end-to-end
tests with ``dpdist serve`` and SIGKILL are in tests/cli/test_relay.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time

import httpx
import pytest

from dpdist._wire import _ohttp_report
from dpdist._wire._frames import MAX_SEALED_BYTES
from dpdist.relay import create_app
from dpdist._wire._identity import PIN_HEADER

pytest.importorskip("pyhpke")
pytest.importorskip("starlette")

from relay_stand_in import ADMIN, RELAY_TOKEN, Collector  # noqa: E402
from sealed_v1_support import public_key_of, seal  # noqa: E402

OHTTP = {"content-type": "message/ohttp-req"}


def _relay(path, collector: Collector, *, min_batch=5, max_batch=8):
    return create_app(str(path), collector="http://collector", relay_token=RELAY_TOKEN, min_batch=min_batch,
                      max_batch=max_batch, admin_token=ADMIN, interval=0.02, transport=httpx.ASGITransport(collector.app))


async def _with_relay(app, work, client_address=("203.0.113.7", 5555)):
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app, client=client_address)
        async with httpx.AsyncClient(transport=transport, base_url="http://relay") as client:
            return await work(client)


async def _send(client, campaign, report_id, value):
    """One device's report of ``value``, an RFC 9458 request to the key configuration the campaign's config names."""
    config = (await client.get(f"/api/campaigns/{campaign}/config")).json()
    request = _ohttp_report.encapsulate_report(_ohttp_report.campaign_key_config(config["relay"]), campaign,
                                               json.dumps({"reports": [value]}).encode(), "application/json")
    return await client.put(f"/relay/v1/campaigns/{campaign}/ohttp/{report_id}", content=request,
                            headers={PIN_HEADER: config["relay"]["pin"], **OHTTP})


async def _settled(client, want_batches: int, min_batch: int = 5):
    deadline = time.monotonic() + 120  # by time, not by count: a loaded machine runs fewer loop turns a second
    while time.monotonic() < deadline:
        status = (await client.get("/relay/v1/status", headers={"authorization": f"Bearer {ADMIN}"})).json()
        if (sum(status["batches"].values()) >= want_batches and not status["batches"].get("pending")
                and all(count < min_batch for count in status["waiting"].values())):
            return status
        await asyncio.sleep(0.02)
    raise AssertionError(f"batches not settled: {status}")


# ---------------------------------------------------------------------- dpdist's deprecated envelope
def test_a_report_in_dpdists_deprecated_envelope_is_still_queued_and_delivered_beside_rfc9458_requests(tmp_path):
    """A device of an earlier version seals in dpdist's envelope: while the campaign takes it, the relay checks it
    without the key, queues it and delivers it in a batch with at least K reports of that envelope."""
    collector = Collector({"c": "open"})

    async def work(client):
        config = (await client.get("/api/campaigns/c/config")).json()
        pin, key = {PIN_HEADER: config["relay"]["pin"]}, public_key_of(config["relay"])
        for value in range(5):
            sealed = seal(key, "c", json.dumps({"reports": [10 + value]}).encode(), "application/json")
            assert (await client.put(f"/relay/v1/campaigns/c/reports/old{value}", content=sealed, headers=pin)).status_code == 202
            assert (await _send(client, "c", f"new{value}", value)).status_code == 202
        garbage = await client.put("/relay/v1/campaigns/c/reports/x", content=b"\x01hello", headers=pin)
        assert garbage.status_code == 400 and garbage.json()["error"] == "not_sealed"
        return await _settled(client, 1)  # one batch: K of each envelope

    status = asyncio.run(_with_relay(_relay(tmp_path / "q.sqlite", collector, max_batch=10), work))
    assert sorted(collector.counted()) == [0, 1, 2, 3, 4, 10, 11, 12, 13, 14] and status["refused"] == {"not_sealed": 1}


# ---------------------------------------------------------------------- the relay
def test_reports_reach_the_collector_once_in_shuffled_batches_of_at_least_k(tmp_path):
    collector = Collector({"c": "open"})

    async def work(client):
        for value in range(23):
            first = await _send(client, "c", f"r{value}", value)
            again = await _send(client, "c", f"r{value}", value)  # a retry, sealed again: the same report
            assert first.status_code == again.status_code == 202
            assert first.json()["duplicate"] is False and again.json()["duplicate"] is True
        return await _settled(client, 2)

    status = asyncio.run(_with_relay(_relay(tmp_path / "q.sqlite", collector), work))
    sizes = sorted(len(bodies) for bodies in collector.batches.values())
    assert all(5 <= size <= 8 for size in sizes) and sum(sizes) == status["reports_in_batches"]["delivered"]
    counted = collector.counted()
    assert len(counted) == len(set(counted)) and set(counted) <= set(range(23)) and len(counted) >= 15
    assert status["waiting"].get("c", 0) == 23 - len(counted) < 5  # fewer than K wait for the next reports
    # each batch in an order drawn with the CSPRNG: arrival order in every batch has probability < 1e-9
    orders = [[json.loads(body)["reports"][0] for body in bodies] for bodies in collector.batches.values()]
    assert any(order != sorted(order) for order in orders)


def test_a_batch_is_resent_with_the_same_id_and_bytes_until_acknowledged_also_after_a_restart(tmp_path):
    collector = Collector({"c": "open"}, fail=10**9)  # the collector is down

    async def first(client):
        for value in range(6):
            assert (await _send(client, "c", f"r{value}", value)).status_code == 202
        deadline = time.monotonic() + 120  # by time: under load the first delivery can take more than 4 s
        while not collector.deliveries and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    # K = 6: the six reports make one batch (with K = 5 the forwarder could form it before the sixth arrived)
    asyncio.run(_with_relay(_relay(tmp_path / "q.sqlite", collector, min_batch=6), first))
    assert collector.deliveries and not collector.batches
    collector.fail = 1  # up again after one more failure; the relay restarts from its queue file

    async def second(client):
        return await _settled(client, 1)

    asyncio.run(_with_relay(_relay(tmp_path / "q.sqlite", collector, min_batch=6), second))
    assert len({batch_id for batch_id, _ in collector.deliveries}) == 1 and len({body for _, body in collector.deliveries}) == 1
    assert sorted(collector.counted()) == list(range(6))


@pytest.mark.slow
def test_the_relay_stops_in_whichever_turn_its_shutdown_meets_a_delivery_and_keeps_the_batch(tmp_path):
    """The first half of the test above, 96 times: six reports, the collector down, and the relay stopped 0 to 11 turns
    of the event loop after the collector took the batch, as its answer comes back.  Each stop ends (bounded: 60 s a
    run, where a run takes a tenth of a second) and leaves the batch pending in the queue for the next start."""

    async def stopped_after(turns: int, path) -> bool:
        collector = Collector({"c": "open"}, fail=10**9)

        async def first(client):
            for value in range(6):
                assert (await _send(client, "c", f"r{value}", value)).status_code == 202
            deadline = time.monotonic() + 120
            while not collector.deliveries and time.monotonic() < deadline:
                await asyncio.sleep(0)  # turn by turn: the stop comes a known number of turns after the delivery
            for _ in range(turns):
                await asyncio.sleep(0)

        run = asyncio.create_task(_with_relay(_relay(path, collector, min_batch=6), first))
        await asyncio.wait({run}, timeout=60)
        if not run.done():
            run.cancel()
            return False
        run.result()
        with contextlib.closing(sqlite3.connect(path)) as queue:
            pending = queue.execute("SELECT COUNT(*) FROM batches WHERE state = 'pending'").fetchone()[0]
        return bool(collector.deliveries) and not collector.batches and pending == 1

    stuck = [(round_, turns) for round_ in range(8) for turns in range(12)
             if not asyncio.run(stopped_after(turns, tmp_path / f"q{round_}-{turns}.sqlite"))]
    assert stuck == []


def test_a_batch_refused_for_good_is_set_aside_and_said(tmp_path):
    collector = Collector({"c": "open"}, refuse=True)

    async def work(client):
        for value in range(5):
            await _send(client, "c", f"r{value}", value)
        return await _settled(client, 1)

    status = asyncio.run(_with_relay(_relay(tmp_path / "q.sqlite", collector), work))
    assert status["batches"] == {"refused": 1} and status["reports_in_batches"] == {"refused": 5}
    row = sqlite3.connect(tmp_path / "q.sqlite").execute("SELECT body, detail FROM batches").fetchone()
    assert row[0] is None and row[1].startswith("409")


def test_the_relay_refuses_what_it_cannot_forward(tmp_path):
    collector = Collector({"c": "open", "shut": "closed", "direct": "open"})

    async def work(client):
        good = (await client.get("/api/campaigns/c/config")).json()
        sealed = _ohttp_report.encapsulate_report(_ohttp_report.campaign_key_config(good["relay"]), "c", b'{"reports": [1]}',
                                                  "application/json")
        pin = {PIN_HEADER: good["relay"]["pin"], **OHTTP}
        answers = {
            "unknown": await client.put("/relay/v1/campaigns/nope/ohttp/a", content=sealed, headers=pin),
            "closed": await client.put("/relay/v1/campaigns/shut/ohttp/a", content=sealed, headers=pin),
            "direct": await client.put("/relay/v1/campaigns/direct/ohttp/a", content=sealed, headers=pin),
            "bad id": await client.put("/relay/v1/campaigns/c/ohttp/a%20b", content=sealed, headers=pin),
            "no pin": await client.put("/relay/v1/campaigns/c/ohttp/a", content=sealed, headers=OHTTP),
            "other pin": await client.put("/relay/v1/campaigns/c/ohttp/a", content=sealed, headers={**pin, PIN_HEADER: "0" * 64}),
            "other key": await client.put("/relay/v1/campaigns/c/ohttp/a", content=b"\x07" + sealed[1:], headers=pin),
            "garbage": await client.put("/relay/v1/campaigns/c/ohttp/a", content=b"\x00hello", headers=pin),
            "too large": await client.put("/relay/v1/campaigns/c/ohttp/a", content=b"\x00" * (MAX_SEALED_BYTES + 1),
                                          headers=pin),
            "status": await client.get("/relay/v1/status"),
        }
        return {name: (answer.status_code, answer.json()["error"]) for name, answer in answers.items()}

    answers = asyncio.run(_with_relay(_relay(tmp_path / "q.sqlite", collector), work))
    assert answers == {
        "unknown": (404, "unknown_campaign"), "closed": (409, "campaign_not_open"), "direct": (409, "not_relayed"),
        "bad id": (400, "invalid_report_id"), "no pin": (409, "pin_mismatch"), "other pin": (409, "pin_mismatch"),
        "other key": (400, "not_encapsulated"), "garbage": (400, "not_encapsulated"),
        "too large": (413, "too_large"), "status": (401, "unauthorized"),
    }


def test_the_queue_keeps_no_address_and_no_time(tmp_path):
    """The relay's file holds keys, campaigns, ciphertexts and batch states: not the sender's address, not a time."""
    collector = Collector({"c": "open"})

    async def work(client):
        for value in range(7):
            await _send(client, "c", f"r{value}", value)
        return await _settled(client, 1)

    asyncio.run(_with_relay(_relay(tmp_path / "q.sqlite", collector), work, client_address=("203.0.113.77", 4321)))
    database = sqlite3.connect(tmp_path / "q.sqlite")
    columns = {table: [row[1] for row in database.execute(f"PRAGMA table_info({table})")] for table in ("reports", "batches")}
    assert columns == {"reports": ["key", "campaign", "sealed", "envelope", "enc"], "batches": ["batch_id", "campaign", "count", "body", "state", "detail"]}
    database.close()
    for path in tmp_path.glob("q.sqlite*"):
        assert b"203.0.113.77" not in path.read_bytes()
