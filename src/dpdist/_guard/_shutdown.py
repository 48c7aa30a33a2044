"""A request cut short by the server's shutdown is answered 503 ``shutting_down``, not uvicorn's bare 500.

On SIGTERM uvicorn waits ``--graceful-timeout`` seconds for the requests still
running, then cancels their tasks (``asyncio.CancelledError`` raised where each
one waits: a thread of the thread pool, the database, a body's next bytes).  A
cancellation that reaches uvicorn's ``run_asgi`` is logged as "Exception in ASGI
application" with its traceback and answered a plain-text 500 that a client
cannot tell from a fault.  :class:`ShutdownMiddleware` (and the body layer
:class:`._middleware.GuardMiddleware`, and ``dpdist serve``'s batch route, which
make the same check) answers such a request, if its answer has not begun, with
dpdist's usual refusal: 503, ``{"error": "shutting_down", "detail": ...}``,
``Retry-After`` and ``Connection: close``.  It logs one warning line (no path, no
address; uvicorn's own line "Cancel N running task(s)" stays) and returns: the
task ends there, as it would have ended raising (uvicorn does not wait for it;
work the request handed to a thread may still finish there, as before).  An
answer already begun is left to uvicorn (it closes the connection).

Only a cancellation of the request's task from outside the application is
answered so: one that nothing inside took back.  anyio's cancel scopes and
``asyncio.timeout`` cancel the task too, and count it (``Task.cancelling``)
until they catch their own cancellation; a ``CancelledError`` that leaves the
application while the task is not being cancelled (an awaited future cancelled
elsewhere) propagates as before.  Python 3.10 has no such count: there every
cancellation that leaves the application is taken to come from outside (the
scopes and timeouts inside catch their own; a future cancelled elsewhere would
be answered 503 too).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Callable

from ._refusals import Busy, Refusal

__all__ = ["SHUTTING_DOWN", "ShutdownMiddleware", "answer_refusal", "shutdown_refusal"]

#: the code of the answer (also that of an estimate refused by a server that is stopping)
SHUTTING_DOWN = "shutting_down"
#: seconds after which the client may ask again (a server that restarts, or another behind the same address)
RETRY_AFTER_S = 5
LOG = logging.getLogger("dpdist.guard")


def shutdown_refusal() -> Refusal | None:
    """In a request's ``except asyncio.CancelledError``: the refusal to answer with (and a warning logged) if the
    server's shutdown cancelled the request's task, else None (the error is the application's own: raise it again)."""
    if not _cancelled_from_outside():
        return None
    LOG.warning("the server's shutdown cancelled a request still running after the graceful timeout: answered 503 %s",
                SHUTTING_DOWN)
    return Busy(SHUTTING_DOWN, "The server is shutting down and stopped this request before answering it; retry it "
                "later.", retry_after=RETRY_AFTER_S, close=True)


def _cancelled_from_outside() -> bool:
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    if cancelling is None:  # Python 3.10 (module docstring)
        return task is not None
    return cancelling() > 0


async def answer_refusal(send, refusal: Refusal) -> None:
    """A refusal as dpdist's servers answer it: ``{"error", "detail"}`` with its status, ``Retry-After``, and the
    connection closed (the headers in the order of ``dpdist serve``'s answers: Starlette's ``JSONResponse``)."""
    body = json.dumps({"error": refusal.code, "detail": refusal.detail}, separators=(",", ":")).encode()
    headers = [(b"connection", b"close")]
    if refusal.retry_after is not None:
        headers.append((b"retry-after", str(int(refusal.retry_after)).encode()))
    headers += [(b"content-length", str(len(body)).encode()), (b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class ShutdownMiddleware:
    """Pure ASGI middleware: a request whose task the server's shutdown cancels before its answer began is answered
    503 ``shutting_down`` (module docstring).

    ``refused(scope, code)``, if given, is called with the code of each such answer (to count it).  Put it as the
    innermost middleware, so that the layers outside it add their headers to the answer and log and count it.
    """

    def __init__(self, app, refused: Callable[[Any, str], None] | None = None):
        self.app, self.refused = app, refused

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = [False]

        async def sending(message):
            if message["type"] == "http.response.start":
                started[0] = True
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except asyncio.CancelledError:
            refusal = None if started[0] else shutdown_refusal()
            if refusal is None:
                raise
            if self.refused is not None:
                self.refused(scope, refusal.code)
            await answer_refusal(send, refusal)
