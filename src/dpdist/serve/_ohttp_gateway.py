"""``dpdist serve`` as an Oblivious HTTP gateway (RFC 9458): devices' requests through any standard OHTTP relay.

Routes
------
``GET /ohttp/keys``
    The gateway's key configurations, ``application/ohttp-keys`` (RFC 9458 section 3), newest first
    (:mod:`._ohttp_keys`); the same bytes as the ``"ohttp"`` of every direct campaign's public config.
``POST /ohttp/gateway``
    An encapsulated request (``message/ohttp-req``, or ``message/ohttp-chunked-req``: the draft's chunked
    requests and ohttpy's) from a relay.  Its Binary HTTP request is served exactly as if it had come on its
    own, with the relay's address as the client's (the gateway never sees a device's): a batch by the batch
    route's core, the function the direct fast path calls (:func:`._fast_batches.batch_answer`: limits,
    admission, group commit, refusals, a batch counted once by its batch id, so a relay that replays a request
    gets the same acknowledgement and counts nothing twice), not as a second request; a campaign's config or
    identity by the application, marked :data:`._logs.THROUGH_GATEWAY`.  The gateway request is the one request
    an operator sees: one request id (the inner answer's ``X-Request-ID`` too), one access line naming the
    inner method, path and status (address ``ohttp``; :data:`._logs.INNER`), response metrics under
    ``/ohttp/gateway`` only; the ingest and refusal metrics of an inner batch are a direct batch's.  The answer is the inner response, zero-padded to a power of two of at least 1024 bytes (RFC 9292
    section 3.8), encapsulated: ``message/ohttp-res`` (or ``message/ohttp-chunked-res``), status 200, ``Cache-Control: no-store``; to ohttpy's dialect
    (:data:`dpdist.relay._ohttp.OHTTPY_DIALECT`) the inner status and fields go on the outer answer and only the
    content is encapsulated, as that dialect's servers answer (its relay then sees the status and fields); a request of
    dpdist's clients that opens in that dialect (relabelled on the way) is refused unserved, 400
    ``ohttp_dialect_mismatch``.  Only a device's requests pass:
    a batch (``PUT``/``POST /api/campaigns/{c}/batches[/{id}]``), a campaign's config or identity (``GET``);
    any other inner request is answered (encapsulated) 404 ``not_through_gateway``.
``GET /api/ohttp/keys``, ``POST /api/ohttp/keys``, ``DELETE /api/ohttp/keys/{key_id}`` (admin)
    The ring with retired keys; rotate (a new key id, never a listed one's, earlier keys still accepted); retire a key
    (``?forget=true``: remove a retired key from the ring, its id free again).

Refused before anything is served (plain HTTP answers, which the relay passes on): 415 another content
type; 400 ``application/problem+json`` of type ``https://iana.org/assignments/http-problem-types#ohttp-key``
for a key id or suite the gateway does not hold (RFC 9458 section 5.3: fetch the key configuration again), counted in
``dpdist_requests_refused_total{reason="ohttp_key"}``;
400 ``not_decapsulated`` for bytes that do not open; 400 ``too_many_chunks`` for a chunked request past :func:`max_chunks`.  A Binary HTTP request that opens but breaks RFC 9292
is answered with an encapsulated 400 ``malformed_binary_http``.
"""

from __future__ import annotations

import json
import re
from urllib.parse import unquote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .._guard._body import HeldBody, content_coding_of
from ..errors import MalformedReportError
from ..relay import _bhttp, _ohttp
from ._fast_batches import batch_answer
from ._http import bearer, bearer_token, body_of
from ._limits import MAX_HEADER_BYTES
from ._logs import INNER, REQUEST_ID, THROUGH_GATEWAY, Inner, headers_credentials
from ._middleware import request_id_of, security_headers
from ._ohttp_keys import GATEWAY_PATH, gateway_keys, public_fields
from ._openapi import documented, json_answer
from ._refusals import InvalidRequest, UnsupportedMediaType
from ._routes.batches import Incoming, submit_batch, submit_records

__all__ = ["ROUTES", "GATEWAY_PATH", "KEYS_PATH", "gateway_keys", "public_fields"]

