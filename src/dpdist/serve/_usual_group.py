"""SQLite: the usual group (new one-record bodies of one open, plain campaign) decoded and committed in few steps.

Under load a committer's group is mostly a dozen or more one-report bodies of one
campaign, every one new, valid and counted.  The ordinary way decodes each body
into its own batch (:func:`._group_bodies.decode_pending`) and commits the group
through every check an item may need (:func:`._group.commit_group`): about 30
steps of Python a group, which cost the committer about 300 us a group of 14 more
than the durable floor's (docs/reference/benchmarks/service.md, "The service under real traffic").
:func:`commit_usual` takes the usual group the short way, when

1. every item is an :class:`~._group.Arrival` of one campaign, not relayed, with
   no enrollment token, whose body (binary, its reports not kept)
   :func:`._group_bodies.read_records` reads as one record of one protocol that
   passes every check before the protocol's, of as many reports as the others;
2. the group's reports, validated at once (``validate_reports``, the one check of
   every report), are all valid;
3. in ONE transaction (``BEGIN IMMEDIATE``: the write lock) the campaign's row is
   read and found open, uncapped, without enrollment tokens or kept reports, the
   creation each batch was checked against and the config of the bodies'
   protocol; no batch id of the bound form was counted by another campaign (the
   read of :func:`._group._owned`); and every batch row is inserted (none was
   recorded).  Then one log row holds the change of all the group's reports, and
   ``COMMIT``.

Anything else, and the group goes the ordinary way; found in the transaction, it
is rolled back first, so nothing of it stays.  The usual group's answers (each an
acknowledgement, ``duplicate: false``) and rows are then the ones the ordinary way
gives it (``tests/serve/test_usual_group.py`` commits the same groups both ways and
compares the rows); an acknowledgement is returned only once ``COMMIT`` returned.
"""

from __future__ import annotations

import numpy as np

from ._campaigns import BOUND_BATCH_ID, arrival_ms, protocol_of
from ._claims import Mispredicted, insert_batch_rows
from ._database import Database
from ._group import Arrival, acknowledgement, log_statement, stored_config
from ._group_bodies import is_binary, read_records

__all__ = ["commit_usual", "ShortWay", "MOST_USUAL", "MAX_PAUSE"]

#: the most items of a usual group (its batch rows are one statement: 7 parameters a row)
MOST_USUAL = 512
#: the most groups that go the ordinary way after a group the short way rolled back (:class:`ShortWay`)
MAX_PAUSE = 64
_CAMPAIGN = "SELECT config, state, max_reports, enrollment, keep_reports, export_file_id"


def commit_usual(db: Database, writer: int, items: list) -> list | None:
    """Commit ``items`` as the usual group (see the module), as the log's ``writer``: each item's acknowledgement; None,
    with nothing committed, when they are not the usual group (they go the ordinary way).  Raises what fails the whole
    transaction (the database's errors), as the ordinary way does."""
    try:
        return _commit(db, writer, items)
    except Mispredicted:
        return None


class ShortWay:
    """The committer's use of :func:`commit_usual`.  A group that its transaction finds not the usual one (a batch
    recorded before, a campaign closed or changed, an id of another campaign) is rolled back and committed the
    ordinary way: 1.1-1.4x what the ordinary way alone costs (docs/reference/benchmarks/service.md, "Twelfth round").  Such groups come in
    waves (the journals of devices resending after a restart), so after one the next groups go the ordinary way at
    once: 1, then 2, 4, ... up to :data:`MAX_PAUSE` groups while it goes on; a usual group committed the short way
    ends the pause."""

    def __init__(self):
        self.pause = 0  # groups to go the ordinary way after the last rollback
        self._left = 0  # of those, still to go

    def commit(self, db: Database, writer: int, items: list) -> list | None:
        """:func:`commit_usual`, or None at once while paused."""
        if self._left:
            self._left -= 1
            return None
        try:
            answers = _commit(db, writer, items)
        except Mispredicted:
            self.pause = self._left = min(MAX_PAUSE, max(1, 2 * self.pause))
            return None
        if answers is not None:
            self.pause = 0
        return answers


