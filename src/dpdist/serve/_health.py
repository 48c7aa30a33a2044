"""Liveness (``/healthz``) and readiness (``/readyz``) of ``dpdist serve``.

``/healthz`` answers 200 as long as the process serves HTTP: a failing
liveness probe means "restart me".  ``/readyz`` answers 200 only when the
database could take a write now, and 503 with a reason otherwise: a failing
readiness probe means "send no traffic here for now" (a load balancer takes the
instance out, nothing restarts it).  The check runs on a fresh connection with
a short timeout (:meth:`Database.ping`), plus, for SQLite, the free space of the
file system that holds the database.  One check runs at a time and its answer
is reused for ``cache_s`` seconds, so probing ``/readyz`` in a loop cannot open
a database connection per request.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from .._validation import Described, Integer, Interval
from ._database import Database, DatabaseUnavailableError  # no Starlette at import: the CLI reads the defaults

__all__ = ["Readiness", "DEFAULT_READY_TIMEOUT_S", "DEFAULT_MIN_FREE_BYTES", "READY_TIMEOUT", "MIN_FREE_BYTES"]

DEFAULT_READY_TIMEOUT_S = 2.0
DEFAULT_MIN_FREE_BYTES = 64 << 20
#: the rules of both (the operations' parameters and 'dpdist serve --ready-timeout/--min-free-bytes')
READY_TIMEOUT = Described(Interval(0.0, 60.0, closed="right"), "a number of seconds in (0, 60]")
MIN_FREE_BYTES = Integer(low=0)


@dataclass
class _Answer:
    ready: bool
    reason: str | None
    detail: str
    at: float


class Readiness:
    """The ``/readyz`` check of one database.

    Parameters
    ----------
    db : Database
        The service's database.
    timeout_s : float
        How long the database may take to answer (lock wait, connect, ``SELECT 1``).
    min_free_bytes : int
        SQLite: below this many free bytes on the database's file system the service is not ready
        (``disk_full``): a commit needs room for its write-ahead log.
    cache_s : float
        How long an answer is reused.
    """

    def __init__(self, db: Database, *, timeout_s: float = DEFAULT_READY_TIMEOUT_S,
                 min_free_bytes: int = DEFAULT_MIN_FREE_BYTES, cache_s: float = 1.0):
        self.db, self.timeout_s, self.min_free_bytes, self.cache_s = db, float(timeout_s), int(min_free_bytes), cache_s
        self._lock = asyncio.Lock()
        self._last: _Answer | None = None

    def _check(self) -> _Answer:
        now = time.monotonic()
        if self.db.dialect == "sqlite":
            directory = Path(self.db._path).resolve().parent
            try:
                free = shutil.disk_usage(directory).free
            except OSError as error:
                return _Answer(False, "unreachable", f"the database's directory cannot be read ({os.strerror(error.errno or 0)})", now)
            if free < self.min_free_bytes:
                return _Answer(False, "disk_full", f"{free} bytes free where the database lives; the service needs {self.min_free_bytes}", now)
        try:
            self.db.ping(self.timeout_s)
        except DatabaseUnavailableError as error:
            return _Answer(False, error.reason, _DETAILS.get(error.reason, "the database cannot answer"), now)
        return _Answer(True, None, "", now)

    async def answer(self) -> _Answer:
        from starlette.concurrency import run_in_threadpool  # lazy: Starlette only when the service runs: the command line reads this module's defaults

        from .._http._deadline import timeout  # lazy: it imports httpx, as Starlette only when the service runs

        async with self._lock:
            last = self._last
            if last is None or time.monotonic() - last.at >= self.cache_s:
                try:
                    # the ping bounds itself (lock wait, connect timeout); this bounds a stuck driver too
                    async with timeout(self.timeout_s + 3.0):  # not wait_for: it can drop a cancellation
                        last = await run_in_threadpool(self._check)
                except asyncio.TimeoutError:
                    last = _Answer(False, "timeout", f"the database did not answer within {self.timeout_s:g} s", time.monotonic())
                self._last = last
            return last

    async def endpoint(self, request):
        from starlette.responses import JSONResponse  # lazy: Starlette only when the service runs: the command line reads this module's defaults

        answer = await self.answer()
        if answer.ready:
            return JSONResponse({"status": "ready", "database": self.db.dialect})
        body = {"status": "unavailable", "database": self.db.dialect, "reason": answer.reason, "detail": answer.detail}
        return JSONResponse(body, status_code=503, headers={"Retry-After": "5", "Cache-Control": "no-store"})


# what a probe may say without naming hosts, paths or driver messages (those go to the server log)
_DETAILS = {
    "unreachable": "the database cannot be reached",
    "locked": "the database is locked by another writer",
    "disk_full": "the database's disk is full",
    "read_only": "the database accepts no writes",
    "timeout": "the database did not answer in time",
    "io_error": "the database reported an I/O error",
}
