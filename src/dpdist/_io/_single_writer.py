"""One thread writes: callers hand it items and wait; it writes every item waiting as one group and answers each.

The stores of dpdist's servers write through one thread each: the service's group
commit (``serve/_committer.py``, over SQLite or PostgreSQL), the relay's queue and
the issuer's store (:class:`~._sqlite_store.SQLiteStore`).  A caller hands an item
to :meth:`SingleWriter.commit` (from an event loop), :meth:`~SingleWriter.commit_now`
(from another thread, blocking) or :meth:`~SingleWriter.submit` (a
``concurrent.futures.Future``) and waits; the writer thread takes everything that
is waiting (at most ``max_group`` items), waiting at most ``delay_s`` for more when
it found fewer than ``min_group``, writes them with :meth:`SingleWriter.write` (a
subclass's: typically one transaction and one fsync for the group) and answers each
caller with its own outcome, only after ``write`` returned: an acknowledgement
is never given before the write that holds it is durable.  An exception ``write``
raises is every item's outcome (raised to each caller).

Items that must not share a group (the same batch sent twice at once) say so by a
:meth:`~SingleWriter.group_key`: the second waits for the next group.  A writer whose
items cost very different work (the service's batches: what counting their reports costs)
bounds a group's work (``max_group_cost``, :meth:`~SingleWriter.item_cost`): the oldest item
always goes, a costly item that would take the group past the bound waits for a later group,
and cheap items behind it go ahead, so that a queue of costly items (one client's burst)
holds the others one group's bound, not the whole queue's.  An item whose
caller gave up before the writer took it (its future cancelled) is not written: the
caller never heard of it.  Between groups the thread runs :meth:`~SingleWriter.between_groups`
(housekeeping, such as the service's folds), waking at least every
:meth:`~SingleWriter.idle_s` seconds for it.

No caller waits for a thread that will not answer: a hand-off and the thread's end are decided under one lock (an
item handed over while the thread finishes is written before it ends, or starts the next thread), and a thread that
dies (housekeeping that raised) answers every caller still waiting with a :class:`RuntimeError`.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import threading
import time
from typing import Any, Hashable

__all__ = ["SingleWriter", "MAX_GROUP", "COSTLY_SHARE"]

LOG = logging.getLogger("dpdist.writer")
#: items of one group, at most
MAX_GROUP = 512
#: an item costing at most this share of ``max_group_cost`` is cheap: it never waits behind a costly one
COSTLY_SHARE = 1024
#: a queue length never reached: the writer is not waiting, nobody wakes it
_NO_WAKE = 1 << 62


class _Waiter:
    """One caller's item and where its outcome goes: a future of an event loop, or a ``concurrent.futures.Future``."""

    __slots__ = ("item", "loop", "future")

    def __init__(self, item, loop: asyncio.AbstractEventLoop | None = None):
        self.item, self.loop = item, loop
        self.future: Any = loop.create_future() if loop is not None else concurrent.futures.Future()


