"""Privacy at ingestion: tokens refused in URLs, and an access log of fixed fields (docs/explanation/threat-model.md,
"Privacy at ingestion").

* :class:`PrivacyMiddleware` refuses a request whose query string carries a token (a parameter named ``token`` or
  ending in ``_token``, any case) with 400 ``token_in_query`` before any route sees it: URLs are written to proxies'
  and browsers' logs and histories, and sent onward in ``Referer`` headers; tokens travel in the ``Authorization``
  header (the dashboard: in the URL fragment).
* :class:`AccessLog` writes one line per answered request, of fields the server made or holds, never a request's own
  text: the method when it is one the service routes (else ``OTHER``), the route's template (``unmatched`` for none),
  the HTTP version when it is one of four, the status, the duration and the request id (the server's own: an
  ``X-Request-ID`` a client sent is not taken).  ``--access-log full`` adds the client's address as the server
  formats it when the host parses as an IP address (else ``-``) and the path, with a campaign in its place when it
  is the id of a campaign this process read from its database (public: its config names it) and a key id of 1-3
  digits (shorter than any token); any other parameter, a batch id among them (a client's text of up to 128
  characters, which may be a token), is written ``-``.  So no token, credential or password a client sends, however
  it sends it, can be written, and nothing needs to be masked or escaped.  A line is formatted at once (uvicorn's
  text format, or one JSON object: ``--log-format``), without the logging module's records, handlers and
  formatters, and kept: the lines kept are written to the stream together, in one write of whole lines (at most
  4,000 characters: one write to a pipe is never cut into another process's), half a second after the first of them
  at most, and at shutdown (docs/reference/benchmarks/service.md, "The access line").
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import json
import re
import sys
import time
from datetime import datetime, timezone
from urllib.parse import parse_qsl

from ._logs import REQUEST_ID, inner_of
from ._metrics import route_label

__all__ = ["PrivacyMiddleware", "query_has_token", "AccessLog", "fixed_fields", "METHODS", "ACCESS_MODES", "TOKEN_IN_QUERY"]

#: the detail of the refusal of a token in a query string
TOKEN_IN_QUERY = ("Tokens are never accepted in a URL's query string (URLs are logged and forwarded): send 'Authorization: "
                  "Bearer <token>', or open the dashboard with #token=... (the URL fragment, which browsers do not send). "
                  "Consider the token exposed.")
#: the values of ``--access-log``
ACCESS_MODES = ("anonymous", "full", "off")
#: the methods the service routes (any other is written ``OTHER``)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"})
#: a key id as a ``full`` line writes it: 1-3 digits (shorter than any token: a token has at least 16 characters)
_KEY_ID = re.compile(r"[0-9]{1,3}")
_VERSIONS = frozenset({"1.0", "1.1", "2", "3"})
#: the most characters of lines written at once, and the most seconds a line is kept before it is written
_CHUNK, _WITHIN_S = 4000, 0.5


def query_has_token(query_string: bytes) -> bool:
    try:
        pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    except ValueError:
        return False
    return any(name.lower() == "token" or name.lower().endswith("_token") for name, _ in pairs)


class PrivacyMiddleware:
    """Refuse tokens in query strings (400 ``token_in_query``)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and query_has_token(scope.get("query_string", b"")):
            await _refuse_token(send)
        else:
            await self.app(scope, receive, send)


