"""The durable floor for ``benchmarks/bench_serve.py --cases ratio``: the least a durably acknowledged batch costs.

uvicorn + Starlette, the same route as the devices' ``PUT
/api/campaigns/{campaign}/batches/{batch_id}`` of ``dpdist serve``, with the
guarantees that matter for the comparison and nothing else:

* **durable before acknowledged**: the request's batch id goes to one committer
  thread, which commits every waiting request as ONE SQLite transaction in WAL
  mode with ``synchronous=FULL`` (dpdist's fsync policy: the log is fsynced at
  each commit), and only then answers them;
* **exactly once**: one row per batch id in a table whose primary key is
  (campaign, batch id), inserted ``ON CONFLICT DO NOTHING``: a batch id seen
  before is answered ``"duplicate": true`` and not counted again;
* **one aggregate row per group** (the group's count), as dpdist appends one log
  row per campaign and group;
* **group commit off the event loop**: dpdist's own ``--commit-delay`` (2 ms) and
  group size (wait for more while fewer than 8 wait), and the whole group answered
  with ONE ``call_soon_threadsafe`` on the event loop.

The answer is a JSON acknowledgement of the same shape as dpdist's.  Nothing is
decoded, validated, rate-limited or bounded: what dpdist pays beyond this is
its own per-request work.  Run::

    FLOOR_DB=/tmp/floor.sqlite python -m uvicorn floor_app:app --app-dir benchmarks --http httptools --no-access-log
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import sqlite3
import threading
import time

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

#: dpdist's group commit: wait at most DELAY_S for MIN_GROUP items when fewer wait; at most MAX_GROUP a group
DELAY_S, MIN_GROUP, MAX_GROUP = 0.002, 8, 512


class Committer:
    """One thread: takes every waiting (batch key, future, loop), commits them in one transaction, answers them."""

    def __init__(self, path: str, *, thread: bool = True):
        """``thread``: start the committer's thread (``bench_commit_group.py`` calls :meth:`commit` itself)."""
        self.path = path
        self.queue: collections.deque = collections.deque()
        self.wake = threading.Condition()
        self.wanted = 1
        self.groups = self.items = 0
        if thread:
            threading.Thread(target=self.run, name="floor-commit", daemon=True).start()

    def put(self, key: tuple[str, str], future: asyncio.Future, loop, work=None) -> None:
        """Queue the batch ``key`` (``work``: what a subclass's :meth:`commit` needs of it besides its key)."""
        with self.wake:
            self.queue.append((key, future, loop, work))
            if len(self.queue) >= self.wanted:
                self.wake.notify()

    def connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("CREATE TABLE IF NOT EXISTS batches (campaign TEXT, batch_id TEXT, received_ms INTEGER,"
                           " PRIMARY KEY (campaign, batch_id))")
        connection.execute("CREATE TABLE IF NOT EXISTS counts (campaign TEXT, n INTEGER, minute_ms INTEGER)")
        return connection

    def take(self) -> list:
        with self.wake:
            while not self.queue:
                self.wanted = 1
                self.wake.wait()
            if len(self.queue) < MIN_GROUP:
                self.wanted = MIN_GROUP
                deadline = time.monotonic() + DELAY_S
                while len(self.queue) < MIN_GROUP and (left := deadline - time.monotonic()) > 0:
                    self.wake.wait(left)
            self.wanted = 1 << 62
            group, seen = [], set()
            while self.queue and len(group) < MAX_GROUP and self.queue[0][0] not in seen:
                seen.add(self.queue[0][0])
                group.append(self.queue.popleft())
            return group

    def commit(self, connection: sqlite3.Connection, group: list) -> list:
        """Commit ``group`` in one transaction; per item, what its request answers (here: whether it is a duplicate)."""
        keys = [key for key, _, _, _ in group]
        minute = int(time.time() // 60 * 60_000)
        connection.execute("BEGIN IMMEDIATE")
        inserted = set(connection.execute(
            "INSERT INTO batches (campaign, batch_id, received_ms) VALUES "
            + ", ".join(["(?, ?, ?)"] * len(keys)) + " ON CONFLICT DO NOTHING RETURNING campaign, batch_id",
            [value for campaign, batch_id in keys for value in (campaign, batch_id, minute)]).fetchall())
        for campaign in {campaign for campaign, _ in inserted}:
            connection.execute("INSERT INTO counts (campaign, n, minute_ms) VALUES (?, ?, ?)",
                               (campaign, sum(1 for c, _ in inserted if c == campaign), minute))
        connection.execute("COMMIT")  # the WAL's fsync: durable from here
        return [key not in inserted for key in keys]

    def run(self) -> None:
        connection = self.connect()
        while True:
            group = self.take()
            outcomes = self.commit(connection, group)
            self.groups += 1
            self.items += len(group)
            by_loop: dict = {}
            for (_, future, loop, _), outcome in zip(group, outcomes):
                by_loop.setdefault(loop, []).append((future, outcome))
            for loop, answers in by_loop.items():
                loop.call_soon_threadsafe(_resolve, answers)


def _resolve(answers) -> None:
    for future, outcome in answers:
        if not future.done():
            future.set_result(outcome)


#: the committer's class (an app importing this module's routes may set its own) and, once started, the committer
KIND, _COMMITTERS = Committer, []


def committer() -> Committer:
    """The app's committer, started at its first use (not at import: another app may import this module)."""
    if not _COMMITTERS:
        _COMMITTERS.append(KIND(os.environ.get("FLOOR_DB", "floor.sqlite")))
    return _COMMITTERS[0]


async def batch(request: Request) -> Response:
    await request.body()
    campaign, batch_id = request.path_params["campaign"], request.path_params["batch_id"]
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    committer().put((campaign, batch_id), future, loop)
    duplicate = await future
    ack = {"campaign": campaign, "batch_id": batch_id, "n_read": 1, "accepted": 0 if duplicate else 1, "rejected": {},
           "duplicate": duplicate}
    return Response(json.dumps(ack, separators=(",", ":")).encode(), media_type="application/json")


async def healthz(request: Request) -> Response:
    return Response(b"ok")


async def counted(request: Request) -> Response:
    """The batches counted and the groups committed (read by the benchmark after a run)."""
    return Response(json.dumps({"groups": committer().groups, "items": committer().items}).encode(), media_type="application/json")


app = Starlette(routes=[Route("/api/campaigns/{campaign}/batches/{batch_id}", batch, methods=["PUT", "POST"]),
                        Route("/healthz", healthz), Route("/floor/counted", counted)])
