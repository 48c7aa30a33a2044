"""The per-request path at the durable floor (issue 61.1): what was made cheaper answers, counts and refuses as before.

* the acknowledgement rendered without the encoder's walk is what ``JSONResponse`` renders, byte for byte;
* a log row or part is still validated once when read or folded: a corrupt one is refused, never counted;
* a body that came whole in one message is held against the body memory and given back as before;
* a server process freezes its startup heap (:mod:`dpdist.serve._heap`).
"""

from __future__ import annotations

import asyncio
import gc

import numpy as np
import pytest

pytest.importorskip("starlette")

from dpdist import local  # noqa: E402
from dpdist.errors import IncompatibleStateError  # noqa: E402

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}


@pytest.mark.parametrize("ack", [
    ("c-1", "ab" * 16, 1, 1, {}, False),
    ("c", "0123456789abcdef0123456789abcdef", 10000, 9998, {"out_of_range": 2}, False),
    ("é\"q\\u\u2028\x01", "x\ty", 3, 0, {}, True),
    ("c", "b", 0, 0, {"wrong_shape": 1, "missing": 4}, True),
], ids=["plain", "rejected", "escapes", "duplicate-rejected"])
def test_the_acknowledgement_is_rendered_as_json_response_renders_it(ack):
    from starlette.responses import JSONResponse

    from dpdist.serve._fast_batches import render_ack
    from dpdist.serve._group import acknowledgement

    campaign, batch_id, n_read, accepted, rejected, duplicate = ack
    document = acknowledgement(campaign, batch_id, n_read, accepted, rejected, duplicate=duplicate)
    assert render_ack(document) == JSONResponse(document).body
    assert render_ack({**document, "extra": 1}) == JSONResponse({**document, "extra": 1}).body  # another shape: the encoder


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


class _Ready:
    """uvicorn's request cycle as :func:`dpdist._guard._body._ready` sees it: the body's message already there."""

    def __init__(self, messages):
        self.messages = list(messages)
        self.message_event = asyncio.Event()
        self.message_event.set()

    async def receive(self):
        return self.messages.pop(0)


def _read(messages, budget, *, length=None, max_body_bytes=1 << 20, host="10.0.0.1"):
    from dpdist._guard._body import receive_body
    from dpdist.serve._limits import Limits

    async def run():
        async with receive_body(length, _Ready(messages).receive, Limits(), budget, max_body_bytes, host=host) as body:
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


def test_a_server_process_freezes_its_startup_heap():
    from dpdist.serve._heap import freeze_startup_heap

    try:
        assert freeze_startup_heap() > 0 and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_command_line_and_the_workers_mark_their_application_as_a_server_process():
    import inspect

    from dpdist.cli import _serve
    from dpdist.serve import _workers

    assert "app.state.freeze_heap = True" in inspect.getsource(_serve)
    assert "app.state.freeze_heap = True" in inspect.getsource(_workers.worker_app)
