"""``dpdist demo --campaign``: a local service, devices over HTTP (Python and Node), the live estimate, a clean stop."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import time

import httpx
import pytest

from dpdist.cli import main

COMMAND = [sys.executable, "-m", "dpdist.cli", "demo", "--campaign"]


def _port_closed(url: str) -> bool:
    try:
        httpx.get(url + "/healthz", timeout=2)
    except httpx.TransportError:
        return True
    return False


@pytest.mark.slow
def test_the_campaign_demo_collects_through_the_real_http_path_and_stops_by_itself():
    """The README's command as it is: every one of the default 1,000 devices reports (from one
    address, the service's default rate limit stopped it after 200-970 devices, with exit status 0)."""
    js = 100 if shutil.which("node") else 0  # a tenth of the devices by default when node is installed
    run = subprocess.run(COMMAND, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    out = run.stdout
    url = re.search(r"dpdist serve at (http://127\.0\.0\.1:\d+)", out).group(1)
    assert f"{url}/campaigns/departures/dashboard#token=" in out and f"{url}/campaigns/departures/participate" in out
    assert "rate limit  off (--rate-limit 0): the 1,000 simulated devices all send from 127.0.0.1" in out
    assert "what epsilon buys at n = 1,000" in out  # the service's explain endpoint
    assert re.search(r"n = +[\d,]+ .*\[-?\d\.\d+, -?\d\.\d+\]", out)  # a live line with its band
    assert f"estimate from 1,000 reports ({1000 - js:,} Python, {js} JavaScript)" in out
    rows = re.findall(r"^  \d\d-\d\dh +(-?\d\.\d+) +\[(-?\d\.\d+), (-?\d\.\d+)\] +(\d\.\d+)$", out, re.MULTILINE)
    assert len(rows) == 8
    assert sum(low <= true <= high for _, low, high, true in ((float(a), float(b), float(c), float(d))
                                                              for a, b, c, d in rows)) >= 6  # 95% bands of 8 blocks
    assert _port_closed(url)


@pytest.mark.slow
def test_a_demo_that_cannot_finish_says_what_failed_and_exits_non_zero():
    run = subprocess.run(COMMAND + ["--devices", "100000", "--js-devices", "0", "--seconds", "3"], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    last = run.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"demo: failed: [\d,]+ of 100,000 devices reported \(--seconds 3 passed first\)\.", last), last
    assert _port_closed(re.search(r"dpdist serve at (http://127\.0\.0\.1:\d+)", run.stdout).group(1))


@pytest.mark.slow
def test_ctrl_c_stops_the_devices_and_the_service():
    process = subprocess.Popen(COMMAND + ["--devices", "100000", "--seconds", "600"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            lines.append(process.stdout.readline())
            if lines[-1].startswith("  n = "):
                break
        url = re.search(r"dpdist serve at (http://127\.0\.0\.1:\d+)", "".join(lines)).group(1)
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert "interrupted; the devices and the service are stopped" in out
    assert _port_closed(url)


def test_bad_options_name_the_option(capsys):
    assert main(["demo", "--campaign", "--devices", "0"]) == 2
    assert "--devices must be" in capsys.readouterr().err
    assert main(["demo", "--campaign", "--devices", "10", "--js-devices", "11"]) == 2
    assert "--js-devices must be" in capsys.readouterr().err


@pytest.mark.slow
def test_the_demo_names_a_device_that_could_not_fetch_the_config(monkeypatch, capsys):
    from dpdist import client as client_module
    from dpdist.demo import run_campaign_demo
    from dpdist.errors import ServiceUnavailableError

    def unavailable(self, campaign, *args, **kwargs):  # what Client.protocol raises after its retries (a 503 at start)
        raise ServiceUnavailableError(f"GET /api/campaigns/{campaign}/config: 503 busy after 3 retries")

    monkeypatch.setattr(client_module.Client, "protocol", unavailable)
    start = time.monotonic()
    status = run_campaign_demo(devices=20, js_devices=0, seconds=60, interactive=False, seed=1)
    elapsed = time.monotonic() - start
    err = capsys.readouterr().err
    assert status == 1
    assert "Traceback" not in err, err[-2000:]
    failed = [line for line in err.splitlines() if line.startswith("demo: failed")]
    assert failed and "503 busy" in failed[0] and "--seconds" not in failed[0], failed
    assert elapsed < 60, elapsed


@pytest.mark.slow
def test_the_demo_never_talks_to_a_stand_in_on_its_port(monkeypatch, tmp_path):
    """The demo probes a free port, closes it and starts its service there; a process that takes the port in
    between (here: before) and answers /healthz must get an error, not the demo's admin token."""
    import http.server
    import socket
    import threading

    from dpdist.demo import _campaign
    from dpdist.errors import ServiceUnavailableError

    seen: list[dict] = []

    class StandIn(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the stdlib's name)
            seen.append(dict(self.headers))
            self.send_response(200)
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args):
            pass

    stand_in = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    port = stand_in.server_address[1]
    threading.Thread(target=stand_in.serve_forever, daemon=True).start()

    class Probe(socket.socket):  # the free-port probe "finds" the stand-in's port
        def getsockname(self):
            return ("127.0.0.1", port)

    monkeypatch.setattr(_campaign.socket, "socket", Probe)
    try:
        with pytest.raises(ServiceUnavailableError), _campaign._Service(tmp_path):
            pass
    finally:
        stand_in.shutdown()
        stand_in.server_close()
    assert seen, "the stand-in was asked (it answers /healthz)"
    assert not any("authorization" in {k.lower() for k in headers} for headers in seen), seen


def test_the_demo_prints_shares_a_share_can_be(capsys):
    """The final table printed the unbiased estimate as a share (-0.015 for a rare block); it prints the
    estimate projected onto the shares (each >= 0, summing to 1) beside the served band, and the live line too."""
    import numpy as np

    from dpdist import local
    from dpdist.demo import _campaign as demo

    grr = local.make("grr", epsilon=2.0, labels=demo.LABELS)
    values = np.repeat(np.arange(8), [1, 0, 2, 300, 400, 200, 90, 7])  # rare early blocks, as the flights have
    estimate = grr.estimate(grr.simulate(values, rng=6))
    assert estimate.frequencies.min() < -0.005  # the unbiased estimate of a rare block: below 0
    document = {"n": values.size, "estimate": estimate.to_dict()}

    class Admin:
        def estimate(self, campaign):
            return document

    class Population:
        python_values, acknowledged, js_values = values, np.ones(values.size, dtype=bool), values[:0]
        sent_python, sent_js = values.size, 0

        def rate(self):
            return 100.0

    demo._print_progress(Admin(), Population())
    demo._print_final(Admin(), Population())
    out = capsys.readouterr().out
    rows = re.findall(r"^  \d\d-\d\dh +(\S+) +\[(\S+), (\S+)\] +(\d\.\d+)$", out, re.MULTILINE)
    assert len(rows) == 8
    shares = np.array([float(share) for share, *_ in rows])
    assert shares.min() >= 0 and abs(shares.sum() - 1) < 0.01  # printed to 3 places
    assert np.allclose(shares, np.round(demo.project_simplex(estimate.frequencies), 3))
    assert all(0 <= float(low) <= float(high) <= 1 for _, low, high, _ in rows)  # the served band, clipped
    live = re.search(r"most common block (\S+): (\S+) \[", out)
    assert live.group(1) == "12-15h" and float(live.group(2)) == round(shares.max(), 3)
    assert "projected onto the shares" in out
