"""uvicorn's h11 protocol with a header timeout, a concurrency cap that says when to come back, without WebSockets and
without uvicorn's own access log line (docs/reference/service-limits.md, "Limits").

uvicorn closes idle keep-alive connections but never ones whose request headers
trickle in (slowloris); :class:`HeaderTimeoutH11Protocol` closes a connection
whose headers are not complete ``header_timeout`` seconds after it opened or
after the first byte of its next request.  Beyond ``--limit-concurrency``
(uvicorn's ``limit_concurrency``: connections, or requests being served) a
request is answered 503 ``busy`` as uvicorn does, but in dpdist's JSON and with
``Retry-After`` (:class:`ConcurrencyCap`).  uvicorn's access line (client address
and full URL with its query string) is left out: a dpdist server writes its own
without the address, or none.

One client address (IPv6: its /64, :func:`._rate.address_key`, as for the
rate and the body shares) holds at most ``max_pending_heads`` connections whose
request headers are not complete (``--max-pending-heads-per-address``): an open
connection that has sent nothing yet, or whose bytes so far did not complete a
request head.  A connection whose read leaves its head incomplete beyond the cap
is closed; a request whose head arrives whole is never refused by the cap (it is
no slowloris, however many connections its address opened at once: a crowd
behind a proxy or a NAT, or one whose requests the kernel had buffered before
the server accepted them).  A connection opened beyond the cap that
sends nothing within :data:`OVER_CAP_GRACE_S` is closed.  Honest clients send
their headers within a round trip; without the cap one address trickling 1,000
heads kept every other client at 503.  The proxies the
server trusts (``--forwarded-allow-ips``, not ``*``) are not capped: every
client of a proxy has its address, a proxy that buffers requests (nginx) sends
each head whole, and their own clients' heads are the proxy's to bound.
:class:`HeaderTimer`, :class:`ConcurrencyCap` and :class:`NoUpgrade`
are shared with the httptools protocol of :mod:`._protocol_httptools` (the
default when ``httptools`` is installed).

The class lives at module level so that the worker processes of
``dpdist serve --workers N`` (started by uvicorn's supervisor, which pickles its
configuration) import it by name; its timeout then comes from the uvicorn
``Config`` (``config.dpdist_header_timeout``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import time

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol

from ._body import RETRY_BUSY_S
from ._rate import DEFAULT_MAX_PENDING_HEADS, address_key

__all__ = ["HeaderTimer", "ConcurrencyCap", "NoUpgrade", "HeaderTimeoutH11Protocol", "DEFAULT_HEADER_TIMEOUT_S", "CONNECTIONS_REFUSED",
           "OVER_CAP_GRACE_S", "trusted_proxies"]

DEFAULT_HEADER_TIMEOUT_S = 10.0
#: seconds a connection opened beyond its address's cap of incomplete heads has to send its request's first bytes
OVER_CAP_GRACE_S = 1.0

_OVER_CAPACITY = json.dumps({
    "error": "busy",
    "detail": "The server serves as many connections and requests at once as it may (--limit-concurrency); retry the "
              "same request later.",
}, separators=(",", ":")).encode()

#: connections closed by the protocol before any request of theirs reached an application, by reason, as
#: ``{reason: [count, created]}`` (the shape of a refusal counter's child in ``dpdist.serve._metrics``): per process,
#: read by ``/metrics`` as ``dpdist_requests_refused_total{reason}`` (they were invisible before)
CONNECTIONS_REFUSED: dict[str, list] = {}


def count_connection_refused(reason: str) -> None:
    """One connection closed by the protocol for ``reason`` (updated on the event loop only)."""
    child = CONNECTIONS_REFUSED.get(reason)
    if child is None:
        child = CONNECTIONS_REFUSED[reason] = [0.0, time.time()]
    child[0] += 1.0


async def over_capacity(scope, receive, send) -> None:
    """The answer beyond the concurrency cap: 503 ``busy`` with ``Retry-After``, and the connection closed."""
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(_OVER_CAPACITY)).encode()),
        (b"retry-after", str(RETRY_BUSY_S).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": _OVER_CAPACITY, "more_body": False})


class ConcurrencyCap:
    """uvicorn's ``limit_concurrency``, answered with :func:`over_capacity` instead of uvicorn's plain 503.

    Mixed into a uvicorn protocol: uvicorn reads ``self.app`` for each request once its own cap check passed;
    :meth:`_take_over_concurrency_cap` turns that check off and this ``app`` makes it, with the same condition
    (connections of the server, or requests being served, at the cap).
    """

    connections: set
    tasks: set
    limit_concurrency: int | None  # uvicorn's protocols set both in __init__
    logger: logging.Logger
    _cap: int | None = None
    _app = None

    def _take_over_concurrency_cap(self) -> None:
        self._cap, self.limit_concurrency = self.limit_concurrency, None

    @property
    def app(self):
        cap = self._cap
        if cap is not None and (len(self.tasks) >= cap or (len(self.connections) >= cap and not self._room_made(cap))):
            self.logger.warning("Exceeded concurrency limit.")
            return over_capacity
        return self._app

    @app.setter
    def app(self, value) -> None:
        self._app = value

    def _room_made(self, cap: int) -> bool:
        """Whether this request may be served though the server's connections are at ``cap``: some are already
        closing, or one idle keep-alive connection (between requests: uvicorn's keep-alive timer runs) is closed
        for it, as nginx reuses idle keep-alive slots.  An idle connection loses nothing (its client opens a new
        one); without this, one address reopening a thousand idle keep-alive connections held ``cap`` and every
        other client got 503.  A connection with a request in progress is never closed."""
        idle = None
        open_connections = 0
        for connection in self.connections:
            transport = getattr(connection, "transport", None)
            if transport is None or transport.is_closing():
                continue  # leaving: its slot is free once the event loop reports it lost
            open_connections += 1
            if idle is None and connection is not self and getattr(connection, "timeout_keep_alive_task", None) is not None:
                idle = connection
        if open_connections < cap:
            return True
        if idle is None:
            return False
        idle.timeout_keep_alive_handler()
        return True


class HeaderTimer:
    """A connection closed unless its request headers are complete within ``header_timeout`` seconds.

    Mixed into a uvicorn protocol (which sets ``config``, ``loop`` and
    ``transport``); the protocol arms the timer when it waits for a request's
    headers, disarms it when they are complete, and says in
    :meth:`_waiting_for_headers` whether it still waits when the timer expires.
    """

    header_timeout: float | None = None
    max_pending_heads: int | None = None
    config: Config  # set by the uvicorn protocol this is mixed into
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    logger: logging.Logger

    def _init_header_timer(self) -> None:
        self.access_log = False  # a dpdist server writes its own access line (dpdist serve: without the client address)
        self._header_timer: asyncio.TimerHandle | None = None  # scheduled at or before the deadline (or None)
        self._header_deadline: float | None = None  # the event loop's time by which the headers must be complete
        self._grace: asyncio.TimerHandle | None = None  # a connection opened beyond its address's cap: its first bytes
        if self.header_timeout is None:
            self.header_timeout = float(getattr(self.config, "dpdist_header_timeout", DEFAULT_HEADER_TIMEOUT_S))
        if self.max_pending_heads is None:
            self.max_pending_heads = int(getattr(self.config, "dpdist_max_pending_heads", DEFAULT_MAX_PENDING_HEADS))
        # connections with incomplete headers per address key, shared by the connections of one server (process)
        state = vars(getattr(self, "server_state"))
        self._pending_heads: dict[str, int] = state.setdefault("dpdist_pending_heads", {})
        self._pending_key: str | None = None  # this connection's address key while it counts there
        self._proxies = trusted_proxies(self.config)

    def _waiting_for_headers(self) -> bool:
        raise NotImplementedError

    @property
    def _header_timer_armed(self) -> bool:
        return self._header_deadline is not None

    def _arm_header_timer(self) -> None:
        """The headers must be complete within ``header_timeout`` from now.  A connection keeps one timer: a request
        moves its deadline, and the timer, when it fires before the deadline, waits again for the rest (a timer made
        and cancelled per request cost about 3 us of the event loop's thread)."""
        assert self.header_timeout is not None, "set when the connection was made"
        self._header_deadline = deadline = self.loop.time() + self.header_timeout
        if self._header_timer is None:
            self._header_timer = self.loop.call_at(deadline, self._header_timeout_expired)

    def _open_connection(self) -> None:
        """A new connection: its header timer, and its place among its address's incomplete heads (it has sent
        nothing yet); beyond the cap it gets :data:`OVER_CAP_GRACE_S` to send its request."""
        self._arm_header_timer()
        if self._exempt() or self._count_pending_head():
            return
        self._grace = self.loop.call_later(min(OVER_CAP_GRACE_S, self.header_timeout or OVER_CAP_GRACE_S),
                                           self._grace_expired)

    def _incomplete_head(self) -> bool:
        """A read left this connection's request head incomplete: it holds a place among its address's incomplete
        heads, or, its address holding the cap already, it is closed (False)."""
        if self._pending_key is not None or self._exempt():
            return True
        self._cancel_grace()
        if self._count_pending_head():
            return True
        self._refuse_pending_head()
        return False

    def _exempt(self) -> bool:
        client = getattr(self, "client", None)
        return bool(self._proxies) and client is not None and is_trusted(client[0], self._proxies)

    def _count_pending_head(self) -> bool:
        """Count this connection as one with an incomplete head of its address; False (not counted) if its address
        holds ``max_pending_heads`` such connections already."""
        client = getattr(self, "client", None)
        key = address_key(client[0] if client else None)
        pending, cap = self._pending_heads.get(key, 0), self.max_pending_heads
        assert cap is not None, "set when the protocol was made"
        if pending >= cap:
            return False
        self._pending_heads[key], self._pending_key = pending + 1, key
        return True

    def _refuse_pending_head(self) -> None:
        self.logger.debug("Too many connections with incomplete request headers from one client address.")
        count_connection_refused("pending_heads")
        self.transport.close()

    def _grace_expired(self) -> None:
        self._grace = None
        if self._pending_key is None and self._waiting_for_headers() and not self.transport.is_closing():
            self._refuse_pending_head()  # nothing came: an empty connection beyond its address's cap

    def _cancel_grace(self) -> None:
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None

    def _uncount_pending_head(self) -> None:
        key, self._pending_key = self._pending_key, None
        if key is not None:
            left = self._pending_heads.get(key, 0) - 1
            if left > 0:
                self._pending_heads[key] = left
            else:  # an address is forgotten as soon as it holds no such connection
                self._pending_heads.pop(key, None)

    def _disarm_header_timer(self) -> None:
        self._header_deadline = None  # the timer, if it fires, finds no deadline and goes (no cancel per request)
        if self._pending_key is not None:  # (every request disarms it: no call when nothing is counted or waits)
            self._uncount_pending_head()
        if self._grace is not None:
            self._cancel_grace()

    def _close_header_timer(self) -> None:
        self._header_deadline = None
        self._uncount_pending_head()
        self._cancel_grace()
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout_expired(self) -> None:
        self._header_timer = None
        deadline = self._header_deadline
        if deadline is None:
            return
        if self.loop.time() < deadline:  # moved by a later request: wait for the rest
            self._header_timer = self.loop.call_at(deadline, self._header_timeout_expired)
            return
        self._header_deadline = None
        if self._waiting_for_headers() and not self.transport.is_closing():
            self.transport.close()


def _framed_once(next_event):
    """h11's ``Connection.next_event``, raising h11's ``RemoteProtocolError`` (uvicorn answers it 400 and closes the
    connection) for a request with both ``Content-Length`` and ``Transfer-Encoding``."""

    def checked():
        event = next_event()
        if type(event) is h11.Request:
            names = {name for name, _ in event.headers}
            if b"content-length" in names and b"transfer-encoding" in names:
                raise h11.RemoteProtocolError("both Content-Length and Transfer-Encoding", 400)
        return event

    return checked


def trusted_proxies(config) -> frozenset:
    """The addresses and networks of ``config.forwarded_allow_ips`` (uvicorn's option: ``--forwarded-allow-ips``); empty
    for ``*`` (anyone: no proxy is known) or none."""
    value = getattr(config, "forwarded_allow_ips", None)
    items = [item.strip() for item in (value.split(",") if isinstance(value, str) else list(value or ()))]
    if "*" in items:
        return frozenset()
    found = set()
    for item in filter(None, items):
        with contextlib.suppress(ValueError):
            found.add(ipaddress.ip_network(item, strict=False))
    return frozenset(found)


def is_trusted(host: str, proxies: frozenset) -> bool:
    """Whether the connecting address ``host`` is one of ``proxies``."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in proxies)


class NoUpgrade:
    """No WebSocket, whatever library is installed: a dpdist server has no WebSocket route, and uvicorn's WebSocket
    protocols log each handshake with the client's address, path and query string (a token, in whatever place a client
    put it).  An upgrade request is served as plain HTTP, by the application and its own access line."""

    logger: logging.Logger  # (uvicorn's protocol's)

    def _should_upgrade_to_ws(self) -> bool:
        return False

    def _unsupported_upgrade_warning(self) -> None:  # uvicorn's, without its advice to install a WebSocket library
        self.logger.warning("Unsupported upgrade request.")


class HeaderTimeoutH11Protocol(NoUpgrade, ConcurrencyCap, HeaderTimer, H11Protocol):
    """See the module; ``header_timeout`` (seconds) as a class attribute, else from the uvicorn ``Config``.

    A request framed twice, by ``Content-Length`` and ``Transfer-Encoding`` both, is answered 400 and the connection
    closed, as llhttp (httptools) answers it: h11 reads it by its chunks and keeps the connection, so that bytes a
    front end framing by its length took for this request's body were served as another request."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._init_header_timer()
        self._take_over_concurrency_cap()
        self.conn.next_event = _framed_once(self.conn.next_event)  # type: ignore[method-assign]  # (this connection only)

    def connection_made(self, transport):
        super().connection_made(transport)
        self._open_connection()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's 400, its body left out where h11 allows none: the answer to a ``HEAD`` request refused once h11 had
        accepted it (framed twice) raised from the event loop's callback and logged a 36-line traceback a request."""
        try:
            super().send_400_response(msg)
        except h11.LocalProtocolError:
            self.transport.close()  # the status line and headers went out; the connection ends there

    def data_received(self, data: bytes) -> None:
        if not self._header_timer_armed and self.conn.their_state is h11.IDLE:
            self._arm_header_timer()  # the first bytes of a following request
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm_header_timer()
        elif data and not self.transport.is_closing():
            self._incomplete_head()  # bytes that did not complete a head: counted, or closed beyond the cap

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # bytes of a following request that came with this one (pipelined) wait in h11's buffer: no read will
        # arm the timer for them, so their headers' time counts from this answer
        if (not self._header_timer_armed and not self.transport.is_closing() and self.conn.their_state is h11.IDLE
                and self.conn.trailing_data[0]):
            self._arm_header_timer()
            self._incomplete_head()

    def connection_lost(self, exc):
        self._close_header_timer()
        super().connection_lost(exc)

    def _waiting_for_headers(self) -> bool:
        return self.conn.their_state is h11.IDLE
