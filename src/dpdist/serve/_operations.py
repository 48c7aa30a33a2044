"""What an operator needs around the routes: readiness, metrics, request ids, logs, CORS, security headers.

:func:`install` adds them to the application built by :func:`create_app`:
the ``/readyz`` and ``/metrics`` routes, the 503 answer to a database that
cannot answer (logged once per error class by the database layer, not as a
traceback per request), and the middleware, outermost first (outside the
privacy middleware of :mod:`._access`): request id (and the JSON access line),
metrics, CORS (only with ``cors_origins``), security headers; outside them all (without CORS), the devices'
batch route and the Oblivious HTTP gateway's, each served in one layer (:mod:`._fast_batches`, :mod:`._fast_ohttp`);
outside everything, while the ``OTEL_*`` variables ask for traces, a span per request
(:mod:`dpdist._http._telemetry`).  See ``docs/how-to/run-a-campaign.md`` ("Operating", "Metrics", "Behind a reverse proxy").
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .._http import _telemetry
from .._validation import Optional, Options, Token, validate_params
from ._access import AccessLog, fixed_fields
from ._database import DatabaseUnavailableError
from ._fast_batches import BatchFastPath
from ._fast_ohttp import GatewayFastPath
from ._health import DEFAULT_MIN_FREE_BYTES, DEFAULT_READY_TIMEOUT_S, MIN_FREE_BYTES, READY_TIMEOUT, Readiness
from ._http import bearer, bearer_token, database_unavailable_answer
from ._logs import LOG_FORMATS
from ._metrics import Metrics, MetricsMiddleware
from .._guard._security_headers import SecurityHeadersMiddleware
from ._middleware import RequestIdMiddleware
from ._openapi import content_answer, documented, json_answer
from ._origins import ORIGINS

__all__ = ["Operations", "install", "ROUTES"]



@validate_params({"log_format": Options(LOG_FORMATS), "ready_timeout_s": READY_TIMEOUT, "min_free_bytes": MIN_FREE_BYTES,
                  "metrics_token": Optional(Token(16, "a token of at least 16 printable ASCII characters", spaces=True)),
                  "previous_metrics_token": Optional(Token(16, "a token of at least 16 printable ASCII characters",
                                                           spaces=True)),
                  "cors_origins": ORIGINS})
@dataclass(frozen=True)
class Operations:
    """The operational options of ``dpdist serve`` (each one a ``--option`` and a ``DPDIST_...`` variable).

    Parameters
    ----------
    metrics_token : str, optional
        If set (at least 16 characters), ``/metrics`` needs ``Authorization: Bearer <metrics_token>``;
        if not, the admin token.
    log_format : {"text", "json"}
        ``json``: the server log is one JSON object per line, with request ids, and the access log
        names routes, not paths (``--log-format``).
    cors_origins : tuple of str
        Origins (``https://example.org``, ``http://127.0.0.1:8080``) whose pages may call the API and
        load the JavaScript client; ``"*"`` for any.  Empty (the default): same origin only.
    ready_timeout_s : float
        How long ``/readyz`` waits for the database.
    min_free_bytes : int
        SQLite: ``/readyz`` answers 503 ``disk_full`` below this much free space.
    previous_metrics_token : str, optional
        While the metrics token rotates, the one it replaces: ``/metrics`` takes either.
    """

    metrics_token: str | None = None
    log_format: str = "text"
    cors_origins: tuple = ()
    ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S
    min_free_bytes: int = DEFAULT_MIN_FREE_BYTES
    previous_metrics_token: str | None = None

    def __post_init__(self):  # the table checked each origin (a default of () is not checked: nothing to check)
        object.__setattr__(self, "cors_origins", tuple(self.cors_origins))


@documented("Readiness: the database could take a write now (503 with a reason if not)",
            answers={200: json_answer({"type": "object"}), 503: json_answer({"type": "object"})})
async def readyz(request: Request) -> Response:
    return await request.app.state.readiness.endpoint(request)


@documented("Prometheus metrics (Bearer metrics token; without one, the admin token)",
            answers={200: content_answer("text/plain", "Prometheus text format")}, errors=(401,))
async def metrics(request: Request) -> Response:
    return await request.app.state.metrics.endpoint(request)


ROUTES = [Route("/readyz", readyz, methods=["GET"]), Route("/metrics", metrics, methods=["GET"])]


async def _database_unavailable(request: Request, error: DatabaseUnavailableError) -> JSONResponse:
    # logged by the database layer (once per error class); the client retries the same batch later
    request.app.state.metrics.refused_request("database_unavailable")
    status, body, headers = database_unavailable_answer(error)
    return JSONResponse(body, status_code=status, headers=headers)


def install(app, service, operations: Operations | None = None) -> None:
    """Add readiness, metrics and the middleware of ``operations`` to ``app`` (a fresh :func:`create_app`, whose
    route table holds :data:`ROUTES`)."""
    operations = operations or Operations()
    db = service.store.db
    readiness = Readiness(db, timeout_s=operations.ready_timeout_s, min_free_bytes=operations.min_free_bytes)
    metrics = Metrics(db, token=operations.metrics_token, previous_token=operations.previous_metrics_token, check_admin=lambda request: service.check_admin(bearer(request)),
                      service=service)
    app.state.metrics, app.state.readiness, app.state.operations = metrics, readiness, operations
    app.add_exception_handler(DatabaseUnavailableError, _database_unavailable)
    app.add_middleware(SecurityHeadersMiddleware)  # add_middleware wraps: the last one added is the outermost
    if operations.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(operations.cors_origins),
            allow_methods=["GET", "POST", "PUT"],
            allow_headers=["Authorization", "Content-Type", "X-Request-ID"],
            expose_headers=["X-Request-ID", "Retry-After"],
            max_age=600,
        )
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    # the access lines, of fixed fields ("--access-log": anonymous, full or off; "--log-format": text or json)
    mode = getattr(getattr(service, "limits", None), "access_log", "anonymous")
    access = None if mode == "off" else AccessLog(mode, operations.log_format, campaigns=service.store.campaign_ids)
    app.state.access_log = access
    app.add_middleware(RequestIdMiddleware, access=access)
    if not operations.cors_origins:  # the devices' batches and encapsulated requests, each served in one layer
        for fast_path in (GatewayFastPath, BatchFastPath):  # the batch route's outermost: a direct batch passes no other
            app.add_middleware(fast_path, service=service, metrics=metrics, routes=app.routes, access=access)
    if _telemetry.start("dpdist-serve"):  # the outermost: a span per request, its time all of the request's
        app.add_middleware(_telemetry.TracingMiddleware, facts=fixed_fields, trusted=lambda scope: _from_relay(service, scope))
    db.outages.enabled = True


def _from_relay(service, scope) -> bool:
    """Whether the request of ``scope`` carries the service's relay token (``Authorization: Bearer``): its
    ``traceparent`` is the relay's own (:mod:`dpdist._http._telemetry`)."""
    token = service.relayed.relay_token
    header = next((value for name, value in scope["headers"] if name == b"authorization"), b"")
    return bool(token) and hmac.compare_digest(bearer_token(header.decode("latin-1")).encode(), token.encode())
