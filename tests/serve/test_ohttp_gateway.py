"""The collector as an Oblivious HTTP gateway (dpdist.serve._ohttp_gateway), in one process with a standard relay.

A device (dpdist.client.Client with ohttp_relay=) sends through the forwarding-only relay resource of
tests/ohttp_relay_support.py to http://collector/ohttp/gateway; what the gateway serves is what a direct request
gets, counted once by batch id whatever the relay does.
"""

from __future__ import annotations

import base64
import json
import re

import httpx
import numpy as np
import pytest

pytest.importorskip("pyhpke")

from ohttp_relay_support import Faults, relay_app  # noqa: E402
from relay_parties import ADMIN, Parties  # noqa: E402

from dpdist.errors import ServiceRefusedError, ServiceUnavailableError  # noqa: E402
from dpdist import local  # noqa: E402
from dpdist import _ohttp  # noqa: E402
from dpdist._ohttp import _bhttp  # noqa: E402

RELAY = "http://ohttp/ohttp"
CONFIG = {"protocol": "grr", "epsilon": 1.0, "domain_size": 4}


@pytest.fixture
def parties(tmp_path):
    faults = Faults()
    setup = Parties(tmp_path)
    setup.apps["ohttp"] = relay_app("http://collector/ohttp/gateway", transport=httpx.ASGITransport(setup.apps["collector"]),
                                    faults=faults)
    setup.faults = faults
    with setup:
        yield setup


def _campaign(parties, name="commute", submit_token=None):
    with parties.operator(admin_token=ADMIN) as operator:
        operator.create_campaign(name, CONFIG, submit_token=submit_token)
        operator.open_campaign(name)
        return operator.config(name)


def _totals(parties, name):
    return parties.admin("collector", "GET", f"/api/campaigns/{name}").json()


def test_a_batch_through_a_standard_relay_is_counted_once_whatever_the_relay_replays(parties):
    document = _campaign(parties)
    served = parties.admin("collector", "GET", "/ohttp/keys")
    assert served.headers["content-type"] == "application/ohttp-keys"
    assert base64.urlsafe_b64decode(document["ohttp"]["keys"] + "==") == served.content
    assert document["ohttp"]["gateway"] == "/ohttp/gateway"
    protocol = local.from_config(CONFIG)
    with parties.client(ohttp_relay=RELAY) as device:
        reports = protocol.privatize(np.array([0, 1, 2, 3, 3]), rng=1)
        first = device.submit_reports("commute", protocol, reports, batch_id="b" * 32)
        parties.faults.replay = 1  # the relay sends the device's resend twice
        again = device.submit_reports("commute", protocol, reports, batch_id="b" * 32)
    assert first["duplicate"] is False and again["duplicate"] is True
    assert len(set(parties.faults.answer_lengths)) == 1  # a replay's answer ("duplicate": true) is as long as the first
    assert _totals(parties, "commute")["n"] == 5
    assert len(parties.faults.seen) == 3  # three deliveries of one batch: the collector counted it once
    body = protocol.report_format  # the relay saw ciphertext only: neither the batch id nor the records' bytes
    assert all(b"b" * 32 not in seen and b"commute" not in seen for seen in parties.faults.seen), body


def test_the_gateway_serves_the_inner_request_as_the_direct_route_refuses_and_limits_it(parties):
    _campaign(parties, "tokened", submit_token="campaign-token-0123456789")
    protocol = local.from_config(CONFIG)
    reports = protocol.privatize(np.array([0, 1]), rng=2)
    with parties.client(ohttp_relay=RELAY) as device, pytest.raises(ServiceRefusedError) as refused:
        device.submit_reports("tokened", protocol, reports)
    with parties.client() as direct, pytest.raises(ServiceRefusedError) as refused_directly:
        direct.submit_reports("tokened", protocol, reports)
    assert (refused.value.status, refused.value.code) == (refused_directly.value.status, refused_directly.value.code)
    assert refused.value.status == 401
    with parties.client(ohttp_relay=RELAY, submit_token="campaign-token-0123456789") as device:
        assert device.submit_reports("tokened", protocol, reports)["accepted"] == 2
    assert _totals(parties, "tokened")["n"] == 2


def _raw(parties, body: bytes, content_type: str = "message/ohttp-req") -> httpx.Response:
    return parties.run(parties.clients["ohttp"].post("/ohttp", content=body, headers={"content-type": content_type}))


