"""Anonymous collection end to end: devices -> ``dpdist relay`` -> ``dpdist serve``, with ``dpdist issuer``, as real
processes (docs/how-to/anonymous-collection.md, "Anonymous collection").

- Reports sent through the relay (Python client, ``dpdist submit``, the JavaScript client in Node and
  in headless Chromium, the Java client), each with a Privacy Pass token from the issuer, are counted once, in batches
  of at least K; devices take the campaign's key from the collector; the collector stores no device's
  batch id and no arrival time; it refuses direct submissions to the campaign and states the local
  and the amplified central guarantee.
- SIGKILL of the relay and of the collector at random moments while devices submit with retries:
  nothing lost, nothing counted twice (the Java client too, and it keeps its tokens with its reports
  through a relay outage).
"""

from __future__ import annotations

import base64
import json
import os
import random
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from urllib.parse import quote
from pathlib import Path

import httpx
import numpy as np
import pytest

from dpdist import io, local
from dpdist._http._tls import verifying_context
from dpdist.client import AdminClient, Client
from dpdist.errors import CampaignIdentityError
from java_support import run_device
import server_zygote
from relay_support import CollectorProcess, IssuerProcess, RelayProcess
import browser_support
from relay_support import ISSUER_ADMIN_TOKEN, RELAY_TOKEN
from serve_support import ADMIN_TOKEN, admin_headers

chromium = browser_support.chromium  # the fixture, under its name in this module
_required = browser_support.required
pytest.importorskip("pyhpke")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CONFIG = {"protocol": "grr", "version": 1, "epsilon": 1.0, "domain_size": 16}


def _create(parties, name: str, config=CONFIG, keep_reports: bool = False) -> None:
    """A campaign collected through the relay, admitting reports with tokens of the issuer's key ``name`` (whose
    credentials give up to 10,000 tokens each: these tests mint one credential as the proxy of many devices)."""
    from dpdist.client import issuer_of

    collector, relay, issuer = parties
    httpx.post(f"{issuer.url}/issuer/v1/keys", json={"name": name, "tokens_each": 10_000}, timeout=30,
               headers={"authorization": f"Bearer {ISSUER_ADMIN_TOKEN}"})
    with httpx.Client(base_url=collector.url, headers=admin_headers(), timeout=30) as admin:
        relayed = {"url": relay.url, "issuer": issuer_of(issuer.url, name)}
        document = {"campaign": name, "config": config, "relay": relayed, "keep_reports": keep_reports}
        assert admin.post("/api/campaigns", json=document).status_code == 201
        assert admin.post(f"/api/campaigns/{name}/open").status_code == 200


def _summary(collector, name) -> dict:
    return httpx.get(f"{collector.url}/api/campaigns/{name}", headers=admin_headers(), timeout=30, verify=verifying_context()).json()


def _relay_status(relay) -> dict:
    return httpx.get(f"{relay.url}/relay/v1/status", headers=admin_headers(), timeout=30, verify=verifying_context()).json()


def _drained(relay, campaign: str, timeout: float = 120.0) -> dict:
    """The relay's status once nothing is pending and fewer than K reports of each envelope of the campaign wait (each
    envelope's part of a batch needs K of its own: 12 + 19 waiting with K = 20 form no batch)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = _relay_status(relay)
        envelopes = status.get("waiting_by_envelope", {}).get(campaign, {}) or {"all": status["waiting"].get(campaign, 0)}
        if not status["batches"].get("pending") and all(count < relay.min_batch for count in envelopes.values()):
            return status
        time.sleep(0.2)
    raise AssertionError(f"the relay did not drain: {status}")


@pytest.fixture(scope="module")
def _parties(tmp_path_factory):
    """One collector, relay and issuer for the module (three server start-ups, not three per test): each test collects
    its own campaign, with its own issuer key, and reads only that campaign's counts and queue."""
    folder = tmp_path_factory.mktemp("parties")
    collector = CollectorProcess(str(folder / "campaigns.sqlite"), log_path=folder / "collector.log").start()
    relay = RelayProcess(folder / "relay.sqlite", collector.url, min_batch=20, max_batch=60, log_path=folder / "relay.log").start()
    issuer = IssuerProcess(str(folder / "issuer.sqlite"), log_path=folder / "issuer.log",
                           options=("--cors-origin", collector.url)).start()  # the collector's page asks it for tokens
    yield collector, relay, issuer
    issuer.stop()
    relay.stop()
    collector.stop()


