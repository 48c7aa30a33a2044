"""A group's batch rows (``dpdist.serve._claims``): the exactly-once claim, and PostgreSQL's claim sent with ``BEGIN``
(its end to end checks against the ordinary path, on a PostgreSQL cluster: tests/serve/test_whole_group.py)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np

from dpdist import local
from dpdist.serve._claims import EarlyClaim, batch_rows, early_claim, insert_batch_rows, rejected_json
from dpdist.serve._database import open_database
from dpdist.serve._group import Arrival
from dpdist.serve._store import Store

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
PROTOCOL = local.from_config(GRR)


def _arrival(campaign: str, batch_id: str, value: int = 1, received_ms: int | None = None) -> Arrival:
    batch = PROTOCOL.validate_reports(PROTOCOL.privatize(np.full(2, value % 8), rng=value))
    arrival = Arrival(campaign, batch_id, f"{value:064x}", batch, 2, 2)
    if received_ms is not None:
        arrival.received_ms = received_ms
    return arrival


def test_rejected_counts_are_stored_sorted_and_none_as_an_empty_object():
    assert rejected_json({}) == "{}"
    assert rejected_json({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'


def test_a_batch_row_is_received_in_the_groups_minute_unless_it_says_when():
    items = [_arrival("a", "x", 1), _arrival("a", "y", 2, received_ms=123), _arrival("a", "z", 3)]
    rows = batch_rows(items, [0, 1], minute=60_000)
    assert [(row[0], row[1], row[3]) for row in rows] == [("a", "x", 60_000), ("a", "y", 123)]
    assert rows[0][2] == f"{1:064x}" and rows[0][4:] == (2, 2, "{}")


def test_a_batch_row_is_claimed_once(tmp_path):
    """The claim is the exactly-once rule: the same (campaign, batch id) again inserts nothing; another campaign's
    row of the same id is its own."""
    store = Store(open_database(str(tmp_path / "claims.sqlite")))
    for campaign in ("a", "b"):
        store.create(campaign, GRR)
    rows = batch_rows([_arrival("a", "x"), _arrival("b", "x", 2)], [0, 1], minute=0)
    with store.db.transaction():
        assert sorted(map(tuple, insert_batch_rows(store.db, rows))) == [("a", "x"), ("b", "x")]
    with store.db.transaction():
        assert insert_batch_rows(store.db, rows[:1]) == []


def test_the_early_claim_is_postgresqls_and_needs_reports_and_distinct_bound_ids():
    sqlite, postgresql = SimpleNamespace(dialect="sqlite"), SimpleNamespace(dialect="postgresql")
    bound = f"{7:032x}"
    items = [_arrival("a", bound), SimpleNamespace(campaign_id="a", batch_id="refused"), _arrival("b", "free-1", 2)]
    assert early_claim(sqlite, items, 0) is None  # a statement is a function call there
    claim = early_claim(postgresql, items, 0)
    assert claim.indices == [0, 2]  # the arrivals with validated reports
    document, bound_ids = claim.statement[1]
    assert [row["batch_id"] for row in json.loads(document)] == [bound, "free-1"]
    assert json.loads(bound_ids) == [bound]  # only the bound form is bound to its campaign
    assert early_claim(postgresql, [_arrival("a", bound), _arrival("b", bound, 2)], 0) is None  # one id, two campaigns
    assert early_claim(postgresql, [SimpleNamespace(campaign_id="a", batch_id="r")], 0) is None


def test_the_early_claims_rows_are_read_as_inserted_and_bound_keys():
    inserted, bound = EarlyClaim.keys([("a", "x", 0), ("a", "y", 0), ("a", "x", 1)])
    assert inserted == {("a", "x"), ("a", "y")} and bound == {("x", "a")}
