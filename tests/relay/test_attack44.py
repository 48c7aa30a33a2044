"""The outside attack on anonymous collection (relay, issuer, relayed campaigns, device clients), replayed.

Each test replays one attack an outside reviewer found (A44-1..A44-6) against issuer, relay and
collector in one process (:mod:`relay_parties`) and asserts what docs/deployment.md promises; each
failed before the fix it names (identity pinned by the relay and bound into the tokens; credentials
tied to their issuer; tokens kept with their reports; batches of no admitted report ignored).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time

import httpx
import numpy as np
import pytest

pytest.importorskip("pyhpke")
pytest.importorskip("starlette")
pytest.importorskip("cryptography")

from relay_parties import ADMIN, RELAY_TOKEN, Parties  # noqa: E402 - after the extras' checks

from dpdist import io, local  # noqa: E402
from dpdist.errors import CampaignIdentityError, DPDistError, InvalidParameterError  # noqa: E402

CONFIG = {"protocol": "grr", "version": 1, "epsilon": 4.0, "domain_size": 8}


def _statement(parties, name):
    return parties.admin("collector", "GET", f"/api/campaigns/{name}").json()["anonymity"]


def _set_issuer(tmp_path, campaign: str, issuer) -> None:
    """The collector's operator rewrites its own database: the campaign's identity with another issuer (None: none)."""
    with sqlite3.connect(tmp_path / "campaigns.sqlite") as db:
        (identity,) = db.execute("SELECT identity FROM relayed_campaigns WHERE campaign_id = ?", (campaign,)).fetchone()
        document = json.loads(identity)
        document["issuer"] = issuer
        db.execute("UPDATE relayed_campaigns SET identity = ? WHERE campaign_id = ?",
                   (json.dumps(document, sort_keys=True, separators=(",", ":")), campaign))
    return None


class _Recording(httpx.AsyncBaseTransport):
    """The collector's front end (its reverse proxy, its own code): keeps every relayed batch it receives."""

    def __init__(self, inner: httpx.AsyncBaseTransport, bodies: list):
        self.inner, self.bodies = inner, bodies

    async def handle_async_request(self, request):
        if request.method == "PUT" and "/relayed/" in request.url.path:
            self.bodies.append(await request.aread())
        return await self.inner.handle_async_request(request)


@pytest.mark.slow  # waits out the relay's 5 s config cache
def test_a44_1_collector_turns_off_admission_at_the_relay_and_isolates_one_honest_report(tmp_path):
    """The K-1 attack of issue 44, done by the collector without any token: after an honest device sent its report
    (with a token, as the campaign demanded), the collector's operator drops the issuer from its own database row; the
    relay reads the collector's config again and admits K-1 untokened reports of the collector, and delivers a batch of
    K with the one honest report, which is the one message that carries a token: the collector opens it with the
    campaign's private key (its own database) and reads the honest device's report alone."""
    from dpdist.privacypass import TOKEN_LENGTH
    from dpdist.relay import _envelope
    from dpdist.relay import create_app as create_relay

    parties = Parties(tmp_path, min_batch=5, max_batch=5)
    bodies: list[bytes] = []
    parties.apps["relay"] = create_relay(
        str(tmp_path / "relay2.sqlite"), collector="http://collector", relay_token=RELAY_TOKEN, min_batch=5, max_batch=5,
        admin_token=ADMIN, interval=0.02, transport=_Recording(httpx.ASGITransport(parties.apps["collector"]), bodies))
    with parties:
        parties.relayed_campaign("flip", CONFIG, issuer_key="flip")
        (credential,) = parties.credentials("flip", 1)
        with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
            device.submit_values("flip", [5])  # the honest device: one report, with its token, as the campaign demands
        assert parties.client().config("flip")["anonymity"]["admission"]["issuer_independent"] is True

        _set_issuer(tmp_path, "flip", None)  # the collector's operator, in its own database
        time.sleep(5.3)  # the relay's cache of the collector's config expires
        protocol = local.from_config(CONFIG)
        key = _envelope.decode_public_key(parties.client().config("flip")["relay"]["public_key"])
        own = io.encode_record(protocol, np.zeros(1, dtype=np.uint8))  # reports of item 0, known to the collector
        statuses = []
        for index in range(4):
            sealed = _envelope.seal(key, "flip", own, "application/octet-stream")
            answer = parties.run(parties.clients["relay"].put(f"/relay/v1/campaigns/flip/reports/own{index}", content=sealed))
            statuses.append(answer.status_code)
        if statuses == [202] * 4:  # the attack went through: what the collector learns
            parties.wait_delivered(1)
            with sqlite3.connect(tmp_path / "campaigns.sqlite") as db:
                (private,) = db.execute("SELECT private_key FROM relayed_campaigns WHERE campaign_id = 'flip'").fetchone()
            messages = _envelope.unframe(bodies[0], 100)
            tokened = [m for m in messages if len(m) > TOKEN_LENGTH and m[:2] == b"\x00\x02"]
            assert len(messages) == 5 and len(tokened) == 1  # the honest report is the one with a token
            _, plain = _envelope.open_sealed(bytes.fromhex(private), "flip", tokened[0][TOKEN_LENGTH:])
            print("relay answered", statuses, "; the honest device's report, read alone:", plain[-1])
        # the relay pinned the identity the honest device was given: it refuses the changed campaign outright
        assert statuses == [409] * 4, "the relay admitted the collector's untokened reports into the honest device's batch"


