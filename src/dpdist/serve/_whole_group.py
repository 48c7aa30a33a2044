"""PostgreSQL: the usual group committed in ONE round trip (``BEGIN``, the claim, the log row, ``COMMIT``).

The usual group is one-report (or larger) batches of open campaigns that this
process read before, none capped, none with enrollment tokens or kept reports,
none relayed, every batch new.  Its outcome is then known before the transaction:
every batch claimed and acknowledged (``duplicate: false``), its ids bound to its
campaign, one log row per campaign with the change of all its batches.  So
:func:`whole_plan` checks those conditions on what this process knows (the
campaigns as :func:`remember` kept them from the last group that read them), and
the group is sent as one query: the locks, then ONE statement that checks the
campaigns' rows (still open, the same creation and config, uncapped, no tokens,
no kept reports), inserts the batch rows and the bindings and raises an error
(:data:`MARKER`) unless every batch was claimed and every id bound, then the log
rows and ``COMMIT``.  PostgreSQL skips the rest of a query after an error, so a
group whose claim or campaign differs from the plan commits nothing: it is rolled
back and committed the ordinary way (:func:`._group.commit_group`), whose answers
are then the ones it would have given anyway.  An acknowledgement is returned only
once the query, with its ``COMMIT``, returned.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ._campaigns import BOUND_BATCH_ID
from ._claims import BATCH_COLUMNS, batch_rows

__all__ = ["MARKER", "WholePlan", "remember", "whole_plan"]

#: what the error of a mispredicted group says (an integer cast of this text fails: 22P02)
MARKER = "dpdist: the group differs from its plan"
_CHECKED = (
    "WITH expected AS (SELECT * FROM json_to_recordset(?::json) AS e(id TEXT, config TEXT, export_file_id TEXT)),"
    " ready AS (SELECT count(*) AS n FROM campaigns JOIN expected ON campaigns.id = expected.id"
    " AND campaigns.config = expected.config AND campaigns.export_file_id = expected.export_file_id"
    " WHERE campaigns.state = 'open' AND campaigns.max_reports IS NULL AND campaigns.enrollment = 0"
    " AND campaigns.keep_reports = 0),"
    f" claimed AS (INSERT INTO batches ({BATCH_COLUMNS}) SELECT {BATCH_COLUMNS} FROM"
    " json_populate_recordset(NULL::batches, ?::json) WHERE (SELECT n FROM ready) = ?"
    " ON CONFLICT (campaign_id, batch_id) DO NOTHING RETURNING campaign_id, batch_id),"
    " bound AS (INSERT INTO bound_batch_ids (batch_id, campaign_id) SELECT batch_id, campaign_id FROM claimed"
    " WHERE batch_id IN (SELECT json_array_elements_text(?::json)) ON CONFLICT (batch_id) DO NOTHING RETURNING 1)"
    " SELECT CASE WHEN (SELECT count(*) FROM claimed) = ? AND (SELECT count(*) FROM bound) = ? THEN 0"
    f" ELSE ('{MARKER}: ' || (SELECT count(*) FROM claimed))::INTEGER END"
)
_FIELDS = tuple(BATCH_COLUMNS.split(", "))


@dataclass(frozen=True)
class _Seen:
    """What the last read of a campaign's row said (its creation, its config as stored and as read)."""

    file_id: str
    config_text: str
    config: dict
    plain: bool  # open, uncapped, no enrollment tokens, no kept reports


#: (database URL, campaign id) -> its row as this process last read it (:func:`remember`)
_SEEN: dict[tuple[str, str], _Seen] = {}


def remember(url: str, campaigns: dict) -> None:
    """Keep what the group's read of its campaigns (:class:`._group._Campaign`) in the database ``url`` said, for
    the plans of later groups."""
    if len(_SEEN) > 4096:
        _SEEN.clear()
    for campaign in campaigns.values():
        plain = (campaign.state == "open" and campaign.max_reports is None and not campaign.enrollment
                 and not campaign.keep_reports)
        _SEEN[url, campaign.id] = _Seen(campaign.file_id, campaign.config_text, campaign.config, plain)


@dataclass(frozen=True)
class WholePlan:
    """A group to commit in one round trip: its batches by campaign (positions in the group), in the group's order."""

    campaigns: dict[str, list[int]]
    seen: dict[str, _Seen]

    def claim(self, items: list, minute: int) -> tuple[str, tuple]:
        """The statement that checks the campaigns, claims every batch and binds its id, or raises :data:`MARKER`."""
        expected = [{"id": cid, "config": self.seen[cid].config_text, "export_file_id": self.seen[cid].file_id}
                    for cid in self.campaigns]
        indices = [index for group in self.campaigns.values() for index in group]
        rows = json.dumps([dict(zip(_FIELDS, row)) for row in batch_rows(items, indices, minute)])
        bound = [items[index].batch_id for index in indices if BOUND_BATCH_ID.fullmatch(items[index].batch_id)]
        return _CHECKED, (json.dumps(expected), rows, len(self.campaigns), json.dumps(bound), len(indices), len(bound))

    def config(self, campaign_id: str) -> dict:
        return self.seen[campaign_id].config


def whole_plan(url: str, items: list, held: dict[str, bool]) -> WholePlan | None:
    """The plan of ``items`` (a group for the database ``url``) if it is the usual group (see the module): every item
    a new batch with validated reports, not relayed, of a campaign read before as open and plain and locked shared
    (``held``), with the config and the creation it was checked against; else None.  (Two batches of one id:
    the statement claims or binds fewer than all, and the group is committed the ordinary way.)"""
    if not held or not all(held.values()):
        return None
    seen_by = {cid: _SEEN.get((url, cid)) for cid in held}
    campaigns: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        batch = getattr(item, "batch", None)
        seen = seen_by.get(item.campaign_id)
        if (batch is None or seen is None or not seen.plain or item.received_ms is not None or item.tokens
                or item.reports or item.smallest_group is not None
                or item.campaign_file_id not in (None, seen.file_id)
                or (batch.config is not seen.config and batch.config != seen.config)):
            return None
        campaigns.setdefault(item.campaign_id, []).append(index)
    return WholePlan(campaigns, {cid: seen for cid, seen in seen_by.items() if seen is not None})