def _commit(db: Database, writer: int, items: list) -> list | None:
    """:func:`commit_usual`, but :class:`Mispredicted` raised when the transaction found the group not the usual one
    (rolled back: nothing of it stays)."""
    if db.dialect != "sqlite" or not 0 < len(items) <= MOST_USUAL:
        return None
    read = _usual_reports(items)
    if read is None:
        return None
    batch, size = read
    first = items[0]
    campaign_id, minute = first.campaign_id, arrival_ms()
    ids = [item.batch_id for item in items]
    bound = [batch_id for batch_id in ids if BOUND_BATCH_ID.fullmatch(batch_id)]
    with db.transaction([_read(campaign_id, bound)]) as (found,):
        config = _plain_config(found[0] if found else None, first.campaign_file_id, batch.config)
        if config is None:
            raise Mispredicted  # not the usual group: rolled back, committed the ordinary way
        rows = [(campaign_id, batch_id, item.digest, minute, size, size, "{}") for batch_id, item in zip(ids, items)]
        if len(insert_batch_rows(db, rows)) != len(rows):
            raise Mispredicted  # a batch recorded before (a retry): answered the ordinary way
        change = protocol_of(config).aggregator()
        change.add_batch(batch)
        db.execute(*log_statement(writer, minute, campaign_id, change, {}, len(items)))
    answer = acknowledgement(campaign_id, "", size, size, {}, duplicate=False)  # each batch's but for its id
    return [{**answer, "batch_id": batch_id, "rejected": {}} for batch_id in ids]


def _usual_reports(items: list):
    """The validated reports of the usual group's bodies (a :class:`~dpdist.local.ReportBatch`, every report valid) and
    the reports of each body (the same in all); None if ``items`` are not that (conditions 1 and 2 of the module)."""
    pending = getattr(items[0], "pending", None)
    if pending is None or pending.keep_reports or not is_binary(pending):
        return None
    protocol, limits, kind = pending.protocol, pending.limits, pending.content_type
    campaign_id, file_id = items[0].campaign_id, items[0].campaign_file_id
    entries = []
    for index, item in enumerate(items):
        own = getattr(item, "pending", None)
        if (own is None or type(item) is not Arrival or own.protocol is not protocol or own.limits is not limits
                or own.content_type != kind or own.keep_reports
                or item.campaign_id != campaign_id or item.campaign_file_id != file_id
                or item.enrollment_sha256 is not None or item.received_ms is not None or item.tokens or item.reports
                or item.counted is not None):
            return None
        entries.append((index, item, own.body))
    records, failed = read_records(entries, protocol, limits.max_batch_work)
    if failed or not records:
        return None
    size = records[0][1]
    if any(record[1] != size for record in records):
        return None
    layout = protocol.report_format
    reports = np.frombuffer(b"".join(record[2] for record in records), dtype=layout.dtype)
    batch = protocol.validate_reports(reports.reshape((size * len(records), *layout.row_shape)))
    if batch.n_rejected_rows or batch.rejected or not isinstance(batch.reports, np.ndarray):
        return None
    return batch, size


def _read(campaign_id: str, bound: list[str]) -> tuple[str, tuple]:
    """The read of the campaign's row and whether one of the ids ``bound`` was counted by another campaign (the read of
    :func:`._group._owned` for a group of one campaign: a batch row of another campaign, or an id bound to one whose
    rows retention deleted): no row if the campaign is gone."""
    if not bound:
        return f"{_CAMPAIGN}, 0 FROM campaigns WHERE id = ?", (campaign_id,)
    marks = ", ".join("?" * len(bound))
    return (f"{_CAMPAIGN}, EXISTS (SELECT 1 FROM batches WHERE batch_id IN ({marks}) AND campaign_id <> ?) OR"
            " CASE WHEN EXISTS (SELECT 1 FROM bound_batch_ids) THEN"  # (empty until retention deletes batch rows)
            f" EXISTS (SELECT 1 FROM bound_batch_ids WHERE batch_id IN ({marks}) AND campaign_id <> ?) ELSE 0 END"
            " FROM campaigns WHERE id = ?", (*bound, campaign_id, *bound, campaign_id, campaign_id))


def _plain_config(found: tuple | None, file_id: str | None, config: dict) -> dict | None:
    """The campaign's config as stored (read once per process), if its row (``found``: :func:`_read`'s) is open,
    uncapped, without enrollment tokens or kept reports, of the creation ``file_id`` (None: any) and of ``config``, and
    no id of the group was counted by another campaign; else None."""
    if found is None:
        return None  # deleted: the ordinary way answers unknown_campaign
    text, state, cap, enrollment, keep, stored_file_id, taken = found
    stored = stored_config(text)
    if (state != "open" or cap is not None or enrollment or keep or file_id not in (None, stored_file_id)
            or stored != config or taken):
        return None
    return stored
