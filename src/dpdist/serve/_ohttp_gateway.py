"""``dpdist serve`` as an Oblivious HTTP gateway (RFC 9458): devices' requests through any standard OHTTP relay.

Routes
------
``GET /ohttp/keys``
    The gateway's key configurations, ``application/ohttp-keys`` (RFC 9458 section 3), newest first
    (:mod:`._ohttp_keys`); the same bytes as the ``"ohttp"`` of every direct campaign's public config.
``POST /ohttp/gateway``
    An encapsulated request (``message/ohttp-req``, or ``message/ohttp-chunked-req``: the draft's chunked
    requests and ohttpy's) from a relay.  Its Binary HTTP request is served exactly as if it had come on its
    own, with the relay's address as the client's (the gateway never sees a device's), by the function that serves it
    when it comes directly, not as a second request through the application: a batch by
    :func:`._routes.batches.answer_batch` (limits, admission, group commit, refusals, a batch counted once by its batch
    id, so a relay that replays a request gets the same acknowledgement and counts nothing twice), a campaign's config
    or identity by its route's endpoint; a token in its query string is refused as the privacy middleware refuses a
    direct one's (:mod:`._access`).  The gateway request is the one request
    an operator sees: one request id (the inner answer's ``X-Request-ID`` too), one access line naming the
    inner method, path and status (address ``ohttp``; :data:`._logs.INNER`), response metrics under
    ``/ohttp/gateway`` only; the ingest and refusal metrics of an inner batch are a direct batch's.  The answer is the inner response, zero-padded to a power of two of at least 1024 bytes (RFC 9292
    section 3.8), encapsulated: ``message/ohttp-res`` (or ``message/ohttp-chunked-res``), status 200, ``Cache-Control: no-store``; to ohttpy's dialect
    (:data:`dpdist._ohttp.OHTTPY_DIALECT`) the inner status and fields go on the outer answer and only the
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

from urllib.parse import unquote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .._guard._body import HeldBody, content_coding_of
from ..errors import MalformedReportError
from .. import _ohttp
from .._ohttp import _bhttp
from ._access import TOKEN_IN_QUERY, query_has_token
from ._database import DatabaseUnavailableError
from ._http import Answer, bearer, body_of, json_answer as json_body, refused_answer, render_json
from ._limits import MAX_HEADER_BYTES
from ._logs import INNER, REQUEST_ID, Inner
from .._guard._security_headers import security_headers
from ._middleware import new_request_id
from ._ohttp_keys import GATEWAY_PATH, gateway_keys, public_fields
from ._openapi import documented, json_answer
from .._guard._refusals import InvalidRequest, Refusal, UnsupportedMediaType
from ._routes import ROUTES as APPLICATION_ROUTES
from ._routes.batches import BATCH_HEADERS, answer_batch, first_headers, submit_batch, submit_records
from ._routes.campaigns import identity, public_config

__all__ = ["ROUTES", "GATEWAY_PATH", "KEYS_PATH", "gateway_keys", "public_fields"]

KEYS_PATH = "/ohttp/keys"
#: the smallest padded inner answer (bytes): acknowledgements, refusals and a campaign's config all pad to it
MIN_PADDED_BYTES = 1024
#: a chunked request's chunks average at least this many bytes, or it is refused (:func:`max_chunks`)
MIN_AVERAGE_CHUNK_BYTES = 4096
PROBLEM_TYPE = "https://iana.org/assignments/http-problem-types#ohttp-key"
_PROBLEM = (b"content-type", b"application/problem+json")
#: the inner requests a device sends, by endpoint: a batch, a campaign's config or identity
_DEVICE = {submit_batch: frozenset({"PUT", "POST"}), submit_records: frozenset({"POST"}), public_config: frozenset({"GET"}),
           identity: frozenset({"GET"})}
#: their routes (the application's own) and methods, the batch's first
_DEVICE_ROUTES = [(route, _DEVICE[route.endpoint]) for route in APPLICATION_ROUTES if getattr(route, "endpoint", None) in _DEVICE]
_NO_STORE = (b"cache-control", b"no-store")
#: the ``Content-Type`` of an encapsulated answer, by its content type
_RESPONSE_TYPES = {kind: (b"content-type", kind.encode("latin-1"))
                   for kind in (_ohttp.RESPONSE_CONTENT_TYPE, _ohttp.CHUNKED_RESPONSE_CONTENT_TYPE)}
#: the security headers of an inner answer, by the inner request's scheme (Binary HTTP's: http or https)
_SECURITY_HEADERS = {scheme: security_headers({"scheme": scheme}) for scheme in ("http", "https")}
#: fields about a connection (RFC 9110 section 7.6.1), not about the inner request: dropped both ways
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
async def gateway(request: Request) -> Answer:
    headers, app = request.headers, request.app
    return Answer(*await serve_encapsulated(app, app.state.service, app.state.metrics, request.scope, request.receive,
                                            headers.get("content-type", ""), headers.get("content-length"),
                                            headers.get("host", "").encode("latin-1"),
                                            content_coding_of(request.scope["headers"])))


async def serve_encapsulated(app, service, metrics, scope, receive, content_type: str, content_length: str | None,
                             host: bytes, coding: str | None = None) -> tuple[int, bytes, list]:
    """The answer to ``POST /ohttp/gateway`` (module docstring: its status, body and headers, the security headers and
    the request id aside), whatever read the request (Starlette's route, or :mod:`._fast_ohttp`): ``app`` the
    application, ``service`` and ``metrics`` its own, ``scope`` and ``receive`` the request's, ``content_type``,
    ``content_length`` (None without one), ``host`` and ``coding`` (its ``Content-Encoding``, every line of it; None
    without one) its headers'.  Refusals are raised (:class:`~dpdist._guard._refusals.Refusal`)."""
    if content_type != _ohttp.REQUEST_CONTENT_TYPE:  # as a device sends it: nothing to take apart
        content_type = content_type.split(";")[0].strip().lower()
        if content_type not in (_ohttp.REQUEST_CONTENT_TYPE, _ohttp.CHUNKED_REQUEST_CONTENT_TYPE):
            raise UnsupportedMediaType("not_ohttp", f"The gateway takes {_ohttp.REQUEST_CONTENT_TYPE} or "
                                                    f"{_ohttp.CHUNKED_REQUEST_CONTENT_TYPE}. Got {content_type!r:.80}.")
    client, chunked = scope.get("client"), content_type != _ohttp.REQUEST_CONTENT_TYPE
    address = client[0] if client else None
    try:
        async with body_of(service, content_length, receive, host=address, anonymous=True, coding=coding) as body:
            opened = await _open(app, service, body, chunked)
    except _ohttp.KeyConfigMismatch as mismatch:  # counted as every refusal is
        metrics.refused_request("ohttp_key")
        return 400, *json_body(render_json({"type": PROBLEM_TYPE, "title": "key identifier unknown",
                                            "detail": str(mismatch)}), [], _PROBLEM)
    status, headers, content = await _serve_inner(app, service, metrics, scope, host, opened.message, opened.dialect)
    if opened.dialect == _ohttp.OHTTPY_DIALECT:  # its design: status and fields on the outer answer, the content sealed
        sealed = opened.respond(content)
        return status, sealed, [*headers, _NO_STORE, (b"content-length", str(len(sealed)).encode())]
    answer = opened.respond(_padded(_bhttp.encode_response(_bhttp.Response(status, headers, content))))
    return 200, answer, [_NO_STORE, (b"content-length", str(len(answer)).encode()),
                         _RESPONSE_TYPES[opened.response_content_type]]


async def _open(app, service, body: bytes, chunked: bool) -> _ohttp.Opened:
    """The request in the encapsulated ``body`` (held by the caller), opened with the key ring's private key of its key
    id (the ring read off the event loop when none was read lately or it lacks that id); :class:`~dpdist._ohttp.
    KeyConfigMismatch` raised for a key id or suite the gateway does not hold, a refusal for anything else that does
    not open."""
    ring, key_id = gateway_keys(app), body[0] if body else None
    private_keys = ring.cached_private_keys(key_id)
    if not private_keys:
        private_keys = await run_in_threadpool(ring.private_keys, key_id)
    try:
        return _ohttp.decapsulate_request(private_keys, body, chunked=chunked, max_chunks=max_chunks(service.max_body_bytes))
    except _ohttp.KeyConfigMismatch:
        raise
    except _ohttp.TooManyChunks as error:  # one AES-GCM open per chunk, on the event loop
        raise InvalidRequest("too_many_chunks", str(error)) from None
    except MalformedReportError as error:
        raise InvalidRequest("not_decapsulated", str(error)) from None


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


async def _serve_inner(app, service, metrics, outer: dict, host: bytes, message: bytes,
                       dialect: str | None) -> tuple[int, _bhttp.Fields, bytes]:
    """The inner request served (module docstring; ``outer``: the outer request's scope, ``host`` its Host header's
    value): its status, fields and content; what it was is noted in ``outer`` (:data:`._logs.INNER`) for the one access
    line.  A request of dpdist's clients (:data:`~dpdist._ohttp.WHOLE_ANSWER_FIELD`) opened in ohttpy's dialect
    (a relay relabelled it chunked) is refused unserved: its answer would go in the clear (``ohttp_dialect_mismatch``)."""
    try:
        inner = _bhttp.decode_request(message, max_bytes=service.max_body_bytes)
    except MalformedReportError as error:
        return _counted_refusal(metrics, outer, 400, "malformed_binary_http", str(error))
    # a direct request's head is refused past 16 KiB (a message no longer than that holds no longer a head)
    if len(message) > MAX_HEADER_BYTES and _head_bytes(inner) > MAX_HEADER_BYTES:
        return _counted_refusal(metrics, outer, 400, "head_too_large", f"The inner request's control data and header fields "
                                f"(or its trailer fields) hold more than {MAX_HEADER_BYTES} bytes, as a direct request's may not.")
    name, value = _ohttp.WHOLE_ANSWER_FIELD
    if dialect == _ohttp.OHTTPY_DIALECT and inner.header(name.decode()) == value.decode():
        raise InvalidRequest("ohttp_dialect_mismatch", f"The request is RFC 9458's ({_ohttp.REQUEST_CONTENT_TYPE}) and "
                             f"asks for its whole answer encapsulated, but came as {_ohttp.CHUNKED_REQUEST_CONTENT_TYPE} "
                             "(relabelled on the way): not served.")
    raw_path, _, query = inner.path.partition("?")
    path = unquote(raw_path) if "%" in raw_path else raw_path
    found = _device_route(inner.method, path)
    if found is None:
        return _counted_refusal(metrics, outer, 404, "not_through_gateway", f"The gateway serves a device's requests only (a "
                                f"batch, a campaign's config or identity). Got {inner.method} {raw_path[:200]}.")
    route, params = found
    client = outer.get("client")
    if query and query_has_token(query.encode("latin-1")):  # as the privacy middleware refuses a direct request's
        status, body, headers = refused_answer(metrics, InvalidRequest("token_in_query", TOKEN_IN_QUERY))
    elif route.endpoint is public_config or route.endpoint is identity:
        status, body, headers = await _endpoint_answer(app, metrics, route.endpoint, inner, path, params, client)
    else:
        found_headers = first_headers(inner.headers, BATCH_HEADERS)
        found_headers[b"content-length"] = str(len(inner.content)).encode()  # what it holds (a field of it is dropped)
        status, body, headers = await answer_batch(service, metrics, params["campaign"], params.get("batch_id"),
                                                   found_headers, client[0] if client else None, HeldBody(inner.content))
    headers = [field for field in headers if field[0] not in _HOP_BY_HOP]
    headers += _SECURITY_HEADERS[inner.scheme]
    headers.append((b"x-request-id", (REQUEST_ID.get() or new_request_id()).encode()))
    outer[INNER] = Inner(inner.method, route.path, status or 500, params)
    return status or 500, tuple(headers), body


def _device_route(method: str, path: str):
    """``(route, path parameters)`` of the device's route (:data:`_DEVICE_ROUTES`) an inner request of ``method`` and
    unquoted ``path`` (no query string) is for, matched as Starlette's router matches it (its regular expression and
    convertors), else None."""
    for route, methods in _DEVICE_ROUTES:
        found = route.path_regex.match(path)
        if found is not None and method in methods:
            params = found.groupdict()
            for key, value in params.items():
                params[key] = route.param_convertors[key].convert(value)
            return route, params
    return None


async def _endpoint_answer(app, metrics, endpoint, inner: _bhttp.Request, path: str, params: dict,
                           client) -> tuple[int | None, bytes, list]:
    """A campaign's config or identity: the answer of its route's ``endpoint`` (``params``: its path parameters), or of
    the refusal or outage it raised, as the exception handlers answer it."""
    scope = {"type": "http", "app": app, "method": inner.method, "scheme": inner.scheme, "path": path, "root_path": "",
             "query_string": b"", "headers": list(inner.headers), "path_params": params, "client": client}
    try:
        response = await endpoint(Request(scope))
    except (Refusal, DatabaseUnavailableError) as error:
        return refused_answer(metrics, error)
    return response.status_code, bytes(response.body), list(response.raw_headers)


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


def _counted_refusal(metrics, outer: dict, status: int, code: str, detail: str) -> tuple[int, _bhttp.Fields, bytes]:
    """A refusal the gateway itself makes of an inner request, counted in ``dpdist_requests_refused_total`` as every
    refusal is; the access line names the gateway's route with its status.  Its encapsulated answer carries the security
    headers and the gateway request's id as every other encapsulated answer."""
    metrics.refused_request(code)
    outer[INNER] = Inner(outer.get("method", "POST"), GATEWAY_PATH, status)
    body = render_json({"error": code, "detail": detail})
    headers = [(b"content-type", b"application/json"), *security_headers(outer),
               (b"x-request-id", (REQUEST_ID.get() or new_request_id()).encode())]
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
