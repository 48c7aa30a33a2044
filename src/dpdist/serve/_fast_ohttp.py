"""The Oblivious HTTP gateway's request, ``POST /ohttp/gateway``, served without Starlette's layers.

An encapsulated request went through every layer of the application (five middleware, Starlette's routing and
exception layers, its ``Request``) before its inner request took the batch route's fast path: about three times
the CPU of the direct request it carries (``docs/reference/benchmarks/anonymity.md``, "The Oblivious HTTP gateway against a direct
submission").  :class:`GatewayFastPath` serves the gateway's route the way :class:`._fast_batches.BatchFastPath`
serves the batch route, with the same steps and the same answers byte for byte:

* the same function (:func:`._ohttp_gateway.serve_encapsulated`, which the route's endpoint calls too: the content
  type, the body's limits and the client address's share of the body memory, the key ring, HPKE, the inner request
  served, the padded and sealed answer);
* the same answers: a refusal or an outage as the exception handlers answer it, the security headers and
  ``X-Request-ID``; an unexpected error
  propagates to Starlette's outermost layer (500), as before;
* the same records: metrics (latency, status, requests in flight, refusals; an inner batch's ingest), the one
  access line (naming the inner request), the request id of log records.

It takes what :class:`~._fast_batches.BatchFastPath` takes: no query string, no ``root_path``, no CORS.
"""

from __future__ import annotations

from typing import Awaitable

from ._fast_batches import BatchFastPath
from ._ohttp_gateway import gateway, serve_encapsulated

__all__ = ["GatewayFastPath"]


class GatewayFastPath(BatchFastPath):
    """Pure ASGI middleware serving ``POST /ohttp/gateway`` of :data:`._ohttp_gateway.ROUTES` (see the module)."""

    endpoint = staticmethod(gateway)
    wanted = frozenset({b"content-type", b"content-length", b"content-encoding", b"host"})

    def _work(self, scope, found: dict[bytes, bytes], receive) -> Awaitable:
        """The awaitable of the gateway's answer (status, body, headers); a refusal raised."""
        length, coding = found.get(b"content-length"), found.get(b"content-encoding")
        return serve_encapsulated(scope["app"], self.service, self.metrics, scope, receive,
                                  found.get(b"content-type", b"").decode("latin-1"),
                                  length.decode("latin-1") if length is not None else None, found.get(b"host", b""),
                                  coding.decode("latin-1") if coding is not None else None)
