"""``/api/campaigns/{campaign}/batches``: devices submit batches of reports, each counted exactly once.

Nothing of a body is read before its client, campaign and token pass (a refusal
then closes the connection); the body is read within the limits of
:mod:`.._limits`, and the acknowledgement goes out only after the batch is durable.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..._guard._body import content_coding_of
from .._http import bearer, body_of, read_body
from .._openapi import documented, json_answer, ref
from .._refusals import Refusal
from ._common import service_of

__all__ = ["ROUTES", "Incoming", "accept_batch"]

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
_RELAYED_BODY = {"required": True, "content": {"application/vnd.dpdist.relayed-batch": {
    "schema": {"type": "string", "format": "binary", "description": "sealed messages, each after its 4-byte length"}}}}
_RECORDS_BODY = {"required": True, "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}


class Incoming(NamedTuple):
    """What a batch's request carries, whatever read it (Starlette's :class:`Request`, or :mod:`.._fast_batches`)."""

    campaign_id: str
    batch_id: str | None  # None: POSTed without one, named by its records' file id
    token: str
    host: str | None
    content_type: str
    content_length: str | None
    receive: Any
    content_encoding: str | None = None  # its Content-Encoding header (a body in a coding is refused: 415)


async def accept_batch(service, incoming: Incoming) -> dict:
    """Admit, read, decode and count one batch; its acknowledgement once durable (or the :class:`Refusal` raised)."""
    service.address_share.saw(incoming.host)  # one address sending most batches: said once in the log
    campaign_id, batch_id, token = incoming.campaign_id, incoming.batch_id, incoming.token
    service.rate.check(incoming.host, "batches")
    with service.slot():
        try:  # nothing of the body is read before the client, its campaign and its token pass
            campaign = service.admitted(campaign_id, token)  # the usual batch: admitted without a coroutine
            if campaign is None:
                campaign = await service.admit(campaign_id, batch_id, token)
        except Refusal as refusal:
            refusal.close = True
            raise
        # a campaign that takes no token has its bodies held in the anonymous half of the body memory (docs/deployment.md, "Limits")
        anonymous = campaign.submit_token_sha256 is None and not campaign.enrollment
        async with body_of(service, incoming.content_length, incoming.receive, campaign_id, batch_id, host=incoming.host,
                           anonymous=anonymous, coding=incoming.content_encoding) as body:
            return await service.submit(campaign, batch_id, body, incoming.content_type, token)


async def _submit(request: Request, batch_id: str | None) -> JSONResponse:
    headers = request.headers
    ack = await accept_batch(service_of(request), Incoming(
        request.path_params["campaign"], batch_id, bearer(request), request.client.host if request.client else None,
        headers.get("content-type", ""), headers.get("content-length"), request.receive, content_coding_of(request.scope["headers"])))
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


@documented("A relay delivers a shuffled batch of HPKE-sealed reports of a relayed campaign (idempotent by batch id)",
            security="relay", body=_RELAYED_BODY,
            answers={200: json_answer(ref("Ack"), "durably counted (or already counted: duplicate)")},
            errors=(400, 401, 404, 408, 409, 413, 503))
async def relayed_batch(request: Request) -> JSONResponse:
    """The relay's delivery (:mod:`.._relayed`): opened here, counted through the same group commits as any batch."""
    service, campaign_id, batch_id = service_of(request), request.path_params["campaign"], request.path_params["batch_id"]
    with service.slot():
        try:  # nothing of the body is read before the campaign and the relay's token pass
            campaign, key = await run_in_threadpool(service.relayed.admit, campaign_id, bearer(request))
        except Refusal as refusal:
            refusal.close = True
            raise
        async with read_body(request, campaign_id, anonymous=False) as body:  # the relay's token was checked
            digest, arrival = service.relayed.digest(body), service.relayed.arrival_ms(campaign)
            batch, tokens, smallest, reports = None, [], None, []  # not open: a redelivery of an acknowledged batch still gets its ack
            if campaign.state == "open":
                batch, tokens, smallest, reports = await service.counted(campaign_id, service.relayed.opened, campaign, key, batch_id,
                                                                body, service.limits, inline=False, batch_id=batch_id)
            ack = await service.count(campaign, batch_id, digest, batch, received_ms=arrival, tokens=tokens,
                                      smallest_group=smallest, reports=reports)
    metrics = getattr(request.app.state, "metrics", None)
    if metrics is not None:
        metrics.acknowledged(ack)
    return JSONResponse(ack, status_code=200)


ROUTES = [
    Route("/api/campaigns/{campaign}/batches", submit_records, methods=["POST"]),
    Route("/api/campaigns/{campaign}/batches/{batch_id}", submit_batch, methods=["PUT", "POST"]),
    Route("/api/campaigns/{campaign}/relayed/{batch_id}", relayed_batch, methods=["PUT"]),
]