def _keys(parties) -> list[_ohttp.KeyConfig]:
    return _ohttp.decode_key_list(parties.admin("collector", "GET", "/ohttp/keys").content)


def _through(parties, request: bytes, *, chunked: bool = False):
    config = _keys(parties)[0]
    encapsulated, context = _ohttp.encapsulate_request(config, request)
    answer = _raw(parties, encapsulated)
    assert answer.status_code == 200 and answer.headers["content-type"] == "message/ohttp-res"
    return _bhttp.decode_response(context.open_response(answer.content))


def test_malformed_binary_http_and_other_routes_are_answered_inside_the_envelope(parties):
    _campaign(parties)
    bad = _through(parties, b"\x00\x03PUT\x05https\x00\x03/api" + b"\x01")
    assert bad.status == 400 and b"malformed_binary_http" in bad.content
    admin = _bhttp.encode_request(_bhttp.Request("GET", "https", "collector", "/api/campaigns", ((b"authorization",
                                                                                                 f"Bearer {ADMIN}".encode()),)))
    refused = _through(parties, admin)
    assert refused.status == 404 and b"not_through_gateway" in refused.content
    config = _through(parties, _bhttp.encode_request(_bhttp.Request("GET", "https", "collector", "/api/campaigns/commute/config")))
    assert config.status == 200 and b'"campaign":"commute"' in config.content
    encapsulated, _ = _ohttp.encapsulate_request(_keys(parties)[0], admin)
    straight = parties.run(parties.clients["collector"].post("/ohttp/gateway", content=encapsulated,
                                                             headers={"content-type": "message/ohttp-req"}))
    assert straight.headers["cache-control"] == "no-store"


def test_keys_rotate_by_id_and_a_retired_key_is_rfc_9458s_key_problem(parties):
    _campaign(parties)
    request = _bhttp.encode_request(_bhttp.Request("GET", "https", "collector", "/api/campaigns/commute/config"))
    old = _keys(parties)[0]
    rotated = parties.admin("collector", "POST", "/api/ohttp/keys")
    assert rotated.status_code == 201 and rotated.json()["key_id"] == old.key_id + 1
    keys = _keys(parties)
    assert [config.key_id for config in keys] == [old.key_id + 1, old.key_id]  # newest first, the old one still accepted
    encapsulated, context = _ohttp.encapsulate_request(old, request)
    assert _raw(parties, encapsulated).status_code == 200
    assert parties.admin("collector", "DELETE", f"/api/ohttp/keys/{old.key_id}").status_code == 200
    answer = _raw(parties, _ohttp.encapsulate_request(old, request)[0])
    assert answer.status_code == 400 and answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["type"] == "https://iana.org/assignments/http-problem-types#ohttp-key"
    last = parties.admin("collector", "DELETE", f"/api/ohttp/keys/{old.key_id + 1}")
    assert (last.status_code, last.json()["error"]) == (409, "last_key")
    in_use = parties.admin("collector", "DELETE", f"/api/ohttp/keys/{old.key_id + 1}?forget=true")
    assert (in_use.status_code, in_use.json()["error"]) == (409, "key_in_use")
    forgotten = parties.admin("collector", "DELETE", f"/api/ohttp/keys/{old.key_id}?forget=true")
    assert forgotten.status_code == 200 and forgotten.json()["forgotten"] is True
    listed = parties.admin("collector", "GET", "/api/ohttp/keys").json()["keys"]
    assert [entry["key_id"] for entry in listed] == [old.key_id + 1]
    assert _raw(parties, b"\x00" * 10).status_code == 400
    assert _raw(parties, encapsulated, "application/json").status_code == 415


