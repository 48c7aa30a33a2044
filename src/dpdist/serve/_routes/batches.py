"""``/api/campaigns/{campaign}/batches``: devices submit batches of reports, each counted exactly once.

Nothing of a body is read before its client, campaign and token pass (a refusal
then closes the connection); the body is read within the limits of
:mod:`.._limits`, and the acknowledgement goes out only after the batch is durable.

:func:`answer_batch` is the one way a batch is answered, whatever carried it: the devices' route served in one layer
(:mod:`.._fast_batches`), this module's Starlette endpoints (with CORS, a query string or a ``root_path``), and a batch
inside an Oblivious HTTP request (:mod:`.._ohttp_gateway`).
"""

from __future__ import annotations

import json

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..._guard._body import NO_RESPONSE, body_ready
from ..._guard._rate import address_key
from .._database import DatabaseUnavailableError
from .._http import Answer, bearer, bearer_token, body_of, read_body, refused_answer, render_json
from .._openapi import documented, json_answer, ref
from .._relayed import smallest_group
from ..._guard._refusals import Conflict, Refusal
from ._common import service_of

__all__ = ["ROUTES", "BATCH_HEADERS", "answer_batch", "accept", "first_headers", "render_ack"]

_BATCH_ERRORS = (400, 401, 403, 404, 408, 409, 413, 415, 429, 503)
_BATCH_BODY = {
    "required": True,
    "content": {
        "application/octet-stream": {
            "schema": {"type": "string", "format": "binary"},
            "description": "one or more dpdist binary report records (docs/how-to/run-a-campaign.md, 'Binary records')",
        },
        "application/json": {"schema": ref("JsonBatch")},
    },
}
_RELAYED_BODY = {"required": True, "content": {"application/vnd.dpdist.relayed-batch": {
    "schema": {"type": "string", "format": "binary", "description": "sealed messages, each after its 4-byte length"}}}}