@pytest.fixture
def parties(_parties):
    """The module's three processes, each running when the test starts (a test before may have stopped or killed one:
    ``start`` brings it back on the same port and files)."""
    for party in _parties:
        if party.process is None or party.process.poll() is not None:
            party.start()
    return _parties


def test_reports_through_the_relay_count_once_unlinked_with_the_guarantee_stated(parties):
    collector, relay, issuer = parties
    _create(parties, "anon")
    values = np.arange(130) % 16
    (credential,) = issuer.credentials("anon", 1, tokens_each=133)  # a proxy for 130 devices (and 3 resent reports)
    with Client(relay.url) as device:  # the relay's URL without the campaign's pin: refused before anything is drawn
        with pytest.raises(CampaignIdentityError):
            device.submit_values("anon", values[:1])
    with Client(collector.url, issuer_credential=credential, issuer=issuer.url) as device:
        acks = device.submit_values("anon", values, batch_size=50)
        assert sum(ack["relayed"] for ack in acks) == 130 and all(ack["duplicates"] == 0 for ack in acks)
        again = device.submit_reports("anon", device.protocol("anon"), np.zeros(3, dtype=np.uint64), batch_id=acks[0]["batch_id"])
        assert again["duplicates"] == 3  # a report id seen before is that report, even sealed again
    status = _drained(relay, "anon")
    summary = _summary(collector, "anon")
    waiting = status["waiting"].get("anon", 0)
    assert summary["n"] == 130 - waiting and waiting < 20 and summary["rejected"] == {}
    statement = summary["anonymity"]
    assert statement["smallest_batch"] >= 20 and statement["local"]["epsilon"] == 1.0
    assert statement["central"]["model"] == "central" and statement["central"]["epsilon"] < 1.0
    assert statement["central"]["n"] == statement["smallest_batch"] and statement["admission"]["issuer"] == issuer.url
    assert any("collude" in assumption for assumption in statement["assumptions"])
    public = httpx.get(f"{collector.url}/api/campaigns/anon/config", timeout=30).json()
    passed_on = httpx.get(f"{relay.url}/api/campaigns/anon/config", timeout=30).json()  # cached by the relay a few seconds
    assert public["anonymity"] == statement and passed_on["relay"] == public["relay"] and public["relay"]["key_id"]
    # what the collector stored of the batches: the relay's random batch ids, no arrival time
    database = sqlite3.connect(collector.db_url)
    rows = database.execute("SELECT batch_id, received_ms FROM batches WHERE campaign_id = 'anon'").fetchall()
    assert rows and all(len(batch_id) == 32 for batch_id, _ in rows) and len({received for _, received in rows}) == 1
    device_ids = {ack["batch_id"] for ack in acks}
    assert not device_ids & {batch_id for batch_id, _ in rows}
    # a direct submission to the campaign is refused: it would show who sent it
    protocol = local.from_config(CONFIG)
    direct = httpx.put(f"{collector.url}/api/campaigns/anon/batches/{uuid.uuid4().hex}",
                       content=io.encode_record(protocol, protocol.privatize([1], secure=True)),
                       headers={"content-type": "application/octet-stream"}, timeout=30)
    assert direct.status_code == 409 and direct.json()["error"] == "relayed_campaign"
    # only the relay's token delivers relayed batches
    forged = httpx.put(f"{collector.url}/api/campaigns/anon/relayed/{uuid.uuid4().hex}", content=b"", timeout=30,
                       headers={"content-type": "application/vnd.dpdist.relayed-batch", "authorization": "Bearer nope"})
    assert forged.status_code == 401


