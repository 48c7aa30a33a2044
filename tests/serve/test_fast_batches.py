"""The devices' batch route served by one ASGI layer (``_fast_batches``) answers byte for byte as the whole stack does.

A request with a query string that holds no token goes through every middleware
and Starlette's route (the fast path leaves it to them), the same request
without one through :class:`~dpdist.serve._fast_batches.BatchFastPath`: status,
body and headers (names, values, order) must be equal, for an acknowledgement and
for each kind of refusal, and both must be counted alike in the metrics.
"""

from __future__ import annotations

import asyncio
import re

import numpy as np
import pytest

from dpdist import io, local
from dpdist.errors import IncompatibleStateError
from dpdist.serve._fast_batches import BatchFastPath
from serve_support import ADMIN_TOKEN, HeldMessages, fast_path_client

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
    headers = {**BINARY, "Authorization": f"Bearer {token}", "X-Request-ID": token}
    fast = client.put("/api/campaigns/fast/batches/" + "a" * 32, content=_record(), headers=headers)
    stack = client.put("/api/campaigns/fast/batches/" + "b" * 32 + "?via=stack", content=_record(), headers=headers)
    assert len(calls) == 1
    assert fast.status_code == stack.status_code == 200
    assert re.fullmatch("[0-9a-f]{32}", fast.headers["x-request-id"]) and re.fullmatch("[0-9a-f]{32}", stack.headers["x-request-id"])
    assert fast.headers["x-request-id"] != stack.headers["x-request-id"]  # each the server's own, not the client's
    assert fast.content.replace(b"a" * 32, b"b" * 32) == stack.content
    assert _answer(fast)[2] == _answer(stack)[2]
    assert fast.json() == {"campaign": "fast", "batch_id": "a" * 32, "n_read": 1, "accepted": 1, "rejected": {},
                           "duplicate": False}
    again = client.put("/api/campaigns/fast/batches/" + "a" * 32, content=_record(), headers=headers)
    assert again.json()["duplicate"] is True and len(calls) == 2
    assert client.get("/api/campaigns/fast", headers=ADMIN).json()["n"] == 2


@pytest.mark.parametrize("case", ["no_token", "wrong_token", "unknown_campaign", "malformed", "too_large",
                                  "media_type", "content_coding", "bad_batch_id"])
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
    elif case == "content_coding":
        options["headers"] = {**authorized, "Content-Encoding": "gzip"}
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


def _upload_scope(client, token: str, query: bytes, batch_id: str) -> dict:
    """The ASGI scope of a PUT of batch ``batch_id`` to campaign ``fast`` declaring a 3000-byte body."""
    path = "/api/campaigns/fast/batches/" + batch_id
    return {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
            "method": "PUT", "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": query,
            "root_path": "", "client": ("127.0.0.1", 50000), "server": ("testserver", 80),
            "headers": [(b"host", b"testserver"), (b"content-type", b"application/octet-stream"),
                        (b"authorization", f"Bearer {token}".encode()), (b"content-length", b"3000")],
            "state": dict(client.app_state)}


def test_a_client_gone_mid_body_is_a_refusal_not_a_response_in_the_metrics(served):
    """An upload cut off mid-body (declared 3000 bytes, sent 1000, closed) was counted as a
    response with status 400 though none was sent.  Now, on both paths, it counts only as a refusal
    (``client_disconnected``) and in no response or latency series."""
    client, token, calls = served

    async def cut_off(query: bytes):
        scope = _upload_scope(client, token, query, "d" * 32)
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


def test_a_batch_cut_short_by_the_shutdown_is_answered_503_alike_on_both_paths(served):
    """Once --graceful-timeout is up, uvicorn's shutdown cancels the requests still running (``task.cancel``); one
    waiting for its body got uvicorn's plain 500.  Now, on both paths, 503 shutting_down with Retry-After and the same
    headers (dpdist._guard._shutdown), counted as a refusal and as a 503 response."""
    client, token, calls = served

    async def cut_short(query: bytes):
        scope = _upload_scope(client, token, query, "e" * 32)
        reading, sent = asyncio.Event(), []

        async def receive():
            reading.set()
            await asyncio.Event().wait()  # the body does not come

        async def send(message):
            sent.append(message)

        task = asyncio.ensure_future(client.app(scope, receive, send))
        await asyncio.wait_for(reading.wait(), 10)
        task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")  # as uvicorn's shutdown does
        await asyncio.wait([task], timeout=10)
        assert task.done() and not task.cancelled()  # it ended at once, answered
        return sent

    answers = [client.portal.call(cut_short, query) for query in (b"", b"via=stack")]
    assert len(calls) == 1
    for sent in answers:
        assert [message["type"] for message in sent] == ["http.response.start", "http.response.body"]
        assert sent[0]["status"] == 503 and dict(sent[0]["headers"])[b"retry-after"] == b"5"
        assert b'"error":"shutting_down"' in sent[1]["body"]
    fast, stack = ([(name, b"-" if name == b"x-request-id" else value) for name, value in sent[0]["headers"]]
                   for sent in answers)
    assert fast == stack and answers[0][1]["body"] == answers[1][1]["body"]
    text = client.get("/metrics", headers=ADMIN).text
    assert 'dpdist_requests_refused_total{reason="shutting_down"} 2.0' in text
    route = re.escape('route="/api/campaigns/{campaign}/batches/{batch_id}"')
    assert re.search(rf'dpdist_http_responses_total\{{method="PUT",{route},status="503"\}} 2\.0', text)
    assert "dpdist_requests_in_flight 1.0" in text  # the scrape itself: nothing left in flight


