"""A batch's counting work is bounded (``--max-batch-work``): one batch of a million OLH reports at d = 10^5 held the
committer, and every other campaign's batches, about 12 minutes (measured: 50,000 reports held another campaign's
one-report batch 34 s).  A campaign's config answer says how many reports a batch may hold (``max_batch_reports``);
a batch with more is refused with 413 ``too_many_rows`` before its payload is read, on every path (one record, several,
JSON rows, the group path that reads alike bodies together), and devices cut their batches to it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpdist import io, local
from dpdist.serve._ingest import max_batch_reports
from dpdist.serve._limits import DEFAULT_MAX_BATCH_WORK, Limits

pytest.importorskip("starlette")

from starlette.testclient import TestClient  # noqa: E402 - after the extra's check

from dpdist.serve import create_app  # noqa: E402 - after the extra's check

ADMIN = {"Authorization": "Bearer " + "a" * 32}
OLH = {"protocol": "olh", "epsilon": 1.0, "domain_size": 1000}


@pytest.fixture
def client(tmp_path):
    app = create_app(str(tmp_path / "c.sqlite"), admin_token="a" * 32, static_dir=tmp_path / "js",
                     limits=Limits(max_batch_work=58_000, rate_limit=0))
    with TestClient(app) as client:
        for name, config in (("olh", OLH), ("grr", {"protocol": "grr", "epsilon": 1.0, "domain_size": 1000})):
            assert client.post("/api/campaigns", json={"campaign": name, "config": config}, headers=ADMIN).status_code == 201
            client.post(f"/api/campaigns/{name}/open", headers=ADMIN)
        yield client


def _record(config, n, seed=0):
    protocol = local.from_config(config)
    return io.encode_record(protocol, protocol.privatize(np.arange(n) % 7, rng=seed))


def _put(client, campaign, batch_id, body, kind="application/octet-stream"):
    return client.put(f"/api/campaigns/{campaign}/batches/{batch_id}", content=body, headers={"Content-Type": kind})


def test_the_work_of_a_report_is_what_counting_it_costs():
    olh, grr = local.from_config({**OLH, "domain_size": 100_000}), local.from_config({**OLH, "protocol": "grr"})
    assert olh.aggregation_work == 100_000  # every item hashed for each report
    assert grr.aggregation_work == 8 * grr.report_format.row_bytes  # one count: the report's bits bound it
    assert max_batch_reports(olh) == (DEFAULT_MAX_BATCH_WORK - 8 * 100_000) // 100_000 == 663  # and its aggregate
    assert max_batch_reports(local.from_config({**OLH, "domain_size": 2**28})) == 1  # one report always fits


def test_the_config_answer_says_how_many_reports_a_batch_holds(client):
    # 58,000 operations, less the aggregate's 8 a count, over d = 1000 a report (the report's 16 bits for GRR)
    assert client.get("/api/campaigns/olh/config").json()["max_batch_reports"] == 50
    assert client.get("/api/campaigns/grr/config").json()["max_batch_reports"] == (58_000 - 8 * 1000) // 16


@pytest.mark.parametrize("records", [1, 2])
def test_a_batch_of_more_reports_is_refused_before_it_is_counted(client, records):
    body = b"".join(_record(OLH, 51 // records + (records - 1), seed) for seed in range(records))  # 51 or 52 reports
    refused = _put(client, "olh", f"over{records}", body)
    assert refused.status_code == 413 and refused.json()["error"] == "too_many_rows", refused.text
    assert "at most 50 reports" in refused.json()["detail"] and "--max-batch-work" in refused.json()["detail"]
    assert _put(client, "olh", "at-the-bound", _record(OLH, 50)).json()["accepted"] == 50
    campaign = client.get("/api/campaigns/olh", headers=ADMIN).json()
    assert campaign["n"] == 50 and campaign["refused_batches"] == {"too_many_rows": 1}


def test_json_rows_are_bounded_alike(client):
    rows = local.from_config(OLH).privatize(np.arange(51) % 7, rng=1).tolist()
    refused = _put(client, "olh", "json", json.dumps({"reports": rows}).encode(), "application/json")
    assert refused.status_code == 413 and refused.json()["error"] == "too_many_rows"
    ok = _put(client, "olh", "json-ok", json.dumps({"reports": rows[:50]}).encode(), "application/json")
    assert ok.json()["accepted"] == 50


def test_the_group_path_reading_alike_bodies_keeps_the_bound(tmp_path):
    """Bodies of one length and header are read together in a group (serve/_alike_records.py): a body of 51 reports
    among them is still refused, and its neighbours counted."""
    from dpdist.serve._committer import GroupCommitter
    from dpdist.serve._database import open_database
    from dpdist.serve._group import Arrival
    from dpdist.serve._group_bodies import PendingBody
    from dpdist._guard._refusals import TooLarge
    from dpdist.serve._store import Store
    import hashlib
    import uuid

    store = Store(open_database(str(tmp_path / "g.sqlite")))
    store.create("olh", OLH)
    store.transition("olh", "open")
    protocol, limits = local.from_config(OLH), Limits(max_batch_work=58_000)
    bodies = [_record(OLH, 51, seed) for seed in range(3)] + [_record(OLH, 50, 9)]

    def arrival(body):
        batch_id = uuid.uuid4().hex
        return Arrival("olh", batch_id, hashlib.sha256(body).hexdigest(), None, 0, 0, campaign_file_id=None,
                       pending=PendingBody(protocol, body, "application/octet-stream", limits, False))

    outcomes = GroupCommitter(store).write([arrival(body) for body in bodies])
    assert [type(outcome) for outcome in outcomes[:3]] == [TooLarge] * 3
    assert outcomes[3]["accepted"] == 50 and store.row("olh") is not None


def test_the_committer_bounds_a_group_s_counting_work_by_the_batches_bound(tmp_path):
    """20 batches at the bound, sent at once, were one group (20 x the bound: another campaign's batch
    waited 30.7 s); the committer's groups are bounded by --max-batch-work too (SingleWriter's max_group_cost; the
    grouping itself: tests/io/test_single_writer.py), each batch's work counted as its reports could cost."""
    import hashlib
    import uuid

    from dpdist.serve._group import Arrival, Refused
    from dpdist.serve._group_bodies import PendingBody, batch_work

    app = create_app(str(tmp_path / "w.sqlite"), admin_token="a" * 32, static_dir=tmp_path / "js",
                     limits=Limits(max_batch_work=58_000))
    committer = app.state.service.committer
    assert committer.max_group_cost == 58_000
    protocol, limits = local.from_config(OLH), Limits(max_batch_work=58_000)

    def pending(body):
        return Arrival("olh", uuid.uuid4().hex, hashlib.sha256(body).hexdigest(), None, 0, 0,
                       pending=PendingBody(protocol, body, "application/octet-stream", limits, False))

    one, fifty, more = _record(OLH, 1), _record(OLH, 50), _record(OLH, 200)
    row_bytes, statistic = protocol.report_format.row_bytes, 8 * 1000  # the group's aggregate of the campaign: d counts
    assert committer.item_cost(pending(one)) == statistic + (len(one) // row_bytes) * 1000  # as many as its bytes hold
    assert committer.item_cost(pending(fifty)) == statistic + 50 * 1000 == committer.item_cost(pending(more))  # more: refused unread
    rows = json.dumps({"reports": protocol.privatize(np.arange(3), rng=1).tolist()}).encode()
    as_json = pending(rows)
    as_json.pending.content_type = "application/json"
    assert committer.item_cost(as_json) == statistic + (rows.count(b",") + 1) * 1000  # commas, not bytes
    decoded = Arrival("olh", "x" * 32, "d", object(), 7, 7, work=7 * 1000)
    assert batch_work(decoded) == 7000 and batch_work(Refused("olh", "malformed_batch")) == 0


def test_a_costly_decoded_batch_is_counted_before_its_group_off_the_committer(tmp_path, monkeypatch):
    """A relayed batch (10,000 OLH reports, d = 10^5) was counted on the committer's thread, holding every
    campaign's batches 6.4 s; a batch decoded before its group (a relayed one, a body over the inline size) is counted
    in a thread when it is costly, and its aggregate merged into the group's log row: the same state."""
    from dpdist.serve import _service

    calls = []
    original = _service._counted
    monkeypatch.setattr(_service, "_counted", lambda protocol, batch: calls.append(batch) or original(protocol, batch))
    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 1000}
    app = create_app(str(tmp_path / "d.sqlite"), admin_token="a" * 32, static_dir=tmp_path / "js",
                     limits=Limits(max_batch_work=1 << 22, rate_limit=0))
    protocol = local.from_config(config)
    reports = protocol.privatize(np.arange(40_000) % 1000, rng=3)
    with TestClient(app) as client:
        assert client.post("/api/campaigns", json={"campaign": "big", "config": config}, headers=ADMIN).status_code == 201
        client.post("/api/campaigns/big/open", headers=ADMIN)
        body = io.encode_record(protocol, reports)
        assert len(body) > _service.INLINE_BODY_BYTES  # decoded in a thread, then counted there (16 x 40,000 > 2^22 / 1024)
        assert _put(client, "big", "b" * 32, body).json()["accepted"] == 40_000
        assert _put(client, "big", "c" * 32, _record(config, 3)).json()["accepted"] == 3  # a cheap one: in its group
        stored = app.state.service.store.get("big", statistic=True)
    assert len(calls) == 1 and stored.n == 40_003
    expected = protocol.aggregator().add(reports).add(protocol.privatize(np.arange(3) % 7, rng=0))
    np.testing.assert_array_equal(stored.statistic, expected.statistic)


