"""The Python stack's ceiling for ``benchmarks/bench_serve.py --cases ratio``: uvicorn + Starlette answering 204.

The same route as the devices' ``PUT /api/campaigns/{campaign}/batches/{batch_id}``
of ``dpdist serve``: Starlette's routing matches it, the whole body is read, the
answer is 204 without a body.  Nothing is decoded, checked or stored.  Run::

    python -m uvicorn bare_app:app --app-dir benchmarks --http httptools --no-access-log --port 8000
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


async def batch(request: Request) -> Response:
    await request.body()
    return Response(status_code=204)


async def healthz(request: Request) -> Response:
    return Response(b"ok")


app = Starlette(routes=[Route("/api/campaigns/{campaign}/batches/{batch_id}", batch, methods=["PUT", "POST"]),
                        Route("/healthz", healthz)])