def test_dpdist_submit_and_the_node_client_send_through_the_relay(parties, tmp_path):
    collector, relay, issuer = parties
    httpx.post(f"{issuer.url}/issuer/v1/keys", json={"name": "cli", "tokens_each": 45}, timeout=30,
               headers={"authorization": f"Bearer {ISSUER_ADMIN_TOKEN}"})
    created = server_zygote.run([sys.executable, "-m", "dpdist.cli", "campaign", "create", "--server", collector.url, "--name", "cli",
                                 "--config", json.dumps(CONFIG), "--relay", relay.url, "--issuer", issuer.url, "--issuer-key", "cli",
                                 "--open"], timeout=120, env={**os.environ, "DPDIST_ADMIN_TOKEN": ADMIN_TOKEN})
    assert created.returncode == 0 and f"collected through the relay {relay.url} only" in created.stdout, created.stderr
    pin = httpx.get(f"{collector.url}/api/campaigns/cli/config", timeout=30).json()["relay"]["pin"]
    assert f"pin {pin}" in created.stdout
    assert "colluding 0 device(s) x tokens_each 45 (the issuer's, per credential) = 0 report(s)" in created.stdout
    (proxy,) = issuer.credentials("cli", 1, tokens_each=45)
    data = tmp_path / "values.csv"
    data.write_text("v\n" + "\n".join(str(i % 16) for i in range(45)) + "\n")
    # dpdist submit through the relay's own URL, with the pin: the identity the relay passes on must hash to it
    result = server_zygote.run([sys.executable, "-m", "dpdist.cli", "submit", "--server", relay.url, "--pin", pin, "--campaign", "cli",
                                "--issuer", issuer.url, str(data), "--column", "v"], timeout=300,
                               env={**os.environ, "DPDIST_ISSUER_CREDENTIAL": proxy})
    assert result.returncode == 0, result.stderr
    unpinned = server_zygote.run([sys.executable, "-m", "dpdist.cli", "submit", "--server", relay.url, "--campaign", "cli",
                                  str(data), "--column", "v"], timeout=300)
    assert unpinned.returncode != 0 and len(unpinned.stderr.strip().splitlines()) == 1 and "pin" in unpinned.stderr
    # the node client: 35 devices, each a client of its own with its own credential, given the collector's URL (one
    # node process runs them in turn: a node start each added nothing a device does)
    devices = [{"server": collector.url, "campaign": "cli", "values": [index % 16], "issuer": {"credential": credential, "url": issuer.url}}
               for index, credential in enumerate(issuer.credentials("cli", 35))]
    node = subprocess.run(["node", str(ROOT / "tests" / "relayed_submit_driver.mjs"), json.dumps(devices)],
                          capture_output=True, text=True, timeout=300)
    assert node.returncode == 0, node.stdout + node.stderr
    answers = json.loads(node.stdout.strip().splitlines()[-1])
    assert [sum(ack["relayed"] for ack in answer["acks"]) for answer in answers] == [1] * 35
    status = _drained(relay, "cli")
    summary = _summary(collector, "cli")
    assert summary["n"] == 80 - status["waiting"].get("cli", 0) and summary["rejected"] == {}


def test_dpdist_submit_keeps_its_tokens_through_a_relay_outage(parties, tmp_path):
    """A relay outage, live: with the relay down, `dpdist submit` gets its tokens (before it randomizes) and
    fails to send; run again once the relay is back, it resends the journal's reports with the same tokens, and a
    credential of exactly one token per row is enough."""
    collector, relay, issuer = parties
    _create(parties, "outage")
    (credential,) = issuer.credentials("outage", 1, tokens_each=20)
    data = tmp_path / "values.csv"
    data.write_text("v\n" + "\n".join(str(i % 16) for i in range(20)) + "\n")
    command = [sys.executable, "-m", "dpdist.cli", "submit", "--server", collector.url, "--issuer", issuer.url,
               "--campaign", "outage", str(data), "--column", "v", "--retries", "1"]
    environment = {**os.environ, "DPDIST_ISSUER_CREDENTIAL": credential, "DPDIST_CACHE_DIR": str(tmp_path / "cache")}
    relay.stop()
    try:
        failed = server_zygote.run(command, timeout=300, env=environment)
    finally:
        relay.start()
    assert failed.returncode != 0 and len(failed.stderr.strip().splitlines()) <= 3, failed.stderr
    again = server_zygote.run(command, timeout=300, env=environment)
    assert again.returncode == 0, again.stderr
    _drained(relay, "outage")
    assert _summary(collector, "outage")["n"] == 20


