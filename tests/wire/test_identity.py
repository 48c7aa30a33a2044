"""A relayed campaign's identity (dpdist._wire._identity): who may put a report in a relayed batch, and where a device
takes the campaign's config, key and issuer (docs/how-to/anonymous-collection.md, "Anonymous collection").

Attacks replayed against issuer, relay and collector in one process (:mod:`relay_parties`): the collector sending K-1
reports of its own through the relay (refused for want of tokens; with the tokens of m colluding devices, the statement
is made at the batch minus m), or turning admission off at the relay; junk and replayed tokens from a lying relay
(never counted toward a batch); a relay that serves its own key or renames itself (a device never seals to it); a
collector that names a key or an issuer of its own, or tags one device's config or identity; a relay outage (the
device's token is kept with its report).
"""

from __future__ import annotations

import json

import httpx
import pytest

pytest.importorskip("pyhpke")
pytest.importorskip("starlette")
pytest.importorskip("cryptography")

pytestmark = pytest.mark.usefixtures("pooled_issuer_keys")  # RSA keys made once per session (tests/issuer_key_pool.py)

from relay_parties import ADMIN, RELAY_TOKEN, Parties  # noqa: E402 - after the extras' checks

from dpdist import io, local  # noqa: E402
from dpdist.errors import CampaignIdentityError, ServiceRefusedError  # noqa: E402
from dpdist._wire import _ohttp_report  # noqa: E402
from dpdist._wire._frames import MAX_SEALED_BYTES, frame, unframe  # noqa: E402
from dpdist._wire._identity import PIN_HEADER  # noqa: E402
import hashlib  # noqa: E402 - after the extra's check
import sqlite3  # noqa: E402 - after the extra's check
import time  # noqa: E402 - after the extra's check
import numpy as np  # noqa: E402 - after the extra's check
from dpdist.errors import DPDistError, InvalidParameterError  # noqa: E402 - after the extra's check

CONFIG = {"protocol": "grr", "version": 1, "epsilon": 4.0, "domain_size": 8}


OHTTP = {"content-type": "message/ohttp-req"}


def _encapsulated(public: dict, name: str, body: bytes) -> bytes:
    """A report of campaign ``name``: an RFC 9458 request to the key configuration its public config names."""
    return _ohttp_report.encapsulate_report(_ohttp_report.campaign_key_config(public["relay"]), name, body,
                                            "application/octet-stream")


def _opened(tmp_path, name: str, message: bytes) -> bytes:
    """What the collector reads of a relayed RFC 9458 request of ``name`` (its private key: its own database)."""
    with sqlite3.connect(tmp_path / "campaigns.sqlite") as db:
        (private,) = db.execute("SELECT ohttp_private_key FROM relayed_campaigns WHERE campaign_id = ?", (name,)).fetchone()
    return _ohttp_report.open_report(bytes.fromhex(private), name, message, MAX_SEALED_BYTES)[1]


def _statement(parties, name):
    return parties.admin("collector", "GET", f"/api/campaigns/{name}").json()["anonymity"]


@pytest.mark.slow  # 0.60 CPU-s: collector, relay and issuer end to end
def test_tokens_admit_one_report_each_and_the_statement_counts_what_the_collector_verified(tmp_path):
    with Parties(tmp_path, min_batch=6, max_batch=6) as parties:
        public = parties.relayed_campaign("anon", CONFIG, issuer_key="anon", colluding=2)
        assert public["relay"]["url"] == "http://relay" and len(public["relay"]["pin"]) == 64
        assert public["relay"]["issuer"]["url"] == "http://issuer"
        credentials = parties.credentials("anon", 12)
        for index, credential in enumerate(credentials):  # twelve devices, one report each: two batches of six
            with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
                acks = device.submit_values("anon", [index % 8])
                assert acks[0]["relayed"] == 1
        parties.wait_delivered(2)
        statement = _statement(parties, "anon")
        assert statement["smallest_batch"] == 6 and statement["reports"] == 12
        assert statement["admission"] == {"issuer": "http://issuer", "issuer_independent": True, "colluding": 2,
                                          "tokens_each": 1, "colluding_reports": 2}
        assert statement["central"]["n"] == 4  # hidden among the batch's six reports, two of which the collector may know
        from dpdist import privacy

        expected = privacy.shuffled(local.from_config(CONFIG), n=4, delta=1e-8).epsilon
        assert statement["central"]["epsilon"] == pytest.approx(expected)
        # a spent credential gets no second token: the device refuses before anything is drawn
        with parties.client(issuer_credential=credentials[0], issuer="http://issuer") as device:
            with pytest.raises(ServiceRefusedError) as refused:
                device.submit_values("anon", [3])
        assert refused.value.code == "exhausted"


