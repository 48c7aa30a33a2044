"""A report and its Privacy Pass token are one (dpdist._wire._binding): a lying relay cannot vouch for reports it sealed.

Issuer, relay and collector in one process (:mod:`relay_parties`).  The lying relay is played by the test: it reads
its own queue (every device's token and sealed report, as a relay holds them), puts some of those tokens on reports
it sealed itself with the campaign's public key, and delivers them to the collector beside the devices' own reports;
an honest relay is shown the same messages.
"""

from __future__ import annotations

import re
import sqlite3

import numpy as np
import pytest

pytest.importorskip("pyhpke")
pytest.importorskip("starlette")
pytest.importorskip("cryptography")

pytestmark = pytest.mark.usefixtures("pooled_issuer_keys")  # RSA keys made once per session (tests/issuer_key_pool.py)

from relay_parties import RELAY_TOKEN, Parties  # noqa: E402 - after the extras' checks
from sealed_v1_support import CONTENT_TYPE as SEALED_V1_TYPE, public_key_of, seal  # noqa: E402

from dpdist import _ohttp, io, local  # noqa: E402
from dpdist.privacypass import TOKEN_LENGTH, format_authorization  # noqa: E402
from dpdist._wire import _envelope, _ohttp_report  # noqa: E402
from dpdist._wire._frames import frame  # noqa: E402
from dpdist._wire._identity import PIN_HEADER  # noqa: E402

CONFIG = {"protocol": "grr", "version": 1, "epsilon": 2.0, "domain_size": 8}
DEVICES = 40
RELAYED = {"authorization": f"Bearer {RELAY_TOKEN}", "content-type": "application/vnd.dpdist.relayed-batch"}


def _devices_send(parties, name: str, seed: int, devices: int = DEVICES, sealed_v1: bool = False) -> tuple[dict, list[bytes]]:
    """``devices`` devices, each with its own credential (one token), all holding value 0, each sending its one report
    (randomized with the seeded generator); the campaign's public config, and the messages (token, then sealed report)
    the relay queued, as the relay reads them from its own queue."""
    public = parties.relayed_campaign(name, CONFIG, issuer_key=name, sealed_v1=sealed_v1)
    protocol = local.from_config(CONFIG)
    reports = protocol.privatize(np.zeros(devices, dtype=np.int64), rng=np.random.default_rng(seed))
    for index, credential in enumerate(parties.credentials(name, devices)):
        with parties.client(issuer_credential=credential, issuer="http://issuer") as device:
            device.relay(name)
            assert device.submit_reports(name, protocol, reports[index : index + 1])["relayed"] == 1
    with sqlite3.connect(parties.tmp_path / "relay.sqlite") as queue:
        rows = queue.execute("SELECT sealed FROM reports WHERE campaign = ? AND sealed IS NOT NULL", (name,)).fetchall()
    assert len(rows) == devices
    return public, [bytes(row[0]) for row in rows]


def _own_report(public: dict, name: str, envelope: str = "ohttp") -> bytes:
    """A report the relay makes itself for the campaign: value 7, not randomized, an RFC 9458 request (``"dpdist"``: in
    dpdist's deprecated envelope, as a device of an earlier version sealed)."""
    protocol = local.from_config(CONFIG)
    layout = protocol.report_format
    body = io.encode_record(protocol, np.full((1, *layout.row_shape), 7, dtype=layout.dtype))
    if envelope == "ohttp":
        config = _ohttp_report.campaign_key_config({"ohttp": public["relay"]["ohttp"]})
        return _ohttp_report.encapsulate_report(config, name, body, "application/octet-stream")
    return seal(public_key_of(public["relay"]), name, body, "application/octet-stream")


