"""Pages a person can use, in headless Chromium, with screenshots.

- the participate page asks for a label, never an item number, in a campaign with labels; takes
  the token before anything is drawn, and after a refused token sends the same report again;
  a numerical campaign shows what the report reveals in the order of the value; a campaign over records asks
  for one value per attribute;
- the dashboard of a campaign of every kind (frequency with labels, heavy hitters, numerical
  distribution, mean, several attributes, marginals as heat maps) shows its estimate with the fixed-n band and the confidence sequence,
  labelled axes with ticks, a table of values with their intervals and the campaign's guarantee;
- ``/`` is an HTML index of the campaigns for a browser, and JSON for a client that asks for it;
- both pages say how likely a person's answer is guessed, beside chance (the dashboard with a trade-off figure).

Every page is saved as a PNG under ``tests/artifacts/pages/`` (not committed): the suite's
artefacts, to be looked at.  The pages are driven over the DevTools protocol by
``tests/cdp_page.mjs`` (``tests/ops_support.py``: ``chromium_devtools``, ``run_page``).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
import numpy as np
import pytest

from ops_support import chromium_devtools, run_page
from serve_support import ADMIN_TOKEN, ServerProcess, admin_headers

pytestmark = pytest.mark.slow

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "pages"
WEATHER = ["drizzle", "fog", "rain", "snow", "sun"]
TOKEN = "campaign-token-4f1c"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process = ServerProcess(str(tmp_path_factory.mktemp("pages") / "campaigns.sqlite")).start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def devtools():
    with chromium_devtools() as port:
        yield port


def _shot(name: str) -> str:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return str(ARTIFACTS / f"{name}.png")


def _campaign(server, config, **options) -> str:
    name = "page-" + uuid.uuid4().hex[:8]
    with httpx.Client(base_url=server.url, headers=admin_headers(), timeout=30) as admin:
        created = admin.post("/api/campaigns", json={"campaign": name, "config": config, **options})
        assert created.status_code == 201, created.text
        assert admin.post(f"/api/campaigns/{name}/open").status_code == 200
    return name


def _n(server, name) -> int:
    return httpx.get(f"{server.url}/api/campaigns/{name}", headers=admin_headers(), timeout=30).json()["n"]


def _js(expression: str) -> str:
    return json.dumps(expression)


FORM = "document.readyState === 'complete' && !document.getElementById('form').hidden"
STATUS = "document.getElementById('status').textContent"


def test_participate_asks_for_a_label_and_the_token_before_drawing(server, devtools):
    config = {"protocol": "grr", "epsilon": 1.0, "labels": WEATHER}
    name = _campaign(server, config, submit_token=TOKEN)
    steps = [
        ["wait", FORM],
        ["eval", "({tag: document.getElementById('value').tagName, options: [...document.querySelectorAll('#value option')]"
                 ".map((o) => o.textContent), token: !document.getElementById('token-field').hidden,"
                 " range: document.getElementById('range').textContent})"],
        # no token: nothing is drawn
        ["eval", "document.getElementById('value').value = 'rain'; document.getElementById('form').requestSubmit(); true"],
        ["eval", "({missing: document.getElementById('token').validity.valueMissing,"
                 " drawn: !document.getElementById('result').hidden})"],
        # a wrong token: the report is drawn, the server refuses it, the page says what to do
        ["eval", "document.getElementById('token').value = 'wrong-token'; document.getElementById('form').requestSubmit(); true"],
        ["wait", "!document.getElementById('result').hidden"],
        ["eval", "[...document.querySelectorAll('#posterior tr')].map((tr) => tr.children[0].textContent)"],
        ["eval", "document.getElementById('bytes').textContent"],
        ["screenshot", _shot("participate-labels-drawn")],
        ["eval", "document.getElementById('send').click(); true"],
        ["wait", f"{STATUS}.startsWith('Not sent')"],
        ["eval", STATUS],
        # the right token: the same report goes
        ["eval", f"document.getElementById('token').value = {_js(TOKEN)}; document.getElementById('send').click(); true"],
        ["wait", f"{STATUS}.startsWith('Sent.')"],
        ["eval", "document.getElementById('bytes').textContent"],
        ["screenshot", _shot("participate-labels-sent")],
    ]
    page = run_page(devtools, f"{server.url}/campaigns/{name}/participate", steps)
    field, before, rows, drawn, refused, sent = (page["values"][i] for i in (0, 2, 4, 5, 7, 9))
    assert field["tag"] == "SELECT" and field["options"] == ["choose…", *WEATHER] and field["token"]
    assert "answers" in field["range"] and "item" not in field["range"]
    assert not before["drawn"] and before["missing"]  # the browser asks for the token; no report is drawn
    assert sorted(rows) == sorted(WEATHER)  # the posterior names labels, never item numbers
    assert "refused the token" in refused and "send again" in refused
    assert sent == drawn  # one report, sent after the token was corrected
    assert _n(server, name) == 1
    assert page["csp"] == []


def test_participate_shows_a_numerical_report_in_the_order_of_the_value(server, devtools):
    config = {"protocol": "sw", "epsilon": 2.0, "bounds": [0.0, 100.0], "bins": 64}
    name = _campaign(server, config)
    steps = [
        ["wait", FORM],
        ["eval", "document.getElementById('value').value = '42.5'; document.getElementById('form').requestSubmit(); true"],
        ["wait", "!document.getElementById('result').hidden"],
        ["eval", "[...document.querySelectorAll('#posterior tr')].map((tr) => [tr.children[0].textContent,"
                 " tr.children[1].textContent])"],
        ["eval", "({hidden: document.getElementById('reveal').hasAttribute('hidden'), ticks: [...document.querySelectorAll('#reveal text')]"
                 ".map((t) => t.textContent), marked: document.querySelectorAll('#reveal .yours').length})"],
        ["screenshot", _shot("participate-numerical")],
        ["eval", "document.getElementById('send').click(); true"],
        ["wait", f"{STATUS}.startsWith('Sent.')"],
    ]
    page = run_page(devtools, f"{server.url}/campaigns/{name}/participate", steps)
    rows, chart = page["values"][1], page["values"][2]
    starts = [float(label.split(" – ")[0]) for label, _ in rows]
    assert starts == sorted(starts) == [0, 12.5, 25, 37.5, 50, 62.5, 75, 87.5]  # in the order of the value (64 bins / 8)
    assert sum(float(share.rstrip(" %")) for _, share in rows) == pytest.approx(100, abs=0.4)  # 8 x 0.05 rounding
    assert not chart["hidden"] and {"0", "25", "50", "75", "100", "value"} <= set(chart["ticks"])
    assert chart["marked"] == 1
    assert _n(server, name) == 1


def test_participate_asks_for_a_record_one_field_per_attribute(server, devtools):
    """A campaign over records: a list for an attribute with labels, a number field for a numerical one;
    the record is randomized in the page into one report, under the page's Content-Security-Policy."""
    config = {"protocol": "smp", "epsilon": 2.0, "attributes": [
        {"name": "weather", "labels": WEATHER}, {"name": "age", "bounds": [0.0, 100.0]}]}
    name = _campaign(server, config)
    steps = [
        ["wait", FORM],
        ["eval", "[...document.querySelectorAll('[data-attribute]')].map((f) => [f.dataset.attribute, f.tagName, f.type,"
                 " f.min, f.max]).concat([[document.getElementById('value-field').hidden]])"],
        ["eval", "document.querySelector('[data-attribute=\"weather\"]').value = 'fog';"
                 " document.querySelector('[data-attribute=\"age\"]').value = '41.5';"
                 " document.getElementById('form').requestSubmit(); true"],
        ["wait", "!document.getElementById('result').hidden"],
        ["eval", "({summary: document.getElementById('summary').textContent, table: document.getElementById('posterior-table').hidden,"
                 " report: document.getElementById('report').textContent})"],
        ["screenshot", _shot("participate-record-drawn")],
        ["eval", "document.getElementById('send').click(); true"],
        ["wait", f"{STATUS}.startsWith('Sent.')"],
    ]
    page = run_page(devtools, f"{server.url}/campaigns/{name}/participate", steps)
    fields, shown = page["values"][0], page["values"][2]
    assert fields == [["weather", "SELECT", "select-one", None, None], ["age", "INPUT", "number", "0", "100"], [True]]
    assert "covers your whole record (weather, age)" in shown["summary"] and "says which one" in shown["summary"]
    assert shown["table"] and shown["report"].startswith("attribute ")
    assert _n(server, name) == 1
    assert page["csp"] == []


