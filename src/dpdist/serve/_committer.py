"""Group commit: one thread per process commits the batches of many requests in one transaction and one fsync.

A request hands its batch (:class:`~._group.Arrival`, or a counted
:class:`~._group.Refused`) to :meth:`GroupCommitter.commit` and waits; the
committer thread (a :class:`~dpdist._io._single_writer.SingleWriter`, the one
writer thread of every dpdist store) takes everything that is waiting (at most
:data:`MAX_GROUP` items), waiting at most ``delay_s`` for more when it found fewer
than ``min_group`` (a few milliseconds at most: the commit of the previous group
is usually wait enough) and leaving costly batches past ``--max-batch-work`` for
later groups, decodes the small bodies among them (:mod:`._group_bodies`),
commits them as one group (:meth:`Store.commit`; the usual group the short way,
:mod:`._usual_group`) and answers each request with
its own outcome, only after the commit returned.  The
same batch twice in one group would be counted twice: the second waits for the
next group (then it is a duplicate).  While the database cannot answer, every
request of the group gets that error (503: the client sends the same batch again
later).

About once a second (:data:`FOLD_EVERY_S`) the committer folds the log rows it
wrote into its part of each campaign, and the log rows other processes left
behind (:mod:`._aggregates`).  Folding never delays an answer: it runs between
groups, on this thread.

While traces are on (:mod:`dpdist._http._telemetry`), a group's commit is a span, a child of the span of the first
request whose item it wrote and linked to the others', with the counts of its items, batches and their reports.
"""

from __future__ import annotations

import logging
import time

from .._http import _telemetry
from .._io._single_writer import MAX_GROUP, SingleWriter
from ._database import DatabaseUnavailableError
from ._group import Arrival
from ._group_bodies import aggregate_work, batch_work, decode_pending, settle
from ._usual_group import ShortWay

__all__ = ["GroupCommitter", "MAX_GROUP", "FOLD_EVERY_S"]

LOG = logging.getLogger("dpdist.serve")
#: seconds between two folds of this process's log rows
FOLD_EVERY_S = 1.0
#: seconds between two sweeps of the log rows of processes that are gone
SWEEP_EVERY_S = 60.0