KEYS_PATH = "/ohttp/keys"
#: the smallest padded inner answer (bytes): acknowledgements, refusals and a campaign's config all pad to it
MIN_PADDED_BYTES = 1024
#: a chunked request's chunks average at least this many bytes, or it is refused (:func:`max_chunks`)
MIN_AVERAGE_CHUNK_BYTES = 4096
PROBLEM_TYPE = "https://iana.org/assignments/http-problem-types#ohttp-key"
#: the inner requests a device sends: a batch, a campaign's config or identity
_DEVICE_ROUTES = (("PUT", re.compile(r"/api/campaigns/[^/]+/batches/[^/]+")),
                  ("POST", re.compile(r"/api/campaigns/[^/]+/batches(/[^/]+)?")),
                  ("GET", re.compile(r"/api/campaigns/[^/]+/(config|identity)")))
#: fields about a connection (RFC 9110 section 7.6.1), not about the inner request: dropped both ways
_NO_STORE = {"cache-control": "no-store"}
#: the request headers a batch's core reads (the first of each)
_BATCH_HEADERS = frozenset({b"authorization", b"content-type"})
_HOP_BY_HOP = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"te", b"upgrade",
                         b"trailer", b"host", b"content-length"})


@documented("The Oblivious HTTP gateway's key configurations (application/ohttp-keys, RFC 9458 section 3)",
            answers={200: {"description": "application/ohttp-keys", "content": {_ohttp.KEYS_CONTENT_TYPE: {}}}})
async def keys(request: Request) -> Response:
    document = await run_in_threadpool(gateway_keys(request.app).document)
    return Response(document, media_type=_ohttp.KEYS_CONTENT_TYPE, headers={"cache-control": "public, max-age=60"})


@documented("An Oblivious HTTP request from a relay: a device's request encapsulated (RFC 9458), served as if direct",
            body={"required": True, "content": {_ohttp.REQUEST_CONTENT_TYPE: {}, _ohttp.CHUNKED_REQUEST_CONTENT_TYPE: {}}},
            answers={200: {"description": "the encapsulated response", "content": {_ohttp.RESPONSE_CONTENT_TYPE: {}}}},
            errors=(400, 408, 413, 415, 503))
async def gateway(request: Request) -> Response:
    headers = request.headers
    return await serve_encapsulated(request.app, request.scope, request.receive, headers.get("content-type", ""),
                                    headers.get("content-length"), headers.get("host", "").encode("latin-1"),
                                    content_coding_of(request.scope["headers"]))


async def serve_encapsulated(app, scope, receive, content_type: str, content_length: str | None, host: bytes,
                             coding: str | None = None) -> Response:
    """The answer to ``POST /ohttp/gateway`` (module docstring), whatever read the request (Starlette's route, or
    :mod:`._fast_ohttp`): ``app`` the application, ``scope`` and ``receive`` the request's, ``content_type``,
    ``content_length`` (None without one), ``host`` and ``coding`` (its ``Content-Encoding``, every line of it; None
    without one) its headers'.  Refusals are raised (:class:`._refusals.Refusal`)."""
    content_type = content_type.split(";")[0].strip().lower()
    if content_type not in (_ohttp.REQUEST_CONTENT_TYPE, _ohttp.CHUNKED_REQUEST_CONTENT_TYPE):
        raise UnsupportedMediaType("not_ohttp", f"The gateway takes {_ohttp.REQUEST_CONTENT_TYPE} or "
                                                f"{_ohttp.CHUNKED_REQUEST_CONTENT_TYPE}. Got {content_type!r:.80}.")
    ring, service, client = gateway_keys(app), app.state.service, scope.get("client")
    async with body_of(service, content_length, receive, host=client[0] if client else None, anonymous=True,
                       coding=coding) as body:
        key_id = body[0] if body else None
        private_keys = ring.cached_private_keys(key_id)
        if not private_keys:  # none read lately, or not this key id: read the ring off the event loop
            private_keys = await run_in_threadpool(ring.private_keys, key_id)
        try:
            opened = _ohttp.decapsulate_request(private_keys, body, chunked=content_type != _ohttp.REQUEST_CONTENT_TYPE,
                                                max_chunks=max_chunks(service.max_body_bytes))
        except _ohttp.KeyConfigMismatch as mismatch:  # counted as every refusal is
            metrics = getattr(app.state, "metrics", None)
            if metrics is not None:
                metrics.refused_request("ohttp_key")
            return JSONResponse({"type": PROBLEM_TYPE, "title": "key identifier unknown", "detail": str(mismatch)},
                                status_code=400, media_type="application/problem+json")
        except _ohttp.TooManyChunks as error:  # one AES-GCM open per chunk, on the event loop
            raise InvalidRequest("too_many_chunks", str(error)) from None
        except MalformedReportError as error:
            raise InvalidRequest("not_decapsulated", str(error)) from None
    status, headers, content = await _serve_inner(app, scope, host, opened.message, opened.dialect)
    if opened.dialect == _ohttp.OHTTPY_DIALECT:  # its design: status and fields on the outer answer, the content sealed
        fields = {name.decode("latin-1"): value.decode("latin-1") for name, value in headers}
        return Response(opened.respond(content), status_code=status, headers={**fields, "cache-control": "no-store"})
    answer = opened.respond(_padded(_bhttp.encode_response(_bhttp.Response(status, headers, content))))
    return Response(answer, media_type=opened.response_content_type, headers=_NO_STORE)


