"""A ``dpdist serve`` app on a real socket in this process, and raw HTTP over it.

uvicorn (with the options of ``dpdist serve``) serves ``create_app`` in a thread, so a test can read what the app holds
(``service.budget``) while it sends bytes by hand: the tests of the service's defences (tests/serve/test_serve_abuse.py)
and of the limits every dpdist server keeps (tests/serve/test_limits.py) and the scale tests share it.
"""

from __future__ import annotations

import socket
import threading
import time
import uuid

import httpx
import numpy as np

from dpdist import io, local
from dpdist.client import AdminClient
from dpdist.serve import create_app
from dpdist.serve._limits import Limits, uvicorn_options
from serve_support import ADMIN_TOKEN, free_port

#: the campaign most of these tests collect
GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8, "version": 1}
#: the enrolment token of the tests' devices
SUBMIT_TOKEN = "device-secret-0123456789"
#: generous bound on any wait of these tests (they end far sooner unless the defence is missing)
BOUND_S = 30.0


class InProcessServer:
    """``create_app`` served by uvicorn (with the options of ``dpdist serve``) in a thread of this process."""

    def __init__(self, db_url: str, limits: Limits | None = None, **app_options):
        self.limits = limits or Limits()
        self.app = create_app(db_url, admin_token=ADMIN_TOKEN, limits=self.limits, **app_options)
        self.service = self.app.state.service
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        import uvicorn  # the serve extra: loaded by the tests that start a server, not by those that import this

        config = uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_config=None, log_level="warning",
                                lifespan="off", **uvicorn_options(self.limits))
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + BOUND_S
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "the server did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(BOUND_S)
        if self.app.state.access_log is not None:  # what the lifespan does at shutdown (it is off here)
            self.app.state.access_log.flush()
        self.service.close()  # the committer stopped before the database closes (a fold on a closing connection crashed)


def new_campaign(url: str, config=GRR, *, open_it=True, **options) -> str:
    name = "c-" + uuid.uuid4().hex[:10]
    with AdminClient(url, admin_token=ADMIN_TOKEN, retries=0) as admin:
        admin.create_campaign(name, config, **options)
        if open_it:
            admin.open_campaign(name)
    return name


def raw_connection(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=BOUND_S)
    return sock


def request_head(method: str, path: str, length: int, extra: str = "") -> bytes:
    """A request's head, of a body of binary records unless ``extra`` names its own content type."""
    kind = "" if "content-type:" in extra.lower() else "Content-Type: application/octet-stream\r\n"
    return f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{kind}Content-Length: {length}\r\n{extra}\r\n".encode()


def read_response(sock: socket.socket) -> tuple[int, dict, bytes]:
    """Status, headers and everything the server sent until it closed the connection."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, body


def grr_body(values, batch_id=None, config=GRR, seed=1) -> bytes:
    protocol = local.from_config(config)
    return io.encode_record(protocol, protocol.privatize(np.asarray(values), rng=seed), batch_id)


def put(url, campaign, batch_id, body, content_type="application/octet-stream", token=None):
    headers = {"Content-Type": content_type}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.put(f"{url}/api/campaigns/{campaign}/batches/{batch_id}", content=body, headers=headers, timeout=BOUND_S)


def read_response_keepalive(sock: socket.socket) -> tuple[int, dict, bytes]:
    """One response on a connection the server keeps open (Content-Length delimited)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    while len(body) < int(headers.get("content-length", 0)):
        body += sock.recv(65536)
    return int(lines[0].split()[1]), headers, body

