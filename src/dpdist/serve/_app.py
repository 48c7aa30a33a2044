"""The HTTP service (Starlette): campaigns, batch ingest, estimates, dashboard, static client files.

Every refusal is a JSON body ``{"error": CODE, "detail": MESSAGE}`` with an
HTTP status; an unexpected failure is a 500 ``{"error": "internal"}`` whose
traceback goes to the server log only, never to the client.  The routes are
listed in :mod:`._openapi` (served at ``/openapi.json``) and in
``docs/deployment.md``.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from .. import _json
from ..errors import InvalidParameterError
from ._assets import clients_js_dir
from ._database import open_database
from ._estimates import estimate_json, estimate_png
from ._ingest import decode_body, record_file_ids
from ._limits import BodyBudget, Limits, RateLimiter, receive_body
from ._openapi import openapi_schema
from ._operations import Operations, install as install_operations
from ._relayed import RelayedCampaigns
from ._store import DEFAULT_MAX_BODY_BYTES, ServiceError, Store, check_batch_id, check_campaign_id, token_sha256
from .._types import PathLike

__all__ = ["create_app", "Service", "DEFAULT_MAX_BODY_BYTES"]

LOG = logging.getLogger("dpdist.serve")
_CLIENTS_JS = clients_js_dir()  # package data of an installed wheel, else clients/js of the checkout


class Service:
    """The operations behind the routes (synchronous; the routes run them in a thread pool)."""

    def __init__(
        self, db_url: str, *, admin_token: str, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, limits: Limits | None = None,
        relay_token: str | None = None,
    ):
        if not isinstance(admin_token, str) or len(admin_token) < 16:
            raise InvalidParameterError(
                "The admin token (DPDIST_ADMIN_TOKEN or --admin-token) must be set, at least 16 characters long."
            )
        if not isinstance(max_body_bytes, int) or max_body_bytes < 1024:
            raise InvalidParameterError(f"The '--max-body-bytes' option must be an int >= 1024. Got {max_body_bytes!r}.")
        self._admin_sha256 = hashlib.sha256(admin_token.encode()).digest()
        self.max_body_bytes = max_body_bytes
        self.limits = (limits or Limits(max_inflight_bytes=max(Limits.max_inflight_bytes, max_body_bytes))).check(max_body_bytes)
        self.budget = BodyBudget(self.limits.max_inflight_bytes)
        self.rate = RateLimiter(self.limits.rate_limit, self.limits.rate_burst)
        self.store = Store(open_database(db_url), max_statistic_bytes=self.limits.max_statistic_bytes)
        self.relayed = RelayedCampaigns(self.store, relay_token)

    def admit(self, campaign_id: str, batch_id: str | None, token: str) -> None:
        """The checks made before a batch's body is read (its campaign, token, state and limits)."""
        gate = self.store.gate(campaign_id, batch_id, token)
        if gate.enrollment:
            if gate.enrollment_left is None:
                raise ServiceError(
                    401, "unauthorized", f"Campaign {campaign_id!r} needs an enrollment token (Authorization: Bearer ...)."
                )
        elif gate.submit_token_sha256 is not None and not hmac.compare_digest(token_sha256(token), gate.submit_token_sha256):
            raise ServiceError(401, "unauthorized", f"Campaign {campaign_id!r} needs its submit token (Authorization: Bearer ...).")
        if gate.batch_recorded or batch_id is None:
            return  # a retry gets its acknowledgement (and a batch named by its records' file id is read first)
        if gate.state == "created":
            raise ServiceError(409, "campaign_not_open", f"Campaign {campaign_id!r} is not open yet; it accepts no reports.")
        if gate.state == "closed":
            raise ServiceError(409, "campaign_closed", f"Campaign {campaign_id!r} is closed; it accepts no more reports.")
        if gate.max_reports is not None and gate.n >= gate.max_reports:
            self.store.count_refused(campaign_id, "campaign_full")
            raise ServiceError(
                409, "campaign_full", f"Campaign {campaign_id!r} accepts at most {gate.max_reports} reports (max_reports); it is full."
            )
        if gate.enrollment and (gate.enrollment_left or 0) <= 0:
            self.store.count_refused(campaign_id, "contribution_limit")
            raise ServiceError(
                403, "contribution_limit", f"This enrollment token of campaign {campaign_id!r} has sent all the reports it was issued for."
            )

    def check_admin(self, request: Request) -> None:
        """401 unless the request carries ``Authorization: Bearer <admin token>`` (constant-time compare)."""
        offered = hashlib.sha256(_bearer(request).encode()).digest()
        if not hmac.compare_digest(offered, self._admin_sha256):
            raise ServiceError(401, "unauthorized", "This route needs the admin token (Authorization: Bearer ...).")

    def submit(self, campaign_id: str, batch_id: str | None, body: bytes, content_type: str, token: str) -> dict:
        campaign = self.store.get(campaign_id)
        enrollment = token_sha256(token) if campaign.enrollment else None
        if not campaign.enrollment and not campaign.check_submit_token(token):
            raise ServiceError(401, "unauthorized", f"Campaign {campaign_id!r} needs its submit token (Authorization: Bearer ...).")
        if batch_id is None:
            batch_id = self._counted(campaign_id, _batch_id_of_records, body, content_type, self.limits.max_records, count_400=False)
        check_batch_id(batch_id)
        kind = (content_type or "").split(";")[0].strip().lower()
        digest = hashlib.sha256(kind.encode() + b"\n" + body).hexdigest()
        if campaign.state != "open":  # a retry of an acknowledged batch still gets its acknowledgement
            return self.store.ingest(campaign_id, batch_id, digest, None, 0, None)
        protocol = campaign.protocol
        batch = self._counted(campaign_id, decode_body, protocol, body, content_type, batch_id, self.limits)
        contribution = protocol.aggregator().add_batch(batch)
        raw = None
        if campaign.keep_reports:
            import numpy as np

            raw = np.ascontiguousarray(batch.reports, dtype=protocol.report_format.dtype)
        return self._counted(
            campaign_id, self.store.ingest, campaign_id, batch_id, digest, contribution, batch.n_read, raw, enrollment_sha256=enrollment
        )

    _COUNTED = {"malformed_batch", "batch_id_mismatch", "too_many_records", "too_many_rows", "campaign_full",
                "contribution_limit", "batch_of_another_campaign"}

    def _counted(self, campaign_id: str, step, *args, count_400: bool = True, **kwargs):
        """Run ``step``; a refusal of the whole batch is counted under the campaign's ``refused_batches``."""
        try:
            return step(*args, **kwargs)
        except ServiceError as error:
            if (count_400 and error.status == 400) or error.code in self._COUNTED:
                self.store.count_refused(campaign_id, error.code)
            raise

    def start_retention(self, every_s: float = 3600.0) -> None:
        """Apply ``--retention-days`` now (before the first request) and then every hour, in a daemon thread."""
        import threading

        assert self.limits.retention_days is not None, "retention is on"
        period_ms = int(self.limits.retention_days * 86_400_000)

        def purge_forever():
            while not threading.Event().wait(every_s):
                try:
                    self.store.purge(period_ms)
                except Exception:  # a database outage: try again next time
                    LOG.warning("retention: deleting expired data failed; retrying in %.0f s", every_s, exc_info=True)

        self.store.purge(period_ms)
        threading.Thread(target=purge_forever, name="dpdist-retention", daemon=True).start()

    def refuse_oversized(self, campaign_id: str) -> None:
        try:
            self.store.count_refused(campaign_id, "too_large")
        except ServiceError:
            pass  # unknown campaign: nothing to count against