BUYS = "!document.getElementById('buys').hidden"
BUYS_TEXT = "document.getElementById('buys-text').textContent"


def test_both_pages_say_what_the_campaigns_epsilon_buys(server, devtools):
    name = _campaign(server, {"protocol": "grr", "epsilon": 1.0, "labels": WEATHER})
    plain = httpx.get(f"{server.url}/api/campaigns/{name}/explain", timeout=60).json()["plain"]
    participate = run_page(devtools, f"{server.url}/campaigns/{name}/participate",
                           [["wait", FORM], ["wait", BUYS], ["eval", BUYS_TEXT], ["screenshot", _shot("participate-buys")]])
    dashboard = run_page(devtools, f"{server.url}/campaigns/{name}/dashboard#token={ADMIN_TOKEN}",
                         [["wait", BUYS], ["eval", BUYS_TEXT], ["screenshot", _shot("dashboard-buys")]])
    assert participate["values"][-1] == dashboard["values"][-1] == " ".join(plain)
    text = participate["values"][-1]  # no report yet: predicted at 10,000; the trade; what a person gives up
    assert text.startswith("With ε = 1 and 10,000 reports, each answer's share of the population is expected to be "
                           "within ±0.0") and "95 times in 100" in text
    assert "at ε = 0.5, ±" in text and "at ε = 2, ±" in text and "e^ε = 2.72 times as likely" in text
    assert participate["csp"] == [] and dashboard["csp"] == []


