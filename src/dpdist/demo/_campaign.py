"""``dpdist demo --campaign``: the collection path in one command, on this machine.

It starts ``dpdist serve`` on a temporary SQLite file (127.0.0.1, a free port, a fresh
admin token), creates and opens a campaign, and simulates a population of devices:
each device draws a departure time of day from the embedded flights data, randomizes
it on the "device" with the OS CSPRNG and submits its one report in its own HTTP
request, through the public API only (the Python clients, :class:`dpdist.client.AdminClient` and
:class:`dpdist.client.Client`, and the JavaScript client under Node.js when ``node`` is installed).  It prints the
dashboard and participation URLs, the live estimate with its 95% band as reports
arrive, what the campaign's epsilon buys (``GET .../explain``), and at the end the
estimate beside the devices' true shares.  A share it prints is the estimate projected
onto the shares (:func:`dpdist.postprocess.project_simplex`: each at least 0, all summing
to 1; the unbiased estimate of a rare block can be negative), beside the service's 95%
band (clipped to [0, 1], what a share can be).

Its simulated devices all send from one address (127.0.0.1), so its service runs with
the rate settings of such a simulation, :data:`RATE_OPTIONS` (no per-address rate limit;
it says so at the start): the default of ``dpdist serve``, 20 batches/s per address with
bursts of 100, is for devices that each have their own address.

It stops by itself once every device has reported (exit status 0; run interactively, a
terminal, it then keeps the service up for the browser pages until Ctrl-C), or when it
cannot finish: a device's submission failed, or ``seconds`` passed first (exit status 1,
and one line naming what failed).  Ctrl-C stops it cleanly at any time: the devices stop, the service is shut
down, the temporary directory is removed.  The service and Node run in their own
process group (a Ctrl-C reaches the demo only, which stops them in order) and die
with the demo if it is killed (Linux: the parent-death signal).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from importlib import resources
from pathlib import Path

import numpy as np

from .._http._tls import verifying_context
from .._rng import check_rng
from ..postprocess import project_simplex
from .._validation import Integer, Interval, check_param
from ..errors import DPDistError, ServiceUnavailableError
from ._flights import load_departure_minutes

__all__ = ["run_campaign_demo", "CAMPAIGN", "LABELS"]

CAMPAIGN = "departures"
#: Eight three-hour blocks of the day: the campaign's public label domain.
LABELS = [f"{h:02d}-{h + 3:02d}h" for h in range(0, 24, 3)]
CONFIG = {"protocol": "grr", "epsilon": 2.0, "labels": LABELS}
_THREADS = 8  # Python devices submitting at once
#: ``dpdist serve`` options for devices that all send from one address: no per-address rate limit
RATE_OPTIONS = ("--rate-limit", "0")


def run_campaign_demo(devices: int = 1000, js_devices: int | None = None, seconds: float = 120.0,
                      interactive: bool | None = None, seed: int | None = None) -> int:
    """Run the campaign demo (see the module docstring); exit status 0, 1 when it could not finish, 130 after Ctrl-C."""
    devices = check_param("dpdist demo", "devices", devices, Integer(low=1, high=10**6))
    seconds = check_param("dpdist demo", "seconds", seconds, Interval(0, 86_400))
    shown = sys.stdin.isatty() and sys.stdout.isatty() if interactive is None else bool(interactive)
    node = shutil.which("node")
    if js_devices is None:
        js_devices = devices // 10 if node else 0
    js_count: int = check_param("dpdist demo", "js_devices", js_devices, Integer(low=0, high=devices))
    if js_count and not node:
        print("demo: node is not installed: every device uses the Python client.", flush=True)
        js_count = 0
    values = _population(devices, seed)
    with _terminate_as_interrupt(), tempfile.TemporaryDirectory(prefix="dpdist-demo-") as directory:
        try:
            with _Service(Path(directory)) as service:
                return _run(service, values, js_count, seconds, shown)
        except KeyboardInterrupt:
            print("\ndemo: interrupted; the devices and the service are stopped.", flush=True)
            return 130


@contextlib.contextmanager
def _terminate_as_interrupt():
    """SIGTERM stops the demo as Ctrl-C does (cleanly), while it runs in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _population(devices: int, seed: int | None) -> np.ndarray:
    """Each device's true value: a departure block of a flight drawn from the embedded data."""

    minutes = load_departure_minutes()
    rng = check_rng(seed)
    return (minutes[rng.integers(0, minutes.size, devices)] // 180).astype(np.int64)


class _Service:
    """``dpdist serve`` on ``directory/demo.sqlite`` at a free port of 127.0.0.1, stopped on exit."""

    def __init__(self, directory: Path):
        self.directory, self.token = directory, secrets.token_urlsafe(24)
        self.log = directory / "serve.log"
        self.process: subprocess.Popen | None = None
        self.url = ""

    def __enter__(self) -> "_Service":
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "dpdist.cli", "serve", "--db", str(self.directory / "demo.sqlite"),
                   "--port", str(port), "--log-level", "warning", *RATE_OPTIONS]
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(command, env={**os.environ, "DPDIST_ADMIN_TOKEN": self.token},
                                            stdin=subprocess.DEVNULL, stdout=log, stderr=log, **_child_options())
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 60.0) -> None:
        import httpx  # lazy: optional extra dpdist[serve]


        deadline = time.monotonic() + timeout
        assert self.process is not None, "the service was started"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServiceUnavailableError(f"dpdist serve exited at start-up: {self.log.read_text()[-2000:]}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(self.url + "/healthz", timeout=1.0, verify=verifying_context()).status_code == 200:
                    self._check_owner()
                    return
            time.sleep(0.1)
        raise ServiceUnavailableError(f"dpdist serve did not answer within {timeout:g} s.")

    def _check_owner(self) -> None:
        """Refuse a port another process took between the free-port probe and the service's bind.

        The demo sends its admin token to whatever answers on the port, so on Linux it first checks that the
        listening socket is one of its own child's file descriptors (``/proc``); elsewhere it has no such check.
        """
        assert self.process is not None, "the service was started"
        port = int(self.url.rsplit(":", 1)[1])
        tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
        if not sys.platform.startswith("linux") or not tables[0].is_file():
            return
        listening = set()
        for table in (t for t in tables if t.is_file()):
            for row in table.read_text().splitlines()[1:]:
                fields = row.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # 0A: LISTEN
                    listening.add(fields[9])  # the socket's inode
        owned = set()
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{self.process.pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:["):
                        owned.add(target[len("socket:["):-1])
        if not listening & owned:
            raise ServiceUnavailableError(f"port {port} of 127.0.0.1 is held by another process, not the demo's "
                                          "service; run the demo again.")

    def __exit__(self, *exc) -> None:
        stop_process(self.process)


def _child_options() -> dict:
    """Own process group (Ctrl-C reaches the demo only) and, on Linux, death with the demo (SIGTERM)."""
    options: dict = {"start_new_session": True}
    if sys.platform.startswith("linux"):
        def die_with_parent():  # prctl(PR_SET_PDEATHSIG, SIGTERM)
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)

        options["preexec_fn"] = die_with_parent
    return options


def stop_process(process: subprocess.Popen | None, timeout: float = 20.0) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _run(service: _Service, values: np.ndarray, js_devices: int, seconds: float, interactive: bool) -> int:
    from ..client import AdminClient  # lazy: the client's code loads only when it runs (dpdist[serve])

    with AdminClient(service.url, admin_token=service.token, retries=3) as admin:
        admin.create_campaign(CAMPAIGN, CONFIG)
        admin.open_campaign(CAMPAIGN)
        _print_start(admin, service, len(values), js_devices)
        population = _Population(service.url, values, js_devices)
        population.start()
        deadline = time.monotonic() + seconds
        try:
            while population.running() and time.monotonic() < deadline:
                time.sleep(min(2.0, max(0.0, deadline - time.monotonic())))
                _print_progress(admin, population)
        finally:
            population.stop()
        _print_final(admin, population)
        reported = population.sent_python + population.sent_js
        if reported < len(values):  # one line naming what failed, and a non-zero status
            why = population.errors[0] if population.errors else f"--seconds {seconds:g} passed first"
            print(f"demo: failed: {reported:,} of {len(values):,} devices reported ({why}).", file=sys.stderr, flush=True)
            return 1
        if interactive:
            print(f"\nThe service stays up for the pages above; Ctrl-C to stop.\n  dashboard   "
                  f"{_dashboard(service)}\n  participate {service.url}/campaigns/{CAMPAIGN}/participate", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                while True:
                    time.sleep(3600)
            print("\ndemo: stopped.", flush=True)
    return 0


def _dashboard(service: _Service) -> str:
    return f"{service.url}/campaigns/{CAMPAIGN}/dashboard#token={service.token}"


def _print_start(admin, service: _Service, devices: int, js_devices: int) -> None:
    print(f"demo: dpdist serve at {service.url} (a temporary SQLite file; admin token {service.token})")
    print(f"  dashboard   {_dashboard(service)}")
    print(f"  participate {service.url}/campaigns/{CAMPAIGN}/participate")
    print(f"  rate limit  off ({' '.join(RATE_OPTIONS)}): the {devices:,} simulated devices all send from 127.0.0.1, one "
          "address; a deployment keeps the per-address default (20 batches/s, bursts of 100) and, behind a proxy, "
          "sets --forwarded-allow-ips (docs/how-to/run-a-campaign.md)")
    print(f"campaign {CAMPAIGN!r}: {CONFIG['protocol']} over {len(LABELS)} blocks of the day, epsilon = "
          f"{CONFIG['epsilon']:g}; {devices:,} devices, one report per request "
          f"({devices - js_devices:,} Python client, {js_devices:,} JavaScript client under Node)")
    import httpx  # lazy: optional extra dpdist[serve]

    with contextlib.suppress(Exception):  # what epsilon buys, from the service's public explain endpoint
        document = httpx.get(f"{service.url}/api/campaigns/{CAMPAIGN}/explain", params={"n": devices}, timeout=30,
                             verify=verifying_context()).json()
        cells = [f"eps {p['epsilon']:g}: ±{p['errors']['interval']['value']:.3f}" for p in document["predictions"]]
        print(f"what epsilon buys at n = {document['n']:,} (95% half-width of one block's share): " + ", ".join(cells))
    print(flush=True)


def _band(document: dict):
    """``(n, shares, low, high)`` of an estimate document, read defensively (None before the first report): the
    estimate projected onto the shares (each >= 0, summing to 1), and its served band."""
    estimate = document.get("estimate") or {}
    band = estimate.get("band") or {}
    frequencies = estimate.get("frequencies")
    if frequencies is None:
        return document.get("n", 0), None, None, None
    return document.get("n", 0), project_simplex(frequencies), band.get("low"), band.get("high")


def _print_progress(admin, population: "_Population") -> None:
    n, frequencies, low, high = _band(admin.estimate(CAMPAIGN))
    line = f"  n = {n:>7,}  ({population.rate():.0f} reports/s)"
    if frequencies is not None and low is not None and high is not None:
        top = int(np.argmax(frequencies))
        line += f"  most common block {LABELS[top]}: {frequencies[top]:.3f} [{low[top]:.3f}, {high[top]:.3f}]"
    print(line, flush=True)


def _print_final(admin, population: "_Population") -> None:
    n, frequencies, low, high = _band(admin.estimate(CAMPAIGN))
    sent = np.concatenate([population.python_values[population.acknowledged], population.js_values[: population.sent_js]])
    truth = np.bincount(sent, minlength=len(LABELS)) / max(sent.size, 1)
    print(f"\nestimate from {n:,} reports ({population.sent_python:,} Python, {population.sent_js:,} JavaScript), "
          "with its 95% band, beside the devices' true shares (the estimate projected onto the shares: each >= 0, "
          "summing to 1; the band clipped to [0, 1]):")
    print(f"  {'block':<8} {'estimate':>9} {'95% band':>18} {'true':>7}")
    for item, label in enumerate(LABELS):
        if frequencies is None:
            break
        band = f"[{low[item]:.3f}, {high[item]:.3f}]" if low is not None and high is not None else "-"
        print(f"  {label:<8} {frequencies[item]:>9.3f} {band:>18} {truth[item]:>7.3f}")
    print(flush=True)


class _Population:
    """The devices: Python threads each submitting one report per request, and one Node process for the rest."""

    def __init__(self, url: str, values: np.ndarray, js_devices: int):
        self.url = url
        split = values.size - js_devices
        self.python_values, self.js_values = values[:split], values[split:]
        self.sent_python = self.sent_js = 0
        self.acknowledged = np.zeros(self.python_values.size, dtype=bool)
        self._next = 0
        self._lock, self._stop = threading.Lock(), threading.Event()
        self._threads: list[threading.Thread] = []
        self._node: subprocess.Popen | None = None
        self._started = time.monotonic()
        self.errors: list[str] = []

    def start(self) -> None:
        for _ in range(_THREADS):
            thread = threading.Thread(target=self._python_devices, daemon=True)
            thread.start()
            self._threads.append(thread)
        if self.js_values.size:
            self._start_node()

    def _take(self) -> int | None:
        with self._lock:
            if self._stop.is_set() or self._next >= self.python_values.size:
                return None
            self._next += 1
            return self._next - 1

    def _python_devices(self) -> None:
        from ..client import Client  # lazy: the client's code loads only when it runs (dpdist[serve])

        with Client(self.url, retries=3, timeout=30.0) as client:
            try:  # the campaign's config, fetched once per thread: a device that cannot get it names why
                protocol = client.protocol(CAMPAIGN)
            except DPDistError as error:
                self.errors.append(f"a Python device could not fetch the campaign's config: {error}")
                self._stop.set()
                return
            while (index := self._take()) is not None:
                try:  # one device: its value randomized with the CSPRNG, its one report in its own request
                    client.submit_values(CAMPAIGN, [LABELS[int(self.python_values[index])]], batch_size=1, protocol=protocol)
                except DPDistError as error:
                    self.errors.append(f"a Python device could not submit: {error}")
                    self._stop.set()
                    return
                with self._lock:
                    self.sent_python += 1
                    self.acknowledged[index] = True

    def _start_node(self) -> None:
        from ..serve._assets import clients_js_dir  # lazy: the service's code loads only when it runs (dpdist[serve])

        script = Path(str(resources.files("dpdist.demo") / "_devices.mjs"))  # the JavaScript devices (package data)
        client = (clients_js_dir() / "src" / "index.js").as_uri()
        self._node = subprocess.Popen(["node", str(script), self.url, CAMPAIGN, client], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **_child_options())
        assert self._node.stdin is not None, "started with stdin=PIPE"
        self._node.stdin.write(json.dumps(self.js_values.tolist()))
        self._node.stdin.close()
        threading.Thread(target=self._read_node, daemon=True).start()

    def _read_node(self) -> None:
        assert self._node is not None and self._node.stdout is not None, "started with stdout=PIPE"
        for line in self._node.stdout:
            if line.strip() == "sent":
                with self._lock:
                    self.sent_js += 1

    def running(self) -> bool:
        python = any(thread.is_alive() for thread in self._threads)
        node = self._node is not None and self._node.poll() is None
        return (python or node) and not self._stop.is_set()

    def rate(self) -> float:
        return (self.sent_python + self.sent_js) / max(time.monotonic() - self._started, 1e-9)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=40)
        stop_process(self._node, timeout=5)
        if self._node is not None and self._node.returncode not in (0, None, -signal.SIGTERM) and self._node.stderr:
            lines = [line.strip() for line in self._node.stderr.read().splitlines() if line.strip()]
            self.errors.append(f"a JavaScript device could not submit (node exited with status {self._node.returncode}): "
                               + (lines[-1][:300] if lines else "no message"))

