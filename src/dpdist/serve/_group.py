"""One group commit: many batches (and counted refusals) made durable in ONE transaction, each with its own answer.

A group is what the committer (:mod:`._committer`) collected while the previous
commit ran.  In its transaction, for every batch:

1. a batch checked against a campaign that was deleted and created again under
   its id since (by another process: its :class:`Arrival`'s ``campaign_file_id``,
   or its reports' config, is not the campaign's; so is a :class:`Refused` of
   admission's, by its ``campaign_file_id``) is answered alone,
   ``campaign_changed``, and not counted: the other batches of the group go on,
   and the caller checks it again against the campaign as it now is;
2. its batch row is inserted unless its key is recorded (``ON CONFLICT DO NOTHING``;
   SQLite: ``INSERT OR IGNORE``, :meth:`~._database.Database.insert_new`): the primary key
   (campaign, batch id) is the no-batch-twice rule, also between processes; a
   batch id already recorded answers with the stored acknowledgement
   (``duplicate``), or ``batch_id_reused`` if the body differs;
3. the checks of the campaign that need the database run on the batches just
   claimed: the batch id bound to one campaign, the campaign's ``max_reports``,
   the enrollment token's remaining reports, a relayed batch's reports (their HPKE
   ``enc``, ``replayed_report``) and tokens (``token_spent``) recorded once per campaign; a batch refused there leaves nothing
   behind (its rows are deleted in the same transaction) and is counted under the
   campaign's ``refused_batches``, once per batch id and reason (``refused_batch_ids``:
   a client that lost the answer sends the batch again and is refused again, not
   counted again), as is every :class:`Refused` that names its batch id;
4. the accepted batches' reports enter one aggregator per campaign
   (:meth:`Aggregator.add_batch` of their :meth:`ReportBatch.concatenate`: the one
   way reports enter an aggregator), whose statistic change is appended as ONE row of
   ``ingest_log`` (with the group's minute of arrival) by this process (its
   ``writer`` id); :mod:`._aggregates` folds the log into the campaign's parts; a
   relayed campaign's smallest batch so far (``relayed_campaigns.smallest_batch``)
   is lowered when the group counts a smaller one.

So after a crash the aggregate (parts + log) equals the sum of the batches
recorded, and a batch is either counted and recorded or neither.  Nothing here
reads or rewrites a campaign's whole statistic, and nothing writes a row shared
by the processes of the service: each writes its own log rows and its own
``arrivals`` rows.  PostgreSQL: each campaign of the group is locked by an
advisory lock, shared (groups of many processes run together) unless the
campaign has ``max_reports`` (its count must be exact: exclusive); opening,
closing, reconfiguring and deleting take it exclusive, so a group never counts a
batch into a campaign closed (or deleted) before the group committed.

PostgreSQL's round trips: the usual group (new batches of open campaigns with no
cap, token or kept reports) is ONE query, ``BEGIN`` to ``COMMIT``, whose claim
checks that it is that group (:mod:`._whole_group`); another group sends its
batch rows' claim with ``BEGIN`` (:mod:`._claims`) and its log row with
``COMMIT``.  Either one that finds other than it planned is rolled back and the
group committed as above, statement by statement: the same answers either way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import chain

from ..local import ReportBatch
from ._campaigns import BOUND_BATCH_ID, arrival_ms, protocol_of
from ._claims import EarlyClaim, Mispredicted, batch_rows, early_claim, insert_batch_rows, rejected_json
from ._database import Database
from ._deltas import encode_delta
from ._whole_group import MARKER, remember, whole_plan
from .._guard._refusals import Conflict, Forbidden, NotFound, Refusal

__all__ = ["Arrival", "Refused", "RECORDED", "commit_group", "acknowledgement", "log_statement", "stored_config"]

_CHUNK = 400  # rows per multi-row statement (SQLite allows 32,766 parameters)


@dataclass
class Arrival:
    """A batch waiting for its group commit: its validated reports (a :class:`~dpdist.local.ReportBatch`), or None
    when the campaign was not open as it arrived (only an acknowledgement already recorded can answer it)."""

    campaign_id: str
    batch_id: str
    digest: str
    batch: object | None
    accepted: int  # the reports of the batch that count (its valid ones)
    n_read: int
    raw: bytes | None = None
    enrollment_sha256: str | None = None
    received_ms: int | None = None  # the arrival time stored instead of the group's minute (a relayed campaign's one time)
    tokens: list = field(default_factory=list)  # a relayed batch's token nonces (hex), spent when it counts
    campaign_file_id: str | None = None  # the campaign checked against (its export_file_id, new at each creation)
    pending: object | None = None  # a body the committer decodes before the group's transaction (_group_bodies)
    smallest_group: int | None = None  # a relayed batch's admitted reports of the envelope it holds fewest of
    reports: list = field(default_factory=list)  # a relayed batch's reports' HPKE encapsulated keys (hex), recorded when it counts
    work: int = 0  # what counting its reports costs the committer (element operations: reports x aggregation_work)
    counted: object | None = None  # its reports counted already (an Aggregator, off the committer thread): merged
    trace: object | None = field(default=None, repr=False, compare=False)  # its request's span (_committer: traces on)


@dataclass
class Refused:
    """A whole batch refused before its commit (malformed, too large, ...), counted under its campaign: once per
    ``batch_id`` and reason, or (no batch id known) each time."""

    campaign_id: str
    reason: str
    batch_id: str | None = None
    unless_recorded: bool = False  # admission's refusal: not if the batch id was counted before (its outcome RECORDED)
    campaign_file_id: str | None = None  # the campaign refused (its export_file_id), if admission's refusal
    trace: object | None = field(default=None, repr=False, compare=False)  # its request's span (_committer: traces on)


#: the outcome of a :class:`Refused` with ``unless_recorded`` whose batch id is recorded: the batch goes on (a retry
#: gets its acknowledgement), nothing is counted
RECORDED = "recorded"


@dataclass
class _Campaign:
    """What a group needs of a campaign's row, and what the group adds to it."""

    id: str
    config: dict
    state: str
    max_reports: int | None
    enrollment: bool
    keep_reports: bool
    file_id: str  # its export_file_id: which creation of the campaign id this is
    config_text: str = ""  # its config as stored
    total: int | None = None  # capped campaigns: reports counted before this group
    minute: int | None = None  # the arrival time its log row states instead of the group's (relayed campaigns)
    smallest: int | None = None  # the smallest relayed batch this group counts (relayed_campaigns.smallest_batch)
    admitted: list = field(default_factory=list)  # the ReportBatches this group counts
    refused: dict = field(default_factory=dict)