@pytest.mark.slow  # 0.33 CPU-s: collector, relay and issuer end to end
def test_the_collectors_own_reports_need_tokens_and_count_only_beyond_the_colluding_bound(tmp_path):
    """The audit's flooding attack: the collector sends K-1 reports of its own through the relay."""
    with Parties(tmp_path, min_batch=5, max_batch=5) as parties:
        parties.relayed_campaign("flood", CONFIG, issuer_key="flood", colluding=4)
        protocol = local.from_config(CONFIG)
        public = parties.client().config("flood")
        # without tokens (or with a forged one) the relay takes none of its reports
        pin = {PIN_HEADER: public["relay"]["pin"], **OHTTP}  # the pin is public: it gets the collector past the pin check
        for index in range(4):
            sealed = _encapsulated(public, "flood", io.encode_record(protocol, protocol.privatize([0], secure=True)))
            for headers in (pin, {**pin, "authorization": 'PrivateToken token="' + "A" * 472 + '"'}):
                answer = parties.run(parties.clients["relay"].put(f"/relay/v1/campaigns/flood/ohttp/own{index}",
                                                                  content=sealed, headers=headers))
                assert answer.status_code == 401 and answer.headers["www-authenticate"].startswith("PrivateToken")
        # with the tokens of 4 devices it controls (its colluding bound) and one honest device: a batch of 5
        own, honest = parties.credentials("flood", 4), parties.credentials("flood", 1)
        for credential in own:
            with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
                device.submit_values("flood", [0])
        with parties.client(issuer_credential=honest[0], issuer="http://issuer") as device:
            device.submit_values("flood", [5])
        parties.wait_delivered(1)
        statement = _statement(parties, "flood")
        assert statement["smallest_batch"] == 5
        assert "reason" in statement["central"] and statement["central"].get("epsilon") is None  # hidden among no others


def test_a_lying_relays_junk_and_replayed_tokens_never_count_toward_a_batch(tmp_path):
    from dpdist.privacypass import TOKEN_LENGTH

    with Parties(tmp_path, min_batch=3, max_batch=3) as parties:
        parties.relayed_campaign("junk", CONFIG, issuer_key="junk")
        credentials = parties.credentials("junk", 3)
        for credential in credentials:
            with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
                device.submit_values("junk", [1])
        parties.wait_delivered(1)
        honest = parties.admin("collector", "GET", "/api/campaigns/junk").json()
        assert honest["n"] == 3 and honest["anonymity"]["smallest_batch"] == 3
        # the relay's own delivery: 99 messages it made up
        public = parties.client().config("junk")
        protocol = local.from_config(CONFIG)
        junk = [bytes(TOKEN_LENGTH) + _encapsulated(public, "junk", io.encode_record(protocol, protocol.privatize([2], secure=True)))
                for _ in range(98)]
        junk.append(b"\x00" * 40)
        delivered = parties.run(parties.clients["collector"].put(
            "/api/campaigns/junk/relayed/" + "b" * 32, content=frame(junk),
            headers={"authorization": f"Bearer {RELAY_TOKEN}", "content-type": "application/vnd.dpdist.relayed-batch"}))
        assert delivered.status_code == 200, delivered.text
        ack = delivered.json()
        assert ack["accepted"] == 0 and ack["rejected"] == {"bad_token": 98, "no_token": 1}
        statement = _statement(parties, "junk")
        # a batch of no admitted report held no device's report: it changes no one's guarantee
        assert statement["smallest_batch"] == 3 and statement["central"]["n"] == 3


