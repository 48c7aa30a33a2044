"""Any ASGI application behind dpdist's limits: :func:`guard` (docs/reference/service-limits.md, "Limits").

``dpdist serve`` applies its limits inside its routes, where it knows a batch's
campaign and token before it reads the body.  An application that does not
(``dpdist relay``, a token issuer, any other) gets them from
:class:`GuardMiddleware`, a pure ASGI layer that needs nothing of the
application:

* **rate**: a request that sends something (by default every method but GET,
  HEAD and OPTIONS) takes a token of its client address's bucket first
  (:mod:`._rate`); over the rate it is answered 429 ``rate_limited`` with
  ``Retry-After`` before the application sees it;
* **body**: the application reads the body through this layer, which holds its
  bytes against the process's :class:`._body.BodyBudget` (the pool, the
  address's share, the anonymous half) until the application has answered, and
  bounds its size and time: 413 ``too_large`` (at once when ``Content-Length``
  says so), 503 ``busy`` with ``Retry-After``, 408 ``body_timeout``, 415 ``unsupported_content_encoding`` (a body
  in a content coding: :func:`._body.check_content_coding`).  The layer
  sends that answer itself, with ``Connection: close``, and the application
  then sees the client as gone (``http.disconnect``): what it does next is
  dropped, an error it raises is not logged;
* a client that goes away mid-body is no error either (nothing logged);
* **shutdown**: a request whose task the server's shutdown cancels (``--graceful-timeout`` passed) before the
  application began its answer is answered 503 ``shutting_down`` with ``Retry-After`` (:mod:`._shutdown`), not
  uvicorn's plain 500 and traceback.

A request counts as anonymous (its body held in the anonymous half) unless the
application has put ``scope["dpdist.authenticated"] = True`` before it reads the
body, once it checked the request's credential.  The layer logs nothing but
the shutdown's one warning line, and keeps an address only while its body bytes
are held or its rate bucket is not full again.  Header time, header size, idle
connections and the concurrency cap are uvicorn's part
(:func:`._limits.uvicorn_options`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from ._body import (BodyBudget, body_deadline, check_content_coding, content_coding_of, next_deadline, receive_by, too_large,
                    too_slow)
from ._limits import Limits
from ._rate import RateLimiter
from ._refusals import Refusal
from ._shutdown import answer_refusal, shutdown_refusal

__all__ = ["Guard", "GuardMiddleware", "guard", "AUTHENTICATED", "sends_something"]

#: the scope key an application sets (True) once it has checked the request's credential, before reading its body
AUTHENTICATED = "dpdist.authenticated"
LOG = logging.getLogger("dpdist.guard")
_READ_ONLY = frozenset({"GET", "HEAD", "OPTIONS"})


def sends_something(scope) -> bool:
    """The default of which requests are rate-limited: those of every method but GET, HEAD and OPTIONS."""
    return scope.get("method", "GET") not in _READ_ONLY


class Guard:
    """The limits of one process and their state: its body budget, its rate buckets.

    Parameters
    ----------
    limits : Limits
        The bounds (checked here against ``max_body_bytes``).
    max_body_bytes : int
        The largest request body the application reads.
    rate_limited : callable, optional
        ``rate_limited(scope)``: whether the request takes a token of its address's bucket
        (default :func:`sends_something`).
    """

    def __init__(self, limits: Limits, max_body_bytes: int, rate_limited: Callable[[Any], bool] | None = None):
        self.limits = limits.check(max_body_bytes)
        self.max_body_bytes = int(max_body_bytes)
        self.budget: BodyBudget = limits.budget(max_body_bytes)
        self.rate = RateLimiter(limits.rate_limit, limits.rate_burst)
        self.rate_limited = rate_limited or sends_something


class GuardMiddleware:
    """Pure ASGI middleware enforcing a :class:`Guard` on ``app`` (module docstring)."""

    def __init__(self, app, guard: Guard):
        self.app, self.guard = app, guard

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        guard = self.guard
        client = scope.get("client")
        host = client[0] if client else None
        if guard.rate_limited(scope):
            try:
                guard.rate.check(host)
            except Refusal as refusal:
                await answer_refusal(send, refusal)
                return
        request = _Request(guard, scope, host, receive, send)
        try:
            await self.app(scope, request.receive, request.send)
        except asyncio.CancelledError:  # the server's shutdown (:mod:`._shutdown`), or the application's own
            stopping = None if request.started else shutdown_refusal()
            if stopping is None:
                raise
            if not request.over:  # (a client gone mid-body: no one to answer)
                request.started = True
                await answer_refusal(request._send, stopping)
        except Exception:
            if not request.over:
                raise
            LOG.debug("after the answer of the limits, the application raised", exc_info=True)
        finally:
            request.release()


class _Request:
    """One request's body as the application reads it through the limits, and its answers."""

    def __init__(self, guard: Guard, scope, host: str | None, receive, send):
        self.guard, self.scope, self.host = guard, scope, host
        self._receive, self._send = receive, send
        self.started = False  # the application began its answer
        self.over = False  # the limits answered, or the client went away: the application's answer goes nowhere
        self.body_done = False
        self.held = 0
        self.anonymous = True
        self.first = True
        self.start = asyncio.get_running_loop().time()
        self.due = body_deadline(guard.limits, self.start, 0)  # when the body's next bytes must come (next_deadline)

    async def receive(self):
        if self.over:
            return {"type": "http.disconnect"}
        if self.body_done:  # after the body: only a disconnect can come, whenever it comes
            return await self._receive()
        guard = self.guard
        if self.first:
            self.first = False
            self.anonymous = not self.scope.get(AUTHENTICATED, False)
            declared = _content_length(self.scope)
            if declared is not None and declared > guard.max_body_bytes:
                return await self._refuse(too_large(guard.max_body_bytes))
            try:
                check_content_coding(content_coding_of(self.scope.get("headers", ())))
            except Refusal as refusal:
                return await self._refuse(refusal)
            if declared:
                refused = guard.budget.refusal(declared, self.host, self.anonymous)
                if refused is not None:
                    return await self._refuse(refused)
        try:
            message = await receive_by(self._receive, self.due)
        except (asyncio.TimeoutError, TimeoutError):
            return await self._refuse(too_slow(guard.limits, self.held))
        if message["type"] == "http.disconnect":
            self.over = True  # mid-body: the application's error (if any) is not one
            return message
        chunk = message.get("body", b"")
        if chunk:
            if self.held + len(chunk) > guard.max_body_bytes:
                return await self._refuse(too_large(guard.max_body_bytes))
            refused = guard.budget.refusal(len(chunk), self.host, self.anonymous)
            if refused is not None:
                return await self._refuse(refused)
            guard.budget.take(len(chunk), self.host, self.anonymous)
            self.held += len(chunk)
            self.due = next_deadline(guard.limits, self.start, self.due, asyncio.get_running_loop().time(), len(chunk))
        if not message.get("more_body", False):
            self.body_done = True
        return message

    async def _refuse(self, refusal: Refusal):
        self.over = True
        if not self.started:
            self.started = True
            await answer_refusal(self._send, refusal)
        return {"type": "http.disconnect"}

    async def send(self, message) -> None:
        if self.over:
            return
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)

    def release(self) -> None:
        self.guard.budget.give_back(self.held, self.host, self.anonymous)
        self.held = 0


def _content_length(scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


def guard(app, limits: Limits | None = None, *, max_body_bytes: int, rate_limited: Callable[[Any], bool] | None = None):
    """Put ``app`` behind ``limits`` (default :class:`Limits`): the application to serve, with
    ``uvicorn.run(app, ..., **uvicorn_options(limits))``.

    A Starlette application gets the layer as its outermost middleware of its own (inside Starlette's error layer)
    and stays the same object, its :class:`Guard` at ``app.state.guard``; any other ASGI application is wrapped,
    the guard at ``wrapped.guard``.

    >>> from dpdist._guard import Limits, guard, uvicorn_options
    >>> app = guard(app, Limits(), max_body_bytes=1 << 20)                    # doctest: +SKIP
    >>> uvicorn.run(app, host="127.0.0.1", port=8001, **uvicorn_options(Limits()))   # doctest: +SKIP
    """
    state = Guard(limits or Limits(), max_body_bytes, rate_limited)
    if hasattr(app, "add_middleware") and hasattr(app, "state"):
        app.add_middleware(GuardMiddleware, guard=state)
        app.state.guard = state
        return app
    wrapped = GuardMiddleware(app, state)
    return wrapped