def max_chunks(max_body_bytes: int) -> int:
    """The most chunks a chunked request to the gateway may hold (the final one included): 4096, or one per
    :data:`MIN_AVERAGE_CHUNK_BYTES` of ``max_body_bytes`` (``--max-body-bytes``) when that is more, so a body of
    chunks averaging 4 KiB always passes and the work per request stays near a direct request's."""
    return max(_ohttp.MAX_CHUNKS, -(-max_body_bytes // MIN_AVERAGE_CHUNK_BYTES))


def _padded(message: bytes) -> bytes:
    """A Binary HTTP answer zero-padded (RFC 9292 section 3.8) to the next power of two of its length, at least
    :data:`MIN_PADDED_BYTES`: an acknowledgement's ``"duplicate": false`` and ``true`` (a replay's) are one length to
    the relay, as are the refusals of one batch."""
    target = max(MIN_PADDED_BYTES, 1 << (len(message) - 1).bit_length())
    return message + bytes(target - len(message))


async def _serve_inner(app, outer: dict, host: bytes, message: bytes, dialect: str | None) -> tuple[int, _bhttp.Fields, bytes]:
    """The inner request served (module docstring; ``outer``: the outer request's scope, ``host`` its Host header's
    value): its status, fields and content; what it was is noted in ``outer`` (:data:`._logs.INNER`) for the one access
    line.  A request of dpdist's clients (:data:`~dpdist.relay._ohttp.WHOLE_ANSWER_FIELD`) opened in ohttpy's dialect
    (a relay relabelled it chunked) is refused unserved: its answer would go in the clear (``ohttp_dialect_mismatch``)."""
    service = app.state.service
    try:
        inner = _bhttp.decode_request(message, max_bytes=service.max_body_bytes)
    except MalformedReportError as error:
        return _counted_refusal(app, outer, 400, "malformed_binary_http", str(error))
    if _head_bytes(inner) > MAX_HEADER_BYTES:  # a direct request's head is refused past 16 KiB
        return _counted_refusal(app, outer, 400, "head_too_large", f"The inner request's control data and header fields (or "
                                f"its trailer fields) hold more than {MAX_HEADER_BYTES} bytes, as a direct request's may not.")
    name, value = _ohttp.WHOLE_ANSWER_FIELD
    if dialect == _ohttp.OHTTPY_DIALECT and inner.header(name.decode()) == value.decode():
        raise InvalidRequest("ohttp_dialect_mismatch", f"The request is RFC 9458's ({_ohttp.REQUEST_CONTENT_TYPE}) and "
                             f"asks for its whole answer encapsulated, but came as {_ohttp.CHUNKED_REQUEST_CONTENT_TYPE} "
                             "(relabelled on the way): not served.")
    path, _, query = inner.path.partition("?")
    if not any(inner.method == method and pattern.fullmatch(path) for method, pattern in _DEVICE_ROUTES):
        return _counted_refusal(app, outer, 404, "not_through_gateway", f"The gateway serves a device's requests only (a "
                                f"batch, a campaign's config or identity). Got {inner.method} {path[:200]}.")
    unquoted = unquote(path)
    batch = None if query else _batch_route(app, inner.method, unquoted, inner.headers)
    if batch is not None:
        route, params = batch
        status, fields, content = await _batch(app, outer, inner, params)
    else:
        scope = _inner_scope(outer, inner, host, path, query)
        status, fields, content = await _through_application(app, scope, inner.content)
        route = scope.get("route")
    outer[INNER] = Inner(inner.method, unquoted, getattr(route, "path", "unmatched"), status, headers_credentials(inner.headers))
    return status, fields, content


def _inner_scope(outer: dict, inner: _bhttp.Request, host: bytes, path: str, query: str) -> dict:
    """The ASGI scope of an inner request (``path`` and ``query`` its path's parts) the application serves, with the
    client and server of the ``outer`` request's scope, ``host`` the outer Host header's value."""
    headers = [(name, value) for name, value in inner.headers if name not in _HOP_BY_HOP]
    headers += [(b"host", inner.authority.encode("ascii") or host), (b"content-length", str(len(inner.content)).encode())]
    return {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
            "method": inner.method, "scheme": inner.scheme, "path": unquote(path), "raw_path": path.encode("ascii"),
            "query_string": query.encode("ascii"), "root_path": "", "headers": headers,
            "client": outer.get("client"), "server": outer.get("server"), "extensions": {}}


def _batch_route(app, method: str, path: str, headers: _bhttp.Fields):
    """``(route, path parameters)`` when the batch route's core serves an inner request (:func:`_batch`) of ``method``,
    unquoted ``path`` (no query string) and ``headers``: a batch route matches it fully, as Starlette's router would
    (its regular expression, convertors and methods), and no CORS middleware would add to its answer (one sent with
    ``Origin`` while CORS is on) - what the direct fast path takes; else None."""
    setup = getattr(app.state, "ohttp_batch_routes", None)
    if setup is None:  # once per application: the batch routes, whether CORS is on
        routes = [route for route in app.routes if getattr(route, "endpoint", None) in (submit_batch, submit_records)]
        cors = bool(getattr(getattr(app.state, "operations", None), "cors_origins", None))
        setup = app.state.ohttp_batch_routes = (routes if getattr(app.state, "metrics", None) is not None else [], cors)
    routes, cors = setup
    if cors and any(name == b"origin" for name, _ in headers):
        return None
    for route in routes:
        found = route.path_regex.match(path)
        if found is not None and method in route.methods:
            params = found.groupdict()
            for key, value in params.items():
                params[key] = route.param_convertors[key].convert(value)
            return route, params
    return None


async def _batch(app, outer: dict, inner: _bhttp.Request, params: dict) -> tuple[int, _bhttp.Fields, bytes]:
    """A decapsulated batch (``params``: its route's path parameters) served by the batch route's core
    (:func:`._fast_batches.batch_answer`: validation, exactly-once, limits, refusals, the ingest and refusal metrics of
    a direct batch), not as a second request: the answer a direct batch gets, with the security headers and the
    gateway request's id."""
    found: dict[bytes, bytes] = {}
    for name, value in inner.headers:  # the first of each, as Starlette's Headers.get
        if name in _BATCH_HEADERS and name not in found:
            found[name] = value
    coding = content_coding_of(inner.headers)  # every line of it (a second may name a coding)
    client, content = outer.get("client"), inner.content
    incoming = Incoming(params["campaign"], params.get("batch_id"), bearer_token(found.get(b"authorization", b"").decode("latin-1")),
                        client[0] if client else None, found.get(b"content-type", b"").decode("latin-1"), str(len(content)),
                        HeldBody(content), coding)
    status, body, headers = await batch_answer(app.state.service, app.state.metrics, incoming)
    headers += [*security_headers({"scheme": inner.scheme}), (b"x-request-id", (REQUEST_ID.get() or request_id_of(b"")).encode())]
    return status or 500, tuple((name, value) for name, value in headers if name not in _HOP_BY_HOP), body


async def _through_application(app, scope: dict, content: bytes) -> tuple[int, _bhttp.Fields, bytes]:
    """Any other inner request (a campaign's config or identity, a batch the core does not take) served by ``app``,
    marked :data:`._logs.THROUGH_GATEWAY`: the gateway request's id, no access line or response metrics of its own."""
    answer: dict = {"status": 500, "headers": [], "body": []}

    async def send(message):
        if message["type"] == "http.response.start":
            answer["status"], answer["headers"] = message["status"], message.get("headers", [])
        elif message["type"] == "http.response.body":
            answer["body"].append(message.get("body", b""))

    scope[THROUGH_GATEWAY] = True
    request_id = REQUEST_ID.get()
    try:
        await app(scope, HeldBody(content), send)
    finally:  # no layer sets an inner request's id; kept the outer's whatever runs
        REQUEST_ID.set(request_id)
    fields = tuple((bytes(name).lower(), bytes(value)) for name, value in answer["headers"]
                   if bytes(name).lower() not in _HOP_BY_HOP)
    return answer["status"], fields, b"".join(answer["body"])


def service_of(request: Request):
    return request.app.state.service


def as_admin(request: Request):
    """The service, once the request carries the admin token (else 401), as :func:`._routes._common.as_admin`."""
    service = request.app.state.service
    service.check_admin(bearer(request))
    return service


def _head_bytes(inner: _bhttp.Request) -> int:
    """The bytes of an inner request's head (control data and header fields) or of its trailer fields, the larger."""
    fields = (len(inner.method) + len(inner.scheme) + len(inner.authority) + len(inner.path)
              + sum(len(name) + len(value) for name, value in inner.headers))
    return max(fields, sum(len(name) + len(value) for name, value in inner.trailers))


def _counted_refusal(app, outer: dict, status: int, code: str, detail: str) -> tuple[int, _bhttp.Fields, bytes]:
    """A refusal the gateway itself makes of an inner request, counted in ``dpdist_requests_refused_total`` as every
    refusal is (it was not before); the access line names the gateway's route with its status."""
    metrics = getattr(app.state, "metrics", None)
    if metrics is not None:
        metrics.refused_request(code)
    outer[INNER] = Inner(outer.get("method", "POST"), GATEWAY_PATH, GATEWAY_PATH, status)
    return _json_answer(outer, status, code, detail)


def _json_answer(outer: dict, status: int, code: str, detail: str) -> tuple[int, _bhttp.Fields, bytes]:
    """A refusal's encapsulated answer, with the security headers and the gateway request's id as every other
    encapsulated answer (it had neither before)."""
    body = json.dumps({"error": code, "detail": detail}, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), *security_headers(outer),
               (b"x-request-id", (REQUEST_ID.get() or request_id_of(b"")).encode())]
    return status, tuple(headers), body


# ---------------------------------------------------------------------- the key ring (admin)
@documented("The gateway's key ring, retired keys included", security="admin", errors=(401,),
            answers={200: json_answer({"type": "object", "properties": {"keys": {"type": "array"}}})})
async def list_keys(request: Request) -> JSONResponse:
    as_admin(request)
    return JSONResponse({"keys": await run_in_threadpool(gateway_keys(request.app).listing)})


@documented("Rotate the gateway's key: a new key id, the earlier keys still accepted until retired", security="admin",
            answers={201: json_answer({"type": "object"})}, errors=(401, 409))
async def rotate_key(request: Request) -> JSONResponse:
    as_admin(request)
    return JSONResponse(await run_in_threadpool(gateway_keys(request.app).rotate), status_code=201)


@documented("Retire a key of the gateway (not its last); ?forget=true: remove a retired key, its id free again", security="admin", answers={200: json_answer({"type": "object"})},
            errors=(400, 401, 404, 409))
async def retire_key(request: Request) -> JSONResponse:
    as_admin(request)
    forget = request.query_params.get("forget", "").lower() in ("1", "true")  # a retired key: remove it, its id free
    return JSONResponse(await run_in_threadpool(lambda: gateway_keys(request.app).retire(request.path_params["key_id"],
                                                                                         forget=forget)))


ROUTES = [
    Route(GATEWAY_PATH, gateway, methods=["POST"]),
    Route(KEYS_PATH, keys, methods=["GET"]),
    Route("/api/ohttp/keys", list_keys, methods=["GET"]),
    Route("/api/ohttp/keys", rotate_key, methods=["POST"]),
    Route("/api/ohttp/keys/{key_id}", retire_key, methods=["DELETE"]),
]
