"""The collector side of a campaign collected through a relay (in process).

``dpdist serve``'s app and ``dpdist relay``'s app run in this process, the relay delivering to the
collector through an ASGI transport: reports sent to the relay are opened with the campaign's key
and counted once; what is stored of a batch is its relay batch id, size and counts (one time for all
batches); direct submissions and forged deliveries are refused; the campaign states its local and
amplified central guarantee.  The same with real processes and SIGKILL: tests/cli/test_relay.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
import struct
import time

import httpx
import pytest

from dpdist import io, local
from dpdist._wire import _ohttp_report
from dpdist._wire._frames import frame
from dpdist._wire._identity import PIN_HEADER
from dpdist.relay import create_app as create_relay

pytest.importorskip("pyhpke")
pytest.importorskip("starlette")

from dpdist.serve import create_app  # noqa: E402 - after the extra's check

ADMIN, RELAY_TOKEN = "admin-token-0123456789", "relay-token-0123456789"
CONFIG = {"protocol": "grr", "version": 1, "epsilon": 2.0, "domain_size": 4}
ADMIN_HEADERS = {"authorization": f"Bearer {ADMIN}"}


def _collector(tmp_path, relay_token=RELAY_TOKEN):
    app = create_app(str(tmp_path / "campaigns.sqlite"), admin_token=ADMIN, relay_token=relay_token)
    return app, httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://collector", headers=ADMIN_HEADERS)


RELAY = {"url": "http://relay"}  # no issuer: the tests of admission tokens are in tests/wire/test_identity.py


async def _create(collector, name, relay=RELAY, **options):
    document = {"campaign": name, "config": CONFIG, **options, **({"relay": relay} if relay is not None else {})}
    created = await collector.post("/api/campaigns", json=document)
    if created.status_code == 201:
        assert (await collector.post(f"/api/campaigns/{name}/open")).status_code == 200
    return created


def _sealed(config_document, campaign, body, content_type="application/octet-stream"):
    """A device's report: an RFC 9458 request of ``campaign`` to the key configuration ``config_document`` names."""
    return _ohttp_report.encapsulate_report(_ohttp_report.campaign_key_config(config_document["relay"]), campaign, body,
                                            content_type)


def test_reports_through_the_relay_are_counted_once_unlinked_with_the_guarantee_stated(tmp_path):
    collector_app, collector = _collector(tmp_path)
    protocol = local.from_config(CONFIG)
    values = [i % 4 for i in range(13)]

    async def work():
        assert (await _create(collector, "anon")).status_code == 201
        relay = create_relay(str(tmp_path / "relay.sqlite"), collector="http://collector", relay_token=RELAY_TOKEN,
                             min_batch=5, max_batch=6, admin_token=ADMIN, interval=0.02,
                             transport=httpx.ASGITransport(collector_app))
        async with relay.router.lifespan_context(relay):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(relay), base_url="http://relay") as device:
                public = (await device.get("/api/campaigns/anon/config")).json()
                assert public["relay"]["ohttp"] and public["submit_token_required"] is False
                for index, value in enumerate(values):
                    body = io.encode_record(protocol, protocol.privatize([value], secure=True))
                    sent = await device.put(f"/relay/v1/campaigns/anon/ohttp/device{index}", content=_sealed(public, "anon", body),
                                            headers={PIN_HEADER: public["relay"]["pin"], "content-type": "message/ohttp-req"})
                    assert sent.status_code == 202, sent.text
                for _ in range(500):  # 13 reports, batches of 5..6: two batches delivered, one to three reports wait
                    status = (await device.get("/relay/v1/status", headers=ADMIN_HEADERS)).json()
                    if status["batches"].get("delivered", 0) >= 2 and not status["batches"].get("pending"):
                        break
                    await asyncio.sleep(0.02)
        return status, (await collector.get("/api/campaigns/anon")).json(), (await collector.get("/api/campaigns/anon/config")).json()

    status, summary, public = asyncio.run(work())
    waiting = status["waiting"].get("anon", 0)
    assert summary["n"] == len(values) - waiting and summary["batches"] == 2 and summary["rejected"] == {}
    statement = summary["anonymity"]
    assert summary["relayed"] and 5 <= statement["smallest_batch"] <= 6 and statement["reports"] == summary["n"]
    assert statement["local"]["epsilon"] == 2.0 and statement["delta"] == 1e-8
    # no issuer: anyone, the collector included, could have filled the batches, so no central guarantee is stated
    assert "no admission" in statement["central"]["reason"]
    assert any("collude" in assumption for assumption in statement["assumptions"])
    assert public["anonymity"] == statement  # what devices see (through the relay, which caches it a few seconds)
    rows = sqlite3.connect(tmp_path / "campaigns.sqlite").execute(
        "SELECT batch_id, received_ms, n_read FROM batches WHERE campaign_id = 'anon'").fetchall()
    assert len(rows) == 2 and len({received for _, received, _ in rows}) == 1  # one time for every batch: the creation minute
    assert statement["smallest_batch"] == min(n_read for *_, n_read in rows)  # the running minimum is the batches' minimum
    # (every message here held one report: the admitted reports of a batch are its messages)
    assert summary["created_at"].startswith(time.strftime("%Y-%m-%dT%H:%M", time.gmtime(rows[0][1] / 1000)))
    assert all(len(batch_id) == 32 and not batch_id.startswith("device") for batch_id, _, _ in rows)