def test_dpdist_submit_and_the_node_client_send_rfc9458_requests_through_the_relay(parties, tmp_path):
    """`dpdist submit` (its deprecated --relay-envelope has no effect) and the Node client's RFC 9458 requests, into one
    campaign through the real relay: every report an RFC 9458 request, counted once, none rejected."""
    collector, relay, issuer = parties
    _create(parties, "rfc9458")
    credentials = issuer.credentials("rfc9458", 3, tokens_each=25)
    data = tmp_path / "values.csv"
    data.write_text("v\n" + "\n".join(str(i % 16) for i in range(25)) + "\n")
    for credential, envelope in zip(credentials, ("auto", "dpdist")):
        result = server_zygote.run([sys.executable, "-m", "dpdist.cli", "submit", "--server", collector.url, "--issuer",
                                    issuer.url, "--campaign", "rfc9458", str(data), "--column", "v", "--relay-envelope", envelope],
                                   timeout=300, env={**os.environ, "DPDIST_ISSUER_CREDENTIAL": credential,
                                                     "DPDIST_CACHE_DIR": str(tmp_path / envelope)})
        assert result.returncode == 0 and "25 report(s) accepted by the relay" in result.stdout, result.stderr
    node = subprocess.run(["node", str(ROOT / "tests" / "relayed_submit_driver.mjs"), json.dumps({
        "server": collector.url, "campaign": "rfc9458", "values": list(range(10)),
        "issuer": {"credential": credentials[2], "url": issuer.url}})], capture_output=True, text=True, timeout=300)
    assert node.returncode == 0, node.stdout + node.stderr
    assert sum(ack["relayed"] for ack in json.loads(node.stdout.strip().splitlines()[-1])["acks"]) == 10
    status = _drained(relay, "rfc9458")
    assert set(status["waiting_by_envelope"].get("rfc9458", {})) <= {"ohttp"}
    summary = _summary(collector, "rfc9458")
    assert summary["n"] == 60 - status["waiting"].get("rfc9458", 0) >= 40 and summary["rejected"] == {}
    assert summary["anonymity"]["smallest_batch"] >= relay.min_batch


CLIENTS, REPORTS, KILLS = 4, 150, 20