def acknowledgement(campaign_id, batch_id, n_read, accepted, rejected, *, duplicate) -> dict:
    return {
        "campaign": campaign_id,
        "batch_id": batch_id,
        "n_read": int(n_read),
        "accepted": int(accepted),
        "rejected": {str(k): int(v) for k, v in rejected.items()} if rejected else {},
        "duplicate": bool(duplicate),
    }


def commit_group(db: Database, writer: int, items: list) -> list:
    """Commit ``items`` (:class:`Arrival` and :class:`Refused`) in one transaction, as the log's ``writer``; per item
    its acknowledgement (a dict), None (a counted refusal) or the :class:`Refusal` it gets.  Raises only what fails
    the whole transaction (the database's errors).  PostgreSQL: the usual group in one round trip
    (:mod:`._whole_group`); else the batch rows' claim goes with ``BEGIN`` when the group's locks are known
    (:mod:`._claims`); the ordinary way if either mispredicted (rolled back: nothing of it stays)."""
    minute = arrival_ms()
    ids = sorted({item.campaign_id for item in items})
    held = _known_locks(db, ids)
    plan = whole_plan(db.url, items, held)
    if plan is not None:
        locks = [db.lock_statement(cid, shared=True) for cid in ids]
        logs = [_log_row(writer, minute, cid, plan.config(cid), [_admitted(items[index]) for index in group], {})
                for cid, group in plan.campaigns.items()]
        if db.at_once([*locks, plan.claim(items, minute), *logs], MARKER):
            return [acknowledgement(item.campaign_id, item.batch_id, item.n_read, item.accepted, item.batch.rejected,
                                    duplicate=False) for item in items]
    early = early_claim(db, items, minute) if held else None
    if early is not None:
        try:
            return _commit(db, writer, items, minute, ids, held, early)
        except Mispredicted:  # rolled back: nothing of it stays
            held = _known_locks(db, ids)  # as its read found the campaigns (capped since: locked exclusively at once)
    return _commit(db, writer, items, minute, ids, held, None)


