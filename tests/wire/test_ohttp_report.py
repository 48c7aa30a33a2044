"""RFC 9458 requests through dpdist's own relay (dpdist._wire._ohttp_report): the one envelope devices seal reports in.

Issuer, relay and collector run in one process (:mod:`relay_parties`), reached as http://issuer, http://relay and
http://collector.  Devices send reports as Oblivious HTTP requests (``message/ohttp-req``) encapsulated to the key
configuration of the campaign's identity; the collector counts each once; a replayed request counts once; malformed
requests are refused (by the relay) or rejected (by the collector) by name.  A device of an earlier version that seals
in dpdist's deprecated envelope (:mod:`sealed_v1_support`) is served while the campaign takes it: its reports share a
batch only as a group of at least K of their own, are refused by name once the campaign turns the envelope off, and a
report the relay acknowledged is never lost.
"""

from __future__ import annotations

import base64
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import httpx
import numpy as np
import pytest

pytest.importorskip("pyhpke")
pytest.importorskip("starlette")
pytest.importorskip("cryptography")

pytestmark = pytest.mark.usefixtures("pooled_issuer_keys")  # RSA keys made once per session (tests/issuer_key_pool.py)

from relay_parties import RELAY_TOKEN, Parties  # noqa: E402 - after the extras' checks
from sealed_v1_support import CONTENT_TYPE as SEALED_V1_TYPE, public_key_of, seal  # noqa: E402

from dpdist import io, local  # noqa: E402
from dpdist.errors import CampaignIdentityError, InvalidParameterError, OutOfDomainError, ServiceRefusedError  # noqa: E402
from dpdist import _ohttp  # noqa: E402
from dpdist._ohttp import _bhttp  # noqa: E402
from dpdist._wire import _envelope, _ohttp_report  # noqa: E402
from dpdist._wire._frames import frame, unframe  # noqa: E402
from dpdist._wire._identity import PIN_HEADER, pin_of  # noqa: E402
from dpdist.relay._queue import OHTTP, RelayQueue  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CONFIG = {"protocol": "grr", "version": 1, "epsilon": 4.0, "domain_size": 8}
PROTOCOL = local.from_config(CONFIG)


def _record(value: int) -> bytes:
    return io.encode_record(PROTOCOL, PROTOCOL.privatize([value], secure=True))


def _summary(parties, name) -> dict:
    return parties.admin("collector", "GET", f"/api/campaigns/{name}").json()


def _route(parties, name):
    """The campaign's public config and the key configuration of its identity (checked against the pin)."""
    public = parties.client().config(name)
    identity = parties.run(parties.clients["collector"].get(f"/api/campaigns/{name}/identity")).content
    assert pin_of(identity) == public["relay"]["pin"]
    config = _ohttp_report.campaign_key_config(json.loads(identity)["relay"])
    assert config is not None and public["relay"]["ohttp"] == json.loads(identity)["relay"]["ohttp"]
    return public, config


def _put(parties, name, report_id, body, pin, content_type=_ohttp.REQUEST_CONTENT_TYPE, route="ohttp"):
    return parties.run(parties.clients["relay"].put(f"/relay/v1/campaigns/{name}/{route}/{report_id}", content=body,
                                                    headers={"content-type": content_type, PIN_HEADER: pin}))


def _paused(tmp_path, *, min_batch: int, max_batch: int) -> Parties:
    """The parties with a relay whose forwarder runs only when the test says (:func:`_step`): batches formed when the
    test has sent what it means to, whatever the machine's speed."""
    from dpdist.relay import create_app as create_relay

    parties = Parties(tmp_path, min_batch=min_batch, max_batch=max_batch)
    parties.apps["relay"] = create_relay(
        str(tmp_path / "relay.sqlite"), collector="http://collector", relay_token=RELAY_TOKEN, min_batch=min_batch,
        max_batch=max_batch, admin_token="admin-token-0123456789", interval=3600.0,
        transport=httpx.ASGITransport(parties.apps["collector"]))
    return parties


