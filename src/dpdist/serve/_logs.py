"""Server logs of ``dpdist serve``: text (uvicorn's format) or one JSON object per line, with request ids.

``--log-format json`` writes every record of the server (uvicorn's and the
service's) as one JSON object per line: ``time`` (UTC, ISO 8601), ``level``,
``logger``, ``message``, ``request_id`` while a request is being served, and
``exception`` (the traceback as one string) when there is one.  Every record, in
either format, has the server's own secrets masked (:func:`log_config`: its
admin, relay and metrics tokens, its database URL's password, in every form
:func:`dpdist._shown.masked` knows).  The access lines are the service's own, of
fixed fields (:mod:`._access`).
"""

from __future__ import annotations

import contextvars
import copy
import importlib
import json
import logging
from datetime import datetime, timezone
from typing import Any, NamedTuple, cast

from uvicorn.config import LOGGING_CONFIG

from .._shown import masked

__all__ = ["REQUEST_ID", "INNER", "Inner", "inner_of", "shown_status",
           "JsonFormatter", "MaskingFormatter", "log_config", "LOG_FORMATS"]

LOG_FORMATS = ("text", "json")

#: The id of the request being served (set by the request-id middleware), or None.
REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("dpdist_request_id", default=None)

#: The key of an Oblivious HTTP gateway request's scope holding the request it carried (:class:`Inner`), which its one
#: access line names (:mod:`._ohttp_gateway`).
INNER = "dpdist.ohttp_inner"


class Inner(NamedTuple):
    """What a gateway request carried, for its access line: the inner ``method``, ``route`` (its template), the
    ``status`` of the inner answer and its path parameters (``params``)."""

    method: str
    route: str
    status: int
    params: dict | None = None


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


class MaskingFormatter(logging.Formatter):
    """A ``logging.config`` formatter (``inner``: its settings) whose lines have ``secrets`` masked."""

    def __init__(self, inner: dict, secrets: tuple[str, ...] = ()):
        super().__init__()
        factory = inner.get("()", logging.Formatter)  # a class, or its dotted name ("uvicorn.logging.DefaultFormatter")
        factory = factory if callable(factory) else getattr(importlib.import_module(factory.rpartition(".")[0]), factory.rpartition(".")[2])
        self.inner, self.secrets = cast(logging.Formatter, factory(**{key: value for key, value in inner.items() if key != "()"})), tuple(secrets)

    def format(self, record: logging.LogRecord) -> str:
        return masked(self.inner.format(record), self.secrets)


def log_config(log_format: str, level: str, secrets: tuple[str, ...] = ()) -> dict:
    """A ``logging.config.dictConfig`` for ``uvicorn.run(log_config=...)``: uvicorn's loggers and dpdist's, every line
    with ``secrets`` (the server's own) masked."""
    config = copy.deepcopy(LOGGING_CONFIG)
    if log_format == "json":
        config["formatters"] = {"json": {"()": JsonFormatter}}
        config["handlers"] = {"default": {"formatter": "json", "class": "logging.StreamHandler", "stream": "ext://sys.stderr"}}
        config["loggers"]["uvicorn.access"] = {"handlers": [], "level": "WARNING", "propagate": False}
    config["loggers"]["dpdist"] = {"handlers": ["default"], "level": level.upper(), "propagate": False}
    config["formatters"] = {name: {"()": MaskingFormatter, "inner": inner, "secrets": list(secrets)}
                            for name, inner in config["formatters"].items()}
    return config
