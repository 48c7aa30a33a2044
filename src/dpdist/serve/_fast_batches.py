"""The devices' request, ``PUT``/``POST /api/campaigns/{campaign}/batches/{batch_id}``, served without Starlette's layers.

At population scale every device sends one report per request, and a
request's CPU was mostly the framework's: five middleware layers, each with its
closures and message copies, Starlette's routing and exception layers, its
``Request``, its ``JSONResponse``.  :class:`BatchFastPath`, the outermost of the
application's middleware, serves this one route itself, with the same steps and
the same answers byte for byte:

* the same route match (what the Starlette route's :meth:`~starlette.routing.Route.matches` does: its regex,
  convertors and methods, without its child scope and enum);
* the same work (:func:`._routes.batches.accept`, the usual batch in one flat coroutine: rate, admission before the
  body, the body's limits, decoding, the group commit, the acknowledgement only
  once durable);
* the same answers: the acknowledgement as ``JSONResponse`` renders it, a refusal
  or an outage as the exception handlers answer it (:func:`._http.refusal_answer`,
  :func:`._http.database_unavailable_answer`), a request the server's shutdown
  cut short as :class:`dpdist._guard._shutdown.ShutdownMiddleware` does, the security headers and
  ``X-Request-ID`` of :mod:`._middleware`; an unexpected error propagates to
  Starlette's outermost layer (500), as before;
* the same records: metrics (latency, status, requests in flight, batches,
  reports, refusals), the access line of :mod:`._access` and the JSON access line
  of :class:`._middleware.RequestIdMiddleware`, the request id of log records.

Requests it does not take pass to the application unchanged: other routes, a
query string (the privacy middleware refuses tokens in it), a ``root_path``
(behind a proxy's prefix) and every request when CORS is on (its middleware adds
``Vary`` and the CORS headers).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Awaitable

from starlette.convertors import StringConvertor
from starlette.routing import Route

from .._guard._body import CLIENT_GONE
from .._guard._shutdown import shutdown_refusal
from ._access import access_line
from ._database import DatabaseUnavailableError
from ._http import bearer_token, database_unavailable_answer, refusal_answer
from ._logs import REQUEST_ID, AccessLog, shown_status
from ._middleware import request_id_of, security_headers
from ._refusals import Refusal
from ._routes.batches import Incoming, accept, accept_batch, submit_batch

__all__ = ["BatchFastPath", "batch_answer", "render_ack"]

#: what ``JSONResponse.render`` does (one encoder, not one per answer as ``json.dumps`` with options builds)
_RENDER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode
#: a JSON string as that encoder writes it (``ensure_ascii=False``)
_STRING = json.encoder.encode_basestring
_WANTED = frozenset({b"authorization", b"content-type", b"content-length", b"content-encoding", b"x-request-id"})
_JSON = (b"content-type", b"application/json")


class BatchFastPath:
    """Pure ASGI middleware serving the batch route of :data:`._routes.ROUTES` (see the module).

    ``privacy_log``: the access-log mode of :class:`._access.PrivacyMiddleware`; ``json_access``: that of
    :class:`._middleware.RequestIdMiddleware` (``"off"`` unless ``--log-format json``).  A subclass serves another
    route the same way (:mod:`._fast_ohttp`): its :attr:`endpoint`, the request headers it reads (:attr:`wanted`),
    its :meth:`_work` and :meth:`_answer_of`.
    """

    #: the endpoint of the route served (found in ``routes``)
    endpoint = staticmethod(submit_batch)
    #: the request headers read (the first of each)
    wanted = _WANTED

    def __init__(self, app, service, metrics, routes, *, privacy_log: str = "off", json_access: str = "off"):
        self.app, self.service, self.metrics = app, service, metrics
        self.route: Route = next(route for route in routes if getattr(route, "endpoint", None) is self.endpoint)
        #: the route's parameters' conversions but a string's (which gives its value back)
        self._converts = [(name, convertor.convert) for name, convertor in self.route.param_convertors.items()
                          if type(convertor) is not StringConvertor]
        self.privacy_log, self.json_access = privacy_log, json_access

    async def __call__(self, scope, receive, send):
        if not self._takes(scope):
            await self.app(scope, receive, send)
            return
        found: dict[bytes, bytes] = {}
        wanted = self.wanted
        for name, value in scope["headers"]:  # the first of each, as Starlette's Headers.get
            if name in wanted:
                if name not in found:
                    found[name] = value
                elif name == b"content-encoding":  # but every line of this one (a second may name a coding)
                    found[name] += b"," + value
        request_id = request_id_of(found.get(b"x-request-id", b""))
        REQUEST_ID.set(request_id)  # each request runs in its own task: this never reaches another request
        metrics, started, status, logged, answered = self.metrics, time.perf_counter(), 500, 0, True
        in_flight = metrics.in_flight
        in_flight.value += 1  # a plain number of the event loop (_metrics._Gauge), counted without a call
        try:
            code: int | None
            try:  # answered as answered() answers (its coroutine spared: every request of the route comes here)
                code, body, headers = self._answer_of(await self._work(scope, found, receive))
            except (Refusal, DatabaseUnavailableError) as error:
                code, body, headers = refused_answer(metrics, error)
            except asyncio.CancelledError:  # the server's shutdown: answered 503 (dpdist._guard._shutdown), else raised
                refusal = shutdown_refusal()
                if refusal is None:
                    raise
                code, body, headers = refused_answer(metrics, refusal)
            if code is None:  # the client went away mid-body: no answer, counted as a refusal only
                answered = False
                return
            status = code
            headers += [*security_headers(scope), (b"x-request-id", request_id.encode())]
            logged = status
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        except Exception:
            logged = logged or 500  # answered by Starlette's outermost error handler
            raise
        finally:
            in_flight.value -= 1
            if self.privacy_log != "off" and logged:  # as the privacy middleware: not for a cancelled request
                access_line(scope, logged, self.privacy_log)
            if answered:  # a client gone mid-body: no response to count or log
                metrics.observe(scope["method"], self.route.path, shown_status(scope, status), time.perf_counter() - started)
                if self.json_access != "off":
                    AccessLog.write(scope, self.route.path, status, started, full=self.json_access == "full")

    def _takes(self, scope) -> bool:
        """Whether this layer serves the request ``scope`` (see the module); if so, the route's ``endpoint``,
        ``path_params`` and ``route`` are set in it as Starlette's router sets them."""
        if scope["type"] != "http" or scope.get("query_string") or scope.get("root_path"):
            return False
        route = self.route
        found = route.path_regex.match(scope["path"])  # Route.matches (no root_path: the path is the route's path)
        if found is None or (route.methods and scope["method"] not in route.methods):
            return False  # another route's, or this one's with another method (405)
        parameters = found.groupdict()
        for name, convert in self._converts:
            parameters[name] = convert(parameters[name])
        outer = scope.get("path_params")
        scope["endpoint"], scope["path_params"] = route.endpoint, {**outer, **parameters} if outer else parameters
        scope["route"] = route
        return True

    def _work(self, scope, found: dict[bytes, bytes], receive) -> Awaitable:
        """The awaitable of the request's work: the acknowledgement of the batch (a :class:`Refusal` raised); a
        coroutine of its own, not one wrapping it (every request of the route awaits it)."""
        length, coding, client, parameters = (found.get(b"content-length"), found.get(b"content-encoding"),
                                              scope.get("client"), scope["path_params"])
        authorization = found.get(b"authorization")  # none for a campaign open to anyone: no token ('')
        return accept(self.service, parameters["campaign"], parameters["batch_id"],
                      bearer_token(authorization.decode("latin-1")) if authorization is not None else "",
                      client[0] if client else None,
                      found.get(b"content-type", b"").decode("latin-1"),
                      length.decode("latin-1") if length is not None else None, receive,
                      coding.decode("latin-1") if coding is not None else None)

    def _answer_of(self, result) -> tuple[int, bytes, list]:
        """The answer (status, body, headers) of what :meth:`_work` gave, the security headers and the request id
        aside: the batch's acknowledgement, counted in the metrics, as :func:`acknowledgement` answers it."""
        self.metrics.acknowledged(result)
        body = render_ack(result)
        return 200, body, [(b"content-length", str(len(body)).encode()), _JSON]  # as _json