class SingleWriter:
    """The writer thread of one store (see the module); subclasses say how a group is written.

    ``delay_s``: how long the thread waits for ``min_group`` items when fewer wait (0: never waits); ``name``: the
    thread's.  ``groups`` and ``items`` count what was written (metrics, tests).
    """

    def __init__(self, *, name: str, delay_s: float = 0.0, min_group: int = 8, max_group: int = MAX_GROUP,
                 max_group_cost: int | None = None):
        self.name, self.delay_s, self.min_group, self.max_group = name, float(delay_s), int(min_group), int(max_group)
        self.max_group_cost = max_group_cost  # the work of a group's costly items, at most (see the module)
        self._queue: collections.deque = collections.deque()
        self._lock = threading.RLock()  # the condition's: a caller's hand-off takes it without the condition's frames
        self._wake = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._running = False  # the thread runs (False once its loop ended, however it ended): a hand-off asks this
        self._stopping = False
        self._wanted = 1  # items in the queue that wake the writer while it waits (_NO_WAKE: it does not wait)
        self.groups = 0  # groups written
        self.items = 0

    # ------------------------------------------------------------------ what a writer does (subclasses)
    def write(self, items: list) -> list:
        """Write one group; the outcome of each item, in order (an exception instance: raised to its caller)."""
        raise NotImplementedError

    def started(self) -> None:
        """Called on the writer thread when it starts (it starts with the first item, and again after :meth:`stop`)."""

    def group_key(self, item) -> Hashable | None:
        """Items with the same key (not None) are never written in one group."""
        return None

    def item_cost(self, item) -> int:
        """The work of writing ``item``, in the unit of ``max_group_cost`` (only asked when that is set)."""
        return 0

    def written(self, items: list) -> None:
        """Called on the writer thread after a group was written (its callers are answered)."""

    def failed(self, error: Exception) -> None:
        """``write`` raised ``error`` (every caller of the group gets it): logged here."""
        LOG.error("%s: writing a group failed", self.name, exc_info=error)

    def between_groups(self, finishing: bool) -> None:
        """Housekeeping on the writer thread between groups (``finishing``: the last call, at :meth:`stop`)."""

    def idle_s(self) -> float | None:
        """The longest wait for an item before :meth:`between_groups` runs anyway (None: no limit)."""
        return None

    # ------------------------------------------------------------------ callers
    @property
    def waiting(self) -> int:
        return len(self._queue)

    def commit(self, item) -> asyncio.Future:
        """``await writer.commit(item)``: the outcome of ``item`` once its group was written (what :meth:`write` gave
        it, or the exception raised).  A future of the running event loop, not a coroutine awaiting one (every batch
        of the service is handed off here)."""
        waiter = _Waiter(item, asyncio.get_running_loop())
        self._put(waiter)
        return waiter.future

    def commit_now(self, item):
        """As :meth:`commit`, from a thread that is not an event loop's (it blocks until the group was written)."""
        return _outcome(self.submit(item).result())

    def submit(self, item) -> concurrent.futures.Future:
        """A future of the outcome of ``item`` (an exception outcome: the future's exception); cancelling it before the
        writer takes it keeps the item from being written."""
        waiter = _Waiter(item)
        self._put(waiter)
        return waiter.future

    def _put(self, waiter: _Waiter) -> None:
        with self._lock:  # the condition's: whether a thread runs and will take the item is decided with it held
            self._queue.append(waiter)
            if not self._running:
                self.start()
            elif len(self._queue) >= self._wanted:  # the writer waits for this many: wake it (else no system call)
                self._wake.notify()

    # ------------------------------------------------------------------ life
    def start(self) -> None:
        with self._wake:
            if not self._running:  # not "its thread is alive": a thread that decided to end takes nothing more
                self._stopping = False
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._running = True
                self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Write what is waiting, run :meth:`between_groups` a last time, and end the thread."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    # ------------------------------------------------------------------ the thread
    def _run(self) -> None:
        try:
            self.started()
            while True:
                group = self._take(self.idle_s())
                if group:
                    self._write_group(group)
                finishing = self._stopping and not self._queue
                self.between_groups(finishing)
                if finishing and self._ended():
                    return
        except BaseException as error:  # noqa: BLE001 - the thread ends, logged; its callers are told (_ended)
            LOG.error("%s: the writer thread ended", self.name, exc_info=error)
            self._ended(error)

    def _ended(self, error: BaseException | None = None) -> bool:
        """Whether the thread ends: yes when nothing waits (the next hand-off starts a thread again), or when it died of
        ``error`` (every caller still waiting gets it, rather than waiting for a thread that is gone); no when items came
        during the last housekeeping (they are written first)."""
        with self._lock:
            if self._queue and error is None:
                return False
            self._running = False
            left = [waiter for waiter in self._queue if _taken(waiter)]
            self._queue.clear()
        if left:
            _answer(left, [RuntimeError(f"{self.name}: the writer thread ended ({type(error).__name__}: {error})")] * len(left))
        return True

    def _take(self, timeout: float | None) -> list[_Waiter]:
        with self._wake:
            if not self._queue and not self._stopping:
                self._wanted = 1
                self._wake.wait(timeout)
            if self.delay_s and 0 < len(self._queue) < self.min_group and not self._stopping:
                self._wanted = self.min_group  # the arrivals before it do not wake this thread one by one
                deadline = time.monotonic() + self.delay_s
                while len(self._queue) < self.min_group and (left := deadline - time.monotonic()) > 0:
                    self._wake.wait(left)
            self._wanted = _NO_WAKE  # writing: it looks at the queue again before it waits
            if self.max_group_cost is not None:
                return self._take_within_cost(self.max_group_cost)
            group, seen = [], set()
            for _ in range(min(len(self._queue), self.max_group)):
                waiter = self._queue[0]
                key = self.group_key(waiter.item)
                if key is not None and key in seen:
                    break  # the same key twice: the second waits for the next group
                seen.add(key)
                waiter = self._queue.popleft()
                if _taken(waiter):
                    group.append(waiter)
            return group

    def _take_within_cost(self, budget: int) -> list[_Waiter]:
        """A group from the queue (its lock held) whose costly items cost at most ``budget`` (the first item goes
        whatever it costs); an item costing at most ``budget // COSTLY_SHARE`` is cheap and goes ahead of a costly one
        left for a later group, as is any item after one of its key that was left.  The same key twice in the group: the
        second and everything after it wait, as without a budget."""
        group: list[_Waiter] = []
        left: list[_Waiter] = []
        seen, deferred, spent = set(), set(), 0
        cheap = budget // COSTLY_SHARE
        while self._queue and len(group) < self.max_group and len(left) < self.max_group:
            key = self.group_key(self._queue[0].item)
            if key is not None and key in seen:
                break  # the same key twice: the second waits for the next group
            waiter = self._queue.popleft()
            cost = self.item_cost(waiter.item)
            if (key is not None and key in deferred) or (cost > cheap and spent + cost > budget and (group or left)):
                left.append(waiter)  # too costly for this group (or after one with its key that is): a later group's
                deferred.add(key)
                continue
            seen.add(key)
            if cost > cheap:
                spent += cost
            if _taken(waiter):
                group.append(waiter)
        self._queue.extendleft(reversed(left))
        return group

    def _write_group(self, group: list[_Waiter]) -> None:
        """Write one group and answer its callers."""
        items = [waiter.item for waiter in group]
        try:
            outcomes = self.write(items)
        except Exception as error:  # every caller of the group gets it
            self.failed(error)
            _answer(group, [error] * len(group))
            return
        except BaseException as error:  # the thread ends (SystemExit): its callers are told, not left waiting
            _answer(group, [RuntimeError(f"{self.name}: writing a group was stopped ({type(error).__name__})")] * len(group))
            raise
        self.groups += 1
        self.items += len(group)
        _answer(group, outcomes)
        self.written(items)


def _taken(waiter: _Waiter) -> bool:
    """False if the caller gave up before the writer took its item (the item is then not written)."""
    if waiter.loop is None:
        return waiter.future.set_running_or_notify_cancel()
    return not waiter.future.cancelled()


def _outcome(outcome):
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def _answer(group: list[_Waiter], outcomes: list) -> None:
    """Hand each caller its outcome: one wake-up per event loop, not one per caller."""
    by_loop: dict = {}
    for waiter, outcome in zip(group, outcomes):
        if waiter.loop is None:
            if isinstance(outcome, BaseException):
                waiter.future.set_exception(outcome)
            else:
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
        if not future.done():  # the caller may have been cancelled (client gone, shutdown)
            if isinstance(outcome, BaseException):  # raised where the caller awaits it
                future.set_exception(outcome)
            else:
                future.set_result(outcome)