def _step(parties) -> dict:
    """One turn of the relay's forwarder (form what can be formed, deliver what is formed); the relay's status."""
    assert parties.run(parties.apps["relay"].state.relay.forwarder.step())
    return parties.admin("relay", "GET", "/relay/v1/status").json()


def _old(public, name, value):
    """A report of ``value`` a device of an earlier version sealed in dpdist's deprecated envelope."""
    return seal(public_key_of(public["relay"]), name, _record(value), "application/octet-stream")


def _deliver(parties, name, batch_id, messages):
    """A relayed batch delivered as the relay would (its token), straight to the collector; the acknowledgement."""
    answer = parties.run(parties.clients["collector"].put(
        f"/api/campaigns/{name}/relayed/{batch_id}", content=frame(messages),
        headers={"authorization": f"Bearer {RELAY_TOKEN}", "content-type": "application/vnd.dpdist.relayed-batch"}))
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.mark.slow  # 0.28 CPU-s: collector, relay and issuer end to end
def test_devices_reports_are_rfc9458_requests_counted_once_in_one_shuffled_batch(tmp_path):
    with _paused(tmp_path, min_batch=3, max_batch=6) as parties:
        public = parties.relayed_campaign("one", CONFIG, issuer_key="one")
        assert public["relay"]["envelopes"] == {"sealed_v1": False, "ohttp": True}  # dpdist's envelope: not taken
        _route(parties, "one")  # the identity names the key configuration, and the pin covers it
        for index, credential in enumerate(parties.credentials("one", 6)):
            with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
                device.config("one")
                ack = device.submit_reports("one", PROTOCOL, np.array([index + 1], dtype=np.uint64), batch_id=f"d{index}")
                again = device.submit_reports("one", PROTOCOL, np.array([index + 1], dtype=np.uint64), batch_id=f"d{index}")
                assert ack["relayed"] == 1 and ack["duplicates"] == 0 and again["duplicates"] == 1  # a retry: the same report
        status = _step(parties)
        assert status["batches"] == {"delivered": 1} and status["reports_in_batches"] == {"delivered": 6}
        summary = _summary(parties, "one")
        assert summary["n"] == 6 and summary["rejected"] == {} and summary["anonymity"]["smallest_batch"] == 6
        rows = sqlite3.connect(tmp_path / "relay.sqlite").execute("SELECT envelope, COUNT(*) FROM reports GROUP BY envelope")
        assert dict(rows.fetchall()) == {OHTTP: 6}


def test_an_earlier_devices_envelope_forms_its_own_part_of_a_batch_of_at_least_k(tmp_path):
    """Four reports of devices of an earlier version in dpdist's deprecated envelope and two RFC 9458 requests, K = 3: a
    batch of the four only; the two wait for K of their own (the collector tells the envelopes apart)."""
    with _paused(tmp_path, min_batch=3, max_batch=10) as parties:
        public = parties.relayed_campaign("parts", CONFIG, issuer_key=None, sealed_v1=True)
        for index in range(6):
            if index < 4:
                answer = _put(parties, "parts", f"p{index}", _old(public, "parts", index), public["relay"]["pin"],
                              SEALED_V1_TYPE, "reports")
                assert answer.status_code == 202, answer.text
                continue
            with parties.client() as device:
                device.config("parts")  # the route: the identity, from the collector
                device.submit_reports("parts", PROTOCOL, np.array([index], dtype=np.uint64), batch_id=f"p{index}")
        status = _step(parties)
        assert status["reports_in_batches"] == {"delivered": 4} and status["waiting"] == {"parts": 2}
        assert status["waiting_by_envelope"] == {"parts": {"ohttp": 2}}  # waiting for K of their own
        with parties.client() as device:
            device.config("parts")
            device.submit_reports("parts", PROTOCOL, np.array([7], dtype=np.uint64), batch_id="p7")
        status = _step(parties)
        assert status["reports_in_batches"] == {"delivered": 7} and not status["waiting"].get("parts")
        summary = _summary(parties, "parts")
        assert summary["n"] == 7 and summary["anonymity"]["smallest_batch"] == 3


