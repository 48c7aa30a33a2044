"""A campaign's aggregate: its folded parts plus the log rows not folded yet, merged at read time.

Every group commit appends one row per campaign to ``ingest_log`` (:mod:`._group`);
each process folds the rows it wrote (:func:`fold`, about once a second) into one
of the campaign's :data:`PARTS` part rows (``writer % PARTS``), and the minutes of
arrival into ``arrivals``.  A fold is one transaction: it deletes the rows it
folds (``DELETE ... RETURNING``: two folders never fold one row twice) and adds
them to the part, so the sum of parts and log never changes.  Rows a process
left behind (it was killed before its fold) are folded by any process after
:data:`ORPHAN_AFTER_MS`.

Reading (:func:`read_aggregate`) merges every part and log row of the campaign
after :meth:`Aggregator.from_dict`, so each stored piece passes the state validator (once:
the merge does not check it again): a corrupt row is refused
(:class:`~dpdist.errors.IncompatibleStateError`), never counted, and a fold never
extends a corrupt part.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..errors import IncompatibleStateError
from ..local import Aggregator
from ..local._state_validation import MAX_REPORTS, check_count, check_counts, statistics_possible
from ._campaigns import ARRIVAL_RESOLUTION_MS, iso_time, now_ms
from ._database import Database
from ._deltas import decode_delta, statistic_bytes, statistic_from_bytes

__all__ = ["PARTS", "Totals", "read_aggregate", "read_totals", "fold", "unfolded", "history"]

#: part rows per campaign at most: a log row of writer w is folded into part w % PARTS
PARTS = 16
#: log rows older than this (by their minute of arrival) are folded by any process: their writer is gone
ORPHAN_AFTER_MS = 5 * ARRIVAL_RESOLUTION_MS

_PIECES = (
    "SELECT 0, n, statistic, rejected, refused, batches FROM campaign_parts WHERE campaign_id = ?"
    " UNION ALL SELECT 1, n, statistic, rejected, refused, batches FROM ingest_log WHERE campaign_id = ?"
)


@dataclass(frozen=True)
class Totals:
    """The counts of a campaign's aggregate (cheap to read: no statistic)."""

    n: int
    batches: int
    refusals: int


def _piece(protocol, dtype: str, kind: int, n, statistic, rejected: str, config: dict | None = None):
    """One stored part (kind 0) or log row (kind 1) as a validated Aggregator (``config``: the protocol's, if known)."""
    size = protocol.statistic_size
    try:
        values = statistic_from_bytes(statistic, dtype, size) if kind == 0 else decode_delta(statistic, dtype, size)
    except (ValueError, IndexError) as error:
        raise IncompatibleStateError(f"A stored statistic of the campaign is corrupt ({error}).") from None
    return Aggregator.from_dict({"config": protocol.config() if config is None else config, "n": n, "statistic": values,
                                 "rejected": json.loads(rejected)}, protocol)


def _merge_rows(protocol, dtype: str, rows) -> tuple:
    """The merged Aggregator, refused counts and batch count of stored rows ``(kind, n, statistic, rejected, refused,
    batches)``."""
    rows = list(rows)
    aggregate = _merged_at_once(protocol, dtype, rows) if len(rows) >= AT_ONCE else None
    if aggregate is None:  # each piece validated and merged on its own (a corrupt one refused by name)
        aggregate, config = protocol.aggregator(), protocol.config()
        for kind, n, statistic, rejected, _, _ in rows:
            # from_dict validated the piece: merged without checking it again
            aggregate._merge_checked(_piece(protocol, dtype, kind, n, statistic, rejected, config))
    batches = 0
    refused: dict[str, int] = {}
    for *_, refused_text, count in rows:
        for reason, number in json.loads(refused_text).items():
            refused[reason] = refused.get(reason, 0) + int(number)
        batches += int(count)
    return aggregate, refused, batches


#: stored rows merged at once (:func:`_merged_at_once`) from this many (a fold takes about one row per group commit)
AT_ONCE = 4


