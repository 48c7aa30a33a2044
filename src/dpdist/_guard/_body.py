"""Request bodies read within bounds of size, time and memory, and the memory shared fairly (docs/reference/service-limits.md, "Limits").

:class:`BodyBudget` is the request-body bytes one process holds at once, over
all requests (``--max-inflight-bytes``), with two shares inside it so that no
one can take all of it:

* **per client address** (``--max-inflight-bytes-per-address``; IPv6: per /64):
  ten slow uploads from one address hold at most that address's share, and
  every other address still gets its bodies read;
* **anonymous bodies**: the bodies of requests that carry no credential the
  server checked before reading them (a campaign open to anyone, a relay's
  submission) hold at most half of the pool, so that requests whose token was
  checked (an enrollment or submit token, the relay's delivery, an admin) always
  find the other half, however many addresses the anonymous senders have.

A body that would pass the pool or a share is refused at once with 503 ``busy``
and ``Retry-After``; nothing of it is kept.  :func:`receive_body` reads one body
within these bounds and the size and time limits (:class:`._limits.Limits`).

A body is read as it is sent: one in a content coding (``Content-Encoding``
other than ``identity``) is refused with 415 ``unsupported_content_encoding``
before any of it is read (:func:`check_content_coding`; RFC 9110 sec. 8.4 and
15.5.16).  Taking it as it comes would count a compressed body's bytes as the
batch, and decoding it would let a few kilobytes unpack into gigabytes.
"""

from __future__ import annotations

import asyncio
import sys

from ._rate import address_key
from ._refusals import Busy, InvalidRequest, TooLarge, TooSlow, UnsupportedContentCoding

__all__ = ["BodyBudget", "HeldBody", "receive_body", "body_ready", "too_large", "too_slow", "body_deadline", "next_deadline", "RETRY_BUSY_S",
           "CLIENT_GONE", "NO_RESPONSE", "check_content_coding", "content_coding_of"]

#: the refusal code of a body whose client closed the connection before its end: nothing is answered (no response)
CLIENT_GONE = "client_disconnected"
#: scope key set (True) when a request ended without a response because its client went away
NO_RESPONSE = "dpdist.no_response"
#: seconds a client refused for want of body memory is asked to wait
RETRY_BUSY_S = 2


