"""The usual group the short way (``dpdist.serve._usual_group``): the same answers and rows as the ordinary way, and
nothing of it left when the group is not the usual one."""

from __future__ import annotations

import json
import uuid
import zlib

import numpy as np
import pytest

from dpdist import io, local
from dpdist.serve import _group, _usual_group
from dpdist.serve._committer import GroupCommitter
from dpdist.serve._database import open_database
from dpdist.serve._group import Arrival, Refused
from dpdist.serve._group_bodies import PendingBody, decode_pending, settle
from dpdist.serve._limits import Limits
from dpdist.serve._store import Store
from dpdist.serve._usual_group import commit_usual
from group_decode_support import raw_record

CONFIG = {"protocol": "grr", "epsilon": 1.0, "domain_size": 16}
PROTOCOL = local.from_config(CONFIG)
LIMITS = Limits()
BINARY = "application/octet-stream"
MINUTE = 1_800_000_000_000
TABLES = {  # what each table holds of a group, in a fixed order (the writer's own id left out)
    "batches": "campaign_id, batch_id, body_sha256, received_ms, n_read, accepted, rejected",
    "ingest_log": "campaign_id, minute_ms, n, statistic, rejected, refused, refusals, batches",
    "bound_batch_ids": "batch_id, campaign_id",
    "refused_batch_ids": "campaign_id, batch_id, reason",
}


@pytest.fixture(autouse=True)
def _one_minute(monkeypatch):
    """Both ways see the same arrival minute (a group committed across a minute's turn would differ there only)."""
    for module in (_group, _usual_group):
        monkeypatch.setattr(module, "arrival_ms", lambda: MINUTE)


def _store(folder, name: str, **options) -> Store:
    store = Store(open_database(str(folder / f"{name}.sqlite")))
    store.create("c", CONFIG, **options)
    store.transition("c", "open")
    return store


def _body(value: int, batch_id: str, *, file_id: bool, reports: int = 1) -> bytes:
    values = np.full(reports, value)
    return io.encode_record(PROTOCOL, PROTOCOL.privatize(values, rng=value), batch_id if file_id else None)


def _group_of(store: Store, bodies: list[tuple[str, bytes]], *, campaign_id: str = "c", protocol=PROTOCOL,
              limits=LIMITS, **fields) -> list:
    file_id = store.row(campaign_id).export_file_id
    return [Arrival(campaign_id, batch_id, uuid.uuid5(uuid.NAMESPACE_OID, batch_id).hex * 2, None, 0, 0,
                    campaign_file_id=file_id, pending=PendingBody(protocol, body, BINARY, limits), **fields)
            for batch_id, body in bodies]


def _ordinary(store: Store, items: list) -> list:
    committed, places, refused = decode_pending(items)
    return settle(store.commit(committed) if committed else [], places, refused)


def _rows(store: Store) -> dict:
    return {table: sorted(store.db.execute(f"SELECT {columns} FROM {table}")) for table, columns in TABLES.items()}


def _ids(count: int, form: str) -> list[str]:
    """``count`` batch ids: a client's (32 hex digits: bound to one campaign), named ones, or both in turn."""
    named = {"hex": (), "named": range(count), "mixed": range(0, count, 2)}[form]
    return [f"batch-{uuid.uuid4().hex[:8]}" if index in named else uuid.uuid4().hex for index in range(count)]


@pytest.mark.parametrize(("form", "file_id"), [("hex", True), ("hex", False), ("named", False), ("mixed", False)])
@pytest.mark.parametrize("reports", [0, 1, 3])
def test_the_usual_group_gets_the_answers_and_rows_of_the_ordinary_way(tmp_path, form, file_id, reports):
    short, ordinary = _store(tmp_path, "short"), _store(tmp_path, "ordinary")
    for size in (1, 2, 14, 40):
        bodies = [(batch_id, _body(index % 16, batch_id, file_id=file_id, reports=reports))
                  for index, batch_id in enumerate(_ids(size, form))]
        answers = commit_usual(short.db, short.writer, _group_of(short, bodies))
        assert answers == _ordinary(ordinary, _group_of(ordinary, bodies))
        assert all(answer["accepted"] == reports and not answer["duplicate"] for answer in answers)
    assert _rows(short) == _rows(ordinary)
    assert len(_rows(short)["ingest_log"]) == 4  # one log row a group
    short.fold("c")
    ordinary.fold("c")
    folded, expected = short.get("c", statistic=True), ordinary.get("c", statistic=True)
    assert (folded.n, folded.batches) == (expected.n, expected.batches) == (reports * 57, 57)
    assert np.array_equal(folded.statistic, expected.statistic)