def test_the_collectors_assumption_names_the_relays_traces_where_the_deployment_may_send_them(tmp_path, monkeypatch):
    """The relay's tracing backend is a party where traces are asked for (the OTEL_* variables) or can be (the extra
    installed): the collector's assumption then ends with the threat model's words (RELAY_TRACES); where neither, it
    says nothing of traces.  What campaign show prints and devices read (the config) alike."""
    from dpdist._http import _telemetry
    from dpdist.amplification._statement import RELAY_TRACES

    app, collector = _collector(tmp_path)

    async def shown():
        return [(await collector.get(path)).json()["anonymity"]["assumptions"]
                for path in ("/api/campaigns/anon", "/api/campaigns/anon/config")]

    async def work():
        assert (await _create(collector, "anon")).status_code == 201
        seen = {}
        for variables, installed in (({}, False), ({}, True), ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4318"}, False),
                                     ({"OTEL_TRACES_EXPORTER": "none"}, False)):
            for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER",
                         "OTEL_SDK_DISABLED"):
                monkeypatch.delenv(name, raising=False)
            for name, value in variables.items():
                monkeypatch.setenv(name, value)
            monkeypatch.setattr(_telemetry, "_installed", lambda installed=installed: installed)
            seen[tuple(variables), installed] = await shown()
        return seen

    seen = asyncio.run(work())
    for (variables, installed), (admin, public) in seen.items():
        (collector_line,) = [line for line in admin if line.startswith("collector: ")]
        traced = installed or variables == ("OTEL_EXPORTER_OTLP_ENDPOINT",)
        assert admin == public and collector_line.endswith(f", and {RELAY_TRACES}") == traced
        assert ("traces" in " ".join(admin)) == traced


