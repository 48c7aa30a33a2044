"""When a process is past its capacity, and how long a refused device should wait (docs/explanation/service-at-scale.md, "Population scale").

Two signals say that a process takes more than it can serve:

* the batches it is serving (from admission to answer) reach ``--max-queue``;
* its event loop lags (while it serves many batches): a timer due every
  :data:`TICK_S` fires late by more than :data:`MAX_LAG_S`, not counting the time
  the loop's thread waited for a processor that other processes held
  (:class:`Starved`).  Requests then wait for the loop before anything of them is
  seen, so a crowd of devices would get ever slower answers; refusing the new ones
  (cheap: nothing is decoded or committed) is what brings the lag back down.  A
  loop made late by the rest of a busy machine is not overloaded by its own
  work, and refusing would only turn away requests it serves as fast as the
  machine lets it (at 64 connections on a shared machine, 5-34% of the
  requests that a bare app answered were refused).

A refused batch gets 503 ``busy`` with a ``Retry-After`` that spreads the crowd
over the time the process needs to serve it: the refusals of the last second
divided by the batches it acknowledged in that second, between 1 and
:data:`MAX_RETRY_AFTER_S` seconds, and at most one second more than the
overload has lasted so far (the refusals since the process last went
:data:`CALM_S` seconds without one).  The clients wait that long (jittered up to
50% later) and send the same batch again.  The cap keeps a short flood from
sending the devices it touched away for long: the refusal ratio counts the
flood's requests too, and a 5 s flood used to give honest devices 20-30 s; a crowd
that lasts still gets up to
:data:`MAX_RETRY_AFTER_S`.
"""

from __future__ import annotations

import asyncio
import math
import os
import time

__all__ = ["Backpressure", "Starved", "MAX_LAG_S", "TICK_S", "MAX_RETRY_AFTER_S", "CALM_S"]

#: how often the event loop's lag is measured (seconds)
TICK_S = 0.02
#: a loop later than this refuses new batches (seconds)
MAX_LAG_S = 0.05
#: the longest Retry-After the process asks for (seconds)
MAX_RETRY_AFTER_S = 30
#: seconds without a refusal after which an overload is over (the next refusal begins a new one)
CALM_S = 2.0


class Backpressure:
    """The overload signals of one process (event loop only: no lock)."""

    def __init__(self, clock=time.monotonic):
        self.lag = 0.0
        self._loop = None
        self._task: asyncio.Task | None = None  # the lag's measure on the loop watched
        self._clock = clock
        self._second = int(clock())
        self._overload_began = self._last_refusal = -math.inf  # the current overload's first refusal, and its last
        self._counts = [0, 0]  # this second's acknowledged batches and refusals
        self._last = [0, 0]  # the previous second's

    def watch(self) -> None:
        """Measure the running event loop's lag from now on (once per loop)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop = loop
            self._task = loop.create_task(self._measure(loop))

    def stop(self) -> None:
        """Stop measuring (on the loop, at the lifespan's end): no task is left pending when the server's loop
        closes (\"Task was destroyed but it is pending\").  The next :meth:`watch` measures again."""
        self._loop = None
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _measure(self, loop: asyncio.AbstractEventLoop) -> None:
        starved = Starved()  # on the loop's thread: its own scheduler counters
        while self._loop is loop:
            due = loop.time() + TICK_S
            mark = starved.mark()
            await asyncio.sleep(TICK_S)
            late = max(0.0, loop.time() - due - starved.since(mark))
            self.lag = late if late > self.lag else 0.8 * self.lag + 0.2 * late  # up at once, down smoothly

    @property
    def overloaded(self) -> bool:
        return self.lag > MAX_LAG_S

    def _roll(self) -> list[int]:
        second = int(self._clock())
        if second != self._second:
            self._last = self._counts if second == self._second + 1 else [0, 0]
            self._counts, self._second = [0, 0], second
        return self._counts

    def acknowledged(self) -> None:
        counts = self._counts if int(self._clock()) == self._second else self._roll()  # (every batch: _roll's call spared)
        counts[0] += 1

    def retry_after(self) -> int:
        """Count a refusal; the seconds the refused device should wait."""
        self._roll()[1] += 1
        now = self._clock()
        if now - self._last_refusal > CALM_S:
            self._overload_began = now
        self._last_refusal = now
        served, refused = self._last
        lasted = math.ceil(now - self._overload_began) + 1
        return max(1, min(MAX_RETRY_AFTER_S, lasted, math.ceil(refused / max(served, 1))))


class Starved:
    """How long the thread that made it waited for a processor held by other processes (Linux; elsewhere always 0).

    The kernel counts, per thread, the time it was ready to run but waiting in the
    run queue (``/proc/thread-self/schedstat``, its second field).  Part of that
    wait may be this process's other threads (the committer, on the same core):
    their processor time over the same stretch is this process's own work, and is
    not subtracted.  So :meth:`since` is the run-queue wait beyond the process's
    other threads' processor time: what the rest of the machine took.
    """

    def __init__(self, path: str = "/proc/thread-self/schedstat"):
        try:
            self._fd: int | None = os.open(path, os.O_RDONLY)
            self._read()
        except (OSError, ValueError, IndexError):  # not Linux, or no scheduler statistics
            self._fd = None

    def __del__(self):
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)

    def _read(self) -> tuple[float, float]:
        """This thread's processor time and run-queue wait so far (seconds)."""
        assert self._fd is not None  # read only once the file is open (__init__, mark)
        fields = os.pread(self._fd, 128, 0).split()
        return int(fields[0]) / 1e9, int(fields[1]) / 1e9

    def mark(self) -> tuple[float, float, float] | None:
        """Where the counters stand now: (this thread's processor time, its run-queue wait, the process's processor
        time)."""
        if self._fd is None:
            return None
        mine, waited = self._read()
        return mine, waited, time.process_time()

    def since(self, mark: tuple[float, float, float] | None) -> float:
        """Seconds this thread waited for a processor since ``mark``, beyond its process's other threads' work."""
        if mark is None:
            return 0.0
        mine, waited, process = self.mark() or mark
        return starved_by_others(waited - mark[1], (process - mark[2]) - (mine - mark[0]))


def starved_by_others(waited: float, others: float) -> float:
    """Of ``waited`` seconds in the run queue, those not explained by ``others`` seconds of the process's other
    threads' processor time."""
    return max(0.0, waited - max(0.0, others))
