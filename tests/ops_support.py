"""Helpers of tests/serve/test_operations.py: a configurable ``dpdist serve``, a PostgreSQL that can be stopped and
started again, a path-prefix reverse proxy, a static page server and headless Chromium.

Everything listens on 127.0.0.1 only, on a free port, and is stopped by the fixture or context manager
that started it; the proxy and the page server answer with timeouts and run in daemon threads.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from dpdist._http._tls import verifying_context

from serve_support import PostgresCluster, ServerProcess, free_port

TESTS = Path(__file__).resolve().parent
CDP_PAGE = TESTS / "cdp_page.mjs"


class OpsServer(ServerProcess):
    """``dpdist serve`` with extra options and environment variables (``args``, ``env``); ``program`` replaces
    ``python -m dpdist.cli`` (e.g. the ``dpdist`` of another virtual environment); ``forked=False`` runs the command
    itself (a test of what ``ps`` shows of the process), not a fork of the zygote."""

    def __init__(self, db_url: str | None, *, args=(), env=None, program=None, log_path=None, log_level="warning",
                 port: int | None = None, forked: bool = True):
        super().__init__(db_url or "", log_path=log_path, log_level=log_level)
        self.forked = forked
        if port is not None:
            self.port, self.url = port, f"http://127.0.0.1:{port}"
        self.args, self.env, self.program = list(args), dict(env or {}), program

    def command(self) -> list[str]:
        command = list(self.program or [sys.executable, "-m", "dpdist.cli"]) + ["serve"]
        if self.db_url:
            command += ["--db", self.db_url]
        if "DPDIST_PORT" not in self.env:
            command += ["--port", str(self.port)]
        return command + ["--log-level", self.log_level, *self.args]

    def environment(self) -> dict:
        return {**super().environment(), **self.env}

    def log(self) -> str:
        return Path(self.log_path).read_text() if self.log_path else ""

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class RestartablePostgres(PostgresCluster):
    """A throwaway cluster that can be stopped (``halt``: fast shutdown) and started again on the same port."""

    def __init__(self, *, password: str | None = None):
        super().__init__()
        self.password = password

    def start(self) -> "RestartablePostgres":
        initdb = [self.bin / "initdb", "-D", self.data, "-U", "postgres", "-E", "UTF8", "--no-sync"]
        if self.password is None:
            initdb.append("--auth=trust")
        else:
            pwfile = self.root / "pw"
            pwfile.write_text(self.password + "\n")
            if self.as_root:
                shutil.chown(pwfile, "postgres", "postgres")
            initdb += ["--auth=scram-sha-256", f"--pwfile={pwfile}"]
        self._run(*initdb)
        self.resume()
        return self

    def resume(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=on"
        self._run(self.bin / "pg_ctl", "-D", self.data, "-o", options, "-l", self.root / "log", "-w", "-t", "60", "start")

    def halt(self) -> None:
        self._run(self.bin / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "-t", "60", "stop")


class _Threaded(http.server.ThreadingHTTPServer):
    daemon_threads = True


def trickle_head(wfile, seconds: float) -> None:
    """Answer a status line, then one byte of a header every 0.2 s for ``seconds`` (a head never whole: a hostile
    server's), until the client gives up."""
    until = time.monotonic() + seconds
    try:
        wfile.write(b"HTTP/1.1 200 OK\r\nX-Pad: ")
        while time.monotonic() < until:
            wfile.write(b"a")
            wfile.flush()
            time.sleep(0.2)
    except OSError:  # the client gave up
        pass


@contextlib.contextmanager
def serving(handler_class):
    """Run ``handler_class`` on 127.0.0.1 (a free port) in a daemon thread; yield the base URL; shut down after."""
    server = _Threaded(("127.0.0.1", 0), handler_class)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def prefix_proxy(prefix: str, backend: str):
    """A reverse proxy handler: ``{prefix}/x`` -> ``{backend}/x`` (the prefix stripped, as nginx's
    ``location /dpdist/ { proxy_pass http://127.0.0.1:8000/; }``), with X-Forwarded-For and -Proto."""

    class Proxy(http.server.BaseHTTPRequestHandler):
        timeout = 30
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        def _forward(self):
            if not (self.path == prefix or self.path.startswith(prefix + "/")):
                self.send_error(404)
                return
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            skip = {"host", "connection", "content-length", "transfer-encoding"}
            headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
            headers.update({"X-Forwarded-For": self.client_address[0], "X-Forwarded-Proto": "http"})
            answer = httpx.request(self.command, backend + (self.path[len(prefix):] or "/"), content=body,
                                   headers=headers, timeout=30, verify=verifying_context())
            self.send_response(answer.status_code)
            for name, value in answer.headers.items():
                if name.lower() not in skip | {"content-encoding", "date", "server"}:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

        do_GET = do_PUT = do_POST = do_OPTIONS = do_HEAD = _forward

    return Proxy


def static_pages(directory: Path):
    """A handler serving the files of ``directory`` (another origin than the dpdist server's)."""

    class Pages(http.server.SimpleHTTPRequestHandler):
        timeout = 30

        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(directory), **kwargs)

        def log_message(self, *args):
            pass

    return Pages


def required(program: str, *candidates: str) -> str:
    import pytest

    for name in (program, *candidates):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{program} is not installed, and CI is set: .ci/run installs it.")
    pytest.skip(f"{program} is not installed")


@contextlib.contextmanager
def chromium_devtools():
    """Headless Chromium with a DevTools port on 127.0.0.1; yields the port; quits after."""
    binary = required("chromium", "chromium-browser", "google-chrome")
    port = free_port()
    profile = tempfile.mkdtemp(prefix="dpdist-chromium-")
    process = subprocess.Popen(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--remote-debugging-port={port}", "--remote-debugging-address=127.0.0.1", f"--user-data-dir={profile}",
         "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"http://127.0.0.1:{port}/json/version", timeout=1, verify=verifying_context()).status_code == 200:
                    break
            time.sleep(0.2)
        else:
            raise RuntimeError("headless Chromium did not open its DevTools port")
        yield port
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        shutil.rmtree(profile, ignore_errors=True)


def run_page(devtools_port: int, url: str, steps: list) -> dict:
    """Open ``url`` in the browser, run ``steps`` (see tests/cdp_page.mjs); the printed JSON."""
    result = subprocess.run(
        [required("node"), "--experimental-websocket", str(CDP_PAGE), str(devtools_port), url, json.dumps(steps)],
        capture_output=True, text=True, timeout=180,
    )
    if result.returncode != 0:
        raise AssertionError(f"the page failed: {result.stderr.strip()[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])