def test_a_device_refuses_a_swapped_key_configuration_before_anything_is_sent(parties):
    _campaign(parties)
    other = _ohttp.encode_key_list([_ohttp.KeyConfig(_keys(parties)[0].key_id, _ohttp.public_key_of(b"\x07" * 32))])
    protocol = local.from_config(CONFIG)
    with parties.client(ohttp_relay=RELAY, ohttp_keys=other) as device:  # swapped on the way to the device
        with pytest.raises(ServiceRefusedError) as unopened:
            device.submit_values("commute", np.array([0, 1, 2]))
    # its first request, the config's, went through the relay to the swapped key: the gateway cannot open it
    assert unopened.value.code == "not_decapsulated" and len(parties.faults.seen) == 1
    given = parties.admin("collector", "GET", "/ohttp/keys").content
    parties.admin("collector", "POST", "/api/ohttp/keys")  # the collector now states only a key the device was not given
    parties.admin("collector", "DELETE", f"/api/ohttp/keys/{_ohttp.decode_key_list(given)[0].key_id}")
    with parties.client(ohttp_relay=RELAY, ohttp_keys=given) as device:
        with pytest.raises(ServiceRefusedError) as refused:  # its key is retired: the config's request is refused
            device.submit_values("commute", np.array([0, 1, 2]))
    assert refused.value.code == "ohttp_key_mismatch" and len(parties.faults.seen) == 2  # the config only
    assert _totals(parties, "commute")["n"] == 0
    with parties.client(ohttp_relay=RELAY, ohttp_keys=parties.admin("collector", "GET", "/ohttp/keys").content) as device:
        assert device.submit_values("commute", np.array([0, 1, 2]), protocol=protocol)[0]["accepted"] == 3


def test_a_relay_that_drops_loses_or_reorders_loses_and_doubles_nothing(parties):
    _campaign(parties)
    protocol = local.from_config(CONFIG)
    parties.faults.drop, parties.faults.lose = 1, 1
    with parties.client(ohttp_relay=RELAY) as device:
        device.retries = 3
        device.backoff = 0.0
        ack = device.submit_reports("commute", protocol, protocol.privatize(np.arange(4) % 4, rng=3), batch_id="c" * 32)
    assert ack["batch_id"] == "c" * 32 and _totals(parties, "commute")["n"] == 4  # dropped, then lost: resent, counted once
    with parties.client(ohttp_relay=RELAY) as device, pytest.raises(ServiceUnavailableError):
        parties.faults.drop = 5
        device.submit_reports("commute", protocol, protocol.privatize(np.arange(4) % 4, rng=4))
    assert _totals(parties, "commute")["n"] == 4


def _draft_chunked(parties, request: bytes, sizes: list[int]) -> bytes:
    """``request`` encapsulated as draft-ietf-ohai-chunked-ohttp: non-final chunks of ``sizes`` bytes, the rest final."""
    from pyhpke import AEADId, CipherSuite, KDFId, KEMId

    suite = CipherSuite.new(KEMId.DHKEM_X25519_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES128_GCM)
    config = _keys(parties)[0]
    header = bytes([config.key_id]) + bytes.fromhex("002000010001")
    enc, sender = suite.create_sender_context(suite.kem.deserialize_public_key(config.public_key),
                                              info=b"message/bhttp chunked request\x00" + header)
    body, offset = [header, enc], 0
    for size in sizes:
        sealed = sender.seal(request[offset : offset + size], aad=b"")
        body += [_bhttp.write_varint(len(sealed)), sealed]
        offset += size
    return b"".join([*body, b"\x00", sender.seal(request[offset:], aad=b"final")])


def test_a_chunked_request_of_the_draft_is_served(parties):
    _campaign(parties)
    request = _bhttp.encode_request(_bhttp.Request("GET", "https", "collector", "/api/campaigns/commute/config"))
    answer = _raw(parties, _draft_chunked(parties, request, [10]), "message/ohttp-chunked-req")
    assert answer.status_code == 200 and answer.headers["content-type"] == "message/ohttp-chunked-res"


def test_a_chunked_request_in_too_many_chunks_is_refused_before_they_are_opened(parties):
    """a 16 MiB body in 1-byte chunks (one AES-GCM open each, on the event loop) cost 2 s of
    CPU; past 4096 chunks (at the default --max-body-bytes) a chunked request is refused, 400 too_many_chunks."""
    _campaign(parties)
    request = _bhttp.encode_request(_bhttp.Request("GET", "https", "collector", "/api/campaigns/commute/config"))
    request += bytes(5000)  # padding (RFC 9292 section 3.8): 5,000+ bytes to cut into 1-byte chunks
    answer = _raw(parties, _draft_chunked(parties, request, [1] * 4095), "message/ohttp-chunked-req")
    assert answer.status_code == 200  # 4096 chunks, the final one included: served
    refused = _raw(parties, _draft_chunked(parties, request, [1] * 4096), "message/ohttp-chunked-req")
    assert refused.status_code == 400 and refused.json()["error"] == "too_many_chunks"
    assert "4096 chunks" in refused.json()["detail"]
    metrics = parties.admin("collector", "GET", "/metrics").text
    assert 'dpdist_requests_refused_total{reason="too_many_chunks"} 1.0' in metrics