def test_sigkill_of_relay_and_collector_loses_nothing_and_counts_nothing_twice(parties, tmp_path):
    """Devices send one report per request with retries while the relay and the collector are SIGKILLed at random
    (seeded) moments and restarted, at least ``KILLS`` times while they send: a device sends its report ``r`` once
    ``(r + 1) KILLS / REPORTS`` kills have been made, so the kills are spread over the sending whatever the machine's
    speed.  Afterwards filler reports push every real report out of the relay (it forwards the oldest first): the
    collector's counts are the real reports' counts plus fillers only."""
    collector, relay, issuer = parties
    _create(parties, "crash", keep_reports=True)
    credentials = issuer.credentials("crash", CLIENTS + 1, tokens_each=2 * relay.max_batch + REPORTS)
    protocol = local.from_config(CONFIG)
    rng = np.random.default_rng(20261123)
    reports = [protocol.privatize(rng.integers(0, 15, REPORTS), rng=rng) for _ in range(CLIENTS)]
    failures: list[BaseException] = []
    done = threading.Event()
    kills = [0]  # kills (each followed by its restart) so far
    paced = threading.Condition()

    def device(index):
        try:
            with Client(collector.url, retries=400, backoff=0.05, issuer_credential=credentials[index], issuer=issuer.url) as client:
                client.config("crash")
                client.prepare_tokens("crash", REPORTS)  # all of the device's tokens first, as a device may
                for row in range(REPORTS):
                    with paced:
                        assert paced.wait_for(lambda: kills[0] >= (row + 1) * KILLS // REPORTS or failures, timeout=600), (
                            f"{kills[0]} kills in 600 s")
                    if failures:
                        return
                    client.submit_reports("crash", protocol, reports[index][row : row + 1], batch_id=f"d{index}r{row}")
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    def killer():
        chaos = random.Random(7)
        try:
            while not done.is_set():
                time.sleep(chaos.uniform(0.5, 2.0))
                target = relay if chaos.random() < 0.6 else collector
                target.kill()
                time.sleep(chaos.uniform(0.0, 0.3))
                target.start()
                with paced:
                    kills[0] += 1
                    paced.notify_all()
        except BaseException as error:  # noqa: BLE001 - reported below; the devices stop waiting for kills
            failures.append(error)
            with paced:
                paced.notify_all()

    threads = [threading.Thread(target=device, args=(i,)) for i in range(CLIENTS)]
    chaos = threading.Thread(target=killer)
    for thread in (*threads, chaos):
        thread.start()
    for thread in threads:
        thread.join(timeout=900)
    done.set()
    chaos.join(timeout=60)
    assert not failures, failures
    assert kills[0] >= KILLS, kills
    filler = np.full(2 * relay.max_batch, 15, dtype=np.uint64)
    with Client(collector.url, retries=50, backoff=0.05, issuer_credential=credentials[-1], issuer=issuer.url) as client:
        client.config("crash")
        client.submit_reports("crash", protocol, filler, batch_id="filler")
    _drained(relay, "crash")
    summary = _summary(collector, "crash")
    assert summary["rejected"] == {}
    assert CLIENTS * REPORTS <= summary["n"] <= CLIENTS * REPORTS + len(filler)
    with AdminClient(collector.url, admin_token=ADMIN_TOKEN) as admin:
        kept = admin.export("crash", tmp_path / "kept.bin") and io.read_reports(tmp_path / "kept.bin", protocol).reports
    counted = np.bincount(np.asarray(kept).astype(np.int64).ravel(), minlength=16)
    real = np.bincount(np.concatenate(reports).astype(np.int64), minlength=16)
    extra = counted - real  # every real report once; the rest fillers
    assert np.all(extra[:15] == 0) and extra[15] == summary["n"] - CLIENTS * REPORTS


def test_the_java_client_keeps_its_tokens_with_its_reports_through_a_relay_outage(parties, tmp_path):
    """The Java client (tests/JavaDeviceDriver.java) with a credential of exactly one token per report: with the relay
    down it gets its 20 tokens (before it draws), seals its reports (HPKE on the JDK's X25519, opened by the collector's
    pyhpke) and fails to send; the app keeps the batch it was given back, and once the relay is back sends it again under
    its batch id: the same tokens (the issuer would refuse a 21st), every report counted once."""
    collector, relay, issuer = parties
    config = {"protocol": "grr", "version": 1, "epsilon": 0.5, "domain_size": 16}  # 20 reports: the device's budget of 10
    _create(parties, "java-outage", config=config)
    (credential,) = issuer.credentials("java-outage", 1, tokens_each=20)
    device = {"server": collector.url, "campaign": "java-outage", "storage": str(tmp_path / "device"),
              "issuer": {"credential": credential, "url": issuer.url}, "retries": 1, "retryDelayMs": 50}
    relay.stop()
    try:
        failed = run_device({**device, "values": [i % 16 for i in range(20)], "unsentFile": str(tmp_path / "unsent.json")})
    finally:
        relay.start()
    assert failed["status"] == 3 and failed["error"]["name"] == "ServiceError", failed
    tokens = json.loads((tmp_path / "device" / "dpdist-tokens.json").read_text())["campaigns"]
    [held] = tokens.values()
    assert len(held["bound"]) + len(held["spare"]) == 20 and not held["pending"]  # kept with the reports, not spent
    again = run_device({**device, "values": [], "resendFile": str(tmp_path / "unsent.json")})
    assert again["status"] == 0 and again["acks"][0]["relayed"] == 20, again
    assert json.loads((tmp_path / "device" / "dpdist-tokens.json").read_text())["campaigns"] == {}  # spent, forgotten
    _drained(relay, "java-outage")
    summary = _summary(collector, "java-outage")
    assert summary["n"] == 20 and summary["rejected"] == {}


