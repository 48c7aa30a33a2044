"""The access line of ``dpdist serve`` (``dpdist.serve._access``): fields dpdist chose, each checked, whatever the
request sent - a hostile path, method, forwarded address or request id writes none of itself, no second line, no escape
sequence and no secret."""

from __future__ import annotations

import io
import json
import re

import pytest

pytest.importorskip("starlette")

from dpdist.serve._access import AccessLog  # noqa: E402
from dpdist.serve._logs import INNER, REQUEST_ID, Inner  # noqa: E402

ROUTE = "/api/campaigns/{campaign}/batches/{batch_id}"
ADMIN = "admin-token-0123456789abcdef"
#: what a request may send in place of a path, a method, an address or a request id
HOSTILE = ['/x\nINFO:     - - "PUT /forged HTTP/1.1" 200', "\x1b[2J\x1b]0;pwned\x07", "a\u202etxt", f"Bearer {ADMIN}",
           "password=S3cret Bearer abc", ADMIN]


def _lines(mode: str, log_format: str, scope: dict, route: str = ROUTE, status: int = 200,
           request_id: str = "0f" * 16) -> list[str]:
    """The lines an :class:`AccessLog` writes of ``scope``, their durations left out."""
    access = AccessLog(mode, log_format, io.StringIO(), secrets=(ADMIN,))
    token = REQUEST_ID.set(request_id)
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
        assert text == f'INFO:     - - "PUT {ROUTE} HTTP/1.1" 200 {"0f" * 16}'
        assert set(document) == {"time", "level", "logger", "message", "request_id", "method", "route", "status",
                                 "duration_ms"}
    else:
        assert text == f'INFO:     10.0.0.7:5555 - "PUT /api/campaigns/c1/batches/b-1 HTTP/1.1" 200 {"0f" * 16}'
        assert (document["client"], document["path"]) == ("10.0.0.7:5555", "/api/campaigns/c1/batches/b-1")
    assert (document["method"], document["route"], document["status"], document["logger"]) == (
        "PUT", ROUTE, 200, "dpdist.serve.access")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", document["time"])


@pytest.mark.parametrize("log_format", ["text", "json"])
@pytest.mark.parametrize("hostile", HOSTILE)
def test_nothing_a_request_sent_is_written_but_what_passes_its_rule(hostile, log_format):
    headers = [(b"authorization", f"Bearer {hostile}".encode("utf-8")), (b"x-request-id", hostile.encode("utf-8"))]
    scope = _scope(method=hostile, client=(hostile, 1), params={"campaign": hostile, "batch_id": hostile}, headers=headers)
    for mode in ("anonymous", "full"):
        (line,) = _lines(mode, log_format, scope, request_id=hostile)
        assert line.isprintable() and line.isascii() and hostile not in line and "S3cret" not in line, line
        assert ' - "OTHER ' in line or '"method":"OTHER"' in line, line
    (line,) = _lines("full", "text", scope, request_id=hostile)
    assert line == 'INFO:     - - "OTHER /api/campaigns/-/batches/- HTTP/1.1" 200 -', line


@pytest.mark.parametrize("value", [ADMIN, "x" + ADMIN, "own-token-0123456789"])
def test_a_value_that_passes_its_rule_but_holds_a_secret_is_not_written(value):
    """The server's admin token, or the request's own credential, as a campaign, a batch id or a request id."""
    import base64

    headers = [(b"authorization", b"Bearer own-token-0123456789"), (b"x-request-id", b"x")]
    for held in (value, base64.b64encode(value.encode()).decode().rstrip("=")):
        scope = _scope(params={"campaign": "c1", "batch_id": held}, headers=headers)
        (line,) = _lines("full", "text", scope, request_id=held)
        assert line == 'INFO:     10.0.0.7:5555 - "PUT /api/campaigns/c1/batches/- HTTP/1.1" 200 -', line


@pytest.mark.parametrize("client, written", [(("127.0.0.1", 5555), "127.0.0.1:5555"), (("2001:db8::1", 443), "2001:db8::1:443"),
                                             (("fe80::1%x y\n", 1), "fe80::1:1"), (("1.2.3.4 Bearer x", 1), "-")])
def test_a_client_address_is_written_when_it_is_one(client, written):
    (line,) = _lines("full", "text", _scope(client=client))
    assert line.startswith(f"INFO:     {written} - "), line


def test_a_gateway_request_is_written_as_the_request_it_carried():
    scope = _scope(method="POST") | {INNER: Inner("GET", "/api/campaigns/{campaign}/config", 404, {"campaign": "c2"})}
    (anonymous,), (full,) = (_lines(mode, "text", scope, route="/ohttp/gateway") for mode in ("anonymous", "full"))
    assert anonymous == f'INFO:     ohttp - "GET /api/campaigns/{{campaign}}/config HTTP/1.1" 404 {"0f" * 16}'
    assert full == f'INFO:     ohttp@10.0.0.7:5555 - "GET /api/campaigns/c2/config HTTP/1.1" 404 {"0f" * 16}'


def test_off_writes_nothing():
    assert _lines("off", "text", _scope()) == [] and _lines("off", "json", _scope()) == []