# ---- ohttpy, an implementation dpdist did not write, as the device (processes: ohttpy holds the GIL while it waits) ----
OHTTPY_DEVICE = r"""
import json, sys
import httpx, ohttpy
relay, campaign, batch_id, keys, body = sys.argv[1], sys.argv[2], sys.argv[3], bytes.fromhex(sys.argv[4]), bytes.fromhex(sys.argv[5])
client = httpx.Client(transport=ohttpy.Transport(key_config=keys))
answers = []
for _ in range(2):  # the same batch twice: counted once
    response = client.put(f"{relay}/api/campaigns/{campaign}/batches/{batch_id}", content=body,
                          headers={"content-type": "application/octet-stream"})
    answers.append([response.status_code, response.json()])
print(json.dumps(answers))
"""


@pytest.mark.slow
def test_ohttpy_submits_a_batch_through_a_standard_relay_counted_once(tmp_path):
    import json
    import subprocess
    import sys

    pytest.importorskip("ohttpy")
    from ohttp_relay_support import OhttpRelayProcess
    from serve_support import ADMIN_TOKEN, ServerProcess

    from dpdist._io._binary import encode_record
    from dpdist.client import AdminClient

    collector = ServerProcess(str(tmp_path / "c.sqlite")).start()
    relay = OhttpRelayProcess(collector.url + "/ohttp/gateway", path="/score", lifetime=120).start()  # ohttpy posts to /score
    try:
        with AdminClient(collector.url, admin_token=ADMIN_TOKEN) as operator:
            operator.create_campaign("commute", CONFIG)
            operator.open_campaign("commute")
            protocol = local.from_config(CONFIG)
            reports = protocol.privatize(np.array([0, 1, 2, 3, 3, 1]), rng=5)
            body = encode_record(protocol, reports, "d" * 32)
            keys = httpx.get(collector.url + "/ohttp/keys").content
            result = subprocess.run([sys.executable, "-c", OHTTPY_DEVICE, relay.url, "commute", "d" * 32, keys.hex(), body.hex()],
                                    capture_output=True, text=True, timeout=120)
            assert result.returncode == 0, result.stderr
            (first_status, first), (second_status, second) = json.loads(result.stdout)
            assert (first_status, second_status) == (200, 200)
            assert (first["accepted"], first["duplicate"], second["duplicate"]) == (6, False, True)
            assert operator.campaign("commute")["n"] == 6
            estimate = operator.estimate("commute")
            assert estimate["n"] == 6
    finally:
        relay.kill()
        collector.kill()


@pytest.mark.slow  # dpdist serve and a relay in subprocesses, each SIGKILLed mid-flow and started again
def test_sigkill_of_relay_and_collector_mid_flow_loses_and_doubles_nothing(tmp_path):
    """A device sends 60 batches of 50 through the relay; the relay is SIGKILLed once 300 reports are counted, the
    collector once 1500 are: each is started again, the device's retries resend the same batch ids, and the campaign
    counts exactly the 3000 reports, whatever was in flight (forwarded and committed with its answer lost, or not)."""
    import threading
    import time

    from ohttp_relay_support import OhttpRelayProcess
    from serve_support import ADMIN_TOKEN, ServerProcess

    from dpdist._http._tls import verifying_context
    from dpdist.client import AdminClient, Client

    collector = ServerProcess(str(tmp_path / "c.sqlite")).start()
    relay = OhttpRelayProcess(collector.url + "/ohttp/gateway", lifetime=300).start()
    outcome: dict = {}
    failures: list = []  # what the device saw fail and retried: both outages, in flight
    try:
        with AdminClient(collector.url, admin_token=ADMIN_TOKEN) as operator:
            operator.create_campaign("commute", CONFIG)
            operator.open_campaign("commute")
        keys = httpx.get(collector.url + "/ohttp/keys").content

        def device():
            with Client(collector.url, ohttp_relay=relay.url + "/ohttp", ohttp_keys=keys, retries=12, backoff=0.1,
                        on_retry=lambda failure, *_: failures.append(failure)) as client:
                try:
                    outcome["acks"] = client.submit_values("commute", np.arange(3000) % 4, batch_size=50)
                except Exception as error:  # noqa: BLE001 - reported by the assertion below
                    outcome["error"] = error

        def counted() -> int:
            try:
                return httpx.get(f"{collector.url}/api/campaigns/commute", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
                                 timeout=5, verify=verifying_context()).json()["n"]  # a TLS context each: 30 ms of CPU
            except (httpx.TransportError, ValueError, KeyError):
                return -1

        def kill_when(party, at_least: int) -> None:
            deadline = time.monotonic() + 120
            while counted() < at_least and time.monotonic() < deadline:
                time.sleep(0.05)
            party.kill()
            time.sleep(0.5)
            party.start()

        thread = threading.Thread(target=device)
        thread.start()
        kill_when(relay, 300)
        kill_when(collector, 1500)
        thread.join(240)
        assert not thread.is_alive() and "error" not in outcome, outcome
        acks = outcome["acks"]
        assert len(acks) == 60 and sum(ack["accepted"] for ack in acks) == 3000
        assert counted() == 3000
        # the kills met requests in flight: the relay's (its connection dropped or refused), then the collector's (the
        # relay answers 5xx while it cannot reach the gateway)
        assert any("Error" in failure for failure in failures) and any("HTTP 50" in failure for failure in failures), failures
    finally:
        relay.kill()
        collector.kill()