async def batch_answer(service, metrics, incoming: Incoming) -> tuple[int | None, bytes, list]:
    """The batch route's core, whatever read the request (this module's fast path, or the Oblivious HTTP gateway for a
    decapsulated batch, :mod:`._ohttp_gateway`): validation, exactly-once, limits and refusals
    (:func:`._routes.batches.accept_batch`), counted in ``metrics`` (batches, reports, refusals); the status, body and
    headers of the answer as the application renders them, but the security headers and the request id."""
    return await answered(metrics, acknowledgement(service, metrics, incoming))


async def acknowledgement(service, metrics, incoming: Incoming) -> tuple[int, bytes, list]:
    """The acknowledgement of a batch (its status, body, headers), counted in ``metrics``; a :class:`Refusal` raised."""
    ack = await accept_batch(service, incoming)
    metrics.acknowledged(ack)
    return 200, *_json(render_ack(ack), [])


async def answered(metrics, work) -> tuple[int | None, bytes, list]:
    """The answer of the awaitable ``work`` (status, body, headers), or of the refusal or outage it raised (counted in
    ``metrics``, answered as the exception handlers answer it); status None for a client gone mid-body."""
    try:
        return await work
    except (Refusal, DatabaseUnavailableError) as error:
        return refused_answer(metrics, error)


