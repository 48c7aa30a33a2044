"""Who may put a report in a relayed batch, and where a device takes the campaign's key (docs/deployment.md,
"Anonymous collection").

The attacks of the audit, replayed against issuer, relay and collector in one process
(:mod:`relay_parties`): the collector sending K-1 reports of its own through the relay (refused for
want of tokens; with the tokens of m colluding devices, the statement is made at the batch minus m);
junk and replayed tokens from a lying relay (never counted toward a batch); a relay that serves its
own key (a device never seals to it); a collector that names a key of its own for the issuer.
"""

from __future__ import annotations

import json

import httpx
import pytest

pytest.importorskip("pyhpke")
pytest.importorskip("starlette")
pytest.importorskip("cryptography")

from relay_parties import ADMIN, RELAY_TOKEN, Parties  # noqa: E402 - after the extras' checks

from dpdist import io, local  # noqa: E402
from dpdist.errors import CampaignIdentityError, ServiceRefusedError  # noqa: E402
from dpdist.relay._identity import PIN_HEADER  # noqa: E402

CONFIG = {"protocol": "grr", "version": 1, "epsilon": 4.0, "domain_size": 8}


def _statement(parties, name):
    return parties.admin("collector", "GET", f"/api/campaigns/{name}").json()["anonymity"]


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


def test_the_collectors_own_reports_need_tokens_and_count_only_beyond_the_colluding_bound(tmp_path):
    """The audit's flooding attack: the collector sends K-1 reports of its own through the relay."""
    with Parties(tmp_path, min_batch=5, max_batch=5) as parties:
        parties.relayed_campaign("flood", CONFIG, issuer_key="flood", colluding=4)
        protocol = local.from_config(CONFIG)
        from dpdist.relay import _envelope

        public = parties.client().config("flood")
        key = _envelope.decode_public_key(public["relay"]["public_key"])
        # without tokens (or with a forged one) the relay takes none of its reports
        pin = {PIN_HEADER: public["relay"]["pin"]}  # the pin is public: it gets the collector past the pin check
        for index in range(4):
            sealed = _envelope.seal(key, "flood", io.encode_record(protocol, protocol.privatize([0], secure=True)),
                                    "application/octet-stream")
            for headers in (pin, {**pin, "authorization": 'PrivateToken token="' + "A" * 472 + '"'}):
                answer = parties.run(parties.clients["relay"].put(f"/relay/v1/campaigns/flood/reports/own{index}",
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
    from dpdist.relay import _envelope

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
        key = _envelope.decode_public_key(public["relay"]["public_key"])
        protocol = local.from_config(CONFIG)
        junk = [bytes(TOKEN_LENGTH) + _envelope.seal(key, "junk", io.encode_record(protocol, protocol.privatize([2], secure=True)),
                                                     "application/octet-stream") for _ in range(98)]
        junk.append(b"\x00" * 40)
        delivered = parties.run(parties.clients["collector"].put(
            "/api/campaigns/junk/relayed/" + "b" * 32, content=_envelope.frame(junk),
            headers={"authorization": f"Bearer {RELAY_TOKEN}", "content-type": "application/vnd.dpdist.relayed-batch"}))
        assert delivered.status_code == 200, delivered.text
        ack = delivered.json()
        assert ack["accepted"] == 0 and ack["rejected"] == {"bad_token": 98, "no_token": 1}
        statement = _statement(parties, "junk")
        # a batch of no admitted report held no device's report: it changes no one's guarantee (A44-5)
        assert statement["smallest_batch"] == 3 and statement["central"]["n"] == 3


def test_a_relay_that_serves_its_own_key_never_gets_a_report_sealed_to_it(tmp_path):
    """The audit's key substitution: the relay passes on a config with its own HPKE key."""
    from dpdist.relay import _envelope

    with Parties(tmp_path, min_batch=2, max_batch=2) as parties:
        parties.relayed_campaign("swap", CONFIG, issuer_key=None)
        pin = parties.client().config("swap")["relay"]["pin"]
        own = _envelope.generate_key()
        honest_request = parties.clients["relay"].request

        async def lying_request(method, url, *args, **kwargs):  # the relay's answers carry its own key, not the collector's
            response = await honest_request(method, url, *args, **kwargs)
            if method == "GET" and (url.endswith("/config") or url.endswith("/identity")):
                document = response.json()
                document["relay"].update(public_key=_envelope.public_key_config(own.public_key)["public_key"],
                                         key_id=own.key_id.hex())
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
        # a device given the collector's URL seals to the collector's key, which the collector opens (a sealed report
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
        with parties.client(admin_token=ADMIN) as operator:
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
        with parties.client(admin_token=ADMIN) as operator:
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
        with parties.client(admin_token=ADMIN) as operator:
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
        from dpdist.relay import _envelope

        sealed = _envelope.seal(_envelope.decode_public_key(public["relay"]["public_key"]), "newer",
                                b'{"reports": [1]}', "application/json")
        answer = parties.run(parties.clients["relay"].put("/relay/v1/campaigns/newer/reports/old-device", content=sealed,
                                                          headers={PIN_HEADER: pin, "authorization": pp.format_authorization(token)}))
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
        with parties.client(admin_token=ADMIN) as operator:
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
