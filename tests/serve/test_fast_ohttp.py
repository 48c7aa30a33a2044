"""``POST /ohttp/gateway`` served by one ASGI layer (``_fast_ohttp``) answers as the whole stack does.

A request with a query string goes through every middleware and Starlette's route (the fast path leaves it to them),
the same request without one through :class:`~dpdist.serve._fast_ohttp.GatewayFastPath`; both serve the inner request
with the function that serves it directly, and the inner answer is the direct one's.  The status, the headers
(names, values, order) and, for an answer in the clear, the body must be equal; an encapsulated answer is sealed under a
fresh nonce each time, so its length and what it opens to must be equal.  Both must be counted alike in the metrics,
and the access line of the outer request carries the outer request's id on both paths.
"""

from __future__ import annotations

import json
import logging
import re

import numpy as np
import pytest

pytest.importorskip("pyhpke")

from dpdist import io, local  # noqa: E402
from dpdist.relay import _bhttp, _ohttp  # noqa: E402
from dpdist.serve._fast_ohttp import GatewayFastPath  # noqa: E402
from dpdist.serve._logs import REQUEST_ID  # noqa: E402
from serve_support import ADMIN_TOKEN, fast_path_client  # noqa: E402

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
OHTTP = {"Content-Type": _ohttp.REQUEST_CONTENT_TYPE}
SUBMIT_TOKEN = "devices-of-the-gateway-campaign"


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A client of the application, the gateway's key configuration, and the requests the gateway's fast path served."""
    with fast_path_client(tmp_path, monkeypatch, GatewayFastPath, GRR, SUBMIT_TOKEN) as (client, calls):
        (config, *_) = _ohttp.decode_key_list(client.get("/ohttp/keys").content)
        yield client, config, calls


def _batch(batch_id: str, *, token: str = SUBMIT_TOKEN, value: int = 3, chunked: bool = False) -> bytes:
    """A batch PUT as a device encodes it (Binary HTTP), ``batch_id`` its id."""
    protocol = local.from_config(GRR)
    body = io.encode_record(protocol, protocol.privatize(np.array([value]), rng=value))
    fields = ((b"content-type", b"application/octet-stream"), (b"authorization", f"Bearer {token}".encode()))
    if not chunked:
        fields += (_ohttp.WHOLE_ANSWER_FIELD,)
    return _bhttp.encode_request(_bhttp.Request("PUT", "http", "testserver", f"/api/campaigns/fast/batches/{batch_id}",
                                                fields, body))


def _headers(response) -> list:
    """The answer's headers, the fresh request id and the date left out."""
    return [(name, b"-" if name in (b"x-request-id", b"date") else value) for name, value in response.headers.raw]


def _both(client, calls, make, headers=OHTTP) -> tuple:
    """The fast path's and the whole stack's (``?via=stack``) answers to the requests ``make()`` builds: each
    ``(status, headers, body, the context of its encapsulation or None)``."""
    answers = []
    for suffix in ("", "?via=stack"):
        before = len(calls)
        body, context = make()
        response = client.post("/ohttp/gateway" + suffix, content=body, headers=headers)
        assert len(calls) == before + (suffix == ""), "the fast path served a request with a query string, or not its own"
        answers.append((response.status_code, _headers(response), response.content, context))
    return tuple(answers)


def _opened(answer) -> _bhttp.Response:
    """The inner answer of an encapsulated one, its fresh request id left out."""
    status, headers, body, context = answer
    assert status == 200 and dict(headers)[b"content-type"] == b"message/ohttp-res"
    inner = _bhttp.decode_response(context.open_response(body))
    fields = tuple((name, b"-" if name == b"x-request-id" else value) for name, value in inner.headers)
    return _bhttp.Response(inner.status, fields, inner.content)


def test_an_acknowledgement_is_the_same_on_both_paths(served):
    client, config, calls = served
    ids = iter(("a" * 32, "b" * 32))
    fast, stack = _both(client, calls, lambda: _ohttp.encapsulate_request(config, _batch(next(ids))))
    assert fast[:2] == stack[:2] and len(fast[2]) == len(stack[2])
    assert dict(fast[1])[b"cache-control"] == b"no-store"
    inner_fast, inner_stack = _opened(fast), _opened(stack)
    assert inner_fast.status == inner_stack.status == 200 and inner_fast.headers == inner_stack.headers
    assert inner_fast.content.replace(b"a" * 32, b"b" * 32) == inner_stack.content
    assert b'"accepted":1' in inner_fast.content and b'"duplicate":false' in inner_fast.content
    again = _opened(_both(client, calls, lambda: _ohttp.encapsulate_request(config, _batch("a" * 32)))[0])
    assert b'"duplicate":true' in again.content
    assert client.get("/api/campaigns/fast", headers=ADMIN).json()["n"] == 2