def test_a_fold_costs_the_committer_at_most_the_bound_and_the_longest_unfolded_go_first(tmp_path):
    """Folding six campaigns of 64 MB statistics once a second held every campaign's batches up to 4.9 s;
    a fold now takes the campaigns folded longest ago while their aggregates cost at most --max-batch-work (one at
    least), the others at the next fold; at the last fold, all."""
    from dpdist.serve._committer import GroupCommitter
    from dpdist.serve._database import open_database
    from dpdist.serve._store import Store

    store = Store(open_database(str(tmp_path / "f.sqlite")))
    for name in ("a", "b", "c"):
        store.create(name, {"protocol": "grr", "epsilon": 1.0, "domain_size": 1000})
        store.transition(name, "open")
        store.ingest(name, name * 32, "d" * 64, local.from_config({"protocol": "grr", "epsilon": 1.0,
                                                                  "domain_size": 1000}).validate_reports(np.array([1, 2])))
    committer = GroupCommitter(store, max_group_cost=2 * 8 * 1000)  # two aggregates of 1000 counts a fold
    assert set(store.unfolded()) == {"a", "b", "c"}
    left = committer._fold_some({"a", "b", "c"}, finishing=False)
    assert left == {"c"} and store.unfolded() == ["c"]
    assert committer._fold_some({"a", "b", "c"}, finishing=False) == {"b"}  # c waited longest: first, then a (by id)
    assert committer._fold_some({"a", "b"}, finishing=True) == set() and store.unfolded() == []
    assert store.get("a", statistic=True).n == 2


