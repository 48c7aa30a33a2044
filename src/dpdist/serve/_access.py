"""Privacy at ingestion: the access log, and tokens refused in URLs (docs/deployment.md, "Privacy at ingestion").

An ASGI middleware in front of every route:

* a request whose query string carries a token (a parameter named ``token`` or
  ending in ``_token``, any case) is refused with 400 ``token_in_query`` before
  any route sees it: URLs are written to proxies' and browsers' logs and
  histories, and sent onward in ``Referer`` headers; tokens travel in the
  ``Authorization`` header (the dashboard: in the URL fragment);
* one access line per request through the ``uvicorn.access`` logger (uvicorn's
  own line, which holds the client address and the full URL, is turned off by
  :func:`._limits.protocol_class`).  ``anonymous`` (default): method, path and
  status, the batch id replaced by ``-``, no client address, no query string;
  ``full``: also the client address and the batch id (still no query string),
  for operators who need them; ``off``: none.

A line is one line whatever the request: its method and path are written as the router reads them, percent-encoded
again (:func:`._logs.printable`; uvicorn's own line did the same; an encoded ``/`` or ``.`` reads decoded, as routed),
its credentials masked first as any text dpdist shows (:func:`._logs.shown_path`: ``/x/token=***``), never raw - an anonymous ``GET /x%0aINFO: ...`` wrote a
second, forged line, and ``%1b%5b2J`` a raw escape sequence that cleared the terminal of an operator tailing the log.
"""

from __future__ import annotations

import json
import logging
import re
from urllib.parse import parse_qsl

from ._logs import carried_credentials, inner_of, printable, shown_client, shown_method, shown_path

__all__ = ["PrivacyMiddleware", "query_has_token", "access_line", "TOKEN_IN_QUERY"]

ACCESS = logging.getLogger("uvicorn.access")
#: the detail of the refusal of a token in a query string
TOKEN_IN_QUERY = ("Tokens are never accepted in a URL's query string (URLs are logged and forwarded): send 'Authorization: "
                  "Bearer <token>', or open the dashboard with #token=... (the URL fragment, which browsers do not send). "
                  "Consider the token exposed.")
_BATCH_PATH = re.compile(r"^(/api/campaigns/[^/]+/(?:batches|relayed)/)[^/]+$")  # a batch id, direct or relayed


def query_has_token(query_string: bytes) -> bool:
    try:
        pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    except ValueError:
        return False
    return any(name.lower() == "token" or name.lower().endswith("_token") for name, _ in pairs)


class PrivacyMiddleware:
    """Refuse tokens in query strings; write the access line without addresses (``mode``: anonymous, full, off)."""

    def __init__(self, app, mode: str = "anonymous"):
        self.app, self.mode = app, mode

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = [0]

        async def send_and_note(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            if query_has_token(scope.get("query_string", b"")):
                await _refuse_token(send_and_note)
            else:
                await self.app(scope, receive, send_and_note)
        except Exception:
            status[0] = status[0] or 500  # answered by Starlette's outermost error handler
            raise
        finally:
            if self.mode != "off" and status[0]:
                access_line(scope, status[0], self.mode)


def access_line(scope, status: int, mode: str) -> None:
    """Write a request's access line (``mode``: anonymous or full); a gateway request's names the request it carried
    (its method, path and status), its address ``ohttp`` (``full``: ``ohttp@`` the relay's address)."""
    method, path, inner = scope.get("method", "-"), scope.get("path", ""), inner_of(scope, status)
    if inner is not None:
        method, path, status = inner.method, inner.path, inner.status
    secrets = carried_credentials(scope, inner)
    if mode == "full":
        address = shown_client(scope.get("client"), secrets)
    else:
        address = "-"
        path = _BATCH_PATH.sub(r"\1-", path)
    if inner is not None:
        address = "ohttp" if address == "-" else f"ohttp@{address}"
    # the arguments uvicorn's AccessFormatter expects: address, method, path, HTTP version, status
    ACCESS.info('%s - "%s %s HTTP/%s" %d', address, shown_method(method, secrets), shown_path(path, secrets),
                printable(str(scope.get("http_version", "1.1")), "."), status)


async def _refuse_token(send) -> None:
    body = json.dumps({"error": "token_in_query", "detail": TOKEN_IN_QUERY}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                        (b"referrer-policy", b"no-referrer"), (b"connection", b"close")],
        }
    )
    await send({"type": "http.response.body", "body": body})