def test_a_relay_that_serves_its_own_key_never_gets_a_report_sealed_to_it(tmp_path):
    """The audit's key substitution: the relay passes on a config with its own Oblivious HTTP key configuration."""
    with Parties(tmp_path, min_batch=2, max_batch=2) as parties:
        parties.relayed_campaign("swap", CONFIG, issuer_key=None)
        pin = parties.client().config("swap")["relay"]["pin"]
        own = _own_key_list()
        honest_request = parties.clients["relay"].request

        async def lying_request(method, url, *args, **kwargs):  # the relay's answers carry its own key, not the collector's
            response = await honest_request(method, url, *args, **kwargs)
            if method == "GET" and (url.endswith("/config") or url.endswith("/identity")):
                document = response.json()
                document["relay"].update(ohttp=own)
                response = httpx.Response(response.status_code, headers={"content-type": "application/json"},
                                          content=json.dumps(document).encode())
            return response

        parties.clients["relay"].request = lying_request
        # a device given the relay's URL and no pin refuses; with the pin it sees the identity was changed
        with parties.client("http://relay") as device:
            with pytest.raises(CampaignIdentityError) as refused:
                device.submit_values("swap", [1])
            assert refused.value.code == "pin_required"
        with parties.client("http://relay", pins={"swap": pin}) as device:
            with pytest.raises(CampaignIdentityError) as refused:
                device.submit_values("swap", [1])
            assert refused.value.code == "pin_mismatch"
        # a device given the collector's URL encapsulates to the collector's key, which the collector opens (a request
        # opens under one key only): the relay's own key never sees one
        with parties.client("http://collector") as device:
            device.submit_values("swap", [1, 2])
        parties.wait_delivered(1)
        counted = parties.admin("collector", "GET", "/api/campaigns/swap").json()
        assert counted["n"] == 2 and counted["rejected"] == {}


def test_a_campaign_states_no_central_guarantee_when_anyone_or_the_collector_can_fill_a_batch(tmp_path):
    with Parties(tmp_path) as parties:
        parties.relayed_campaign("open-door", CONFIG, issuer_key=None)
        parties.relayed_campaign("own-issuer", CONFIG, issuer_key="own", independent=False)
        for name, words in (("open-door", "no admission"), ("own-issuer", "run by the collector")):
            central = parties.client().config(name)["anonymity"]["central"]
            assert words in central["reason"]


def test_a_device_refuses_an_issuer_key_the_issuer_does_not_serve(tmp_path):
    """A collector that names a key of its own for the issuer (to mint tokens itself) is caught by the device."""
    from dpdist import privacypass

    with Parties(tmp_path) as parties:
        parties.admin("issuer", "POST", "/issuer/v1/keys", json={"name": "real"})
        fake = privacypass.b64url_encode(privacypass.encode_token_key(privacypass.generate_private_key().public_key()))
        issuer = {"url": "http://issuer", "name": "issuer.test", "key": "real", "token_key": fake, "independent": True,
                  "tokens_each": 1}
        with parties.operator(admin_token=ADMIN) as operator:
            operator.create_campaign("forged", CONFIG, relay={"url": "http://relay", "issuer": issuer})
            operator.open_campaign("forged")
        (credential,) = parties.credentials("real", 1)
        with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
            with pytest.raises(CampaignIdentityError) as refused:
                device.submit_values("forged", [1])
        assert refused.value.code == "issuer_key_mismatch"


