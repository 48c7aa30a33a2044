"""What bounds a client of ``dpdist serve``: memory, time, connections, rate and size (issue 29).

An unauthenticated client must not be able to make the server hold memory,
connections or CPU beyond stated bounds.  The bounds, all options of
``dpdist serve`` (``docs/deployment.md``, "Limits"):

* **before the body**: a batch's campaign is looked up and its submit or
  enrollment token checked before one byte of the body is read; a refusal
  closes the connection (``Connection: close``), so an unread body costs nothing;
* **in-flight body bytes** (``--max-inflight-bytes``): the bytes of request
  bodies held by the process at once, over all requests; a body that would pass
  it is refused at once with 503 and ``Retry-After``;
* **body time** (``--body-timeout``, ``--min-body-rate``): a body must arrive
  within the deadline, and by ``t`` seconds after its headers have delivered at
  least ``min_body_rate * (t - 5)`` bytes; otherwise 408 and the connection is
  closed;
* **header time** (``--header-timeout``): a connection whose request headers are
  not complete within it (from the connection's start, or from the first byte of
  a following request) is closed: slowloris connections do not accumulate;
* **idle keep-alive** (``--keep-alive-timeout``), **connections**
  (``--limit-concurrency``: beyond it uvicorn answers 503), request headers of at
  most 16 KiB (h11's limit, and :mod:`._protocol_httptools`'s), and a **graceful-shutdown** deadline
  (``--graceful-timeout``) after which SIGTERM cancels requests still running;
* **rate** (``--rate-limit``, ``--rate-burst``): a token bucket of batches per
  client address (IPv6: per /64), in memory, per process;
* **size of work**: records per binary batch (``--max-records``), rows per JSON
  batch (``--max-json-rows``), rows classified one by one (:data:`MAX_CHECKED_ROWS`),
  and a campaign's statistic (``--max-statistic-bytes``);
* **work in progress** (``--max-queue``): batches being served, from their
  admission to their answer; beyond it a batch is refused with 503 ``busy`` and
  ``Retry-After`` before its body is read (issue 28: answers within milliseconds,
  never minutes of silence); ``--commit-delay`` bounds how long a group commit
  waits for more batches.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import math
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass, fields

from ..errors import InvalidParameterError
from ._refusals import Busy, InvalidRequest, RateLimited, TooLarge, TooSlow

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_STATISTIC_BYTES", "Limits", "BodyBudget", "RateLimiter", "receive_body", "uvicorn_options", "add_arguments", "from_args"]

#: largest request body the service reads (a batch of 10^4 OUE reports with d = 1024 is 1.3 MB)
DEFAULT_MAX_BODY_BYTES = 16 << 20
#: largest campaign statistic (the protocol's statistic_size x its dtype) accepted at creation
DEFAULT_MAX_STATISTIC_BYTES = 64 << 20
#: seconds a body may take before the minimum rate applies
BODY_GRACE_S = 5.0
#: rows of a JSON batch classified one by one (booleans, nulls, wrong shapes; structured layouts)
MAX_CHECKED_ROWS = 10_000
#: request line and headers, at most (h11's default limit, stated; enforced on httptools by _protocol_httptools)
MAX_HEADER_BYTES = 16 << 10
#: HTTP parsers of ``--http``: httptools when installed (``auto``), else h11 (:mod:`._protocol`)
HTTP_CHOICES = ("auto", "httptools", "h11")
#: client addresses the rate limiter remembers (beyond: the idle ones, then the oldest, are forgotten)
MAX_RATE_KEYS = 100_000


@dataclass(frozen=True)
class Limits:
    """The bounds of one ``dpdist serve`` process (defaults: safe for a server on the internet)."""

    max_inflight_bytes: int = 128 << 20
    header_timeout: float = 10.0
    body_timeout: float = 120.0
    min_body_rate: int = 1024
    keep_alive_timeout: int = 5
    limit_concurrency: int = 1000
    graceful_timeout: int = 10
    rate_limit: float = 20.0
    rate_burst: int = 100
    max_records: int = 1024
    max_json_rows: int = 100_000
    max_statistic_bytes: int = DEFAULT_MAX_STATISTIC_BYTES
    access_log: str = "anonymous"
    retention_days: float | None = None
    max_queue: int = 256
    commit_delay: float = 0.002
    http: str = "auto"
    body_grace: float = BODY_GRACE_S  # not an option: tests shorten it

    def check(self, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> "Limits":
        """Refuse out-of-range values, naming the option of ``dpdist serve``."""

        def need(ok: bool, name: str, allowed: str):
            if not ok:
                option = "--" + name.replace("_", "-")
                raise InvalidParameterError(f"The '{option}' option must be {allowed}. Got {getattr(self, name)!r}.")

        def positive(name, kind=(int, float)):
            value = getattr(self, name)
            need(isinstance(value, kind) and not isinstance(value, bool) and math.isfinite(value) and value > 0, name,
                 "a number > 0" if kind != int else "an int > 0")

        for name in ("header_timeout", "body_timeout"):
            positive(name)
        for name in ("min_body_rate", "keep_alive_timeout", "limit_concurrency", "graceful_timeout", "rate_burst",
                     "max_records", "max_json_rows", "max_statistic_bytes", "max_queue"):
            positive(name, int)
        need(isinstance(self.commit_delay, (int, float)) and not isinstance(self.commit_delay, bool)
             and 0 <= self.commit_delay <= 0.1, "commit_delay", "a number of seconds in [0, 0.1]")
        need(isinstance(self.max_inflight_bytes, int) and self.max_inflight_bytes >= max_body_bytes, "max_inflight_bytes",
             f"an int >= --max-body-bytes ({max_body_bytes})")
        need(isinstance(self.rate_limit, (int, float)) and math.isfinite(self.rate_limit) and self.rate_limit >= 0,
             "rate_limit", "a number >= 0 (0: no rate limit)")
        need(self.access_log in ("anonymous", "full", "off"), "access_log", "one of 'anonymous', 'full', 'off'")
        need(self.http in HTTP_CHOICES, "http", "one of " + ", ".join(repr(choice) for choice in HTTP_CHOICES))
        need(self.retention_days is None or (isinstance(self.retention_days, (int, float)) and self.retention_days > 0
                                             and math.isfinite(self.retention_days)), "retention_days", "a number of days > 0")
        return self


# ---------------------------------------------------------------------- memory
class BodyBudget:
    """Request-body bytes held by this process at once, over all requests (event-loop only: no lock).

    ``peak`` is the most ever held: what the tests read to see that a refused
    body was never buffered.
    """

    def __init__(self, limit: int):
        self.limit = int(limit)
        self.in_flight = 0
        self.peak = 0

    def fits(self, size: int) -> bool:
        return self.in_flight + size <= self.limit

    def take(self, size: int) -> bool:
        if not self.fits(size):
            return False
        self.in_flight += size
        self.peak = max(self.peak, self.in_flight)
        return True

    def give_back(self, size: int) -> None:
        self.in_flight -= size


def _busy(budget: BodyBudget) -> Busy:
    return Busy(
        "busy",
        f"The server holds {budget.limit} bytes of request bodies at most (--max-inflight-bytes) and is full; "
        "retry the same batch later.",
        retry_after=2,
        close=True,
    )


if sys.version_info >= (3, 11):  # Python >= 3.11: a deadline without a task per receive

    async def _receive_by(receive, when: float):
        async with asyncio.timeout_at(when):
            return await receive()

else:  # pragma: no cover - Python 3.10

    async def _receive_by(receive, when: float):
        return await asyncio.wait_for(receive(), when - asyncio.get_running_loop().time())


@contextlib.asynccontextmanager
async def receive_body(length: str | None, receive, limits: Limits, budget: BodyBudget, max_body_bytes: int,
                       on_too_large=None):
    """The request's body (its ``Content-Length`` header, None without one; its ASGI ``receive``), held against
    ``budget`` until the ``async with`` block ends.

    Refusals close the connection: 413 ``too_large`` (over ``max_body_bytes``,
    at once when Content-Length says so), 503 ``busy`` (the budget is full),
    408 ``body_timeout`` (past the deadline or below the minimum rate).
    """
    declared = int(length) if length is not None and length.isdigit() else None
    if declared is not None and declared > max_body_bytes:
        if on_too_large is not None:
            await on_too_large()
        raise _too_large(max_body_bytes)
    if declared is not None and not budget.fits(declared):
        raise _busy(budget)
    start = asyncio.get_running_loop().time()
    held, chunks, more = 0, [], True
    try:
        while more:
            # the moment this body falls behind: its deadline, or min_body_rate after the grace period
            when = start + min(limits.body_timeout, limits.body_grace + held / limits.min_body_rate)
            try:
                message = await _receive_by(receive, when)
            except (asyncio.TimeoutError, TimeoutError):
                raise _too_slow(limits, held) from None
            if message["type"] == "http.disconnect":  # the client went away mid-body: nothing to log as an error
                raise InvalidRequest(
                    "client_disconnected", "The client closed the connection before its body was complete.", close=True
                )
            chunk, more = message.get("body", b""), message.get("more_body", False)
            if not chunk:
                continue
            if held + len(chunk) > max_body_bytes:
                if on_too_large is not None:
                    await on_too_large()
                raise _too_large(max_body_bytes)
            if not budget.take(len(chunk)):
                raise _busy(budget)
            held += len(chunk)
            chunks.append(chunk)
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        yield body
    finally:
        budget.give_back(held)


def _too_large(limit: int) -> TooLarge:
    return TooLarge("too_large", f"The request body exceeds the server's limit of {limit} bytes; send smaller batches.", close=True)


def _too_slow(limits: Limits, held: int) -> TooSlow:
    return TooSlow(
        "body_timeout",
        f"The request body arrived too slowly ({held} bytes received): a body must arrive within {limits.body_timeout:g} s, "
        f"at {limits.min_body_rate} bytes/s or more after its first {limits.body_grace:g} s.",
        close=True,
    )


# ---------------------------------------------------------------------- rate
class RateLimiter:
    """Token buckets of ``burst`` batches, refilled at ``rate`` per second, keyed by client address.

    In memory and per process (several workers each keep their own). IPv6
    addresses are keyed by their /64 (one host usually holds a whole /64).
    """

    def __init__(self, rate: float, burst: int, max_keys: int = MAX_RATE_KEYS, clock=time.monotonic):
        self.rate, self.burst, self.max_keys, self.clock = float(rate), int(burst), int(max_keys), clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    @staticmethod
    def key(host: str | None) -> str:
        if not host:
            return "-"
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return host
        if address.version == 6:
            if address.ipv4_mapped is not None:
                return str(address.ipv4_mapped)
            return str(ipaddress.ip_network(f"{address}/64", strict=False))
        return str(address)

    def take(self, host: str | None) -> float:
        """0 if a batch of this client may go now (one token taken), else the seconds until it may."""
        if self.rate <= 0:
            return 0.0
        key, now = self.key(host), self.clock()
        tokens, then = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        if tokens >= 1.0:
            tokens -= 1.0
            wait = 0.0
        else:
            wait = (1.0 - tokens) / self.rate
        self._buckets[key] = (tokens, now)  # most recently used last
        if len(self._buckets) > self.max_keys:
            self._forget(now)
        return wait

    def _forget(self, now: float) -> None:
        full = [k for k, (tokens, then) in self._buckets.items() if tokens + (now - then) * self.rate >= self.burst]
        for key in full:  # a full bucket is the same as a forgotten one
            del self._buckets[key]
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)

    def check(self, host: str | None) -> None:
        wait = self.take(host)
        if wait > 0:
            raise RateLimited(
                "rate_limited",
                f"This client sends batches faster than the server's limit of {self.rate:g} per second "
                f"(bursts of {self.burst}); retry the same batch later.",
                retry_after=max(1, math.ceil(wait)),
                close=True,
            )


# ---------------------------------------------------------------------- uvicorn
def protocol_class(header_timeout: float | None = None, http: str = "auto"):
    """uvicorn's HTTP protocol with a header timeout, a header-size limit and without uvicorn's access line.

    ``http``: ``"httptools"`` (:mod:`._protocol_httptools`), ``"h11"``
    (:mod:`._protocol`), or ``"auto"``: httptools when it is installed, else h11.
    Without ``header_timeout``, the class reads it from its uvicorn ``Config``
    (``config.dpdist_header_timeout``): the class of the worker processes of
    ``dpdist serve --workers N``, importable by name.
    """
    from ._protocol import HeaderTimeoutH11Protocol

    base: type = HeaderTimeoutH11Protocol
    if http != "h11":
        try:
            from ._protocol_httptools import HeaderTimeoutHttpToolsProtocol
        except ImportError:
            if http == "httptools":
                raise InvalidParameterError("The '--http' option is 'httptools' but httptools is not installed "
                                            "(pip install httptools, or --http h11).") from None
        else:
            base = HeaderTimeoutHttpToolsProtocol
    if header_timeout is None:
        return base
    return type(base.__name__, (base,), {"header_timeout": float(header_timeout)})


def uvicorn_options(limits: Limits) -> dict:
    """Keyword arguments of ``uvicorn.run`` / ``uvicorn.Config`` that enforce ``limits``."""
    return {
        "http": protocol_class(limits.header_timeout, limits.http),
        "timeout_keep_alive": limits.keep_alive_timeout,
        "limit_concurrency": limits.limit_concurrency,
        "timeout_graceful_shutdown": limits.graceful_timeout,
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
        "server_header": False,
    }


# ---------------------------------------------------------------------- command line
_HELP = {
    "max_inflight_bytes": "request-body bytes held at once over all requests; beyond it 503 with Retry-After (default {})",
    "header_timeout": "seconds for a connection's request headers to arrive; slower connections are closed (default {})",
    "body_timeout": "seconds for a request body to arrive; slower bodies get 408 (default {})",
    "min_body_rate": f"bytes per second a body must average after its first {BODY_GRACE_S:g} s, else 408 (default {{}})",
    "keep_alive_timeout": "seconds an idle keep-alive connection stays open (default {})",
    "limit_concurrency": "connections and requests at once; beyond it 503 (default {})",
    "graceful_timeout": "seconds SIGTERM waits for running requests before cancelling them (default {})",
    "rate_limit": "batches per second per client address (IPv6: per /64), per process; 0: no limit (default {})",
    "rate_burst": "batches a client address may send at once before --rate-limit applies (default {})",
    "max_records": "binary report records per batch; more is refused with 413 (default {})",
    "max_json_rows": "rows per JSON batch; more is refused with 413 (default {})",
    "max_statistic_bytes": "largest campaign statistic (protocol statistic size x 8 bytes) accepted at creation (default {})",
    "access_log": "access log lines: 'anonymous' (no client address, no batch id, no query string), 'full' "
    "(client address and batch id, no query string) or 'off' (default {})",
    "retention_days": "delete kept raw reports older than this, and the batch records of campaigns closed longer ago "
    "(aggregates stay; default: keep)",
    "max_queue": "batches served at once (from their admission to their answer), per process; beyond it 503 with "
    "Retry-After before the body is read (default {})",
    "http": "HTTP parser: 'httptools' (C, the faster), 'h11' (pure Python), or 'auto': httptools when installed "
    "(default {})",
    "commit_delay": "seconds a group commit waits for more batches when fewer than 8 wait (default {})",
}


def add_arguments(parser) -> None:
    """The options of ``dpdist serve`` that set :class:`Limits`."""
    defaults = Limits()
    for field in fields(Limits):
        if field.name not in _HELP:
            continue
        default = getattr(defaults, field.name)
        kind = {"access_log": str, "http": str, "retention_days": float}.get(field.name, type(default))
        choices = {"access_log": ["anonymous", "full", "off"], "http": list(HTTP_CHOICES)}.get(field.name)
        options = {"choices": choices} if choices else {}
        parser.add_argument(
            "--" + field.name.replace("_", "-"),
            type=kind,
            default=default,
            help=_HELP[field.name].format(default),
            **options,
        )


def from_args(args, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> Limits:
    values = {field.name: getattr(args, field.name) for field in fields(Limits) if field.name in _HELP}
    return Limits(**values).check(max_body_bytes)