def test_a_cheap_batch_of_a_large_statistic_is_not_counted_into_an_aggregate_of_its_own(tmp_path, monkeypatch):
    """A 68 KB body of 17,000 GRR reports at d = 8*10^6 was counted in a thread into a 64 MB aggregate held
    until its group (42 at once: 4.2 GB); a batch is counted apart only when its reports cost more than that aggregate."""
    from dpdist.serve import _service

    calls = []
    monkeypatch.setattr(_service, "_counted", lambda protocol, batch: calls.append(batch))
    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 200_000}  # an aggregate of 1.6 M operations
    app = create_app(str(tmp_path / "s.sqlite"), admin_token="a" * 32, static_dir=tmp_path / "js",
                     limits=Limits(max_batch_work=1 << 22, rate_limit=0))
    protocol = local.from_config(config)
    with TestClient(app) as client:
        assert client.post("/api/campaigns", json={"campaign": "wide", "config": config}, headers=ADMIN).status_code == 201
        client.post("/api/campaigns/wide/open", headers=ADMIN)
        body = io.encode_record(protocol, protocol.privatize(np.arange(40_000) % 1000, rng=3))  # 640,000 operations
        assert _put(client, "wide", "w" * 32, body).json()["accepted"] == 40_000
    assert calls == []


def test_the_orphaned_rows_of_a_crashed_process_are_folded_within_the_bound_too():
    """After a crash, the sweep folded the rows the dead process left for every campaign in one step (12
    campaigns of 64 MB statistics: another campaign's batch waited 10 s); they now go through the same budgeted fold."""
    from types import SimpleNamespace

    from dpdist.serve._committer import GroupCommitter

    class Store:
        folds: list = []

        def unfolded(self, rows_of=None):
            return ["a", "b", "c"] if rows_of == "orphans" else []

        def row(self, campaign_id):
            return SimpleNamespace(protocol=local.from_config({"protocol": "grr", "epsilon": 1.0, "domain_size": 1000}))

        def fold(self, campaign_id, rows_of=None):
            self.folds.append((campaign_id, rows_of))

    store = Store()
    committer = GroupCommitter(store, max_group_cost=2 * 8 * 1000)  # two aggregates of 1000 counts a fold
    committer._swept = committer._folded = float("-inf")  # a sweep and a fold due
    committer.between_groups(False)
    assert store.folds == [("a", "orphans"), ("b", "orphans")] and committer._orphaned == {"c"}
    committer._folded = float("-inf")
    committer.between_groups(False)
    assert store.folds[2:] == [("c", "orphans")] and committer._orphaned == set()
