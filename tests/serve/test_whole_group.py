"""PostgreSQL's group commit in fewer round trips answers as the ordinary way, byte for byte.

The usual group (new batches of open, plain campaigns this process read before)
is committed in one round trip (:mod:`dpdist.serve._whole_group`), other groups
with their batch rows' claim sent with ``BEGIN`` (:mod:`dpdist.serve._claims`);
either one that finds the campaigns or the claims other than it planned is rolled
back and the group committed the ordinary way.  Each scenario runs on two
databases of one cluster, one with those paths and one without (the ordinary way
alone); every outcome, count and stored batch row must be the same.  A server
restarted while the committer was idle is noticed before the one-round-trip path
sends anything: the ordinary path replaces the connection and the group commits.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpdist import local
from dpdist.serve import _group
from dpdist.serve._database import Database, open_database
from dpdist.serve._group import Arrival, Refused
from dpdist._guard._refusals import Refusal
from dpdist.serve._store import Store
from ops_support import RestartablePostgres
from serve_support import postgres_available

pytestmark = pytest.mark.slow  # a PostgreSQL cluster

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
PROTOCOL = local.from_config(GRR)


@pytest.fixture(scope="module")
def cluster():
    if not postgres_available():
        pytest.skip("PostgreSQL (initdb) is not installed; .ci/run installs the postgresql package")
    server = RestartablePostgres().start()
    yield server
    server.stop()


def _arrival(campaign: str, batch_id: str, value: int = 1, digest: int | None = None, size: int = 1) -> Arrival:
    batch = PROTOCOL.validate_reports(PROTOCOL.privatize(np.full(size, value % 8), rng=value))
    return Arrival(campaign, batch_id, f"{value if digest is None else digest:064x}", batch, size, size)


def _id(k: int) -> str:
    return f"{k:032x}"  # the bound form (32 hex digits): bound to one campaign


def _shown(outcome):
    if isinstance(outcome, Refusal):
        return type(outcome).__name__, outcome.code, str(outcome)
    return outcome


class _Counting:
    """Counts the statements and round trips a store's database sends (the ordinary path's are separate calls)."""

    def __init__(self, monkeypatch, db: Database):
        self.calls: list[str] = []
        for name in ("at_once", "_together", "execute", "rowcount"):
            original = getattr(Database, name)

            def spy(this, *args, _original=original, _name=name, **kwargs):
                if this is db:
                    self.calls.append(_name)
                return _original(this, *args, **kwargs)

            monkeypatch.setattr(Database, name, spy)


def _scenarios():
    """(name, group) in order; each group runs after the ones before it (the campaigns change between some)."""
    return [
        ("first group: locks unknown", [_arrival("a", _id(1)), _arrival("a", _id(2), 2), _arrival("b", _id(3), 3)]),
        ("new batches, one campaign", [_arrival("a", _id(k), k) for k in range(4, 12)]),
        ("new batches, two campaigns, any id", [_arrival("a", "free-1", 5), _arrival("b", _id(12), 6),
                                                _arrival("b", "free-1", 7), _arrival("a", _id(13), 8, size=5)]),
        ("a retry among new batches", [_arrival("a", _id(14), 9), _arrival("a", _id(1))]),
        ("a batch id reused", [_arrival("a", _id(15), 10), _arrival("a", _id(2), 2, digest=99)]),
        ("an id another campaign counted", [_arrival("b", _id(16), 11), _arrival("b", _id(4), 4)]),
        ("one id in two campaigns", [_arrival("a", _id(17), 12), _arrival("b", _id(17), 13)]),
        ("a refusal in the group", [_arrival("a", _id(18), 14), Refused("a", "malformed_batch", _id(19))]),
        ("the capped campaign", [_arrival("capped", _id(20), 1, size=3), _arrival("capped", _id(21), 2, size=3)]),
        ("the capped campaign again", [_arrival("capped", _id(22), 3, size=3), _arrival("capped", _id(23), 4)]),
        ("close a", None),
        ("a closed since it was read", [_arrival("a", _id(24), 15), _arrival("b", _id(25), 16), _arrival("a", _id(5), 5)]),
        ("b capped since it was read", "cap b"),
        ("b capped", [_arrival("b", _id(26), 17, size=2), _arrival("b", _id(27), 18, size=2)]),
        ("an unknown campaign", [_arrival("b", _id(28), 19), _arrival("nobody", _id(29), 20)]),
    ]


def _stores(cluster) -> tuple[Store, Store]:
    stores = []
    for _ in range(2):
        store = Store(open_database(cluster.new_database()))
        for campaign in ("a", "b"):
            store.create(campaign, GRR)
            store.transition(campaign, "open")
        store.create("capped", GRR, max_reports=8)
        store.transition("capped", "open")
        stores.append(store)
    return stores[0], stores[1]


def test_fewer_round_trips_answer_and_count_as_the_ordinary_way(cluster, monkeypatch):
    fast, ordinary = _stores(cluster)
    plan, early = _group.whole_plan, _group.early_claim
    monkeypatch.setattr(_group, "whole_plan", lambda url, items, held: plan(url, items, held) if _fast[0] else None)
    monkeypatch.setattr(_group, "early_claim", lambda db, items, minute: early(db, items, minute) if db is fast.db else None)
    _fast = [False]
    counting = _Counting(monkeypatch, fast.db)
    trips = {}
    try:
        for name, group in _scenarios():
            if group is None or isinstance(group, str):
                for store in (fast, ordinary):
                    if group is None:
                        store.transition("a", "closed")
                    else:  # as another process's reconfiguration would leave it
                        with store.db.transaction():
                            store.db.execute("UPDATE campaigns SET max_reports = 1000 WHERE id = 'b'")
                continue
            counting.calls.clear()
            _fast[0] = True
            mine = [_shown(outcome) for outcome in fast.commit(group)]
            trips[name] = list(counting.calls)
            _fast[0] = False
            theirs = [_shown(outcome) for outcome in ordinary.commit(group)]
            assert mine == theirs, name
        for campaign in ("a", "b", "capped"):
            for store in (fast, ordinary):
                store.fold(campaign)
            mine, theirs = (store.get(campaign, statistic=True) for store in (fast, ordinary))
            assert (mine.n, mine.rejected, mine.refused, mine.batches) == (theirs.n, theirs.rejected, theirs.refused,
                                                                           theirs.batches), campaign
            assert mine.statistic is not None and theirs.statistic is not None
            assert mine.statistic.tobytes() == theirs.statistic.tobytes(), campaign
        rows = "SELECT campaign_id, batch_id, body_sha256, n_read, accepted, rejected FROM {} ORDER BY 1, 2"
        for table in ("batches", "bound_batch_ids", "refused_batch_ids"):
            query = rows.format(table) if table == "batches" else f"SELECT * FROM {table} ORDER BY 1, 2"
            assert fast.db.execute(query) == ordinary.db.execute(query), table
    finally:
        fast.db.close()
        ordinary.db.close()
    # the usual groups: one round trip; a misprediction costs the ordinary way after it, never a different answer
    assert trips["new batches, one campaign"] == ["at_once"]
    assert trips["new batches, two campaigns, any id"] == ["at_once"]
    # the claim with BEGIN, the refusal's count (refused_batch_ids), the log with COMMIT
    assert trips["a refusal in the group"] == ["_together", "execute", "_together"]
    # mispredicted (a duplicate): then the claim with BEGIN, the duplicate's stored acknowledgement, the log with COMMIT
    assert trips["a retry among new batches"] == ["at_once", "_together", "execute", "_together"]
    assert trips["a closed since it was read"][0] == "at_once" and len(trips["a closed since it was read"]) > 3


def test_a_server_restarted_while_the_committer_was_idle_costs_no_group(cluster):
    """The one-round-trip path cannot replace a dropped connection (once sent, its COMMIT may have run): it sees the
    restarted server's closed socket first and leaves the group to the ordinary path, which replaces it."""
    store = Store(open_database(cluster.new_database()))
    try:
        store.create("a", GRR)
        store.transition("a", "open")
        store.commit([_arrival("a", _id(1))])
        assert all(isinstance(outcome, dict) for outcome in store.commit([_arrival("a", _id(k), k) for k in (2, 3)]))
        cluster.halt()
        cluster.resume()
        outcomes = store.commit([_arrival("a", _id(k), k) for k in (4, 5, 6)])
        assert [outcome["duplicate"] for outcome in outcomes] == [False] * 3
        assert store.db.outages.reconnects == 1
        store.fold("a")
        assert store.get("a").n == 6
    finally:
        store.db.close()