_RECORDS_BODY = {"required": True, "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}
#: the request headers a batch reads: the first of each, every line of ``Content-Encoding`` (:func:`first_headers`)
BATCH_HEADERS = frozenset({b"authorization", b"content-type", b"content-length", b"content-encoding"})
_JSON = (b"content-type", b"application/json")
#: a JSON string as ``JSONResponse``'s encoder writes it (``ensure_ascii=False``)
_STRING = json.encoder.encode_basestring
#: the keys of an acknowledgement (:func:`.._group.acknowledgement`), in order
_ACK_KEYS = ("campaign", "batch_id", "n_read", "accepted", "rejected", "duplicate")


def first_headers(headers, wanted: frozenset) -> dict[bytes, bytes]:
    """The ``wanted`` headers of raw ASGI or Binary HTTP ``headers`` (``(name, value)`` bytes, names in lower case): the
    first of each, as Starlette's ``Headers.get``, but every line of ``Content-Encoding`` joined with commas (a second
    line may name a coding the first does not, :func:`~..._guard._body.content_coding_of`)."""
    found: dict[bytes, bytes] = {}
    for name, value in headers:
        if name in wanted:
            if name not in found:
                found[name] = value
            elif name == b"content-encoding":
                found[name] += b"," + value
    return found


async def answer_batch(service, metrics, campaign_id: str, batch_id: str | None, headers: dict[bytes, bytes],
                       host: str | None, receive) -> tuple[int | None, bytes, list]:
    """The answer to one batch (its ``headers``: :func:`first_headers` of :data:`BATCH_HEADERS`; ``host``: its client's
    address; ``receive``: its body's ASGI ``receive``), whatever carried it (the module): :func:`accept`, its
    acknowledgement or refusal counted in ``metrics``; the status, body and headers of the answer as the application
    renders them, but the security headers and the request id; status None for a client gone mid-body (a refusal,
    nothing to answer)."""
    authorization, length, coding = headers.get(b"authorization"), headers.get(b"content-length"), headers.get(b"content-encoding")
    try:
        ack = await accept(service, campaign_id, batch_id,
                           bearer_token(authorization.decode("latin-1")) if authorization is not None else "",
                           host, headers.get(b"content-type", b"").decode("latin-1"),
                           length.decode("latin-1") if length is not None else None, receive,
                           coding.decode("latin-1") if coding is not None else None)
    except (Refusal, DatabaseUnavailableError) as error:
        return refused_answer(metrics, error)
    metrics.acknowledged(ack)
    body = render_ack(ack)
    return 200, body, [(b"content-length", str(len(body)).encode()), _JSON]


def render_ack(ack: dict) -> bytes:
    """The body ``JSONResponse`` renders for the acknowledgement ``ack``, byte for byte, without the encoder's
    walk of the dict for the usual one (its two strings escaped by the encoder's own function, nothing rejected)."""
    if tuple(ack) != _ACK_KEYS:
        return render_json(ack)
    campaign, batch_id, n_read, accepted, rejected, duplicate = ack.values()  # in the order of _ACK_KEYS
    if (rejected or type(campaign) is not str or type(batch_id) is not str or type(n_read) is not int
            or type(accepted) is not int or type(duplicate) is not bool):
        return render_json(ack)
    return (f'{{"campaign":{_STRING(campaign)},"batch_id":{_STRING(batch_id)},"n_read":{n_read},"accepted":{accepted},'
            f'"rejected":{{}},"duplicate":{"true" if duplicate else "false"}}}').encode("utf-8")


async def accept(service, campaign_id: str, batch_id: str | None, token: str, host: str | None, content_type: str,
                 content_length: str | None, receive, content_encoding: str | None = None) -> dict:
    """Admit, read, decode and count one batch; its acknowledgement once durable (or the :class:`Refusal` raised).

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
    # a campaign that takes no token has its bodies held in the anonymous half of the body memory (docs/reference/service-limits.md, "Limits")
    anonymous = campaign.submit_token_sha256 is None and not campaign.enrollment
    async with body_of(service, content_length, receive, campaign_id, batch_id, host=host, anonymous=anonymous,
                       coding=content_encoding) as body:
        return await service.submit(campaign, batch_id, body, content_type, token)


async def _submit(request: Request, batch_id: str | None) -> Answer:
    scope, client = request.scope, request.scope.get("client")
    status, body, headers = await answer_batch(service_of(request), request.app.state.metrics, scope["path_params"]["campaign"],
                                               batch_id, first_headers(scope["headers"], BATCH_HEADERS),
                                               client[0] if client else None, request.receive)
    if status is None:  # the client went away mid-body: a refusal, no response (what follows is not counted as one)
        scope[NO_RESPONSE] = True
        return Answer(400, b"", [])
    return Answer(status, body, headers)


@documented("Submit a batch of reports under a client-chosen batch id (idempotent; PUT or POST)", security="submit",
            body=_BATCH_BODY, answers={200: json_answer(ref("Ack"), "durably counted (or already counted: duplicate)")},
            errors=_BATCH_ERRORS)
async def submit_batch(request: Request) -> Answer:
    return await _submit(request, request.path_params["batch_id"])


@documented("Submit binary records whose file id is the batch id", security="submit", body=_RECORDS_BODY,
            answers={200: json_answer(ref("Ack"))}, errors=_BATCH_ERRORS)
async def submit_records(request: Request) -> Answer:
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
            batch, tokens, groups, reports = None, [], {}, []  # not open: a redelivery of an acknowledged batch still gets its ack
            if campaign.state == "open":
                batch, tokens, groups, reports = await service.counted(campaign_id, service.relayed.opened, campaign, key, batch_id,
                                                              body, service.limits, inline=False, batch_id=batch_id)
            ack = await service.count(campaign, batch_id, digest, batch, received_ms=arrival, tokens=tokens,
                                      smallest_group=smallest_group(groups), reports=reports)
    metrics = getattr(request.app.state, "metrics", None)
    if metrics is not None:
        metrics.acknowledged(ack)
        if not ack.get("duplicate"):
            metrics.relayed(groups)
    return JSONResponse(ack, status_code=200)


ROUTES = [
    Route("/api/campaigns/{campaign}/batches", submit_records, methods=["POST"]),
    Route("/api/campaigns/{campaign}/batches/{batch_id}", submit_batch, methods=["PUT", "POST"]),
    Route("/api/campaigns/{campaign}/relayed/{batch_id}", relayed_batch, methods=["PUT"]),
]