def test_direct_submissions_forged_deliveries_and_odd_messages_are_refused(tmp_path):
    _, collector = _collector(tmp_path)
    protocol = local.from_config(CONFIG)
    one = io.encode_record(protocol, protocol.privatize([1], secure=True))
    two = io.encode_record(protocol, protocol.privatize([1, 2], secure=True))

    async def work():
        await _create(collector, "anon", relay={**RELAY, "delta": 1e-6}, keep_reports=True)
        await _create(collector, "plain", relay=None)
        public = (await collector.get("/api/campaigns/anon/config")).json()
        relay_headers = {"authorization": f"Bearer {RELAY_TOKEN}", "content-type": "application/vnd.dpdist.relayed-batch"}
        answers = {
            "direct": await collector.put("/api/campaigns/anon/batches/" + "a" * 32, content=one,
                                          headers={"content-type": "application/octet-stream", "authorization": ""}),
            "forged": await collector.put("/api/campaigns/anon/relayed/" + "b" * 32, content=b"",
                                          headers={**relay_headers, "authorization": "Bearer not-the-relay-token"}),
            "not relayed": await collector.put("/api/campaigns/plain/relayed/" + "c" * 32, content=b"", headers=relay_headers),
            "broken frame": await collector.put("/api/campaigns/anon/relayed/" + "d" * 32, content=struct.pack(">I", 99) + b"x",
                                                headers=relay_headers),
            "enrollment": await _create(collector, "enrolled", enrollment=True),
            "submit token": await _create(collector, "tokened", submit_token="s" * 20),
            "bad delta": await _create(collector, "delta", relay={**RELAY, "delta": 2}),
        }
        messages = [_sealed(public, "anon", one), _sealed(public, "anon", two), _sealed(public, "other", one),
                    _sealed(public, "anon", b"not records"), _sealed(public, "anon", one)]
        batch = frame(messages)
        first = await collector.put("/api/campaigns/anon/relayed/" + "e" * 32, content=batch, headers=relay_headers)
        again = await collector.put("/api/campaigns/anon/relayed/" + "e" * 32, content=batch, headers=relay_headers)
        summary = (await collector.get("/api/campaigns/anon")).json()
        exported = await collector.get("/api/campaigns/anon/reports")
        deleted = await collector.delete("/api/campaigns/anon")
        return answers, first.json(), again.json(), summary, exported, deleted

    answers, first, again, summary, exported, deleted = asyncio.run(work())
    codes = {name: (answer.status_code, answer.json()["error"]) for name, answer in answers.items()}
    assert codes == {"direct": (409, "relayed_campaign"), "forged": (401, "unauthorized"), "not relayed": (409, "not_relayed"),
                     "broken frame": (400, "malformed_batch"), "enrollment": (400, "invalid_relay"),
                     "submit token": (400, "invalid_relay"), "bad delta": (400, "invalid_relay")}
    # five messages, five rows: two reports counted, one message of two reports, one a request of another campaign, one
    # unreadable
    assert first["n_read"] == 5 and first["accepted"] == 2 and not first["duplicate"]
    assert first["rejected"] == {"not_one_report": 1, "not_a_report_request": 1, "malformed_report": 1} and again["duplicate"]
    # the smallest batch counts the reports the collector opened and read, not the messages it could not
    assert summary["n"] == 2 and summary["anonymity"]["smallest_batch"] == 2 and summary["anonymity"]["delta"] == 1e-6
    (tmp_path / "kept.bin").write_bytes(exported.content)
    assert exported.status_code == 200 and io.read_reports(tmp_path / "kept.bin", protocol).n_read == 2
    assert deleted.status_code == 200
    assert sqlite3.connect(tmp_path / "campaigns.sqlite").execute("SELECT COUNT(*) FROM relayed_campaigns").fetchone() == (0,)


def test_the_smallest_batch_is_kept_as_batches_arrive_and_survives_a_restart(tmp_path):
    """The statement's smallest batch is a running minimum kept by the group commits (no scan of the batches per
    request): it falls with a smaller delivery, not with a redelivery or a larger one, and a new service reads it."""
    protocol = local.from_config(CONFIG)
    one = io.encode_record(protocol, protocol.privatize([1], secure=True))
    relay_headers = {"authorization": f"Bearer {RELAY_TOKEN}", "content-type": "application/vnd.dpdist.relayed-batch"}

    batches: dict = {}

    async def deliver(collector, public, batch_id, size):
        batch = batches.setdefault(batch_id, frame([_sealed(public, "anon", one) for _ in range(size)]))
        answer = await collector.put(f"/api/campaigns/anon/relayed/{batch_id * 32}", content=batch, headers=relay_headers)
        assert answer.status_code == 200, answer.text
        return (await collector.get("/api/campaigns/anon/config")).json()["anonymity"]["smallest_batch"]

    async def work():
        _, collector = _collector(tmp_path)
        await _create(collector, "anon")
        public = (await collector.get("/api/campaigns/anon/config")).json()
        assert public["anonymity"]["smallest_batch"] is None
        smallest = [await deliver(collector, public, batch_id, size) for batch_id, size in (("a", 4), ("b", 6), ("c", 3))]
        smallest.append(await deliver(collector, public, "b", 6))  # a redelivery
        _, restarted = _collector(tmp_path)
        return smallest, (await restarted.get("/api/campaigns/anon")).json()["anonymity"]["smallest_batch"]

    smallest, after_restart = asyncio.run(work())
    assert smallest == [4, 4, 3, 3] and after_restart == 3


