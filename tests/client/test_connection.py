"""The clients' one connection (dpdist.client._connection): a failed request sent again within its window, a 429/503
answer's Retry-After honoured with jitter, backoff jittered too, the bad arguments of every client named."""

import email.utils
import time

import httpx
import pytest

from dpdist.client import _connection
from dpdist.client import MAX_RETRY_AFTER, Client, retry_after, retry_delay
from dpdist.errors import ServiceRefusedError, ServiceUnavailableError
from dpdist.errors import InvalidParameterError


def _client_with(responses, monkeypatch):
    slept = []
    monkeypatch.setattr(_connection.time, "sleep", slept.append)
    answers = iter(responses)
    transport = httpx.MockTransport(lambda request: next(answers))
    return Client("http://127.0.0.1:9", retries=3, backoff=0.25, transport=transport), slept


def test_retry_after_is_honoured_never_earlier_and_jittered_later(monkeypatch):
    ok = httpx.Response(200, json={"campaign": "c", "config": {}})
    client, slept = _client_with([httpx.Response(503, headers={"Retry-After": "2"}), httpx.Response(429, headers={"Retry-After": "1"}), ok], monkeypatch)
    assert client.config("c")["campaign"] == "c"
    assert 2.0 <= slept[0] <= 3.0 and 1.0 <= slept[1] <= 1.5


def test_without_retry_after_the_backoff_is_jittered_over_its_upper_half(monkeypatch):
    client, slept = _client_with([httpx.Response(502), httpx.Response(502), httpx.Response(200, json={"config": {}})], monkeypatch)
    client.config("c")
    assert 0.125 <= slept[0] <= 0.25 and 0.25 <= slept[1] <= 0.5


def test_retry_after_forms():
    assert retry_after("7") == 7.0 and retry_after(None) is None and retry_after("soon") is None
    assert retry_after("100000") == MAX_RETRY_AFTER
    later = email.utils.formatdate(time.time() + 5, usegmt=True)
    assert 3.0 <= retry_after(later) <= 5.0
    delays = {round(retry_delay(1.0, None), 6) for _ in range(50)}
    assert len(delays) > 40 and all(0.5 <= d <= 1.0 for d in delays)  # clients refused together spread out
    assert all(4.0 <= retry_delay(1.0, 4.0) <= 6.0 for _ in range(50))


def _refusing(monkeypatch, answers=(), **options):
    """A client whose server answers ``answers`` first, then refuses every connection; the pauses it took (on a clock
    that the pauses move, not the machine's)."""
    from dpdist._http import _retry

    slept, calls, now = [], [], [1000.0]

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(_connection.time, "sleep", sleep)
    monkeypatch.setattr(_retry.time, "monotonic", lambda: now[0])
    queue = list(answers)

    def handler(request):
        calls.append(request.url.path)
        if queue:
            return queue.pop(0)
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    return Client("http://127.0.0.1:9", transport=httpx.MockTransport(handler), **options), slept, calls


def test_a_refused_connection_is_retried_for_the_whole_window_then_says_how_to_resume(monkeypatch):
    """A fresh client gave up after 4 s of refused connections (a restart under load takes longer);
    now it sends the request again for the whole retry window (default 300 s), pauses doubling to 10 s, and its last
    attempt comes at the window's end; the error says how long it tried and how to resume."""
    from dpdist._http._retry import DEFAULT_RETRY_WINDOW_S, MAX_BACKOFF_S

    client, slept, calls = _refusing(monkeypatch)
    told = []
    client.on_retry = lambda failure, attempt, wait, remaining: told.append((failure, attempt, remaining))
    with pytest.raises(ServiceUnavailableError, match=r"ConnectError.*Connection refused, after \d+ attempt\(s\) over "
                                                      r"300\.0 s \(retried for up to 5 min: retry_window.*send it again later "
                                                      r"\(dpdist submit: the same command resumes"):
        client.config("c")
    assert sum(slept) == pytest.approx(DEFAULT_RETRY_WINDOW_S) and max(slept) <= MAX_BACKOFF_S
    assert len(calls) == len(slept) + 1 >= 30  # 0.25 s doubling to 10 s, jittered over the upper half: about 35
    assert told[0][:2] == ("ConnectError: [Errno 111] Connection refused", 1) and told[0][2] >= 30


