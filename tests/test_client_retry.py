"""Issue 28, item 3 (clients): a 429/503 answer's Retry-After is honoured, with jitter; backoff is jittered too."""

import email.utils
import time

import httpx
import pytest

from dpdist.serve import client as client_module
from dpdist.client import Client, retry_after, retry_delay


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
