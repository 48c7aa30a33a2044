"""The access line of ``dpdist serve`` (``dpdist.serve._access``): fields the server made or holds, whatever the request
sent - a hostile path, method, forwarded address or request id writes none of itself, no second line, no escape
sequence and no secret; and, as real servers in every configuration, no secret the process holds or checks reaches any
line it writes, however a client sends it (tests/log_secrets_support.py)."""

from __future__ import annotations

import io
import json
import re
import secrets
import uuid

import httpx
import pytest

pytest.importorskip("starlette")

from dpdist.serve._access import AccessLog  # noqa: E402
from dpdist.serve._logs import INNER, REQUEST_ID, Inner  # noqa: E402
from log_secrets_support import lines_holding, send_every_way, send_through_gateway  # noqa: E402
from ops_support import OpsServer, RestartablePostgres  # noqa: E402
from serve_support import ADMIN_TOKEN, postgres_available  # noqa: E402

ROUTE = "/api/campaigns/{campaign}/batches/{batch_id}"
SERVER_ID = "0f" * 16
GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
#: what a request may send in place of a path, a method, an address or a request id
HOSTILE = ['/x\nINFO:     - - "PUT /forged HTTP/1.1" 200', "\x1b[2J\x1b]0;pwned\x07", "a\u202etxt", f"Bearer {ADMIN_TOKEN}",
           "password=S3cret Bearer abc", ADMIN_TOKEN, "submit-token-in-the-form-of-an-id", "0123456789abcdef" * 2]


def _lines(mode: str, log_format: str, scope: dict, route: str = ROUTE, status: int = 200) -> list[str]:
    """The lines an :class:`AccessLog` of a process that read campaigns ``c1`` and ``c2`` writes of ``scope``, their
    durations left out."""
    access = AccessLog(mode, log_format, io.StringIO(), campaigns={"c1", "c2"})
    token = REQUEST_ID.set(SERVER_ID)
    try:
        access.write(scope, route, status, 0.0)
    finally:
        REQUEST_ID.reset(token)
    return [re.sub(r" [0-9.]+ms ", " ", line) for line in access.stream.getvalue().splitlines()]


def _scope(method="PUT", client=("10.0.0.7", 5555), params=None, headers=()) -> dict:
    return {"type": "http", "method": method, "path": "/ignored", "http_version": "1.1", "client": client,
            "path_params": params if params is not None else {"campaign": "c1", "batch_id": "b-1"}, "headers": list(headers)}


@pytest.mark.parametrize("mode", ["anonymous", "full"])
def test_a_line_holds_the_fields_dpdist_chose(mode):
    (text,) = _lines(mode, "text", _scope())
    (document,) = map(json.loads, _lines(mode, "json", _scope()))
    if mode == "anonymous":
        assert text == f'INFO:     - - "PUT {ROUTE} HTTP/1.1" 200 {SERVER_ID}'
        assert set(document) == {"time", "level", "logger", "message", "request_id", "method", "route", "status",
                                 "duration_ms"}
    else:
        assert text == f'INFO:     10.0.0.7:5555 - "PUT /api/campaigns/c1/batches/- HTTP/1.1" 200 {SERVER_ID}'
        assert (document["client"], document["path"]) == ("10.0.0.7:5555", "/api/campaigns/c1/batches/-")
    assert (document["method"], document["route"], document["status"], document["logger"]) == (
        "PUT", ROUTE, 200, "dpdist.serve.access")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", document["time"])


@pytest.mark.parametrize("log_format", ["text", "json"])
@pytest.mark.parametrize("hostile", HOSTILE)
def test_nothing_a_request_sent_is_written(hostile, log_format):
    headers = [(b"authorization", f"Bearer {hostile}".encode("utf-8")), (b"x-request-id", hostile.encode("utf-8")),
               (b"traceparent", hostile.encode("utf-8"))]
    scope = _scope(method=hostile, client=(hostile, 1), params={"campaign": hostile, "batch_id": hostile}, headers=headers)
    for mode in ("anonymous", "full"):
        (line,) = _lines(mode, log_format, scope)
        assert line.isprintable() and line.isascii() and hostile not in line and "S3cret" not in line, line
        assert ' - "OTHER ' in line or '"method":"OTHER"' in line, line
    (line,) = _lines("full", "text", scope)
    assert line == f'INFO:     - - "OTHER /api/campaigns/-/batches/- HTTP/1.1" 200 {SERVER_ID}', line