def test_a_replayed_encapsulated_request_counts_once(tmp_path):
    with Parties(tmp_path, min_batch=2, max_batch=2) as parties:
        parties.relayed_campaign("replay", CONFIG, issuer_key=None, sealed_v1=True)  # no tokens: a replay is stopped by its enc
        public, config = _route(parties, "replay")
        pin = public["relay"]["pin"]
        request = _ohttp_report.encapsulate_report(config, "replay", _record(3), "application/octet-stream")
        first = _put(parties, "replay", "r1", request, pin)
        assert first.status_code == 202 and first.json() == {"campaign": "replay", "report_id": "r1", "duplicate": False,
                                                             "queued": True}
        for report_id in ("r1", "r2", "r3"):  # the same request again, under its id and under others
            again = _put(parties, "replay", report_id, request, pin)
            assert again.status_code == 202 and again.json()["duplicate"] is True
        sealed = _old(public, "replay", 4)  # an earlier device's envelope replayed under another id: the same report
        for report_id in ("s1", "s2"):
            answer = _put(parties, "replay", report_id, sealed, pin, SEALED_V1_TYPE, "reports")
            assert answer.status_code == 202 and answer.json()["duplicate"] is (report_id == "s2")
        # one more report of each envelope: K = 2 of each, two batches
        other = _ohttp_report.encapsulate_report(config, "replay", _record(5), "application/octet-stream")
        assert _put(parties, "replay", "r4", other, pin).json()["duplicate"] is False
        assert _put(parties, "replay", "s3", _old(public, "replay", 6), pin, SEALED_V1_TYPE, "reports").json()["duplicate"] is False
        status = parties.wait_delivered(2)
        assert status["reports_in_batches"] == {"delivered": 4}
        summary = _summary(parties, "replay")
        assert summary["n"] == 4 and summary["rejected"] == {}


@pytest.mark.slow  # 0.30 CPU-s: collector, relay and issuer end to end
def test_a_lying_relay_cannot_count_one_report_twice_under_its_token_or_other_devices_tokens(tmp_path):
    """A relay sees every token: it can attach other devices' valid tokens to copies of one report, or send a report
    with its own token again.  Each token is bound to its report: on a copy of another report it is refused
    (``token_not_bound``) and not spent, so the devices whose tokens were used still count when their own reports
    arrive; a report sent again with its own token counts once (``token_spent``), within a batch and across."""
    from dpdist.privacypass import TOKEN_LENGTH

    with _paused(tmp_path, min_batch=2, max_batch=10) as parties:
        parties.relayed_campaign("copies", CONFIG, issuer_key="copies")
        for index, credential in enumerate(parties.credentials("copies", 5)):
            with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
                device.config("copies")
                device.submit_reports("copies", PROTOCOL, np.array([index], dtype=np.uint64), batch_id=f"d{index}")
        with sqlite3.connect(tmp_path / "relay.sqlite") as queue:
            waiting = [bytes(row[0]) for row in queue.execute("SELECT sealed FROM reports ORDER BY key").fetchall()]
        assert len(waiting) == 5
        tokens, reports = [message[:TOKEN_LENGTH] for message in waiting], [message[TOKEN_LENGTH:] for message in waiting]
        # every waiting token on a copy of one report: its own token counts it, four are refused
        ack = _deliver(parties, "copies", "a" * 32, [token + reports[0] for token in tokens])
        assert ack["accepted"] == 1 and ack["rejected"] == {"token_not_bound": 4}
        # a report twice with its own token in one batch, then a third time in another batch
        ack = _deliver(parties, "copies", "b" * 32, [tokens[4] + reports[4]] * 2)
        assert ack["accepted"] == 1 and ack["rejected"] == {"token_spent": 1}
        ack = _deliver(parties, "copies", "c" * 32, [tokens[4] + reports[4]])
        assert ack["accepted"] == 0 and ack["rejected"] == {"token_spent": 1}
        summary = _summary(parties, "copies")
        assert summary["n"] == 2 and summary["anonymity"]["smallest_batch"] == 1  # what the collector verified
        # the honest batch: devices 1 to 3, whose tokens were put on copies, still count; reports 0 and 4 count once
        assert _step(parties)["batches"] == {"delivered": 1}
        summary = _summary(parties, "copies")
        assert summary["n"] == 5 and summary["rejected"] == {"token_not_bound": 4, "token_spent": 4}