ODDS = "!document.getElementById('odds').hidden"
ATTACKER = "!document.getElementById('attacker').hidden && !document.getElementById('tradeoff-chart').hasAttribute('hidden')"


def test_both_pages_say_how_likely_a_persons_answer_is_guessed(server, devtools):
    """The participate page answers "how likely is it that my answer is guessed?" in one sentence with the chance
    baseline, computed in the browser from the protocol and epsilon; the dashboard says the same with the odds after a
    year of reports, and draws the trade-off curves of a test between two values, from the explain route."""
    from dpdist import local
    from dpdist.accounting import guess_odds

    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
    name = _campaign(server, config)
    participate = run_page(devtools, f"{server.url}/campaigns/{name}/participate", [
        ["wait", FORM], ["wait", ODDS], ["eval", "document.getElementById('odds').textContent"],
        ["screenshot", _shot("participate-odds")]])
    odds = participate["values"][-1]
    python = guess_odds(local.make("grr", epsilon=1.0, domain_size=8)).sentence()
    assert python == ("Someone who sees your report can guess your value with a probability of 28%, against 12.5% by "
                      "chance, if every answer is equally likely; whatever else they know, at most 2.72 times a blind "
                      "guess.")
    assert odds.startswith("Can your answer be guessed? " + python)
    attacker = httpx.get(f"{server.url}/api/campaigns/{name}/explain", timeout=60).json()["attacker"]
    dashboard = run_page(devtools, f"{server.url}/campaigns/{name}/dashboard#token={ADMIN_TOKEN}", [
        ["wait", ATTACKER],
        ["eval", "({text: document.getElementById('attacker-text').textContent,"
                 " lines: [...document.querySelectorAll('#tradeoff-chart polyline')].map((l) => l.getAttribute('points')"
                 ".split(' ').length),"
                 " labels: [...document.querySelectorAll('#tradeoff-chart text')].map((t) => t.textContent)})"],
        ["screenshot", _shot("dashboard-odds")]])
    shown = dashboard["values"][-1]
    assert shown["text"].startswith(python + " After 365 daily reports of one unchanged value, each drawn afresh: ")
    assert "one report kept and sent again: 28%" in shown["text"] and "is right on 2.72%, 13.6%, 27.2%" in shown["text"]
    assert shown["lines"] == [len(curve["fpr"]) for curve in attacker["curves"]] == [51, 51]
    assert "one report" in shown["labels"] and "365 reports of one value (at most)" in shown["labels"]
    assert participate["csp"] == [] and dashboard["csp"] == []


