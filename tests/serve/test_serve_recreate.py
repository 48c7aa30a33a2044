"""A campaign deleted and created again under its id by another process, while this one still holds it in its cache.

Admission reuses an open campaign's settings for up to ``CACHE_S`` seconds (no
database read per device); another process (a second worker, a second host, an
admin's ``dpdist campaign delete``) may meanwhile delete the campaign and create a
new one under the same id.  A batch admitted and validated against the old one
must not be counted into the new one as if it had been checked against it, and
must not fail the group commit it shares with other batches (every one of them a
500): the group answers that batch alone (``campaign_changed``), and the service
admits and validates it again against the campaign as it now is.
"""

from __future__ import annotations

import concurrent.futures
import json

import numpy as np
import pytest

from dpdist import local
from dpdist.serve._service import MIN_SHED
from serve_support import ADMIN_TOKEN, ServerProcess, database_url

OLD = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
NEW = {"protocol": "grr", "epsilon": 1.0, "domain_size": 16}
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def _batch(config: dict, values, seed: int):
    protocol = local.from_config(config)
    return protocol.validate_reports(protocol.privatize(np.asarray(values), rng=seed))


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_a_group_answers_a_batch_of_a_campaign_created_again_alone(kind, tmp_path):
    """Of one group, the batches validated against campaign ``c`` before another process deleted it and created it again
    (another config; the same config) are refused ``campaign_changed``, uncounted; the other campaign's batch counts."""
    from dpdist.serve._database import open_database
    from dpdist.serve._group import Arrival
    from dpdist.serve._store import Store

    with database_url(kind, tmp_path) as url:
        this, other = Store(open_database(url)), Store(open_database(url))
        for name in ("c", "d"):
            other.create(name, OLD)
            other.transition(name, "open")
        old = this.row("c")
        (ack,) = this.commit([Arrival("c", "b0", "0" * 64, _batch(OLD, [1, 2], 0), 2, 2, campaign_file_id=old.export_file_id)])
        assert ack["accepted"] == 2
        other.delete("c")
        other.create("c", NEW)
        other.transition("c", "open")
        group = [
            Arrival("c", "b1", "1" * 64, _batch(OLD, [3, 4, 5], 1), 3, 3, campaign_file_id=old.export_file_id),  # other config
            Arrival("d", "b2", "2" * 64, _batch(OLD, [6], 2), 1, 1, campaign_file_id=this.row("d").export_file_id),
            Arrival("c", "b3", "3" * 64, _batch(NEW, [7], 3), 1, 1, campaign_file_id=old.export_file_id),  # the new config
            Arrival("c", "b4", "4" * 64, _batch(OLD, [0], 4), 1, 1),  # no identity (Store.ingest): its config tells
        ]
        outcomes = this.commit(group)
        assert [getattr(outcome, "code", None) for outcome in outcomes] == ["campaign_changed", None, "campaign_changed",
                                                                          "campaign_changed"]
        assert all("created again" in outcome.detail for outcome in outcomes if not isinstance(outcome, dict))
        assert outcomes[1]["accepted"] == 1 and outcomes[1]["duplicate"] is False
        new = other.get("c")
        assert (new.n, new.batches, new.refused) == (0, 0, {})
        assert not any(this.recorded("c", batch_id) for batch_id in ("b0", "b1", "b3", "b4"))
        assert other.get("d").n == 1
        (ack,) = this.commit([Arrival("c", "b3", "3" * 64, _batch(NEW, [7], 3), 1, 1,
                                      campaign_file_id=this.row("c").export_file_id)])  # validated against the new one
        assert ack["accepted"] == 1 and other.get("c").n == 1
        for store in (this, other):
            store.db.close()


def _apps(tmp_path, **options):
    from starlette.testclient import TestClient

    from dpdist.serve import create_app

    path = str(tmp_path / "c.sqlite")
    return [TestClient(create_app(path, admin_token=ADMIN_TOKEN, **options), raise_server_exceptions=False) for _ in range(2)]