def test_dpdist_envelope_refused_by_name_once_the_campaign_turns_it_off(tmp_path):
    with Parties(tmp_path, min_batch=2, max_batch=4) as parties:
        public = parties.relayed_campaign("off", CONFIG, issuer_key=None, sealed_v1=True)
        _, config = _route(parties, "off")
        early = [_old(public, "off", value) for value in (1, 2)]
        bad = parties.admin("collector", "PUT", "/api/campaigns/off/envelopes", json={"sealed_v1": "no"})
        assert bad.status_code == 400 and bad.json()["error"] == "invalid_envelopes"
        with parties.operator(admin_token="admin-token-0123456789") as operator:
            turned = operator.set_relay_envelopes("off", sealed_v1=False)
            assert turned == {"campaign": "off", "envelopes": {"sealed_v1": False, "ohttp": True}}
            with pytest.raises(InvalidParameterError, match="sealed_v1"):
                operator.set_relay_envelopes("off", sealed_v1="no")  # type: ignore[arg-type]
        assert parties.client().config("off")["relay"]["envelopes"]["sealed_v1"] is False
        # the relay refuses the old envelope by name
        refused = _put(parties, "off", "old", early[0], public["relay"]["pin"], SEALED_V1_TYPE, "reports")
        assert refused.status_code == 409 and refused.json()["error"] == "sealed_v1_off"
        # acknowledged by the relay before and delivered after: still counted (a report the relay acknowledged is never lost)
        ack = _deliver(parties, "off", "a" * 32, early + [_ohttp_report.encapsulate_report(
            config, "off", _record(5), "application/octet-stream")])
        assert ack["accepted"] == 3 and ack["rejected"] == {}
        # a device sends RFC 9458 requests, whatever the deprecated relay_envelope asks
        with pytest.warns(DeprecationWarning, match="relay_envelope"):
            device = parties.client(relay_envelope="dpdist")
        with device:
            device.config("off")  # the route: the identity, from the collector
            device.submit_reports("off", PROTOCOL, np.array([6, 7], dtype=np.uint64))
        parties.wait_delivered(1)
        assert _summary(parties, "off")["n"] == 5


def test_turning_dpdist_envelope_off_strands_no_acknowledged_report(tmp_path):
    """Two reports in dpdist's envelope wait (K = 3) when the campaign turns it off: a retry of one is ``duplicate`` (not
    ``sealed_v1_off``), and the relay takes such reports until they are K, so that they form a batch and count."""
    with _paused(tmp_path, min_batch=3, max_batch=10) as parties:
        public = parties.relayed_campaign("strand", CONFIG, issuer_key=None, sealed_v1=True)
        pin = public["relay"]["pin"]
        early = {f"s{value}": _old(public, "strand", value) for value in (1, 2)}
        for report_id, body in early.items():
            assert _put(parties, "strand", report_id, body, pin, SEALED_V1_TYPE, "reports").status_code == 202
        assert parties.admin("collector", "PUT", "/api/campaigns/strand/envelopes", json={"sealed_v1": False}).status_code == 200
        parties.apps["relay"].state.relay.pages.cache.clear()  # the relay reads the campaign's config again now
        retry = _put(parties, "strand", "s1", early["s1"], pin, SEALED_V1_TYPE, "reports")
        assert retry.status_code == 202 and retry.json()["duplicate"] is True
        third = _put(parties, "strand", "s3", _old(public, "strand", 3), pin, SEALED_V1_TYPE, "reports")
        assert third.status_code == 202 and third.json()["duplicate"] is False  # the third of K = 3
        fourth = _put(parties, "strand", "s4", _old(public, "strand", 4), pin, SEALED_V1_TYPE, "reports")
        assert fourth.status_code == 409 and fourth.json()["error"] == "sealed_v1_off"  # K wait: refused again
        status = _step(parties)
        assert status["reports_in_batches"] == {"delivered": 3} and not status["waiting"].get("strand")
        assert _summary(parties, "strand")["n"] == 3


