"""Server logs of ``dpdist serve``: text (uvicorn's format) or one JSON object per line, with request ids.

``--log-format json`` writes every record of the server (uvicorn's and the
service's) as one JSON object per line: ``time`` (UTC, ISO 8601), ``level``,
``logger``, ``message``, ``request_id`` while a request is being served, and
``exception`` (the traceback as one string) when there is one.  The access log
is then written by the service itself (logger ``dpdist.serve.access``): the
method, the route's template (``/api/campaigns/{campaign}/batches/{batch_id}``:
never a campaign id or a batch id), the status, the duration and the request id;
no client address (``--access-log full`` adds the address and the path,
``--access-log off`` writes no access line).
"""

from __future__ import annotations

import contextvars
import copy
import json
import logging
import time
from datetime import datetime, timezone
from typing import Any, NamedTuple
from urllib.parse import quote, unquote

from uvicorn.config import LOGGING_CONFIG

from .._redact import MASK
from .._shown import credentials_in, masked

__all__ = ["REQUEST_ID", "INNER", "Inner", "inner_of", "shown_status", "printable", "shown_path",
           "carried_credentials", "headers_credentials", "shown_client", "shown_method", "JsonFormatter", "log_config", "LOG_FORMATS"]

LOG_FORMATS = ("text", "json")

#: The id of the request being served (set by the request-id middleware), or None.
REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("dpdist_request_id", default=None)

#: The key of an Oblivious HTTP gateway request's scope holding the request it carried (:class:`Inner`), which its one
#: access line names (:mod:`._ohttp_gateway`).
INNER = "dpdist.ohttp_inner"


class Inner(NamedTuple):
    """What a gateway request carried, for its access line: the inner ``method``, ``path`` (no query string) and
    ``route`` (its template), the ``status`` of the inner answer, and the credential its ``Authorization`` header carried
    (:func:`carried_credentials`: masked wherever the line repeats it)."""

    method: str
    path: str
    route: str
    status: int
    secrets: tuple[str, ...] = ()


def inner_of(scope, status: int) -> Inner | None:
    """The inner request a gateway request answered with ``status`` carried (None for any other request, or a gateway
    request that did not end with its encapsulated answer: 200, or the inner status in ohttpy's dialect)."""
    inner = scope.get(INNER)
    return inner if inner is not None and status in (200, inner.status) else None


def shown_status(scope, status: int) -> int:
    """The status a request answered with ``status`` is logged and counted under: a gateway request's inner status
    (:func:`inner_of`; its access line's, so ``dpdist_http_responses_total`` and the log agree),
    else ``status``."""
    inner = inner_of(scope, status)
    return status if inner is None else inner.status


def printable(text: str, safe: str = "/") -> str:
    """``text`` (a request's decoded path, or its method) percent-encoded as on the wire: no control character, no
    space, no quote, no non-ASCII character (a bidi override) - one line of the log, however the request spelled it
    (an anonymous ``GET /x%0aINFO: ...`` wrote a forged second line, ``%1b%5b2J`` a raw escape sequence)."""
    return quote(text, safe=safe, errors="backslashreplace")


def shown_path(path: str, secrets: tuple[str, ...] = ()) -> str:
    """``path`` (a request's decoded path: the requester's own text) as an access line writes it: masked as dpdist masks
    any text it shows (:func:`dpdist._shown.masked`: a URL's password, a ``Bearer`` credential, a ``token=`` value...;
    attack116 F4: ``--access-log full`` wrote them as sent), and ``secrets`` (the credential the request carried,
    :func:`carried_credentials`) wherever it stands, then percent-encoded by :func:`printable` (its ``***`` as it is).
    A path percent-encoded again (``/x/token%253Dsecret``, attack117 F6) is decoded while that changes it (at most
    :data:`_DECODINGS` times): when its decoded form holds a credential, that form is written, masked."""
    decoded = path
    for _ in range(_DECODINGS):
        once = unquote(decoded)
        if once == decoded:
            break
        decoded = once
    hidden = masked(_without(decoded, secrets))
    return printable(hidden if hidden != decoded or decoded == path else masked(_without(path, secrets)), "/*")


def shown_method(method: str, secrets: tuple[str, ...] = ()) -> str:
    """A request's method as an access line writes it: ``secrets`` (the credential it carried) masked, percent-encoded
    (attack122 F2: h11 takes any token as a method, so a request could write its own credential there)."""
    return printable(_without(method, secrets), "*") if secrets else printable(method, "")


def carried_credentials(scope, inner: Inner | None = None) -> tuple[str, ...]:
    """The credential the request of ``scope`` carried in its ``Authorization`` header
    (:func:`dpdist._shown.credentials_in`), and a gateway request's ``inner`` request's, masked wherever its access
    line repeats it (attack120 F5: ``GET /x/<admin token>`` with that token in its header wrote the token into the log;
    attack121 F2, F3: an inner request's path, a forwarded address)."""
    return headers_credentials(scope.get("headers", ())) + (inner.secrets if inner is not None else ())