def _create(client, name: str, config: dict, token: str) -> None:
    assert client.post("/api/campaigns", json={"campaign": name, "config": config, "submit_token": token},
                       headers=ADMIN).status_code == 201
    assert client.post(f"/api/campaigns/{name}/open", headers=ADMIN).status_code == 200


def _put(client, name: str, batch_id: str, rows: list, token: str):
    return client.put(f"/api/campaigns/{name}/batches/{batch_id}", content=json.dumps({"reports": rows}),
                      headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})


def test_a_campaign_created_again_by_another_process_is_read_again_and_its_batch_checked_against_it(tmp_path):
    """Two services on one SQLite file (two processes, as far as their caches go).  This one admitted batches of ``c``
    (its settings cached); the other deletes ``c`` and creates it again: with another config, then with another submit
    token.  This one's next batch is checked against the new campaign, not its cached view of the old one (no 500): rows
    valid only under the new config count; a batch sent with the old campaign's token is refused 401 (nothing
    counted); later batches are served as usual, each counted once."""
    this, other = _apps(tmp_path)
    token, token2 = "device-token-0123456789", "device-token-9876543210"
    _create(other, "c", OLD, token)
    assert _put(this, "c", "b0", [1, 2, 3], token).json()["accepted"] == 3  # cached by this service
    assert other.delete("/api/campaigns/c", headers=ADMIN).status_code == 200
    _create(other, "c", NEW, token)
    answer = _put(this, "c", "b1", [9, 10, 15, 16], token)  # 9..15: out of range in the old config, not in the new
    assert answer.status_code == 200, answer.text
    assert (answer.json()["accepted"], answer.json()["rejected"]) == (3, {"out_of_range": 1})
    assert _put(this, "c", "b1", [9, 10, 15, 16], token).json()["duplicate"] is True
    assert _put(this, "c", "b2", [12], token).json()["accepted"] == 1
    summary = other.get("/api/campaigns/c", headers=ADMIN).json()
    assert (summary["config"]["domain_size"], summary["n"], summary["batches"]) == (16, 4, 2)

    assert other.delete("/api/campaigns/c", headers=ADMIN).status_code == 200  # the same config, another token
    _create(other, "c", NEW, token2)
    refused = _put(this, "c", "b3", [4], token)
    assert refused.status_code == 401 and refused.json()["error"] == "unauthorized", refused.text
    assert _put(this, "c", "b4", [5, 6], token2).json()["accepted"] == 2
    summary = other.get("/api/campaigns/c", headers=ADMIN).json()
    assert (summary["n"], summary["batches"], summary["refused_batches"]) == (2, 1, {})

    assert other.delete("/api/campaigns/c", headers=ADMIN).status_code == 200  # the new campaign's token, sent first
    _create(other, "c", NEW, token)
    assert _put(this, "c", "b5", [7], token).json()["accepted"] == 1  # not refused on the cached row's token
    assert _put(this, "c", "b6", [8], token2).status_code == 401
    assert other.get("/api/campaigns/c", headers=ADMIN).json()["n"] == 1


def test_a_full_campaign_created_again_with_room_is_not_refused_on_the_cached_count(tmp_path):
    """This service saw capped campaign ``f`` full (its count and settings cached); the other deletes ``f`` and creates
    it again with room: this one's next batch counts, and no ``campaign_full`` refusal is counted in the new ``f``."""
    this, other = _apps(tmp_path)
    token = "device-token-0123456789"
    assert other.post("/api/campaigns", json={"campaign": "f", "config": OLD, "submit_token": token, "max_reports": 1},
                      headers=ADMIN).status_code == 201
    assert other.post("/api/campaigns/f/open", headers=ADMIN).status_code == 200
    assert _put(this, "f", "b0", [1], token).json()["accepted"] == 1
    assert _put(this, "f", "b1", [2], token).json()["error"] == "campaign_full"
    assert other.delete("/api/campaigns/f", headers=ADMIN).status_code == 200
    assert other.post("/api/campaigns", json={"campaign": "f", "config": OLD, "submit_token": token, "max_reports": 5},
                      headers=ADMIN).status_code == 201
    assert other.post("/api/campaigns/f/open", headers=ADMIN).status_code == 200
    answer = _put(this, "f", "b2", [3, 4], token)
    assert answer.status_code == 200 and answer.json()["accepted"] == 2, answer.text
    summary = other.get("/api/campaigns/f", headers=ADMIN).json()
    assert (summary["n"], summary["batches"], summary["refused_batches"]) == (2, 1, {})