def test_an_out_of_domain_value_uses_up_no_token(tmp_path):
    """The Python client checks the values before it fetches a token: a credential of one token, an out-of-domain value
    refused, and the device (another process: no token kept in memory) still reports with it."""
    with _paused(tmp_path, min_batch=2, max_batch=4) as parties:
        parties.relayed_campaign("domain", CONFIG, issuer_key="domain")
        credential = parties.credentials("domain", 1)[0]
        with parties.client(issuer_credential=credential, issuer="http://issuer") as device, pytest.raises(OutOfDomainError):
            device.submit_values("domain", [8])  # the domain is 0..7
        with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
            assert device.submit_values("domain", [7])[0]["relayed"] == 1
        assert parties.admin("relay", "GET", "/relay/v1/status").json()["waiting"] == {"domain": 1}


def test_a_campaign_takes_dpdist_envelope_only_when_asked_and_a_campaign_not_relayed_has_none(tmp_path):
    with Parties(tmp_path, min_batch=2, max_batch=4) as parties:
        with parties.operator(admin_token="admin-token-0123456789") as operator:
            operator.create_campaign("strict", CONFIG, relay={"url": "http://relay", "issuer": None})
            operator.open_campaign("strict")
            with pytest.raises(ServiceRefusedError) as wrong:
                operator.create_campaign("bad", CONFIG, relay={"url": "http://relay", "issuer": None, "sealed_v1": 0})
            assert wrong.value.code == "invalid_relay"
            operator.create_campaign("direct", CONFIG)
        refused = parties.admin("collector", "PUT", "/api/campaigns/direct/envelopes", json={"sealed_v1": False})
        assert refused.status_code == 409 and refused.json()["error"] == "not_relayed"
        public, _ = _route(parties, "strict")
        refused = _put(parties, "strict", "x", _old(public, "strict", 1), public["relay"]["pin"], SEALED_V1_TYPE, "reports")
        assert refused.status_code == 409 and refused.json()["error"] == "sealed_v1_off"
        with pytest.raises(InvalidParameterError, match="relay_envelope"):
            parties.client(relay_envelope="v1")


def test_malformed_encapsulated_requests_are_refused_by_name(tmp_path):
    with Parties(tmp_path, min_batch=50, max_batch=50) as parties:
        parties.relayed_campaign("bad", CONFIG, issuer_key=None)
        public, config = _route(parties, "bad")
        pin = public["relay"]["pin"]
        good = _ohttp_report.encapsulate_report(config, "bad", _record(2), "application/octet-stream")
        # the relay: what it can check without the key
        wrong_type = _put(parties, "bad", "t", good, pin, content_type="application/octet-stream")
        assert wrong_type.status_code == 415 and wrong_type.json()["error"] == "not_ohttp"
        for body in (good[:40], bytes([7]) + good[1:], good[:3] + b"\x00\x02" + good[5:]):  # short, key id, KDF
            answer = _put(parties, "bad", "m", body, pin)
            assert answer.status_code == 400 and answer.json()["error"] == "not_encapsulated", answer.text
        # the collector: what opens wrong, each a rejected row by name
        other = _ohttp.KeyConfig(_ohttp_report.KEY_ID, _ohttp.public_key_of(bytes(range(32))))
        inner = _bhttp.encode_request(_bhttp.Request("GET", "https", "", "/api/campaigns/bad/config"))
        elsewhere = _ohttp_report.report_request("other", _record(2), "application/octet-stream")
        broken = {
            "unopened": [good[:-1] + bytes([good[-1] ^ 1]),
                         _ohttp_report.encapsulate_report(other, "bad", _record(2), "application/octet-stream")],
            "malformed_binary_http": [_ohttp.encapsulate_request(config, b"\x05junk")[0]],
            "not_a_report_request": [_ohttp.encapsulate_request(config, inner)[0],
                                     _ohttp.encapsulate_request(config, elsewhere)[0]],
            "malformed_report": [_ohttp_report.encapsulate_report(config, "bad", b"not a record", "application/octet-stream")],
        }
        ack = _deliver(parties, "bad", "b" * 32, [message for messages in broken.values() for message in messages] + [good])
        assert ack["accepted"] == 1 and ack["rejected"] == {reason: len(messages) for reason, messages in broken.items()}
        assert _summary(parties, "bad")["anonymity"]["smallest_batch"] == 1