# ---------------------------------------------------------------------------- dashboards
def _dashboard(server, devtools, name, shot, extra_steps=()):
    loaded = "document.body.dataset.loaded === 'true' && document.getElementById('values').tBodies[0].rows.length > 0"
    steps = [
        ["wait", loaded],
        *extra_steps,
        ["eval", "({legend: document.getElementById('legend').textContent,"
                 " guarantee: document.getElementById('guarantee').textContent,"
                 " buys: document.getElementById('buys-text').textContent,"
                 " header: [...document.querySelectorAll('#values th')].map((th) => th.textContent),"
                 " rows: [...document.querySelectorAll('#values tbody tr')].map((tr) => [...tr.cells].map((td) => td.textContent)),"
                 " xlabels: [...document.querySelectorAll('#estimate-chart .xlabel')].map((t) => t.firstChild.nodeValue),"
                 " titles: [...document.querySelectorAll('#estimate-chart .title')].map((t) => t.textContent),"
                 " ticks: document.querySelectorAll('#estimate-chart .axis text').length,"
                 " anytime: document.querySelectorAll('#estimate-chart .anytime').length,"
                 " fixed: document.querySelectorAll('#estimate-chart .band, #estimate-chart .fixed').length,"
                 " meaning: document.getElementById('meaning').textContent,"
                 " stop: document.getElementById('stop').textContent,"
                 " historyTicks: document.querySelectorAll('#history-chart .axis text').length})"],
        ["screenshot", _shot(shot)],
    ]
    page = run_page(devtools, f"{server.url}/campaigns/{name}/dashboard#token={ADMIN_TOKEN}", steps)
    assert page["csp"] == []
    earlier = [value for value in page["values"][:-1] if isinstance(value, dict)]  # what extra steps read
    return {key: value for found in earlier + [page["values"][-1]] for key, value in found.items()}


def _submit(server, name, values):
    from dpdist.client import Client

    with Client(server.url) as admin:
        admin.submit_values(name, values)


def test_dashboard_of_a_labelled_frequency_campaign(server, devtools):
    name = _campaign(server, {"protocol": "grr", "epsilon": 2.0, "labels": WEATHER})
    _submit(server, name, np.random.default_rng(1).choice(WEATHER, 4000, p=[0.1, 0.05, 0.3, 0.05, 0.5]))
    width = ["eval", "document.getElementById('width').value = '0.05';"
                     " document.getElementById('width').dispatchEvent(new Event('change')); true"]
    shown = _dashboard(server, devtools, name, "dashboard-frequency",
                       [width, ["wait", "document.getElementById('stop').textContent.length > 0"]])
    assert shown["xlabels"] == WEATHER and {"value", "share of the population"} <= set(shown["titles"])
    assert shown["ticks"] >= 4 and shown["historyTicks"] >= 4
    assert shown["anytime"] == 5 and shown["fixed"] == 5
    assert shown["header"][:2] == ["value", "estimate"] and "fixed-n" in shown["header"][2] and "anytime" in shown["header"][3]
    assert [row[0] for row in shown["rows"]] == WEATHER and all(row[2].startswith("[") and row[3].startswith("[")
                                                                  for row in shown["rows"])
    assert shown["guarantee"] == "2-LDP (local: any two values of one user)"
    assert "fixed-n" in shown["meaning"].lower() and "every number of reports" in shown["meaning"]
    assert "n =" in shown["stop"]


def test_dashboard_of_a_distribution_campaign(server, devtools):
    name = _campaign(server, {"protocol": "sw", "epsilon": 2.0, "bins": 64, "bounds": [0, 100]})
    _submit(server, name, 100 * np.random.default_rng(2).beta(2, 5, 4000))
    shown = _dashboard(server, devtools, name, "dashboard-distribution")
    assert shown["anytime"] == 1 and shown["fixed"] == 1  # the two bands of the CDF
    assert {"value x", "share of the population below x"} <= set(shown["titles"])
    assert [row[0] for row in shown["rows"]] == ["mean"] + [f"quantile {q}" for q in (0.1, 0.25, 0.5, 0.75, 0.9)]
    assert all(row[2].startswith("[") and row[3].startswith("[") for row in shown["rows"])