def test_java_reports_through_the_relay_lose_nothing_when_the_relay_is_sigkilled(parties, tmp_path):
    """A device of the Java client sends 150 reports one request each, in batches of 10 with pauses, while the relay is
    SIGKILLed and restarted three times; it retries each report with the same sealed bytes and token.  Afterwards filler
    reports push every real report out of the relay: the collector's counts are the Java reports' counts plus fillers."""
    collector, relay, issuer = parties
    _create(parties, "java-crash", keep_reports=True)
    java_credential, filler_credential = issuer.credentials("java-crash", 2, tokens_each=2 * relay.max_batch + 150)
    kills = []

    def killer():
        for moment in (1.0, 2.0, 3.0):  # the device pauses 14 x 0.3 s between its batches: it is still sending
            time.sleep(moment - (kills[-1] if kills else 0.0))
            relay.kill()
            time.sleep(0.2)
            relay.start()
            kills.append(moment)

    chaos = threading.Thread(target=killer)
    chaos.start()
    started = time.monotonic()
    sent = run_device({"server": collector.url, "campaign": "java-crash", "values": [i % 15 for i in range(150)], "batchSize": 10,
                       "pauseMs": 300, "retries": 400, "retryDelayMs": 50, "issuer": {"credential": java_credential, "url": issuer.url}})
    elapsed = time.monotonic() - started
    chaos.join(timeout=120)
    assert sent["status"] == 0, sent
    assert kills == [1.0, 2.0, 3.0] and elapsed > 3.0
    assert sum(ack["relayed"] for ack in sent["acks"]) == 150
    real = np.frombuffer(base64.b64decode(sent["reports"]), dtype=np.uint8)
    protocol = local.from_config(CONFIG)
    filler = np.full(2 * relay.max_batch, 15, dtype=np.uint8)
    with Client(collector.url, retries=50, backoff=0.05, issuer_credential=filler_credential, issuer=issuer.url) as client:
        client.config("java-crash")
        client.submit_reports("java-crash", protocol, filler, batch_id="filler")
    _drained(relay, "java-crash")
    summary = _summary(collector, "java-crash")
    assert summary["rejected"] == {} and 150 <= summary["n"] <= 150 + len(filler)
    with AdminClient(collector.url, admin_token=ADMIN_TOKEN) as admin:
        kept = admin.export("java-crash", tmp_path / "kept.bin") and io.read_reports(tmp_path / "kept.bin", protocol).reports
    counted = np.bincount(np.asarray(kept).astype(np.int64).ravel(), minlength=16)
    extra = counted - np.bincount(real.astype(np.int64), minlength=16)  # every Java report once; the rest fillers
    assert np.all(extra[:15] == 0) and extra[15] == summary["n"] - 150