def test_a44_2_a_relay_that_renames_itself_gets_nothing_from_a_device_given_the_pin(tmp_path):
    """A lying relay names another URL for itself (so that a device given its URL takes it for the collector), its own
    key and a larger epsilon.  A device given the relay's URL *and the campaign's pin* refuses: the identity the relay
    serves does not hash to the pin.  (Given a relay's URL without the pin, a device cannot tell such a relay from the
    collector: docs/deployment.md, "Keys the relay cannot swap", says a device must then be given the pin.)"""
    from dpdist.relay import _envelope

    with Parties(tmp_path, min_batch=2, max_batch=2) as parties:
        parties.relayed_campaign("swap", CONFIG, issuer_key=None)
        own = _envelope.generate_key()
        captured: list[bytes] = []
        honest_request = parties.clients["relay"].request

        async def lying_request(method, url, *args, **kwargs):
            if method == "PUT" and "/relay/v1/campaigns/swap/reports/" in str(url):  # the lying relay keeps what it can open
                captured.append(kwargs.get("content"))
                return httpx.Response(202, json={"campaign": "swap", "report_id": "x", "duplicate": False})
            response = await honest_request(method, url, *args, **kwargs)
            if method == "GET" and (str(url).endswith("/config") or str(url).endswith("/identity")):
                document = response.json()
                document["relay"].update(url="http://relay-alias",  # another name of the same relay
                                         public_key=_envelope.public_key_config(own.public_key)["public_key"],
                                         key_id=own.key_id.hex())
                document["config"]["epsilon"] = 8.0  # and a weaker randomization, same report format
                if str(url).endswith("/config"):  # a config and an identity that agree with each other
                    forged = identity_of(document)
                    document["relay"]["pin"] = hashlib.sha256(forged).hexdigest()
                    body = json.dumps(document).encode()
                else:
                    body = identity_of(document)
                response = httpx.Response(200, headers={"content-type": "application/json"}, content=body)
            return response

        def identity_of(document):
            return json.dumps({"campaign": "swap", "config": document["config"], "relay": {
                key: value for key, value in document["relay"].items() if key not in ("pin", "issuer")},
                "issuer": None, "colluding": 0, "delta": 1e-8}, sort_keys=True, separators=(",", ":")).encode()

        parties.clients["relay"].request = lying_request
        parties.clients["relay-alias"] = parties.clients["relay"]
        outcome = "sent"
        pin = parties.run(parties.clients["collector"].get("/api/campaigns/swap/config")).json()["relay"]["pin"]
        with parties.client("http://relay", pins={"swap": pin}) as device:  # given the relay's URL and the pin
            try:
                device.submit_values("swap", [3])
            except CampaignIdentityError as error:
                outcome = error.code
        opened = [_envelope.open_sealed(own.private_key, "swap", body) for body in captured]
        assert not opened and outcome == "pin_mismatch", f"the relay opened {len(opened)} report(s) sealed to its own key"


def test_a44_3a_a_device_with_an_issuer_submits_to_a_campaign_without_admission(tmp_path):
    with Parties(tmp_path, min_batch=2, max_batch=2) as parties:
        parties.admin("issuer", "POST", "/issuer/v1/keys", json={"name": "real"})
        (credential,) = parties.credentials("real", 1)
        parties.relayed_campaign("nodoor", CONFIG, issuer_key=None)
        outcome = "sent"
        with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
            try:
                device.submit_values("nodoor", [3])
            except CampaignIdentityError as error:
                outcome = error.code
        assert outcome == "issuer_mismatch", "sent to a campaign anyone can fill, though the device expected an issuer"