def test_dashboard_of_a_mean_campaign(server, devtools):
    name = _campaign(server, {"protocol": "pm", "epsilon": 1.0, "bounds": [0, 100]})
    _submit(server, name, 100 * np.random.default_rng(3).beta(2, 5, 4000))
    shown = _dashboard(server, devtools, name, "dashboard-mean")
    assert shown["anytime"] == 1 and shown["fixed"] == 1 and "mean of the value" in shown["titles"]
    assert shown["rows"][0][0] == "mean" and shown["rows"][0][2].startswith("[") and shown["rows"][0][3].startswith("[")


def test_dashboard_of_a_heavy_hitters_campaign(server, devtools):
    words = ["apple", "pear", "plum", "fig", "kiwi"]
    config = {"protocol": "pem", "epsilon": 4.0, "alphabet": "abcdefghijklmnopqrstuvwxyz", "max_chars": 6, "k": 4}
    name = _campaign(server, config)
    _submit(server, name, np.random.default_rng(4).choice(words, 6000, p=[0.4, 0.3, 0.15, 0.1, 0.05]))
    shown = _dashboard(server, devtools, name, "dashboard-heavy-hitters", [["wait", BUYS]])
    assert set(shown["xlabels"]) <= set(words) and len(shown["xlabels"]) == 4
    assert shown["fixed"] == 4 and shown["anytime"] == 0  # a band, and no sequence with the reason stated
    assert "Anytime: none" in shown["meaning"] and "hash family" in shown["meaning"]
    assert shown["buys"].startswith("no prediction for this protocol (")  # explain does not cover PEM: said so