def test_a_report_of_another_length_than_the_campaigns_is_refused_by_name(tmp_path):
    """Every report of a campaign pads to one length: the relay refuses another (a few long reports would make their
    batch larger than the collector reads, and the acknowledged reports beside them would never count)."""
    with Parties(tmp_path, min_batch=50, max_batch=50) as parties:
        parties.relayed_campaign("long", CONFIG, issuer_key=None, sealed_v1=True)
        public, config = _route(parties, "long")
        pin = public["relay"]["pin"]
        good = _ohttp_report.encapsulate_report(config, "long", _record(2), "application/octet-stream")
        assert len(good) == _ohttp_report.report_length("long", CONFIG)
        for index, body in enumerate((good + bytes(1000), good + bytes(1), good[:-1])):
            answer = _put(parties, "long", f"l{index}", body, pin)
            assert answer.status_code == 400 and answer.json()["error"] == "wrong_length", answer.text
        key = public_key_of(public["relay"])
        sealed = seal(key, "long", _record(2) + bytes(4000), "application/octet-stream")
        answer = _put(parties, "long", "s", sealed, pin, SEALED_V1_TYPE, "reports")
        assert answer.status_code == 400 and answer.json()["error"] == "wrong_length", answer.text
        assert _put(parties, "long", "g", good, pin).status_code == 202
        assert _put(parties, "long", "h", _old(public, "long", 3), pin, SEALED_V1_TYPE, "reports").status_code == 202
        assert parties.admin("relay", "GET", "/relay/v1/status").json()["waiting"] == {"long": 2}


def test_a_device_refuses_a_campaign_whose_identity_names_no_key_before_anything_is_drawn(tmp_path):
    """A campaign made before relayed campaigns had a key configuration (its identity names none) takes dpdist's
    deprecated envelope only: a device of this version refuses it (``no_ohttp_key``) before anything is drawn, and its
    operator creates it again; an earlier device's report in that envelope is still taken."""
    with Parties(tmp_path, min_batch=2, max_batch=4) as parties:
        parties.relayed_campaign("old", CONFIG, issuer_key=None)
        db = sqlite3.connect(tmp_path / "campaigns.sqlite")
        identity = json.loads(db.execute("SELECT identity FROM relayed_campaigns").fetchone()[0])
        del identity["relay"]["ohttp"]
        made = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        db.execute("UPDATE relayed_campaigns SET identity = ?, ohttp_private_key = NULL, sealed_v1 = 1", (made,))
        db.commit()
        db.close()
        with parties.client() as device, pytest.raises(CampaignIdentityError) as refused:
            device.submit_values("old", [1])
        assert refused.value.code == "no_ohttp_key" and "Nothing was drawn" in str(refused.value)
        public = parties.client().config("old")
        assert "ohttp" not in public["relay"] and public["relay"]["envelopes"] == {"sealed_v1": True, "ohttp": False}
        config = _ohttp.KeyConfig(0, _ohttp.public_key_of(bytes(range(32))))
        request = _ohttp_report.encapsulate_report(config, "old", _record(1), "application/octet-stream")
        answer = _put(parties, "old", "x", request, public["relay"]["pin"])
        assert answer.status_code == 409 and answer.json()["error"] == "no_ohttp_key"
        assert _put(parties, "old", "y", _old(public, "old", 1), public["relay"]["pin"], SEALED_V1_TYPE, "reports").status_code == 202
        turned = parties.admin("collector", "PUT", "/api/campaigns/old/envelopes", json={"sealed_v1": False})
        assert turned.status_code == 409 and turned.json()["error"] == "no_ohttp_key"


