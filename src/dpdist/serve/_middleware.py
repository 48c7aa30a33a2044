"""The request id of every request to ``dpdist serve`` (pure ASGI).

:class:`RequestIdMiddleware`: every response carries ``X-Request-ID``, a fresh random one the server made (an
``X-Request-ID`` the client sent is not taken: it is the client's text, which may be a token); log records written
while the request is served carry it (``--log-format json``), and so does its access line
(:class:`._access.AccessLog`).  The security headers are
every server's (:mod:`dpdist._guard._security_headers`).
"""

from __future__ import annotations

import random
import secrets
import time

from ._logs import REQUEST_ID
from ._metrics import route_label

__all__ = ["RequestIdMiddleware", "new_request_id"]

#: fresh request ids: 128 random bits each (not secrets, and no system call per request; no serial number, which
#: would tell any client how many requests the server answered in between)
_IDS = random.Random(secrets.token_bytes(32))


class RequestIdMiddleware:
    """Sets :data:`REQUEST_ID` for the request, answers it in ``X-Request-ID``; writes its line to ``access`` (an
    :class:`._access.AccessLog`, or None) once it was answered."""

    def __init__(self, app, access=None):
        self.app, self.access = app, access

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_request_id()
        REQUEST_ID.set(request_id)  # each request runs in its own task: this never reaches another request
        started, status = time.perf_counter(), [0]

        async def sending(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                message = {**message, "headers": [*message.get("headers", []), (b"x-request-id", request_id.encode())]}
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception:
            status[0] = status[0] or 500  # answered by Starlette's outermost error handler
            raise
        finally:
            if self.access is not None and status[0]:  # (no line for a request that got no answer)
                self.access.write(scope, route_label(scope), status[0], started)


def new_request_id() -> str:
    """A fresh request id: 32 hexadecimal digits."""
    return _IDS.getrandbits(128).to_bytes(16, "big").hex()  # f"{...:032x}", written faster