@pytest.mark.parametrize("case", ["wrong_token", "malformed_binary_http", "not_through_gateway"])
def test_an_inner_refusal_is_the_same_on_both_paths(served, case):
    client, config, calls = served
    if case == "wrong_token":
        message = _batch("c" * 32, token="nope")
    elif case == "malformed_binary_http":
        message = b"\x00\x03PUT\x04http\x00\x03/api\x01"
    else:
        message = _bhttp.encode_request(_bhttp.Request("GET", "http", "testserver", "/api/campaigns", ()))
    fast, stack = _both(client, calls, lambda: _ohttp.encapsulate_request(config, message))
    assert fast[:2] == stack[:2] and len(fast[2]) == len(stack[2])
    inner_fast, inner_stack = _opened(fast), _opened(stack)
    assert (inner_fast.status, inner_fast.headers, inner_fast.content) == (inner_stack.status, inner_stack.headers,
                                                                          inner_stack.content)
    assert 400 <= inner_fast.status < 500
    assert case == "wrong_token" or case.encode() in inner_fast.content


@pytest.mark.parametrize("case", ["media_type", "not_decapsulated", "unknown_key", "too_large", "dialect_mismatch"])
def test_every_refusal_of_the_gateway_is_the_same_on_both_paths(served, case):
    client, config, calls = served
    headers = OHTTP
    if case == "media_type":
        headers = {"Content-Type": "application/octet-stream"}
    if case == "dialect_mismatch":  # an RFC 9458 request of dpdist's clients relabelled as chunked (outsider finding F3)
        headers = {"Content-Type": _ohttp.CHUNKED_REQUEST_CONTENT_TYPE}
    bodies = {"media_type": b"\x00" * 80, "not_decapsulated": b"\x00" * 10, "too_large": b"x" * (17 << 20),
              "unknown_key": bytes([(config.key_id + 1) % 256]) + bytes.fromhex("002000010001") + b"\x01" * 60}
    make = (lambda: (bodies[case], None)) if case in bodies else (
        lambda: _ohttp.encapsulate_request(config, _batch("d" * 32)))
    fast, stack = _both(client, calls, make, headers)
    assert fast[:3] == stack[:3]
    assert 400 <= fast[0] < 500
    assert client.get("/api/campaigns/fast", headers=ADMIN).json()["n"] == 0


def test_both_paths_are_counted_alike_in_the_metrics(served):
    client, config, calls = served
    ids = iter(f"{index:032x}" for index in range(2))
    _both(client, calls, lambda: _ohttp.encapsulate_request(config, _batch(next(ids))))
    _both(client, calls, lambda: (b"\x00" * 10, None))
    _both(client, calls, lambda: (b"\x00" * 80, None), {"Content-Type": "text/plain"})
    assert len(calls) == 3
    text = client.get("/metrics", headers=ADMIN).text
    route = re.escape('route="/ohttp/gateway"')
    assert re.search(rf'dpdist_http_responses_total\{{method="POST",{route},status="200"\}} 2\.0', text)
    assert re.search(rf'dpdist_http_responses_total\{{method="POST",{route},status="400"\}} 2\.0', text)
    assert re.search(rf'dpdist_http_responses_total\{{method="POST",{route},status="415"\}} 2\.0', text)
    assert re.search(rf'dpdist_request_duration_seconds_count\{{method="POST",{route}\}} 6\.0', text)
    # the inner batches counted as direct batches are in what they ingest, not as requests of their own
    assert "/batches/{batch_id}" not in text
    assert 'dpdist_batches_total{outcome="new"} 2.0' in text and "dpdist_reports_accepted_total 2.0" in text
    assert 'dpdist_requests_refused_total{reason="not_decapsulated"} 2.0' in text
    assert 'dpdist_requests_refused_total{reason="not_ohttp"} 2.0' in text
    assert "dpdist_requests_in_flight 1.0" in text  # the scrape itself: nothing else left in flight


def _access_lines(client, send) -> list[tuple[str, str | None]]:
    """The access lines (text format) written while ``send()`` runs, each with the request id of its record."""
    lines = []

    class Seen(logging.Handler):
        def emit(self, record):
            lines.append((record.getMessage(), REQUEST_ID.get()))

    access, seen = logging.getLogger("uvicorn.access"), Seen()
    access.addHandler(seen)
    level = access.level
    access.setLevel(logging.INFO)
    try:
        send()
    finally:
        access.removeHandler(seen)
        access.setLevel(level)
    return lines


