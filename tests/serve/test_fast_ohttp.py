"""``POST /ohttp/gateway`` served by one ASGI layer (``_fast_ohttp``) answers as the whole stack does.

A request with a query string goes through every middleware and Starlette's route (the fast path leaves it to them),
the same request without one through :class:`~dpdist.serve._fast_ohttp.GatewayFastPath`; both serve the inner request
with the function that serves it directly, and the inner answer is the direct one's.  The status, the headers
(names, values, order) and, for an answer in the clear, the body must be equal; an encapsulated answer is sealed under a
fresh nonce each time, so its length and what it opens to must be equal.  Both must be counted alike in the metrics,
and the access line of the outer request carries the outer request's id on both paths.
"""

from __future__ import annotations

import io as stdio
import json
import re

import numpy as np
import pytest

pytest.importorskip("pyhpke")

from dpdist import io, local  # noqa: E402
from dpdist import _ohttp  # noqa: E402
from dpdist._ohttp import _bhttp  # noqa: E402
from dpdist.serve._fast_ohttp import GatewayFastPath  # noqa: E402
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
    if case == "dialect_mismatch":  # an RFC 9458 request of dpdist's clients relabelled as chunked
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


def _access_lines(client, send) -> list[tuple[str, str]]:
    """The access lines (text format) written while ``send()`` runs, each without its duration, and its request id."""
    access = client.app.state.access_log
    access.flush()  # the lines of the requests before
    kept, access.stream = access.stream, stdio.StringIO()
    try:
        send()
        access.flush()  # (the lines kept: written within half a second)
    finally:
        written, access.stream = access.stream.getvalue(), kept
    return [re.fullmatch(r"INFO:     (.*) [0-9.]+ms (\S+)", line).groups() for line in written.splitlines()]


def test_a_gateway_request_is_one_access_line_naming_its_inner_request_on_both_paths(served):
    """The gateway request is the one request an operator sees: one access line, with the outer request's id, naming
    the inner method, route and status, its address ``ohttp``."""
    client, config, calls = served
    ids = iter(("e" * 32, "f" * 32))
    lines = _access_lines(client, lambda: _both(client, calls, lambda: _ohttp.encapsulate_request(config, _batch(next(ids))),
                                                {**OHTTP, "X-Request-ID": "outer-probe"}))
    line = 'ohttp - "PUT /api/campaigns/{campaign}/batches/{batch_id} HTTP/1.1" 200'
    assert [message for message, _ in lines] == [line, line]
    assert all(re.fullmatch("[0-9a-f]{32}", request_id) for _, request_id in lines)  # the server's ids, not the relay's
    refused = _access_lines(client, lambda: _both(client, calls, lambda: _ohttp.encapsulate_request(
        config, _batch("9" * 32, token="nope")), {**OHTTP, "X-Request-ID": "outer-probe"}))
    assert [message for message, _ in refused] == ['ohttp - "PUT /api/campaigns/{campaign}/batches/{batch_id} HTTP/1.1" 401'] * 2
    malformed = _access_lines(client, lambda: _both(client, calls, lambda: _ohttp.encapsulate_request(config, b"\x00\x03PUT")))
    assert [message for message, _ in malformed] == ['ohttp - "POST /ohttp/gateway HTTP/1.1" 400'] * 2
    unopened = _access_lines(client, lambda: _both(client, calls, lambda: (b"\x00" * 10, None)))
    assert [message for message, _ in unopened] == ['- - "POST /ohttp/gateway HTTP/1.1" 400'] * 2


def test_the_inner_answer_carries_the_gateway_request_id_and_a_direct_batchs_answer(served):
    """The encapsulated answer to a batch is a direct batch's answer (status, fields, body) with the id of the gateway
    request: the one id in the logs, the server's own (neither the relay's outer nor the device's inner
    ``X-Request-ID`` is taken)."""
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
    request_id = outer.headers["x-request-id"]
    assert re.fullmatch("[0-9a-f]{32}", request_id) and dict(inner.headers)[b"x-request-id"] == request_id.encode()
    assert inner.status == direct.status_code == 200
    assert inner.content.replace(b'"duplicate":false', b'"duplicate":true') == direct.content
    expected = [(name, value) for name, value in direct.headers.raw if name != b"content-length"]  # (https inside: HSTS)
    expected = [(name, request_id.encode() if name == b"x-request-id" else value) for name, value in expected]
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
    request_id = outer.headers["x-request-id"].encode()
    assert inner.status == 200 and dict(inner.headers)[b"x-request-id"] == request_id and b'"campaign":"fast"' in inner.content
    assert lines == [('ohttp - "GET /api/campaigns/{campaign}/config HTTP/1.1" 200', request_id.decode())]
    text = client.get("/metrics", headers=ADMIN).text
    assert "/config" not in text and "dpdist_requests_in_flight 1.0" in text