def headers_credentials(headers) -> tuple[str, ...]:
    """The credential an ASGI header list's ``Authorization`` header carries (:func:`dpdist._shown.credentials_in`), its
    bytes read as Latin-1 and, when they are not ASCII, as UTF-8 too: a path is decoded as UTF-8 (attack123 F3: a token
    ``pässwörd-...`` sent in UTF-8 was not found in the path it was repeated in)."""
    for name, value in headers:
        if name == b"authorization":
            found = credentials_in(value.decode("latin-1"))
            return found if value.isascii() else found + credentials_in(value.decode("utf-8", "replace"))
    return ()


def _without(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


#: the most times a path is percent-decoded to find a credential encoded twice or more (:func:`shown_path`)
_DECODINGS = 4
#: the characters of an IPv4 or IPv6 address as written (:func:`shown_client`)
_ADDRESS_CHARACTERS = frozenset("0123456789abcdefABCDEF.:")


def shown_client(client, secrets: tuple[str, ...] = ()) -> str:
    """A request's client (the ASGI scope's ``(host, port)``, or None) as a ``full`` access line writes it:
    ``host:port``, ``-`` without one.  A host that is not written as an address is what a trusted proxy's
    ``X-Forwarded-For`` said (any text its requester sent, and under ``--forwarded-allow-ips '*'`` any requester's):
    masked as a path is (:func:`shown_path`, ``secrets`` the request's own credential: attack121 F3), a userinfo
    before an ``@`` too (``user:pw@10.0.0.1`` reads ``***@10.0.0.1``), then percent-encoded, so it shows no credential
    and writes no second line, field or escape sequence into the log (attack120 F1: ``X-Forwarded-For: password=x``
    was written as sent)."""
    if not client:
        return "-"
    host, port = str(client[0]), str(client[1])
    if not _ADDRESS_CHARACTERS.issuperset(host):
        host = masked(_without(host, secrets))
        if "@" in host:
            host = MASK + "@" + host.rpartition("@")[2]
        host = printable(host, "*")
    return f"{host}:{printable(port, '')}"


_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "color_message"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None) or REQUEST_ID.get()
        if request_id:
            document["request_id"] = request_id
        for key, value in vars(record).items():  # fields passed with extra={...}
            if key not in _STANDARD and key not in document and not key.startswith("_"):
                document[key] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def log_config(log_format: str, level: str) -> dict:
    """A ``logging.config.dictConfig`` for ``uvicorn.run(log_config=...)``: uvicorn's loggers and dpdist's."""
    config = copy.deepcopy(LOGGING_CONFIG)
    if log_format == "json":
        config["formatters"] = {"json": {"()": JsonFormatter}}
        config["handlers"] = {"default": {"formatter": "json", "class": "logging.StreamHandler", "stream": "ext://sys.stderr"}}
        config["loggers"]["uvicorn.access"] = {"handlers": [], "level": "WARNING", "propagate": False}
        config["loggers"]["dpdist"] = {"handlers": ["default"], "level": level.upper(), "propagate": False}
        config["loggers"]["dpdist.serve.access"] = {"handlers": ["default"], "level": level.upper(), "propagate": False}
    else:
        config["loggers"]["dpdist"] = {"handlers": ["default"], "level": level.upper(), "propagate": False}
    return config


class AccessLog:
    """The JSON access line of one request (``--log-format json``; ``full``: with ``client`` and ``path``)."""

    logger = logging.getLogger("dpdist.serve.access")

    @classmethod
    def write(cls, scope, route: str, status: int, started: float, *, full: bool = False) -> None:
        """The line of the request of ``scope`` served by ``route`` (a template) with ``status``; of a gateway request,
        its inner request's method, route, status and (``full``) path, with ``"via": "ohttp"``."""
        if not cls.logger.isEnabledFor(logging.INFO):
            return
        method, path, inner = scope.get("method", ""), scope.get("path", ""), inner_of(scope, status)
        if inner is not None:
            method, path, route, status = inner.method, inner.path, inner.route, inner.status
        secrets = carried_credentials(scope, inner)
        method = shown_method(method, secrets)
        fields = {"method": method, "route": route, "status": status,
                  "duration_ms": round((time.perf_counter() - started) * 1000, 3)}
        if inner is not None:
            fields["via"] = "ohttp"
        if full:  # --access-log full: the operator asked for addresses and paths (never the query string)
            fields.update(client=shown_client(scope.get("client"), secrets), path=shown_path(path, secrets))
        cls.logger.info("%s %s %d", method, route, status, extra=fields)