class _Reads:
    """Counts a service's reads of campaigns: whole rows (``Store.row``: the config parsed) and creations
    (``Store.creation``: no config); ``gate``: an event the first creation read waits for."""

    def __init__(self, service, gate=None):
        self.rows = self.creations = 0
        store, row = service.store, service.store.row

        def counted_row(*args, **kwargs):
            self.rows += 1
            return row(*args, **kwargs)

        store.row = counted_row
        creation = getattr(store, "creation", None)
        if creation is not None:
            def counted_creation(*args, **kwargs):
                self.creations += 1
                if gate is not None and self.creations == 1:
                    assert gate.wait(30)
                return creation(*args, **kwargs)

            store.creation = counted_creation


def test_a_wrong_token_reads_no_config_and_leaves_the_cached_settings_to_the_valid_devices(tmp_path):
    """A token that does not open the cached settings is checked against the campaign's creation alone (no config read,
    none for the relayed and rounds answers either: one read a refusal), and the cached settings stay: the valid
    devices' batches read nothing."""
    this, _ = _apps(tmp_path)
    token = "device-token-0123456789"
    _create(this, "c", OLD, token)
    assert _put(this, "c", "b0", [1], token).status_code == 200  # cached
    reads = _Reads(this.app.state.service)
    for k in range(5):
        refused = _put(this, "c", f"w{k}", [1], "wrong-token-0123456789")
        assert refused.status_code == 401 and refused.json()["error"] == "unauthorized", refused.text
        assert _put(this, "c", f"v{k}", [2], token).status_code == 200
    assert (reads.rows, reads.creations) == (0, 5)


def test_concurrent_wrong_tokens_share_one_read_begun_after_they_asked(tmp_path):
    """16 wrong-token requests at once (the first read held until all 16 wait): they share the read that had not begun
    when they asked, and those arriving while it ran share the next one: at most 2 reads of the creation (one running,
    one waiting), none of the whole row (before: 3 whole rows a request)."""
    import asyncio
    import threading

    import httpx

    from dpdist.serve import create_app

    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN)
    service, gate = app.state.service, threading.Event()
    token = "device-token-0123456789"

    async def main():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://collector") as client:
            assert (await client.post("/api/campaigns", json={"campaign": "c", "config": OLD, "submit_token": token},
                                      headers=ADMIN)).status_code == 201
            assert (await client.post("/api/campaigns/c/open", headers=ADMIN)).status_code == 200
            warm = await client.put("/api/campaigns/c/batches/b0", json={"reports": [1]}, headers={"Authorization": f"Bearer {token}"})
            assert warm.status_code == 200
            reads = _Reads(service, gate)

            async def open_gate():  # the first read ends once all 16 requests wait for a check
                while service.queued < 16:
                    await asyncio.sleep(0.001)
                gate.set()

            answers = await asyncio.gather(open_gate(), *(client.put(
                f"/api/campaigns/c/batches/w{k}", json={"reports": [1]}, headers={"Authorization": "Bearer wrong-token-0123456789"})
                for k in range(16)))
            assert [answer.status_code for answer in answers[1:]] == [401] * 16
            return reads

    reads = asyncio.run(main())
    assert reads.rows == 0 and 1 <= reads.creations <= 2