def test_a44_3b_the_collector_names_its_own_issuer_and_receives_the_devices_credential(tmp_path):
    from dpdist.client import issuer_of
    from dpdist.issuer import create_app as create_issuer

    parties = Parties(tmp_path, min_batch=2, max_batch=2)
    parties.apps["evil"] = create_issuer(str(tmp_path / "evil.sqlite"), name="evil.test", admin_token=ADMIN)
    with parties:
        (credential,) = parties.credentials("real", 1)  # the real issuer's, for this device
        parties.admin("evil", "POST", "/issuer/v1/keys", json={"name": "real"})
        seen: list[str] = []
        honest_request = parties.clients["evil"].request

        async def recording(method, url, *args, **kwargs):
            seen.append(str((kwargs.get("headers") or {}).get("authorization", "")))
            return await honest_request(method, url, *args, **kwargs)

        parties.clients["evil"].request = recording
        issuer = issuer_of("http://evil", "real", independent=True, transport=parties.transport)
        with parties.client(admin_token=ADMIN) as operator:
            operator.create_campaign("own", CONFIG, relay={"url": "http://relay", "issuer": issuer})
            operator.open_campaign("own")
        statement = parties.client().config("own")["anonymity"]
        assert statement["admission"]["issuer_independent"] is True  # what the campaign states
        with pytest.raises(InvalidParameterError, match="'issuer'"):  # a credential goes with its issuer's URL
            parties.client(issuer_credential=credential)
        with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
            with pytest.raises(CampaignIdentityError) as refused:  # the campaign names another issuer than the device's
                device.submit_values("own", [3])
        assert refused.value.code == "issuer_mismatch"
        assert not any(credential in header for header in seen), "the collector's issuer received the device's credential"


def test_a44_4_a_relay_outage_burns_the_devices_only_token(tmp_path):
    with Parties(tmp_path, min_batch=2, max_batch=2) as parties:
        parties.relayed_campaign("outage", CONFIG, issuer_key="outage")
        (credential,) = parties.credentials("outage", 1)
        honest_request = parties.clients["relay"].request
        down = {"on": True}

        async def flaky(method, url, *args, **kwargs):
            if down["on"] and method == "PUT":
                raise httpx.ConnectError("relay down")
            return await honest_request(method, url, *args, **kwargs)

        parties.clients["relay"].request = flaky
        protocol = local.from_config(CONFIG)
        reports = protocol.privatize([6], secure=True)  # the device's one randomized report, kept for the resend
        with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
            device.relay("outage")
            with pytest.raises(Exception):
                device.submit_reports("outage", protocol, reports, batch_id="a" * 32)
            down["on"] = False
            outcome = "sent"
            try:
                device.submit_reports("outage", protocol, reports, batch_id="a" * 32)  # the same report, resent
            except DPDistError as error:
                outcome = getattr(error, "code", type(error).__name__)
        assert outcome == "sent", f"the resend was refused: {outcome}"


def test_a44_5_a_batch_of_junk_erases_the_statement(tmp_path):
    from dpdist.privacypass import TOKEN_LENGTH

    with Parties(tmp_path, min_batch=3, max_batch=3) as parties:
        parties.relayed_campaign("erase", CONFIG, issuer_key="erase")
        for credential in parties.credentials("erase", 3):
            with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
                device.submit_values("erase", [1])
        parties.wait_delivered(1)
        assert _statement(parties, "erase")["central"]["n"] == 3
        junk = [bytes(TOKEN_LENGTH) + b"\x01" * 400]
        from dpdist.relay import _envelope

        answer = parties.run(parties.clients["collector"].put(
            "/api/campaigns/erase/relayed/" + "c" * 32, content=_envelope.frame(junk),
            headers={"authorization": f"Bearer {RELAY_TOKEN}", "content-type": "application/vnd.dpdist.relayed-batch"}))
        assert answer.status_code == 200
        # no honest report was in that batch: nobody's guarantee changed, yet the statement now says none
        central = _statement(parties, "erase")["central"]
        assert central.get("n") == 3, central


class _TaggedConfig(httpx.BaseTransport):
    """The collector's front end, for one device (one address): the campaign's config with a tag of its own."""

    def __init__(self, inner: httpx.BaseTransport, campaign: str, epsilon: float):
        self.inner, self.campaign, self.epsilon = inner, campaign, epsilon

    def handle_request(self, request):
        response = self.inner.handle_request(request)
        if request.method == "GET" and request.url.host == "collector" and request.url.path == f"/api/campaigns/{self.campaign}/config":
            document = json.loads(response.read())
            document["config"]["epsilon"] = document["client_view"]["config"]["epsilon"] = self.epsilon
            response = httpx.Response(200, headers={"content-type": "application/json"}, content=json.dumps(document).encode())
        return response


