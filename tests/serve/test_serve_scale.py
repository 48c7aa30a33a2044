"""``dpdist serve`` at population scale: group commits, the log of changes, workers (backpressure: test_backpressure.py).

The crash guarantees under one report per request (SIGKILLs with one and two
workers) are in ``tests/serve/test_serve_crash.py``; the numbers in
``benchmarks/bench_serve.py``.
"""

from __future__ import annotations

import concurrent.futures
import json
import time
import uuid

import numpy as np
import pytest

from dpdist import local
from dpdist.client import AdminClient, Client
from serve_support import ADMIN_TOKEN, ServerProcess, database_url
from serve_socket_support import (BOUND_S, GRR, InProcessServer, new_campaign, put, raw_connection, read_response,
                                  read_response_keepalive, request_head)

pytest.importorskip("starlette")


@pytest.mark.parametrize("values", [
    np.zeros(64, np.int64), np.eye(1, 10**5, 7, dtype=np.int64)[0] * 3, np.arange(-500, 500, dtype=np.int64),
    np.full(300, 2**40, np.int64), np.random.default_rng(1).integers(-(2**62), 2**62, 50), np.linspace(-1, 1, 9),
], ids=["zero", "sparse", "dense-int16", "dense-int64", "extremes", "floats"])
def test_a_statistic_change_is_stored_compactly_and_read_back_exactly(values):
    from dpdist.serve._deltas import decode_delta, encode_delta

    payload = encode_delta(values)
    dtype = values.dtype.newbyteorder("<").str
    assert np.array_equal(decode_delta(payload, dtype, values.size), values)
    if values.dtype.kind == "i" and np.count_nonzero(values) * 5 < values.size:
        assert payload is None or len(payload) < 16 * np.count_nonzero(values) + 8  # one GRR report over 10^5 items
    if not values.any():
        assert payload is None


@pytest.mark.slow  # uvicorn on a socket
def test_concurrent_requests_share_group_commits_and_each_is_answered_after_its_commit(tmp_path):
    protocol = local.from_config(GRR)
    with InProcessServer(str(tmp_path / "c.sqlite")) as server:
        campaign = new_campaign(server.url)
        committer = server.service.committer
        groups_before = committer.groups
        bodies = [(uuid.uuid4().hex, protocol.privatize(np.array([k % 8]), rng=k)) for k in range(64)]

        def send(entry):
            batch_id, report = entry
            with Client(server.url, retries=5) as device:
                return device.submit_reports(campaign, protocol, report, batch_id=batch_id)

        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            acks = list(pool.map(send, bodies))
        assert all(ack["accepted"] == 1 and not ack["duplicate"] for ack in acks)
        assert committer.groups - groups_before < 64  # requests shared transactions
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            assert admin.campaign(campaign)["n"] == 64 and admin.campaign(campaign)["batches"] == 64
        # every acknowledged batch id is recorded, and its reports are in the log (not folded yet) or a part
        db = server.service.store.db
        assert {row[0] for row in db.execute("SELECT batch_id FROM batches WHERE campaign_id = ?", (campaign,))} == {
            batch_id for batch_id, _ in bodies}


