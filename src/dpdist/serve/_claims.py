"""A group's batch rows: the statements that claim them (the exactly-once key), and PostgreSQL's claim sent with ``BEGIN``.

A batch counts once because its row's primary key (campaign, batch id) is
inserted ``ON CONFLICT DO NOTHING`` in the transaction that counts it
(:func:`insert_batch_rows`); on PostgreSQL a batch id of the bound form is then
bound to its campaign by ``bound_batch_ids``' key (:func:`._group._bind`).

On PostgreSQL each statement is a round trip, and each round trip costs the
server's committer thread its own CPU (psycopg, the socket's send and wake-up,
the database's process taking the core in between).  So when a group's locks are
known (:func:`._group._known_locks`), :func:`early_claim` predicts which of its
batches will be claimed (every :class:`~._group.Arrival` with validated reports:
its campaign open, as it usually is) and sends their claim, batch rows and
bindings in ONE statement with ``BEGIN``, the locks and the campaigns' read.
The group's transaction then checks the prediction against what it read: the
same batches are candidates, nothing was locked again.  If it holds, the rows
that statement returned are what the two statements would have returned; if not,
:class:`Mispredicted` rolls the transaction back (nothing of it stays) and the
group is committed the ordinary way.  A write in ``BEGIN``'s round trip is safe to
send again on a new connection: a dropped connection rolls its transaction back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import chain

from ._campaigns import BOUND_BATCH_ID
from ._database import Database

__all__ = ["EarlyClaim", "Mispredicted", "batch_rows", "early_claim", "insert_batch_rows", "rejected_json"]

BATCH_COLUMNS = "campaign_id, batch_id, body_sha256, received_ms, n_read, accepted, rejected"
_BATCH_FIELDS = tuple(BATCH_COLUMNS.split(", "))
_CLAIM = " ON CONFLICT (campaign_id, batch_id) DO NOTHING RETURNING campaign_id, batch_id"
#: PostgreSQL: batch rows from one JSON parameter (``json_populate_recordset``: psycopg dumps a string in C, where its
#: array dumpers loop in Python, about 50 us a column of a group)
_ROWS = f"SELECT {BATCH_COLUMNS} FROM json_populate_recordset(NULL::batches, ?::json)"
#: PostgreSQL: the claim of :func:`early_claim`: the batch rows of open campaigns (a campaign deleted or not open gets
#: none: ``bound_batch_ids`` references the campaigns), then the bound ids of those inserted; the keys of each, 0 for a
#: batch row, 1 for a binding
_EARLY = (
    f"WITH claimed AS (INSERT INTO batches ({BATCH_COLUMNS}) SELECT {BATCH_COLUMNS} FROM"
    " json_populate_recordset(NULL::batches, ?::json) AS arrived WHERE EXISTS (SELECT 1 FROM campaigns"
    f" WHERE campaigns.id = arrived.campaign_id AND campaigns.state = 'open'){_CLAIM}),"
    " bound AS (INSERT INTO bound_batch_ids (batch_id, campaign_id) SELECT batch_id, campaign_id FROM claimed"
    " WHERE batch_id IN (SELECT json_array_elements_text(?::json)) ON CONFLICT (batch_id) DO NOTHING"
    " RETURNING campaign_id, batch_id)"
    " SELECT campaign_id, batch_id, 0 FROM claimed UNION ALL SELECT campaign_id, batch_id, 1 FROM bound"
)


class Mispredicted(Exception):
    """The claim sent with ``BEGIN`` assumed what the group's transaction then did not find (a campaign not open,
    changed, locked again): the transaction is rolled back and the group committed the ordinary way."""


def rejected_json(rejected: dict) -> str:
    """Counts by reason as stored (a batch's rejected reports, a group's refusals; most are empty)."""
    return json.dumps(rejected, sort_keys=True) if rejected else "{}"


def batch_rows(items: list, indices: list[int], minute: int) -> list[tuple]:
    """The batch rows (:data:`BATCH_COLUMNS`) of ``items[indices]`` (arrivals with validated reports), received in
    ``minute`` unless one says when (a relayed batch)."""
    rows = []
    for index in indices:
        item = items[index]
        received = minute if item.received_ms is None else item.received_ms
        rows.append((item.campaign_id, item.batch_id, item.digest, received, item.n_read, item.accepted,
                     rejected_json(item.batch.rejected)))
    return rows


def insert_batch_rows(db: Database, rows: list[tuple]) -> list[tuple]:
    """Insert batch rows unless their (campaign, batch id) is recorded; the keys inserted.  PostgreSQL: one statement
    text whatever the group's size (the server prepares a statement it sees again), its rows one JSON parameter."""
    key = "campaign_id, batch_id"
    if db.dialect != "postgresql":
        marks = ", ".join(["(?, ?, ?, ?, ?, ?, ?)"] * len(rows))
        return db.execute(db.insert_new(f"batches ({BATCH_COLUMNS})", f"VALUES {marks}", key, key), tuple(chain.from_iterable(rows)))
    return db.execute(db.insert_new(f"batches ({BATCH_COLUMNS})", _ROWS, key, key), (_document(rows),))


def _document(rows: list[tuple]) -> str:
    return json.dumps([dict(zip(_BATCH_FIELDS, row)) for row in rows])


@dataclass(frozen=True)
class EarlyClaim:
    """The claim of the batches ``indices`` of a group, sent with ``BEGIN`` (``statement``: SQL and parameters)."""

    indices: list[int]
    statement: tuple[str, tuple]

    @staticmethod
    def keys(rows: list[tuple]) -> tuple[set, set]:
        """From the statement's ``rows``: the (campaign, batch id) of the batch rows inserted, and the (batch id,
        campaign) of the ids it bound (as :func:`._group._bind` names them)."""
        inserted, bound = set(), set()
        for campaign_id, batch_id, binding in rows:
            if binding:
                bound.add((batch_id, campaign_id))
            else:
                inserted.add((campaign_id, batch_id))
        return inserted, bound


def early_claim(db: Database, items: list, minute: int) -> EarlyClaim | None:
    """PostgreSQL: the claim of every arrival of ``items`` with validated reports, to send with ``BEGIN``; None on
    SQLite (a statement is a function call there), when no item has reports, or when two of them share a batch id of
    the bound form (which campaign binds it then depends on the order of the ordinary path's statement)."""
    if db.dialect != "postgresql":
        return None
    indices = [index for index, item in enumerate(items) if getattr(item, "batch", None) is not None]
    bound = [items[index].batch_id for index in indices if BOUND_BATCH_ID.fullmatch(items[index].batch_id)]
    if not indices or len(set(bound)) < len(bound):
        return None
    return EarlyClaim(indices, (_EARLY, (_document(batch_rows(items, indices, minute)), json.dumps(bound))))