def test_shared_reads_give_each_request_a_read_begun_after_it_asked():
    """:class:`SharedReads`: requests arriving while a read runs get the next read (not the running one's value), one
    read runs at a time per key, other keys are read apart, and an error reaches every request of its read."""
    import asyncio
    import threading

    from dpdist.serve._shared_reads import SharedReads

    async def main():
        reads, gate, values = SharedReads(), threading.Event(), iter(range(1, 100))
        running = []

        def read():
            running.append(1)
            assert len(running) == 1, "two reads of one key at once"
            if not gate.is_set():
                assert gate.wait(30)
            value = next(values)
            running.pop()
            return value

        first = asyncio.ensure_future(reads.get("k", read))
        await asyncio.sleep(0.01)  # its read began and waits
        later = [asyncio.ensure_future(reads.get("k", read)) for _ in range(5)]
        other = await reads.get("other", lambda: "apart")
        gate.set()
        assert (await first, await asyncio.gather(*later), other) == (1, [2] * 5, "apart")
        assert reads.reads == 3

        def failing():
            raise RuntimeError("database down")

        outcomes = await asyncio.gather(*(reads.get("k", failing) for _ in range(3)), return_exceptions=True)
        assert [str(outcome) for outcome in outcomes] == ["database down"] * 3 and reads.reads == 4

    asyncio.run(main())


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_a_creation_is_read_without_the_config(kind, tmp_path):
    """``Store.creation``: the creation's file id, state and token settings, whether it runs in rounds (its own
    rounds row: the campaign created again is not), None for an unknown campaign."""
    from dpdist.serve._campaigns import token_sha256
    from dpdist.serve._database import open_database
    from dpdist.serve._rounds import RoundCampaigns
    from dpdist.serve._store import Store

    with database_url(kind, tmp_path) as url:
        store = Store(open_database(url))
        store.create("c", OLD, submit_token="device-token-0123456789")
        store.transition("c", "open")
        made = store.creation("c")
        assert (made.id, made.state, made.submit_token_sha256, made.enrollment, made.relayed, made.rounds) == (
            "c", "open", token_sha256("device-token-0123456789"), False, False, False)
        assert made.made(store.row("c")) and store.creation("nope") is None
        RoundCampaigns(store).create({"campaign": "q", "rounds": {"q": [0.5], "epsilon": 1.0, "bounds": [0.0, 1.0],
                                                                  "rounds": 2, "grid_size": 16, "reports": 100}})
        rounds = store.creation("q")
        assert rounds.rounds and not rounds.relayed and rounds.state == "created"
        store.delete("q")
        store.create("q", OLD, enrollment=True)
        again = store.creation("q")
        assert not again.rounds and again.enrollment and again.export_file_id != rounds.export_file_id
        assert not again.made(store.row("c"))
        store.db.close()


def test_an_enrollment_campaign_created_again_with_a_submit_token_takes_the_new_token_at_once(tmp_path):
    """This service cached an enrollment campaign; the other deletes it and creates it again with a submit token: the new
    token counts at once (not 401 until the cache expires), the old enrollment token is refused."""
    this, other = _apps(tmp_path)
    assert other.post("/api/campaigns", json={"campaign": "e", "config": OLD, "enrollment": True}, headers=ADMIN).status_code == 201
    assert other.post("/api/campaigns/e/open", headers=ADMIN).status_code == 200
    (enrolled,) = other.post("/api/campaigns/e/enrollments", json={"count": 1, "reports": 10}, headers=ADMIN).json()["tokens"]
    assert _put(this, "e", "b0", [1], enrolled).json()["accepted"] == 1  # cached by this service
    assert other.delete("/api/campaigns/e", headers=ADMIN).status_code == 200
    token = "device-token-0123456789"
    _create(other, "e", OLD, token)
    answer = _put(this, "e", "b1", [2, 3], token)
    assert answer.status_code == 200 and answer.json()["accepted"] == 2, answer.text
    assert _put(this, "e", "b2", [4], enrolled).status_code == 401
    summary = other.get("/api/campaigns/e", headers=ADMIN).json()
    assert (summary["n"], summary["batches"], summary["enrollment"]) == (2, 1, False)