def _merged_at_once(protocol, dtype: str, rows: list):
    """The Aggregator of ``rows`` (as :func:`_merge_rows` reads them) when every piece passes the checks of
    :meth:`Aggregator.from_dict` (the statistics checked as one block, :func:`statistics_possible`) and their total
    stays within ``MAX_REPORTS``: what merging them one by one gives (integer statistics: sums exact in any order).
    None when any check fails or the block cannot be checked at once: then each piece is checked on its own, and the
    first corrupt one is refused by name.  About 40 -> 10 us a log row (a fold's, about one row per group commit)."""
    size = protocol.statistic_size
    try:
        pieces = [statistic_from_bytes(statistic, dtype, size) if kind == 0 else decode_delta(statistic, dtype, size)
                  for kind, _, statistic, *_ in rows]
        counts = [check_count(row[1], "'n'") for row in rows]
        rejected = [check_counts({} if row[3] == "{}" else json.loads(row[3])) for row in rows]
        if any(piece.shape != (size,) for piece in pieces) or sum(counts) > MAX_REPORTS:
            return None
        values = np.array(pieces, dtype=np.float64)
        if not statistics_possible(protocol, values, counts):
            return None
    except Exception:  # noqa: BLE001 - whatever it is, checking each piece on its own raises it (or names the corrupt one)
        return None
    aggregate = protocol.aggregator()
    statistic_dtype = np.dtype(protocol.statistic_dtype)
    aggregate.statistic = aggregate.statistic + values.astype(statistic_dtype).sum(axis=0, dtype=statistic_dtype)
    aggregate.n = sum(counts)
    for piece in rejected:
        for reason, count in piece.items():
            aggregate.rejected[reason] = aggregate.rejected.get(reason, 0) + count
    return aggregate


def read_aggregate(db: Database, campaign_id: str, protocol, dtype: str) -> tuple:
    """``(Aggregator, refused counts, batches)`` of a campaign: every part and log row, read in one statement (one
    snapshot), merged with their checks."""
    return _merge_rows(protocol, dtype, db.execute(_PIECES, (campaign_id, campaign_id)))


def read_totals(db: Database, campaign_ids: list[str]) -> dict[str, Totals]:
    """The counts of many campaigns in one statement (a campaign without a report: zeros)."""
    if not campaign_ids:
        return {}
    marks = ", ".join("?" * len(campaign_ids))
    rows = db.execute(
        f"SELECT campaign_id, SUM(n), SUM(batches), SUM(refusals) FROM (SELECT campaign_id, n, batches, refusals FROM"
        f" campaign_parts WHERE campaign_id IN ({marks}) UNION ALL SELECT campaign_id, n, batches, refusals FROM ingest_log"
        f" WHERE campaign_id IN ({marks})) AS pieces GROUP BY campaign_id",
        (*campaign_ids, *campaign_ids),
    )
    found = {row[0]: Totals(int(row[1] or 0), int(row[2] or 0), int(row[3] or 0)) for row in rows}
    return {campaign_id: found.get(campaign_id, Totals(0, 0, 0)) for campaign_id in campaign_ids}


def _selection(rows_of) -> tuple[str, tuple]:
    """The log rows a fold takes: a writer's (an int), the orphans (``"orphans"``) or all (``"all"``)."""
    if rows_of == "all":
        return "1 = 1", ()
    if rows_of == "orphans":
        return "minute_ms < ?", (now_ms() - ORPHAN_AFTER_MS,)
    return "writer = ?", (int(rows_of),)