def test_the_line_of_an_inner_request_names_its_route_never_its_path(served):
    """An inner request's path holding its own credential (``GET /api/campaigns/<token>/config`` with
    ``Bearer <token>``) is written as its route's template."""
    client, config, _ = served
    secret = "mysecrettoken99"
    message = _bhttp.encode_request(_bhttp.Request("GET", "http", "testserver", f"/api/campaigns/{secret}/config",
                                                   ((b"authorization", f"Bearer {secret}".encode()),)))

    def send():
        body, _ = _ohttp.encapsulate_request(config, message)
        client.post("/ohttp/gateway", content=body, headers={**OHTTP, "X-Request-ID": "outer-probe"})

    lines = _access_lines(client, send)
    assert [message for message, _ in lines] == ['ohttp - "GET /api/campaigns/{campaign}/config HTTP/1.1" 404'], lines


@pytest.mark.parametrize("mode", ["anonymous", "full"])
def test_the_gateway_line_names_nothing_a_direct_line_would_not(mode):
    """The text and JSON access lines of a gateway request, in each ``--access-log`` mode: the inner request's method,
    route and status, ``ohttp`` for the address (``full``: with the relay's address and the path, as a direct line: the
    campaign the process read, no batch id);
    a gateway request answered otherwise (a 500 while sealing) is logged as itself."""
    from dpdist.serve._access import AccessLog
    from dpdist.serve._logs import INNER, Inner

    route, batch_id = "/api/campaigns/{campaign}/batches/{batch_id}", "5" * 32
    scope = {"type": "http", "method": "POST", "path": "/ohttp/gateway", "http_version": "1.1", "client": ("10.0.0.9", 4242),
             "route": None, INNER: Inner("PUT", route, 401, {"campaign": "fast", "batch_id": batch_id})}
    text, document = (AccessLog(mode, log_format, stdio.StringIO(), campaigns={"fast"}) for log_format in ("text", "json"))
    text.write(scope, "/ohttp/gateway", 200, 0.0)
    document.write(scope, "/ohttp/gateway", 200, 0.0)
    text.write(scope, "/ohttp/gateway", 500, 0.0)
    (line, failed), fields = [re.sub(r" [0-9.]+ms ", " ", one) for one in text.stream.getvalue().splitlines()], json.loads(document.stream.getvalue())
    if mode == "full":
        assert line == 'INFO:     ohttp@10.0.0.9:4242 - "PUT /api/campaigns/fast/batches/- HTTP/1.1" 401 -'
        assert (fields["client"], fields["path"]) == ("10.0.0.9:4242", "/api/campaigns/fast/batches/-")
        assert failed == 'INFO:     10.0.0.9:4242 - "POST /ohttp/gateway HTTP/1.1" 500 -'
    else:
        assert line == f'INFO:     ohttp - "PUT {route} HTTP/1.1" 401 -'
        assert "client" not in fields and "path" not in fields
        assert failed == 'INFO:     - - "POST /ohttp/gateway HTTP/1.1" 500 -'
    assert (fields["method"], fields["route"], fields["status"], fields["via"]) == ("PUT", route, 401, "ohttp")


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


def test_a_body_there_already_is_read_at_once_held_while_opened_and_given_back(served):
    """A body uvicorn holds whole already (``body_ready``) is read at once and held while it is opened, as a direct
    batch's is; one in two messages is read on as before; a key the gateway does not hold is its 400 problem; past the
    address's share of the body memory it is refused busy; nothing stays held."""
    from dpdist._guard._refusals import Busy
    from dpdist.serve._ohttp_gateway import serve_encapsulated
    from serve_support import HeldMessages

    client, config, _ = served
    app = client.app
    service, budget = app.state.service, app.state.service.budget

    def serve(messages: list, length: int):
        scope = {"type": "http", "method": "POST", "scheme": "http", "path": "/ohttp/gateway", "client": ("10.0.0.9", 1)}

        async def run():
            return await serve_encapsulated(app, service, app.state.metrics, scope, HeldMessages(messages).receive,
                                            _ohttp.REQUEST_CONTENT_TYPE, str(length), b"testserver")

        return client.portal.call(run)

    def acknowledged(answer, context) -> bytes:
        status, body, headers = answer
        assert status == 200 and dict(headers)[b"content-type"] == b"message/ohttp-res" and budget.in_flight == 0
        inner = _bhttp.decode_response(context.open_response(body))
        assert inner.status == 200
        return inner.content

    budget.peak = 0
    body, context = _ohttp.encapsulate_request(config, _batch("e" * 32))
    assert b'"accepted":1' in acknowledged(serve([{"type": "http.request", "body": body}], len(body)), context)
    assert budget.peak == len(body)  # held while it was opened
    body, context = _ohttp.encapsulate_request(config, _batch("f" * 32))
    halves = [{"type": "http.request", "body": body[:50], "more_body": True}, {"type": "http.request", "body": body[50:]}]
    assert b'"accepted":1' in acknowledged(serve(halves, len(body)), context)
    unknown = bytes([(config.key_id + 1) % 256]) + body[1:]
    status, answer, headers = serve([{"type": "http.request", "body": unknown}], len(unknown))
    assert status == 400 and b"ohttp-key" in answer and budget.in_flight == 0
    budget.share = 64
    with pytest.raises(Busy):
        serve([{"type": "http.request", "body": body}], len(body))
    assert budget.in_flight == 0 and client.get("/api/campaigns/fast", headers=ADMIN).json()["n"] == 2
