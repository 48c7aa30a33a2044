"""The campaign dashboard in a real headless Chromium: the page loads, the charts render, the numbers match the API."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import pytest

from dpdist.client import AdminClient, Client
import server_zygote
from serve_support import ADMIN_TOKEN, ServerProcess

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def browser():
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        pytest.skip("chromium and chromedriver are not installed; .ci/run installs chromium and chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="dpdist-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", "--window-size=1000,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process = ServerProcess(str(tmp_path_factory.mktemp("dash") / "campaigns.sqlite")).start()
    yield process
    process.stop()


def wait_for(driver, condition, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition(driver)
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out; page error: {driver.find_element('id', 'error').text!r}")


def test_frequency_dashboard_matches_the_api_and_refreshes(browser, server):
    with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin, Client(server.url) as device:
        admin.create_campaign("dash-grr", {"protocol": "grr", "epsilon": 1.0, "domain_size": 16})
        admin.open_campaign("dash-grr")
        protocol = device.protocol("dash-grr")
        device.submit_reports("dash-grr", protocol, protocol.privatize(np.arange(16).repeat(30), rng=1))
        device.submit_body("dash-grr", "bad", b'{"reports": [1, 99, null]}', "application/json")
        browser.get(f"{server.url}/campaigns/dash-grr/dashboard#token={ADMIN_TOKEN}")
        wait_for(browser, lambda d: d.execute_script("return document.body.dataset.loaded === 'true'"))
        api = admin.estimate("dash-grr")
        assert browser.find_element("id", "n").text == str(api["n"]) == "481"
        assert browser.find_element("id", "protocol").text == "grr"
        # read in one script: the page re-renders every 3 s, so elements found one by one can go stale
        bars = browser.execute_script(
            "return Array.from(document.querySelectorAll('#estimate-chart rect.bar'),"
            " (bar) => [bar.getAttribute('data-value'), bar.getAttribute('height')]);"
        )
        assert len(bars) == 16
        assert np.allclose([float(value) for value, _ in bars], api["estimate"]["frequencies"])
        assert all(float(height) >= 0 for _, height in bars)
        assert browser.execute_script("return document.querySelectorAll('#estimate-chart line.band').length") == 16
        rejected = browser.find_element("id", "rejected").text
        assert "out_of_range 1" in rejected and "missing 1" in rejected
        assert browser.find_element("css selector", "#history-chart path.line").get_attribute("data-last-n") == "481"
        # new reports arrive: the page refreshes by itself
        device.submit_reports("dash-grr", protocol, protocol.privatize(np.zeros(19, int), rng=2))
        wait_for(browser, lambda d: d.find_element("id", "n").text == "500")
        assert admin.estimate("dash-grr")["n"] == 500


def test_key_value_dashboard_draws_the_keys_frequencies_and_lists_their_means(browser, server):
    """A pckv-ue campaign: one bar per key at the API's frequency with its interval, and the table's mean column
    is the API's means."""
    with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin, Client(server.url) as device:
        admin.create_campaign("dash-kv", {"protocol": "pckv-ue", "epsilon": 3.0, "domain_size": 5})
        admin.open_campaign("dash-kv")
        protocol = device.protocol("dash-kv")
        rng = np.random.default_rng(0)
        keys = rng.integers(0, 5, 3000)
        dense = np.full((3000, 5), np.nan)
        dense[np.arange(3000), keys] = np.linspace(-0.8, 0.8, 5)[keys]
        device.submit_reports("dash-kv", protocol, protocol.privatize(dense, rng=1))
        browser.get(f"{server.url}/campaigns/dash-kv/dashboard#token={ADMIN_TOKEN}")
        wait_for(browser, lambda d: d.execute_script("return document.body.dataset.loaded === 'true'"))
        api = admin.estimate("dash-kv")["estimate"]
        assert api["kind"] == "key_value"
        shown = browser.execute_script(
            "return {bars: Array.from(document.querySelectorAll('#estimate-chart rect.bar'), (bar) => bar.getAttribute('data-value')),"
            " bands: document.querySelectorAll('#estimate-chart line.band').length,"
            " header: Array.from(document.querySelectorAll('#values thead th'), (th) => th.textContent),"
            " means: Array.from(document.querySelectorAll('#values tbody tr'), (tr) => tr.lastElementChild.textContent)};"
        )
        assert np.allclose([float(value) for value in shown["bars"]], api["frequencies"]) and shown["bands"] == 5
        assert shown["header"][0] == "key" and shown["header"][-1] == "mean value"
        assert np.allclose([float(mean) for mean in shown["means"]], api["means"], atol=5e-3), shown["means"]