@pytest.mark.parametrize("params, path", [
    ({"campaign": "c2", "batch_id": "0" * 32}, "/api/campaigns/c2/batches/-"),  # a batch id is a client's text: never
    ({"campaign": "c3", "batch_id": "b"}, "/api/campaigns/-/batches/-"),  # a campaign the process never read
    ({"campaign": "c1", "key_id": "7"}, "/api/campaigns/c1/batches/{batch_id}"),  # (a parameter the route lacks)
])
def test_a_full_line_names_a_campaign_the_process_read_and_no_batch_id(params, path):
    (line,) = _lines("full", "text", _scope(params=params))
    assert line == f'INFO:     10.0.0.7:5555 - "PUT {path} HTTP/1.1" 200 {SERVER_ID}', line


@pytest.mark.parametrize("key_id, written", [("7", "7"), ("255", "255"), ("1234", "-"), ("a", "-")])
def test_a_key_id_of_at_most_three_digits_is_written(key_id, written):
    route = "/api/ohttp/keys/{key_id}"
    (line,) = _lines("full", "text", _scope(method="DELETE", params={"key_id": key_id}), route=route)
    assert f'"DELETE /api/ohttp/keys/{written} HTTP/1.1"' in line, line


@pytest.mark.parametrize("client, written", [(("127.0.0.1", 5555), "127.0.0.1:5555"), (("2001:db8::1", 443), "2001:db8::1:443"),
                                             (("fe80::1%x y\n", 1), "fe80::1:1"), (("1.2.3.4 Bearer x", 1), "-")])
def test_a_client_address_is_written_when_it_is_one(client, written):
    (line,) = _lines("full", "text", _scope(client=client))
    assert line.startswith(f"INFO:     {written} - "), line


def test_a_gateway_request_is_written_as_the_request_it_carried():
    scope = _scope(method="POST") | {INNER: Inner("GET", "/api/campaigns/{campaign}/config", 404, {"campaign": "c2"})}
    (anonymous,), (full,) = (_lines(mode, "text", scope, route="/ohttp/gateway") for mode in ("anonymous", "full"))
    assert anonymous == f'INFO:     ohttp - "GET /api/campaigns/{{campaign}}/config HTTP/1.1" 404 {SERVER_ID}'
    assert full == f'INFO:     ohttp@10.0.0.7:5555 - "GET /api/campaigns/c2/config HTTP/1.1" 404 {SERVER_ID}'


def test_off_writes_nothing():
    assert _lines("off", "text", _scope()) == [] and _lines("off", "json", _scope()) == []


def test_a_request_id_the_client_sent_is_not_taken_and_no_token_a_request_sent_is_written(tmp_path):
    """Every answer carries a fresh id of the server's, whatever ``X-Request-ID`` came (it was the client's text: a
    submit token sent there was written to the access line), and the access line the same one; a submit token sent as
    a campaign, a batch id or a trace id is in no line (in process, a full JSON log; every configuration, every way
    and every line of a real server: the slow test below)."""
    from starlette.testclient import TestClient

    from dpdist.serve import create_app
    from dpdist.serve._limits import Limits
    from dpdist.serve._operations import Operations

    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN, limits=Limits(access_log="full"),
                     operations=Operations(log_format="json"))
    app.state.access_log.stream = io.StringIO()
    client, token = TestClient(app), secrets.token_hex(16)
    admin = {"authorization": f"Bearer {ADMIN_TOKEN}"}
    client.post("/api/campaigns", json={"campaign": "c1", "config": GRR, "submit_token": token}, headers=admin)
    answers = [client.get("/healthz", headers={"X-Request-ID": offered}) for offered in (token, "check-42", "")]
    for path in (f"/api/campaigns/{token}/batches/{token}", f"/api/campaigns/c1/batches/{token}"):
        client.put(path, headers={"traceparent": f"00-{token}-00f067aa0ba902b7-01", "X-Request-ID": token}, content=b"{}")
    app.state.access_log.flush()
    ids = [answer.headers["x-request-id"] for answer in answers]
    assert all(re.fullmatch("[0-9a-f]{32}", found) for found in ids) and len(set(ids)) == 3, ids
    lines = [json.loads(line) for line in app.state.access_log.stream.getvalue().splitlines()]
    assert [line["request_id"] for line in lines[1:4]] == ids, lines
    assert [line["path"] for line in lines[4:]] == ["/api/campaigns/-/batches/-", "/api/campaigns/c1/batches/-"], lines
    assert not lines_holding("\n".join(map(json.dumps, lines)), {"submit token": token})