def _commit(db: Database, writer: int, items: list, minute: int, ids: list[str], held: dict[str, bool],
            early: EarlyClaim | None) -> list:
    """:func:`commit_group`'s transaction (``early``: the claim sent with ``BEGIN``, checked against the reads)."""
    outcomes: list = [None] * len(items)
    locks = [db.lock_statement(cid, shared=held[cid]) for cid in ids] if held else []
    reads = _reads(ids)
    with db.transaction([*locks, *reads, *([early.statement] if early is not None else [])]) as first:
        locked = dict(held)
        campaigns = _lock_campaigns(db, ids, first[len(locks):len(locks) + len(reads)], locked)
        if early is not None and locked != held:
            raise Mispredicted  # a campaign locked again (capped since): the claim went before its lock
        ahead = None if early is None else (early.indices, *EarlyClaim.keys(first[-1]))
        claimed = _claim(db, items, campaigns, outcomes, minute, ahead)
        refusals = _check_claimed(db, claimed, items, campaigns, outcomes, None if ahead is None else ahead[2])
        _pass_recorded(db, items, outcomes)
        refusals += [(item.campaign_id, item.batch_id, item.reason) for index, item in enumerate(items)
                     if isinstance(item, Refused) and outcomes[index] is None]
        _count_refusals(db, refusals, campaigns)
        _append(db, writer, minute, items, campaigns, outcomes)
    return outcomes


_COLUMNS = "id, config, state, max_reports, enrollment, keep_reports, export_file_id"
#: PostgreSQL: whether each campaign seen had ``max_reports`` when this process last read it (the lock it takes)
_CAPPED: dict[str, bool] = {}


def _reads(ids: list[str]) -> list[tuple[str, tuple]]:
    """The statements that read the rows of the campaigns ``ids``."""
    return [(f"SELECT {_COLUMNS} FROM campaigns WHERE id IN ({', '.join('?' * len(chunk))})", tuple(chunk))
            for chunk in _chunks(ids)]


def _campaigns(results) -> dict[str, _Campaign]:
    return {cid: _Campaign(cid, stored_config(config), state, None if cap is None else int(cap), bool(enrollment), bool(keep),
                           file_id, config) for rows in results for cid, config, state, cap, enrollment, keep, file_id in rows}


def _known_locks(db: Database, ids: list[str]) -> dict[str, bool]:
    """PostgreSQL: campaign id -> lock shared, for every campaign of the group when this process knows whether each is
    capped (their locks are then sent with ``BEGIN``, before the read); else empty (read, lock, read again)."""
    if db.dialect == "sqlite":
        return {}
    known = {cid: _CAPPED.get(cid) for cid in ids}
    return {} if None in known.values() else {cid: not capped for cid, capped in known.items()}


def _lock_campaigns(db: Database, ids: list[str], first: list, held: dict[str, bool]) -> dict[str, _Campaign]:
    """The group's campaigns (``first``: the rows :func:`_reads` read), each locked (PostgreSQL) in a fixed order:
    shared, exclusive for capped ones.  A campaign locked shared that the read finds capped (it was reconfigured since
    this process last saw it) is then locked exclusively and read again: a capped campaign's count is always exact.
    ``held``: the locks taken with ``BEGIN`` (campaign id -> shared)."""
    campaigns = _campaigns(first)
    if db.dialect != "sqlite":
        while True:
            capped = {cid for cid, campaign in campaigns.items() if campaign.max_reports is not None}
            wanted = [cid for cid in ids if cid not in held or (held[cid] and cid in capped)]
            if not wanted:
                break
            for campaign_id in wanted:
                held[campaign_id] = campaign_id not in capped
                db.lock_name(campaign_id, shared=held[campaign_id])
            campaigns = _campaigns(db.execute(statement, parameters) for statement, parameters in _reads(ids))  # as of the locks
        if len(_CAPPED) > 4096:
            _CAPPED.clear()
        _CAPPED.update({cid: campaign.max_reports is not None for cid, campaign in campaigns.items()})  # known ones only
        remember(db.url, campaigns)  # for the plans of later groups (_whole_group)
    for campaign in campaigns.values():
        if campaign.max_reports is not None:
            campaign.total = _total(db, campaign.id)
    return campaigns