def test_a_server_back_within_the_window_answers_the_same_request(monkeypatch):
    answer = httpx.Response(200, json={"campaign": "c", "config": {}})  # a config document has its config
    client, slept, calls = _refusing(monkeypatch)
    refused = [0]
    original = client._http._transport.handler

    def restarting(request):  # refuses for about 40 s (a restart under load), then answers
        if sum(slept) < 40:
            refused[0] += 1
            return original(request)
        calls.append(request.url.path)
        return answer

    client._http._transport.handler = restarting
    assert client.config("c")["campaign"] == "c" and refused[0] >= 5 and 40 <= sum(slept) <= 50


def test_the_window_and_the_count_both_bound_the_retries(monkeypatch):
    client, slept, calls = _refusing(monkeypatch, retries=3)
    with pytest.raises(ServiceUnavailableError, match=r"after 4 attempt\(s\)"):
        client.config("c")
    assert len(calls) == 4 and len(slept) == 3
    client, slept, calls = _refusing(monkeypatch, retry_window=20.0)
    with pytest.raises(ServiceUnavailableError, match=r"over 20\.0 s"):
        client.config("c")
    assert sum(slept) == pytest.approx(20.0)
    client, slept, calls = _refusing(monkeypatch, retry_window=0)
    with pytest.raises(ServiceUnavailableError, match=r"after 1 attempt\(s\)"):
        client.config("c")
    assert slept == []


def test_a_retry_after_past_the_window_ends_it_without_waiting(monkeypatch):
    client, slept, calls = _refusing(monkeypatch, [httpx.Response(503, headers={"Retry-After": "30"})], retry_window=10.0)
    with pytest.raises(ServiceUnavailableError, match="HTTP 503"):
        client.config("c")
    assert slept == [] and len(calls) == 1  # never earlier than asked, and not past the window


def test_a_closed_port_is_a_refused_connection(monkeypatch):
    import socket

    slept = []
    monkeypatch.setattr(_connection.time, "sleep", slept.append)
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with Client(f"http://127.0.0.1:{port}", retries=4) as client, pytest.raises(ServiceUnavailableError,
                                                                              match="ConnectError"):
        client.config("c")
    assert len(slept) == 4  # pauses not taken here (patched)


def test_campaign_changed_is_sent_again_and_other_conflicts_are_not(monkeypatch):
    """409 ``campaign_changed`` (the campaign was created again while the batch was checked; nothing of it
    counted) says to send the batch again: the same batch id and bytes are; ``campaign_full`` is a final answer."""
    seen = []
    monkeypatch.setattr(_connection.time, "sleep", lambda seconds: None)
    ack = {"campaign": "c", "batch_id": "b", "n_read": 1, "accepted": 1, "rejected": {}, "duplicate": False}
    answers = [httpx.Response(409, json={"error": "campaign_changed", "detail": "created again"}), httpx.Response(200, json=ack),
               httpx.Response(409, json={"error": "campaign_full", "detail": "full"})]

    def handler(request):
        seen.append((request.url.path, request.content))
        return answers.pop(0)

    with Client("http://127.0.0.1:9", retries=3, transport=httpx.MockTransport(handler)) as client:
        assert client.submit_body("c", "b", b"the batch")["accepted"] == 1
        assert len(seen) == 2 and len(set(seen)) == 1
        with pytest.raises(ServiceRefusedError, match="campaign_full") as refused:
            client.submit_body("c", "b2", b"another")
    assert refused.value.status == 409 and len(seen) == 3


def test_the_client_reports_each_retry_to_on_retry():
    import httpx

    from dpdist.client import Client

    answers = iter([503, 503, 200])
    seen = []

    def handler(request):
        status = next(answers)
        return httpx.Response(status, json={"campaign": "c", "config": {}} if status == 200 else {"error": "busy"})

    with Client("http://service.test", retries=3, backoff=0.0, transport=httpx.MockTransport(handler),
                on_retry=lambda *args: seen.append(args)) as client:
        client.config("c")
    assert [(failure, attempt, remaining) for failure, attempt, _, remaining in seen] == [("HTTP 503", 1, 3), ("HTTP 503", 2, 2)]