def _refused_the_short_way(store: Store, items: list) -> None:
    """``items`` are not the usual group: None, and nothing of them in the database."""
    before = _rows(store)
    assert commit_usual(store.db, store.writer, items) is None
    assert _rows(store) == before


def test_a_retried_batch_goes_the_ordinary_way_and_gets_its_first_acknowledgement(tmp_path):
    store = _store(tmp_path, "s")
    bodies = [(batch_id, _body(3, batch_id, file_id=True)) for batch_id in _ids(5, "hex")]
    first = commit_usual(store.db, store.writer, _group_of(store, bodies))
    again = _group_of(store, [(batch_id, _body(4, batch_id, file_id=True)) for batch_id in _ids(3, "hex")] + bodies[:1])
    assert _usual_group._usual_reports(again) is not None
    _refused_the_short_way(store, again)  # three rows inserted before the fourth was found recorded: rolled back
    assert GroupCommitter(store).write(_group_of(store, bodies[:1])) == [{**first[0], "duplicate": True}]


@pytest.mark.parametrize("change", ["closed", "capped", "enrollment", "kept", "another_creation", "deleted"])
def test_a_campaign_that_is_not_plain_and_open_goes_the_ordinary_way(tmp_path, change):
    options = {"capped": {"max_reports": 100}, "enrollment": {"enrollment": True}, "kept": {"keep_reports": True}}
    store = _store(tmp_path, "s", **options.get(change, {}))
    items = _group_of(store, [(batch_id, _body(2, batch_id, file_id=False)) for batch_id in _ids(4, "hex")])
    assert _usual_group._usual_reports(items) is not None  # the bodies are the usual ones: the campaign is what differs
    if change == "closed":
        store.transition("c", "closed")
    elif change in ("another_creation", "deleted"):
        store.delete("c")
        if change == "another_creation":
            _store(tmp_path, "s")
    if change == "kept":  # what admission hands over for a campaign that keeps its reports
        for item in items:
            item.pending.keep_reports = True
    if change == "enrollment":
        for item in items:
            item.enrollment_sha256 = "0" * 64
    _refused_the_short_way(store, items)


def test_a_batch_id_counted_by_another_campaign_goes_the_ordinary_way(tmp_path):
    store = _store(tmp_path, "s")
    store.create("other", CONFIG)
    store.transition("other", "open")
    taken = uuid.uuid4().hex
    assert commit_usual(store.db, store.writer, _group_of(store, [(taken, _body(1, taken, file_id=False))],
                                                          campaign_id="other")) is not None
    items = _group_of(store, [(batch_id, _body(1, batch_id, file_id=False)) for batch_id in [*_ids(3, "hex"), taken]])
    assert _usual_group._usual_reports(items) is not None
    _refused_the_short_way(store, items)
    assert GroupCommitter(store).write(items)[-1].code == "batch_of_another_campaign"


def _invalid_report(store):
    """Three valid bodies and one whose report is out of GRR's range (its record otherwise sound)."""
    header = json.loads(_body(1, "b-bad", file_id=False)[14:-1])  # past the prefix, before the one-byte payload
    bad = raw_record({**header, "crc32": zlib.crc32(b"\x10")}, b"\x10")
    return _group_of(store, [(batch_id, _body(1, batch_id, file_id=False)) for batch_id in _ids(3, "hex")]
                     + [("b-bad", bad)])


@pytest.mark.parametrize("kind", ["invalid_report", "two_lengths", "refused", "two_campaigns", "json", "relayed",
                                  "another_protocol", "not_a_record"])
def test_a_group_of_other_items_goes_the_ordinary_way(tmp_path, kind):
    store = _store(tmp_path, "s")
    store.create("other", CONFIG)
    store.transition("other", "open")
    plain = [(batch_id, _body(5, batch_id, file_id=False)) for batch_id in _ids(3, "hex")]
    items = _group_of(store, plain)
    assert _usual_group._usual_reports(items) is not None  # without the change below, the usual group
    if kind == "invalid_report":
        items = _invalid_report(store)
    elif kind == "two_lengths":
        items += _group_of(store, [("b-long", _body(5, "b-long", file_id=False, reports=2))])
    elif kind == "refused":
        items.append(Refused("c", "malformed_batch", "b-x"))
    elif kind == "two_campaigns":
        items += _group_of(store, [("b-o", _body(5, "b-o", file_id=False))], campaign_id="other")
    elif kind == "json":
        items[0].pending.content_type = "application/json"
    elif kind == "relayed":
        items[0].received_ms = MINUTE
    elif kind == "another_protocol":
        items[1].pending.protocol = local.from_config({**CONFIG, "epsilon": 2.0})
    elif kind == "not_a_record":
        body = bytearray(items[2].pending.body)
        body[20] ^= 1  # a byte of the header's config: the same length, not the others' record
        items[2].pending.body = bytes(body)
    _refused_the_short_way(store, items)


