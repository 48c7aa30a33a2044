"""Listening sockets whose accepted connections send small answers at once (TCP_NODELAY; docs/reference/service-limits.md, "Limits").

asyncio sets ``TCP_NODELAY`` on every connection it accepts, but only if the
listening socket says it is TCP (``sock.proto == IPPROTO_TCP``,
``asyncio.base_events._set_nodelay``).  uvicorn's ``Config.bind_socket``, which
``dpdist serve --workers N`` hands to its worker processes, creates it with
protocol 0 (upstream Kludex/uvicorn#3149): the workers' connections then kept
Nagle's algorithm, and an answer written in two parts (head, body) waited for
the client's delayed ACK, about 40 ms per request on a reused connection
(``/healthz`` 44 ms with two workers against 0.12 ms with one).
:func:`listening_socket` is uvicorn's socket, bound and logged as uvicorn does,
marked as the TCP socket it is.  (One process serving by host and port,
``uvicorn.run(app, host=..., port=...)``, gets its socket from asyncio's
``create_server``, already marked.)
"""

from __future__ import annotations

import socket

__all__ = ["listening_socket"]


def listening_socket(config) -> socket.socket:
    """uvicorn ``config``'s listening socket (``config.bind_socket()``), with ``proto`` = ``IPPROTO_TCP`` for TCP, so
    that every connection accepted from it, in any process, gets ``TCP_NODELAY``."""
    sock = config.bind_socket()
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.proto == socket.IPPROTO_TCP:
        return sock
    marked = socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
    marked.set_inheritable(True)
    return marked