def refused_answer(metrics, error: Refusal | DatabaseUnavailableError) -> tuple[int | None, bytes, list]:
    """The answer (status, body, headers) to the refusal or outage ``error``, counted in ``metrics``, as the exception
    handlers answer it; status None for a client gone mid-body."""
    if isinstance(error, Refusal):
        metrics.refused_request(error.code)
        if error.code == CLIENT_GONE:
            return None, b"", []
        status, document, headers = refusal_answer(error)
    else:  # logged by the database layer (once per error class)
        metrics.refused_request("database_unavailable")
        status, document, headers = database_unavailable_answer(error)
    raw = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
    return status, *_json(_RENDER(document).encode("utf-8"), raw)


#: the keys of an acknowledgement (:func:`._group.acknowledgement`), in order
_ACK_KEYS = ("campaign", "batch_id", "n_read", "accepted", "rejected", "duplicate")


def render_ack(ack: dict) -> bytes:
    """The body ``JSONResponse`` renders for the acknowledgement ``ack``, byte for byte, without the encoder's
    walk of the dict for the usual one (its two strings escaped by the encoder's own function, nothing rejected)."""
    if tuple(ack) != _ACK_KEYS:
        return _RENDER(ack).encode("utf-8")
    campaign, batch_id, n_read, accepted, rejected, duplicate = ack.values()  # in the order of _ACK_KEYS
    if (rejected or type(campaign) is not str or type(batch_id) is not str or type(n_read) is not int
            or type(accepted) is not int or type(duplicate) is not bool):
        return _RENDER(ack).encode("utf-8")
    return (f'{{"campaign":{_STRING(campaign)},"batch_id":{_STRING(batch_id)},"n_read":{n_read},"accepted":{accepted},'
            f'"rejected":{{}},"duplicate":{"true" if duplicate else "false"}}}').encode("utf-8")


def _json(body: bytes, headers: list) -> tuple[bytes, list]:
    """A JSON answer's body and headers, as ``JSONResponse`` renders them (``headers``, then its length and type)."""
    headers.append((b"content-length", str(len(body)).encode()))
    headers.append(_JSON)
    return body, headers