def fold(db: Database, campaign_id: str, protocol, dtype: str, *, rows_of, part: int) -> int:
    """Fold log rows of ``campaign_id`` (``rows_of``: a writer id, ``"orphans"`` (older than :data:`ORPHAN_AFTER_MS`)
    or ``"all"``) into its part ``part`` and the arrivals; return how many rows were folded."""
    where, parameters = _selection(rows_of)
    with db.transaction():
        db.lock_name(campaign_id, shared=True)  # not while the campaign is being deleted
        rows = db.execute(
            f"DELETE FROM ingest_log WHERE campaign_id = ? AND {where}"
            " RETURNING minute_ms, n, statistic, rejected, refused, refusals, batches",
            (campaign_id, *parameters),
        )
        if not rows:
            return 0
        db.execute(
            "INSERT INTO campaign_parts (campaign_id, part, n, statistic, rejected, refused, refusals, batches)"
            " VALUES (?, ?, 0, NULL, '{}', '{}', 0, 0) ON CONFLICT (campaign_id, part) DO NOTHING",
            (campaign_id, part),
        )
        (stored,) = db.execute(
            "SELECT 0, n, statistic, rejected, refused, batches FROM campaign_parts WHERE campaign_id = ? AND part = ?"
            + db.for_update, (campaign_id, part),
        )
        aggregate, refused, batches = _merge_rows(protocol, dtype, [stored, *((1, *row[1:5], row[6]) for row in rows)])
        db.execute(
            "UPDATE campaign_parts SET n = ?, statistic = ?, rejected = ?, refused = ?, refusals = ?, batches = ?"
            " WHERE campaign_id = ? AND part = ?",
            (aggregate.n, statistic_bytes(aggregate.statistic), json.dumps(aggregate.rejected, sort_keys=True),
             json.dumps(refused, sort_keys=True), sum(refused.values()), batches, campaign_id, part),
        )
        _fold_arrivals(db, campaign_id, part, rows)
    return len(rows)


def _fold_arrivals(db: Database, campaign_id: str, part: int, rows) -> None:
    minutes: dict[int, list[int]] = {}
    for minute, n, *_, batches in rows:
        if batches:
            entry = minutes.setdefault(int(minute), [0, 0])
            entry[0] += int(n)
            entry[1] += int(batches)
    for minute, (n, batches) in sorted(minutes.items()):
        db.execute(
            "INSERT INTO arrivals (campaign_id, minute_ms, part, n, batches) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (campaign_id, minute_ms, part) DO UPDATE SET n = arrivals.n + excluded.n,"
            " batches = arrivals.batches + excluded.batches",
            (campaign_id, minute, part, n, batches),
        )


def unfolded(db: Database, rows_of) -> list[str]:
    """The campaigns with log rows of ``rows_of`` (as for :func:`fold`)."""
    where, parameters = _selection(rows_of)
    return [row[0] for row in db.execute(f"SELECT DISTINCT campaign_id FROM ingest_log WHERE {where}", parameters)]


def history(db: Database, campaign_id: str, points: int = 200) -> list[dict]:
    """Cumulative accepted reports over time, in at most ``points`` (+1) time buckets, from the arrivals per minute
    (folded and in the log)."""
    rows = db.execute(
        "SELECT minute_ms, SUM(n), SUM(batches) FROM (SELECT minute_ms, n, batches FROM arrivals WHERE campaign_id = ?"
        " UNION ALL SELECT minute_ms, n, batches FROM ingest_log WHERE campaign_id = ? AND batches > 0) AS pieces"
        " GROUP BY minute_ms ORDER BY minute_ms",
        (campaign_id, campaign_id),
    )
    if not rows:
        return []
    first, last = int(rows[0][0]), int(rows[-1][0])
    bucket = max(1, (last - first) // max(1, points) + 1)
    buckets: dict[int, list[int]] = {}
    for minute, accepted, count in rows:
        entry = buckets.setdefault((int(minute) - first) // bucket, [0, 0])
        entry[0] += int(accepted)
        entry[1] += int(count)
    out, total, batches = [], 0, 0
    for index in sorted(buckets):
        total += buckets[index][0]
        batches += buckets[index][1]
        out.append({"time": iso_time(first + (index + 1) * bucket - 1), "n": total, "batches": batches})
    return out
