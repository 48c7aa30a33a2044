"""The JavaScript client against a real ``dpdist serve``: from Node, and the participate page in
headless Chromium.

- A Node script submits values through ``Client`` (config fetched, CSPRNG, batches with batch
  ids); the campaign counts every report once.
- ``/campaigns/<id>/participate`` in headless Chromium (driven over the DevTools protocol by
  ``tests/participate_driver.mjs``): a value typed there is randomized in the page, its report
  and posterior are shown, and after sending it the campaign's n is 1.
- A campaign over records (calm, hdg, spl): one field per attribute, the record randomized in the page into
  one report the server accepts.
- The page draws one report per campaign and keeps it (``tests/participate_kept_driver.mjs``):
  no redraw control, 21 randomizations of a value and a reload show one report, another value is
  refused while it is unsent, and after sending the campaign is done on this browser.

Node and Chromium are required under CI (``CI=true``); elsewhere the tests skip without them.
They also skip while ``dpdist serve`` (``dpdist.serve`` and ``tests/serve_support.py``)
is not part of this checkout.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import httpx
import numpy as np
import pytest

pytest.importorskip("dpdist.serve", reason="dpdist serve is not in this checkout")
serve_support = pytest.importorskip("serve_support", reason="tests/serve_support.py is not in this checkout")
ServerProcess, admin_headers, free_port = serve_support.ServerProcess, serve_support.admin_headers, serve_support.free_port
import browser_support  # noqa: E402 - after the importorskip of the service

chromium = browser_support.chromium  # the fixture, under its name in this module
_required = browser_support.required

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parents[1] / "participate_driver.mjs"
KEPT_DRIVER = Path(__file__).resolve().parents[1] / "participate_kept_driver.mjs"
REFUSED_DRIVER = Path(__file__).resolve().parents[1] / "participate_refused_driver.mjs"
GRR = {"protocol": "grr", "version": 1, "epsilon": 1.0, "domain_size": 8}
SW = {"protocol": "sw", "version": 1, "epsilon": 2.0, "bounds": [0.0, 100.0], "bins": 64}
L_GRR = {"protocol": "l-grr", "version": 1, "epsilon": 3.0, "epsilon_1": 1.0, "domain_size": 8}
LOLOHA = {"protocol": "loloha", "version": 1, "epsilon": 3.0, "epsilon_1": 1.0, "domain_size": 8}
PEM = {"protocol": "pem", "version": 1, "epsilon": 2.0, "alphabet": "abcdefghijklmnopqrstuvwxyz", "max_chars": 8, "k": 4,
       "hash_count": 64}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    _required("node")
    process = ServerProcess(str(tmp_path_factory.mktemp("serve") / "campaigns.sqlite")).start()
    yield process
    process.stop()


def _campaign(server, config) -> str:
    name = "js-" + uuid.uuid4().hex[:10]
    with httpx.Client(base_url=server.url, headers=admin_headers(), timeout=30) as admin:
        assert admin.post("/api/campaigns", json={"campaign": name, "config": config}).status_code == 201
        assert admin.post(f"/api/campaigns/{name}/open").status_code == 200
    return name


def _summary(server, name) -> dict:
    response = httpx.get(f"{server.url}/api/campaigns/{name}", headers=admin_headers(), timeout=30)
    assert response.status_code == 200
    return response.json()


def test_node_client_submits_batches_that_count_once(server, tmp_path):
    name = _campaign(server, GRR)
    script = tmp_path / "submit.mjs"
    script.write_text(
        f"import {{ Client }} from {json.dumps((ROOT / 'clients/js/src/index.js').as_uri())};\n"
        f"const client = new Client({json.dumps(server.url)}, {json.dumps(name)}, {{ memoStorage: null, batchSize: 700 }});\n"
        "const values = Array.from({ length: 2000 }, (_, i) => i % 8);\n"
        "const acks = await client.submitMany(values);\n"
        "console.log(JSON.stringify(acks));\n"
    )
    result = subprocess.run([_required("node"), str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    acks = json.loads(result.stdout)
    assert [ack["accepted"] for ack in acks] == [700, 700, 600]
    assert all(ack["rejected"] == {} and not ack["duplicate"] for ack in acks)
    summary = _summary(server, name)
    assert summary["n"] == 2000 and summary["rejected"] == {} and summary["batches"] == 3


def test_node_client_submits_records_of_a_multi_attribute_campaign(server, tmp_path):
    """A `Client` of an smp campaign reads its client view (each attribute's protocol, budget and constants
    checked) and submits records, by name or in the schema's order: every report accepted, the served estimate's
    attribute counts add up to n."""
    config = {"protocol": "smp", "version": 1, "epsilon": 2.0, "attributes": [
        {"name": "weather", "labels": ["rain", "sun", "fog"]}, {"name": "age", "bounds": [0.0, 100.0]}]}
    name = _campaign(server, config)
    script = tmp_path / "submit.mjs"
    script.write_text(
        f"import {{ Client }} from {json.dumps((ROOT / 'clients/js/src/index.js').as_uri())};\n"
        f"const client = new Client({json.dumps(server.url)}, {json.dumps(name)}, {{ memoStorage: null, batchSize: 500 }});\n"
        "const records = Array.from({ length: 1200 }, (_, i) => (i % 2 ? { weather: ['rain', 'sun', 'fog'][i % 3], age: i % 90 }"
        " : [['rain', 'sun', 'fog'][i % 3], 20.5]));\n"
        "const acks = await client.submitMany(records);\n"
        "await client.submit({ weather: 'sun', age: 33 });\n"
        "console.log(JSON.stringify(acks));\n"
    )
    result = subprocess.run([_required("node"), str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    acks = json.loads(result.stdout)
    assert [ack["accepted"] for ack in acks] == [500, 500, 200] and all(ack["rejected"] == {} for ack in acks)
    assert _summary(server, name)["n"] == 1201
    served = httpx.get(f"{server.url}/api/campaigns/{name}/estimate", headers=admin_headers(), timeout=60).json()
    assert sum(estimate["n"] for estimate in served["estimate"]["attributes"].values()) == 1201


def test_node_client_submits_key_value_sets(server, tmp_path):
    """A `Client` of a pckv-grr campaign (its client view's a, b, p checked) submits sets as objects and as pairs:
    every report accepted, and the served estimate's key frequencies and means are the sets' within 5 SE / 0.15."""
    config = {"protocol": "pckv-grr", "version": 1, "epsilon": 4.0, "domain_size": 4, "padding_length": 2}
    name = _campaign(server, config)
    script = tmp_path / "submit.mjs"
    script.write_text(
        f"import {{ Client }} from {json.dumps((ROOT / 'clients/js/src/index.js').as_uri())};\n"
        f"const client = new Client({json.dumps(server.url)}, {json.dumps(name)}, {{ memoStorage: null, batchSize: 10000 }});\n"
        "const sets = Array.from({ length: 30000 }, (_, i) => (i % 2 ? { 0: 0.5, [1 + (i % 3)]: -0.5 } : [[0, 0.5]]));\n"
        "const acks = await client.submitMany(sets);\n"
        "console.log(JSON.stringify(acks));\n"
    )
    result = subprocess.run([_required("node"), str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    acks = json.loads(result.stdout)
    assert [ack["accepted"] for ack in acks] == [10000] * 3 and all(ack["rejected"] == {} for ack in acks)
    served = httpx.get(f"{server.url}/api/campaigns/{name}/estimate", headers=admin_headers(), timeout=60).json()
    estimate = served["estimate"]
    assert served["n"] == 30000 and estimate["kind"] == "key_value"
    truth = np.array([1.0, 1 / 6, 1 / 6, 1 / 6])  # key 0 held by all, keys 1..3 by a third of the odd users each
    frequency = estimate["frequency"]
    assert np.all(np.abs(np.array(frequency["frequencies"]) - truth) < 5 * np.array(frequency["standard_error"]))
    assert np.all(np.abs(np.array(estimate["means"]) - [0.5, -0.5, -0.5, -0.5]) < 0.15), estimate["means"]


def test_the_participate_page_refuses_a_key_value_campaign_saying_why(server, chromium):
    """The page has no form for a set of pairs: it says so, and how to send them, and shows no form."""
    config = {"protocol": "privkv", "version": 1, "epsilon": 2.0, "domain_size": 5}
    _, page = _drive(server, chromium, REFUSED_DRIVER, config)
    assert page["formHidden"] and page["status"].startswith("This campaign cannot be joined from this page")
    assert "(key, value) pairs" in page["status"] and "dpdist submit" in page["status"]


def _drive(server, chromium: int, driver: Path, config: dict, *arguments: str) -> tuple[str, dict]:
    """A new open campaign of ``config``, its participate page driven by ``driver`` with ``arguments`` in Chromium:
    the campaign's name and the one JSON object the driver prints."""
    name = _campaign(server, config)
    url = f"{server.url}/campaigns/{name}/participate"
    result = subprocess.run(
        [_required("node"), "--experimental-websocket", str(driver), str(chromium), url, *arguments],
        capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, result.stderr
    return name, json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("config, value", [(GRR, "3"), (SW, "42.5"), (PEM, "pear"), (L_GRR, "3"), (LOLOHA, "5")],
                         ids=["grr", "sw", "pem", "l-grr", "loloha"])
def test_the_participate_page_submits_a_value_that_appears_in_n(server, chromium, config, value):
    name, page = _drive(server, chromium, DRIVER, config, value)
    assert page["about"].startswith(f"Protocol {config['protocol'].upper()}")
    assert page["status"].startswith("Sent. The server accepted 1 report")
    shares = [float(share.rstrip(" %")) for _, share in page["rows"]]
    if config["protocol"] == "sw":  # ranges of the value in its order, summing to 100 %
        starts = [float(label.split(" – ")[0]) for label, _ in page["rows"]]
        assert starts == sorted(starts) and abs(sum(shares) - 100) <= 0.4  # 8 ranges rounded to 0.1 %
    else:
        assert shares == sorted(shares, reverse=True) and 0 < shares[0] < 100
    if config["protocol"] in ("grr", "l-grr", "loloha"):  # all 8 items listed: the posterior sums to 100 %
        assert len(shares) == 8 and abs(sum(shares) - 100) < 0.1
    # the page states what holds over time: one report, an unchanged value, values that change
    if config["protocol"] in ("loloha", "l-grr"):
        assert "one report is ε = 1 local DP" in page["about"] and "does not change" in page["about"]
        assert "if your value changes" in page["about"] and "privacy budget" in page["about"]
    if config["protocol"] == "loloha":  # through the browser's memo; the report is (seed, value): two uint64
        assert len(page["bytes"].split()) == 16
    if config["protocol"] == "l-grr":  # one report (through the browser's memo) is eps_1-DP, not eps_inf
        assert abs(shares[0] / shares[-1] - np.exp(config["epsilon_1"])) < 0.01 * np.exp(config["epsilon_1"])
    if config["protocol"] == "pem":  # words are not listed: the report's two probabilities, ratio e^eps
        assert len(shares) == 2 and abs(shares[0] / shares[1] - np.exp(config["epsilon"])) < 0.01 * np.exp(config["epsilon"])
        assert len(page["bytes"].split()) == 3  # (group, function, value), one byte each
    elif config["protocol"] != "loloha":
        assert len(page["bytes"].split()) == 1  # one report byte went out, nothing else
    summary = _summary(server, name)
    assert summary["n"] == 1 and summary["rejected"] == {}


@pytest.mark.parametrize("config", [GRR, L_GRR], ids=["grr", "l-grr"])
def test_the_participate_page_draws_one_report_per_campaign_and_keeps_it(server, chromium, config):
    """"Draw again" let a person redraw until they liked the report (twenty redraws
    gave 5 distinct GRR reports), which breaks eps-LDP and biases the estimate."""
    name, page = _drive(server, chromium, KEPT_DRIVER, config, "3", "5")
    assert not page["atStart"]["shown"]
    first = page["draws"][0]
    assert first and page["draws"] == [first] * 21, f"{len(set(page['draws']))} distinct reports in 21 draws"
    assert page["buttons"] == ["randomize", "send"]  # no redraw control
    # a reload shows the kept report at once (and its value); the same value gives it again
    assert page["afterReload"]["shown"] and page["afterReload"]["bytes"] == first and page["afterReload"]["value"] == "3"
    assert page["afterReload"]["sendable"] and "kept" in page["afterReload"]["status"]
    assert page["sameValue"]["bytes"] == first and "not drawn again" in page["sameValue"]["status"]
    # another value: the campaign's one report is already drawn; it is still the one offered
    assert page["otherValue"]["bytes"] == first and page["otherValue"]["sendable"] and page["otherValue"]["value"] == "3"
    assert "already drew its one report" in page["otherValue"]["status"] and '"3"' in page["otherValue"]["status"]
    assert page["sent"]["status"].startswith("Sent.") and not page["sent"]["sendable"]
    # once sent, the campaign is done on this browser: nothing to draw or send, whatever is typed
    for after in (page["afterSend"], page["otherAfterSend"]):
        assert after["bytes"] == first and not after["sendable"] and "already sent" in after["status"]
    summary = _summary(server, name)
    assert summary["n"] == 1 and summary["batches"] == 1


#: campaigns over records: a marginal, a grid and a split budget, each with its record
CALM = {"protocol": "calm", "version": 1, "epsilon": 2.0, "attributes": [
    {"name": "weather", "labels": ["rain", "sun", "fog"]}, {"name": "transport", "labels": ["bus", "bike"]},
    {"name": "floor", "domain_size": 6}]}
HDG = {"protocol": "hdg", "version": 1, "epsilon": 1.0, "resolution": 16, "g1": 8, "g2": 4, "attributes": [
    {"name": "age", "bounds": [0.0, 100.0]}, {"name": "commute", "bounds": [0.0, 120.0]}]}
SPL = {"protocol": "spl", "version": 1, "epsilon": 3.0, "attributes": [
    {"name": "weather", "labels": ["rain", "sun", "fog"]}, {"name": "age", "bounds": [0.0, 100.0]}]}


@pytest.mark.parametrize("config, record", [
    (CALM, {"weather": "fog", "transport": "bike", "floor": "4"}),
    (HDG, {"age": "41.5", "commute": "35"}),
    (SPL, {"weather": "sun", "age": "67"}),
], ids=["calm", "hdg", "spl"])
def test_the_participate_page_submits_a_record_of_a_multi_attribute_campaign(server, chromium, config, record):
    """A person types one value per attribute (a list for labels, a number field otherwise); the record is randomized
    in the page into one report of the campaign's record format, which the server accepts and estimates from."""
    name, page = _drive(server, chromium, DRIVER, config, json.dumps(record))
    attributes = [attribute["name"] for attribute in config["attributes"]]
    assert page["fields"] == [[a["name"], "SELECT" if "labels" in a else "INPUT"] for a in config["attributes"]]
    assert page["about"].startswith(f"Protocol {config['protocol'].upper()}: the report of your record ({len(attributes)} answers)")
    assert f"covers your whole record ({', '.join(attributes)})" in page["summary"] and not page["table"]
    assert page["status"].startswith("Sent. The server accepted 1 report")
    from dpdist import local

    protocol = local.from_config(config)
    assert len(page["bytes"].split()) == protocol.report_format.dtype.itemsize  # one report of the record format
    head = {"calm": "marginal ", "hdg": "grid ", "spl": "weather: "}[config["protocol"]]
    assert page["report"].startswith(head), page["report"]
    summary = _summary(server, name)
    assert summary["n"] == 1 and summary["rejected"] == {}
    served = httpx.get(f"{server.url}/api/campaigns/{name}/estimate", headers=admin_headers(), timeout=60)
    assert served.status_code == 200 and served.json()["estimate"]["n"] == 1
