"""A stand-in collector for the relay's in-process tests (tests/relay/test_app.py, tests/serve/test_limits.py).

An ASGI app that serves campaigns' public configs and identities, opens the reports of each relayed batch (RFC 9458
requests, or dpdist's deprecated envelope) with the campaign's keys and counts each batch id once, as ``dpdist serve``
does; ``fail`` answers that many
deliveries 503, ``refuse`` answers 409 ``campaign_not_open``.
"""

from __future__ import annotations

import json
import os

from dpdist import _ohttp
from dpdist._wire import _envelope, _ohttp_report
from dpdist._wire._frames import MAX_SEALED_BYTES, unframe
from dpdist._wire._identity import identity_document, pin_of

RELAY_TOKEN = "relay-token-0123456789"
ADMIN = "admin-token-0123456789"


class Collector:
    """A stand-in collector: campaigns' public configs, and relayed batches counted once per batch id."""

    def __init__(self, campaigns: dict[str, str], fail: int = 0, refuse: bool = False):
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        self.key, self.ohttp_key = _envelope.generate_key(), os.urandom(32)
        self.campaigns, self.fail, self.refuse = campaigns, fail, refuse
        self.batches: dict[str, list[bytes]] = {}
        self.deliveries: list[tuple[str, bytes]] = []

        async def config(request):
            campaign = request.path_params["campaign"]
            if campaign not in self.campaigns:
                return JSONResponse({"error": "unknown_campaign"}, status_code=404)
            document = {"campaign": campaign, "state": self.campaigns[campaign], "config": {"protocol": "grr"}}
            if campaign != "direct":
                relay = json.loads(self.identity(campaign))["relay"]
                document["relay"] = {**relay, "pin": pin_of(self.identity(campaign)), "issuer": None,
                                     "envelopes": {"sealed_v1": True, "ohttp": True}}
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
            self.batches.setdefault(batch_id, [self.open(campaign, message)[1] for message in unframe(body)])
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
                                 issuer=None, colluding=0, delta=1e-8, ohttp_public_key=_ohttp.public_key_of(self.ohttp_key))

    def open(self, campaign: str, message: bytes) -> tuple[str, bytes]:
        """``(content type, body)`` of a relayed report of ``campaign``, in either envelope."""
        if _ohttp_report.is_encapsulated(message):
            return _ohttp_report.open_report(self.ohttp_key, campaign, message, MAX_SEALED_BYTES)
        return _envelope.open_sealed(self.key.private_key, campaign, message)

    def encapsulate(self, campaign: str, body: bytes, content_type: str = "application/json") -> bytes:
        """A device's report of ``campaign``: an RFC 9458 request to the campaign's Oblivious HTTP key configuration."""
        return _ohttp_report.encapsulate_report(_ohttp.KeyConfig(_ohttp_report.KEY_ID, _ohttp.public_key_of(self.ohttp_key)),
                                                campaign, body, content_type)

    def counted(self) -> list[int]:
        return [json.loads(body)["reports"][0] for bodies in self.batches.values() for body in bodies]