_CONFIGS: dict[str, dict] = {}


def stored_config(text: str) -> dict:
    """A stored config read once per process: the same object each group (never changed: :func:`protocol_of` finds
    its protocol by it, with no JSON per group)."""
    config = _CONFIGS.get(text)
    if config is None:
        if len(_CONFIGS) > 256:
            _CONFIGS.clear()
        config = _CONFIGS[text] = json.loads(text)
    return config


def _total(db: Database, campaign_id: str) -> int:
    rows = db.execute(
        "SELECT SUM(n) FROM (SELECT n FROM campaign_parts WHERE campaign_id = ? UNION ALL"
        " SELECT n FROM ingest_log WHERE campaign_id = ?) AS counted",
        (campaign_id, campaign_id),
    )
    return int(rows[0][0] or 0)


def _claim(db: Database, items: list, campaigns: dict, outcomes: list, minute: int, ahead: tuple | None) -> list[int]:
    """Insert the batch rows of the batches that may count; answer the others (recorded, not open, unknown).
    ``ahead``: the claim sent with ``BEGIN`` (its batches, the keys it inserted and those it bound), if any: used when
    its batches are this group's candidates, else :class:`Mispredicted`."""
    candidates, lookups = [], []
    for index, item in enumerate(items):
        if isinstance(item, Refused):
            if item.campaign_id not in campaigns:
                outcomes[index] = _unknown(item.campaign_id)
            elif item.campaign_file_id not in (None, campaigns[item.campaign_id].file_id):
                outcomes[index] = _changed(campaigns[item.campaign_id])  # not counted: admission reads the campaign again
            continue
        campaign = campaigns.get(item.campaign_id)
        if campaign is None:
            outcomes[index] = _unknown(item.campaign_id)
        elif item.campaign_file_id not in (None, campaign.file_id) or (item.batch is not None and item.batch.config != campaign.config):
            outcomes[index] = _changed(campaign)  # deleted and created again since the batch was checked: not counted
        elif campaign.state == "open" and item.batch is not None:
            candidates.append(index)
        else:
            lookups.append(index)
    if ahead is not None:
        if candidates != ahead[0]:
            raise Mispredicted  # a campaign not open, changed or unknown: rolled back, committed the ordinary way
        inserted = set(ahead[1])
    else:
        inserted = set()
        for chunk in _chunks(candidates):
            inserted.update(insert_batch_rows(db, batch_rows(items, chunk, minute)))
    claimed = []
    for index in candidates:  # the same key twice in one group: one row inserted, the second answered as its duplicate
        if (items[index].campaign_id, items[index].batch_id) in inserted:
            inserted.discard((items[index].campaign_id, items[index].batch_id))
            claimed.append(index)
    taken = set(claimed)
    _answer_recorded(db, items, [index for index in candidates if index not in taken] + lookups, campaigns, outcomes)
    return claimed


def _stored(db: Database, items: list, columns: str = "body_sha256, n_read, accepted, rejected") -> dict:
    """The batch rows of ``items``' (campaign, batch id): (campaign, batch id) -> ``columns``.  One read per campaign
    of the ids its key finds (SQLite scanned the whole table for a list of (campaign, batch id) pairs)."""
    stored: dict = {}
    by_campaign: dict[str, set[str]] = {}
    for item in items:
        by_campaign.setdefault(item.campaign_id, set()).add(item.batch_id)
    for campaign_id, batch_ids in by_campaign.items():
        for chunk in _chunks(sorted(batch_ids)):
            for row in db.execute(f"SELECT campaign_id, batch_id, {columns} FROM batches WHERE campaign_id = ? AND"
                                  f" batch_id IN ({', '.join('?' * len(chunk))})", (campaign_id, *chunk)):
                stored[(row[0], row[1])] = row[2:]
    return stored


