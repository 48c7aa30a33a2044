"""Reads of the database that concurrent requests share: one read in flight per key, each answer read after it was asked.

Admission checks a token that does not open a campaign's cached settings against the campaign as the database has it
(docs/explanation/threat-model.md, "Deletion"); a flood of wrong tokens would otherwise make one read per request.  Requests for one
key join the read that has not begun yet (so what a request gets was read after it asked: a campaign created again
before the request arrived is seen); while a read runs, the requests arriving meanwhile wait for the next one, which
begins when it ends.  So a key has at most one read running and one waiting, whatever the number of requests.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from starlette.concurrency import run_in_threadpool

__all__ = ["SharedReads"]


class _Read:
    """One read of a key (in a thread), begun once the key's previous read ended."""

    begun = False
    task: asyncio.Future


class SharedReads:
    """``await reads.get(key, read)``: ``read()``'s value (or its exception), shared with the concurrent requests of
    ``key`` (module docstring); ``read`` runs in a thread.  Event loop only."""

    def __init__(self) -> None:
        self._latest: dict[Any, _Read] = {}  # per key: its latest read (running, or waiting for the running one)
        self.reads = 0  # reads begun (tests, diagnostics)

    async def get(self, key: Any, read: Callable[[], Any]) -> Any:
        latest = self._latest.get(key)
        if latest is None or latest.begun:
            entry = self._latest[key] = _Read()
            entry.task = asyncio.ensure_future(self._run(entry, read, None if latest is None else latest.task))
            entry.task.add_done_callback(lambda task: self._done(key, entry))
            latest = entry
        return await asyncio.shield(latest.task)  # a request cancelled does not cancel the others' read

    async def _run(self, entry: _Read, read: Callable[[], Any], after: asyncio.Future | None) -> Any:
        if after is not None:
            await asyncio.wait([after])  # one read in flight per key; its outcome is its own requests'
        entry.begun = True
        self.reads += 1
        return await run_in_threadpool(read)

    def _done(self, key: Any, entry: _Read) -> None:
        if self._latest.get(key) is entry:
            del self._latest[key]
        if not entry.task.cancelled():
            entry.task.exception()  # retrieved: the requests waiting on it got it