def test_parameters_are_inlined_as_the_server_reads_them(cluster):
    """The one-round-trip query inlines its parameters itself (libpq's quoting): strings with quotes, backslashes and
    any character, bytes of every value, integers and NULL reach the server as they were."""
    from dpdist.serve._database import _literals

    import psycopg

    connection = psycopg.connect(cluster.new_database(), autocommit=True)
    try:
        values = ["a'b\\c é", "", "?", "'; DROP TABLE x; --", "\x01\t\n", "日本", 0, -5, 2**62, None, bytes(range(256)),
                  b"", b"'\\", np.int64(7)]
        statement = "SELECT " + ", ".join(_literals(connection, tuple(values), connection.info.encoding))
        row = connection.execute(statement).fetchone()  # pyright: ignore[reportArgumentType, reportCallIssue]  (built here)
        assert row is not None
        assert list(row) == [value if not isinstance(value, np.integer) else int(value) for value in values]
    finally:
        connection.close()


def test_prepared_statements_gone_cost_no_group(cluster, monkeypatch):
    """The one-round-trip query executes statements prepared once per connection; if they are gone (a pooler's
    ``DISCARD ALL``), that group is committed the ordinary way and the next one prepares them again."""
    store = Store(open_database(cluster.new_database()))
    counting = _Counting(monkeypatch, store.db)
    try:
        store.create("a", GRR)
        store.transition("a", "open")
        store.commit([_arrival("a", _id(1))])
        store.commit([_arrival("a", _id(k), k) for k in (2, 3)])
        store.db.connection().execute("DEALLOCATE ALL")
        counting.calls.clear()
        assert [outcome["duplicate"] for outcome in store.commit([_arrival("a", _id(k), k) for k in (4, 5)])] == [False] * 2
        assert counting.calls[0] == "at_once" and len(counting.calls) > 1  # refused, then the ordinary way
        counting.calls.clear()
        assert [outcome["duplicate"] for outcome in store.commit([_arrival("a", _id(k), k) for k in (6, 7)])] == [False] * 2
        assert counting.calls == ["at_once"]
        store.fold("a")
        assert store.get("a").n == 7
    finally:
        store.db.close()
