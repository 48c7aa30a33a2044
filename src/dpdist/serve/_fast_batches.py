"""The devices' request, ``PUT``/``POST /api/campaigns/{campaign}/batches/{batch_id}``, served without Starlette's layers.

At population scale every device sends one report per request, and a
request's CPU was mostly the framework's: five middleware layers, each with its
closures and message copies, Starlette's routing and exception layers, its
``Request``, its ``JSONResponse``.  :class:`BatchFastPath`, the outermost of the
application's middleware, serves this one route itself, with the same steps and
the same answers byte for byte:

* the same route match (what the Starlette route's :meth:`~starlette.routing.Route.matches` does: its regex,
  convertors and methods, without its child scope and enum);
* the same function (:func:`._routes.batches.answer_batch`, which the route's endpoint and the Oblivious HTTP gateway
  call too: rate, admission before the body, the body's limits, decoding, the group commit, the acknowledgement only
  once durable; a refusal or an outage answered as the exception handlers answer it);
* the same answers: a request the server's shutdown
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
import time
from typing import Awaitable

from starlette.convertors import StringConvertor
from starlette.routing import Route

from .._guard._shutdown import shutdown_refusal
from ._database import DatabaseUnavailableError
from ._http import refused_answer
from ._logs import REQUEST_ID, shown_status
from .._guard._security_headers import security_headers
from ._middleware import new_request_id
from .._guard._refusals import Refusal
from ._routes.batches import BATCH_HEADERS, answer_batch, first_headers, submit_batch

__all__ = ["BatchFastPath"]


class BatchFastPath:
    """Pure ASGI middleware serving the batch route of :data:`._routes.ROUTES` (see the module).

    ``access``: the server's :class:`._access.AccessLog` (None: no access lines).  A subclass serves another
    route the same way (:mod:`._fast_ohttp`): its :attr:`endpoint`, the request headers it reads (:attr:`wanted`) and
    its :meth:`_work`.
    """

    #: the endpoint of the route served (found in ``routes``)
    endpoint = staticmethod(submit_batch)
    #: the request headers read (the first of each; every line of Content-Encoding)
    wanted = BATCH_HEADERS

    def __init__(self, app, service, metrics, routes, *, access=None):
        self.app, self.service, self.metrics = app, service, metrics
        self.route: Route = next(route for route in routes if getattr(route, "endpoint", None) is self.endpoint)
        #: the route's parameters' conversions but a string's (which gives its value back)
        self._converts = [(name, convertor.convert) for name, convertor in self.route.param_convertors.items()
                          if type(convertor) is not StringConvertor]
        self.access = access

    async def __call__(self, scope, receive, send):
        if not self._takes(scope):
            await self.app(scope, receive, send)
            return
        found = first_headers(scope["headers"], self.wanted)
        request_id = new_request_id()
        REQUEST_ID.set(request_id)  # each request runs in its own task: this never reaches another request
        metrics, started, status, logged, answered = self.metrics, time.perf_counter(), 500, 0, True
        in_flight = metrics.in_flight
        in_flight.value += 1  # a plain number of the event loop (_metrics._Gauge), counted without a call
        try:
            code: int | None
            try:
                code, body, headers = await self._work(scope, found, receive)
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
            if self.access is not None and logged:  # as the request-id middleware: not for a cancelled request
                self.access.write(scope, self.route.path, logged, started)
            if answered:  # a client gone mid-body: no response to count
                metrics.observe(scope["method"], self.route.path, shown_status(scope, status), time.perf_counter() - started)

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
        """The awaitable of the request's answer (status, body, headers; status None for a client gone mid-body), the
        security headers and the request id aside; a refusal the answer does not hold is raised."""
        client, parameters = scope.get("client"), scope["path_params"]
        return answer_batch(self.service, self.metrics, parameters["campaign"], parameters["batch_id"], found,
                            client[0] if client else None, receive)
