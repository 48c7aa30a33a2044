"""``/api/campaigns/{campaign}/batches``: devices submit batches of reports, each counted exactly once.

Nothing of a body is read before its client, campaign and token pass (a refusal
then closes the connection); the body is read within the limits of
:mod:`.._limits`, and the acknowledgement goes out only after the batch is durable.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from .._http import bearer, read_body
from .._openapi import documented, json_answer, ref
from .._refusals import Refusal
from ._common import service_of

__all__ = ["ROUTES"]

_BATCH_ERRORS = (400, 401, 403, 404, 408, 409, 413, 415, 429, 503)
_BATCH_BODY = {
    "required": True,
    "content": {
        "application/octet-stream": {
            "schema": {"type": "string", "format": "binary"},
            "description": "one or more dpdist binary report records (docs/deployment.md, 'Binary records')",
        },
        "application/json": {"schema": ref("JsonBatch")},
    },
}
_RECORDS_BODY = {"required": True, "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}


async def _submit(request: Request, batch_id: str | None) -> JSONResponse:
    service, campaign_id, token = service_of(request), request.path_params["campaign"], bearer(request)
    service.rate.check(request.client.host if request.client else None)
    with service.slot():
        try:  # nothing of the body is read before the client, its campaign and its token pass
            campaign = await service.admit(campaign_id, batch_id, token)
        except Refusal as refusal:
            refusal.close = True
            raise
        async with read_body(request, campaign_id) as body:
            ack = await service.submit(campaign, batch_id, body, request.headers.get("content-type", ""), token)
    metrics = getattr(request.app.state, "metrics", None)
    if metrics is not None:
        metrics.acknowledged(ack)
    return JSONResponse(ack, status_code=200)


@documented("Submit a batch of reports under a client-chosen batch id (idempotent; PUT or POST)", security="submit",
            body=_BATCH_BODY, answers={200: json_answer(ref("Ack"), "durably counted (or already counted: duplicate)")},
            errors=_BATCH_ERRORS)
async def submit_batch(request: Request) -> JSONResponse:
    return await _submit(request, request.path_params["batch_id"])


@documented("Submit binary records whose file id is the batch id", security="submit", body=_RECORDS_BODY,
            answers={200: json_answer(ref("Ack"))}, errors=_BATCH_ERRORS)
async def submit_records(request: Request) -> JSONResponse:
    return await _submit(request, None)


ROUTES = [
    Route("/api/campaigns/{campaign}/batches", submit_records, methods=["POST"]),
    Route("/api/campaigns/{campaign}/batches/{batch_id}", submit_batch, methods=["PUT", "POST"]),
]