def test_distribution_dashboard_and_a_wrong_token(browser, server):
    with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin, Client(server.url) as device:
        admin.create_campaign("dash-sw", {"protocol": "sw", "epsilon": 2.0, "bins": 32})
        admin.open_campaign("dash-sw")
        device.submit_values("dash-sw", np.random.default_rng(3).beta(2, 5, 3000))
        browser.get(f"{server.url}/campaigns/dash-sw/dashboard#token={ADMIN_TOKEN}")
        wait_for(browser, lambda d: d.execute_script("return document.body.dataset.loaded === 'true'"))
        api = admin.estimate("dash-sw")
        bars = browser.find_elements("css selector", "#density-chart rect.bar")  # the CDF with its bands is above
        shown = api["estimate"]["display"]  # the density of the estimate's figure, on its display bins
        assert len(bars) == shown["bins"] == 32  # (at most 40: here the estimate's own 32)
        assert np.allclose([float(bar.get_attribute("data-value")) for bar in bars], shown["density"])
        summary = browser.find_element("id", "summary").text  # "mean 0.2857, median 0.2646"
        assert float(summary.split()[1].rstrip(",")) == pytest.approx(api["estimate"]["mean"], rel=1e-3)
        # the page's fixed-n interval of the mean is the CLI's and the API's (one state, one interval)
        row = browser.execute_script("return document.querySelector('#values tbody tr').cells[2].textContent;")
        cli = server_zygote.run([sys.executable, "-m", "dpdist.cli", "campaign", "estimate", "--server", server.url, "dash-sw",
                                 "--json"], timeout=120, env={**os.environ, "DPDIST_ADMIN_TOKEN": ADMIN_TOKEN})
        assert cli.returncode == 0, cli.stderr
        for document in (api, json.loads(cli.stdout)):
            mean = next(i for i in document["estimate"]["intervals"] if i["quantity"] == "mean" and not i["anytime_valid"])
            assert [float(x) for x in row.strip("[]").split(",")] == pytest.approx(
                [float(f"{mean['low']:.4g}"), float(f"{mean['high']:.4g}")], rel=1e-9)
        # the default 1024 bins are drawn on the figure's 40, not bin by bin
        admin.create_campaign("dash-sw-fine", {"protocol": "sw", "epsilon": 2.0})
        admin.open_campaign("dash-sw-fine")
        device.submit_values("dash-sw-fine", np.random.default_rng(4).beta(2, 5, 3000))
        browser.get(f"{server.url}/campaigns/dash-sw-fine/dashboard#token={ADMIN_TOKEN}")
        wait_for(browser, lambda d: d.execute_script("return document.body.dataset.loaded === 'true'"))
        shown = admin.estimate("dash-sw-fine")["estimate"]["display"]
        values = browser.execute_script("return Array.from(document.querySelectorAll('#density-chart rect.bar'),"
                                        " (bar) => +bar.getAttribute('data-value'));")
        assert len(values) == shown["bins"] == 40 and np.allclose(values, shown["density"])
    browser.get(f"{server.url}/campaigns/dash-sw/dashboard#token=wrong-token")
    browser.refresh()
    wait_for(browser, lambda d: "admin token" in d.find_element("id", "error").text)


def test_an_estimate_note_is_shown(browser, server):
    """CP's uniform estimate of sparsity 0 says so on the page."""
    with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin, Client(server.url) as device:
        admin.create_campaign("dash-cp", {"protocol": "cp", "epsilon": 1.0, "domain_size": 64})
        admin.open_campaign("dash-cp")
        protocol = device.protocol("dash-cp")
        device.submit_reports("dash-cp", protocol, protocol.privatize(np.random.default_rng(0).integers(0, 64, 2000), rng=1))
        browser.get(f"{server.url}/campaigns/dash-cp/dashboard#token={ADMIN_TOKEN}")
        wait_for(browser, lambda d: d.execute_script("return document.body.dataset.loaded === 'true'"))
        api = admin.estimate("dash-cp")
    shown = browser.execute_script("const e = document.getElementById('notes'); return [e.hidden, e.textContent];")
    assert api["estimate"]["notes"] and shown == [False, " ".join(api["estimate"]["notes"])]
    assert "no item stands out of the noise" in shown[1]


