"""The four parties of a relayed campaign in one process, for tests: issuer, relay, collector, and devices.

The issuer (``dpdist.issuer``), the relay (``dpdist.relay``) and the collector (``dpdist.serve``) run
as ASGI apps on one event loop, in a thread of their own, each reached under its own host name
(``http://issuer``, ``http://relay``, ``http://collector``).  Devices use the synchronous Python
client (``dpdist.client.Client``) from the test's thread through :class:`Hosts`, a transport that
hands each request to the app of its host on that loop.  A test may put a lying party in place of
an honest one (``apps["relay"] = ...``).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

import httpx

ADMIN, RELAY_TOKEN = "admin-token-0123456789", "relay-token-0123456789"
ADMIN_HEADERS = {"authorization": f"Bearer {ADMIN}"}


class Hosts(httpx.BaseTransport):
    """A synchronous transport that sends each request to the ASGI app of its host, on the parties' loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, clients: dict[str, httpx.AsyncClient]):
        self.loop, self.clients = loop, clients

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        client = self.clients[request.url.host]
        body = request.read()

        async def send():
            response = await client.request(request.method, str(request.url), content=body, headers=request.headers)
            return response.status_code, response.headers.multi_items(), response.content

        status, headers, content = asyncio.run_coroutine_threadsafe(send(), self.loop).result(timeout=60)
        return httpx.Response(status, headers=headers, content=content)


class Parties:
    """Issuer, relay and collector apps running on a loop in a background thread (a context manager)."""

    def __init__(self, tmp_path, *, min_batch: int = 5, max_batch: int = 10, relay_app=None):
        from dpdist.issuer import create_app as create_issuer
        from dpdist.relay import create_app as create_relay
        from dpdist.serve import create_app as create_collector

        self.tmp_path = tmp_path
        self.apps = {
            "issuer": create_issuer(str(tmp_path / "issuer.sqlite"), name="issuer.test", admin_token=ADMIN),
            "collector": create_collector(str(tmp_path / "campaigns.sqlite"), admin_token=ADMIN, relay_token=RELAY_TOKEN),
        }
        self.apps["relay"] = relay_app or create_relay(
            str(tmp_path / "relay.sqlite"), collector="http://collector", relay_token=RELAY_TOKEN, min_batch=min_batch,
            max_batch=max_batch, admin_token=ADMIN, interval=0.02, transport=httpx.ASGITransport(self.apps["collector"]))
        self.loop = asyncio.new_event_loop()
        self._stack: contextlib.AsyncExitStack | None = None
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> "Parties":
        self._thread.start()
        self.run(self._start())
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.run(self._stack.aclose())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=30)

    async def _start(self) -> None:
        self._stack = contextlib.AsyncExitStack()
        self.clients = {}
        for host, app in self.apps.items():
            await self._stack.enter_async_context(app.router.lifespan_context(app))
            self.clients[host] = await self._stack.enter_async_context(
                httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url=f"http://{host}"))

    def run(self, coroutine, timeout: float = 120):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=timeout)

    @property
    def transport(self) -> Hosts:
        return Hosts(self.loop, self.clients)

    def client(self, server: str = "http://collector", **options):
        """A device's :class:`dpdist.client.Client`."""
        from dpdist.client import Client

        return Client(server, transport=self.transport, retries=0, **options)

    def operator(self, server: str = "http://collector", admin_token: str = ADMIN):
        """The collector's operator: an :class:`dpdist.client.AdminClient`."""
        from dpdist.client import AdminClient

        return AdminClient(server, admin_token=admin_token, transport=self.transport, retries=0)

    def admin(self, host: str, method: str, path: str, **kwargs) -> httpx.Response:
        """An admin request to ``host`` (issuer, relay or collector)."""
        return self.run(self.clients[host].request(method, path, headers=ADMIN_HEADERS, **kwargs))

    def credentials(self, key: str, count: int, tokens_each: int = 1) -> list[str]:
        """``count`` credentials of ``tokens_each`` tokens each for the issuer key ``key`` (made if missing, with
        ``tokens_each`` as its ceiling)."""
        self.admin("issuer", "POST", "/issuer/v1/keys", json={"name": key, "tokens_each": tokens_each})
        answer = self.admin("issuer", "POST", f"/issuer/v1/keys/{key}/credentials", json={"count": count, "tokens_each": tokens_each})
        assert answer.status_code == 201, answer.text
        return answer.json()["credentials"]

    def relayed_campaign(self, name: str, config: dict, *, issuer_key: str | None = "c1", independent: bool = True,
                         colluding: int = 0, tokens_each: int = 1, sealed_v1: bool = False) -> dict:
        """Create and open a relayed campaign (with the issuer's key ``issuer_key``, made with the ceiling ``tokens_each``
        if missing, or no issuer; ``sealed_v1``: taking dpdist's deprecated envelope too); its public config."""
        from dpdist.client import issuer_of

        issuer = None
        if issuer_key is not None:
            self.admin("issuer", "POST", "/issuer/v1/keys", json={"name": issuer_key, "tokens_each": tokens_each})
            issuer = issuer_of("http://issuer", issuer_key, independent=independent, transport=self.transport)
        with self.operator() as operator:
            relay = {"url": "http://relay", "issuer": issuer, "colluding": colluding, **({"sealed_v1": True} if sealed_v1 else {})}
            operator.create_campaign(name, config, relay=relay)
            operator.open_campaign(name)
            return operator.config(name)

    def wait_delivered(self, batches: int, timeout: float = 30.0) -> dict:
        """The relay's status once ``batches`` batches are delivered and none is pending."""
        import time

        deadline = time.monotonic() + timeout
        while True:
            status = self.admin("relay", "GET", "/relay/v1/status").json()
            if status["batches"].get("delivered", 0) >= batches and not status["batches"].get("pending"):
                return status
            assert time.monotonic() < deadline, status
            time.sleep(0.02)