@pytest.mark.parametrize("kind", ["rounds", "relayed"])
def test_a_batch_admitted_before_its_campaign_was_created_again_as_rounds_or_relayed_gets_the_fresh_answer(kind, tmp_path):
    """This service admitted a batch against its cached view of ``q`` (no token) while the other had created ``q`` again
    as a campaign in rounds (or collected through a relay): the batch checked again gets the 409 a fresh request gets
    (``rounds_campaign``, ``relayed_campaign``: where its reports go), not a 401, and nothing is counted."""
    if kind == "relayed":
        pytest.importorskip("pyhpke")
    this, other = _apps(tmp_path, relay_token="relay-token-0123456789")
    assert other.post("/api/campaigns", json={"campaign": "q", "config": OLD}, headers=ADMIN).status_code == 201
    assert other.post("/api/campaigns/q/open", headers=ADMIN).status_code == 200
    assert _put(this, "q", "b0", [1], "").json()["accepted"] == 1  # cached by this service
    assert other.delete("/api/campaigns/q", headers=ADMIN).status_code == 200
    document = ({"rounds": {"q": [0.5], "epsilon": 1.0, "bounds": [0.0, 1.0], "rounds": 2, "grid_size": 16, "reports": 100}}
                if kind == "rounds" else {"config": OLD, "relay": {"url": "http://relay"}})
    assert other.post("/api/campaigns", json={"campaign": "q", **document}, headers=ADMIN).status_code == 201
    assert other.post("/api/campaigns/q/open", headers=ADMIN).status_code == 200
    code = f"{kind}_campaign"
    in_flight = _put(this, "q", "b1", [2], "")  # admitted on the cached row, checked again after the group said changed
    fresh = _put(this, "q", "b2", [3], "")
    assert (in_flight.status_code, in_flight.json()["error"]) == (fresh.status_code, fresh.json()["error"]) == (409, code), (
        in_flight.text, fresh.text)
    assert other.get("/api/campaigns/q", headers=ADMIN).json()["n"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_two_servers_a_campaign_created_again_through_one_while_the_other_counts_a_burst(kind, tmp_path):
    """Two ``dpdist serve`` processes on one database.  Three times: a device's batch to ``c`` through the first (its
    settings cached there), ``c`` deleted and created again with a larger domain through the second, then 24 batches
    at once through the first, half to ``c`` (rows valid only in the new domain) and half to ``d``, sent once (no
    retry): every one is answered 200 (none a 500, as a failed group commit was), every row of ``c`` counts in the new
    campaign, and ``d`` counts each of its batches once."""
    import httpx

    from dpdist.client import AdminClient

    rows = [8, 9, 10, 11, 12, 13, 14, 15]  # out of range in the old domain (8)
    with database_url(kind, tmp_path) as url:
        servers = [ServerProcess(url, log_path=tmp_path / f"server{k}.log", options=("--rate-limit", "0")).start(timeout=120)
                   for k in range(2)]
        try:
            with AdminClient(servers[1].url, admin_token=ADMIN_TOKEN) as admin:
                admin.create_campaign("d", OLD)
                admin.open_campaign("d")
                with httpx.Client(base_url=servers[0].url, timeout=60) as device:
                    for round_ in range(3):
                        admin.create_campaign("c", OLD)
                        admin.open_campaign("c")
                        warm = device.put(f"/api/campaigns/c/batches/warm{round_}", json={"reports": [1, 2]})
                        assert warm.status_code == 200, warm.text
                        admin.delete_campaign("c")
                        admin.create_campaign("c", NEW)
                        admin.open_campaign("c")

                        def send(k, round_=round_):
                            name = "c" if k % 2 else "d"
                            return name, device.put(f"/api/campaigns/{name}/batches/r{round_}b{k}",
                                                    json={"reports": rows if name == "c" else [k % 8]})

                        # fewer at once than a lagging loop sheds at: a loaded machine must not answer some 503 busy
                        with concurrent.futures.ThreadPoolExecutor(MIN_SHED - 1) as pool:
                            answers = list(pool.map(send, range(24)))
                        assert [answer.status_code for _, answer in answers] == [200] * 24, [a.text for _, a in answers]
                        assert all(answer.json()["accepted"] == (8 if name == "c" else 1) for name, answer in answers)
                        summary = admin.campaign("c")
                        assert (summary["n"], summary["batches"], summary["refused_batches"]) == (96, 12, {})
                        assert admin.campaign("d")["n"] == 12 * (round_ + 1)
                        admin.delete_campaign("c")
            assert "group commit failed" not in (tmp_path / "server0.log").read_text()
        finally:
            for server in servers:
                server.stop()