def _service_calls(tmp_path):
    pytest.importorskip("starlette")
    from dpdist import budget, client, issuer, relay
    from dpdist.privacy import PrivacyGuarantee

    session = budget.BudgetSession(epsilon=1.0)
    return [
        (lambda: client.Client("http://127.0.0.1:1", backoff="fast"), "backoff"),
        (lambda: client.Client("http://127.0.0.1:1", pins=["c"]), "pins"),
        (lambda: client.Client("http://127.0.0.1:1", retries=True), "retries"),
        (lambda: client.Client("http://127.0.0.1:1", timeout=-1), "timeout"),
        (lambda: client.Client("http://127.0.0.1:1", on_retry=3), "on_retry"),
        (lambda: issuer.create_app(str(tmp_path / "i.sqlite"), name="issuer.example", admin_token="t" * 32,
                                   cors_origins=3), "cors_origins"),
        (lambda: relay.create_app(str(tmp_path / "r.sqlite"), collector="http://127.0.0.1:1", relay_token="t" * 32,
                                  min_batch=2, max_batch=10, limits={"rate_limit": 1}), "limits"),
        (lambda: session.charge_parallel(PrivacyGuarantee(0.1, 0.0, "replace", "central")), "guarantees"),
        (lambda: budget.BudgetSession.create(None, epsilon=1.0), "path"),
        (lambda: budget.BudgetSession.create(tmp_path / "missing" / "b.json", epsilon=1.0), "path"),
        (lambda: budget.BudgetSession.open(tmp_path), "path"),
    ]


def test_client_servers_and_budget_files_name_a_bad_argument(tmp_path):
    for call, argument in _service_calls(tmp_path):
        with pytest.raises(InvalidParameterError, match=rf"'{argument}'"):
            call()


def _answering_with(errors, monkeypatch, **options):
    """A client whose every attempt ends in the next of ``errors`` (an exception to raise, or a response); its attempts."""
    monkeypatch.setattr(_connection.time, "sleep", lambda seconds: None)
    queue, asked = list(errors), []

    def handler(request):
        asked.append(request.url.path)
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    return Client("http://127.0.0.1:9", transport=httpx.MockTransport(handler), **options), asked


def test_a_server_that_always_breaks_http_is_not_waited_for_over_the_whole_retry_window(monkeypatch):
    """``Transfer-Encoding: gzip, chunked`` (h11: "Only Transfer-Encoding: chunked is supported") was
    retried as a network error for the whole 5-minute window; three such answers in a row end the request."""
    broken = httpx.RemoteProtocolError("Only Transfer-Encoding: chunked is supported")
    client, asked = _answering_with([broken], monkeypatch, retries=20, retry_window=3600)
    with client, pytest.raises(ServiceUnavailableError) as error:
        client.submit_body("c", "batch-1", b"the batch's bytes")
    assert len(asked) == _connection.MALFORMED_IN_A_ROW == 3
    message = str(error.value)
    assert "Only Transfer-Encoding: chunked is supported (3 answers in a row that break HTTP/1.1" in message, message
    assert "counts it once" in message and "\n" not in message  # not acknowledged: sent again later, counted once


def test_a_proxys_garbage_once_and_a_closed_connection_are_still_retried(monkeypatch):
    broken = httpx.RemoteProtocolError("illegal status line: bytearray(b'garbage')")
    closed = httpx.RemoteProtocolError("Server disconnected without sending a response.")
    ok = httpx.Response(200, json={"campaign": "c", "config": {}})
    client, asked = _answering_with([broken, broken, closed, broken, broken, ok], monkeypatch, retries=10)
    with client:
        assert client.config("c")["campaign"] == "c"
    assert len(asked) == 6
    client, asked = _answering_with([closed], monkeypatch, retries=6, retry_window=3600)
    with client, pytest.raises(ServiceUnavailableError):
        client.config("c")
    assert len(asked) == 7  # a connection closed is a network failure: every retry is taken


def test_a_retry_after_past_the_window_is_said_when_the_client_gives_up(monkeypatch):
    """A 503 asking to wait longer than the window ended the request at once (right: it is not cut short)
    with "after 1 attempt(s) over 0.0 s (retried for up to 5 s...)", not saying why no retry was made."""
    slept = []
    monkeypatch.setattr(_connection.time, "sleep", slept.append)
    transport = httpx.MockTransport(lambda request: httpx.Response(503, headers={"Retry-After": "3600"}))
    client = Client("http://127.0.0.1:9", retry_window=5, transport=transport)
    with pytest.raises(ServiceUnavailableError, match=r"HTTP 503 \(it asked to be sent again in 60 s, past the retry window\)"):
        client.config("c")
    assert slept == []
    counted = Client("http://127.0.0.1:9", retries=0, retry_window=5, transport=transport)  # the count spent: not said
    with pytest.raises(ServiceUnavailableError) as refused:
        counted.config("c")
    assert "past the retry window" not in str(refused.value)
