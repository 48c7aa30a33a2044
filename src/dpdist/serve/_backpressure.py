"""When a process is past its capacity, and how long a refused device should wait (docs/deployment.md, "Population scale").

Two signals say that a process takes more than it can serve:

* the batches it is serving (from admission to answer) reach ``--max-queue``;
* its event loop lags (while it serves many batches): a timer due every
  :data:`TICK_S` fires late by more than :data:`MAX_LAG_S`.  Requests then wait
  for the loop before anything of them is seen, so a crowd of devices would get
  ever slower answers; refusing the new ones (cheap: nothing is decoded or
  committed) is what brings the lag back down.

A refused batch gets 503 ``busy`` with a ``Retry-After`` that spreads the crowd
over the time the process needs to serve it: the refusals of the last second
divided by the batches it acknowledged in that second, between 1 and
:data:`MAX_RETRY_AFTER_S` seconds, and at most one second more than the
overload has lasted so far (the refusals since the process last went
:data:`CALM_S` seconds without one).  The clients wait that long (jittered up to
50% later) and send the same batch again.  The cap keeps a short flood from
sending the devices it touched away for long: the refusal ratio counts the
flood's requests too, and a 5 s flood used to give honest devices 20-30 s
(outsider6 finding 4); a crowd that lasts still gets up to
:data:`MAX_RETRY_AFTER_S`.
"""

from __future__ import annotations

import asyncio
import math
import time

__all__ = ["Backpressure", "MAX_LAG_S", "TICK_S", "MAX_RETRY_AFTER_S", "CALM_S"]

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
            loop.create_task(self._measure(loop))

    async def _measure(self, loop: asyncio.AbstractEventLoop) -> None:
        while self._loop is loop:
            due = loop.time() + TICK_S
            await asyncio.sleep(TICK_S)
            late = loop.time() - due
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
        self._roll()[0] += 1

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
