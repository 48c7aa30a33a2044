"""A response's head held until its body: one write of both, the same bytes in the same order (dpdist._guard._held_head).

The fakes stand for asyncio's transport (its writes recorded); ``test_a_real_answer_goes_through_the_held_head``
serves a request through uvicorn with dpdist's httptools protocol and reads the answer's bytes.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

from dpdist._guard._held_head import HeldHead


class _Transport:
    def __init__(self):
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 1) if name == "peername" else default


def _on_a_loop(check) -> None:
    """``await check(held, transport)`` on a running event loop: a :class:`HeldHead` over a transport recording its
    writes."""
    async def main():
        transport = _Transport()
        await check(HeldHead(transport, asyncio.get_running_loop()), transport)

    asyncio.run(main())


def test_the_head_and_the_body_go_in_one_write_and_later_writes_straight_through():
    async def check(held, transport):
        held.write(b"HTTP/1.1 200 OK\r\n\r\n")
        assert transport.writes == []
        held.write(b"body")
        held.write(b"more")
        assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody", b"more"]
        await asyncio.sleep(0)  # the flush scheduled for the head finds nothing held
        assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody", b"more"]

    _on_a_loop(check)


def test_a_head_without_a_body_goes_out_at_the_next_turn_of_the_loop():
    async def check(held, transport):
        held.write(b"head")
        await asyncio.sleep(0)
        assert transport.writes == [b"head"]
        held.write(b"chunk")  # a streamed body's later chunk: at once
        assert transport.writes == [b"head", b"chunk"]

    _on_a_loop(check)


def test_closing_writes_the_head_first_and_the_rest_is_the_transport_s():
    async def check(held, transport):
        held.write(b"head")
        held.close()
        assert transport.writes == [b"head"] and transport.closed and held.is_closing()
        assert held.get_extra_info("peername") == ("127.0.0.1", 1)
        held.write(b"late")  # the transport's own behaviour once closing (asyncio drops it)
        assert transport.writes == [b"head", b"late"]

    _on_a_loop(check)


def test_an_empty_write_after_the_head_sends_the_head_at_once():
    async def check(held, transport):
        held.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        held.write(b"")  # uvicorn writes a bodiless answer's empty body
        assert transport.writes == [b"HTTP/1.1 204 No Content\r\n\r\n"]

    _on_a_loop(check)


@pytest.mark.parametrize("expect", [False, True])
def test_a_real_answer_goes_through_the_held_head(expect, monkeypatch):
    """uvicorn with dpdist's httptools protocol: the answer's head and body written through :class:`HeldHead` (one
    write to the transport), the same bytes in order; with ``Expect: 100-continue`` the plain transport (its
    ``100 Continue`` goes before the head)."""
    uvicorn = pytest.importorskip("uvicorn")
    pytest.importorskip("httptools")
    from dpdist._guard import Limits, uvicorn_options

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    through: list[bytes] = []
    write = HeldHead.write
    monkeypatch.setattr(HeldHead, "write", lambda self, data: through.append(bytes(data)) or write(self, data))
    options = uvicorn_options(Limits(http="httptools"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off",
                                           **options))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
            head = b"PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n" + (b"Expect: 100-continue\r\n" if expect else b"")
            client.sendall(head + b"\r\nabc")
            time.sleep(0.3)  # the whole answer sent by now
            received = client.recv(65536)
        assert received.endswith(b"\r\n\r\nok") and b"content-length: 2" in received.lower()
        if expect:
            assert received.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK") and not through
        else:
            assert received.startswith(b"HTTP/1.1 200 OK") and b"".join(through) == received
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.mark.parametrize("method", ["HEAD", "GET"])
@pytest.mark.parametrize("closing", ["a malformed next request", "a newcomer's room", "shutdown"])
def test_an_answer_is_on_the_wire_before_the_connection_closes_in_the_same_turn(method, closing):
    """A HEAD answer (no body: its head was held to the loop's next turn) was lost when the server closed
    the connection in the turn the answer completed (a malformed next request answered 400, an idle connection closed
    for a newcomer at --limit-concurrency, shutdown).  A HEAD answer is not held, and a held head is written when its
    answer completes and before the protocol's own 400."""
    pytest.importorskip("httptools")
    from uvicorn.config import Config
    from uvicorn.server import ServerState

    from dpdist._guard._protocol_httptools import HeaderTimeoutHttpToolsProtocol

    async def main():
        answer = asyncio.Event()

        async def app(scope, receive, send):
            if scope["type"] != "http":
                return
            await answer.wait()
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
            await send({"type": "http.response.body", "body": b"ok"})

        loop = asyncio.get_running_loop()
        config = Config(app=app, http="httptools", log_level="critical")
        config.load()
        protocol = HeaderTimeoutHttpToolsProtocol(config=config, server_state=ServerState(), app_state={})
        server_end, client = socket.socketpair()
        with client:
            await loop.connect_accepted_socket(lambda: protocol, server_end)
            client.setblocking(False)
            client.send(f"{method} / HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            for _ in range(20):
                await asyncio.sleep(0)
            answer.set()  # the app answers at the loop's next turn; the connection is closed in that turn too
            if closing == "a malformed next request":
                loop.call_soon(protocol.data_received, b"GARBAGE\r\n\r\n")
            elif closing == "a newcomer's room":  # (what ConcurrencyCap does to an idle keep-alive connection)
                loop.call_soon(lambda: protocol.timeout_keep_alive_task is not None and protocol.timeout_keep_alive_handler())
            else:
                loop.call_soon(protocol.shutdown)
            for _ in range(50):
                await asyncio.sleep(0)
            await asyncio.sleep(0.05)
            received = b""
            while True:
                try:
                    chunk = client.recv(65536)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                received += chunk
        return received

    received = asyncio.run(main())
    assert received.startswith(b"HTTP/1.1 200 OK\r\n"), received[:200]
    assert received.split(b"\r\n\r\n", 1)[1].startswith(b"" if method == "HEAD" else b"ok")


def test_a_large_body_follows_the_head_in_a_write_of_its_own():
    """Joining the head to a large body copied the body (a 179 MB estimate: one more copy of it); past JOIN_AT_MOST
    the head goes, then the body, as uvicorn wrote them."""
    from dpdist._guard._held_head import JOIN_AT_MOST

    async def check(held, transport):
        held.write(b"HTTP/1.1 200 OK\r\n\r\n")
        big = b"x" * (JOIN_AT_MOST + 1)
        held.write(big)
        assert transport.writes[0] == b"HTTP/1.1 200 OK\r\n\r\n" and transport.writes[1] == big
        assert len(transport.writes) == 2

    _on_a_loop(check)
