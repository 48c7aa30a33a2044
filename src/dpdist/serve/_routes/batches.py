"""``/api/campaigns/{campaign}/batches``: devices submit batches of reports, each counted exactly once.

Nothing of a body is read before its client, campaign and token pass (a refusal
then closes the connection); the body is read within the limits of
:mod:`.._limits`, and the acknowledgement goes out only after the batch is durable.
"""

from __future__ import annotations

from typing import Any, Awaitable, NamedTuple

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..._guard._body import body_ready, content_coding_of
from ..._guard._rate import address_key
from .._http import bearer, body_of, read_body
from .._openapi import documented, json_answer, ref
from .._refusals import Conflict, Refusal
from ._common import service_of

__all__ = ["ROUTES", "Incoming", "accept_batch", "accept"]

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


def accept_batch(service, incoming: Incoming) -> Awaitable[dict]:
    """Admit, read, decode and count one batch; its acknowledgement once durable (or the :class:`Refusal` raised):
    :func:`accept` of what ``incoming`` carries (the awaitable of that coroutine, not one wrapping it)."""
    return accept(service, *incoming)


async def accept(service, campaign_id: str, batch_id: str | None, token: str, host: str | None, content_type: str,
                 content_length: str | None, receive, content_encoding: str | None = None) -> dict:
    """Admit, read, decode and count one batch (the fields of :class:`Incoming`); its acknowledgement once durable (or
    the :class:`Refusal` raised).

    The usual batch - its open campaign's settings cached, no enrollment, no cap, its token good, no content coding,
    its whole body held already by the server (a small body comes with its head), of a kind the committer decodes - goes
    one flat way: no coroutine but this one, the body's ``receive`` and the group commit's, no context manager, the
    body held against the budget as :class:`~..._guard._body.receive_body` holds it.  Any other goes the general way
    (:func:`_general`) from where it stops being the usual one, before anything of it was taken: the same checks in the
    same order, the same answers.
    """
    service.address_share.saw(host)  # one address sending most batches: said once in the log
    service.rate.check(host, "batches")
    service.take_slot()  # 503 busy at once past the capacity (before the body); freed in the finally
    served = False
    try:
        campaign = service.admitted(campaign_id, token)  # the usual batch: admitted without a coroutine
        declared = None  # the usual body's Content-Length (no coding; held whole already)
        if (campaign is not None and content_encoding is None and content_length is not None and content_length.isascii()
                and content_length.isdigit() and body_ready(receive)):
            declared = int(content_length)
        if campaign is None or declared is None or declared > service.max_body_bytes:
            ack = await _general(service, campaign, campaign_id, batch_id, token, host, content_type, content_length,
                                 receive, content_encoding)
            served = True
            return ack
        # a campaign that takes no token has its bodies held in the anonymous half of the body memory
        budget, key, anonymous = service.budget, address_key(host), campaign.submit_token_sha256 is None
        message = await receive()  # at once: held already
        body = message.get("body", b"") if message["type"] == "http.request" and not message.get("more_body", False) else None
        if body is not None and len(body) == declared:  # whole, as declared: held, or refused as its length is
            reader = None
            if body and (refused := budget.hold(declared, key, anonymous)) is not None:
                raise refused
        else:  # anything else: refused as its declared length is, else read within the body's bounds from this message
            refused = budget.refusal_of(declared, key, anonymous)
            if refused is not None:
                raise refused
            reader = body_of(service, content_length, receive, campaign_id, batch_id, host=host, anonymous=anonymous)
            body = await reader.rest(message)
        try:
            arrival = service.usual_arrival(campaign, batch_id, body, content_type)
            if arrival is None:
                ack = await service.submit(campaign, batch_id, body, content_type, token)
            else:
                try:
                    ack = await service.committer.commit(arrival)
                except Conflict as refusal:
                    ack = await service.conflicted(refusal, campaign, batch_id, body, content_type, token)
        finally:
            if reader is None:
                budget.release(len(body), key, anonymous)
            else:
                reader.give_back()
        served = True
        return ack
    finally:
        service.free_slot(served)


async def _general(service, campaign, campaign_id: str, batch_id: str | None, token: str, host: str | None,
                   content_type: str, content_length: str | None, receive, content_encoding: str | None) -> dict:
    """A batch that is not the usual one (:func:`accept`), from its admission on (``campaign``: admitted already
    without a coroutine, or None)."""
    if campaign is None:
        try:  # nothing of the body is read before the client, its campaign and its token pass
            campaign = await service.admit(campaign_id, batch_id, token)
        except Refusal as refusal:
            refusal.close = True
            raise
    # a campaign that takes no token has its bodies held in the anonymous half of the body memory (docs/deployment.md, "Limits")
    anonymous = campaign.submit_token_sha256 is None and not campaign.enrollment
    async with body_of(service, content_length, receive, campaign_id, batch_id, host=host, anonymous=anonymous,
                       coding=content_encoding) as body:
        return await service.submit(campaign, batch_id, body, content_type, token)


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