def test_the_participate_page_in_chromium_sends_through_the_relay(parties, chromium, tmp_path):
    """The page is the collector's (the relay serves none); it takes the device's credential from the URL's fragment,
    gets a token from the issuer, seals the report with the bundled @hpke/core and sends it to the relay across
    origins; with four more reports a batch of K = 5 reaches the collector, which counts the browser's report."""
    collector, relay, issuer = parties
    relay.stop()  # the same relay with K = 5: the browser's report and four from Python make one batch
    small = RelayProcess(Path(relay.db_url), collector.url, min_batch=5, max_batch=5).start()
    try:
        _create((collector, small, issuer), "browser")
        (credential,) = issuer.credentials("browser", 1)
        result = subprocess.run(
            [_required("node"), "--experimental-websocket", str(ROOT / "tests" / "participate_relayed_driver.mjs"), str(chromium),
             f"{collector.url}/campaigns/browser/participate#credential={credential}&issuer={quote(issuer.url, safe='')}", "3"],
            capture_output=True, text=True, timeout=180,
        )
        assert result.returncode == 0, result.stderr
        page = json.loads(result.stdout.strip().splitlines()[-1])
        assert page["status"].startswith("Sent."), page
        assert credential not in page["hash"]  # the credential left the address bar
        assert _relay_status(small)["waiting"].get("browser") == 1 and _summary(collector, "browser")["n"] == 0
        (proxy,) = issuer.credentials("browser", 1, tokens_each=4)
        with Client(collector.url, issuer_credential=proxy, issuer=issuer.url) as device:
            device.submit_values("browser", np.array([1, 2, 3, 4]), batch_size=4)
        _drained(small, "browser")
        summary = _summary(collector, "browser")
        assert summary["n"] == 5 and summary["rejected"] == {} and summary["anonymity"]["smallest_batch"] == 5
        # the relay serves no page: a page it served would be code the relay controls
        assert httpx.get(f"{small.url}/campaigns/browser/participate", timeout=30).status_code == 404
    finally:
        small.stop()


def test_no_secret_the_relay_holds_or_checks_reaches_its_log_however_a_client_sends_it(parties, tmp_path):
    """The relay's admin token, its token to the collector and a Privacy Pass token (which it checks), sent in every
    header, path parameter, query, body and raw request of tests/log_secrets_support.py, to a relay at the debug level
    over h11 and one over httptools: in no line of their logs."""
    import secrets

    from dpdist.relay._app import ROUTES
    from log_secrets_support import lines_holding, send_every_way
    from relay_support import RELAY_TOKEN

    collector, _, issuer = parties
    held = {"admin token": ADMIN_TOKEN, "relay token": RELAY_TOKEN,
            "privacy pass token": base64.urlsafe_b64encode(secrets.token_bytes(322)).decode().rstrip("=")}
    routes = [(method, route.path) for route in ROUTES for method in sorted(route.methods - {"HEAD"})]
    for http, level in (("h11", "debug"), ("httptools", "info")):
        log = tmp_path / f"relay-{http}.log"
        relay = RelayProcess(tmp_path / f"relay-{http}.sqlite", collector.url, min_batch=5, max_batch=5, log_path=log,
                             options=("--http", http, "--rate-limit", "0"))
        relay.log_level = level
        relay.start()
        try:
            _create((collector, relay, issuer), f"leaks-{http}")
            known = {"campaign": f"leaks-{http}", "report_id": "0" * 32, "path": "x.js"}
            sent = sum(send_every_way(relay.url, secret, routes, known, f"Bearer {ADMIN_TOKEN}") for secret in held.values())
        finally:
            relay.stop()
        text = log.read_text(errors="replace")
        assert sent > 500 and "Started server process" in text, (sent, text[-500:])
        found = lines_holding(text, held)
        assert not found, {secret: lines[:5] for secret, lines in found.items()}