def test_the_openapi_document_states_the_gateway_and_its_key_ring():
    from dpdist.serve import openapi_schema

    paths = openapi_schema()["paths"]
    assert set(paths["/ohttp/gateway"]) == {"post"} and set(paths["/ohttp/keys"]) == {"get"}
    (key_id,) = paths["/api/ohttp/keys/{key_id}"]["delete"]["parameters"]
    pattern = re.compile(key_id["schema"]["pattern"])
    assert all(pattern.match(str(number)) for number in range(256)) and not pattern.match("256")


def test_two_reports_encapsulate_to_the_same_length_whatever_their_crc(parties):
    """unpadded, the record's CRC-32 (decimal in its header) made report 38 of GRR over 100 items
    3 bytes shorter than the others; padded (RFC 9292 section 3.8), the relay sees one length for every report."""
    from dpdist.io import encode_record

    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 100}
    with parties.operator(admin_token=ADMIN) as operator:
        operator.create_campaign("hundred", config)
        operator.open_campaign("hundred")
    protocol = local.from_config(config)
    def crc_digits(value):
        record = encode_record(protocol, np.array([value]))
        return len(str(json.loads(record[14 : 14 + int.from_bytes(record[10:14], "little")])["crc32"]))

    digits = {value: crc_digits(value) for value in (38, 0)}
    assert digits[38] != digits[0]  # the two reports' checksums differ in width: unpadded, their lengths did
    lengths = []
    with parties.client(ohttp_relay=RELAY) as device:
        for value in (38, 0):
            del parties.faults.seen[:]
            device.submit_reports("hundred", protocol, np.array([value]))
            lengths.append({len(seen) for seen in parties.faults.seen})
    assert lengths[0] == lengths[1] and len(lengths[0]) == 1, lengths
    assert _totals(parties, "hundred")["n"] == 2


def test_a_relay_that_relabels_a_request_as_chunked_gets_it_refused_unserved_never_its_answer_in_clear(parties):
    """a dpdist client's message/ohttp-req relabelled message/ohttp-chunked-req opened in ohttpy's
    dialect and was served, its inner status and content type on the outer answer; now refused, nothing counted."""
    _campaign(parties)
    protocol = local.from_config(CONFIG)
    reports = protocol.privatize(np.array([0, 1, 2]), rng=3)
    with parties.client(ohttp_relay=RELAY) as device:
        device.config("commute")
        del parties.faults.answers[:]
        parties.faults.relabel = 1
        with pytest.raises(ServiceRefusedError) as refused:
            device.submit_reports("commute", protocol, reports, batch_id="c" * 32)
        assert refused.value.code == "ohttp_dialect_mismatch"
        assert parties.faults.answers == [(400, "application/json")]
        assert _totals(parties, "commute")["n"] == 0
        assert device.submit_reports("commute", protocol, reports, batch_id="c" * 32)["duplicate"] is False
    assert parties.faults.answers[-1] == (200, "message/ohttp-res")
    assert _totals(parties, "commute")["n"] == 3