@pytest.mark.slow  # uvicorn on a socket
def test_beyond_max_queue_a_batch_is_refused_at_once_with_retry_after_before_its_body(tmp_path):
    from dpdist.serve._limits import Limits

    with InProcessServer(str(tmp_path / "c.sqlite"), Limits(max_queue=2)) as server:
        campaign = new_campaign(server.url)
        body = json.dumps({"reports": [1, 2, 3]}).encode()
        held = []
        for k in range(2):  # two batches admitted, their bodies not complete: the server serves two
            sock = raw_connection(server.port)
            sock.sendall(request_head("PUT", f"/api/campaigns/{campaign}/batches/held-{k}", len(body)).replace(
                b"application/octet-stream", b"application/json") + body[:4])
            held.append(sock)
        deadline = time.monotonic() + BOUND_S
        while server.service.queued < 2:
            assert time.monotonic() < deadline, "the two held batches were not admitted"
            time.sleep(0.01)
        sock = raw_connection(server.port)
        sock.sendall(request_head("PUT", f"/api/campaigns/{campaign}/batches/third", 1 << 20))  # no body sent
        status, headers, answer = read_response(sock)
        sock.close()
        assert status == 503 and json.loads(answer)["error"] == "busy"
        assert headers["retry-after"] == "1" and headers["connection"] == "close"
        for k, sock in enumerate(held):  # the held batches complete and are counted
            sock.sendall(body[4:])
            status, _, ack = read_response_keepalive(sock)
            sock.close()
            assert status == 200 and json.loads(ack)["accepted"] == 3
        assert put(server.url, campaign, "third", json.dumps({"reports": [4]}).encode(), "application/json").status_code == 200


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_folds_of_many_processes_never_count_a_log_row_twice(kind, tmp_path):
    """Four stores (processes, each its own writer) log batches of one campaign; all fold everything at once."""
    from dpdist.serve._database import open_database
    from dpdist.serve._store import Store

    protocol = local.from_config(GRR)
    with database_url(kind, tmp_path) as url:
        stores = [Store(open_database(url)) for _ in range(4)]
        stores[0].create("c", GRR)
        stores[0].transition("c", "open")
        expected = protocol.aggregator()
        for k in range(40):
            reports = protocol.privatize(np.arange(8), rng=k)
            expected.add(reports)
            stores[k % 4].ingest("c", f"b{k}", "0" * 64, protocol.validate_reports(reports))
        assert stores[0].get("c", statistic=True).aggregator() == expected  # parts + log
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            folded = list(pool.map(lambda store: store.fold("c", rows_of="all"), stores))
        assert sum(folded) == 40 and stores[1].unfolded("all") == []
        assert stores[2].get("c", statistic=True).aggregator() == expected
        history = stores[3].history("c")
        assert history[-1]["n"] == expected.n and history[-1]["batches"] == 40
        for store in stores:
            store.db.close()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_a_campaign_capped_after_this_process_saw_it_uncapped_keeps_its_cap_exact(kind, tmp_path, monkeypatch):
    """PostgreSQL sends a group's campaign locks with BEGIN, shared for the campaigns this process last saw uncapped; a
    campaign given ``max_reports`` since (deleted and created again under its id, by another process) is then locked
    exclusively and read again: of a group of 8 one-report batches under a cap of 5, exactly 5 count."""
    from dpdist.serve._database import open_database
    from dpdist.serve._group import Arrival
    from dpdist.serve._store import Store

    protocol = local.from_config(GRR)
    with database_url(kind, tmp_path) as url:
        this, other = Store(open_database(url)), Store(open_database(url))
        other.create("c", GRR)
        other.transition("c", "open")

        def group(prefix):
            return [Arrival("c", f"{prefix}{k:031x}", "0" * 64, protocol.validate_reports(
                protocol.privatize(np.array([k]), rng=k)), 1, 1) for k in range(8)]

        assert all(outcome["accepted"] == 1 for outcome in this.commit(group("a")))  # seen uncapped
        other.delete("c")
        other.create("c", GRR, max_reports=5)
        other.transition("c", "open")
        locked = []  # the locks taken after BEGIN's (campaign, shared)
        original = this.db.lock_name
        monkeypatch.setattr(this.db, "lock_name", lambda name, *, shared: (locked.append((name, shared)),
                                                                            original(name, shared=shared)))
        outcomes = this.commit(group("b"))
        assert locked == ([("c", False)] if kind == "postgresql" else [])  # the shared lock of BEGIN made exclusive
        assert sum(isinstance(outcome, dict) for outcome in outcomes) == 5
        assert [outcome.code for outcome in outcomes if not isinstance(outcome, dict)] == ["campaign_full"] * 3
        assert other.get("c").n == 5
        for store in (this, other):
            store.db.close()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_two_workers_count_every_report_once_and_keep_a_cap_exact(kind, tmp_path):
    """``--workers 2`` on one database: 8 devices send 240 one-report batches (retried until answered) to an open
    campaign and to one capped at 100: every report of the first is counted once, exactly 100 of the second, and
    each of the 140 refused batches once."""
    protocol = local.from_config(GRR)
    with database_url(kind, tmp_path) as url:
        server = ServerProcess(url, workers=2, options=("--rate-limit", "0")).start(timeout=120)
        try:
            with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
                for name, cap in (("open", None), ("capped", 100)):
                    admin.create_campaign(name, GRR, max_reports=cap)
                    admin.open_campaign(name)

            def device(seed):
                outcomes = []
                with Client(server.url, retries=50, backoff=0.05) as client:
                    for k in range(30):
                        report = protocol.privatize(np.array([k % 8]), rng=seed * 100 + k)
                        outcomes.append(client.submit_reports("open", protocol, report)["accepted"])
                        try:
                            outcomes.append(("capped", client.submit_reports("capped", protocol, report)["accepted"]))
                        except Exception as error:  # noqa: BLE001 - refused once full
                            outcomes.append(("capped", getattr(error, "code", repr(error))))
                return outcomes

            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                results = [item for outcomes in pool.map(device, range(8)) for item in outcomes]
            capped = [value for item in results if isinstance(item, tuple) for value in item[1:]]
            assert sum(1 for value in results if value == 1) == 240
            assert capped.count(1) == 100 and capped.count("campaign_full") == 140
            with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
                assert admin.campaign("open")["n"] == 240 and admin.campaign("capped")["n"] == 100
                # a device whose refusal was lost (a connection reset) sends the batch again: counted once all the same
                assert admin.campaign("capped")["refused_batches"] == {"campaign_full": 140}
        finally:
            server.stop()
