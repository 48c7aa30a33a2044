"""The relay (sealed reports in, shuffled batches of at least K out, exactly once).

The relay runs in process against a stand-in collector (an ASGI app that opens the sealed reports
with the campaign's key and counts each batch id once, as ``dpdist serve`` does); the end-to-end
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

from dpdist.errors import InvalidParameterError, MalformedReportError
from dpdist._wire import _envelope
from dpdist.relay import create_app
from dpdist._wire._identity import PIN_HEADER

pytest.importorskip("pyhpke")
pytest.importorskip("starlette")

from relay_stand_in import ADMIN, RELAY_TOKEN, Collector  # noqa: E402



def _relay(path, collector: Collector, *, min_batch=5, max_batch=8):
    return create_app(str(path), collector="http://collector", relay_token=RELAY_TOKEN, min_batch=min_batch,
                      max_batch=max_batch, admin_token=ADMIN, interval=0.02, transport=httpx.ASGITransport(collector.app))


async def _with_relay(app, work, client_address=("203.0.113.7", 5555)):
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app, client=client_address)
        async with httpx.AsyncClient(transport=transport, base_url="http://relay") as client:
            return await work(client)


async def _send(client, campaign, report_id, value):
    config = (await client.get(f"/api/campaigns/{campaign}/config")).json()
    sealed = _envelope.seal(_envelope.decode_public_key(config["relay"]["public_key"]), campaign,
                            json.dumps({"reports": [value]}).encode(), "application/json")
    return await client.put(f"/relay/v1/campaigns/{campaign}/reports/{report_id}", content=sealed,
                            headers={PIN_HEADER: config["relay"]["pin"]})


async def _settled(client, want_batches: int, min_batch: int = 5):
    deadline = time.monotonic() + 120  # by time, not by count: a loaded machine runs fewer loop turns a second
    while time.monotonic() < deadline:
        status = (await client.get("/relay/v1/status", headers={"authorization": f"Bearer {ADMIN}"})).json()
        if (sum(status["batches"].values()) >= want_batches and not status["batches"].get("pending")
                and all(count < min_batch for count in status["waiting"].values())):
            return status
        await asyncio.sleep(0.02)
    raise AssertionError(f"batches not settled: {status}")


# ---------------------------------------------------------------------- the envelope
def test_sealed_reports_open_only_for_their_campaign_and_key_and_hide_their_length():
    key = _envelope.generate_key()
    short = _envelope.seal(key.public_key, "c", b'{"reports": [1]}', "application/json")
    long = _envelope.seal(key.public_key, "c", b'{"reports": [1234567]}', "application/json")
    assert len(short) == len(long) and short != _envelope.seal(key.public_key, "c", b'{"reports": [1]}', "application/json")
    assert _envelope.open_sealed(key.private_key, "c", short) == ("application/json", b'{"reports": [1]}')
    for campaign, private, sealed in [("other", key.private_key, short), ("c", _envelope.generate_key().private_key, short),
                                      ("c", key.private_key, short[:-1] + bytes([short[-1] ^ 1]))]:
        with pytest.raises(MalformedReportError):
            _envelope.open_sealed(private, campaign, sealed)
    with pytest.raises(InvalidParameterError, match="content type"):
        _envelope.seal(key.public_key, "c", b"x", "text/plain")
    messages = [short, long, b"x" * 70]
    assert _envelope.unframe(_envelope.frame(messages)) == messages
    with pytest.raises(MalformedReportError):
        _envelope.unframe(_envelope.frame(messages)[:-1])


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
        sealed = _envelope.seal(_envelope.decode_public_key(good["relay"]["public_key"]), "c", b'{"reports": [1]}', "application/json")
        pin = {PIN_HEADER: good["relay"]["pin"]}
        answers = {
            "unknown": await client.put("/relay/v1/campaigns/nope/reports/a", content=sealed, headers=pin),
            "closed": await client.put("/relay/v1/campaigns/shut/reports/a", content=sealed, headers=pin),
            "direct": await client.put("/relay/v1/campaigns/direct/reports/a", content=sealed, headers=pin),
            "bad id": await client.put("/relay/v1/campaigns/c/reports/a%20b", content=sealed, headers=pin),
            "no pin": await client.put("/relay/v1/campaigns/c/reports/a", content=sealed),
            "other pin": await client.put("/relay/v1/campaigns/c/reports/a", content=sealed, headers={PIN_HEADER: "0" * 64}),
            "other key": await client.put("/relay/v1/campaigns/c/reports/a", content=sealed[:1] + bytes(8) + sealed[9:], headers=pin),
            "garbage": await client.put("/relay/v1/campaigns/c/reports/a", content=b"\x01hello", headers=pin),
            "too large": await client.put("/relay/v1/campaigns/c/reports/a", content=b"\x01" * (_envelope.MAX_SEALED_BYTES + 1),
                                          headers=pin),
            "status": await client.get("/relay/v1/status"),
        }
        return {name: (answer.status_code, answer.json()["error"]) for name, answer in answers.items()}

    answers = asyncio.run(_with_relay(_relay(tmp_path / "q.sqlite", collector), work))
    assert answers == {
        "unknown": (404, "unknown_campaign"), "closed": (409, "campaign_not_open"), "direct": (409, "not_relayed"),
        "bad id": (400, "invalid_report_id"), "no pin": (409, "pin_mismatch"), "other pin": (409, "pin_mismatch"),
        "other key": (400, "not_sealed"), "garbage": (400, "not_sealed"),
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


def test_a_report_sealed_by_the_javascript_client_opens_in_python(tmp_path):
    """Cross-language: @hpke/core (bundled in clients/js) and pyhpke implement the same RFC 9180 suite."""
    import os
    import shutil
    import subprocess
    from pathlib import Path

    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed, and CI is set: the JavaScript client's relay transport must be checked.")
        pytest.skip("node is not installed")
    key = _envelope.generate_key()
    relay_js = Path(__file__).resolve().parents[2] / "clients" / "js" / "src" / "relay.js"
    script = (
        f"import {{ sealForRelay }} from {json.dumps(relay_js.as_uri())};\n"
        f"const relay = {json.dumps(_envelope.public_key_config(key.public_key))};\n"
        "const sealed = await sealForRelay(relay, 'campaign-7', new TextEncoder().encode('{\"reports\": [5]}'), 'application/json');\n"
        "process.stdout.write(Buffer.from(sealed).toString('hex'));\n"
    )
    sealed = bytes.fromhex(subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True,
                                          check=True, timeout=120).stdout)
    assert _envelope.open_sealed(key.private_key, "campaign-7", sealed) == ("application/json", b'{"reports": [5]}')