def test_devices_holding_the_published_keys_still_send_after_a_rotation_until_their_key_is_retired(parties):
    """after POST /api/ohttp/keys the config states the new key first; a device given the old
    key file refused the campaign (ohttp_key_mismatch). It now encapsulates to its own key, still served."""
    _campaign(parties)
    published = parties.admin("collector", "GET", "/ohttp/keys").content
    assert parties.admin("collector", "POST", "/api/ohttp/keys").status_code == 201
    protocol = local.from_config(CONFIG)
    reports = protocol.privatize(np.array([0, 1]), rng=4)
    with parties.client(ohttp_relay=RELAY, ohttp_keys=published) as device:
        assert device.submit_reports("commute", protocol, reports)["accepted"] == 2
    assert all(seen[0] == published[2] for seen in parties.faults.seen)  # every request to the old key's id
    assert _totals(parties, "commute")["n"] == 2


def test_ohttp_key_refusals_are_counted_as_every_refusal_is(parties):
    """400 ohttp-key problems (unknown key id or suite) were in no dpdist_requests_refused_total."""
    _campaign(parties)
    unknown = bytes([(_keys(parties)[0].key_id + 7) % 256]) + bytes.fromhex("002000010001") + b"\x01" * 60
    other_suite = bytes([_keys(parties)[0].key_id]) + bytes.fromhex("002000010003") + b"\x01" * 60
    for body in (unknown, unknown, other_suite, b"\x00" * 10):
        assert _raw(parties, body).status_code == 400
    metrics = parties.admin("collector", "GET", "/metrics").text
    assert 'dpdist_requests_refused_total{reason="ohttp_key"} 3.0' in metrics
    assert 'dpdist_requests_refused_total{reason="not_decapsulated"} 1.0' in metrics


def test_the_gateways_own_refusals_of_an_inner_request_are_counted(parties):
    """404 not_through_gateway and 400 malformed_binary_http were in no dpdist_requests_refused_total."""
    _campaign(parties)
    assert _through(parties, b"\x00\x03PUT\x05https\x00\x03/api" + b"\x01").status == 400
    assert _through(parties, b"\x00\x03PUT\x05https\x00\x03/api" + b"\x01").status == 400
    assert _through(parties, _bhttp.encode_request(_bhttp.Request("GET", "https", "collector", "/metrics"))).status == 404
    metrics = parties.admin("collector", "GET", "/metrics").text
    assert 'dpdist_requests_refused_total{reason="malformed_binary_http"} 2.0' in metrics
    assert 'dpdist_requests_refused_total{reason="not_through_gateway"} 1.0' in metrics


def test_the_responses_metric_counts_a_gateway_request_under_the_status_its_access_line_shows(parties):
    """gateway refusals were logged with their inner status (401, 404, 400) but counted in
    dpdist_http_responses_total as status 200, so a 4xx/5xx alert missed them."""
    _campaign(parties)
    assert _through(parties, b"\x00\x03PUT\x05https\x00\x03/api" + b"\x01").status == 400
    assert _through(parties, _bhttp.encode_request(_bhttp.Request("GET", "https", "collector", "/metrics"))).status == 404
    config = _bhttp.encode_request(_bhttp.Request("GET", "https", "collector", "/api/campaigns/commute/config"))
    assert _through(parties, config).status == 200
    metrics = parties.admin("collector", "GET", "/metrics").text
    for status in ("400", "404", "200"):
        assert f'dpdist_http_responses_total{{method="POST",route="/ohttp/gateway",status="{status}"}} 1.0' in metrics


def test_the_gateways_own_encapsulated_refusals_carry_the_request_id(parties):
    """404 not_through_gateway and 400 malformed_binary_http had no X-Request-ID (nor the
    security headers) inside, while every other encapsulated answer carries the gateway request's id."""
    _campaign(parties)
    for request in (b"\x00\x03PUT\x05https\x00\x03/api" + b"\x01",
                    _bhttp.encode_request(_bhttp.Request("GET", "https", "collector", "/metrics"))):
        answer = _through(parties, request)
        assert answer.status in (400, 404)
        fields = dict(answer.headers)
        assert fields.get(b"x-request-id") and fields.get(b"x-content-type-options") == b"nosniff"