def test_every_report_of_a_campaign_encapsulates_to_one_length_and_opens_only_for_its_campaign():
    """The relay sees one length for every RFC 9458 report of a campaign (as for dpdist's deprecated envelope, whose
    length is another: the two envelopes are told apart by their lengths, which the statement's assumptions say)."""
    private = bytes(range(1, 33))
    config = _ohttp.KeyConfig(_ohttp_report.KEY_ID, _ohttp.public_key_of(private))
    lengths = {len(_ohttp_report.encapsulate_report(config, "c", _record(value), "application/octet-stream"))
               for value in range(8) for _ in range(5)}
    assert len(lengths) == 1
    record = _record(3)
    request = _ohttp_report.encapsulate_report(config, "c", record, "application/octet-stream")
    assert _ohttp_report.open_report(private, "c", request, 1 << 20) == ("application/octet-stream", record)
    with pytest.raises(_ohttp_report.NotAReport) as elsewhere:
        _ohttp_report.open_report(private, "d", request, 1 << 20)
    assert elsewhere.value.reason == "not_a_report_request"
    sealed = seal(_envelope.generate_key().public_key, "c", _record(3), "application/octet-stream")
    assert len(sealed) not in lengths and not _ohttp_report.is_encapsulated(sealed) and _ohttp_report.is_encapsulated(request)


def test_the_javascript_client_encapsulates_a_report_to_pythons_length_and_it_opens_in_python():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    private = bytes(range(1, 33))
    keys = _ohttp_report.key_list(_ohttp.public_key_of(private))
    record = _record(5)
    script = (f"import {{ encapsulateForRelay, relayKeyConfig }} from {json.dumps(str(ROOT / 'clients/js/src/relay.js'))};"
              f"const config = relayKeyConfig({{ ohttp: {json.dumps(base64.urlsafe_b64encode(keys).rstrip(b'=').decode())} }});"
              f"const out = await encapsulateForRelay(config, 'c', Uint8Array.from(Buffer.from('{record.hex()}', 'hex')));"
              "process.stdout.write(Buffer.from(out).toString('hex'));")
    result = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    encapsulated = bytes.fromhex(result.stdout)
    assert _ohttp_report.open_report(private, "c", encapsulated, 1 << 20) == ("application/octet-stream", record)
    python = _ohttp_report.encapsulate_report(_ohttp.KeyConfig(0, _ohttp.public_key_of(private)), "c", record,
                                              "application/octet-stream")
    assert len(encapsulated) == len(python)  # a JS device's report is not told from a Python one's by its length


@pytest.mark.slow  # builds the Java client (once per source state) and starts a JVM
def test_the_java_client_encapsulates_a_report_to_pythons_length_and_it_opens_in_python(tmp_path):
    from java_support import run_java

    private = bytes(range(1, 33))
    keys = base64.urlsafe_b64encode(_ohttp_report.key_list(_ohttp.public_key_of(private))).rstrip(b"=").decode()
    record = _record(5)
    (tmp_path / "Encapsulate.java").write_text(
        "import org.dpdist.client.*;\n"
        "public class Encapsulate { public static void main(String[] a) {\n"
        "  byte[] key = Relay.keyConfig(java.util.Map.of(\"ohttp\", a[0]), \"c\");\n"
        "  System.out.print(Bytes.hex(Relay.encapsulate(key, \"c\", Bytes.fromHex(a[1]), null))); } }\n")
    result = run_java([str(tmp_path / "Encapsulate.java"), keys, record.hex()], timeout=300)
    assert result.returncode == 0, result.stderr
    encapsulated = bytes.fromhex(result.stdout)
    assert _ohttp_report.open_report(private, "c", encapsulated, 1 << 20) == ("application/octet-stream", record)
    python = _ohttp_report.encapsulate_report(_ohttp.KeyConfig(0, _ohttp.public_key_of(private)), "c", record,
                                              "application/octet-stream")
    assert len(encapsulated) == len(python)  # nor a Java device's


