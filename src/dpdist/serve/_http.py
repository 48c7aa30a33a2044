"""The one place where the service's refusals become HTTP answers, and what every endpoint reads from a request.

Every refusal is a JSON body ``{"error": CODE, "detail": MESSAGE}`` with the
status of its kind (:class:`~dpdist._guard._refusals.Refusal`'s ``status``); an unexpected failure is a 500
``{"error": "internal"}`` whose traceback goes to the server log only, never to
the client.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .. import _json
from .._guard._body import CLIENT_GONE, NO_RESPONSE, content_coding_of
from ._database import DatabaseUnavailableError
from ._access import METHODS
from ._limits import receive_body
from .._guard._refusals import InvalidRequest, Refusal, refusal_headers

__all__ = ["refusal_answer", "database_unavailable_answer", "refused_answer", "render_json",
           "json_answer", "Answer", "EXCEPTION_HANDLERS", "bearer", "bearer_token", "json_document", "read_body", "body_of",
           "json_body"]

LOG = logging.getLogger("dpdist.serve")
#: what ``JSONResponse.render`` does (one encoder, not one per answer as ``json.dumps`` with options builds)
_RENDER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode
_JSON = (b"content-type", b"application/json")

def refusal_answer(refusal: Refusal) -> tuple[int, dict, dict]:
    """A refusal's HTTP answer: its status, JSON body and headers."""
    return refusal.status, {"error": refusal.code, "detail": refusal.detail}, refusal_headers(refusal)


def database_unavailable_answer(error: DatabaseUnavailableError) -> tuple[int, dict, dict]:
    """The HTTP answer to a database that cannot answer: its status, JSON body and headers."""
    detail = f"The database cannot answer now ({error.reason}); retry later."
    return 503, {"error": "database_unavailable", "detail": detail}, {"Retry-After": "5"}


def render_json(document) -> bytes:
    """The body ``JSONResponse`` renders for ``document``, byte for byte."""
    return _RENDER(document).encode("utf-8")


def json_answer(body: bytes, headers: list, media: tuple[bytes, bytes] = _JSON) -> tuple[bytes, list]:
    """A JSON answer's body and headers, as ``JSONResponse`` renders them (``headers``, then its length and type)."""
    headers.append((b"content-length", str(len(body)).encode()))
    headers.append(media)
    return body, headers


def refused_answer(metrics, error: Refusal | DatabaseUnavailableError) -> tuple[int | None, bytes, list]:
    """The answer (status, body, headers) to the refusal or outage ``error``, counted in ``metrics``, as the exception
    handlers answer it; status None for a client gone mid-body (nothing to answer)."""
    if isinstance(error, Refusal):
        metrics.refused_request(error.code)
        if error.code == CLIENT_GONE:
            return None, b"", []
        status, document, headers = refusal_answer(error)
    else:  # logged by the database layer (once per error class)
        metrics.refused_request("database_unavailable")
        status, document, headers = database_unavailable_answer(error)
    raw = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
    return status, *json_answer(render_json(document), raw)


class Answer(Response):
    """A response of an answer already rendered: its ``status``, ``body`` and raw ``headers`` (what
    :func:`refused_answer` and the batch and gateway cores give), sent as they are."""

    def __init__(self, status: int, body: bytes, headers: list):
        self.status_code, self.body, self.raw_headers, self.background = status, body, headers, None


async def _refused(request: Request, refusal: Refusal) -> JSONResponse:
    metrics = getattr(request.app.state, "metrics", None)
    if metrics is not None:
        metrics.refused_request(refusal.code)
    if refusal.code == CLIENT_GONE:  # no one to answer: what follows is not counted as a response (MetricsMiddleware)
        request.scope[NO_RESPONSE] = True
    status, body, headers = refusal_answer(refusal)
    return JSONResponse(body, status_code=status, headers=headers)


async def _http_error(request: Request, error: HTTPException) -> JSONResponse:
    code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
    return JSONResponse({"error": code, "detail": str(error.detail)}, status_code=error.status_code)


async def _internal_error(request: Request, error: Exception) -> JSONResponse:
    # fixed fields, as an access line's (._access): the method if routed, the route's template; never the path
    route = getattr(request.scope.get("route"), "path", "unmatched")
    LOG.error("internal error on %s %s", request.method if request.method in METHODS else "OTHER", route, exc_info=error)
    return JSONResponse({"error": "internal", "detail": "internal server error"}, status_code=500)


# Starlette types a handler as taking any Exception; each of these takes its own kind
EXCEPTION_HANDLERS: dict[Any, Any] = {Refusal: _refused, HTTPException: _http_error, Exception: _internal_error}


def bearer(request: Request) -> str:
    """The token of ``Authorization: Bearer <token>`` ('' without one)."""
    return bearer_token(request.headers.get("authorization", ""))


def bearer_token(header: str) -> str:
    """The token of an ``Authorization`` header's value ``Bearer <token>`` ('' otherwise)."""
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def json_document(body: bytes) -> dict:
    """A request body that must be one JSON object (400 ``invalid_json`` otherwise)."""
    try:
        document = _json.loads(body or b"{}")
    except ValueError as error:
        raise InvalidRequest("invalid_json", f"The request body is not valid JSON ({error}).") from None
    if not isinstance(document, dict):
        raise InvalidRequest("invalid_json", "The request body must be a JSON object.")
    return document


def read_body(request: Request, campaign_id: str | None = None, *, anonymous: bool = True):
    """``async with read_body(request) as body``: the body, bounded in size, time and the server's in-flight bytes
    (the client address's share of them, and if ``anonymous``, no credential checked, the anonymous half).

    A body over the size limit is counted against ``campaign_id``'s refused batches (once per batch id of the path).
    """
    headers = request.headers
    return body_of(request.app.state.service, headers.get("content-length"), request.receive, campaign_id,
                   request.path_params.get("batch_id"), host=request.client.host if request.client else None,
                   anonymous=anonymous, coding=content_coding_of(request.scope["headers"]))


def body_of(service, content_length: str | None, receive, campaign_id: str | None = None, batch_id: str | None = None,
            *, host: str | None = None, anonymous: bool = True, coding: str | None = None):
    """:func:`read_body` from a request's ``Content-Length`` and ``Content-Encoding`` headers (``coding``; each None
    without one), its ASGI ``receive`` and its client address ``host``."""
    async def refuse_oversized():
        if campaign_id:
            await service.count_refused(campaign_id, "too_large", batch_id)

    return receive_body(content_length, receive, service.limits, service.budget, service.max_body_bytes, refuse_oversized,
                        host=host, anonymous=anonymous, coding=coding)


async def json_body(request: Request) -> dict:
    """The JSON object of an admin request's body (read once its admin token was checked: not anonymous)."""
    async with read_body(request, anonymous=False) as body:
        return json_document(body)