def test_the_relay_serves_no_page_and_passes_the_identity_byte_for_byte(tmp_path):
    with Parties(tmp_path) as parties:
        parties.relayed_campaign("pages", CONFIG, issuer_key=None)
        direct = parties.run(parties.clients["collector"].get("/api/campaigns/pages/identity")).content
        relayed = parties.run(parties.clients["relay"].get("/api/campaigns/pages/identity")).content
        assert direct == relayed
        import hashlib

        assert hashlib.sha256(direct).hexdigest() == parties.client().config("pages")["relay"]["pin"]
        for path in ("/campaigns/pages/participate", "/static/dpdist-client.js"):
            answer = parties.run(parties.clients["relay"].get(path))
            assert answer.status_code == 404 and answer.json()["error"] == "not_served_by_relay"
        preflight = parties.run(parties.clients["relay"].options(
            "/relay/v1/campaigns/pages/reports/r1", headers={"origin": "http://collector", "access-control-request-method": "PUT",
                                                              "access-control-request-headers": "authorization, content-type"}))
        assert preflight.status_code == 200 and "authorization" in preflight.headers["access-control-allow-headers"].lower()


@pytest.mark.parametrize("relay", [True, {"delta": 1e-6}, {"url": "ftp://relay"}, {"url": "http://relay", "colluding": -1},
                                   {"url": "http://relay", "issuer": {"url": "http://issuer"}}])
def test_a_relayed_campaign_document_is_checked(tmp_path, relay):
    with Parties(tmp_path) as parties:
        with parties.operator(admin_token=ADMIN) as operator:
            with pytest.raises(ServiceRefusedError) as refused:
                operator.create_campaign("bad", CONFIG, relay=relay)
        assert refused.value.code == "invalid_relay" and "'relay" in str(refused.value)


def _identity(parties, name) -> bytes:
    return parties.run(parties.clients["collector"].get(f"/api/campaigns/{name}/identity")).content


def test_colluding_devices_count_in_reports_each_giving_the_issuers_tokens_each(tmp_path):
    """One colluding credential good for 9 tokens puts 9 reports in a batch of 10: the campaign states no central
    guarantee (the honest report hides among no others), where it stated one at n = 10 - 1 = 9."""
    with Parties(tmp_path, min_batch=10, max_batch=10) as parties:
        parties.relayed_campaign("units", CONFIG, issuer_key="units", colluding=1, tokens_each=9)
        identity = json.loads(_identity(parties, "units"))
        assert identity["colluding"] == 1 and identity["issuer"]["tokens_each"] == 9  # pinned: in the identity
        (own,) = parties.credentials("units", 1, tokens_each=9)
        with parties.client(issuer_credential=own, issuer="http://issuer") as colluding_device:
            colluding_device.submit_values("units", [0] * 9)
        (honest,) = parties.credentials("units", 1)
        with parties.client(issuer_credential=honest, issuer="http://issuer") as device:
            device.submit_values("units", [5])
        parties.wait_delivered(1)
        statement = _statement(parties, "units")
    assert statement["smallest_batch"] == 10
    assert statement["admission"] == {"issuer": "http://issuer", "issuer_independent": True, "colluding": 1,
                                      "tokens_each": 9, "colluding_reports": 9}
    central = statement["central"]
    assert central.get("epsilon") is None and central["code"] == "colluding_reports_fill_batch"
    assert "1 colluding device(s) x 9 tokens each = 9 reports" in central["reason"] and "batch of 10" in central["reason"]
    assert any("tokens_each" in line and "colluding_reports" in line for line in statement["assumptions"])