def _pass_recorded(db: Database, items: list, outcomes: list) -> None:
    """Admission's refusals (``unless_recorded``) of batch ids counted before: :data:`RECORDED`, not counted."""
    asking = [index for index, item in enumerate(items)
              if isinstance(item, Refused) and item.unless_recorded and item.batch_id is not None and outcomes[index] is None]
    if asking:
        stored = _stored(db, [items[index] for index in asking], "1")
        for index in asking:
            if (items[index].campaign_id, items[index].batch_id) in stored:
                outcomes[index] = RECORDED


def _answer_recorded(db: Database, items: list, indices: list[int], campaigns: dict, outcomes: list) -> None:
    """Batches whose id is recorded get the stored acknowledgement (or batch_id_reused); the others, why not."""
    stored = _stored(db, [items[index] for index in indices])
    for index in indices:
        item = items[index]
        record = stored.get((item.campaign_id, item.batch_id))
        if record is None:
            outcomes[index] = _not_open(campaigns[item.campaign_id])
        elif record[0] != item.digest:
            outcomes[index] = Conflict(
                "batch_id_reused",
                f"Batch {item.batch_id!r} of campaign {item.campaign_id!r} was already received with other bytes; a "
                "retry resends the same bytes (the same JSON in other white space is other bytes), and a new batch "
                "needs a new batch id.",
            )
        else:
            outcomes[index] = acknowledgement(item.campaign_id, item.batch_id, record[1], record[2], json.loads(record[3]),
                                              duplicate=True)


def _check_claimed(db: Database, claimed: list[int], items: list, campaigns: dict, outcomes: list,
                   bound_ahead: set | None = None) -> list[tuple]:
    """The checks that need the database, on the batches this group claimed; refused ones leave no row behind.  The
    refusals to count: ``(campaign id, batch id, reason)``.  ``bound_ahead``: the ids the claim sent with ``BEGIN``
    bound."""
    bound = _bind(db, [items[index] for index in claimed], bound_ahead)
    undo, refusals = [], []
    for index in claimed:
        item, campaign = items[index], campaigns[items[index].campaign_id]
        refusal = _refusal(db, item, campaign, bound)
        if refusal is None:
            outcomes[index] = acknowledgement(item.campaign_id, item.batch_id, item.n_read, item.accepted,
                                              item.batch.rejected, duplicate=False)
            continue
        outcomes[index] = refusal
        refusals.append((item.campaign_id, item.batch_id, refusal.code))
        undo.append(item)
    for item in undo:
        db.execute("DELETE FROM batches WHERE campaign_id = ? AND batch_id = ?", (item.campaign_id, item.batch_id))
        if bound.get((item.batch_id, item.campaign_id)) == "ours":
            db.execute("DELETE FROM bound_batch_ids WHERE batch_id = ? AND campaign_id = ?", (item.batch_id, item.campaign_id))
    return refusals


def _count_refusals(db: Database, refusals: list[tuple], campaigns: dict) -> None:
    """Count each refusal ``(campaign id, batch id or None, reason)`` under its campaign's ``refused_batches``: a batch
    id once per reason (the first time it is recorded in ``refused_batch_ids``), a refusal without one each time."""
    named = sorted({refusal for refusal in refusals if refusal[1] is not None})
    first = set()
    for chunk in _chunks(named):
        marks = ", ".join(["(?, ?, ?)"] * len(chunk))
        first.update(db.execute(
            db.insert_new("refused_batch_ids (campaign_id, batch_id, reason)", f"VALUES {marks}",
                          "campaign_id, batch_id, reason", "campaign_id, batch_id, reason"),
            tuple(chain.from_iterable(chunk)),
        ))
    for campaign_id, batch_id, reason in refusals:
        if batch_id is None or (campaign_id, batch_id, reason) in first:
            first.discard((campaign_id, batch_id, reason))  # the same batch twice in one group: counted once
            _count(campaigns[campaign_id], reason)