def test_a_relayed_campaign_needs_the_services_relay_token(tmp_path):
    _, collector = _collector(tmp_path, relay_token=None)
    created = asyncio.run(_create(collector, "anon"))
    assert created.status_code == 409 and created.json()["error"] == "no_relay_token"


def test_a_relay_or_issuer_url_with_a_password_or_a_bad_port_is_refused_and_never_served(tmp_path):
    """A relayed campaign's config and identity are public: a ``user:password@`` in its relay's or issuer's URL is
    refused at creation (masked in the refusal), and one an older database holds is served without it."""
    import hashlib

    _, collector = _collector(tmp_path)
    issuer = {"url": "http://alice:S3cretPW@issuer", "name": "issuer", "key": "k", "token_key": "AAAA",
              "independent": True, "tokens_each": 1}

    async def work():
        refused = [await _create(collector, f"c{index}", relay=relay) for index, relay in enumerate((
            {"url": "http://alice:S3cretPW@relay:8443"}, {"url": "http://alice@relay"}, {"url": "http://relay:99999"},
            {"url": "http://relay:0"}, {**RELAY, "issuer": issuer}))]
        assert (await _create(collector, "old")).status_code == 201
        database = sqlite3.connect(tmp_path / "campaigns.sqlite")
        with database:  # as a dpdist that took the password stored it
            database.execute("UPDATE relayed_campaigns SET identity = replace(identity, '\"http://relay\"', "
                             "'\"http://alice:S3cretPW@relay\"')")
        assert b"S3cretPW" in database.execute("SELECT identity FROM relayed_campaigns").fetchone()[0].encode()
        served = [await collector.get(f"/api/campaigns/old/{path}", headers={"authorization": ""})
                  for path in ("config", "identity")]
        return refused, served

    refused, (config, identity) = asyncio.run(work())
    assert [(answer.status_code, answer.json()["error"]) for answer in refused] == [(400, "invalid_relay")] * 5
    assert all("S3cretPW" not in answer.text for answer in refused)
    assert "alice:***@relay:8443" in refused[0].text and "user:password@" in refused[0].text
    assert config.status_code == identity.status_code == 200
    assert "S3cretPW" not in config.text and "S3cretPW" not in identity.text and "alice" not in identity.text
    assert config.json()["relay"]["url"] == "http://relay"
    assert config.json()["relay"]["pin"] == hashlib.sha256(identity.content).hexdigest()  # a device still checks it


