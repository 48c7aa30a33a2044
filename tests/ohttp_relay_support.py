"""A standard Oblivious HTTP relay resource (RFC 9458 section 6.2) for the tests: it forwards, and does nothing else.

:func:`relay_app` is an ASGI app that takes ``POST {path}`` with ``message/ohttp-req`` or
``message/ohttp-chunked-req`` and forwards the body, with its content type and nothing else (no
address, no other field), to one gateway URL, then passes the gateway's status, content type and body
back.  It cannot read what it forwards.  :class:`Faults` makes it misbehave the ways a relay can
(drop a request, lose an answer, replay a request, hold requests and send them in another order,
delay), so tests can check that each is harmless.  ``python tests/ohttp_relay_support.py --gateway URL
--port P [--path /score] [--cors]`` serves it with uvicorn on 127.0.0.1 (:class:`OhttpRelayProcess`), for at
most ``--lifetime`` seconds and ``--max-requests`` requests.  ``cors``: it also answers the CORS preflight and lets
any origin read its answers, as a relay that serves browser pages must (the content type ``message/ohttp-req`` is
not a "simple" one, so a page's POST is preflighted).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.routing import Mount

ACCEPTED = (b"message/ohttp-req", b"message/ohttp-chunked-req")


@dataclass
class Faults:
    """What the relay does wrong: ``drop`` requests it never forwards (502), ``lose`` answers it never passes back (504,
    after forwarding), ``replay`` requests it forwards twice, ``hold`` requests it keeps until that many wait and then
    forwards in a random order, ``delay`` seconds before forwarding, ``relabel`` requests it forwards as
    ``message/ohttp-chunked-req`` whatever they came as.  ``seen`` records every body forwarded, ``answers`` the status
    and content type of every answer the gateway gave the relay, ``answer_lengths`` its body's length."""

    drop: int = 0
    lose: int = 0
    replay: int = 0
    hold: int = 0
    delay: float = 0.0
    relabel: int = 0
    seen: list = field(default_factory=list)
    answers: list = field(default_factory=list)
    answer_lengths: list = field(default_factory=list)
    _held: list = field(default_factory=list)


def relay_app(gateway: str, *, path: str = "/ohttp", transport=None, faults: Faults | None = None, max_requests: int = 10_000,
              cors: bool = False):
    """The relay resource at ``path``, forwarding to ``gateway`` (module docstring)."""
    faults = faults or Faults()
    client = httpx.AsyncClient(transport=transport, timeout=60.0)
    count = {"requests": 0}

    async def forward(body: bytes, content_type: bytes) -> tuple[int, bytes, bytes]:  # status, content type, body only
        faults.seen.append(body)
        if faults.relabel > 0:
            faults.relabel -= 1
            content_type = b"message/ohttp-chunked-req"
        response = await client.post(gateway, content=body, headers={"content-type": content_type.decode()})
        faults.answers.append((response.status_code, response.headers.get("content-type", "")))
        faults.answer_lengths.append(len(response.content))
        return response.status_code, response.headers.get("content-type", "").encode(), response.content

    async def answer(send, status: int, content_type: bytes, body: bytes) -> None:
        headers = [(b"content-length", str(len(body)).encode())] + ([(b"content-type", content_type)] if content_type else [])
        if cors:
            headers += [(b"access-control-allow-origin", b"*"), (b"access-control-allow-methods", b"POST"),
                        (b"access-control-allow-headers", b"content-type"), (b"access-control-max-age", b"600")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def app(scope, receive, send):
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        content_type = dict(scope["headers"]).get(b"content-type", b"").split(b";")[0].strip()
        count["requests"] += 1
        if cors and scope["method"] == "OPTIONS" and scope["path"] == path:
            return await answer(send, 204, b"", b"")
        if scope["method"] != "POST" or scope["path"] != path or count["requests"] > max_requests:
            return await answer(send, 404, b"text/plain", b"not a relay resource")
        if content_type not in ACCEPTED:
            return await answer(send, 415, b"text/plain", b"the relay forwards message/ohttp-req only")
        if faults.drop > 0:
            faults.drop -= 1
            return await answer(send, 502, b"text/plain", b"dropped")
        await asyncio.sleep(faults.delay)
        if faults.hold > 0:  # wait until `hold` requests wait, then go in a random order
            turn = asyncio.get_running_loop().create_future()
            faults._held.append(turn)
            if len(faults._held) >= faults.hold:
                held, faults._held[:] = list(faults._held), []
                random.shuffle(held)
                for index, waiting in enumerate(held):
                    waiting.set_result(index * 0.01)
            await asyncio.sleep(await turn)
        if faults.replay > 0:
            faults.replay -= 1
            await forward(body, content_type)
        status, kind, content = await forward(body, content_type)
        if faults.lose > 0:
            faults.lose -= 1
            return await answer(send, 504, b"text/plain", b"lost")
        await answer(send, status, kind, content)

    @contextlib.asynccontextmanager
    async def lifespan(_):
        yield
        await client.aclose()

    return Starlette(routes=[Mount("/", app=app)], lifespan=lifespan)  # Starlette for the lifespan only: `app` answers all


def main(argv=None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description="a forwarding-only Oblivious HTTP relay resource, for tests")
    parser.add_argument("--gateway", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/ohttp")
    parser.add_argument("--lifetime", type=float, default=600.0)
    parser.add_argument("--max-requests", type=int, default=100_000)
    parser.add_argument("--cors", action="store_true")
    options = parser.parse_args(argv)
    server = uvicorn.Server(uvicorn.Config(relay_app(options.gateway, path=options.path, max_requests=options.max_requests,
                                                     cors=options.cors),
                                           host="127.0.0.1", port=options.port, log_level="warning", access_log=False))

    async def bounded():
        task = asyncio.create_task(server.serve())
        await asyncio.wait([task], timeout=options.lifetime)
        server.should_exit = True
        await task

    asyncio.run(bounded())


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()


try:  # the process wrapper, where the serve tests' support is importable (not when run as a script)
    from serve_support import ServerProcess
except ImportError:  # pragma: no cover - run as a script
    ServerProcess = object  # type: ignore[assignment,misc]


class OhttpRelayProcess(ServerProcess):  # type: ignore[misc,valid-type]
    """:func:`main` in a subprocess, forwarding ``path`` to ``gateway`` (its URL: ``self.url + path``)."""

    def __init__(self, gateway: str, *, path: str = "/ohttp", lifetime: float = 600.0, cors: bool = False):
        super().__init__("unused")
        self.gateway, self.path, self.lifetime, self.cors = gateway, path, lifetime, cors

    def command(self) -> list[str]:
        return [sys.executable, str(Path(__file__).resolve()), "--gateway", self.gateway, "--port", str(self.port),
                "--path", self.path, "--lifetime", str(self.lifetime)] + (["--cors"] if self.cors else [])

    def start(self, timeout: float = 60.0):
        import subprocess
        import time

        self.process = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/", timeout=1.0).status_code == 404:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("the OHTTP relay did not start")