def test_a44_6_the_collector_tags_one_device_with_a_config_of_its_own_and_finds_its_report_in_the_batch(tmp_path):
    """Partitioning by config (the key-consistency problem of Privacy Pass and OHTTP): the collector answers one
    device's config fetch (it sees its address) with epsilon 4.0000001 instead of 4; the device randomizes with it
    and its binary record carries that config in its header; the relay, which cannot read the report and checks only
    the HPKE key id and the token, forwards it; the collector opens the batch and finds the one record of that config."""
    from dpdist.client import Client
    from dpdist.privacypass import TOKEN_LENGTH
    from dpdist.relay import _envelope
    from dpdist.relay import create_app as create_relay

    parties = Parties(tmp_path, min_batch=5, max_batch=5)
    bodies: list[bytes] = []
    parties.apps["relay"] = create_relay(
        str(tmp_path / "relay2.sqlite"), collector="http://collector", relay_token=RELAY_TOKEN, min_batch=5, max_batch=5,
        admin_token=ADMIN, interval=0.02, transport=_Recording(httpx.ASGITransport(parties.apps["collector"]), bodies))
    with parties:
        parties.relayed_campaign("tag", CONFIG, issuer_key="tag")
        credentials = parties.credentials("tag", 5)
        for credential in credentials[:4]:  # four honest devices
            with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
                device.submit_values("tag", [1])
        target = Client("http://collector", transport=_TaggedConfig(parties.transport, "tag", 4.0000001), retries=0,
                        issuer_credential=credentials[4], issuer="http://issuer")
        outcome = "sent"
        with target:
            try:
                target.submit_values("tag", [1])  # the same value as the others: only the tag tells it apart
            except DPDistError as error:
                outcome = getattr(error, "code", type(error).__name__)
        found = []
        if outcome == "sent":
            parties.wait_delivered(1)
            with sqlite3.connect(tmp_path / "campaigns.sqlite") as db:
                (private,) = db.execute("SELECT private_key FROM relayed_campaigns WHERE campaign_id = 'tag'").fetchone()
            for message in _envelope.unframe(bodies[0], 100):
                _, plain = _envelope.open_sealed(bytes.fromhex(private), "tag", message[TOKEN_LENGTH:])
                if b"4.0000001" in plain:
                    found.append(plain[-1])
            print("the target's report, found by its tag among", len(_envelope.unframe(bodies[0], 100)), ":", found)
        assert not found, "the collector found the tagged device's report in the shuffled batch"


def test_a44_6_a_tag_in_the_identity_too_is_refused_by_the_relay_that_pinned_the_campaign(tmp_path):
    """The same partitioning with a consistent forgery: the collector serves the target a config *and* an identity with
    its tag (so their pins agree); the device sends under the tagged identity's pin, and the relay, which pinned the
    identity every other device was given, refuses the report before reading its body."""
    with Parties(tmp_path, min_batch=5, max_batch=5) as parties:
        parties.relayed_campaign("tag2", CONFIG, issuer_key=None)
        with parties.client() as honest:  # the relay pins the campaign's identity with the first report
            honest.submit_values("tag2", [1])
        transport = _TaggedIdentity(parties.transport, "tag2", 4.0000001)
        from dpdist.client import Client

        with Client("http://collector", transport=transport, retries=0) as target:
            with pytest.raises(DPDistError) as refused:
                target.submit_values("tag2", [1])
        assert getattr(refused.value, "code", None) == "pin_mismatch"
        status = parties.admin("relay", "GET", "/relay/v1/status").json()
        assert status["waiting"].get("tag2") == 1  # the honest report alone: the tagged one never entered the queue


class _TaggedIdentity(httpx.BaseTransport):
    """The collector's front end, for one device: the campaign's config and identity both with a tag of its own."""

    def __init__(self, inner: httpx.BaseTransport, campaign: str, epsilon: float):
        self.inner, self.campaign, self.epsilon = inner, campaign, epsilon

    def handle_request(self, request):
        response = self.inner.handle_request(request)
        path = request.url.path
        if request.method != "GET" or request.url.host != "collector":
            return response
        if path == f"/api/campaigns/{self.campaign}/identity":
            return httpx.Response(200, headers={"content-type": "application/json"}, content=self._identity(response.read()))
        if path == f"/api/campaigns/{self.campaign}/config":
            document = json.loads(response.read())
            identity = self.inner.handle_request(httpx.Request("GET", f"http://collector/api/campaigns/{self.campaign}/identity"))
            document["relay"]["pin"] = hashlib.sha256(self._identity(identity.read())).hexdigest()
            document["config"]["epsilon"] = self.epsilon
            return httpx.Response(200, headers={"content-type": "application/json"}, content=json.dumps(document).encode())
        return response

    def _identity(self, honest: bytes) -> bytes:
        document = json.loads(honest)
        document["config"]["epsilon"] = self.epsilon
        return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
