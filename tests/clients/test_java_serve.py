"""The Java client against a real ``dpdist serve``, beside the Python and JavaScript clients.

- A campaign collected from the three clients at once: 1,000 reports of the Java client (a simulation of many users,
  ``withoutLedger``, in batches of 20) while the server is SIGKILLed and restarted three times as it sends, Java devices
  with their own ledgers, a Java batch sent twice under one id (an answer lost), Python's ``submit_values`` and devices of
  the JavaScript client under node: every report counted exactly once, none rejected, and the estimate within its
  standard errors of the truth.
- A campaign of each protocol of ``SERVED`` (projective geometry response) from Java, Python and JavaScript devices:
  every report counted, none rejected, the estimate within its standard errors of the truth.
- A device's ledger, kept by ``FileStorage`` across runs, refuses past its budget before anything is drawn or sent
  (nothing reaches the server), and Python reads that ledger (``PrivacyLedger.from_dict``) and charges it further.
- A longitudinal campaign: a Java device reports the same value on two days through one memo; Python reads its memo.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time

import httpx
import numpy as np
import pytest

from dpdist import local
from dpdist._http._tls import verifying_context
from dpdist.client import AdminClient, Client
from dpdist.local.ledger import PrivacyLedger
from java_support import run_device
from js_support import ROOT, node_path
from serve_support import ADMIN_TOKEN, ServerProcess, admin_headers

pytestmark = pytest.mark.slow

CONFIG = {"protocol": "oue", "version": 1, "epsilon": 0.5, "domain_size": 16}


def _create(server, name: str, config: dict) -> None:
    with httpx.Client(base_url=server.url, headers=admin_headers(), timeout=30) as admin:
        assert admin.post("/api/campaigns", json={"campaign": name, "config": config}).status_code == 201
        assert admin.post(f"/api/campaigns/{name}/open").status_code == 200


def _summary(server, name: str) -> dict:
    for _ in range(100):  # the server may be restarting
        try:
            return httpx.get(f"{server.url}/api/campaigns/{name}", headers=admin_headers(), timeout=30,
                             verify=verifying_context()).json()  # polled: a TLS context each was 30 ms of CPU
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("the server did not answer")


@pytest.fixture
def server(tmp_path):
    process = ServerProcess(str(tmp_path / "campaigns.sqlite"), log_path=tmp_path / "serve.log").start()
    yield process
    process.stop()


def _node_device(server, campaign: str, values: list) -> int:
    result = subprocess.run([node_path(), str(ROOT / "tests" / "relayed_submit_driver.mjs"), json.dumps({
        "server": server.url, "campaign": campaign, "values": values})], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return sum(ack["accepted"] for ack in json.loads(result.stdout.strip().splitlines()[-1])["acks"])


def test_java_python_and_node_devices_are_counted_once_through_server_kills(server, tmp_path):
    _create(server, "mixed", CONFIG)
    rng = np.random.default_rng(60)
    java_values = rng.integers(0, 16, 1000)
    kills = []

    def killer():
        # the server dies while the Java device sends: at 200, 500 and 800 of its reports counted
        for threshold in (200, 500, 800):
            while _summary(server, "mixed")["n"] < threshold:
                time.sleep(0.05)
            server.kill()
            time.sleep(0.3)
            server.start()
            kills.append(threshold)

    chaos = threading.Thread(target=killer)
    chaos.start()
    bulk = run_device({"server": server.url, "campaign": "mixed", "values": java_values.tolist(), "batchSize": 20, "pauseMs": 40,
                       "retries": 200, "retryDelayMs": 50})
    chaos.join(timeout=300)
    assert bulk["status"] == 0, bulk
    assert kills == [200, 500, 800]
    assert sum(ack["n_read"] for ack in bulk["acks"]) == 1000 and all(ack["rejected"] == {} for ack in bulk["acks"])
    assert _summary(server, "mixed")["n"] == 1000  # a batch the server stored before dying was a duplicate when resent

    sent = [java_values]
    for i in range(3):
        values = rng.integers(0, 16, 20)
        sent.append(values)
        device = run_device({"server": server.url, "campaign": "mixed", "values": values.tolist(), "storage": str(tmp_path / f"device{i}")})
        assert device["status"] == 0  # 20 reports at epsilon 0.5: the default budget of 10
    twice = run_device({"server": server.url, "campaign": "mixed", "values": [1, 2, 3, 4], "sendTwice": True})
    assert [ack["duplicate"] for ack in twice["acks"]] == [False, True]
    sent.append(np.array([1, 2, 3, 4]))
    with Client(server.url) as python:
        values = rng.integers(0, 16, 500)
        sent.append(values)
        assert sum(ack["accepted"] for ack in python.submit_values("mixed", values, batch_size=100)) == 500
    for _ in range(3):
        values = rng.integers(0, 16, 20)
        sent.append(values)
        assert _node_device(server, "mixed", values.tolist()) == 20

    truth = np.bincount(np.concatenate(sent), minlength=16)
    summary = _summary(server, "mixed")
    assert summary["n"] == truth.sum() == 1000 + 60 + 4 + 500 + 60 and summary["rejected"] == {}
    with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
        estimate = admin.estimate("mixed", replicates=0)["estimate"]
    frequencies, errors = np.array(estimate["frequencies"]), np.array(estimate["standard_error"])
    assert np.all(np.abs(frequencies - truth / truth.sum()) < 5 * errors), (frequencies, truth / truth.sum(), errors)


#: protocols collected from Python, JavaScript and Java devices into one campaign each, estimated within their errors
SERVED = [
    {"protocol": "pgr", "version": 1, "epsilon": 0.5, "domain_size": 40},  # q = 3, t = 4: the 40 points of PG(3, 3)
    {"protocol": "rws", "version": 1, "epsilon": 0.5, "domain_size": 128},  # m = 131: the pair index in 16 bits
]


@pytest.mark.parametrize("config", SERVED, ids=lambda config: config["protocol"])
def test_a_campaign_of_python_javascript_and_java_devices_is_counted_and_estimated(server, config):
    name, d = config["protocol"], config["domain_size"]
    _create(server, name, config)
    rng = np.random.default_rng(61)
    law = np.full(d, 0.7 / d)
    law[3] += 0.3  # an estimate of 0 for item 3 is 10 standard errors off

    def draw(n: int) -> np.ndarray:
        return rng.choice(d, size=n, p=law)

    sent = [draw(20_000)]
    java = run_device({"server": server.url, "campaign": name, "values": sent[0].tolist(), "batchSize": 2000})
    assert java["status"] == 0 and all(ack["rejected"] == {} for ack in java["acks"]), java
    with Client(server.url) as python:
        sent.append(draw(1000))
        assert sum(ack["accepted"] for ack in python.submit_values(name, sent[-1], batch_size=250)) == 1000
    for _ in range(2):
        sent.append(draw(20))  # 20 reports at epsilon 0.5: the default budget of 10
        assert _node_device(server, name, sent[-1].tolist()) == 20

    truth = np.bincount(np.concatenate(sent), minlength=d)
    summary = _summary(server, name)
    assert summary["n"] == truth.sum() == 21_040 and summary["rejected"] == {}
    with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
        estimate = admin.estimate(name, replicates=0)["estimate"]
    frequencies, errors = np.array(estimate["frequencies"]), np.array(estimate["standard_error"])
    assert np.all(np.abs(frequencies - truth / truth.sum()) < 5 * errors), (frequencies, truth / truth.sum(), errors)


def test_a_java_devices_ledger_refuses_past_its_budget_and_python_reads_it(server, tmp_path):
    _create(server, "budget", CONFIG)
    storage = tmp_path / "device"
    first = run_device({"server": server.url, "campaign": "budget", "values": list(range(16)), "storage": str(storage)})
    assert first["status"] == 0 and first["acks"][0]["accepted"] == 16  # epsilon 8 of 10
    refused = run_device({"server": server.url, "campaign": "budget", "values": list(range(5)), "storage": str(storage)})
    assert refused["status"] == 3 and refused["error"]["name"] == "PrivacyBudgetError"
    assert "would spend epsilon 2.5" in refused["error"]["message"] and "2 left" in refused["error"]["message"]
    assert _summary(server, "budget")["n"] == 16  # nothing of the refused reports was sent
    ledger = PrivacyLedger.from_dict(json.loads((storage / "dpdist-ledger.json").read_text()))
    protocol = local.from_config(CONFIG)
    assert ledger.remaining() == pytest.approx(2.0) and len(ledger.to_dict()["charges"]) == 1
    ledger.report(protocol, np.array([3, 4]), server.url)  # Python charges the Java-written ledger further
    (storage / "dpdist-ledger.json").write_text(json.dumps(ledger.to_dict()))
    again = run_device({"server": server.url, "campaign": "budget", "values": [1], "storage": str(storage)})
    assert again["status"] == 0  # epsilon 0.5 of the 1.0 Python left
    charges = PrivacyLedger.from_dict(json.loads((storage / "dpdist-ledger.json").read_text())).to_dict()["charges"]
    assert [charge["reports"] for charge in charges] == [16, 2, 1]
    assert _summary(server, "budget")["n"] == 17


def test_a_java_device_reports_over_time_through_one_memo_python_reads(server, tmp_path):
    config = {"protocol": "l-grr", "version": 1, "epsilon": 2.0, "epsilon_1": 0.5, "domain_size": 8}
    storage = tmp_path / "device"
    for day in (1, 2):
        _create(server, f"day{day}", config)
        result = run_device({"server": server.url, "campaign": f"day{day}", "values": [3], "storage": str(storage)})
        assert result["status"] == 0 and result["acks"][0]["accepted"] == 1
        state = json.loads((storage / "dpdist-ledger.json").read_text())
        [stream] = state["streams"].values()  # one scope: the collector and the config without its budgets
        if day == 1:
            memo = stream["memo"]
            assert set(memo) == {"3"} and stream["reports"] == 1
        else:
            assert stream["memo"] == memo and stream["reports"] == 2  # the same permanent response, reused
    ledger = PrivacyLedger.from_dict(state)
    protocol = local.from_config(config)
    charged = [charge["epsilon"] for charge in ledger.to_dict()["charges"]]
    assert charged[0] == pytest.approx(protocol.epsilon_per_report) and len(charged) == 2
    # the device refuses a collector that changes a budget of its kept memo, before anything is drawn
    _create(server, "day3", {**config, "epsilon_1": 0.6})
    changed = run_device({"server": server.url, "campaign": "day3", "values": [3], "storage": str(storage)})
    assert changed["status"] == 3 and changed["error"]["name"] == "PrivacyBudgetError" and "epsilon_1=0.6" in changed["error"]["message"]
    assert _summary(server, "day3")["n"] == 0