class GroupCommitter(SingleWriter):
    """The group commits of one :class:`~._store.Store` (see the module)."""

    def __init__(self, store, *, delay_s: float = 0.0, min_group: int = 8, max_group_cost: int | None = None):
        super().__init__(name="dpdist-group-commit", delay_s=delay_s, min_group=min_group, max_group_cost=max_group_cost)
        self.store = store
        self._folded = self._swept = time.monotonic()
        self._logged: set[str] = set()  # campaigns with log rows of this process not yet folded
        self._last_folds: dict[tuple, float] = {}  # when each campaign's rows were folded last (the longest unfolded first)
        self._orphaned: set[str] = set()  # campaigns with log rows of processes that are gone, not yet folded
        self.short_way = ShortWay()  # the usual group's (and when not to try it)

    def started(self) -> None:
        self._folded = self._swept = time.monotonic()  # the first fold a second after the thread starts, not before

    # ------------------------------------------------------------------ the group
    def commit(self, item):
        if _telemetry.TRACER is not None:  # the request's span, which the group's links to
            item.trace = _telemetry.current()
        return super().commit(item)

    def write(self, items: list) -> list:
        if _telemetry.TRACER is None:
            return self._write(items)
        with _telemetry.linked("dpdist.group_commit", [getattr(item, "trace", None) for item in items]) as counts:
            outcomes = self._write(items)
            arrivals = [item for item in items if isinstance(item, Arrival)]  # (their reports decoded by now)
            counts.update({"dpdist.group.items": len(items), "dpdist.group.batches": len(arrivals),
                           "dpdist.group.reports": sum(item.accepted for item in arrivals)})
            return outcomes

    def _write(self, items: list) -> list:
        usual = self.short_way.commit(self.store.db, self.store.writer, items)  # the usual group (_usual_group)
        return self.write_ordinary(items) if usual is None else usual

    def write_ordinary(self, items: list) -> list:
        """The group the ordinary way: its small bodies decoded here (:mod:`._group_bodies`), every step of
        :meth:`Store.commit`."""
        committed, places, refused = decode_pending(items)
        return settle(self.store.commit(committed) if committed else [], places, refused)

    def item_cost(self, item) -> int:
        """What counting ``item``'s reports costs, at most (element operations, as ``--max-batch-work`` counts them):
        a group's costly batches cost at most that bound together (one client's burst of costly batches held another
        campaign's batch 30.7 s as one group)."""
        return batch_work(item)

    def group_key(self, item):
        batch_id = getattr(item, "batch_id", None)
        return None if batch_id is None else (item.campaign_id, batch_id)

    def failed(self, error: Exception) -> None:
        if not isinstance(error, DatabaseUnavailableError):  # the database layer logs an outage; this is a bug (500)
            LOG.error("group commit failed", exc_info=error)

    def written(self, items: list) -> None:
        self._logged.update(item.campaign_id for item in items)

    # ------------------------------------------------------------------ folds, between groups
    def idle_s(self) -> float:
        """Until the next fold (only while rows of this process wait for one) or sweep is due, at least 50 ms: an idle
        server with nothing logged woke 20 times a second for a fold it had nothing for."""
        due = self._swept + SWEEP_EVERY_S
        if self._logged or self._orphaned:
            due = min(due, self._folded + FOLD_EVERY_S)
        return max(0.05, due - time.monotonic())

    def between_groups(self, finishing: bool) -> None:
        now = time.monotonic()
        if now - self._swept >= SWEEP_EVERY_S:
            self._orphaned |= set(self._housekeeping(self.store.unfolded, "orphans") or ())
            self._swept = now
        if (self._logged or self._orphaned) and (now - self._folded >= FOLD_EVERY_S or finishing):
            # failures: the rows stay and count, folded at a later sweep
            self._logged = self._housekeeping(self._fold_some, self._logged, finishing) or set()
            self._orphaned = self._housekeeping(self._fold_some, self._orphaned, finishing, "orphans") or set()
            self._folded = now

    def _housekeeping(self, step, *args):
        """A fold or a sweep, whatever it raises logged (the thread that answers the requests must not die)."""
        try:
            return step(*args)
        except DatabaseUnavailableError:
            return None  # the database layer logged it; tried again later
        except Exception as error:  # noqa: BLE001 - a bug, logged; the log rows stay and count
            LOG.error("folding the ingest log failed", exc_info=error)
            return None

    def _fold_some(self, campaigns: set[str], finishing: bool, rows_of=None) -> set[str]:
        """Fold the log rows of the campaigns folded longest ago (``rows_of``: this process's, or ``"orphans"``: those
        of processes that are gone), as many as ``max_group_cost`` lets a fold cost (at least one; all at the last
        fold); the campaigns left for the next fold (or whose fold must be tried again).  A fold holds the committer
        between two groups: the folds of six campaigns of 64 MB statistics held every campaign's batches up to 4.9 s a
        second, a sweep of twelve such campaigns' orphaned rows 10 s."""
        ordered = sorted(campaigns, key=lambda campaign_id: (self._last_folds.get((campaign_id, rows_of), 0.0), campaign_id))
        if finishing or self.max_group_cost is None:
            chosen = ordered
        else:
            chosen, spent = [], 0
            for campaign_id in ordered:
                work = self._aggregate_work(campaign_id)
                if chosen and spent + work > self.max_group_cost:
                    break
                chosen.append(campaign_id)
                spent += work
        if len(self._last_folds) > 4096:
            self._last_folds.clear()
        now = time.monotonic()
        self._last_folds.update(((campaign_id, rows_of), now) for campaign_id in chosen)
        return self._fold(set(chosen), rows_of) | (campaigns - set(chosen))

    def _aggregate_work(self, campaign_id: str) -> int:
        try:
            return aggregate_work(self.store.row(campaign_id).protocol)
        except Exception:  # noqa: BLE001 - deleted since, or unreadable: its fold says so (_fold)
            return 0

    def _fold(self, campaigns: set[str], rows_of=None) -> set[str]:
        """Fold the log rows of ``campaigns``; the campaigns whose fold must be tried again."""
        again = set()
        for campaign_id in sorted(campaigns):
            try:
                self.store.fold(campaign_id, rows_of=rows_of)
            except DatabaseUnavailableError:
                again.add(campaign_id)  # the rows stay in the log (and count): folded when the database answers
            except Exception as error:  # a corrupt part is never extended: reads refuse it, the log keeps the rows
                if getattr(error, "code", None) != "unknown_campaign":
                    LOG.error("folding the log of campaign %r failed", campaign_id, exc_info=error)
        return again