def test_the_poisoning_alarm_is_the_apis_line(browser, server):
    """The page prints the service's diagnostics line (``summary``), the likelihood-ratio alarm
    included, as dpdist campaign estimate does."""
    rng = np.random.default_rng(48)
    with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin, Client(server.url) as device:
        admin.create_campaign("dash-poison", {"protocol": "grr", "epsilon": 1.0, "domain_size": 16})
        admin.open_campaign("dash-poison")
        protocol = device.protocol("dash-poison")
        device.submit_reports("dash-poison", protocol, protocol.privatize(rng.integers(0, 2, 47_000), rng=rng))
        device.submit_reports("dash-poison", protocol, rng.integers(0, 2, 3_000).astype(np.uint8))  # never randomized
        browser.get(f"{server.url}/campaigns/dash-poison/dashboard#token={ADMIN_TOKEN}")
        wait_for(browser, lambda d: d.execute_script("return document.body.dataset.loaded === 'true'"))
        diagnostics = admin.estimate("dash-poison")["diagnostics"]
    assert diagnostics["constraint"]["flagged"] and diagnostics["flagged"]
    assert browser.find_element("id", "diagnostics").text == diagnostics["summary"]
    assert diagnostics["summary"].startswith("POISONING SUSPECTED: the counts fit no honest population")


def test_a_campaign_in_rounds_shows_its_quantiles_with_intervals_and_its_rounds(browser, server):
    """The parent campaign counts no report; its page reads every round's (``GET .../rounds``)."""
    plan = {"q": [0.25, 0.5], "epsilon": 2.0, "bounds": [0.0, 1.0], "rounds": 3, "grid_size": 64, "reports": 600}
    values = np.random.default_rng(5).beta(2, 5, 150)
    with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin, Client(server.url) as device:
        admin.create_campaign("dash-rounds", None, rounds=plan)
        admin.open_campaign("dash-rounds")
        device.submit_values("dash-rounds", values[:100])  # round 1's group: full, so round 2 is published
        device.submit_values("dash-rounds", values[100:])  # each value another user's, in round 2
        report = admin.rounds("dash-rounds")
        assert [r["n"] for r in report["rounds"]] == [100, 50]
        browser.get(f"{server.url}/campaigns/dash-rounds/dashboard#token={ADMIN_TOKEN}")
        wait_for(browser, lambda d: d.execute_script("return document.body.dataset.loaded === 'true'"))
        page = browser.execute_script(
            "return {n: document.getElementById('n').textContent,"
            " protocol: document.getElementById('protocol').textContent,"
            " dots: Array.from(document.querySelectorAll('#estimate-chart circle.quantile'),"
            "   (c) => [+c.dataset.q, +c.dataset.value]),"
            " bands: Array.from(document.querySelectorAll('#estimate-chart line.band'),"
            "   (b) => [+b.dataset.low, +b.dataset.high]),"
            " rounds: Array.from(document.querySelectorAll('#rounds tbody tr'),"
            "   (r) => Array.from(r.cells, (c) => c.textContent)),"
            " link: document.querySelector('#rounds a').getAttribute('href'),"
            " history: document.querySelector('#history-chart path.line').dataset.lastN};"
        )
    release = report["estimate"]
    assert page["n"] == "150" and "round 2 of 3" in page["protocol"]
    assert np.allclose(page["dots"], np.column_stack([release["q"], release["values"]]))
    assert np.allclose(page["bands"], np.column_stack([release["low"], release["high"]]))
    assert page["rounds"] == [["1", "dash-rounds-r1", "closed", "100 of 100", str(len(report["rounds"][0]["cuts"]))],
                              ["2", "dash-rounds-r2", "open", "50 of 200", str(len(report["rounds"][1]["cuts"]))]]
    assert page["link"].startswith("/campaigns/dash-rounds-r1/dashboard#token=")
    assert page["history"] == "150"