def _bind(db: Database, items: list, ahead: set | None = None) -> dict[tuple[str, str], str]:
    """Bind the batch ids of :data:`BOUND_BATCH_ID`'s form to their campaigns: (id, campaign) -> "ours" (bound now),
    "same" (bound to this campaign before) or "other" (counted by another campaign; also a second campaign of the
    group claiming an id the first binds now).

    SQLite (one writer at a time: this transaction holds the write lock): an id is bound by its batch rows, keyed by
    batch id first (schema version 9), and by ``bound_batch_ids`` once retention deleted them: one read of each,
    nothing written.  PostgreSQL (group commits of many processes at once): ``bound_batch_ids``' key binds it
    (``ahead``: the (id, campaign) pairs the claim sent with ``BEGIN`` bound so, if it did)."""
    wanted = sorted({(item.batch_id, item.campaign_id) for item in items if BOUND_BATCH_ID.fullmatch(item.batch_id)})
    if db.dialect == "sqlite":
        return _owned(db, wanted)
    result = {}
    for chunk in _chunks(wanted):
        if ahead is None:
            marks = ", ".join(["(?, ?)"] * len(chunk))
            rows = db.execute(
                f"INSERT INTO bound_batch_ids (batch_id, campaign_id) VALUES {marks} ON CONFLICT (batch_id) DO NOTHING"
                " RETURNING batch_id, campaign_id", tuple(chain.from_iterable(chunk))
            )
        else:
            rows = [pair for pair in chunk if pair in ahead]
        result.update({(row[0], row[1]): "ours" for row in rows})
        others = [pair for pair in chunk if pair not in result]
        if others:
            marks = ", ".join("?" * len(others))
            owners = dict(db.execute(f"SELECT batch_id, campaign_id FROM bound_batch_ids WHERE batch_id IN ({marks})",
                                     tuple(pair[0] for pair in others)))
            result.update({(batch_id, campaign_id): "same" if owners.get(batch_id) == campaign_id else "other"
                           for batch_id, campaign_id in others})
    return result