def test_a_queue_made_before_envelopes_keeps_its_waiting_reports(tmp_path):
    path = tmp_path / "queue.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE reports (key BLOB PRIMARY KEY, campaign TEXT NOT NULL, sealed BLOB)")
    db.execute("INSERT INTO reports VALUES (?, 'c', ?)", (b"k" * 16, b"\x01waiting"))
    db.commit()
    db.close()
    queue = RelayQueue(str(path))
    try:
        assert queue.waiting() == {"c": 1}
        assert queue.accept("c", "r2", b"\x00second", envelope=OHTTP, enc=b"e" * 32).result() == "new"
        assert queue.accept("c", "r3", b"\x00second", envelope=OHTTP, enc=b"e" * 32).result() == "duplicate"
        assert queue.form_batch("c", 2, 10).result() is None  # one of each envelope: neither part has K = 2
        batch = queue.form_batch("c", 1, 10).result()
        assert batch is not None and sorted(unframe(batch.body)) == [b"\x00second", b"\x01waiting"]
    finally:
        queue.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 1


@pytest.mark.slow  # 0.66 CPU-s: collector, relay and issuer end to end
def test_a_token_file_of_an_earlier_version_sends_its_reports_under_their_one_token(tmp_path):
    """An earlier version kept, in its token file, a report sealed in dpdist's envelope with its token's seed (not yet
    acknowledged: the relay refused it once the campaign turned the envelope off), and one acknowledged in that envelope
    (its seed forgotten).  This version encapsulates the first again as an RFC 9458 request with the same seed, under the
    same token (a credential of one token each), and resends the second's bytes as they were (a duplicate): each counts
    once, and the issuer issued one token each."""
    from sealed_v1_support import SUITE

    with _paused(tmp_path, min_batch=1, max_batch=4) as parties:
        public = parties.relayed_campaign("switch", CONFIG, issuer_key="switch", sealed_v1=True)
        first, second = parties.credentials("switch", 2)
        path = tmp_path / "tokens.json"
        for held, credential in enumerate((first, second), 1):
            with parties.client(issuer_credential=credential, issuer="http://issuer", token_file=path) as device:
                device.prepare_tokens("switch", held)
        document = json.loads(path.read_text())
        pin = public["relay"]["pin"]
        (early, acknowledged) = document["spare"].pop(pin)
        for entry, report_id in ((early, "b" * 32 + ".0"), (acknowledged, "c" * 32 + ".0")):
            seed = base64.b64decode(entry["seed"])
            assert SUITE.kem.derive_key_pair(seed).public_key.to_public_bytes() == _ohttp_report.ephemeral_key(seed)[1]
            entry["dpdist"] = base64.b64encode(seal(public_key_of(public["relay"]), "switch", _record(5),
                                                    "application/octet-stream", seed=seed)).decode()
            document["bound"][f"{pin}:{report_id}"] = entry
        token = base64.b64decode(acknowledged["token"])
        sent = parties.run(parties.clients["relay"].put(
            f"/relay/v1/campaigns/switch/reports/{'c' * 32}.0", content=base64.b64decode(acknowledged["dpdist"]),
            headers={"content-type": SEALED_V1_TYPE, PIN_HEADER: pin, "authorization": _authorization(token)}))
        assert sent.status_code == 202, sent.text
        del acknowledged["seed"]  # acknowledged: the earlier version forgot its seed
        path.write_text(json.dumps(document))
        assert parties.admin("collector", "PUT", "/api/campaigns/switch/envelopes", json={"sealed_v1": False}).status_code == 200
        with parties.client(token_file=path, issuer_credential=first, issuer="http://issuer") as device:
            device.config("switch")
            assert device.submit_reports("switch", PROTOCOL, np.array([5], dtype=np.uint64), batch_id="b" * 32)["relayed"] == 1
            resent = device.submit_reports("switch", PROTOCOL, np.array([5], dtype=np.uint64), batch_id="c" * 32)
            assert resent["duplicates"] == 1
        status = _step(parties)
        assert status["reports_in_batches"] == {"delivered": 2}
        summary = _summary(parties, "switch")
        assert summary["n"] == 2 and summary["rejected"] == {} and summary["anonymity"]["smallest_batch"] == 1
        assert parties.admin("issuer", "GET", "/issuer/v1/status").json()["keys"]["switch"]["issued"] == 2


def _authorization(token: bytes) -> str:
    from dpdist.privacypass import format_authorization

    return format_authorization(token)
