"""The usual batch's flat way (``_routes.batches.accept``) answers, counts and gives back as the general way does.

The usual batch (its open campaign cached, no enrollment, no cap, no content
coding, its whole body held by the server already) is accepted in one flat
coroutine; any other takes the general steps (``_routes.batches._general``).
A test client's ``receive`` is not uvicorn's request cycle, so its requests go
the general way unless ``body_ready`` is made to say the body is there: each
request below is sent both ways, and the answers (status, body, headers), the
metrics and what the service holds afterwards must be the same.
"""

from __future__ import annotations

import numpy as np
import pytest
from starlette.responses import JSONResponse

from dpdist import io, local
from dpdist._guard._body import CLIENT_GONE, BodyBudget
from dpdist._guard._refusals import Busy, InvalidRequest, TooLarge
from dpdist.serve._fast_batches import BatchFastPath
from dpdist.serve._group import acknowledgement
from dpdist.serve._routes import batches
from dpdist.serve._routes.batches import render_ack
from serve_support import HeldMessages, fast_path_client

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
TOKEN = "devices-of-the-usual-campaign"
AUTHORIZED = {"Content-Type": "application/octet-stream", "Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A client of the application, and the ways its batches went ("general" or "usual"), set by ``way``."""
    ways: list[str] = []
    general = batches._general

    async def counted(*args):
        ways.append("general")
        return await general(*args)

    monkeypatch.setattr(batches, "_general", counted)
    with fast_path_client(tmp_path, monkeypatch, BatchFastPath, GRR, TOKEN) as (client, _):
        warm = client.put("/api/campaigns/fast/batches/warm", content=_record(), headers=AUTHORIZED)  # admission caches it
        assert warm.status_code == 200, warm.text
        yield client, ways


def _record(value: int = 3) -> bytes:
    protocol = local.from_config(GRR)
    return io.encode_record(protocol, protocol.privatize(np.array([value]), rng=value))


def _counts(client) -> dict:
    """The request metrics and what the service holds (slots, body bytes)."""
    service, metrics = client.app.state.service, client.app.state.metrics._requests
    return {"refused": {code: child[0] for code, child in metrics.refused.items()},
            "batches": {outcome: child[0] for outcome, child in metrics.batches.items()},
            "reports": metrics.reports[0], "queued": service.queued, "in_flight": service.budget.in_flight,
            "addresses": service.budget.addresses()}


def _send(client, monkeypatch, ways, usual: bool, batch_id: str, **options):
    """One request, the usual way forced (``usual``: the body said held) or the general way; its answer (request id
    and date left out, the batch id written as ``<id>``) and the way it went."""
    monkeypatch.setattr(batches, "body_ready", lambda receive: usual)
    before = len(ways)
    response = client.put(f"/api/campaigns/fast/batches/{batch_id}", **options)
    headers = [(name, b"-" if name in (b"x-request-id", b"date") else value) for name, value in response.headers.raw]
    way = "general" if len(ways) > before else "usual"
    return (response.status_code, response.content.replace(batch_id.encode(), b"<id>"), headers), way


def _both(client, monkeypatch, ways, ids: tuple, **options):
    """The same request the usual way and the general way (under the batch ids ``ids``): answers, ways, count changes."""
    start = _counts(client)
    usual, usual_way = _send(client, monkeypatch, ways, True, ids[0], **options)
    middle = _counts(client)
    general, general_way = _send(client, monkeypatch, ways, False, ids[1], **options)
    end = _counts(client)
    return (usual, general), (usual_way, general_way), (_changes(start, middle), _changes(middle, end)), end


def _changes(before: dict, after: dict) -> dict:
    return {key: ({name: value - before[key].get(name, 0) for name, value in after[key].items()}
                  if isinstance(after[key], dict) else after[key] - before[key]) for key in after}


@pytest.mark.parametrize("case", ["new", "bad_batch_id", "media_type", "malformed", "empty", "over_share", "no_token",
                                  "content_coding"])
def test_the_usual_way_answers_and_counts_as_the_general_way(served, monkeypatch, case):
    client, ways = served
    ids, options = ("a" * 32, "b" * 32), {"content": _record(), "headers": AUTHORIZED}
    usual_way = "usual"
    if case == "bad_batch_id":
        ids = ("bad!a", "bad!b")
    elif case == "media_type":
        options["headers"] = {**AUTHORIZED, "Content-Type": "text/plain"}
    elif case == "malformed":
        options["content"] = b"not a record"
    elif case == "empty":
        options["content"] = b""
    elif case == "over_share":
        client.app.state.service.budget.share = 8  # a body of more bytes than an address may hold
    elif case == "no_token":
        options["headers"], usual_way = {"Content-Type": "application/octet-stream"}, "general"  # not admitted from the cache
    elif case == "content_coding":
        options["headers"], usual_way = {**AUTHORIZED, "Content-Encoding": "gzip"}, "general"
    (usual, general), taken, (first, second), end = _both(client, monkeypatch, ways, ids, **options)
    assert taken == (usual_way, "general")
    assert usual == general
    assert first == second
    assert (end["queued"], end["in_flight"], end["addresses"]) == (0, 0, 0)


def test_a_duplicate_is_acknowledged_alike_both_ways(served, monkeypatch):
    client, ways = served
    options = {"content": _record(), "headers": AUTHORIZED}
    for batch_id in ("c" * 32, "d" * 32):  # counted once
        assert _send(client, monkeypatch, ways, False, batch_id, **options)[0][0] == 200
    (usual, general), taken, (first, second), _ = _both(client, monkeypatch, ways, ("c" * 32, "d" * 32), **options)
    assert taken == ("usual", "general")
    assert usual == general and b'"duplicate":true' in usual[1]
    assert first == second == {**first, "batches": {"new": 0.0, "duplicate": 1.0}}


def _accept(client, messages, length: str, batch_id: str):
    """:func:`batches.accept` of a batch whose body comes as ``messages`` (held already), from a test client's loop."""
    service = client.app.state.service

    async def run():
        return await batches.accept(service, "fast", batch_id, TOKEN, "10.1.2.3", "application/octet-stream", length,
                                    HeldMessages(messages).receive)

    return client.portal.call(run)


def test_a_body_not_whole_in_its_first_message_is_read_on_within_its_bounds(served):
    client, _ = served
    record = _record(5)
    chunks = [{"type": "http.request", "body": record[:10], "more_body": True},
              {"type": "http.request", "body": record[10:], "more_body": False}]
    ack = _accept(client, chunks, str(len(record)), "e" * 32)
    assert (ack["accepted"], ack["duplicate"]) == (1, False)
    service = client.app.state.service
    with pytest.raises(InvalidRequest) as gone:  # the client went away mid-body: refused, nothing held
        _accept(client, [{"type": "http.disconnect"}], str(len(record)), "f" * 32)
    assert gone.value.code == CLIENT_GONE
    service.max_body_bytes = 16  # a body longer than it said (and than the limit): refused as too large
    with pytest.raises(TooLarge):
        _accept(client, [{"type": "http.request", "body": record, "more_body": False}], "16", "0" * 32)
    assert (service.queued, service.budget.in_flight, service.budget.addresses()) == (0, 0, 0)


def test_a_declared_length_past_the_body_memory_is_refused_before_anything_is_held(served):
    client, _ = served
    service = client.app.state.service
    service.budget = BodyBudget(64)
    record = _record(6)
    with pytest.raises(Busy):  # more than the pool, as declared and as sent
        _accept(client, [{"type": "http.request", "body": record + b"x" * 64, "more_body": False}],
                str(len(record) + 64), "1" * 32)
    assert (service.queued, service.budget.in_flight, service.budget.peak) == (0, 0, 0)


@pytest.mark.parametrize("ack", [
    ("c-1", "ab" * 16, 1, 1, {}, False),
    ("c", "0123456789abcdef0123456789abcdef", 10000, 9998, {"out_of_range": 2}, False),
    ("é\"q\\u\u2028\x01", "x\ty", 3, 0, {}, True),
    ("c", "b", 0, 0, {"wrong_shape": 1, "missing": 4}, True),
], ids=["plain", "rejected", "escapes", "duplicate-rejected"])
def test_the_acknowledgement_is_rendered_as_json_response_renders_it(ack):
    campaign, batch_id, n_read, accepted, rejected, duplicate = ack
    document = acknowledgement(campaign, batch_id, n_read, accepted, rejected, duplicate=duplicate)
    assert render_ack(document) == JSONResponse(document).body
    assert render_ack({**document, "extra": 1}) == JSONResponse({**document, "extra": 1}).body  # another shape: the encoder