def test_a_device_refuses_an_identity_whose_tokens_each_is_not_the_issuers(tmp_path):
    """A collector that writes a smaller ``tokens_each`` into the identity than the issuer's key allows (to state a
    stronger guarantee) is caught by the device, before anything is drawn."""
    from dpdist.client import issuer_of

    with Parties(tmp_path) as parties:
        parties.admin("issuer", "POST", "/issuer/v1/keys", json={"name": "many", "tokens_each": 50})
        issuer = {**issuer_of("http://issuer", "many", transport=parties.transport), "tokens_each": 1}
        with parties.operator(admin_token=ADMIN) as operator:
            operator.create_campaign("understated", CONFIG, relay={"url": "http://relay", "issuer": issuer, "colluding": 1})
            operator.open_campaign("understated")
        (credential,) = parties.credentials("many", 1, tokens_each=50)
        with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
            with pytest.raises(CampaignIdentityError) as refused:
                device.submit_values("understated", [1])
        assert refused.value.code == "tokens_each_mismatch" and "50" in str(refused.value)
        assert parties.admin("issuer", "GET", "/issuer/v1/status").json()["keys"]["many"]["issued"] == 0


def test_a_device_of_the_previous_version_refuses_an_identity_that_states_tokens_each(tmp_path):
    """The tokens of an identity that states its issuer's ``tokens_each`` are bound to it under a new redemption
    context (v3): a device of the previous version derives the v2 challenge, which is not the one the config publishes
    (it refuses, ``challenge_mismatch``, before anything is drawn), and a token made for the v2 challenge is refused by
    the relay."""
    import hashlib

    from dpdist import privacypass as pp

    with Parties(tmp_path) as parties:
        public = parties.relayed_campaign("newer", CONFIG, issuer_key="newer")
        pin, issuer = public["relay"]["pin"], public["relay"]["issuer"]
        assert hashlib.sha256(_identity(parties, "newer")).hexdigest() == pin
        previous = pp.TokenChallenge(issuer["name"], hashlib.sha256(b"dpdist campaign v2\x00" + bytes.fromhex(pin)).digest())
        assert pp.b64url_decode(issuer["challenge"], "challenge") != previous.encode()
        (credential,) = parties.credentials("newer", 1)
        token_key = pp.b64url_decode(issuer["token_key"], "token_key")
        token = pp.fetch_token("http://issuer", "newer", credential, previous, token_key, transport=parties.transport)
        sealed = _ohttp_report.encapsulate_report(_ohttp_report.campaign_key_config(public["relay"]), "newer",
                                                  b'{"reports": [1]}', "application/json")
        answer = parties.run(parties.clients["relay"].put("/relay/v1/campaigns/newer/ohttp/old-device", content=sealed,
                                                          headers={PIN_HEADER: pin, "authorization": pp.format_authorization(token),
                                                                   **OHTTP}))
        assert answer.status_code == 401 and answer.json()["error"] == "invalid_token"


def test_a_campaign_created_again_under_its_id_is_refused_as_identity_changed_and_its_queue_can_be_dropped(tmp_path, caplog):
    """The relay pinned the first campaign's identity; the collector now states the second's.  A device gets
    ``identity_changed`` saying so (not ``pin_mismatch``, whose advice, fetching the identity again, cannot help),
    and the relay's admin drops the reports that wait for the old campaign, counted and logged."""
    import logging

    with Parties(tmp_path, min_batch=5, max_batch=5) as parties:
        parties.relayed_campaign("again", CONFIG, issuer_key=None)
        with parties.client() as device:
            device.submit_values("again", [1, 2])
        with parties.operator(admin_token=ADMIN) as operator:
            operator.delete_campaign("again")
            operator.create_campaign("again", CONFIG, relay={"url": "http://relay", "issuer": None})
            operator.open_campaign("again")
        with parties.client() as device:
            with pytest.raises(ServiceRefusedError) as refused:
                device.submit_values("again", [3])
        assert (refused.value.status, refused.value.code) == (409, "identity_changed")
        text = str(refused.value)
        assert "deleted and created again" in text and "fetching the identity again cannot help" in text
        drop = "/relay/v1/campaigns/again/queue"
        assert parties.run(parties.clients["relay"].delete(drop)).status_code == 401  # the relay's admin only
        with caplog.at_level(logging.WARNING, logger="dpdist.relay"):
            answer = parties.admin("relay", "DELETE", drop)
        assert answer.status_code == 200 and answer.json() == {"campaign": "again", "dropped": 2}
        assert any("dropped 2 waiting report(s) of campaign again" in record.getMessage() for record in caplog.records)
        status = parties.admin("relay", "GET", "/relay/v1/status").json()
        assert status["waiting"] == {} and status["dropped"] == {"again": 2}
        assert parties.admin("relay", "DELETE", drop).json() == {"campaign": "again", "dropped": 0}
        assert parties.admin("relay", "GET", "/relay/v1/status").json()["dropped"] == {"again": 2}


