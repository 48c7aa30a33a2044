"""The service's own pages and files: its root, OpenAPI schema, liveness, a campaign's dashboard and
participation page (templates and static files, :mod:`.._pages`), and the JavaScript client (package data,
:mod:`.._assets`)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from ... import __version__
from .._campaigns import check_campaign_id
from ..._guard._security_headers import CONNECT_HEADER
from .._openapi import content_answer, documented, schema_of
from .._pages import dashboard_page, index_page, prefers_html
from ..._guard._refusals import NotFound
from ._common import service_of

__all__ = ["ROUTES"]


async def root(request: Request) -> Response:
    root_path = request.scope.get("root_path", "")  # behind a path-prefixed proxy too
    if prefers_html(request.headers.get("accept", "")):  # a browser: the index of campaigns
        return index_page(request, __version__)
    return JSONResponse({"service": "dpdist", "version": __version__, "openapi": root_path + "/openapi.json"},
                        headers={"Vary": "Accept"})


@documented("This schema")
async def openapi(request: Request) -> JSONResponse:
    return JSONResponse(schema_of(request.app.routes))


@documented("Liveness: the process serves HTTP")
async def health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


@documented("Dashboard page (the admin token goes in the URL fragment: #token=...)",
            answers={200: content_answer("text/html", "HTML")})
async def dashboard(request: Request) -> Response:
    return dashboard_page(request, check_campaign_id(request.path_params["campaign"]))


@documented("Participation page of the JavaScript client (clients/js/participate.html)",
            answers={200: content_answer("text/html", "HTML")}, errors=(404,))
async def participate(request: Request) -> FileResponse:
    page = request.app.state.clients_js / "participate.html"
    if not page.is_file():
        raise NotFound("not_installed", "The participation page (clients/js/participate.html) is not installed.")
    headers = {}
    origins = await run_in_threadpool(service_of(request).relayed.origins, request.path_params["campaign"])
    if origins:  # a relayed campaign's page sends to its relay and asks its issuer for tokens: its CSP allows both
        headers[CONNECT_HEADER.decode()] = " ".join(origins)
    return FileResponse(page, media_type="text/html", headers=headers)


@documented("The JavaScript client as an ES module (re-exports /static/dpdist-client/index.js)",
            answers={200: content_answer("text/javascript", "JavaScript")})
async def client_module(request: Request) -> Response:
    return Response("export * from './dpdist-client/index.js';\n", media_type="text/javascript")


ROUTES = [
    Route("/", root),
    Route("/openapi.json", openapi, methods=["GET"]),
    Route("/healthz", health, methods=["GET"]),
    Route("/campaigns/{campaign}/dashboard", dashboard, methods=["GET"]),
    Route("/campaigns/{campaign}/participate", participate, methods=["GET"]),
    Route("/static/dpdist-client.js", client_module, methods=["GET"]),
]