# ---------------------------------------------------------------------------- the index
def test_the_root_is_an_html_index_for_a_browser_and_json_for_a_client(server, devtools):
    name = _campaign(server, {"protocol": "grr", "epsilon": 1.0, "labels": WEATHER})
    assert httpx.get(server.url + "/").json()["service"] == "dpdist"  # API clients: JSON, as before
    assert httpx.get(server.url + "/", headers={"Accept": "application/json"}).json()["service"] == "dpdist"
    browser = httpx.get(server.url + "/", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert browser.headers["content-type"].startswith("text/html") and "Accept" in browser.headers["vary"]
    steps = [
        ["wait", "document.body.dataset.loaded === 'true'"],
        ["eval", "[...document.querySelectorAll('#campaigns tbody tr')].map((tr) => [tr.cells[0].textContent,"
                 " [...tr.querySelectorAll('a')].map((a) => a.getAttribute('href'))])"],
        ["screenshot", _shot("index")],
    ]
    page = run_page(devtools, f"{server.url}/#token={ADMIN_TOKEN}", steps)
    listed = dict(page["values"][0])
    assert name in listed
    assert listed[name] == [f"/campaigns/{name}/dashboard#token={ADMIN_TOKEN}", f"/campaigns/{name}/participate"]
    assert page["csp"] == []
    # without the token: a field asks for it, nothing is listed
    bare = run_page(devtools, f"{server.url}/", [["wait", "document.readyState === 'complete'"],
                                                 ["eval", "[document.getElementById('login').hidden,"
                                                          " document.getElementById('campaigns').hidden]"]])
    assert bare["values"][0] == [False, True]


# ---------------------------------------------------------------------------- multi-attribute campaigns
def _submit_records(server, name, records):
    from dpdist import local

    with httpx.Client(base_url=server.url, headers=admin_headers(), timeout=60) as admin:
        protocol = local.from_config(admin.get(f"/api/campaigns/{name}/config").json()["config"])
        reports = protocol.privatize(records, rng=5)
        body = {"reports": protocol.report_format.to_json_rows(reports)}
        answer = admin.put(f"/api/campaigns/{name}/batches/{uuid.uuid4().hex}", json=body)
        assert answer.status_code == 200 and answer.json()["accepted"] == len(reports), answer.text


MULTI_STEPS = [
    ["eval", "({charts: [...document.querySelectorAll('#attributes svg')].map((s) => s.dataset.attribute),"
             " headings: [...document.querySelectorAll('#attributes h3')].map((h) => h.textContent),"
             " bars: [...document.querySelectorAll('#attributes svg')].map((s) => s.querySelectorAll('.bar').length),"
             " whiskers: [...document.querySelectorAll('#attributes svg')].map((s) => s.querySelectorAll('.band').length),"
             " cdf: document.querySelectorAll('#attributes .cdf').length,"
             " cells: [...document.querySelectorAll('#attributes .cell rect')].map((r) => [+r.dataset.value, +r.dataset.halfWidth]),"
             " cellText: [...document.querySelectorAll('#attributes .cell text')].map((t) => t.textContent),"
             " estimateHidden: document.getElementById('estimate-chart').hasAttribute('hidden')})"],
]


def test_dashboard_of_a_multi_attribute_campaign_draws_every_attribute(server, devtools):
    schema = [{"name": "weather", "labels": WEATHER}, {"name": "device", "domain_size": 3}, {"name": "age", "bounds": [0, 100]}]
    name = _campaign(server, {"protocol": "smp", "epsilon": 2.0, "attributes": schema})
    rng = np.random.default_rng(6)
    records = {"weather": rng.choice(WEATHER, 6000, p=[0.1, 0.05, 0.3, 0.05, 0.5]), "device": rng.integers(0, 3, 6000),
               "age": 100 * rng.beta(2, 5, 6000)}
    _submit_records(server, name, records)
    shown = _dashboard(server, devtools, name, "dashboard-multi-attribute", MULTI_STEPS)
    assert shown["charts"] == ["weather", "device", "age"] and shown["estimateHidden"]
    assert shown["headings"][0].startswith("weather (") and "reports)" in shown["headings"][0]
    assert shown["bars"][:2] == [5, 3] and shown["whiskers"][:2] == [5, 3] and shown["cdf"] == 1
    assert [row[0] for row in shown["rows"]][:5] == [f"weather: {w}" for w in WEATHER]
    assert "age: mean" in [row[0] for row in shown["rows"]]
    # categorical attributes carry their fixed-n intervals (the served numerical attribute has none: no bootstrap band)
    assert all(row[2].startswith("[") for row in shown["rows"] if not row[0].startswith("age:"))


def test_dashboard_of_a_marginals_campaign_draws_a_heat_map_with_intervals(server, devtools):
    schema = [{"name": "weather", "labels": WEATHER}, {"name": "device", "labels": ["phone", "laptop", "tablet"]}]
    name = _campaign(server, {"protocol": "calm", "epsilon": 2.0, "attributes": schema})
    rng = np.random.default_rng(7)
    weather = rng.choice(5, 8000, p=[0.1, 0.05, 0.3, 0.05, 0.5])
    device = (weather + rng.integers(0, 2, 8000)) % 3
    _submit_records(server, name, {"weather": np.array(WEATHER)[weather], "device": np.array(["phone", "laptop", "tablet"])[device]})
    shown = _dashboard(server, devtools, name, "dashboard-marginals", [["wait", BUYS], *MULTI_STEPS])
    assert shown["charts"] == ["weather,device"] and shown["estimateHidden"]
    assert len(shown["cells"]) == 15 and all(half > 0 for _, half in shown["cells"])
    served = httpx.get(f"{server.url}/api/campaigns/{name}/estimate", headers=admin_headers(), timeout=30).json()
    [marginal] = served["estimate"]["marginals"]
    np.testing.assert_allclose([value for value, _ in shown["cells"]], marginal["frequencies"], rtol=1e-12)
    assert any(text.startswith("±") for text in shown["cellText"])
    assert shown["rows"][0][0] == "drizzle, phone" and shown["rows"][0][2].startswith("[")
    assert "half-width" in shown["legend"]
    assert shown["buys"].startswith("no prediction for this protocol (explain predicts the errors of one-attribute")  # was a 500
