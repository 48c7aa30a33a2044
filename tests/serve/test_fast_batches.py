"""The devices' batch route served by one ASGI layer (``_fast_batches``) answers byte for byte as the whole stack does.

A request with a query string that holds no token goes through every middleware
and Starlette's route (the fast path leaves it to them), the same request
without one through :class:`~dpdist.serve._fast_batches.BatchFastPath`: status,
body and headers (names, values, order) must be equal, for an acknowledgement and
for each kind of refusal, and both must be counted alike in the metrics.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from dpdist import io, local
from dpdist.serve._fast_batches import BatchFastPath
from serve_support import ADMIN_TOKEN, fast_path_client

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
BINARY = {"Content-Type": "application/octet-stream"}
SUBMIT_TOKEN = "devices-of-the-fast-campaign"


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A client of the application, its submit token, and the number of requests the fast path served."""
    with fast_path_client(tmp_path, monkeypatch, BatchFastPath, GRR, SUBMIT_TOKEN) as (client, calls):
        yield client, SUBMIT_TOKEN, calls


def _record(value: int = 3) -> bytes:
    protocol = local.from_config(GRR)
    return io.encode_record(protocol, protocol.privatize(np.array([value]), rng=value))


def _answer(response) -> tuple:
    """Status, body and headers, with the fresh request id and the date left out."""
    headers = [(name, b"-" if name in (b"x-request-id", b"date") else value) for name, value in response.headers.raw]
    return response.status_code, response.content, headers


def _both(client, calls, path: str, **options) -> tuple:
    """The answers of the fast path and of the whole stack (``?via=stack``) to the same request."""
    before = len(calls)
    fast = client.put(path, **options)
    assert len(calls) == before + 1, "the fast path did not serve the request"
    stack = client.put(path + "?via=stack", **options)
    assert len(calls) == before + 1, "the fast path served a request with a query string"
    return _answer(fast), _answer(stack)


def test_an_acknowledgement_is_the_same_on_both_paths(served):
    client, token, calls = served
    headers = {**BINARY, "Authorization": f"Bearer {token}", "X-Request-ID": "probe-1"}
    fast = client.put("/api/campaigns/fast/batches/" + "a" * 32, content=_record(), headers=headers)
    stack = client.put("/api/campaigns/fast/batches/" + "b" * 32 + "?via=stack", content=_record(), headers=headers)
    assert len(calls) == 1
    assert fast.status_code == stack.status_code == 200
    assert fast.headers["x-request-id"] == stack.headers["x-request-id"] == "probe-1"
    assert fast.content.replace(b"a" * 32, b"b" * 32) == stack.content
    assert _answer(fast)[2] == _answer(stack)[2]
    assert fast.json() == {"campaign": "fast", "batch_id": "a" * 32, "n_read": 1, "accepted": 1, "rejected": {},
                           "duplicate": False}
    again = client.put("/api/campaigns/fast/batches/" + "a" * 32, content=_record(), headers=headers)
    assert again.json()["duplicate"] is True and len(calls) == 2
    assert client.get("/api/campaigns/fast", headers=ADMIN).json()["n"] == 2


@pytest.mark.parametrize("case", ["no_token", "wrong_token", "unknown_campaign", "malformed", "too_large",
                                  "media_type", "bad_batch_id"])
def test_every_refusal_is_the_same_on_both_paths(served, case):
    client, token, calls = served
    authorized = {**BINARY, "Authorization": f"Bearer {token}"}
    path, options = "/api/campaigns/fast/batches/" + "c" * 32, {"content": _record(), "headers": authorized}
    if case == "no_token":
        options["headers"] = BINARY
    elif case == "wrong_token":
        options["headers"] = {**BINARY, "Authorization": "Bearer nope"}
    elif case == "unknown_campaign":
        path = "/api/campaigns/nothing/batches/" + "c" * 32
    elif case == "malformed":
        options["content"] = b"DPDIST?" + b"x" * 40
    elif case == "too_large":
        options["content"] = b"x" * (17 << 20)
    elif case == "media_type":
        options["headers"] = {**authorized, "Content-Type": "text/plain"}
    else:
        path = "/api/campaigns/fast/batches/bad%20id"
    fast, stack = _both(client, calls, path, **options)
    assert fast == stack
    assert 400 <= fast[0] < 500


def test_both_paths_are_counted_alike_in_the_metrics(served):
    client, token, calls = served
    headers = {**BINARY, "Authorization": f"Bearer {token}"}
    for index, suffix in enumerate(("", "?via=stack")):
        assert client.put(f"/api/campaigns/fast/batches/{index:032x}{suffix}", content=_record(), headers=headers).status_code == 200
        assert client.put(f"/api/campaigns/fast/batches/{index:032x}x{suffix}", content=_record(),
                          headers={**BINARY, "Authorization": "Bearer nope"}).status_code == 401
    assert len(calls) == 2
    text = client.get("/metrics", headers=ADMIN).text
    route = re.escape('route="/api/campaigns/{campaign}/batches/{batch_id}"')
    assert re.search(rf'dpdist_http_responses_total\{{method="PUT",{route},status="200"\}} 2\.0', text)
    assert re.search(rf'dpdist_http_responses_total\{{method="PUT",{route},status="401"\}} 2\.0', text)
    assert re.search(rf'dpdist_request_duration_seconds_count\{{method="PUT",{route}\}} 4\.0', text)
    assert 'dpdist_batches_total{outcome="new"} 2.0' in text and "dpdist_reports_accepted_total 2.0" in text
    assert 'dpdist_requests_refused_total{reason="unauthorized"} 2.0' in text
    assert "dpdist_requests_in_flight 1.0" in text  # the scrape itself: nothing else left in flight


def test_a_client_gone_mid_body_is_a_refusal_not_a_response_in_the_metrics(served):
    """outsider6 finding 5: an upload cut off mid-body (declared 3000 bytes, sent 1000, closed) was counted as a
    response with status 400 though none was sent.  Now, on both paths, it counts only as a refusal
    (``client_disconnected``) and in no response or latency series."""
    client, token, calls = served

    async def cut_off(query: bytes):
        path = "/api/campaigns/fast/batches/" + "d" * 32
        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
                 "method": "PUT", "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": query,
                 "root_path": "", "client": ("127.0.0.1", 50000), "server": ("testserver", 80),
                 "headers": [(b"host", b"testserver"), (b"content-type", b"application/octet-stream"),
                             (b"authorization", f"Bearer {token}".encode()), (b"content-length", b"3000")],
                 "state": dict(client.app_state)}
        messages = iter([{"type": "http.request", "body": b"\0" * 1000, "more_body": True}])
        sent = []

        async def receive():
            return next(messages, {"type": "http.disconnect"})

        async def send(message):
            sent.append(message)

        await client.app(scope, receive, send)
        return sent

    for query in (b"", b"via=stack"):
        client.portal.call(cut_off, query)
    assert len(calls) == 1
    text = client.get("/metrics", headers=ADMIN).text
    assert 'dpdist_requests_refused_total{reason="client_disconnected"} 2.0' in text
    assert 'status="400"' not in text
    route = re.escape('route="/api/campaigns/{campaign}/batches/{batch_id}"')
    assert not re.search(rf'dpdist_request_duration_seconds_count\{{method="PUT",{route}\}}', text)
    assert "dpdist_requests_in_flight 1.0" in text  # the scrape itself: nothing left in flight