# ---------------------------------------------------------------------- real servers: every secret, every way, every line
#: the secrets a server of these tests holds or checks, each in a form some field of a line once took: the admin token as
#: a campaign id, the metrics token as a UUID, the relay token and a submit token as 32 hexadecimal digits (a batch id's,
#: a trace id's form), a submit token as a campaign id; enrollment tokens are the server's own
METRICS_TOKEN = str(uuid.UUID(bytes=secrets.token_bytes(16)))
RELAY_TOKEN = secrets.token_hex(16)
SUBMIT_TOKENS = {"c1": secrets.token_hex(16), "c2": "submit-token-" + secrets.token_hex(6)}
#: the configurations: (name, options, log level); each runs in its own server
CONFIGURATIONS = [
    ("default", (), "info"),
    ("full", ("--access-log", "full"), "info"),
    ("json, full", ("--access-log", "full", "--log-format", "json"), "info"),
    ("h11, debug, full", ("--http", "h11", "--access-log", "full"), "debug"),
    ("httptools, debug, json", ("--http", "httptools", "--log-format", "json"), "debug"),
    ("postgresql with a password, debug, json, full", ("--access-log", "full", "--log-format", "json"), "debug"),
]


def _service_routes() -> list[tuple[str, str]]:
    """Every ``(method, template)`` ``dpdist serve`` routes."""
    from dpdist.serve._ohttp_gateway import ROUTES as OHTTP_ROUTES
    from dpdist.serve._operations import ROUTES as OPERATIONS_ROUTES
    from dpdist.serve._routes import ROUTES

    return [(method, route.path) for route in (*ROUTES, *OHTTP_ROUTES, *OPERATIONS_ROUTES)
            for method in sorted(route.methods - {"HEAD"})]


def _campaigns(url: str) -> str:
    """Campaigns ``c1`` and ``c2`` with their submit tokens and ``e`` with enrollment tokens, open; one enrollment
    token."""
    with httpx.Client(base_url=url, headers={"authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=30) as admin:
        for campaign, token in SUBMIT_TOKENS.items():
            assert admin.post("/api/campaigns", json={"campaign": campaign, "config": GRR, "submit_token": token}).status_code == 201
        assert admin.post("/api/campaigns", json={"campaign": "e", "config": GRR, "enrollment": True}).status_code == 201
        for campaign in (*SUBMIT_TOKENS, "e"):
            assert admin.post(f"/api/campaigns/{campaign}/open").status_code == 200
        return admin.post("/api/campaigns/e/enrollments", json={"count": 1, "reports": 10}).json()["tokens"][0]


@pytest.mark.slow  # a dpdist serve subprocess per configuration, ~3,000 requests each
@pytest.mark.parametrize("name, options, level", CONFIGURATIONS, ids=[name for name, _, _ in CONFIGURATIONS])
def test_no_secret_the_server_holds_or_checks_reaches_a_line_however_a_client_sends_it(name, options, level, tmp_path):
    cluster, db = None, str(tmp_path / "campaigns.sqlite")
    held = {"admin token": ADMIN_TOKEN, "metrics token": METRICS_TOKEN, "relay token": RELAY_TOKEN,
            **{f"submit token of {campaign}": token for campaign, token in SUBMIT_TOKENS.items()}}
    if name.startswith("postgresql"):
        if not postgres_available():
            pytest.skip("PostgreSQL (initdb) is not installed; .ci/run installs the postgresql package")
        held["database password"] = "pg-" + secrets.token_hex(12)
        cluster = RestartablePostgres(password=held["database password"]).start()
        db = f"postgresql://postgres:{held['database password']}@127.0.0.1:{cluster.port}/postgres"
    env = {"DPDIST_DB": db, "DPDIST_METRICS_TOKEN": METRICS_TOKEN, "DPDIST_RELAY_TOKEN": RELAY_TOKEN}
    try:
        with OpsServer(None, args=(*options, "--rate-limit", "0"), env=env, log_path=tmp_path / "server.log",
                       log_level=level) as server:
            held["enrollment token"] = _campaigns(server.url)
            routes = _service_routes()
            device_routes = [(method, template) for method, template in routes
                             if template.startswith("/api/campaigns/{campaign}/") and template.split("/")[4] in ("batches", "config", "identity")]
            sent = 0
            for secret in held.values():
                credential = f"Bearer {SUBMIT_TOKENS['c1']}"
                sent += send_every_way(server.url, secret, routes, {"campaign": "c1", "key_id": "1"}, credential)
                sent += send_through_gateway(server.url, secret, device_routes, {"campaign": "c1"})
    finally:
        if cluster is not None:
            cluster.stop()
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert sent > 2000 and len(log.splitlines()) > sent // 2, (sent, len(log.splitlines()))  # the lines were written
    assert "/api/campaigns/c1/" in log or "{campaign}" in log  # (a full line names the campaign the process read)
    found = lines_holding(log, held)
    assert not found, {secret: lines[:5] for secret, lines in found.items()}