def test_a_gateway_request_is_one_access_line_naming_its_inner_request_on_both_paths(served):
    """The gateway request is the one request an operator sees: one access line, with the outer request's id, naming
    the inner method, path (the batch id hidden, as a direct batch's) and status, its address ``ohttp``."""
    client, config, calls = served
    ids = iter(("e" * 32, "f" * 32))
    lines = _access_lines(client, lambda: _both(client, calls, lambda: _ohttp.encapsulate_request(config, _batch(next(ids))),
                                                {**OHTTP, "X-Request-ID": "outer-probe"}))
    line = 'ohttp - "PUT /api/campaigns/fast/batches/- HTTP/1.1" 200'
    assert lines == [(line, "outer-probe"), (line, "outer-probe")]
    refused = _access_lines(client, lambda: _both(client, calls, lambda: _ohttp.encapsulate_request(
        config, _batch("9" * 32, token="nope")), {**OHTTP, "X-Request-ID": "outer-probe"}))
    assert [message for message, _ in refused] == ['ohttp - "PUT /api/campaigns/fast/batches/- HTTP/1.1" 401'] * 2
    malformed = _access_lines(client, lambda: _both(client, calls, lambda: _ohttp.encapsulate_request(config, b"\x00\x03PUT")))
    assert [message for message, _ in malformed] == ['ohttp - "POST /ohttp/gateway HTTP/1.1" 400'] * 2
    unopened = _access_lines(client, lambda: _both(client, calls, lambda: (b"\x00" * 10, None)))
    assert [message for message, _ in unopened] == ['- - "POST /ohttp/gateway HTTP/1.1" 400'] * 2


def test_the_inner_answer_carries_the_gateway_request_id_and_a_direct_batchs_answer(served):
    """The encapsulated answer to a batch is a direct batch's answer (status, fields, body) with the id of the gateway
    request: the one id in the logs, the device's own inner ``X-Request-ID`` not taken."""
    client, config, calls = served
    message = _bhttp.encode_request(_bhttp.Request("PUT", "https", "testserver", "/api/campaigns/fast/batches/" + "7" * 32,
                                                   ((b"x-request-id", b"inner-probe"),
                                                    *_bhttp.decode_request(_batch("7" * 32)).headers),
                                                   _bhttp.decode_request(_batch("7" * 32)).content))
    body, context = _ohttp.encapsulate_request(config, message)
    outer = client.post("/ohttp/gateway", content=body, headers={**OHTTP, "X-Request-ID": "outer-probe"})
    inner = _bhttp.decode_response(context.open_response(outer.content))
    direct = client.put("/api/campaigns/fast/batches/" + "7" * 32, content=_bhttp.decode_request(_batch("7" * 32)).content,
                        headers={"Content-Type": "application/octet-stream", "Authorization": f"Bearer {SUBMIT_TOKEN}",
                                 "X-Request-ID": "outer-probe"}, follow_redirects=False)
    assert outer.headers["x-request-id"] == "outer-probe" and dict(inner.headers)[b"x-request-id"] == b"outer-probe"
    assert inner.status == direct.status_code == 200
    assert inner.content.replace(b'"duplicate":false', b'"duplicate":true') == direct.content
    expected = [(name, value) for name, value in direct.headers.raw if name != b"content-length"]  # (https inside: HSTS)
    assert list(inner.headers) == [*expected[:3], (b"strict-transport-security", b"max-age=31536000"), *expected[3:]]


def test_a_config_asked_through_the_gateway_is_no_request_of_its_own(served):
    """A campaign's config asked through the gateway is served by its route's endpoint, not by a second pass through
    the application: the gateway request's id in its answer, its one access line, no response metrics of its own."""
    client, config, calls = served
    message = _bhttp.encode_request(_bhttp.Request("GET", "http", "testserver", "/api/campaigns/fast/config", ()))
    answers = []

    def send():
        body, context = _ohttp.encapsulate_request(config, message)
        answers.append((client.post("/ohttp/gateway", content=body, headers={**OHTTP, "X-Request-ID": "outer-probe"}),
                        context))

    lines = _access_lines(client, send)
    (outer, context), = answers
    inner = _bhttp.decode_response(context.open_response(outer.content))
    assert inner.status == 200 and dict(inner.headers)[b"x-request-id"] == b"outer-probe" and b'"campaign":"fast"' in inner.content
    assert lines == [('ohttp - "GET /api/campaigns/fast/config HTTP/1.1" 200', "outer-probe")]
    text = client.get("/metrics", headers=ADMIN).text
    assert "/config" not in text and "dpdist_requests_in_flight 1.0" in text