def test_the_committer_takes_the_usual_group_the_short_way(tmp_path, monkeypatch):
    store = _store(tmp_path, "s")

    def ordinary(*args, **kwargs):
        raise AssertionError("the usual group went the ordinary way")

    monkeypatch.setattr(store, "commit", ordinary)
    items = _group_of(store, [(batch_id, _body(7, batch_id, file_id=True)) for batch_id in _ids(14, "hex")])
    answers = GroupCommitter(store).write(items)
    assert [answer["batch_id"] for answer in answers] == [item.batch_id for item in items]
    assert store.db.execute("SELECT n, batches FROM ingest_log") == [(14, 14)]


def test_postgresql_groups_go_their_own_way(tmp_path, monkeypatch):
    store = _store(tmp_path, "s")
    items = _group_of(store, [(batch_id, _body(7, batch_id, file_id=True)) for batch_id in _ids(3, "hex")])
    monkeypatch.setattr(store.db, "dialect", "postgresql")
    assert commit_usual(store.db, store.writer, items) is None


def test_after_a_rolled_back_group_the_committer_pauses_the_short_way_while_retries_come(tmp_path, monkeypatch):
    """A wave of retries (every group holds a batch counted before) would be rolled back and committed again each time
    (1.1-1.4x the ordinary way's cost): the pauses double, so 100 such groups try the short way 7 times; the first usual
    group after the pause goes it again."""
    store = _store(tmp_path, "s")
    committer = GroupCommitter(store)
    tried = []
    real = _usual_group._commit
    monkeypatch.setattr(_usual_group, "_commit", lambda *args: tried.append(1) or real(*args))
    counted = [(batch_id, _body(1, batch_id, file_id=False)) for batch_id in _ids(100, "hex")]
    assert _ordinary(store, _group_of(store, counted))
    for retry in counted:
        answers = committer.write(_group_of(store, [(batch_id, _body(2, batch_id, file_id=False))
                                                    for batch_id in _ids(5, "hex")] + [retry]))
        assert answers[-1]["duplicate"] and not any(answer["duplicate"] for answer in answers[:-1])
    assert len(tried) == 7 and committer.short_way.pause == _usual_group.MAX_PAUSE  # groups 1, 3, 6, 11, 20, 37, 70
    usual = [(batch_id, _body(3, batch_id, file_id=False)) for batch_id in _ids(4, "hex")]
    for _ in range(_usual_group.MAX_PAUSE):
        committer.write(_group_of(store, [(batch_id, _body(4, batch_id, file_id=False)) for batch_id in _ids(4, "hex")]))
    tried.clear()
    assert committer.write(_group_of(store, usual)) and tried and committer.short_way.pause == 0


def test_a_named_batch_id_another_campaign_counted_is_counted_here_too_as_the_ordinary_way_counts_it(tmp_path):
    """Only a client's ids (32 hex digits) are bound to one campaign: a named id may be counted by each."""
    short, ordinary = _store(tmp_path, "short"), _store(tmp_path, "ordinary")
    named = "batch-shared"
    for store in (short, ordinary):
        store.create("other", CONFIG)
        store.transition("other", "open")
        assert commit_usual(store.db, store.writer, _group_of(store, [(named, _body(1, named, file_id=False))],
                                                              campaign_id="other")) is not None
    bodies = [(batch_id, _body(2, batch_id, file_id=False)) for batch_id in [*_ids(3, "hex"), named]]
    answers = commit_usual(short.db, short.writer, _group_of(short, bodies))
    assert answers is not None and answers == _ordinary(ordinary, _group_of(ordinary, bodies))
    assert _rows(short) == _rows(ordinary)


def test_a_batch_id_bound_to_another_campaign_after_retention_goes_the_ordinary_way(tmp_path):
    """Retention deletes batch rows and keeps their ids' binding in ``bound_batch_ids``: still another campaign's."""
    store = _store(tmp_path, "s")
    store.create("other", CONFIG)
    kept = uuid.uuid4().hex
    with store.db.transaction():
        store.db.execute("INSERT INTO bound_batch_ids (batch_id, campaign_id) VALUES (?, ?)", (kept, "other"))
    items = _group_of(store, [(batch_id, _body(1, batch_id, file_id=False)) for batch_id in [*_ids(3, "hex"), kept]])
    _refused_the_short_way(store, items)
    assert GroupCommitter(store).write(items)[-1].code == "batch_of_another_campaign"
    mine = _group_of(store, [(batch_id, _body(1, batch_id, file_id=False)) for batch_id in _ids(3, "hex")])
    assert commit_usual(store.db, store.writer, mine) is not None  # the binding of others' ids holds none of these