def _owned(db: Database, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """SQLite's :func:`_bind` of ``wanted`` (sorted (batch id, campaign) pairs this group claimed): "other" for an id
    that a batch row of another campaign or ``bound_batch_ids`` bound before, else "ours" for the first campaign of
    the group that claims it (as the first insert of its key would bind it) and "other" for the rest.  By (batch id,
    campaign).  When one campaign claims them all (a group of one campaign, the usual one), its own rows (this group's,
    inserted already) are left out by the read itself: they bind nothing before, and reading them cost a row each."""
    claims: dict[str, list] = {}
    for batch_id, campaign_id in wanted:
        claims.setdefault(batch_id, []).append(campaign_id)
    ids = list(claims)  # sorted: ``wanted`` is
    only = {campaign_id for _, campaign_id in wanted}
    alone = only.pop() if len(only) == 1 else None
    result = {}
    for chunk in _chunks(ids, _CHUNK // 2):
        marks = ", ".join("?" * len(chunk))
        others = "" if alone is None else " AND campaign_id <> ?"
        parameters = tuple(chunk) if alone is None else (*chunk, alone)
        owners: dict[str, set] = {}
        for batch_id, campaign_id in db.execute(
                f"SELECT batch_id, campaign_id FROM batches WHERE batch_id IN ({marks}){others} UNION ALL"
                f" SELECT batch_id, campaign_id FROM bound_batch_ids WHERE batch_id IN ({marks}){others}",
                parameters + parameters):
            owners.setdefault(batch_id, set()).add(campaign_id)
        for batch_id in chunk:
            first, *rest = claims[batch_id]
            owned = owners.get(batch_id)
            # bound before: by a campaign that does not claim it in this group (this group's own rows are inserted already)
            result[(batch_id, first)] = "other" if owned is not None and not owned.issubset(claims[batch_id]) else "same"
            for campaign_id in rest:
                result[(batch_id, campaign_id)] = "other"
    return result


def _refusal(db: Database, item: Arrival, campaign: _Campaign, bound: dict) -> Refusal | None:
    if bound.get((item.batch_id, item.campaign_id)) == "other":
        return Conflict(
            "batch_of_another_campaign",
            f"Batch {item.batch_id!r} was already counted by another campaign; a batch (a report file, or a client's "
            "batch under its random id) is counted by one campaign only.",
        )
    incoming = item.accepted
    if campaign.max_reports is not None and (campaign.total or 0) + incoming > campaign.max_reports:
        return _full(campaign, incoming)
    if campaign.enrollment:
        charged = db.rowcount(
            "UPDATE enrollments SET reports_left = reports_left - ? WHERE token_sha256 = ? AND campaign_id = ?"
            " AND reports_left >= ?",
            (int(item.n_read), item.enrollment_sha256 or "", campaign.id, int(item.n_read)),
        )
        if charged != 1:
            return Forbidden(
                "contribution_limit",
                f"This enrollment token of campaign {campaign.id!r} has fewer reports left than the batch's {item.n_read}; "
                "a device sends at most the reports its token was issued for.",
            )
    if item.tokens or item.reports:
        refusal = _spend(db, item)
        if refusal is not None:
            return refusal
    if campaign.total is not None:
        campaign.total += incoming
    if item.received_ms is not None:  # a relayed batch: its size is its admitted reports (what the collector verified)
        campaign.minute = item.received_ms
        # the batch's size as the statement counts it: its admitted reports, or, in a batch of both envelopes (which the
        # collector tells apart), those of the envelope it holds fewest of (a report is hidden among its envelope's only)
        size = int(item.accepted if item.smallest_group is None else min(item.smallest_group, item.accepted))
        if size > 0:  # a batch of no admitted report held no device's report: it hides no one, exposes no one
            campaign.smallest = size if campaign.smallest is None else min(campaign.smallest, size)
    campaign.admitted.append(_admitted(item))
    return None


def _admitted(item: Arrival):
    """What an admitted batch adds to its campaign's log row: its reports counted already (an Aggregator), else its
    batch (counted with the group's others, :func:`_log_row`)."""
    return item.batch if item.counted is None else item.counted


def _spend(db: Database, item: Arrival) -> Refusal | None:
    """Record a relayed batch's reports (their encapsulated keys) as counted and its token nonces as spent, or refuse the
    batch (leaving none recorded) if another batch recorded one of them since it was opened: only a relay that sends one
    report or one token twice makes two batches race."""
    if not _insert_new(db, "relayed_reports", "enc", item.campaign_id, item.reports):
        return Conflict("replayed_report", f"A report of relayed batch {item.batch_id!r} was counted by another batch of "
                                           f"campaign {item.campaign_id!r}: the relay sent it twice. Nothing of this batch "
                                           "was counted.")
    if not _insert_new(db, "relayed_tokens", "nonce", item.campaign_id, item.tokens):
        _delete_values(db, "relayed_reports", "enc", item.campaign_id, item.reports)
        return Conflict("token_spent", f"A token of relayed batch {item.batch_id!r} was spent by another batch of campaign "
                                       f"{item.campaign_id!r}: the relay sent it twice. Nothing of this batch was counted.")
    return None


def _insert_new(db: Database, table: str, column: str, campaign_id: str, values: list) -> bool:
    """Insert (campaign, value) rows of ``values`` (distinct) into ``table``; False, with none of them left inserted, if
    one was there already."""
    inserted = []
    for chunk in _chunks(values):
        marks = ", ".join(["(?, ?)"] * len(chunk))
        inserted += [row[0] for row in db.execute(
            db.insert_new(f"{table} (campaign_id, {column})", f"VALUES {marks}", f"campaign_id, {column}", column),
            tuple(value for one in chunk for value in (campaign_id, one)))]
    if len(inserted) == len(values):
        return True
    _delete_values(db, table, column, campaign_id, inserted)
    return False


def _delete_values(db: Database, table: str, column: str, campaign_id: str, values: list) -> None:
    """Delete the (campaign, value) rows of ``values`` from ``table`` (what :func:`_insert_new` inserted)."""
    for chunk in _chunks(values):
        db.execute(f"DELETE FROM {table} WHERE campaign_id = ? AND {column} IN ({', '.join('?' * len(chunk))})",
                   (campaign_id, *chunk))


def _log_row(writer: int, minute: int, campaign_id: str, config: dict, admitted: list, refused: dict) -> tuple[str, tuple]:
    """The log row of a group's change to one campaign: its ``admitted`` batches' reports (entering an aggregator the
    one way, :meth:`Aggregator.add_batch` of their concatenation; a batch counted already, an Aggregator of it, merged),
    its ``refused`` batches by reason."""
    protocol = protocol_of(config)
    change = protocol.aggregator()
    batches = [batch for batch in admitted if isinstance(batch, ReportBatch)]
    if batches:
        change.add_batch(ReportBatch.concatenate(batches, protocol.report_format, protocol.config()))
    for counted in admitted:
        if not isinstance(counted, ReportBatch):
            change.merge(counted)
    return log_statement(writer, minute, campaign_id, change, refused, len(admitted))


def log_statement(writer: int, minute: int, campaign_id: str, change, refused: dict, batches: int) -> tuple[str, tuple]:
    """The ``ingest_log`` row of ``change`` (an aggregator of what ``batches`` batches of a group added to a campaign)
    and of the group's ``refused`` batches by reason, written by ``writer`` in ``minute``."""
    return ("INSERT INTO ingest_log (campaign_id, writer, minute_ms, n, statistic, rejected, refused, refusals, batches)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (campaign_id, writer, minute, change.n, encode_delta(change.statistic), rejected_json(change.rejected),
             rejected_json(refused), sum(refused.values()), batches))


def _append(db: Database, writer: int, minute: int, items: list, campaigns: dict, outcomes: list) -> None:
    """The group's one log row per campaign (its change, arrivals and refusals) and the raw reports kept."""
    for campaign in campaigns.values():
        if not campaign.admitted and not campaign.refused:
            continue
        db.execute_at_commit(*_log_row(writer, minute if campaign.minute is None else campaign.minute, campaign.id,
                                       campaign.config, campaign.admitted, campaign.refused))
        if campaign.smallest is not None:  # locks the relayed campaign's row only when its minimum falls
            db.execute_at_commit(
                "UPDATE relayed_campaigns SET smallest_batch = ? WHERE campaign_id = ?"
                " AND (smallest_batch IS NULL OR smallest_batch > ?)", (campaign.smallest, campaign.id, campaign.smallest),
            )
    for index, item in enumerate(items):
        if isinstance(item, Arrival) and isinstance(outcomes[index], dict) and not outcomes[index]["duplicate"]:
            if campaigns[item.campaign_id].keep_reports and item.raw is not None and item.accepted:
                db.execute(
                    "INSERT INTO reports (campaign_id, batch_id, received_ms, n, payload) VALUES (?, ?, ?, ?, ?)",
                    (item.campaign_id, item.batch_id, minute if item.received_ms is None else item.received_ms, item.accepted,
                     item.raw),
                )


def _full(campaign: _Campaign, incoming: int) -> Conflict:
    """The refusal of a batch that does not fit under a capped campaign's ``max_reports``: the campaign is full, or the
    batch is larger than the room left (then refused whole, and the campaign stays open for batches that fit)."""
    held, cap = campaign.total or 0, int(campaign.max_reports or 0)
    if held >= cap:
        return Conflict("campaign_full", f"Campaign {campaign.id!r} is full: it accepts at most {cap} reports "
                        f"(max_reports) and holds {held}.")
    room = cap - held
    return Conflict("campaign_full", f"This batch of {incoming} reports is larger than the room left in campaign "
                    f"{campaign.id!r}: {room} report(s) (max_reports {cap}, it holds {held}). The batch is refused whole "
                    f"and the campaign stays open; send at most {room} report(s).")


def _count(campaign: _Campaign, reason: str) -> None:
    campaign.refused[reason] = campaign.refused.get(reason, 0) + 1


def _unknown(campaign_id: str) -> NotFound:
    return NotFound("unknown_campaign", f"There is no campaign {campaign_id!r}.")


def _changed(campaign: _Campaign) -> Conflict:
    return Conflict("campaign_changed", f"Campaign {campaign.id!r} was deleted and created again since this batch was "
                    "checked against it; nothing of the batch was counted. Send it again: it is checked against the "
                    "campaign as it is now.")


def _not_open(campaign: _Campaign) -> Conflict:
    if campaign.state == "created":
        return Conflict("campaign_not_open", f"Campaign {campaign.id!r} is not open yet; it accepts no reports.")
    if campaign.state == "closed":
        return Conflict("campaign_closed", f"Campaign {campaign.id!r} is closed; it accepts no more reports.")
    return Conflict("campaign_not_open", f"Campaign {campaign.id!r} was not open; retry the batch.")


def _chunks(values: list, size: int = _CHUNK):
    for start in range(0, len(values), size):
        yield values[start : start + size]