class AccessLog:
    """The access lines of a server (see the module): ``mode`` one of :data:`ACCESS_MODES`, ``log_format`` ``text``
    (to standard output, as uvicorn's) or ``json`` (to standard error, as every JSON record), ``campaigns`` the ids of
    the campaigns the process read from its database (a set it fills: :attr:`._store.Store.campaign_ids`), the
    campaigns a ``full`` line names."""

    def __init__(self, mode: str = "anonymous", log_format: str = "text", stream=None, campaigns=frozenset()):
        self.mode, self.json, self.campaigns = mode, log_format == "json", campaigns
        default = sys.stderr if self.json else sys.stdout
        self.stream = stream if stream is not None else getattr(default, "unmasked", default)  # (fixed fields)
        self._second, self._stamp = -1, ""
        self._kept: list[str] = []
        self._size = 0

    def write(self, scope, route: str, status: int, started: float) -> None:
        """The line of the request of ``scope`` served by ``route`` (a template) with ``status``, started at
        ``started`` (``time.perf_counter()``); of a gateway request, its inner request's method, route, status and
        parameters, with ``via ohttp``."""
        if self.mode == "off":
            return
        duration = round((time.perf_counter() - started) * 1000, 3)
        inner, full = inner_of(scope, status), self.mode == "full"
        method, params = scope.get("method"), scope.get("path_params")
        if inner is not None:
            method, route, status, params = inner.method, inner.route, inner.status, inner.params
        method = method if method in METHODS else "OTHER"
        request_id = REQUEST_ID.get() or "-"  # the server's own (._middleware.new_request_id)
        path = _path(route, params or {}, self.campaigns) if full else route
        address = _address(scope.get("client")) if full else "-"
        if self.json:  # every field is of characters JSON writes as they are (checked above, or dpdist's own)
            more = (',"via":"ohttp"' if inner is not None else "") + (f',"client":"{address}","path":"{path}"' if full else "")
            line = (f'{{"time":"{self._time()}","level":"info","logger":"dpdist.serve.access","message":"{method} {route} '
                    f'{status}","request_id":"{request_id}","method":"{method}","route":"{route}","status":{status},'
                    f'"duration_ms":{duration}{more}}}')
        else:
            client = address if inner is None else "ohttp" if address == "-" else f"ohttp@{address}"
            version = scope.get("http_version") if scope.get("http_version") in _VERSIONS else "-"
            line = f'INFO:     {client} - "{method} {path} HTTP/{version}" {status} {duration}ms {request_id}'
        self._kept.append(line + "\n")
        self._size += len(line) + 1
        if self._size >= _CHUNK:
            self.flush()
        elif len(self._kept) == 1:  # the first line kept: written within half a second
            try:
                asyncio.get_running_loop().call_later(_WITHIN_S, self.flush)
            except RuntimeError:  # no event loop: at once
                self.flush()

    def flush(self) -> None:
        """Write the lines kept, in one write."""
        if self._kept:
            text, self._kept, self._size = "".join(self._kept), [], 0
            self.stream.write(text)
            self.stream.flush()

    def _time(self) -> str:
        """Now, in UTC, as a JSON record's ``time`` (its seconds formatted once a second)."""
        now = time.time()
        if int(now) != self._second:
            self._second = int(now)
            self._stamp = datetime.fromtimestamp(self._second, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        return f"{self._stamp}.{int((now - self._second) * 1000):03d}Z"


def fixed_fields(scope, status: int) -> tuple[str, str, int, str | None, str | None]:
    """The fields of an anonymous access line a span holds (:class:`dpdist._http._telemetry.TracingMiddleware`) of the
    request of ``scope`` answered with ``status`` (0: none): its method if routed (else ``OTHER``), its route's
    template, the status, the server's request id and, of a gateway request, its inner request's method and route
    template (else None)."""
    method, inner = scope.get("method"), inner_of(scope, status)
    shown = None if inner is None else f"{inner.method if inner.method in METHODS else 'OTHER'} {inner.route}"
    return method if method in METHODS else "OTHER", route_label(scope), status, REQUEST_ID.get(), shown


def _path(route: str, params: dict, campaigns) -> str:
    """``route`` with a campaign among ``campaigns`` and a key id (:data:`_KEY_ID`) in their places, ``-`` for any other
    parameter."""
    for name, value in params.items():
        taken = (name == "campaign" and isinstance(value, str) and value in campaigns) or (
            name == "key_id" and isinstance(value, (str, int)) and _KEY_ID.fullmatch(str(value)) is not None)
        route = route.replace("{" + name + "}", str(value) if taken else "-")
    return route


def _address(client) -> str:
    """A request's client (the ASGI scope's ``(host, port)``) as ``address:port`` when its host is an IP address (a
    proxy's ``X-Forwarded-For`` may say anything), else ``-``."""
    host = _ip(client[0]) if isinstance(client, (tuple, list)) and len(client) == 2 and isinstance(client[0], str) else None
    return "-" if host is None else f"{host}:{client[1]}" if isinstance(client[1], int) else host


@functools.lru_cache(maxsize=4096)
def _ip(host: str) -> str | None:
    """``host`` as an IP address (an IPv6 zone, ``%...``, left out), None if it is none."""
    try:
        return str(ipaddress.ip_address(host.partition("%")[0]))
    except ValueError:
        return None


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