class BodyBudget:
    """Request-body bytes held by this process at once, with a share per address and one for anonymous bodies
    (module docstring; event loop only: no lock).

    ``limit``: the pool; ``share``: what one client address may hold (default: the pool); ``anonymous``: what
    bodies without a checked credential may hold together (default: half the pool, at least ``share``).
    ``peak`` is the most ever held: what the tests read to see that a refused body was never buffered.
    """

    def __init__(self, limit: int, share: int | None = None, anonymous: int | None = None):
        self.limit = int(limit)
        self.share = min(self.limit, int(share) if share is not None else self.limit)
        self.anonymous = min(self.limit, int(anonymous) if anonymous is not None else max(self.limit // 2, self.share))
        self.in_flight = self.anonymous_in_flight = self.peak = 0
        self._held: dict[str, int] = {}  # bytes held per address key, only while held

    def held_by(self, host: str | None) -> int:
        return self._held.get(address_key(host), 0)

    def refusal(self, size: int, host: str | None = None, anonymous: bool = False) -> Busy | None:
        """Why ``size`` more bytes of a body of ``host`` cannot be held now (a :class:`Busy`), or None if they can."""
        return self.refusal_of(size, address_key(host), anonymous)

    def refusal_of(self, size: int, key: str, anonymous: bool) -> Busy | None:
        """:meth:`refusal` for the address key ``key`` (:func:`._rate.address_key`) found already."""
        if self.in_flight + size > self.limit:
            why = f"The server holds {self.limit} bytes of request bodies at most (--max-inflight-bytes) and is full"
        elif self._held.get(key, 0) + size > self.share:
            why = (f"This client address holds the most request-body bytes one address may hold at once "
                   f"({self.share}, --max-inflight-bytes-per-address)")
        elif anonymous and self.anonymous_in_flight + size > self.anonymous:
            why = (f"Requests without a checked token hold the most request-body bytes they may hold together "
                   f"({self.anonymous}, half of --max-inflight-bytes)")
        else:
            return None
        return Busy("busy", why + "; retry the same request later.", retry_after=RETRY_BUSY_S, close=True)

    def fits(self, size: int, host: str | None = None, anonymous: bool = False) -> bool:
        return self.refusal(size, host, anonymous) is None

    def take(self, size: int, host: str | None = None, anonymous: bool = False) -> bool:
        return self.hold(size, address_key(host), anonymous) is None

    def hold(self, size: int, key: str, anonymous: bool) -> Busy | None:
        """Hold ``size`` more bytes of a body of the address key ``key`` (:func:`._rate.address_key`) unless they do not
        fit: then their refusal (nothing held), else None."""
        refused = self.refusal_of(size, key, anonymous)
        if refused is None:
            self._held[key] = self._held.get(key, 0) + size
            self.in_flight += size
            if anonymous:
                self.anonymous_in_flight += size
            self.peak = max(self.peak, self.in_flight)
        return refused

    def give_back(self, size: int, host: str | None = None, anonymous: bool = False) -> None:
        self.release(size, address_key(host), anonymous)

    def release(self, size: int, key: str, anonymous: bool) -> None:
        """Give back ``size`` bytes of a body of the address key ``key`` (nothing for ``size`` 0)."""
        if size <= 0:
            return
        left = self._held.get(key, 0) - size
        if left > 0:
            self._held[key] = left
        else:  # the address is forgotten as soon as it holds nothing
            self._held.pop(key, None)
        self.in_flight -= size
        if anonymous:
            self.anonymous_in_flight -= size

    def addresses(self) -> int:
        """How many client addresses hold body bytes now (the only addresses the budget remembers)."""
        return len(self._held)


if sys.version_info >= (3, 11):  # Python >= 3.11: a deadline without a task per receive

    async def receive_by(receive, when: float):
        """``await receive()``, or :class:`TimeoutError` at the event loop's time ``when``."""
        async with asyncio.timeout_at(when):
            return await receive()

else:  # pragma: no cover - Python 3.10: asyncio.timeout_at's backport (asyncio.wait_for can drop a cancellation)

    async def receive_by(receive, when: float):
        """``await receive()``, or :class:`TimeoutError` at the event loop's time ``when``."""
        from async_timeout import timeout_at  # pyright: ignore[reportMissingImports]  # lazy: Python 3.10 only (the serve and relay extras bring it there)

        async with timeout_at(when):
            return await receive()


def body_deadline(limits, start: float, held: int) -> float:
    """The event-loop time by which the first bytes of a body begun at ``start`` must come (``held``: 0), or, on the
    rule since the body's start alone, its next bytes: its deadline, or ``min_body_rate`` after the grace period."""
    return start + min(limits.body_timeout, limits.body_grace + held / limits.min_body_rate)


def next_deadline(limits, start: float, due: float, now: float, size: int) -> float:
    """The time by which a body's next bytes must come once ``size`` bytes came at ``now`` (the previous one: ``due``).

    Each byte earns ``1 / min_body_rate`` seconds, but a body banks at most ``body_idle_timeout`` seconds ahead of
    now: it may pause that long, and over any longer stretch it must average ``min_body_rate`` (a rate over a sliding
    window).  Without the cap, a body sent mostly at once and then stalled (16 MiB at 1 KiB/s: 4.6 hours of credit)
    held its bytes until ``body_timeout``.
    """
    return min(start + limits.body_timeout, now + limits.body_idle_timeout, due + size / limits.min_body_rate)


class HeldBody:
    """The ASGI ``receive`` of a body already in memory (the Oblivious HTTP gateway's inner request): its one message,
    then ``http.disconnect``.  Nothing of it can be slow: :class:`receive_body` reads it without a deadline."""

    __slots__ = ("message",)

    def __init__(self, body: bytes):
        self.message: dict | None = {"type": "http.request", "body": body, "more_body": False}

    async def __call__(self) -> dict:
        message, self.message = self.message, None
        return message if message is not None else {"type": "http.disconnect"}


def body_ready(receive) -> bool:
    """Whether ``await receive()`` returns without waiting: a :class:`HeldBody`, or uvicorn's request cycle
    (``receive.__self__``) holding the message already (its ``message_event`` is set once body bytes or the body's end
    arrived).  Such a receive needs no deadline: nothing of it can be slow."""
    if type(receive) is HeldBody:
        return True
    event = getattr(getattr(receive, "__self__", None), "message_event", None)
    return isinstance(event, asyncio.Event) and event.is_set()


class receive_body:
    """``async with receive_body(...) as body``: the request's body (its ``Content-Length`` header, None without one;
    its ASGI ``receive``), held against ``budget`` (as client address ``host``'s, ``anonymous`` unless the request's
    credential was checked) until the ``async with`` block ends.

    Refusals close the connection: 413 ``too_large`` (over ``max_body_bytes``,
    at once when Content-Length says so), 415 ``unsupported_content_encoding`` (``coding``, its
    ``Content-Encoding`` header, names a coding: :func:`check_content_coding`), 503 ``busy`` (the pool or a share is
    full), 408 ``body_timeout`` (past the deadline, below the minimum rate, or paused longer than
    ``body_idle_timeout``: :func:`next_deadline`).
    A class rather than an ``asynccontextmanager`` (every batch request reads one body: a generator, its context
    manager and a deadline timer for a body already received cost about 9 us of the event loop).
    """

    __slots__ = ("length", "receive", "limits", "budget", "max_body_bytes", "on_too_large", "key", "anonymous", "held",
                 "coding")

    def __init__(self, length: str | None, receive, limits, budget: BodyBudget, max_body_bytes: int, on_too_large=None,
                 *, host: str | None = None, anonymous: bool = True, coding: str | None = None):
        self.length, self.receive, self.limits, self.budget = length, receive, limits, budget
        self.max_body_bytes, self.on_too_large, self.anonymous = max_body_bytes, on_too_large, anonymous
        self.key, self.held, self.coding = address_key(host), 0, coding  # the address's key, found once

    async def __aenter__(self) -> bytes:
        length, budget, key, anonymous, max_body_bytes = self.length, self.budget, self.key, self.anonymous, self.max_body_bytes
        declared = int(length) if length is not None and length.isascii() and length.isdigit() else None
        if declared is not None and declared > max_body_bytes:
            await self._too_large()
        if self.coding is not None:
            check_content_coding(self.coding)
        if declared is not None:
            refused = budget.refusal_of(declared, key, anonymous)
            if refused is not None:
                raise refused
        first = None
        if body_ready(self.receive):  # the body may be all there (one message): read without a deadline or a list
            first = await self.receive()
            if (first["type"] == "http.request" and not first.get("more_body", False)
                    and len(first.get("body", b"")) <= max_body_bytes):
                return self._whole(first.get("body", b""))
        return await self.rest(first)

    async def rest(self, first: dict | None) -> bytes:
        """The body from the message ``first`` on (received already; None: none yet), read within the size, time and
        memory bounds and held (the rest of :meth:`__aenter__`, whose checks before the body a caller made already)."""
        max_body_bytes, budget, key, anonymous = self.max_body_bytes, self.budget, self.key, self.anonymous
        loop = asyncio.get_running_loop()
        start = loop.time()
        due = body_deadline(self.limits, start, 0)
        chunks, more = [], True
        try:
            while more:
                if first is not None:
                    message, first = first, None
                elif body_ready(self.receive):
                    message = await self.receive()
                else:
                    try:
                        message = await receive_by(self.receive, due)
                    except (asyncio.TimeoutError, TimeoutError):
                        raise too_slow(self.limits, self.held) from None
                if message["type"] == "http.disconnect":  # the client went away mid-body: nothing to log as an error
                    raise InvalidRequest(
                        CLIENT_GONE, "The client closed the connection before its body was complete.", close=True
                    )
                chunk, more = message.get("body", b""), message.get("more_body", False)
                if not chunk:
                    continue
                if self.held + len(chunk) > max_body_bytes:
                    await self._too_large()
                refused = budget.hold(len(chunk), key, anonymous)
                if refused is not None:
                    raise refused
                self.held += len(chunk)
                chunks.append(chunk)
                due = next_deadline(self.limits, start, due, loop.time(), len(chunk))
        except BaseException:
            self.give_back()
            raise
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _whole(self, chunk: bytes) -> bytes:
        """A body that came whole in one message (within ``max_body_bytes``): held as :meth:`__aenter__`'s loop holds
        a chunk."""
        if chunk:
            refused = self.budget.hold(len(chunk), self.key, self.anonymous)
            if refused is not None:
                raise refused
            self.held = len(chunk)
        return chunk

    async def __aexit__(self, *exc) -> None:
        self.give_back()

    async def _too_large(self):
        if self.on_too_large is not None:
            await self.on_too_large()
        raise too_large(self.max_body_bytes)

    def give_back(self) -> None:
        """Give back what this body holds of the budget (what ``async with`` does at the block's end)."""
        held, self.held = self.held, 0
        self.budget.release(held, self.key, self.anonymous)


def check_content_coding(coding: str | None) -> None:
    """Refuse (415 ``unsupported_content_encoding``, the connection closed) a body whose ``Content-Encoding`` header
    (``coding``, None without one) names a coding other than ``identity`` (see the module)."""
    if coding and any(part.strip(" \t").lower() not in ("", "identity") for part in coding.split(",")):  # HTTP's OWS only
        raise UnsupportedContentCoding(
            "unsupported_content_encoding",
            f"The request body must be sent as it is, without a content coding (Content-Encoding {coding[:80]!r}): "
            "this server does not decompress bodies. Send it again uncompressed.",
            close=True,
        )


def content_coding_of(headers) -> str | None:
    """The ``Content-Encoding`` of a request's raw ASGI ``headers`` (``(name, value)`` bytes, names in lower case): every
    line of it, joined with commas as one list (a second line may name a coding the first does not); None without one."""
    values = [value for name, value in headers if name == b"content-encoding"]
    return b",".join(values).decode("latin-1") if values else None


def too_large(limit: int) -> TooLarge:
    return TooLarge("too_large", f"The request body exceeds the server's limit of {limit} bytes; send smaller batches.", close=True)


def too_slow(limits, held: int) -> TooSlow:
    return TooSlow(
        "body_timeout",
        f"The request body arrived too slowly ({held} bytes received): a body must arrive within {limits.body_timeout:g} s, "
        f"at {limits.min_body_rate} bytes/s or more after its first {limits.body_grace:g} s, without pausing longer than "
        f"{limits.body_idle_timeout:g} s.",
        close=True,
    )
