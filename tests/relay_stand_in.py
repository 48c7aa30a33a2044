"""A stand-in collector for the relay's in-process tests (tests/relay/test_app.py, tests/serve/test_limits.py).

An ASGI app that serves campaigns' public configs and identities, opens the sealed reports of each relayed batch
with the campaign's key and counts each batch id once, as ``dpdist serve`` does; ``fail`` answers that many
deliveries 503, ``refuse`` answers 409 ``campaign_not_open``.
"""

from __future__ import annotations

import json

from dpdist._wire import _envelope
from dpdist._wire._identity import identity_document, pin_of

RELAY_TOKEN = "relay-token-0123456789"
ADMIN = "admin-token-0123456789"


class Collector:
    """A stand-in collector: campaigns' public configs, and relayed batches counted once per batch id."""

    def __init__(self, campaigns: dict[str, str], fail: int = 0, refuse: bool = False):
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        self.key = _envelope.generate_key()
        self.campaigns, self.fail, self.refuse = campaigns, fail, refuse
        self.batches: dict[str, list[bytes]] = {}
        self.deliveries: list[tuple[str, bytes]] = []

        async def config(request):
            campaign = request.path_params["campaign"]
            if campaign not in self.campaigns:
                return JSONResponse({"error": "unknown_campaign"}, status_code=404)
            document = {"campaign": campaign, "state": self.campaigns[campaign], "config": {"protocol": "grr"}}
            if campaign != "direct":
                document["relay"] = {**_envelope.public_key_config(self.key.public_key), "url": "http://relay",
                                     "pin": pin_of(self.identity(campaign)), "issuer": None}
            return JSONResponse(document)

        async def identity(request):
            return Response(self.identity(request.path_params["campaign"]), media_type="application/json")

        async def relayed(request):
            assert request.headers["authorization"] == f"Bearer {RELAY_TOKEN}"
            body, batch_id = await request.body(), request.path_params["batch_id"]
            self.deliveries.append((batch_id, body))
            if self.fail > 0:
                self.fail -= 1
                return JSONResponse({"error": "unavailable"}, status_code=503)
            if self.refuse:
                return JSONResponse({"error": "campaign_not_open"}, status_code=409)
            campaign = request.path_params["campaign"]
            self.batches.setdefault(batch_id, [_envelope.open_sealed(self.key.private_key, campaign, m)[1]
                                               for m in _envelope.unframe(body)])
            opened = len(self.batches[batch_id])  # the collector's acknowledgement (serve._group.acknowledgement)
            return JSONResponse({"campaign": campaign, "batch_id": batch_id, "n_read": opened, "accepted": opened,
                                 "rejected": {}, "duplicate": False})

        self.app = Starlette(routes=[
            Route("/api/campaigns/{campaign}/config", config),
            Route("/api/campaigns/{campaign}/identity", identity),
            Route("/api/campaigns/{campaign}/relayed/{batch_id}", relayed, methods=["PUT"]),
        ])

    def identity(self, campaign: str) -> bytes:
        return identity_document(campaign, {"protocol": "grr"}, relay_url="http://relay", public_key=self.key.public_key,
                                 issuer=None, colluding=0, delta=1e-8)

    def counted(self) -> list[int]:
        return [json.loads(body)["reports"][0] for bodies in self.batches.values() for body in bodies]