def test_tokens_obtained_before_the_issuer_refuses_are_kept_for_the_next_reports(tmp_path):
    """A credential good for 8 tokens, asked for 10: the 8 obtained are kept (in the token file) and the device is told
    so; they serve 8 reports afterwards, where they were dropped and the credential was spent for nothing."""
    with Parties(tmp_path, min_batch=20, max_batch=20) as parties:
        parties.relayed_campaign("spare", CONFIG, issuer_key="spare", tokens_each=8)
        (credential,) = parties.credentials("spare", 1, tokens_each=8)
        kept = tmp_path / "tokens.json"
        with parties.client(issuer_credential=credential, issuer="http://issuer", token_file=kept) as device:
            with pytest.raises(ServiceRefusedError) as refused:
                device.submit_values("spare", [index % 8 for index in range(10)])
        assert refused.value.code == "exhausted"
        assert "The 8 token(s) obtained before this refusal are kept (in " in str(refused.value)
        with parties.client(issuer_credential=credential, issuer="http://issuer", token_file=kept) as device:
            assert device.prepare_tokens("spare", 8) == 8  # nothing asked of the issuer: all 8 held
            assert device.submit_values("spare", [index % 8 for index in range(8)])[0]["relayed"] == 8
        status = parties.admin("relay", "GET", "/relay/v1/status").json()
        assert status["waiting"] == {"spare": 8}


@pytest.mark.slow  # 0.66 CPU-s: collector, relay and issuer end to end
def test_a_relay_that_refuses_a_token_valid_for_the_campaign_does_not_burn_the_devices_tokens(tmp_path, monkeypatch):
    """A relay of the version before verifies the tokens of a campaign whose identity states ``tokens_each`` under the
    v2 challenge and refuses them (401 ``invalid_token``).  The device's token verifies under the identity: it is kept
    (and the device told so), and sent again once the relay is upgraded, where each attempt took, and lost, another."""
    import hashlib

    from dpdist import privacypass as pp
    from dpdist.relay import _app as relay_app

    def previous_challenge(issuer, pin):  # what a relay of the version before derives
        return pp.TokenChallenge(issuer["name"], hashlib.sha256(b"dpdist campaign v2\x00" + bytes.fromhex(pin)).digest()).encode()

    with Parties(tmp_path, min_batch=5, max_batch=5) as parties:
        parties.relayed_campaign("upgrade", CONFIG, issuer_key="upgrade")
        (credential,) = parties.credentials("upgrade", 1)  # one token
        monkeypatch.setattr(relay_app, "campaign_challenge", previous_challenge)
        with parties.client(issuer_credential=credential, issuer="http://issuer", token_file=tmp_path / "t.json") as device:
            assert device.relay("upgrade") is not None  # the campaign's route: reports go to its relay
            for _ in range(2):
                with pytest.raises(ServiceRefusedError) as refused:
                    device.submit_reports("upgrade", local.from_config(CONFIG), [3], batch_id="b" * 32)
                assert refused.value.code == "invalid_token" and "The token is kept" in str(refused.value)
            monkeypatch.undo()  # the relay upgraded
            assert device.submit_reports("upgrade", local.from_config(CONFIG), [3], batch_id="b" * 32)["relayed"] == 1
        assert parties.admin("issuer", "GET", "/issuer/v1/status").json()["keys"]["upgrade"]["issued"] == 1
        assert parties.admin("relay", "GET", "/relay/v1/status").json()["waiting"] == {"upgrade": 1}



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