def test_the_credential_an_inner_request_carried_is_masked_in_its_line(served):
    """attack121 F2: an inner request's own Authorization credential repeated in its path was written as sent
    (``GET /api/campaigns/<token>/config`` with ``Bearer <token>``), where a direct request's is masked."""
    client, config, _ = served
    secret = "mysecrettoken99"
    message = _bhttp.encode_request(_bhttp.Request("GET", "http", "testserver", f"/api/campaigns/{secret}/config",
                                                   ((b"authorization", f"Bearer {secret}".encode()),)))

    def send():
        body, _ = _ohttp.encapsulate_request(config, message)
        client.post("/ohttp/gateway", content=body, headers={**OHTTP, "X-Request-ID": "outer-probe"})

    lines = _access_lines(client, send)
    assert lines == [('ohttp - "GET /api/campaigns/***/config HTTP/1.1" 404', "outer-probe")], lines


@pytest.mark.parametrize("mode", ["anonymous", "full"])
def test_the_gateway_line_names_nothing_a_direct_line_would_not(mode):
    """The text and JSON access lines of a gateway request, in each ``--access-log`` mode: the inner request's method,
    path and status, ``ohttp`` for the address (``full``: with the relay's address and the batch id, as a direct line);
    a gateway request answered otherwise (a 500 while sealing) is logged as itself."""
    from dpdist.serve._access import access_line
    from dpdist.serve._logs import INNER, AccessLog, Inner

    path = "/api/campaigns/fast/batches/" + "5" * 32
    scope = {"type": "http", "method": "POST", "path": "/ohttp/gateway", "http_version": "1.1",
             "client": ("10.0.0.9", 4242), INNER: Inner("PUT", path, "/api/campaigns/{campaign}/batches/{batch_id}", 401)}
    records = []

    class Seen(logging.Handler):
        def emit(self, record):
            records.append(record)

    loggers = [logging.getLogger("uvicorn.access"), AccessLog.logger]
    seen, levels = Seen(), [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(seen)
        logger.setLevel(logging.INFO)
    try:
        access_line(scope, 200, mode)
        AccessLog.write(scope, "/ohttp/gateway", 200, 0.0, full=mode == "full")
        access_line(scope, 500, mode)
    finally:
        for logger, level in zip(loggers, levels):
            logger.removeHandler(seen)
            logger.setLevel(level)
    text, document, failed = records
    if mode == "full":
        assert text.getMessage() == f'ohttp@10.0.0.9:4242 - "PUT {path} HTTP/1.1" 401'
        assert (document.client, document.path) == ("10.0.0.9:4242", path)
        assert failed.getMessage() == '10.0.0.9:4242 - "POST /ohttp/gateway HTTP/1.1" 500'
    else:
        assert text.getMessage() == 'ohttp - "PUT /api/campaigns/fast/batches/- HTTP/1.1" 401'
        assert not hasattr(document, "client") and not hasattr(document, "path")
        assert failed.getMessage() == '- - "POST /ohttp/gateway HTTP/1.1" 500'
    assert (document.method, document.route, document.status, document.via) == (
        "PUT", "/api/campaigns/{campaign}/batches/{batch_id}", 401, "ohttp")


@pytest.mark.parametrize("path", ["/api/campaigns/fast/config", "/api/campaigns/fast/identity", "/api/campaigns/gone/config",
                                  "/api/campaigns/fast/config?submit_token=x", "/api/campaigns/fast/batches/" + "6" * 32 + "?a=b"])
def test_an_inner_request_is_answered_as_the_same_request_sent_directly(served, path):
    """A device's request through the gateway goes through the function that serves it directly (a campaign's config or
    identity, its refusals, a token in its query string refused, a batch whatever its query string): the same status,
    body and fields as the same request sent directly, but the request id and the fields of the connection."""
    client, config, _ = served
    method, content = ("PUT", _bhttp.decode_request(_batch("6" * 32)).content) if "/batches/" in path else ("GET", b"")
    fields = ((b"content-type", b"application/octet-stream"), (b"authorization", f"Bearer {SUBMIT_TOKEN}".encode()))
    message = _bhttp.encode_request(_bhttp.Request(method, "http", "testserver", path, fields if content else (), content))
    body, context = _ohttp.encapsulate_request(config, message)
    inner = _bhttp.decode_response(context.open_response(client.post("/ohttp/gateway", content=body, headers=OHTTP).content))
    direct = client.request(method, path, content=content or None, headers=dict((name.decode(), value.decode())
                                                                                  for name, value in fields) if content else {})
    assert inner.status == direct.status_code
    if b"token_in_query" in direct.content:  # the privacy middleware's own answer there, a refusal's here: one document
        assert json.loads(inner.content) == json.loads(direct.content)
        return
    connection = (b"x-request-id", b"content-length", b"date", b"server")
    assert [field for field in inner.headers if field[0] not in connection] == [
        field for field in direct.headers.raw if field[0] not in connection]
    assert inner.content.replace(b'"duplicate":false', b'"duplicate":true') == direct.content
