"""How a client of a dpdist server retries a request: jittered exponential backoff, ``Retry-After`` honoured, within a
bounded window of time.

A device's batch is idempotent by its batch id (the server counts it once), so
resending it is always safe; what bounds the resending is how long the device
should keep trying.  A restart of the server under load takes seconds to
minutes, so the window is minutes (:data:`DEFAULT_RETRY_WINDOW_S`): a device
retries refused connections, transport errors, the answers that say "later"
(408, 425, 429, 5xx) and a success that is not the acknowledgement of what was sent from its first failure until the window has passed, with a
pause that doubles from ``backoff`` up to :data:`MAX_BACKOFF_S` and is spread over
its upper half (clients refused together do not come back together), or, when the
server sent ``Retry-After``, that long and up to 50% more (never earlier; a ``Retry-After`` over
:data:`MAX_RETRY_AFTER` seconds is read as that many, so the wait is then 60-90 s).  The Python clients (:mod:`dpdist.client`,
``dpdist submit``), the Privacy Pass token fetch and the JavaScript client
(``clients/js/src/connection.js``) follow the same rule.
"""

from __future__ import annotations

import math
import random
import time
from email.utils import parsedate_to_datetime

__all__ = ["Retries", "retry_after", "retry_delay", "DEFAULT_RETRY_WINDOW_S", "MAX_BACKOFF_S", "MAX_RETRY_AFTER",
           "NOT_ACKNOWLEDGED"]

#: seconds a request is retried after its first failure (a restart under load, with room)
DEFAULT_RETRY_WINDOW_S = 300.0
#: the longest pause between two attempts without a Retry-After (seconds)
MAX_BACKOFF_S = 10.0
#: the longest wait a server's Retry-After may ask of a client (seconds)
MAX_RETRY_AFTER = 60.0
#: how the failure of a successful answer that is not the acknowledgement of what was sent opens (a proxy's, a
#: captive portal's 200: retried as a failure; ``dpdist._http._acks``), so that whoever reports it can say so
NOT_ACKNOWLEDGED = "no acknowledgement"


def retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date), ``None`` if absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return min(float(value), MAX_RETRY_AFTER)
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(max(0.0, moment.timestamp() - time.time()), MAX_RETRY_AFTER)


def retry_delay(backoff: float, asked: float | None) -> float:
    """The wait before a retry, jittered so that many clients refused together do not return together.

    A server's ``Retry-After`` (``asked``, read at most :data:`MAX_RETRY_AFTER` by :func:`retry_after`) is
    honoured (never earlier, up to 50% later); otherwise the exponential backoff is spread over its upper half
    ("equal jitter").
    """
    if asked is not None:
        return asked * random.uniform(1.0, 1.5)
    return backoff * random.uniform(0.5, 1.0)


class Retries:
    """The retries of one request, made as its first attempt starts: call :meth:`pause` after each failed attempt.

    ``window``: seconds from the first failure during which attempts are made (0: none after the first);
    ``backoff``: the first pause (seconds), doubled each time up to :data:`MAX_BACKOFF_S`; ``retries``: at most this
    many attempts after the first as well (None: as many as the window allows).
    """

    def __init__(self, *, window: float = DEFAULT_RETRY_WINDOW_S, backoff: float = 0.25, retries: int | None = None,
                 clock=None):
        self.window, self.backoff, self.retries = float(window), float(backoff), retries
        self.clock = clock if clock is not None else lambda: time.monotonic()  # looked up at each call (tests move it)
        self.failures = 0
        self.started = self.clock()  # made as the first attempt starts (every caller): what spent counts from
        self.first: float | None = None
        self._next = self.backoff

    @property
    def elapsed(self) -> float:
        """Seconds since the first failure (0 before one)."""
        return 0.0 if self.first is None else self.clock() - self.first

    @property
    def spent(self) -> float:
        """Seconds since the first attempt started (these retries were made): the attempts' time and the pauses', what
        a message says the request took (:attr:`elapsed` leaves out the first attempt: a 60 s timeout read "0.0 s")."""
        return self.clock() - self.started

    def left(self) -> float:
        """Seconds of the window left."""
        return max(0.0, self.window - self.elapsed)

    def pause(self, asked: float | None = None) -> float | None:
        """After a failed attempt (``asked``: the seconds its answer's ``Retry-After`` asked for, if any): the pause
        before the next attempt, or None when none is left (the window has passed, or the count of retries is spent;
        a ``Retry-After`` beyond the window is not cut short)."""
        if self.first is None:
            self.first = self.clock()
        self.failures += 1
        if self.retries is not None and self.failures > self.retries:
            return None
        left = self.left()
        if left <= 0:  # the window has passed (a backoff of 0 would otherwise retry at once for ever)
            return None
        delay = retry_delay(self._next, asked)
        self._next = min(MAX_BACKOFF_S, self._next * 2)
        if delay <= left:
            return delay
        return left if asked is None and left > 0 else None  # a last attempt at the window's end

    def spent_all(self) -> bool:
        """Whether the count of retries is spent (as opposed to the window)."""
        return self.retries is not None and self.failures > self.retries

    def attempts_left(self) -> int:
        """How many more attempts the window (and the count of retries) allows at most, pauses at their longest and
        without Retry-After: what a caller can say to a person."""
        left, pause, attempts = self.left(), self._next, 0
        while left > 0 and attempts < 10_000:
            left -= pause
            attempts += 1
            pause = min(MAX_BACKOFF_S, pause * 2)
        if self.retries is not None:
            attempts = min(attempts, max(0, self.retries + 1 - self.failures))  # retries + 1 attempts in all
        return attempts


def describe_window(seconds: float) -> str:
    """``seconds`` for a person: "45 s", "5 min", "1.5 h"."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.{0 if math.isclose(seconds % 60, 0) else 1}f} min"
    return f"{seconds / 3600:.1f} h"