def test_a_tokens_nonce_commits_to_the_hpke_key_its_report_is_encapsulated_with():
    """The seed's key is RFC 9180's DeriveKeyPair (its Appendix A.1.1 vector); the nonce is the hash the JavaScript and
    Java clients compute (known answer); a report encapsulated with the seed carries that ``enc`` (so does one a device
    of an earlier version sealed with it in dpdist's deprecated envelope: pyhpke's), and another encapsulation of the
    same body, or a sealing with another key, is not bound to the token."""
    import hashlib

    from dpdist import privacypass as pp
    from dpdist._wire import _binding

    rfc_ikm = bytes.fromhex("7268600d403fce431561aef583ee1613527cff655c1343f29812e66706df3234")
    assert _ohttp_report.ephemeral_key(rfc_ikm)[1].hex() == "37fda3567bdbd628e88668c3c8d7e97d1d1253b6d4ea6d44c150f741f1bf4431"
    challenge = pp.TokenChallenge("issuer.example", hashlib.sha256(b"dpdist campaign v3\x00" + bytes(32)).digest()).encode()
    seed = bytes(range(32))
    nonce = _binding.seed_nonce(challenge, seed)
    assert nonce.hex() == "72ad0d2e02e3c4cf0103baa5f877e365d473a116aa4f17d78019d59d84363e1d"
    key = pp.generate_private_key()
    token_key = pp.encode_token_key(key.public_key())
    pending = pp.request_token(challenge, token_key, nonce=nonce)
    token = pp.finalize_token(pending, pp.blind_sign(key, pp.TokenRequest.decode(pending.request).blinded_msg))
    assert pp.verify_token(token, token_key, challenge) == nonce  # an RFC 9578 token like any other
    collector, ohttp = _envelope.generate_key(), _ohttp.KeyConfig(0, _envelope.generate_key().public_key)
    sealed = seal(collector.public_key, "c", b"{}", "application/json", seed=seed)
    encapsulated = _ohttp_report.encapsulate_report(ohttp, "c", b"{}", "application/json", seed=seed)
    assert _binding.is_bound(token, sealed) and _binding.is_bound(token, encapsulated)
    assert encapsulated[:39] == _ohttp_report.encapsulate_report(ohttp, "c", b"[]", "application/json", seed=seed)[:39]
    for other in (seal(collector.public_key, "c", b"{}", "application/json"),
                  _ohttp_report.encapsulate_report(ohttp, "c", b"{}", "application/json"),
                  encapsulated[:7] + bytes(32) + encapsulated[39:]):
        assert not _binding.is_bound(token, other)