@pytest.mark.slow  # three services in process, one report through the relay
def test_a_collector_that_turns_off_admission_at_the_relay_cannot_isolate_one_honest_report(tmp_path, monkeypatch):
    """The K-1 attack (all but one report of a batch the collector's own), done by the collector without any token: after an honest device sent its report
    (with a token, as the campaign demanded), the collector's operator drops the issuer from its own database row; the
    relay reads the collector's config again and admits K-1 untokened reports of the collector, and delivers a batch of
    K with the one honest report, which is the one message that carries a token: the collector opens it with the
    campaign's private key (its own database) and reads the honest device's report alone."""
    from dpdist.privacypass import TOKEN_LENGTH
    from dpdist.relay import create_app as create_relay

    from dpdist.relay import _app as relay_app

    monkeypatch.setattr(relay_app, "_CONFIG_TTL_S", 0.5)  # the relay's cache of the collector's config, 5 s by default
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
        time.sleep(0.6)  # the relay's cache of the collector's config expires
        protocol = local.from_config(CONFIG)
        public = parties.client().config("flip")
        own = io.encode_record(protocol, np.zeros(1, dtype=np.uint8))  # reports of item 0, known to the collector
        statuses = []
        for index in range(4):
            sealed = _encapsulated(public, "flip", own)
            answer = parties.run(parties.clients["relay"].put(f"/relay/v1/campaigns/flip/ohttp/own{index}", content=sealed,
                                                              headers=OHTTP))
            statuses.append(answer.status_code)
        if statuses == [202] * 4:  # the attack went through: what the collector learns
            parties.wait_delivered(1)
            messages = unframe(bodies[0], 100)
            tokened = [m for m in messages if len(m) > TOKEN_LENGTH and m[:2] == b"\x00\x02"]
            assert len(messages) == 5 and len(tokened) == 1  # the honest report is the one with a token
            plain = _opened(tmp_path, "flip", tokened[0][TOKEN_LENGTH:])
            print("relay answered", statuses, "; the honest device's report, read alone:", plain[-1])
        # the relay pinned the identity the honest device was given: it refuses the changed campaign outright
        assert statuses == [409] * 4, "the relay admitted the collector's untokened reports into the honest device's batch"


def test_a_relay_that_renames_itself_gets_nothing_from_a_device_given_the_pin(tmp_path):
    """A lying relay names another URL for itself (so that a device given its URL takes it for the collector), its own
    key and a larger epsilon.  A device given the relay's URL *and the campaign's pin* refuses: the identity the relay
    serves does not hash to the pin.  (Given a relay's URL without the pin, a device cannot tell such a relay from the
    collector: docs/explanation/threat-model.md, "Keys the relay cannot swap", says a device must then be given the pin.)"""
    with Parties(tmp_path, min_batch=2, max_batch=2) as parties:
        parties.relayed_campaign("swap", CONFIG, issuer_key=None)
        own_private = bytes(range(7, 39))
        own = _own_key_list(own_private)
        captured: list[bytes] = []
        honest_request = parties.clients["relay"].request

        async def lying_request(method, url, *args, **kwargs):
            if method == "PUT" and "/relay/v1/campaigns/swap/" in str(url):  # the lying relay keeps what it can open
                captured.append(kwargs.get("content"))
                return httpx.Response(202, json={"campaign": "swap", "report_id": "x", "duplicate": False})
            response = await honest_request(method, url, *args, **kwargs)
            if method == "GET" and (str(url).endswith("/config") or str(url).endswith("/identity")):
                document = response.json()
                document["relay"].update(url="http://relay-alias", ohttp=own)  # another name, and its own key
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
        opened = [_ohttp_report.open_report(own_private, "swap", body, MAX_SEALED_BYTES) for body in captured]
        assert not opened and outcome == "pin_mismatch", f"the relay opened {len(opened)} report(s) sealed to its own key"


