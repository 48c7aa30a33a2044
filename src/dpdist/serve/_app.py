"""The ASGI application of ``dpdist serve`` (Starlette): the route table, the lifespan, the error answers.

The endpoints live in :mod:`._routes` (one module per resource), the operations
behind them in :class:`~._service.Service`, refusals become HTTP answers in
:mod:`._http`, and the OpenAPI schema at ``/openapi.json`` is generated from the
same route table.  The lifespan starts the service's background work and, at
shutdown, closes its database; a request still running when the shutdown's
``--graceful-timeout`` is up is answered 503 ``shutting_down``
(:mod:`dpdist._guard._shutdown`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles

from .._http import _telemetry
from ._otel_metrics import start as start_metrics_export
from .._guard._shutdown import ShutdownMiddleware
from .._types import PathLike
from .._validation import validate_params
from ._access import PrivacyMiddleware
from ._assets import clients_js_dir
from ._database import DATABASE_URL
from ._heap import freeze_startup_heap
from ._http import EXCEPTION_HANDLERS
from ._limits import DEFAULT_MAX_BODY_BYTES, Limits
from ._ohttp_gateway import ROUTES as OHTTP_ROUTES
from ._openapi import schema_of
from ._operations import ROUTES as OPERATIONS_ROUTES, Operations, install as install_operations
from ._pages import STATIC_PREFIX, static_files
from ._routes import ROUTES
from ._service import Service

__all__ = ["create_app", "openapi_schema", "Service", "DEFAULT_MAX_BODY_BYTES"]


def openapi_schema() -> dict:
    """The OpenAPI schema of every route of ``dpdist serve`` (what ``/openapi.json`` serves)."""
    return schema_of([*ROUTES, *OHTTP_ROUTES, *OPERATIONS_ROUTES])


@contextlib.asynccontextmanager
async def lifespan(app: Starlette):
    """Start the service's background work with the server (and, in a server process, freeze the heap made so far:
    :mod:`._heap`; while the ``OTEL_*`` variables ask, the export of the metrics: :mod:`._otel_metrics`); at shutdown
    stop it and close the database."""
    service: Service = app.state.service
    await run_in_threadpool(service.start)
    exported = None
    try:
        exported = await run_in_threadpool(start_metrics_export, app.state.metrics.registry)
        if getattr(app.state, "freeze_heap", False):  # a server process (the command line sets it): _heap
            freeze_startup_heap()
        yield
    finally:
        service.pressure.stop()
        if getattr(app.state, "access_log", None) is not None:
            app.state.access_log.flush()
        if exported is not None:  # the last reading, of the service still whole
            await run_in_threadpool(exported.stop)
        await run_in_threadpool(service.close)
        await run_in_threadpool(_telemetry.flush)


@validate_params({"db_url": DATABASE_URL}, owner="dpdist.serve.create_app")  # once per server
def create_app(
    db_url: str, *, admin_token: str, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, static_dir: PathLike | None = None,
    limits: Limits | None = None, operations: Operations | None = None, relay_token: str | None = None,
    previous_relay_token: str | None = None, previous_admin_token: str | None = None,
) -> Starlette:
    """The ASGI application of ``dpdist serve`` (run it with uvicorn, with :func:`._limits.uvicorn_options`).

    The database is opened (and its schema created or migrated) here, so that a
    wrong ``db_url`` fails before the server listens.  ``static_dir`` replaces the
    packaged JavaScript client (``participate.html`` and ``src/``); ``operations``:
    a :class:`._operations.Operations` (readiness, metrics, logs, CORS, security headers); ``relay_token``: the token
    of the relay that delivers to campaigns created with ``"relay"`` (:mod:`._relayed`); ``previous_relay_token``: the
    one it replaces, still taken from the relay while the rotation lasts; ``previous_admin_token``: likewise the admin
    token being replaced.
    """
    service = Service(db_url, admin_token=admin_token, max_body_bytes=max_body_bytes, limits=limits, relay_token=relay_token,
                      previous_relay_token=previous_relay_token, previous_admin_token=previous_admin_token)
    clients_js = Path(static_dir) if static_dir is not None else clients_js_dir()
    routes: list[BaseRoute] = [*ROUTES, *OHTTP_ROUTES, *OPERATIONS_ROUTES,  # OHTTP: the gateway (:mod:`._ohttp_gateway`)
                               Mount(STATIC_PREFIX, app=static_files(), name="pages")]
    if (clients_js / "src").is_dir():
        routes.append(Mount("/static/dpdist-client", app=StaticFiles(directory=clients_js / "src"), name="client"))
    app = Starlette(routes=routes, exception_handlers=dict(EXCEPTION_HANDLERS), lifespan=lifespan)
    app.state.service, app.state.clients_js = service, clients_js

    # the innermost: its answer to a request the shutdown cut short gets the headers, log lines and counts of the rest
    app.add_middleware(ShutdownMiddleware, refused=_count_refusal)
    app.add_middleware(PrivacyMiddleware)  # tokens in URLs refused
    install_operations(app, service, operations)  # /readyz, /metrics, 503 on outages; its middleware the outermost
    return app


def _count_refusal(scope, code: str) -> None:
    """A refusal answered by a layer outside the routes, counted as the exception handlers count theirs."""
    metrics = getattr(scope["app"].state, "metrics", None)
    if metrics is not None:
        metrics.refused_request(code)