def test_an_inner_requests_head_is_bounded_as_a_direct_requests(parties):
    """an inner request with an 8,000,000-byte header field was served (a direct one: 400 past 16 KiB)."""
    _campaign(parties)

    def config_with(field: bytes, where: str = "headers"):
        fields = ((b"x-big", field),)
        request = _bhttp.Request("GET", "https", "collector", "/api/campaigns/commute/config",
                                 headers=fields if where == "headers" else (), trailers=fields if where == "trailers" else ())
        return _through(parties, _bhttp.encode_request(request))

    assert config_with(b"a" * 15_000).status == 200
    for where in ("headers", "trailers"):
        refused = config_with(b"a" * 20_000, where)
        assert refused.status == 400 and b"head_too_large" in refused.content
    metrics = parties.admin("collector", "GET", "/metrics").text
    assert 'dpdist_requests_refused_total{reason="head_too_large"} 2.0' in metrics


def test_an_inner_batch_in_a_content_coding_is_refused_as_a_direct_one_is(parties):
    _campaign(parties)
    protocol = local.from_config(CONFIG)
    from dpdist import io

    body = io.encode_record(protocol, protocol.privatize(np.array([1]), rng=1))
    fields = ((b"content-type", b"application/octet-stream"), (b"content-encoding", b"gzip"))
    inner = _through(parties, _bhttp.encode_request(_bhttp.Request("PUT", "https", "collector",
                                                                   "/api/campaigns/commute/batches/" + "e" * 32, fields, body)))
    direct = parties.run(parties.clients["collector"].put("/api/campaigns/commute/batches/" + "f" * 32, content=body,
                                                          headers=dict((k.decode(), v.decode()) for k, v in fields)))
    assert inner.status == direct.status_code == 415
    assert json.loads(inner.content)["error"] == direct.json()["error"] == "unsupported_content_encoding"
    twice = ((b"content-type", b"application/octet-stream"), (b"content-encoding", b"identity"), (b"content-encoding", b"gzip"))
    second = _through(parties, _bhttp.encode_request(_bhttp.Request("PUT", "https", "collector",
                                                                    "/api/campaigns/commute/batches/" + "9" * 32, twice, body)))
    assert second.status == 415  # every line of the header counts, not the first alone
    assert _totals(parties, "commute")["n"] == 0


@pytest.mark.slow
def test_a_rehearsed_key_rotation_loses_no_report_of_a_device_holding_the_old_keys(parties):
    """The rotation of the operations page, step by step, with a device given the key file before it: rotate; during
    the overlap the device sends under its old key and is counted; the old key retired, its next batch is refused
    before anything is sent (ohttp_key_mismatch); once it fetches the key file again it sends that batch under the
    same id, counted once; a device that fetched the file during the overlap never notices the retirement."""
    _campaign(parties)
    protocol = local.from_config(CONFIG)
    batches = [protocol.privatize(np.arange(4) % 4, rng=seed) for seed in range(4)]
    old_file = parties.admin("collector", "GET", "/ohttp/keys").content
    old_id = _ohttp.decode_key_list(old_file)[0].key_id
    assert parties.admin("collector", "POST", "/api/ohttp/keys").status_code == 201  # 1. rotate
    overlap_file = parties.admin("collector", "GET", "/ohttp/keys").content  # 2. published: new key first, old kept
    with parties.client(ohttp_relay=RELAY, ohttp_keys=old_file) as device:
        assert device.submit_reports("commute", protocol, batches[0], batch_id="a" * 32)["accepted"] == 4
    with parties.client(ohttp_relay=RELAY, ohttp_keys=overlap_file) as device:
        assert device.submit_reports("commute", protocol, batches[1], batch_id="b" * 32)["accepted"] == 4
    assert parties.admin("collector", "DELETE", f"/api/ohttp/keys/{old_id}").status_code == 200  # 3. retire the old
    seen = len(parties.faults.seen)
    with parties.client(ohttp_relay=RELAY, ohttp_keys=old_file) as device, pytest.raises(ServiceRefusedError) as refused:
        device.submit_reports("commute", protocol, batches[2], batch_id="c" * 32)
    assert refused.value.code == "ohttp_key_mismatch"
    assert len(parties.faults.seen) == seen + 1  # the config's request only: no report left the device
    refetched = parties.admin("collector", "GET", "/ohttp/keys").content  # 4. the device fetches the key file again
    for given, batch_id, reports in ((refetched, "c" * 32, batches[2]), (overlap_file, "d" * 32, batches[3])):
        with parties.client(ohttp_relay=RELAY, ohttp_keys=given) as device:
            assert device.submit_reports("commute", protocol, reports, batch_id=batch_id)["duplicate"] is False
    totals = _totals(parties, "commute")
    assert (totals["n"], totals["batches"]) == (16, 4)