def test_a_device_with_an_issuer_refuses_a_campaign_without_admission(tmp_path):
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


def test_a_collector_naming_its_own_issuer_never_receives_the_devices_credential(tmp_path):
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
        with parties.operator(admin_token=ADMIN) as operator:
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


def test_a_relay_outage_does_not_burn_the_devices_only_token(tmp_path):
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


def test_a_batch_of_junk_does_not_erase_the_statement(tmp_path):
    from dpdist.privacypass import TOKEN_LENGTH

    with Parties(tmp_path, min_batch=3, max_batch=3) as parties:
        parties.relayed_campaign("erase", CONFIG, issuer_key="erase")
        for credential in parties.credentials("erase", 3):
            with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
                device.submit_values("erase", [1])
        parties.wait_delivered(1)
        assert _statement(parties, "erase")["central"]["n"] == 3
        junk = [bytes(TOKEN_LENGTH) + b"\x00" * 1079]
        answer = parties.run(parties.clients["collector"].put(
            "/api/campaigns/erase/relayed/" + "c" * 32, content=frame(junk),
            headers={"authorization": f"Bearer {RELAY_TOKEN}", "content-type": "application/vnd.dpdist.relayed-batch"}))
        assert answer.status_code == 200
        # no honest report was in that batch: nobody's guarantee changed, yet the statement now says none
        central = _statement(parties, "erase")["central"]
        assert central.get("n") == 3, central


def _own_key_list(private: bytes = bytes(range(1, 33))) -> str:
    """A lying relay's own key configuration, as ``relay.ohttp`` names one (``application/ohttp-keys``, base64url)."""
    import base64

    from dpdist import _ohttp

    return base64.urlsafe_b64encode(_ohttp_report.key_list(_ohttp.public_key_of(private))).rstrip(b"=").decode()


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


def test_a_config_tagged_for_one_device_does_not_find_its_report_in_the_batch(tmp_path):
    """Partitioning by config (the key-consistency problem of Privacy Pass and OHTTP): the collector answers one
    device's config fetch (it sees its address) with epsilon 4.0000001 instead of 4; the device randomizes with it
    and its binary record carries that config in its header; the relay, which cannot read the report and checks only
    the HPKE key id and the token, forwards it; the collector opens the batch and finds the one record of that config."""
    from dpdist.client import Client
    from dpdist.privacypass import TOKEN_LENGTH
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
            for message in unframe(bodies[0], 100):
                plain = _opened(tmp_path, "tag", message[TOKEN_LENGTH:])
                if b"4.0000001" in plain:
                    found.append(plain[-1])
            print("the target's report, found by its tag among", len(unframe(bodies[0], 100)), ":", found)
        assert not found, "the collector found the tagged device's report in the shuffled batch"


def test_a_tag_in_the_identity_too_is_refused_by_the_relay_that_pinned_the_campaign(tmp_path):
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


def test_the_token_request_is_bounded_by_the_devices_timeout(tmp_path, monkeypatch):
    """The token request had fetch_token's own 30 s per read, whatever the device's ``timeout``; its answer
    is now whole within the client's timeout."""
    from dpdist import privacypass

    asked: list[float] = []
    fetch = privacypass.fetch_token

    def recording(*args, **kwargs):
        asked.append(kwargs["timeout"])
        return fetch(*args, **kwargs)

    monkeypatch.setattr(privacypass, "fetch_token", recording)
    with Parties(tmp_path, min_batch=6, max_batch=6) as parties:
        parties.relayed_campaign("bounded", CONFIG, issuer_key="bounded")
        (credential,) = parties.credentials("bounded", 1)
        with parties.client(issuer_credential=credential, issuer="http://issuer", timeout=7.5) as device:
            assert device.submit_values("bounded", [1])[0]["relayed"] == 1
    assert asked == [7.5]
