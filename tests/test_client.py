"""A 429/503 answer's Retry-After is honoured, with jitter; backoff is jittered too."""

import email.utils
import time

import httpx
import pytest

from dpdist.serve import client as client_module
from dpdist.client import Client, retry_after, retry_delay
from dpdist.errors import ServiceRefusedError, ServiceUnavailableError
from dpdist.errors import InvalidParameterError


def _client_with(responses, monkeypatch):
    slept = []
    monkeypatch.setattr(client_module.time, "sleep", slept.append)
    answers = iter(responses)
    transport = httpx.MockTransport(lambda request: next(answers))
    return Client("http://127.0.0.1:9", retries=3, backoff=0.25, transport=transport), slept


def test_retry_after_is_honoured_never_earlier_and_jittered_later(monkeypatch):
    ok = httpx.Response(200, json={"campaign": "c", "config": {}})
    client, slept = _client_with([httpx.Response(503, headers={"Retry-After": "2"}), httpx.Response(429, headers={"Retry-After": "1"}), ok], monkeypatch)
    assert client.config("c")["campaign"] == "c"
    assert 2.0 <= slept[0] <= 3.0 and 1.0 <= slept[1] <= 1.5


def test_without_retry_after_the_backoff_is_jittered_over_its_upper_half(monkeypatch):
    client, slept = _client_with([httpx.Response(502), httpx.Response(502), httpx.Response(200, json={})], monkeypatch)
    client.config("c")
    assert 0.125 <= slept[0] <= 0.25 and 0.25 <= slept[1] <= 0.5


def test_retry_after_forms():
    assert retry_after("7") == 7.0 and retry_after(None) is None and retry_after("soon") is None
    assert retry_after("100000") == client_module.MAX_RETRY_AFTER
    later = email.utils.formatdate(time.time() + 5, usegmt=True)
    assert 3.0 <= retry_after(later) <= 5.0
    delays = {round(retry_delay(1.0, None), 6) for _ in range(50)}
    assert len(delays) > 40 and all(0.5 <= d <= 1.0 for d in delays)  # clients refused together spread out
    assert all(4.0 <= retry_delay(1.0, 4.0) <= 6.0 for _ in range(50))


def _refusing(monkeypatch, answers=()):
    """A client whose server answers ``answers`` first, then refuses every connection; the pauses it took."""
    slept, calls = [], []
    monkeypatch.setattr(client_module.time, "sleep", slept.append)
    queue = list(answers)

    def handler(request):
        calls.append(request.url.path)
        if queue:
            return queue.pop(0)
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    return Client("http://127.0.0.1:9", retries=8, transport=httpx.MockTransport(handler)), slept, calls


def test_a_server_that_never_answered_is_reported_down_within_a_stated_bound(monkeypatch):
    """A down server took 33 s (9 attempts over the whole schedule) to be reported."""
    client, slept, calls = _refusing(monkeypatch)
    told = []
    client.on_retry = lambda failure, attempt, wait, remaining: told.append((failure, attempt, remaining))
    with pytest.raises(ServiceUnavailableError, match=r"could not connect to http://127.0.0.1:9 .*Connection refused.* "
                                                      r"in 5 attempt\(s\) over \d\.\d s; is the server running there\?"):
        client.config("c")
    assert len(calls) == 5 and sum(slept) <= client_module.DOWN_AFTER
    assert told[0] == ("ConnectError: [Errno 111] Connection refused", 1, 4)  # said at the first failure, with the bound
    assert sum(client_module.retry_schedule(4)) <= client_module.DOWN_AFTER < sum(client_module.retry_schedule(5))


def test_a_server_that_answered_before_is_retried_the_whole_schedule(monkeypatch):
    client, slept, calls = _refusing(monkeypatch, [httpx.Response(200, json={"campaign": "c"})])
    client.config("c")  # it answered: a refused connection now is a restart
    with pytest.raises(ServiceUnavailableError, match=r"failed after 9 attempt\(s\): ConnectError"):
        client.config("c")
    assert len(calls) == 1 + 9 and len(slept) == 8


def test_a_closed_port_is_a_refused_connection(monkeypatch):
    import socket

    slept = []
    monkeypatch.setattr(client_module.time, "sleep", slept.append)
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    with Client(f"http://127.0.0.1:{port}", retries=8) as client, pytest.raises(ServiceUnavailableError, match="could not connect"):
        client.config("c")
    assert len(slept) == 4 and time.monotonic() - started < 2.0  # pauses not taken here (patched)


def test_campaign_changed_is_sent_again_and_other_conflicts_are_not(monkeypatch):
    """outsider5 F4: 409 ``campaign_changed`` (the campaign was created again while the batch was checked; nothing of it
    counted) says to send the batch again: the same batch id and bytes are; ``campaign_full`` is a final answer."""
    seen = []
    monkeypatch.setattr(client_module.time, "sleep", lambda seconds: None)
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
