"""Group commit: one thread per process commits the batches of many requests in one transaction and one fsync.

A request hands its batch (:class:`~._group.Arrival`, or a counted
:class:`~._group.Refused`) to :meth:`GroupCommitter.commit` and waits; the
committer thread takes everything that is waiting (at most :data:`MAX_GROUP`
items), waiting at most ``delay_s`` for more when it found fewer than
``min_group`` (a few milliseconds at most: the commit of the previous group is
usually wait enough), commits them as one group (:meth:`Store.commit`) and
answers each request with its own outcome, only after the commit returned.
While the database cannot answer, every request of the group gets that error
(503: the client sends the same batch again later).

About once a second (:data:`FOLD_EVERY_S`) the committer folds the log rows it
wrote into its part of each campaign, and the log rows other processes left
behind (:mod:`._aggregates`).  Folding never delays an answer: it runs between
groups, on this thread.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import threading
import time
from typing import Any

from ._database import DatabaseUnavailableError

__all__ = ["GroupCommitter", "MAX_GROUP", "FOLD_EVERY_S"]

LOG = logging.getLogger("dpdist.serve")
#: items of one group, at most
MAX_GROUP = 512
#: seconds between two folds of this process's log rows
FOLD_EVERY_S = 1.0
#: seconds between two sweeps of the log rows of processes that are gone
SWEEP_EVERY_S = 60.0
#: a queue length never reached: the committer is not waiting, nobody wakes it
_NO_WAKE = 1 << 62


class _Waiter:
    """One request's item and where its outcome goes: a future of an event loop, or a ``concurrent.futures.Future``."""

    __slots__ = ("item", "loop", "future")

    def __init__(self, item, loop: asyncio.AbstractEventLoop | None = None):
        self.item, self.loop = item, loop
        self.future: Any = loop.create_future() if loop is not None else concurrent.futures.Future()


class GroupCommitter:
    """The group commits of one :class:`~._store.Store` (see the module)."""

    def __init__(self, store, *, delay_s: float = 0.0, min_group: int = 8):
        self.store, self.delay_s, self.min_group = store, float(delay_s), int(min_group)
        self._queue: collections.deque = collections.deque()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._wanted = 1  # items in the queue that wake the committer while it waits (_NO_WAKE: it does not wait)
        self.groups = 0  # groups committed (for tests and metrics)
        self.items = 0

    # ------------------------------------------------------------------ callers
    @property
    def waiting(self) -> int:
        return len(self._queue)

    async def commit(self, item):
        """The outcome of ``item`` once its group committed (an acknowledgement, None, or the Refusal raised)."""
        waiter = _Waiter(item, asyncio.get_running_loop())
        self._put(waiter)
        return _outcome(await waiter.future)

    def commit_now(self, item):
        """As :meth:`commit`, from a thread that is not an event loop's (it blocks until the group committed)."""
        waiter = _Waiter(item)
        self._put(waiter)
        return _outcome(waiter.future.result())

    def _put(self, waiter: _Waiter) -> None:
        self.start()
        with self._wake:
            self._queue.append(waiter)
            if len(self._queue) >= self._wanted:  # the committer waits for this many: wake it (else no system call)
                self._wake.notify()

    # ------------------------------------------------------------------ life
    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        with self._wake:
            if self._thread is None or not self._thread.is_alive():
                self._stopping = False
                self._thread = threading.Thread(target=self._run, name="dpdist-group-commit", daemon=True)
                self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Commit what is waiting, fold, and end the thread."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    # ------------------------------------------------------------------ the thread
    def _run(self) -> None:
        folded = swept = time.monotonic()
        written: set[str] = set()
        while True:
            group = self._take(timeout=max(0.05, FOLD_EVERY_S - (time.monotonic() - folded)))
            if group:
                written |= self._commit(group)
            now = time.monotonic()
            finishing = self._stopping and not self._queue
            if written and (now - folded >= FOLD_EVERY_S or finishing):
                written = self._housekeeping(self._fold, written) or set()  # failures: the rows stay in the log and count
                folded = now
            if now - swept >= SWEEP_EVERY_S:
                self._housekeeping(self._sweep)
                swept = now
            if finishing:
                return

    def _housekeeping(self, step, *args):
        """A fold or a sweep, whatever it raises logged (the thread that answers the requests must not die)."""
        try:
            return step(*args)
        except DatabaseUnavailableError:
            return None  # the database layer logged it; tried again later
        except Exception as error:  # noqa: BLE001 - a bug, logged; the log rows stay and count
            LOG.error("folding the ingest log failed", exc_info=error)
            return None

    def _take(self, timeout: float) -> list[_Waiter]:
        with self._wake:
            if not self._queue and not self._stopping:
                self._wanted = 1
                self._wake.wait(timeout)
            if self.delay_s and 0 < len(self._queue) < self.min_group and not self._stopping:
                self._wanted = self.min_group  # the arrivals before it do not wake this thread one by one
                deadline = time.monotonic() + self.delay_s
                while len(self._queue) < self.min_group and (left := deadline - time.monotonic()) > 0:
                    self._wake.wait(left)
            self._wanted = _NO_WAKE  # committing: it looks at the queue again before it waits
            group, seen = [], set()
            for _ in range(min(len(self._queue), MAX_GROUP)):
                waiter = self._queue[0]
                key = (waiter.item.campaign_id, getattr(waiter.item, "batch_id", None))
                if key[1] is not None and key in seen:
                    break  # the same batch twice: the second waits for the next group (then it is a duplicate)
                seen.add(key)
                group.append(self._queue.popleft())
            return group

    def _commit(self, group: list[_Waiter]) -> set[str]:
        """Commit one group and answer its requests; the campaigns it may have logged rows for."""
        items = [waiter.item for waiter in group]
        try:
            outcomes = self.store.commit(items)
        except DatabaseUnavailableError as error:
            _answer(group, [error] * len(group))
            return set()
        except Exception as error:  # a bug: every request of the group gets a 500 (logged by the app)
            LOG.error("group commit failed", exc_info=error)
            _answer(group, [error] * len(group))
            return set()
        self.groups += 1
        self.items += len(group)
        _answer(group, outcomes)
        return {item.campaign_id for item in items}

    def _sweep(self) -> None:
        """Fold the log rows that processes which are gone left behind."""
        self._fold(set(self.store.unfolded("orphans")), rows_of="orphans")

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


def _outcome(outcome):
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def _answer(group: list[_Waiter], outcomes: list) -> None:
    """Hand each request its outcome: one wake-up per event loop, not one per request."""
    by_loop: dict = {}
    for waiter, outcome in zip(group, outcomes):
        if waiter.loop is None:
            waiter.future.set_result(outcome)
        else:
            by_loop.setdefault(waiter.loop, []).append((waiter.future, outcome))
    for loop, pairs in by_loop.items():
        try:
            loop.call_soon_threadsafe(_resolve, pairs)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass


def _resolve(pairs) -> None:
    for future, outcome in pairs:
        if not future.done():  # the request may have been cancelled (client gone, shutdown)
            future.set_result(outcome)