def _rejected_metric(parties, reason: str) -> float:
    text = parties.admin("collector", "GET", "/metrics").text
    found = re.search(rf'^dpdist_reports_rejected_total{{reason="{reason}"}} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


@pytest.mark.slow  # 40 devices' tokens issued and spent through the four parties, four times
@pytest.mark.parametrize("moved", [1, 4, 20, 40])
def test_tokens_a_lying_relay_moves_onto_its_own_reports_are_refused_and_the_devices_reports_count_once(tmp_path, moved):
    """GRR (epsilon0 = 2, d = 8), 40 devices all holding 0; the relay puts ``moved`` of their tokens on reports of its
    own that say 7.  The collector refuses each of them (``token_not_bound``, counted in its metrics) and counts the 40
    devices' reports once each; an honest relay refuses them too (403 ``token_not_bound``, counted in its status).
    Unbound, these tokens were all accepted and moved the estimate of item 7 from 0 to 0.18 (4 moved), 0.97 (20)."""
    with Parties(tmp_path, min_batch=100, max_batch=100) as parties:  # the honest relay forms no batch of these 40
        public, messages = _devices_send(parties, "moved", seed=moved)
        forged = [message[:TOKEN_LENGTH] + _own_report(public, "moved") for message in messages[:moved]]
        delivered = parties.run(parties.clients["collector"].put(
            "/api/campaigns/moved/relayed/" + "f" * 32, content=frame(forged + messages), headers=RELAYED))
        assert delivered.status_code == 200, delivered.text
        ack = delivered.json()
        assert (ack["accepted"], ack["rejected"]) == (DEVICES, {"token_not_bound": moved})
        assert _rejected_metric(parties, "token_not_bound") == moved
        for index, message in enumerate(forged):  # the same messages, shown to an honest relay
            answer = parties.run(parties.clients["relay"].put(
                f"/relay/v1/campaigns/moved/ohttp/moved{index}", content=message[TOKEN_LENGTH:],
                headers={PIN_HEADER: public["relay"]["pin"], "authorization": format_authorization(message[:TOKEN_LENGTH]),
                         "content-type": "message/ohttp-req"}))
            assert (answer.status_code, answer.json()["error"]) == (403, "token_not_bound")
        assert parties.admin("relay", "GET", "/relay/v1/status").json()["refused"] == {"token_not_bound": moved}
        summary = parties.admin("collector", "GET", "/api/campaigns/moved").json()
        estimate = parties.admin("collector", "GET", "/api/campaigns/moved/estimate").json()["estimate"]
    assert summary["n"] == DEVICES and summary["rejected"] == {"token_not_bound": moved}
    statement = summary["anonymity"]
    assert statement["smallest_batch"] == DEVICES and statement["central"]["n"] == DEVICES
    assert not any("forwards the reports" in assumption for assumption in statement["assumptions"])
    # item 7 (truth 0) within 4 standard deviations of GRR's unbiased estimate at n = 40
    p, q = np.exp(2.0) / (np.exp(2.0) + 7), 1 / (np.exp(2.0) + 7)
    assert abs(estimate["frequencies"][7]) < 4 * np.sqrt(q * (1 - q) / (DEVICES * (p - q) ** 2))


def test_a_token_on_a_report_the_relay_made_in_either_envelope_is_refused_and_a_spliced_one_does_not_open(tmp_path):
    """What else a lying relay can make of a device's token: the token on a report of its own in dpdist's deprecated
    envelope (a campaign that still takes it), or on an RFC 9458 request of its own (it cannot open the device's report:
    it makes one), or the device's ``enc`` with other ciphertext.  The first two name another ``enc`` and are refused by
    relay and collector alike; the third names the token's ``enc``, which the relay cannot check further (it cannot
    open a report), and does not open at the collector without the device's ephemeral key, and spends no token: the
    device's own report still counts after it."""
    with Parties(tmp_path, min_batch=100, max_batch=100) as parties:
        public, messages = _devices_send(parties, "spliced", seed=7, devices=5, sealed_v1=True)
        tokens = [message[:TOKEN_LENGTH] for message in messages[:3]]
        spliced = bytearray(messages[2][TOKEN_LENGTH:])
        spliced[-1] ^= 1  # the device's header and enc, its ciphertext changed
        made = [_own_report(public, "spliced", "dpdist"), _own_report(public, "spliced"), bytes(spliced)]
        answers = []
        for index, (token, report) in enumerate(zip(tokens, made)):
            route = "ohttp" if index else "reports"
            kind = "message/ohttp-req" if index else SEALED_V1_TYPE
            answer = parties.run(parties.clients["relay"].put(
                f"/relay/v1/campaigns/spliced/{route}/made{index}", content=report,
                headers={PIN_HEADER: public["relay"]["pin"], "authorization": format_authorization(token),
                         "content-type": kind}))
            answers.append((answer.status_code, answer.json().get("error")))
        assert answers == [(403, "token_not_bound"), (403, "token_not_bound"), (202, None)]
        delivered = parties.run(parties.clients["collector"].put(
            "/api/campaigns/spliced/relayed/" + "e" * 32, headers=RELAYED,
            content=frame([token + report for token, report in zip(tokens, made)] + messages[3:])))
        genuine = parties.run(parties.clients["collector"].put(  # the spliced token's own report, after the splice
            "/api/campaigns/spliced/relayed/" + "f" * 32, headers=RELAYED, content=frame([messages[2]])))
    ack = delivered.json()
    assert ack["accepted"] == 2 and ack["rejected"] == {"token_not_bound": 2, "unopened": 1}
    assert genuine.json()["accepted"] == 1, genuine.json()  # a report that did not open spent no token