def _bearer(request: Request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _batch_id_of_records(body: bytes, content_type: str, max_records: int | None = None) -> str:
    """A binary batch without a batch id in the URL is identified by its records' file id."""
    binary = (content_type or "").startswith("application/octet-stream")
    ids = set(record_file_ids(body, max_records)) if binary else {None}
    if len(ids) != 1 or None in ids:
        raise ServiceError(
            400,
            "batch_id_required",
            "A batch needs a batch id: PUT it to /api/campaigns/{campaign}/batches/{batch_id}, or POST dpdist "
            "report records that all carry the same file id.",
        )
    (batch_id,) = ids
    assert batch_id is not None
    return batch_id


def _read_body(request: Request, service: Service, campaign_id: str | None):
    """``async with _read_body(...) as body``: the body, bounded in size, time and the server's in-flight bytes."""

    async def refuse_oversized():
        if campaign_id:
            await run_in_threadpool(service.refuse_oversized, campaign_id)

    return receive_body(request, service.limits, service.budget, service.max_body_bytes, refuse_oversized)


async def _json_body(request: Request, service: Service) -> dict:
    async with _read_body(request, service, None) as body:
        return _json_document(body)


def _json_document(body: bytes) -> dict:
    try:
        document = _json.loads(body or b"{}")
    except ValueError as error:
        raise ServiceError(400, "invalid_json", f"The request body is not valid JSON ({error}).") from None
    if not isinstance(document, dict):
        raise ServiceError(400, "invalid_json", "The request body must be a JSON object.")
    return document


def create_app(
    db_url: str, *, admin_token: str, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, static_dir: PathLike | None = None,
    limits: Limits | None = None, operations: Operations | None = None, relay_token: str | None = None,
) -> Starlette:
    """The ASGI application of ``dpdist serve`` (run it with uvicorn, with :func:`._limits.uvicorn_options`); ``operations``: a
    :class:`._operations.Operations` (readiness, metrics, logs, CORS, security headers); ``relay_token``: the token
    of the relay that delivers to campaigns created with ``"relay"`` (:mod:`._relayed`)."""
    service = Service(db_url, admin_token=admin_token, max_body_bytes=max_body_bytes, limits=limits, relay_token=relay_token)
    clients_js = Path(static_dir) if static_dir is not None else _CLIENTS_JS

    async def root(request):
        from .. import __version__
        from ._index_page import index_html, prefers_html

        root_path = request.scope.get("root_path", "")  # behind a path-prefixed proxy too
        if prefers_html(request.headers.get("accept", "")):  # a browser: the index of campaigns (issue 30)
            return HTMLResponse(index_html(root_path, __version__), headers={"Vary": "Accept"})
        return JSONResponse({"service": "dpdist", "version": __version__, "openapi": root_path + "/openapi.json"},
                            headers={"Vary": "Accept"})

    async def openapi(request):
        return JSONResponse(openapi_schema())

    async def health(request):
        return JSONResponse({"status": "ok"})

    async def create_campaign(request):
        service.check_admin(request)
        document: Any = await _json_body(request, service)  # a JSON document, checked by the store
        keep = document.get("keep_reports", False)
        if not isinstance(keep, bool):
            raise ServiceError(400, "invalid_keep_reports", f"'keep_reports' must be true or false. Got {keep!r}.")
        options = {"submit_token": document.get("submit_token"), "keep_reports": keep,
                   "max_reports": document.get("max_reports"), "enrollment": document.get("enrollment", False)}
        if document.get("relay", False) is not False:
            campaign = await run_in_threadpool(service.relayed.create, document, **options)
        else:
            campaign = await run_in_threadpool(service.store.create, document.get("campaign"), document.get("config"), **options)
        return JSONResponse(await _summary(campaign), status_code=201)

    async def _summary(campaign) -> dict:
        return {**campaign.summary(), **await run_in_threadpool(service.relayed.summary_fields, campaign)}

    async def list_campaigns(request):
        service.check_admin(request)
        campaigns = await run_in_threadpool(service.store.list)
        return JSONResponse({"campaigns": [await _summary(campaign) for campaign in campaigns]})

    async def show_campaign(request):
        service.check_admin(request)
        campaign = await run_in_threadpool(service.store.get, request.path_params["campaign"])
        return JSONResponse(await _summary(campaign))

    async def public_config(request):
        campaign = await run_in_threadpool(service.store.get, request.path_params["campaign"])
        return JSONResponse(
            {
                "campaign": campaign.id,
                "state": campaign.state,
                "config": campaign.config,
                "client_view": campaign.protocol.client_view(),
                "submit_token_required": campaign.submit_token_sha256 is not None,
                "enrollment_token_required": campaign.enrollment,
                "max_body_bytes": service.max_body_bytes,
                "max_records": service.limits.max_records,
                "max_json_rows": service.limits.max_json_rows,
                **await run_in_threadpool(service.relayed.public_fields, campaign),
            }
        )

    async def explain(request):
        from ._explain import explain_json

        campaign = await run_in_threadpool(service.store.get, request.path_params["campaign"])
        query = request.query_params
        return JSONResponse(await run_in_threadpool(explain_json, campaign, query.get("n"), query.get("shape")))

    async def set_config(request):
        service.check_admin(request)
        document: Any = await _json_body(request, service)  # a JSON document, checked by the store
        changes = {"max_reports": document["max_reports"]} if "max_reports" in document else {}
        campaign = await run_in_threadpool(service.store.set_config, request.path_params["campaign"], document.get("config"), **changes)
        return JSONResponse(await _summary(campaign))

    async def delete_campaign(request):
        service.check_admin(request)
        deleted = await run_in_threadpool(service.store.delete, request.path_params["campaign"])
        await run_in_threadpool(service.relayed.forget, request.path_params["campaign"])  # its keys too
        return JSONResponse(deleted)

    async def enroll(request):
        service.check_admin(request)
        document: Any = await _json_body(request, service)  # a JSON document, checked by the store
        campaign_id = request.path_params["campaign"]
        tokens = await run_in_threadpool(service.store.enroll, campaign_id, document.get("count"), document.get("reports"))
        return JSONResponse({"campaign": campaign_id, "reports_per_token": document["reports"], "tokens": tokens}, status_code=201)

    def transition(target):
        async def handler(request):
            service.check_admin(request)
            campaign = await run_in_threadpool(service.store.transition, request.path_params["campaign"], target)
            return JSONResponse(await _summary(campaign))

        return handler

    async def submit(request):
        campaign_id, batch_id, token = request.path_params["campaign"], request.path_params.get("batch_id"), _bearer(request)
        try:  # nothing of the body is read before the client, its campaign and its token pass
            service.rate.check(request.client.host if request.client else None)
            await run_in_threadpool(service.admit, campaign_id, batch_id, token)
        except ServiceError as error:
            if error.code == "unauthorized":  # a relayed campaign's submit token is known to no one: say why
                refusal: ServiceError | None = await run_in_threadpool(service.relayed.direct_refusal, campaign_id)
                error = refusal or error
            error.close = True
            raise error
        async with _read_body(request, service, campaign_id) as body:
            ack = await run_in_threadpool(
                service.submit, campaign_id, batch_id, body, request.headers.get("content-type", ""), token
            )
        request.app.state.metrics.acknowledged(ack)
        return JSONResponse(ack, status_code=200)

    async def relayed(request):
        campaign_id, batch_id = request.path_params["campaign"], request.path_params["batch_id"]
        try:  # nothing of the body is read before the campaign and the relay's token pass
            campaign, key = await run_in_threadpool(service.relayed.admit, campaign_id, _bearer(request))
        except ServiceError as error:
            error.close = True
            raise
        async with _read_body(request, service, campaign_id) as body:
            ack = await run_in_threadpool(
                service._counted, campaign_id, service.relayed.ingest, campaign, key, batch_id, body, service.limits
            )
        request.app.state.metrics.acknowledged(ack)
        return JSONResponse(ack, status_code=200)

    async def estimate(request):
        service.check_admin(request)
        campaign = await run_in_threadpool(service.store.get, request.path_params["campaign"])
        return JSONResponse(await run_in_threadpool(estimate_json, campaign, request.query_params))

    async def estimate_plot(request):
        service.check_admin(request)
        campaign = await run_in_threadpool(service.store.get, request.path_params["campaign"])
        return Response(await run_in_threadpool(estimate_png, campaign, request.query_params), media_type="image/png")

    async def history(request):
        service.check_admin(request)
        points = await run_in_threadpool(service.store.history, request.path_params["campaign"])
        return JSONResponse({"campaign": request.path_params["campaign"], "history": points})

    async def export(request):
        service.check_admin(request)
        campaign = await run_in_threadpool(service.store.get, request.path_params["campaign"])
        if not campaign.keep_reports:
            raise ServiceError(
                409, "reports_not_kept", f"Campaign {campaign.id!r} keeps no raw reports (create it with keep_reports)."
            )
        return StreamingResponse(_export_records(service.store, campaign), media_type="application/octet-stream")

    async def dashboard(request):
        campaign_id = check_campaign_id(request.path_params["campaign"])
        from ._dashboard import dashboard_html

        return HTMLResponse(dashboard_html(campaign_id))

    async def participate(request):
        page = clients_js / "participate.html"
        if not page.is_file():
            raise ServiceError(404, "not_installed", "The participation page (clients/js/participate.html) is not installed.")
        return FileResponse(page, media_type="text/html")

    async def client_module(request):
        return Response("export * from './dpdist-client/index.js';\n", media_type="text/javascript")

    routes: list[BaseRoute] = [
        Route("/", root),
        Route("/openapi.json", openapi),
        Route("/healthz", health),
        Route("/api/campaigns", create_campaign, methods=["POST"]),
        Route("/api/campaigns", list_campaigns, methods=["GET"]),
        Route("/api/campaigns/{campaign}", show_campaign, methods=["GET"]),
        Route("/api/campaigns/{campaign}", delete_campaign, methods=["DELETE"]),
        Route("/api/campaigns/{campaign}/enrollments", enroll, methods=["POST"]),
        Route("/api/campaigns/{campaign}/config", public_config, methods=["GET"]),
        Route("/api/campaigns/{campaign}/config", set_config, methods=["PUT"]),
        Route("/api/campaigns/{campaign}/explain", explain, methods=["GET"]),
        Route("/api/campaigns/{campaign}/open", transition("open"), methods=["POST"]),
        Route("/api/campaigns/{campaign}/close", transition("closed"), methods=["POST"]),
        Route("/api/campaigns/{campaign}/batches", submit, methods=["POST"]),
        Route("/api/campaigns/{campaign}/batches/{batch_id}", submit, methods=["PUT", "POST"]),
        Route("/api/campaigns/{campaign}/relayed/{batch_id}", relayed, methods=["PUT"]),
        Route("/api/campaigns/{campaign}/estimate", estimate, methods=["GET"]),
        Route("/api/campaigns/{campaign}/estimate.png", estimate_plot, methods=["GET"]),
        Route("/api/campaigns/{campaign}/history", history, methods=["GET"]),
        Route("/api/campaigns/{campaign}/reports", export, methods=["GET"]),
        Route("/campaigns/{campaign}/dashboard", dashboard, methods=["GET"]),
        Route("/campaigns/{campaign}/participate", participate, methods=["GET"]),
        Route("/static/dpdist-client.js", client_module, methods=["GET"]),
    ]
    if (clients_js / "src").is_dir():
        routes.append(Mount("/static/dpdist-client", app=StaticFiles(directory=clients_js / "src"), name="client"))

    async def service_error(request, error: ServiceError):
        request.app.state.metrics.refused_request(error.code)
        return JSONResponse({"error": error.code, "detail": error.detail}, status_code=error.status, headers=_headers(error))

    async def http_error(request, error: HTTPException):
        code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
        return JSONResponse({"error": code, "detail": str(error.detail)}, status_code=error.status_code)

    async def internal_error(request, error: Exception):
        LOG.error("internal error on %s %s", request.method, request.url.path, exc_info=error)
        return JSONResponse({"error": "internal", "detail": "internal server error"}, status_code=500)

    # Starlette types a handler as taking any Exception; each of these takes its own kind
    handlers: dict[Any, Any] = {ServiceError: service_error, HTTPException: http_error, Exception: internal_error}
    app = Starlette(
        routes=routes,
        exception_handlers=handlers,
    )
    app.state.service = service
    install_defences(app, service)
    install_operations(app, service, operations)  # /readyz, /metrics, 503 on outages; its middleware the outermost
    return app


def install_defences(app: Starlette, service: Service) -> None:
    """The privacy middleware (tokens in URLs refused, access log without addresses) and the retention task."""
    from ._access import PrivacyMiddleware

    app.add_middleware(PrivacyMiddleware, mode=service.limits.access_log)
    if service.limits.retention_days is not None:
        service.start_retention()


def _headers(error: ServiceError) -> dict:
    headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else {}
    if error.close:  # the body was not read: do not read (or wait for) the rest of it
        headers["Connection"] = "close"
    if error.retry_after is not None:
        headers["Retry-After"] = str(int(error.retry_after))
    return headers


def _export_records(store, campaign):
    """The kept reports as dpdist binary records, all carrying the campaign's export file id."""
    import numpy as np

    from .._io._binary import encode_record

    protocol = campaign.protocol
    layout = protocol.report_format
    for n, payload in store.iter_reports(campaign.id):
        reports = np.frombuffer(payload, dtype=layout.dtype).reshape((n, *layout.row_shape))
        yield encode_record(protocol, reports, campaign.export_file_id)