def test_each_envelopes_reports_are_counted_in_the_metrics_and_a_campaign_takes_dpdists_envelope_only_when_asked(tmp_path):
    """A batch of three RFC 9458 requests and two reports of dpdist's deprecated envelope (from devices of an earlier
    version, still opened) is counted under each envelope in ``dpdist_relayed_reports_total``, once (not again when
    redelivered); a campaign made without ``sealed_v1`` does not take that envelope, one made with it does."""
    from sealed_v1_support import public_key_of, seal

    protocol = local.from_config(CONFIG)
    one = io.encode_record(protocol, protocol.privatize([1], secure=True))
    relay_headers = {"authorization": f"Bearer {RELAY_TOKEN}", "content-type": "application/vnd.dpdist.relayed-batch"}

    async def work():
        _, collector = _collector(tmp_path)
        await _create(collector, "strict")
        await _create(collector, "mixed", relay={**RELAY, "sealed_v1": True})
        public = (await collector.get("/api/campaigns/mixed/config")).json()
        old = seal(public_key_of(public["relay"]), "mixed", one, "application/octet-stream")
        batch = frame([_sealed(public, "mixed", one) for _ in range(3)] + [old, old[:-1] + b"\x00"])
        for _ in range(2):  # a redelivery counts nothing again
            answer = await collector.put("/api/campaigns/mixed/relayed/" + "a" * 32, content=batch, headers=relay_headers)
        strict = (await collector.get("/api/campaigns/strict/config")).json()
        return answer.json(), public, strict, (await collector.get("/metrics")).text, (await collector.get("/api/campaigns/mixed")).json()

    ack, mixed, strict, metrics, summary = asyncio.run(work())
    assert ack["duplicate"] and summary["n"] == 4 and summary["rejected"] == {"unopened": 1}
    assert summary["anonymity"]["smallest_batch"] == 1  # hidden among its own envelope's reports: one
    assert 'dpdist_relayed_reports_total{envelope="ohttp"} 3.0' in metrics
    assert 'dpdist_relayed_reports_total{envelope="sealed_v1"} 1.0' in metrics
    assert mixed["relay"]["envelopes"] == {"sealed_v1": True, "ohttp": True}
    assert strict["relay"]["envelopes"] == {"sealed_v1": False, "ohttp": True}


def test_the_relay_token_rotates_with_the_relay_delivering_under_either_during_the_overlap(tmp_path):
    """The rotation of the operations page: the collector started with the new relay token and the previous one takes
    the relay's batches under either (a relay not yet restarted keeps delivering, nothing waits), its open campaigns'
    binding moved to the new token; started with the new token alone, it refuses the old one. A redelivery under the
    new token of a batch counted under the old is a duplicate."""
    protocol = local.from_config(CONFIG)
    one = io.encode_record(protocol, protocol.privatize([1], secure=True))
    old, new = "relay-token-old-0123456789", "relay-token-new-0123456789"
    batches: dict = {}  # a relay redelivers a batch's very bytes

    def started(token, previous=None):
        app = create_app(str(tmp_path / "campaigns.sqlite"), admin_token=ADMIN, relay_token=token,
                         previous_relay_token=previous)
        return httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://collector", headers=ADMIN_HEADERS)

    async def deliver(collector, campaign, batch_id, token, size=3):
        public = (await collector.get(f"/api/campaigns/{campaign}/config")).json()
        batch = batches.setdefault(batch_id, frame([_sealed(public, campaign, one) for _ in range(size)]))
        answer = await collector.put(f"/api/campaigns/{campaign}/relayed/{batch_id * 32}", content=batch, headers={
            "authorization": f"Bearer {token}", "content-type": "application/vnd.dpdist.relayed-batch"})
        return answer.status_code, answer.json().get("duplicate")

    async def work():
        before = started(old)
        await _create(before, "anon")
        answers = [await deliver(before, "anon", "a", old)]
        during = started(new, previous=old)  # 1. the collector first, with both tokens
        await _create(during, "fresh")  # bound to the new token
        answers += [await deliver(during, "anon", "b", old), await deliver(during, "fresh", "c", old),
                    await deliver(during, "anon", "d", new)]  # 2. the relay restarted with the new token
        after = started(new)  # 3. the previous token dropped
        answers += [await deliver(after, "anon", "e", old), await deliver(after, "fresh", "f", old),
                    await deliver(after, "anon", "b", new), await deliver(after, "fresh", "g", new)]
        return answers, [(await after.get(f"/api/campaigns/{name}")).json()["n"] for name in ("anon", "fresh")]

    answers, counted = asyncio.run(work())
    assert [status for status, _ in answers] == [200, 200, 200, 200, 401, 401, 200, 200]
    assert answers[6] == (200, True)  # "b" again, under the new token: counted once
    assert counted == [3 * 3, 2 * 3]
