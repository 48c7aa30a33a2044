"""Pages a person can use (issue 30 item 3), in headless Chromium, with screenshots.

- the participate page asks for a label, never an item number, in a campaign with labels; takes
  the token before anything is drawn, and after a refused token sends the same report again;
  a numerical campaign shows what the report reveals in the order of the value;
- the dashboard of a campaign of every kind (frequency with labels, heavy hitters, numerical
  distribution, mean) shows its estimate with the fixed-n band and the confidence sequence,
  labelled axes with ticks, a table of values with their intervals and the campaign's guarantee;
- ``/`` is an HTML index of the campaigns for a browser, and JSON for a client that asks for it.

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

from dpdist import local
from ops_support import chromium_devtools, run_page
from serve_support import ADMIN_TOKEN, ServerProcess, admin_headers

pytestmark = pytest.mark.slow

ARTIFACTS = Path(__file__).resolve().parent / "artifacts" / "pages"
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
    assert sum(float(share.rstrip(" %")) for _, share in rows) == pytest.approx(100, abs=0.1)
    assert not chart["hidden"] and {"0", "25", "50", "75", "100", "value"} <= set(chart["ticks"])
    assert chart["marked"] == 1
    assert _n(server, name) == 1