def test_an_unexpected_error_is_the_same_logged_json_500_on_both_paths(served, monkeypatch, caplog):
    """An error no refusal names, raised in the fast path, reaches Starlette's error layer as it does from the route:
    the JSON 500 without a traceback, logged with the error, counted as a 500 on both paths."""
    import logging
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    client, token, calls = served
    service = client.app.state.service

    async def broken(*args, **kwargs):
        raise RuntimeError("secret internals /etc/passwd")

    monkeypatch.setattr(service, "submit", broken)
    quiet = TestClient(client.app, raise_server_exceptions=False)
    headers = {**BINARY, "Authorization": f"Bearer {token}"}
    with caplog.at_level(logging.ERROR, logger="dpdist"):
        fast, stack = _both(quiet, calls, "/api/campaigns/fast/batches/" + "f" * 32, content=_record(), headers=headers)
    assert fast == stack and fast[0] == 500, (fast, stack)
    assert fast[1] == b'{"error":"internal","detail":"internal server error"}'
    logged = [record for record in caplog.records if record.getMessage().startswith("internal error on PUT")]
    assert len(logged) == 2 and all("secret internals" in repr(record.exc_info[1]) for record in logged)
    text = client.get("/metrics", headers=ADMIN).text
    route = re.escape('route="/api/campaigns/{campaign}/batches/{batch_id}"')
    assert re.search(rf'dpdist_http_responses_total\{{method="PUT",{route},status="500"\}} 2\.0', text)


# ---------------------------------------------------------------------- the path at the durable floor
# what was made cheaper answers, counts and refuses as before: a corrupt log row refused when read and folded (each
# stored piece validated once), a body in one message held and given back


def _store(tmp_path):
    from dpdist.serve._database import open_database
    from dpdist.serve._store import Store

    store = Store(open_database(str(tmp_path / "c.sqlite")))
    store.create("c", GRR)
    store.transition("c", "open")
    return store


def _corrupt_log_row(store, writer: int) -> None:
    """A log row claiming one report that adds 2 to an item: no GRR report does (each adds exactly 1)."""
    from dpdist.serve._deltas import encode_delta

    with store.db.transaction():
        store.db.execute(
            "INSERT INTO ingest_log (campaign_id, writer, minute_ms, n, statistic, rejected, refused, refusals, batches)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ("c", writer, 0, 1, encode_delta(np.array([2, 0, 0, 0, 0, 0, 0, 0], np.int64)), "{}", "{}", 0, 1))


def test_a_corrupt_log_row_is_refused_when_read_and_when_folded_and_never_counted(tmp_path):
    store = _store(tmp_path)
    protocol = local.from_config(GRR)
    reports = protocol.privatize(np.arange(8), rng=1)
    store.ingest("c", "b1", "0" * 64, protocol.validate_reports(reports))
    assert store.get("c", statistic=True).n == 8
    _corrupt_log_row(store, store.writer)
    with pytest.raises(IncompatibleStateError, match="corrupt"):
        store.get("c", statistic=True)
    with pytest.raises(IncompatibleStateError, match="corrupt"):
        store.fold("c")
    rows = store.db.execute("SELECT COUNT(*) FROM ingest_log WHERE campaign_id = ?", ("c",))
    assert rows[0][0] == 2  # the fold was rolled back: both rows stay in the log, nothing was added to a part
    store.db.close()


def test_a_fold_of_valid_rows_adds_exactly_what_was_logged(tmp_path):
    store = _store(tmp_path)
    protocol = local.from_config(GRR)
    expected = protocol.aggregator()
    for k in range(30):
        reports = protocol.privatize(np.arange(k % 5 + 1), rng=k)
        expected.add(reports)
        store.ingest("c", f"b{k}", "0" * 64, protocol.validate_reports(reports))
    assert store.fold("c") == 30
    assert store.get("c", statistic=True).aggregator() == expected
    store.db.close()


def _read(messages, budget, *, length=None, max_body_bytes=1 << 20, host="10.0.0.1"):
    from dpdist._guard._body import receive_body
    from dpdist.serve._limits import Limits

    async def run():
        async with receive_body(length, HeldMessages(messages).receive, Limits(), budget, max_body_bytes, host=host) as body:
            return body, budget.in_flight, budget.held_by(host)

    return asyncio.run(run())


def test_a_body_in_one_message_is_held_while_read_and_given_back():
    from dpdist._guard._body import BodyBudget

    budget = BodyBudget(1 << 20)
    body, held, by_address = _read([{"type": "http.request", "body": b"x" * 100, "more_body": False}], budget, length="100")
    assert (body, held, by_address) == (b"x" * 100, 100, 100)
    assert budget.in_flight == 0 and budget.addresses() == 0 and budget.peak == 100
    assert _read([{"type": "http.request", "body": b"", "more_body": False}], budget)[0] == b""
    chunks = [{"type": "http.request", "body": b"ab", "more_body": True}, {"type": "http.request", "body": b"cd"}]
    assert _read(chunks, budget)[:2] == (b"abcd", 4)  # the first message is not the whole body: read on as before


def test_a_body_in_one_message_past_a_share_or_the_size_limit_is_refused_as_before():
    from dpdist._guard._body import BodyBudget
    from dpdist._guard._refusals import Busy, TooLarge

    budget = BodyBudget(1 << 20, share=50)
    with pytest.raises(Busy):  # no Content-Length: refused when the message came, nothing held
        _read([{"type": "http.request", "body": b"x" * 100, "more_body": False}], budget)
    assert budget.in_flight == 0 and budget.peak == 0
    with pytest.raises(TooLarge):  # larger than --max-body-bytes without a Content-Length: the loop refuses it
        _read([{"type": "http.request", "body": b"x" * 100, "more_body": False}], BodyBudget(1 << 20), max_body_bytes=64)