@pytest.mark.parametrize("make", ["not a database", "random bytes", "/dev/null", "the collector's database"])
def test_a_queue_sqlite_cannot_open_is_one_line_naming_it(tmp_path, monkeypatch, capsys, make):
    """These printed ~32 lines of the lifespan's traceback (exit 3), while serve and the issuer said one."""
    pytest.importorskip("starlette")
    import uvicorn

    from dpdist.cli import main

    path = {"not a database": tmp_path / "q.txt", "random bytes": tmp_path / "q.bin", "/dev/null": Path("/dev/null"),
            "the collector's database": tmp_path / "campaigns.sqlite"}[make]
    if make == "not a database":
        path.write_text("a text file, no database\n" * 100)
    elif make == "random bytes":
        path.write_bytes(np.random.default_rng(7).bytes(4096))
    elif make == "the collector's database":
        from dpdist.serve import create_app
        create_app(str(path), admin_token="admin-token-0123456789").state.service.store.db.close()
    if make == "/dev/null" and not path.exists():
        pytest.skip("no /dev/null")
    monkeypatch.setenv("DPDIST_RELAY_TOKEN", "relay-token-0123456789")
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: pytest.fail("the relay started"))
    from serve_support import free_port

    assert main(["relay", "--queue", str(path), "--collector", "http://127.0.0.1:1", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpdist: error: The '--queue' option: ") and err.count("\n") == 1 and "Traceback" not in err


def test_the_relay_token_rotates_while_python_and_java_devices_send_nothing_refused(tmp_path):
    """The operations page's relay token rotation with real processes: (1) the collector restarted with the new token
    and the previous one, (2) the relay restarted with the new token, its queue kept, (3) the collector restarted with
    the new token alone. Devices (Python, Java) send between the steps and notice nothing; every batch the relay
    formed is delivered and counted, and the old token is refused after step 3."""
    new = "rotated-relay-token-0123456789"
    collector = CollectorProcess(str(tmp_path / "campaigns.sqlite"), log_path=tmp_path / "collector.log")
    relay = RelayProcess(tmp_path / "relay.sqlite", collector.url, min_batch=20, max_batch=60, log_path=tmp_path / "relay.log")
    issuer = IssuerProcess(str(tmp_path / "issuer.sqlite"), log_path=tmp_path / "issuer.log")

    def restart(party, **variables):
        party.stop()
        environment = type(party).environment
        party.environment = lambda: {**environment(party), **variables}
        party.start()

    for party in (collector, relay, issuer):
        party.start()
    try:
        _create((collector, relay, issuer), "rotate")
        (credential,) = issuer.credentials("rotate", 1, tokens_each=200)

        def python_device(values) -> int:
            with Client(collector.url, issuer_credential=credential, issuer=issuer.url, retries=50, backoff=0.05) as device:
                return sum(ack["relayed"] for ack in device.submit_values("rotate", values))

        sent = python_device(np.arange(25) % 16)  # before: the old token
        _drained(relay, "rotate")
        restart(collector, DPDIST_RELAY_TOKEN=new, DPDIST_PREVIOUS_RELAY_TOKEN=RELAY_TOKEN)  # 1.
        sent += python_device(np.arange(25) % 16)  # the relay delivers under the old token
        _drained(relay, "rotate")
        restart(relay, DPDIST_RELAY_TOKEN=new)  # 2.
        java = run_device({"server": collector.url, "campaign": "rotate", "values": [i % 16 for i in range(25)],
                           "retries": 50, "retryDelayMs": 50, "issuer": {"credential": credential, "url": issuer.url}})
        assert java["status"] == 0, java
        sent += sum(ack["relayed"] for ack in java["acks"])
        _drained(relay, "rotate")
        restart(collector, DPDIST_RELAY_TOKEN=new)  # 3.
        sent += python_device(np.arange(25) % 16)
        status = _drained(relay, "rotate")
        summary = _summary(collector, "rotate")
        forged = httpx.put(f"{collector.url}/api/campaigns/rotate/relayed/{uuid.uuid4().hex}", content=b"", timeout=30,
                           headers={"content-type": "application/vnd.dpdist.relayed-batch",
                                    "authorization": f"Bearer {RELAY_TOKEN}"})
    finally:
        for party in (issuer, relay, collector):
            party.stop()
    waiting = status["waiting"].get("rotate", 0)
    assert sent == 100 and waiting < 20 and summary["n"] == sent - waiting and summary["rejected"] == {}
    assert status["batches"].get("delivered", 0) >= 4 and not status["batches"].get("pending")
    assert forged.status_code == 401
