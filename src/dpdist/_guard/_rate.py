"""A token bucket per client address, kept in memory only as long as its window (docs/reference/service-limits.md, "Limits").

``rate`` requests per second, bursts of ``burst``: a client address (IPv6: its
/64, which one host usually holds whole) may send ``burst`` requests at once,
then one per ``1 / rate`` seconds.  The buckets live in this process's memory
only, never in a log or a file, and an address is forgotten once its bucket is
full again (at most ``burst / rate`` seconds after its last request, the
*window*: 5 s with the defaults): a full bucket and a forgotten one behave the
same, so forgetting changes no answer.  The forgetting runs on every request and,
while any address is remembered, from a timer of the running event loop, so
an idle server forgets too.
"""

from __future__ import annotations

import asyncio
import ipaddress
import math
import re
import time
from collections import OrderedDict

from ._refusals import RateLimited

__all__ = ["RateLimiter", "address_key", "MAX_RATE_KEYS", "DEFAULT_MAX_PENDING_HEADS"]

#: connections with incomplete request headers one client address may hold (``--max-pending-heads-per-address``,
#: :mod:`._protocol`)
DEFAULT_MAX_PENDING_HEADS = 50
#: client addresses the rate limiter remembers at most (beyond: the least recently seen are forgotten)
MAX_RATE_KEYS = 100_000


#: an IPv4 address written as ``ipaddress`` writes it (no leading zeros): its own key, without parsing it (about 3 us,
#: and every request asks for its address's key)
_CANONICAL_IPV4 = re.compile(r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])")


def address_key(host: str | None) -> str:
    """What identifies a client: its IPv4 address, or its IPv6 /64 (an IPv4-mapped IPv6 address is its IPv4)."""
    if not host:
        return "-"
    if _CANONICAL_IPV4.fullmatch(host):
        return host
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if address.version == 6:
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


class RateLimiter:
    """Token buckets of ``burst`` requests, refilled at ``rate`` per second, keyed by client address (module docstring).

    ``rate`` 0: no limit (nothing is remembered).  Event loop (or one thread) only: no lock.
    """

    def __init__(self, rate: float, burst: int, max_keys: int = MAX_RATE_KEYS, clock=time.monotonic):
        self.rate, self.burst, self.max_keys, self.clock = float(rate), int(burst), int(max_keys), clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # least recently seen first
        self._timer: asyncio.TimerHandle | None = None

    key = staticmethod(address_key)

    @property
    def window(self) -> float:
        """Seconds after its last request by which an address's bucket is full again, and the address forgotten."""
        return self.burst / self.rate if self.rate > 0 else 0.0

    def take(self, host: str | None) -> float:
        """0 if a request of this client may go now (one token taken), else the seconds until it may."""
        if self.rate <= 0:
            return 0.0
        key, now = address_key(host), self.clock()
        self.forget(now)
        tokens, then = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        if tokens >= 1.0:
            tokens -= 1.0
            wait = 0.0
        else:
            wait = (1.0 - tokens) / self.rate
        self._buckets[key] = (tokens, now)  # most recently seen last
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        self._arm()
        return wait

    def forget(self, now: float) -> None:
        """Forget the addresses whose window has passed (their buckets are full: the same as never seen)."""
        buckets, window = self._buckets, self.window
        while buckets:
            key, (_, then) = next(iter(buckets.items()))
            if now - then < window:
                return  # the rest were seen more recently
            del buckets[key]

    def _arm(self) -> None:
        """While an address is remembered, a timer of the running event loop forgets it once its window passes."""
        if self._timer is not None or not self._buckets:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on an event loop (a caller with its own clock): forgotten on the next request
            return
        self._timer = loop.call_later(self.window, self._tick)

    def _tick(self) -> None:
        self._timer = None
        self.forget(self.clock())
        self._arm()

    def remembered(self) -> int:
        """How many client addresses are in memory now."""
        return len(self._buckets)

    def check(self, host: str | None, what: str = "requests") -> None:
        """Raise :class:`RateLimited` (429, ``Retry-After``, connection closed) if this client is over its rate."""
        if self.rate <= 0:  # no limit (as take answers, one call less: every batch asks)
            return
        wait = self.take(host)
        if wait > 0:
            raise RateLimited(
                "rate_limited",
                f"This client sends {what} faster than the server's limit of {self.rate:g} per second "
                f"(bursts of {self.burst}); retry the same request later.",
                retry_after=max(1, math.ceil(wait)),
                close=True,
            )
