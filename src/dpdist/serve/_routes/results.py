"""What a campaign has collected (admin): its estimate (JSON and PNG), its history, its kept raw reports."""

from __future__ import annotations

import numpy as np
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..._io._binary import encode_record
from .._openapi import content_answer, documented, json_answer, ref
from ..._guard._refusals import Conflict
from ._common import as_admin

__all__ = ["ROUTES"]

_ESTIMATE_QUERY = (
    {"name": "level", "in": "query", "schema": {"type": "number", "default": 0.95}, "description": "confidence level of the band"},
    {
        "name": "options",
        "in": "query",
        "style": "form",
        "explode": True,
        "schema": {"type": "object", "additionalProperties": {"type": "string"}},
        "description": "any other parameter is passed to the protocol's estimate(), e.g. postprocess=norm-sub; "
        "values are read as JSON when they parse, else as strings",
    },
)


@documented("The current estimate with its confidence band, n and rejected counts", security="admin",
            query=_ESTIMATE_QUERY, answers={200: json_answer(ref("Estimate")),
                                            304: {"description": "Unchanged: If-None-Match named the current ETag"}},
            errors=(400, 401, 404))
async def estimate(request: Request) -> Response:
    service = as_admin(request)
    body, tag = await service.estimates.shared(request.path_params["campaign"], dict(request.query_params),
                                               ", ".join(request.headers.getlist("if-none-match")))
    etag = f'"{tag}"'
    if body is None:  # the document the asker holds: not sent again
        return Response(status_code=304, headers={"etag": etag})
    if len(body) <= _WHOLE_BODY:
        return Response(body, media_type="application/json", headers={"etag": etag})
    return StreamingResponse(_parts(body), media_type="application/json", headers={"content-length": str(len(body)), "etag": etag})


#: an estimate's body sent whole up to this size, else in parts of it: each part is copied into the connection's buffer
#: as it drains (a 321 MB body sent whole was copied there at once, for each request)
_WHOLE_BODY = 2**20


async def _parts(body: bytes):
    view = memoryview(body)
    for start in range(0, len(body), _WHOLE_BODY):
        yield bytes(view[start : start + _WHOLE_BODY])


@documented("The current estimate as a PNG plot", security="admin", query=_ESTIMATE_QUERY,
            answers={200: content_answer("image/png", "PNG")}, errors=(400, 401, 404, 409))
async def estimate_plot(request: Request) -> Response:
    service = as_admin(request)
    png = await run_in_threadpool(service.estimates.png, request.path_params["campaign"], dict(request.query_params))
    return Response(png, media_type="image/png")


@documented("Accepted reports over time (cumulative, at most ~200 points; kept per minute as reports arrive)", security="admin",
            answers={200: json_answer(ref("History"))}, errors=(401, 404))
async def history(request: Request) -> JSONResponse:
    service = as_admin(request)
    points = await run_in_threadpool(service.store.history, request.path_params["campaign"])
    return JSONResponse({"campaign": request.path_params["campaign"], "history": points})


@documented("Export the kept raw reports as dpdist binary records (one file id per campaign)", security="admin",
            answers={200: content_answer("application/octet-stream", "records")}, errors=(401, 404, 409))
async def export(request: Request) -> StreamingResponse:
    service = as_admin(request)
    campaign = await run_in_threadpool(service.store.row, request.path_params["campaign"])
    if not campaign.keep_reports:
        raise Conflict("reports_not_kept", f"Campaign {campaign.id!r} keeps no raw reports (create it with keep_reports).")
    return StreamingResponse(_records(service.store, campaign), media_type="application/octet-stream")


def _records(store, campaign):
    """The kept reports as dpdist binary records, all carrying the campaign's export file id."""
    protocol = campaign.protocol
    layout = protocol.report_format
    for n, payload in store.iter_reports(campaign.id):
        reports = np.frombuffer(payload, dtype=layout.dtype).reshape((n, *layout.row_shape))
        yield encode_record(protocol, reports, campaign.export_file_id)


ROUTES = [
    Route("/api/campaigns/{campaign}/estimate", estimate, methods=["GET"]),
    Route("/api/campaigns/{campaign}/estimate.png", estimate_plot, methods=["GET"]),
    Route("/api/campaigns/{campaign}/history", history, methods=["GET"]),
    Route("/api/campaigns/{campaign}/reports", export, methods=["GET"]),
]
